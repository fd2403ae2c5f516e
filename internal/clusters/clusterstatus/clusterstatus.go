// Package clusterstatus keeps the status of push-mode Clusters: health with a
// threshold against flapping, Kubernetes version, served APIs, and node and
// resource summaries from informers on the member.
package clusterstatus

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/discovery"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	"github.com/karmada-go/karmada/internal/clusters/clusterclient"
	"github.com/karmada-go/karmada/internal/estimator"
	"github.com/karmada-go/karmada/internal/features"
	"github.com/karmada-go/karmada/internal/interpreter"
	"github.com/karmada-go/karmada/internal/metrics"
	"github.com/karmada-go/karmada/internal/queues"
)

// ControllerName is the name of this controller in --controllers.
const ControllerName = "clusterStatus"

// Reasons of the Ready condition.
const (
	ReasonReady        = "ClusterReady"
	ReasonNotReady     = "ClusterNotReady"
	ReasonNotReachable = "ClusterNotReachable"
	// ReasonIdentityChanged: the endpoint reaches another cluster than the
	// one that joined (ours; Karmada has no such check).
	ReasonIdentityChanged = "ClusterIdentityChanged"
)

// Reconciler probes members and writes their Cluster status.
type Reconciler struct {
	Client  client.Client
	Members *clusterclient.Cache
	// UpdateFrequency is how often each cluster is probed.
	UpdateFrequency time.Duration
	// FailureThreshold is how long a cluster must keep failing before it is
	// marked NotReady; SuccessThreshold how long it must keep succeeding
	// before it is marked Ready again.
	FailureThreshold time.Duration
	SuccessThreshold time.Duration
	Workers          int
	// Clock is the clock (the real one when nil); tests pass a fake.
	Clock clock.PassiveClock

	// side is where it runs (ForControlPlane, ForAgent).
	side clusterclient.Side

	mu      sync.Mutex
	pending map[string]observation
	// unreached holds the clusters whose last probe did not reach them.
	unreached map[string]bool
}

// ForControlPlane returns r as karmada-controller-manager runs it: it
// probes the push-mode members. A Reconciler built without either
// constructor is the control plane's.
func ForControlPlane(r *Reconciler) *Reconciler {
	r.side = clusterclient.ControlPlane
	return r
}

// ForAgent returns r as a karmada-agent runs it: it probes its own
// pull-mode cluster and writes that Cluster's status.
func ForAgent(r *Reconciler) *Reconciler {
	r.side = clusterclient.Agent
	return r
}

// observation is a health result that differs from the current condition and
// since when it has been seen.
type observation struct {
	status metav1.ConditionStatus
	since  time.Time
}

// SetupWithManager registers the controller.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	r.pending = map[string]observation{}
	r.unreached = map[string]bool{}
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		// Its own status writes need no answer: each cluster is probed again
		// after UpdateFrequency. Spec, label and annotation changes (a new
		// endpoint, say) are answered at once.
		For(&clusterv1alpha1.Cluster{}, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		WithOptions(queues.Options(max(r.Workers, 1))).
		Complete(r)
}

// Reconcile probes one cluster and writes its status.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	cluster := &clusterv1alpha1.Cluster{}
	if err := r.Client.Get(ctx, req.NamespacedName, cluster); err != nil {
		if apierrors.IsNotFound(err) {
			r.Members.Forget(req.Name)
			r.forget(req.Name)
			metrics.ForgetCluster(req.Name)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	if !cluster.DeletionTimestamp.IsZero() {
		r.Members.Forget(cluster.Name)
		r.forget(cluster.Name)
		metrics.ForgetCluster(cluster.Name)
		return ctrl.Result{}, nil
	}
	if !r.side.Serves(cluster) {
		// The agent of a pull-mode cluster reports its status; the control
		// plane, a push-mode one's.
		return ctrl.Result{}, nil
	}
	start := time.Now()

	status := cluster.Status.DeepCopy()
	observed, reason, message, member := r.probe(ctx, cluster)
	write, requeue := r.decide(cluster.Name, meta.FindStatusCondition(status.Conditions, clusterv1alpha1.ClusterConditionReady), observed)
	if write {
		// Keep the reason and message of the state we report, not of the
		// observation still waiting for its threshold.
		meta.SetStatusCondition(&status.Conditions, metav1.Condition{
			Type: clusterv1alpha1.ClusterConditionReady, Status: observed, Reason: reason, Message: message,
			ObservedGeneration: cluster.Generation,
		})
	}
	if r.reached(cluster.Name, reason != ReasonNotReachable) && member != nil {
		// Back from an outage: the node and pod watches may be waiting out
		// their back-off; list the member afresh instead.
		member.RestartNodesAndPods()
	}
	soon := false
	if member != nil && observed == metav1.ConditionTrue {
		// The nodes are counted into the resource models with
		// --feature-gates=CustomizedClusterResourceModeling=true (on by
		// default), as Karmada.
		models := cluster.Spec.ResourceModels
		if !features.Gate.Enabled(features.CustomizedClusterResourceModeling) {
			models = nil
		}
		if err := r.collect(ctx, member, models, status); err != nil {
			log.V(2).Info("Collecting cluster status was incomplete", "cluster", cluster.Name, "err", err)
			// The member's node and pod informers are still starting: the
			// summaries follow as soon as they have synced.
			soon = errors.Is(err, errNotSynced)
		}
	}
	recordStatus(cluster.Name, status)
	metrics.ClusterSyncStatusDuration.WithLabelValues(cluster.Name).Observe(metrics.Since(start))
	if !equality.Semantic.DeepEqual(status, &cluster.Status) {
		// A patch of the conditions replaces the whole list: it goes over
		// the version read only, so that a condition another writer (a
		// detector in the member, say, that Remedies match) added since is
		// never dropped; a conflict reads the cluster again.
		var lock []client.MergeFromOption
		if !equality.Semantic.DeepEqual(status.Conditions, cluster.Status.Conditions) {
			lock = append(lock, client.MergeFromWithOptimisticLock{})
		}
		patch := client.MergeFromWithOptions(cluster.DeepCopy(), lock...)
		cluster.Status = *status
		if err := r.Client.Status().Patch(ctx, cluster, patch); err != nil {
			return ctrl.Result{}, fmt.Errorf("updating status of cluster %s: %w", cluster.Name, err)
		}
		if c := meta.FindStatusCondition(status.Conditions, clusterv1alpha1.ClusterConditionReady); c != nil {
			log.V(2).Info("Updated cluster status", "cluster", cluster.Name, "ready", c.Status, "reason", c.Reason)
		}
	}
	after := r.UpdateFrequency
	if requeue > 0 && requeue < after {
		after = requeue
	}
	if soon && after > notSyncedRetry {
		after = notSyncedRetry
	}
	return ctrl.Result{RequeueAfter: after}, nil
}

// recordStatus exports a cluster's status as Karmada's cluster_* gauges.
func recordStatus(name string, status *clusterv1alpha1.ClusterStatus) {
	ready := 0.0
	if meta.IsStatusConditionTrue(status.Conditions, clusterv1alpha1.ClusterConditionReady) {
		ready = 1
	}
	metrics.ClusterReadyState.WithLabelValues(name).Set(ready)
	if n := status.NodeSummary; n != nil {
		metrics.ClusterNodeNumber.WithLabelValues(name).Set(float64(n.TotalNum))
		metrics.ClusterReadyNodeNumber.WithLabelValues(name).Set(float64(n.ReadyNum))
	}
	if rs := status.ResourceSummary; rs != nil {
		// What no pod requests is allocated at 0 (absent from the list).
		set := func(g *prometheus.GaugeVec, list corev1.ResourceList, res corev1.ResourceName) {
			q := list[res]
			g.WithLabelValues(name).Set(q.AsApproximateFloat64())
		}
		set(metrics.ClusterCPUAllocatable, rs.Allocatable, corev1.ResourceCPU)
		set(metrics.ClusterMemoryAllocatable, rs.Allocatable, corev1.ResourceMemory)
		set(metrics.ClusterPodAllocatable, rs.Allocatable, corev1.ResourcePods)
		set(metrics.ClusterCPUAllocated, rs.Allocated, corev1.ResourceCPU)
		set(metrics.ClusterMemoryAllocated, rs.Allocated, corev1.ResourceMemory)
		set(metrics.ClusterPodAllocated, rs.Allocated, corev1.ResourcePods)
	}
}

// decide says whether the observed status may be written now. A change
// against the current condition must persist for the threshold first; when
// it may not, requeue is the time left. An Unknown condition (the control
// plane stopped hearing from a pull-mode cluster's agent) says nothing of
// the member's health, and is replaced at once.
func (r *Reconciler) decide(name string, current *metav1.Condition, observed metav1.ConditionStatus) (write bool, requeue time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if current == nil || current.Status == observed || current.Status == metav1.ConditionUnknown {
		delete(r.pending, name)
		return true, 0
	}
	now := r.Clock.Now()
	p, ok := r.pending[name]
	if !ok || p.status != observed {
		p = observation{status: observed, since: now}
		r.pending[name] = p
	}
	threshold := r.FailureThreshold
	if observed == metav1.ConditionTrue {
		threshold = r.SuccessThreshold
	}
	if waited := now.Sub(p.since); waited < threshold {
		return false, threshold - waited
	}
	delete(r.pending, name)
	return true, 0
}

func (r *Reconciler) forget(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.pending, name)
	delete(r.unreached, name)
}

// reached records whether the last probe reached the cluster, and says
// whether it is reached again after probes that did not.
func (r *Reconciler) reached(name string, ok bool) (again bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !ok {
		if r.unreached == nil {
			r.unreached = map[string]bool{}
		}
		r.unreached[name] = true
		return false
	}
	again = r.unreached[name]
	delete(r.unreached, name)
	return again
}

// probe checks the member's /readyz (or /healthz where /readyz is missing).
func (r *Reconciler) probe(ctx context.Context, cluster *clusterv1alpha1.Cluster) (metav1.ConditionStatus, string, string, *clusterclient.Member) {
	member, err := r.Members.Get(ctx, cluster)
	if errors.Is(err, clusterclient.ErrIdentityChanged) {
		return metav1.ConditionFalse, ReasonIdentityChanged, err.Error(), nil
	}
	if err != nil {
		return metav1.ConditionFalse, ReasonNotReachable, fmt.Sprintf("cannot build a client for the cluster: %v", err), nil
	}
	ctx, cancel := context.WithTimeout(ctx, clusterclient.ProbeTimeout)
	defer cancel()
	code, err := healthCode(ctx, member, "/readyz")
	if err == nil && code == http.StatusNotFound {
		code, err = healthCode(ctx, member, "/healthz")
	}
	switch {
	case err != nil:
		return metav1.ConditionFalse, ReasonNotReachable, fmt.Sprintf("cluster is not reachable: %v", err), member
	case code != http.StatusOK:
		return metav1.ConditionFalse, ReasonNotReady, fmt.Sprintf("cluster is not healthy: its health endpoint answered %d", code), member
	}
	return metav1.ConditionTrue, ReasonReady, "cluster is healthy and ready to accept workloads", member
}

func healthCode(ctx context.Context, m *clusterclient.Member, path string) (int, error) {
	var code int
	res := m.Kube.Discovery().RESTClient().Get().AbsPath(path).Do(ctx).StatusCode(&code)
	if code == 0 {
		if err := res.Error(); err != nil {
			return 0, err
		}
	}
	return code, nil
}

// errNotSynced says the member's node and pod informers have not synced yet.
var errNotSynced = errors.New("node and pod informers not synced yet")

// notSyncedRetry is how soon a cluster whose informers are starting is
// looked at again.
const notSyncedRetry = 500 * time.Millisecond

// collect fills version, APIs and summaries. Parts that cannot be read keep
// their previous values.
func (r *Reconciler) collect(ctx context.Context, m *clusterclient.Member, models []clusterv1alpha1.ResourceModel, status *clusterv1alpha1.ClusterStatus) error {
	var errs []error
	if v, err := m.Kube.Discovery().ServerVersion(); err == nil {
		status.KubernetesVersion = v.GitVersion
	} else {
		errs = append(errs, fmt.Errorf("version: %w", err))
	}
	apis, complete, err := apiEnablements(m.Kube.Discovery())
	if err != nil {
		errs = append(errs, fmt.Errorf("api enablements: %w", err))
	} else {
		status.APIEnablements = apis
		c := metav1.Condition{Type: clusterv1alpha1.ClusterConditionCompleteAPIEnablements, Status: metav1.ConditionTrue,
			Reason: "AllAPIEnablementsReady", Message: "collected every API of the cluster"}
		if !complete {
			c.Status, c.Reason, c.Message = metav1.ConditionFalse, "PartialAPIEnablements", "some API groups of the cluster could not be discovered"
		}
		meta.SetStatusCondition(&status.Conditions, c)
	}
	nodes, pods, synced := m.NodesAndPods()
	if !synced {
		errs = append(errs, errNotSynced)
	}
	if synced {
		nodeList, err := nodes.List(labels.Everything())
		if err != nil {
			errs = append(errs, err)
		}
		podList := pods.List()
		if len(errs) == 0 || nodeList != nil {
			status.NodeSummary = NodeSummary(nodeList)
			status.ResourceSummary = ResourceSummary(nodeList, podList, models)
		}
	}
	return errors.Join(errs...)
}

// apiEnablements lists every group/version the member serves, sorted, and
// whether discovery was complete.
func apiEnablements(d discovery.DiscoveryInterface) ([]clusterv1alpha1.APIEnablement, bool, error) {
	_, lists, err := d.ServerGroupsAndResources()
	complete := err == nil
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		return nil, false, err
	}
	var out []clusterv1alpha1.APIEnablement
	for _, l := range lists {
		e := clusterv1alpha1.APIEnablement{GroupVersion: l.GroupVersion}
		for _, res := range l.APIResources {
			if strings.Contains(res.Name, "/") { // subresources
				continue
			}
			e.Resources = append(e.Resources, clusterv1alpha1.APIResource{Name: res.Name, Kind: res.Kind})
		}
		sort.Slice(e.Resources, func(i, j int) bool { return e.Resources[i].Name < e.Resources[j].Name })
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GroupVersion < out[j].GroupVersion })
	return out, complete, nil
}

// NodeSummary counts nodes and Ready nodes.
func NodeSummary(nodes []*corev1.Node) *clusterv1alpha1.NodeSummary {
	s := &clusterv1alpha1.NodeSummary{TotalNum: int32(len(nodes))}
	for _, n := range nodes {
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				s.ReadyNum++
			}
		}
	}
	return s
}

// ResourceSummary sums node allocatable, the requests of scheduled pods
// (allocated) and of pods waiting for a node (allocating). Finished pods hold
// nothing. The "pods" resource counts pods. With resource models, it also
// counts the nodes of each grade, graded by what is free on them.
func ResourceSummary(nodes []*corev1.Node, pods []*clusterclient.PodUsage, models []clusterv1alpha1.ResourceModel) *clusterv1alpha1.ResourceSummary {
	s := &clusterv1alpha1.ResourceSummary{Allocatable: corev1.ResourceList{}, Allocated: corev1.ResourceList{}, Allocating: corev1.ResourceList{}}
	for _, n := range nodes {
		interpreter.AddResources(s.Allocatable, n.Status.Allocatable)
	}
	used := map[string]corev1.ResourceList{}
	onePod := corev1.ResourceList{corev1.ResourcePods: resource.MustParse("1")}
	for _, p := range pods {
		if p.Phase == corev1.PodSucceeded || p.Phase == corev1.PodFailed {
			continue
		}
		target := s.Allocated
		if p.NodeName == "" {
			target = s.Allocating
		} else if len(models) > 0 {
			if used[p.NodeName] == nil {
				used[p.NodeName] = corev1.ResourceList{}
			}
			interpreter.AddResources(used[p.NodeName], p.Requests)
			interpreter.AddResources(used[p.NodeName], onePod)
		}
		interpreter.AddResources(target, p.Requests)
		interpreter.AddResources(target, onePod)
	}
	if len(models) > 0 {
		counts := map[uint]int{}
		for _, m := range models {
			counts[m.Grade] = 0
		}
		for _, n := range nodes {
			free := corev1.ResourceList{}
			for name, q := range n.Status.Allocatable {
				f := q.DeepCopy()
				if u, ok := used[n.Name][name]; ok {
					f.Sub(u)
				}
				free[name] = f
			}
			if g, ok := estimator.Grade(models, free); ok {
				counts[g]++
			}
		}
		for _, m := range models {
			s.AllocatableModelings = append(s.AllocatableModelings, clusterv1alpha1.AllocatableModeling{Grade: m.Grade, Count: counts[m.Grade]})
		}
	}
	return s
}
