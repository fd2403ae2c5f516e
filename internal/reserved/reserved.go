// Package reserved says which namespaces of the control plane belong to the
// system rather than to users. The detector propagates no template from
// them and the namespace controller propagates none of them to members.
package reserved

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Namespace reports whether ns is the control plane's own: kube-* (Karmada's
// default --skipped-propagating-namespaces) and karmada-* (Karmada's system
// and cluster namespaces, and the execution namespaces). Nothing in them is
// propagated.
func Namespace(ns string) bool {
	return strings.HasPrefix(ns, "kube-") || strings.HasPrefix(ns, "karmada-")
}

// EveryMemberHas reports whether every member cluster already has the
// namespace, so that it is never propagated as a namespace: default, whose
// templates are propagated like any other namespace's.
func EveryMemberHas(ns string) bool {
	return ns == metav1.NamespaceDefault
}
