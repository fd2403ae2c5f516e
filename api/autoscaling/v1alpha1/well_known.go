package v1alpha1

// QueryFromClusterAnnotation names, on each PodMetrics and NodeMetrics
// karmada-metrics-adapter serves in the control plane's metrics.k8s.io,
// the member cluster whose metrics.k8s.io answered it.
const QueryFromClusterAnnotation = "resource.karmada.io/query-from-cluster"
