package names

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
)

// ReservedNamespace reports whether ns belongs to the system rather than
// to users: the detector propagates no template from it and the namespace
// controller does not propagate it. It is the control plane's own, as Karmada
// decides it: kube-* (Karmada's default --skipped-propagating-namespaces)
// and Karmada's reserved namespaces (karmada-system, karmada-cluster and
// the execution namespaces karmada-es-*). Nothing in them is propagated.
// Other namespaces whose names start with karmada- are users' (a namespace
// karmada-demo reaches every member, as in Karmada).
func ReservedNamespace(ns string) bool {
	return strings.HasPrefix(ns, "kube-") || ControlPlaneNamespace(ns)
}

// EveryMemberHas reports whether every member cluster already has the
// namespace, so that it is never propagated as a namespace: default, whose
// templates are propagated like any other namespace's.
func EveryMemberHas(ns string) bool {
	return ns == metav1.NamespaceDefault
}

// Karmada's own namespaces in the control plane: its components', and the
// one holding member credentials.
const (
	SystemNamespace  = "karmada-system"
	ClusterNamespace = "karmada-cluster"
)

// ControlPlaneNamespace reports whether ns holds the control plane's own
// objects (karmada-system), member credentials (karmada-cluster) or a
// member's Works (karmada-es-*): nothing a user's policy may live in.
func ControlPlaneNamespace(ns string) bool {
	_, execution := workv1alpha1.ClusterOfExecutionNamespace(ns)
	return ns == SystemNamespace || ns == ClusterNamespace || execution
}

// CountQuotaName is the ResourceQuota the execution controller puts into a
// member namespace it created and is about to delete, to have the member
// count the objects of kinds Karmada may not list there; it comes with the
// namespace's Work.
const CountQuotaName = "karmada-object-count"
