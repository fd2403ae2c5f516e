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
