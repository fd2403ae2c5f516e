// Package names computes the names of the objects Karmada generates: a
// template's binding and its Works. They are Karmada's names, so that tools
// written for Karmada find the objects where they look for them.
package names

import (
	"fmt"
	"hash/fnv"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/dump"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/validation"

	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
)

// MaxClusterNameLength leaves room in 63 characters for the "karmada-es-"
// prefix of the cluster's execution namespace, as Karmada does.
const MaxClusterNameLength = 48

// ClusterNameErrors says what is wrong with a cluster's name, nil when
// nothing is: a DNS label short enough for its execution namespace's name.
func ClusterNameErrors(name string) []string {
	if name == "" {
		return []string{"must not be empty"}
	}
	if len(name) > MaxClusterNameLength {
		return []string{fmt.Sprintf("must be no more than %d characters (the execution namespace %s<name> must fit in 63)", MaxClusterNameLength, workv1alpha1.ExecutionNamespacePrefix)}
	}
	return validation.IsDNS1123Label(name)
}

// maxNameLength is the longest name an object of a kind validated as a DNS
// subdomain (bindings, Works) may have.
const maxNameLength = 253

// BindingName is the name of a template's ResourceBinding or
// ClusterResourceBinding: <name>-<kind>, lower-cased, with every ':' (as in
// RBAC names like system:controller:foo) replaced by '.'.
//
// A name that would be longer than a name may be (a template's name may
// already be 253 characters) keeps its start and ends with a hash of the
// whole, so that it stays valid and tells templates apart.
func BindingName(kind, name string) string {
	return shorten(strings.ToLower(strings.ReplaceAll(name, ":", ".")+"-"+kind), maxNameLength)
}

// LabelValue is s when it is a valid label value (at most 63 characters),
// else its start and a hash of the whole: a label can then name any
// binding, however long its name (the full name goes in an annotation).
func LabelValue(s string) string {
	if len(validation.IsValidLabelValue(s)) == 0 {
		return s
	}
	v := shorten(s, validation.LabelValueMaxLength)
	// The start may hold characters a label value may not: keep the hash.
	if len(validation.IsValidLabelValue(v)) > 0 {
		return "h-" + hash(s)
	}
	return v
}

// shorten returns s when it has at most max characters, else its start
// (without trailing '-' or '.') and "-" and a hash of s.
func shorten(s string, max int) string {
	if len(s) <= max {
		return s
	}
	h := hash(s)
	return strings.TrimRight(s[:max-len(h)-1], "-.") + "-" + h
}

// hash is a short, stable, name-safe digest of s.
func hash(s string) string {
	f := fnv.New64a()
	f.Write([]byte(s))
	return rand.SafeEncodeString(fmt.Sprint(f.Sum64()))
}

// WorkName is the name of the Work that carries an object (a binding's
// template, or a namespace) to one member, as Karmada v1.19 names it:
// <name>-<suffix>, where <name> is the object's name lower-cased with ':'
// replaced by '.', and <suffix> is rand.SafeEncodeString of the decimal
// FNV-32a hash of "<namespace>-<name>-<kind>" (without "<namespace>-" for
// cluster-scoped objects), lower-cased, with the name as in <name>. Objects
// of different namespaces or kinds with one name so get different Works.
//
// The prefix is shortened, if it must be, to keep the name valid; Karmada
// does not shorten it and cannot create such a Work at all.
func WorkName(kind, name, namespace string) string {
	prefix := strings.ToLower(strings.ReplaceAll(name, ":", "."))
	id := prefix + "-" + strings.ToLower(kind)
	if namespace != "" {
		id = strings.ToLower(namespace) + "-" + id
	}
	h := fnv.New32a()
	h.Write([]byte(id))
	suffix := rand.SafeEncodeString(fmt.Sprint(h.Sum32()))
	if n := maxNameLength - len(suffix) - 1; len(prefix) > n {
		prefix = strings.TrimRight(prefix[:n], "-.")
	}
	return prefix + "-" + suffix
}

// PolicyName is the name Karmada gives the policy it makes for one
// object (karmadactl promote, and the policy of a FederatedHPA's target):
// the object's name lower-cased with ':' replaced by '.', "-", and
// rand.SafeEncodeString of the decimal FNV-32a hash of the object's
// namespace followed by its GroupVersionKind in Go's form ("apps/v1,
// Kind=Deployment"), written as apimachinery's dump.ForHash writes it (as
// Kubernetes' DeepHashObject hashes).
func PolicyName(namespace, name string, gvk schema.GroupVersionKind) string {
	h := fnv.New32a()
	fmt.Fprintf(h, "%v", dump.ForHash(namespace+gvk.String()))
	prefix := strings.ToLower(strings.ReplaceAll(name, ":", "."))
	suffix := strings.ToLower(rand.SafeEncodeString(fmt.Sprint(h.Sum32())))
	if n := maxNameLength - len(suffix) - 1; len(prefix) > n {
		// Karmada cannot create a policy of such a name at all.
		prefix = strings.TrimRight(prefix[:n], "-.")
	}
	return prefix + "-" + suffix
}

// NamespaceWorkName is the name of the Work that propagates a namespace.
func NamespaceWorkName(namespace string) string { return WorkName("Namespace", namespace, "") }

// KeptWorkName is the name of the Work to write in an execution namespace,
// given the Works already written there for the same object: want (Karmada's
// name), unless only Works of other names are there, made by an earlier
// version (named <binding>-<hash>, or with the suffix hashed as older
// Karmada releases did). Renaming one would mean deleting the member's copy
// and making it again, so it keeps its name.
func KeptWorkName(existing []workv1alpha1.Work, executionNamespace, want string) string {
	kept := ""
	for _, w := range existing {
		if w.Namespace != executionNamespace {
			continue
		}
		if w.Name == want {
			return want
		}
		if kept == "" && w.DeletionTimestamp.IsZero() {
			kept = w.Name
		}
	}
	if kept == "" {
		return want
	}
	return kept
}

// The pull agent's identity in the control plane, as Karmada names it: the
// user of a cluster's agent is AgentUserPrefix+cluster, in AgentGroup.
// AgentRegistrationGroupPrefix followed by a registration's id is the group
// of the agent certificates of one registration of a cluster.
const (
	AgentUserPrefix              = "system:karmada:agent:"
	AgentGroup                   = "system:karmada:agents"
	AgentRegistrationGroupPrefix = "system:karmada:agent-registration:"
)
