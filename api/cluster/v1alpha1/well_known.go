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

// RegistrationAnnotation, on a Cluster made when a registration was
// approved, records that registration's id (agentcsr's prefix and the id of
// the registering request's key): a retried
// approval of the same request finds its own Cluster, any other
// registration under that name is refused, and only certificates of that
// registration are renewed. (Earlier versions recorded the request's name,
// which anyone could reuse once it was garbage-collected.)
const RegistrationAnnotation = "cluster.karmada.io/registration"

// The keys Karmada's tools put on what they create outside the API objects
// Karmada owns: in a member (join's identity, register's agent), on a pull
// agent's rights in the control plane, on what karmadactl init installs.
const (
	// ManagedByLabel, with the value ManagedByKarmadactl, marks what
	// karmadactl join or register made, so that unjoin and unregister
	// remove it and nothing else.
	ManagedByLabel      = "karmada.io/managed-by"
	ManagedByKarmadactl = "karmadactl"
	// ClusterNameLabel names the Cluster an object belongs to.
	ClusterNameLabel = "cluster.karmada.io/name"
	// SystemLabel marks Karmada's own objects (value "true").
	SystemLabel = "karmada.io/system"
	// PropagateKindsAnnotation records, on the ClusterRole of Karmada's
	// identity in a member, what it was given: cluster-admin, or the
	// --propagate-kinds list.
	PropagateKindsAnnotation = "karmada.io/propagate-kinds"
	// CreatedByLabel marks a namespace karmadactl init created, which
	// deinit may delete.
	CreatedByLabel = "karmada.io/created-by"
)
