package v1alpha1

// QueryFromClusterAnnotation names, on each PodMetrics and NodeMetrics
// karmada-metrics-adapter serves in the control plane's metrics.k8s.io,
// the member cluster whose metrics.k8s.io answered it.
const QueryFromClusterAnnotation = "resource.karmada.io/query-from-cluster"

// LocalCustomMetricAnnotationPrefix starts the annotation that carries an
// object's emulated custom metric in a member of the local fleet
// (karmada-local usage set --metric NAME=QUANTITY writes
// custom-metrics.local.karmada.io/NAME; each push member's
// custom.metrics.k8s.io serves it). Not a Karmada key: a real member's
// custom metrics come from its own adapter.
const LocalCustomMetricAnnotationPrefix = "custom-metrics.local.karmada.io/"
