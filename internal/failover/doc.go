// Package failover is the home of moving workloads off clusters: what
// producers and consumers of an eviction agree on (eviction), the
// producers (taintmanager for NoExecute cluster taints,
// applicationfailover for unhealthy workloads, workloadrebalancer for a
// requested fresh placement), and the gracefulEviction controller that ends
// or holds an eviction so that no workload loses its last healthy copy.
// The scheduler places the evicted workload elsewhere; the binding and
// execution controllers keep the old copy until the eviction ends.
package failover
