package v1alpha1

// Finalizers, taints and labels of Clusters that more than one component
// reads or writes.
const (
	// ClusterControllerFinalizer holds a Cluster until its Works and its
	// execution namespace are gone.
	ClusterControllerFinalizer = "karmada.io/cluster-controller"

	// TaintClusterNotReady is kept on a Cluster whose Ready condition is
	// False.
	TaintClusterNotReady = "cluster.karmada.io/not-ready"
	// TaintClusterUnreachable is kept on a Cluster whose Ready condition is
	// Unknown.
	TaintClusterUnreachable = "cluster.karmada.io/unreachable"
	// TaintClusterUnschedulable is the taint of a cordoned Cluster.
	TaintClusterUnschedulable = "cluster.karmada.io/unschedulable"
)

// The Cluster API's APIService in the karmada-apiserver, and the label the
// karmada-apiserver puts on the APIServices it makes itself (for a CRD's
// group and version: an earlier version's Cluster CRD) rather than pointing
// at a Service (karmada-aggregated-apiserver's).
const (
	APIServiceName             = "v1alpha1.cluster.karmada.io"
	APIServiceAutomanagedLabel = "kube-aggregator.kubernetes.io/automanaged"
)
