// Package names computes the names of the objects Karmada generates: a
// template's binding, a binding's Works, a namespace's Works. Every
// component that looks such an object up by name uses these.
package names

import (
	"fmt"
	"hash/fnv"
	"strings"
)

// BindingName is the name of a template's ResourceBinding or
// ClusterResourceBinding: <name>-<kind lower-cased>.
func BindingName(kind, name string) string {
	return name + "-" + strings.ToLower(kind)
}

// WorkName is the name of a binding's Work in each execution namespace: the
// binding's name and a short hash of its namespace and name, so that
// bindings of different namespaces never share a Work.
func WorkName(bindingNamespace, bindingName string) string {
	h := fnv.New32a()
	h.Write([]byte(bindingNamespace + "/" + bindingName))
	return fmt.Sprintf("%s-%08x", bindingName, h.Sum32())
}

// NamespaceWorkName is the name of the Work that propagates a namespace.
func NamespaceWorkName(namespace string) string { return "namespace-" + namespace }
