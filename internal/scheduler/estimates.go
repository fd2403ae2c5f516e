package scheduler

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	estimatorclient "github.com/karmada-go/karmada/internal/estimator/client"
	"github.com/karmada-go/karmada/internal/estimator/pb"
	"github.com/karmada-go/karmada/internal/metrics"
	"github.com/karmada-go/karmada/internal/scheduler/algorithm"
	"github.com/karmada-go/karmada/internal/scheduler/framework"
)

// AccurateEstimatorStep names the accurate estimator in explanations.
const AccurateEstimatorStep = "SchedulerEstimator"

// Estimates is the scheduler's replica estimator: the general estimator on
// each Cluster's resource summary, less what this scheduler has just
// assigned there and the cluster does not show yet (Assumptions); with a
// Pool, the smaller of that and the answer of the cluster's
// karmada-scheduler-estimator (node-level fit), which is told the same
// assumptions. An estimator that does not answer within the pool's timeout
// leaves the general answer standing, counted in
// karmada_scheduler_estimator_fallback_total and reported to the cycle.
type Estimates struct {
	Pool              *estimatorclient.Pool
	DisableInPullMode bool
	Assumed           *Assumptions
}

// cycle is one binding's scheduling cycle, carried in its context: the
// binding (whose own assumptions are not deducted: what it runs is room it
// keeps), the estimators' answers so far (one question per cluster and
// replica shape per cycle, however many affinity terms are tried), and
// where fallbacks are reported.
type cycle struct {
	binding  string
	fallback func(cluster, reason string, err error)
	mu       sync.Mutex
	answers  map[string]int32
}

type cycleKey struct{}

// WithCycle starts a binding's cycle; fallback (may be nil) hears of each
// estimator that did not answer.
func WithCycle(ctx context.Context, binding string, fallback func(cluster, reason string, err error)) context.Context {
	return context.WithValue(ctx, cycleKey{}, &cycle{binding: binding, fallback: fallback, answers: map[string]int32{}})
}

func cycleOf(ctx context.Context) *cycle {
	if c, ok := ctx.Value(cycleKey{}).(*cycle); ok {
		return c
	}
	return &cycle{answers: map[string]int32{}}
}

// Estimate implements framework.ReplicaEstimator.
func (e *Estimates) Estimate(ctx context.Context, spec *workv1alpha2.ResourceBindingSpec, clusters []*clusterv1alpha1.Cluster) []framework.Estimate {
	cy := cycleOf(ctx)
	out := make([]framework.Estimate, len(clusters))
	for i, c := range clusters {
		out[i] = framework.Estimate{Replicas: algorithm.GeneralEstimate(e.Assumed.Deduct(c, cy.binding), spec), By: algorithm.EstimatorStep}
	}
	// The accurate answer stands when it is not above the general one (a
	// tie is named by the estimator that looked at the nodes: the general
	// one can be low only because the summary still counts pods just gone).
	lower := func(i int, v int32) {
		if v <= out[i].Replicas {
			out[i] = framework.Estimate{Replicas: v, By: AccurateEstimatorStep}
		}
	}
	if e.Pool == nil {
		return out
	}
	sets := spec.Replicas == 0 && len(spec.Components) > 0
	shape := shapeKey(spec)
	index := map[string]int{}
	var ask []string
	cy.mu.Lock()
	for i, c := range clusters {
		if e.DisableInPullMode && c.Spec.SyncMode == clusterv1alpha1.Pull {
			continue
		}
		if v, ok := cy.answers[c.Name+"\x00"+shape]; ok {
			lower(i, v)
			continue
		}
		index[c.Name] = i
		ask = append(ask, c.Name)
	}
	cy.mu.Unlock()
	if len(ask) == 0 {
		return out
	}
	assumed := e.Assumed.Workloads(ask, cy.binding)
	var answers map[string]estimatorclient.Answer
	if sets {
		comps, err := pb.NewComponents(spec.Components)
		if err != nil {
			return out
		}
		ns := ""
		if spec.ReplicaRequirements != nil {
			ns = spec.ReplicaRequirements.Namespace
		}
		if ns == "" {
			ns = spec.Resource.Namespace
		}
		answers = e.Pool.MaxAvailableComponentSets(ctx, ask, ns, comps, assumed)
	} else {
		req, err := pb.NewReplicaRequirements(spec.ReplicaRequirements)
		if err != nil {
			return out
		}
		answers = e.Pool.MaxAvailableReplicas(ctx, ask, req, assumed)
	}
	cy.mu.Lock()
	defer cy.mu.Unlock()
	for cluster, a := range answers {
		if a.Err != nil {
			metrics.EstimatorFallbacks.WithLabelValues(cluster, a.Reason).Inc()
			if cy.fallback != nil {
				cy.fallback(cluster, a.Reason, a.Err)
			}
			continue
		}
		cy.answers[cluster+"\x00"+shape] = a.Value
		lower(index[cluster], a.Value)
	}
	return out
}

// shapeKey tells replica shapes apart within a cycle (affinity terms may
// change the binding's placement, never its replicas' needs; the key is
// cheap insurance).
func shapeKey(spec *workv1alpha2.ResourceBindingSpec) string {
	return fmt.Sprintf("%d/%v/%v", spec.Replicas, spec.ReplicaRequirements, spec.Components)
}

// Assumptions are the replicas this scheduler has assigned to clusters
// that the clusters do not show yet. They are deducted from later
// estimates (so that bindings scheduled back to back do not all count the
// same free room) until the binding reports its copy there Healthy with a
// status newer than when the replicas were assumed, or TTL has passed.
type Assumptions struct {
	TTL time.Duration
	Now func() time.Time

	mu sync.Mutex
	// entries by cluster, then binding.
	entries map[string]map[string]*assumption
}

type assumption struct {
	namespace  string
	components []workv1alpha2.Component
	at         time.Time
	// status is the binding's status of its copy there when assumed: the
	// copy must report a newer one to release the assumption.
	status string
}

// DefaultAssumptionTTL bounds how long assigned replicas are assumed.
const DefaultAssumptionTTL = time.Minute

func (a *Assumptions) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}

func (a *Assumptions) live(x *assumption, now time.Time) bool {
	ttl := a.TTL
	if ttl <= 0 {
		ttl = DefaultAssumptionTTL
	}
	return now.Sub(x.at) < ttl
}

// Assume records what a new placement adds to each cluster over the old
// one. Replicas taken away shrink the assumption; a cluster left forgets it.
// The returned function puts the binding's assumptions back as they were
// (the placement could not be written).
func (a *Assumptions) Assume(binding string, spec *workv1alpha2.ResourceBindingSpec, before, after []workv1alpha2.TargetCluster, statuses []workv1alpha2.AggregatedStatusItem) (undo func()) {
	if a == nil {
		return func() {}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.entries == nil {
		a.entries = map[string]map[string]*assumption{}
	}
	saved := map[string]*assumption{}
	for cluster, byBinding := range a.entries {
		if x, ok := byBinding[binding]; ok {
			cp := *x
			cp.components = append([]workv1alpha2.Component(nil), x.components...)
			saved[cluster] = &cp
		}
	}
	defer func() {
		undo = func() {
			a.mu.Lock()
			defer a.mu.Unlock()
			for _, byBinding := range a.entries {
				delete(byBinding, binding)
			}
			for cluster, x := range saved {
				if a.entries[cluster] == nil {
					a.entries[cluster] = map[string]*assumption{}
				}
				a.entries[cluster][binding] = x
			}
		}
	}()
	now := a.now()
	old := map[string]workv1alpha2.TargetCluster{}
	for _, t := range before {
		old[t.Name] = t
	}
	kept := map[string]bool{}
	ns := spec.Resource.Namespace
	if spec.ReplicaRequirements != nil && spec.ReplicaRequirements.Namespace != "" {
		ns = spec.ReplicaRequirements.Namespace
	}
	for _, t := range after {
		kept[t.Name] = true
		added := addedComponents(spec, old[t.Name], t)
		byBinding := a.entries[t.Name]
		cur := byBinding[binding]
		if cur != nil && !a.live(cur, now) {
			cur = nil
		}
		if len(added) == 0 {
			if cur != nil {
				capAt(cur, spec, t)
			}
			continue
		}
		if cur == nil {
			cur = &assumption{namespace: ns}
		} else {
			added = mergeComponents(cur.components, added)
		}
		cur.components, cur.at, cur.status = added, now, statusOf(statuses, t.Name)
		capAt(cur, spec, t)
		if byBinding == nil {
			byBinding = map[string]*assumption{}
			a.entries[t.Name] = byBinding
		}
		byBinding[binding] = cur
	}
	for _, t := range before {
		if !kept[t.Name] {
			delete(a.entries[t.Name], binding)
		}
	}
	return undo
}

func statusOf(items []workv1alpha2.AggregatedStatusItem, cluster string) string {
	for _, it := range items {
		if it.ClusterName == cluster && it.Status != nil {
			return string(it.Status.Raw)
		}
	}
	return ""
}

// addedComponents is what the new target adds over the old one, per
// component (one unnamed component for a workload of one pod template).
func addedComponents(spec *workv1alpha2.ResourceBindingSpec, old, cur workv1alpha2.TargetCluster) []workv1alpha2.Component {
	if len(spec.Components) > 0 {
		prev := map[string]int32{}
		for _, c := range old.Components {
			prev[c.Name] = c.Replicas
		}
		var out []workv1alpha2.Component
		for _, c := range cur.Components {
			if d := c.Replicas - prev[c.Name]; d > 0 {
				for _, sc := range spec.Components {
					if sc.Name == c.Name {
						out = append(out, workv1alpha2.Component{Name: c.Name, Replicas: d, ReplicaRequirements: sc.ReplicaRequirements})
					}
				}
			}
		}
		return out
	}
	if d := cur.Replicas - old.Replicas; d > 0 && spec.Replicas > 0 {
		c := workv1alpha2.Component{Name: "", Replicas: d}
		if r := spec.ReplicaRequirements; r != nil {
			c.ReplicaRequirements = &workv1alpha2.ComponentReplicaRequirements{NodeClaim: r.NodeClaim, ResourceRequest: r.ResourceRequest, PriorityClassName: r.PriorityClassName}
		}
		return []workv1alpha2.Component{c}
	}
	return nil
}

// mergeComponents adds b's replicas to a's, by component name.
func mergeComponents(a, b []workv1alpha2.Component) []workv1alpha2.Component {
	out := append([]workv1alpha2.Component(nil), a...)
	for _, c := range b {
		found := false
		for i := range out {
			if out[i].Name == c.Name {
				out[i].Replicas += c.Replicas
				found = true
			}
		}
		if !found {
			out = append(out, c)
		}
	}
	return out
}

// capAt keeps an assumption within what the target now holds.
func capAt(x *assumption, _ *workv1alpha2.ResourceBindingSpec, t workv1alpha2.TargetCluster) {
	limit := map[string]int32{"": t.Replicas}
	for _, c := range t.Components {
		limit[c.Name] = c.Replicas
	}
	for i := range x.components {
		x.components[i].Replicas = min(x.components[i].Replicas, limit[x.components[i].Name])
	}
}

// Observe releases a binding's assumptions in the clusters whose copy
// reports Healthy with a status other than the one seen when assumed.
func (a *Assumptions) Observe(binding string, items []workv1alpha2.AggregatedStatusItem) {
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	for _, it := range items {
		x := a.entries[it.ClusterName][binding]
		if x == nil {
			continue
		}
		raw := ""
		if it.Status != nil {
			raw = string(it.Status.Raw)
		}
		if !a.live(x, now) || (it.Health == workv1alpha1.ResourceHealthy && raw != x.status) {
			delete(a.entries[it.ClusterName], binding)
		}
	}
}

// Forget drops a deleted binding's assumptions.
func (a *Assumptions) Forget(binding string) {
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, byBinding := range a.entries {
		delete(byBinding, binding)
	}
}

// each calls fn for the live assumptions in cluster, but binding's.
func (a *Assumptions) each(cluster, except string, fn func(x *assumption)) {
	now := a.now()
	for b, x := range a.entries[cluster] {
		if b == except {
			continue
		}
		if !a.live(x, now) {
			delete(a.entries[cluster], b)
			continue
		}
		fn(x)
	}
}

// Deduct is the cluster with what is assumed there (but for binding's
// own) counted as allocating in its resource summary; the cluster itself
// when nothing is.
func (a *Assumptions) Deduct(c *clusterv1alpha1.Cluster, except string) *clusterv1alpha1.Cluster {
	if a == nil || c.Status.ResourceSummary == nil {
		return c
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	total := corev1.ResourceList{}
	var pods int64
	a.each(c.Name, except, func(x *assumption) {
		for _, comp := range x.components {
			pods += int64(comp.Replicas)
			if comp.ReplicaRequirements == nil {
				continue
			}
			for n, q := range comp.ReplicaRequirements.ResourceRequest {
				sum := total[n]
				sum.Add(*resource.NewMilliQuantity(q.MilliValue()*int64(comp.Replicas), q.Format))
				total[n] = sum
			}
		}
	})
	if pods == 0 {
		return c
	}
	// A shallow copy with its own summary: the estimators only read it.
	cp := *c
	out := &cp
	out.Status.ResourceSummary = c.Status.ResourceSummary.DeepCopy()
	rs := out.Status.ResourceSummary
	if rs.Allocating == nil {
		rs.Allocating = corev1.ResourceList{}
	}
	total[corev1.ResourcePods] = *resource.NewQuantity(pods, resource.DecimalSI)
	for n, q := range total {
		sum := rs.Allocating[n]
		sum.Add(q)
		rs.Allocating[n] = sum
	}
	return out
}

// Workloads are the live assumptions in each cluster (but for binding's
// own), as the estimators' assumedWorkloads.
func (a *Assumptions) Workloads(clusters []string, except string) map[string][]*pb.AssumedWorkload {
	out := map[string][]*pb.AssumedWorkload{}
	if a == nil {
		return out
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, c := range clusters {
		var ws []*pb.AssumedWorkload
		a.each(c, except, func(x *assumption) {
			comps, err := pb.NewComponents(x.components)
			if err != nil {
				return
			}
			ws = append(ws, &pb.AssumedWorkload{Namespace: x.namespace, Components: comps})
		})
		if len(ws) > 0 {
			sort.Slice(ws, func(i, j int) bool { return ws[i].Namespace < ws[j].Namespace })
			out[c] = ws
		}
	}
	return out
}

// Count is how many replicas are assumed in a cluster (for tests and
// debugging).
func (a *Assumptions) Count(cluster string) int32 {
	a.mu.Lock()
	defer a.mu.Unlock()
	var n int32
	a.each(cluster, "", func(x *assumption) {
		for _, c := range x.components {
			n += c.Replicas
		}
	})
	return n
}
