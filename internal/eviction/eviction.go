// Package eviction holds what the producers of evictions (the taint manager,
// application failover) and their consumers (the scheduler, the binding and
// graceful eviction controllers) agree on: how a cluster is evicted from a
// binding, when a NoExecute taint evicts, and which evicted clusters keep
// their copy meanwhile.
package eviction

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/jsonpath"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
)

// Producers and reasons of eviction tasks, with Karmada's names.
const (
	ProducerTaintManager        = "TaintManager"
	ProducerApplicationFailover = "ResourceBindingController"
	ReasonTaintUntolerated      = "TaintUntolerated"
	ReasonApplicationFailure    = "ApplicationFailure"
)

// Task is the eviction to record.
type Task struct {
	Cluster   string
	PurgeMode policyv1alpha1.PurgeMode
	Reason    string
	Message   string
	Producer  string
	// GracePeriodSeconds overrides the controller's grace period.
	GracePeriodSeconds *int32
	// SuppressDeletion keeps the copy until a user clears it (PurgeMode
	// Never).
	SuppressDeletion *bool
	// PreservedLabelState is injected into the copies that replace it.
	PreservedLabelState map[string]string
	Now                 time.Time
}

// Evict removes the cluster from the binding's placement and records a
// graceful eviction task for it, and reports whether the cluster was in the
// placement. With graceful false (the GracefulEviction gate off) the cluster
// is removed without a task: its copy goes at once.
func Evict(spec *workv1alpha2.ResourceBindingSpec, t Task, graceful bool) bool {
	i := slices.IndexFunc(spec.Clusters, func(c workv1alpha2.TargetCluster) bool { return c.Name == t.Cluster })
	if i < 0 {
		return false
	}
	before := make([]string, 0, len(spec.Clusters))
	for _, c := range spec.Clusters {
		before = append(before, c.Name)
	}
	replicas := spec.Clusters[i].Replicas
	spec.Clusters = slices.Delete(slices.Clone(spec.Clusters), i, i+1)
	if graceful {
		AddTask(spec, t, replicas, before)
	}
	return true
}

// AddTask records a graceful eviction task for a cluster already removed
// from the placement (replicas it had, the clusters before). One task per
// cluster: a later eviction of the same cluster replaces the earlier one.
func AddTask(spec *workv1alpha2.ResourceBindingSpec, t Task, replicas int32, before []string) {
	now := metav1.NewTime(t.Now)
	task := workv1alpha2.GracefulEvictionTask{
		FromCluster: t.Cluster, PurgeMode: t.PurgeMode, Reason: t.Reason, Message: t.Message, Producer: t.Producer,
		GracePeriodSeconds: t.GracePeriodSeconds, SuppressDeletion: t.SuppressDeletion,
		PreservedLabelState: t.PreservedLabelState, ClustersBeforeFailover: before, CreationTimestamp: &now,
	}
	if replicas > 0 {
		task.Replicas = &replicas
	}
	spec.GracefulEvictionTasks = slices.DeleteFunc(slices.Clone(spec.GracefulEvictionTasks), func(x workv1alpha2.GracefulEvictionTask) bool { return x.FromCluster == t.Cluster })
	spec.GracefulEvictionTasks = append(spec.GracefulEvictionTasks, task)
}

// Narrowing: a placement that drops a cluster keeps that cluster's copy,
// as a graceful eviction task of the scheduler, until the new placement is
// healthy (an addition of this project: Karmada removes it at once).
const (
	ProducerScheduler       = "karmada-scheduler"
	ReasonPlacementNarrowed = "PlacementNarrowed"
)

// Blocks reports whether a task keeps its cluster out of scheduling: every
// eviction but a narrowing (the cluster may be chosen again, which ends the
// task).
func Blocks(t *workv1alpha2.GracefulEvictionTask) bool {
	return t.Producer != ProducerScheduler
}

// KeepsCopy reports whether an evicted cluster's copy stays while the task
// lasts: every purge mode but Directly, and Directly too under an
// availability budget (the copy goes once the budget allows it).
func KeepsCopy(t *workv1alpha2.GracefulEvictionTask, budgeted bool) bool {
	return t.PurgeMode != policyv1alpha1.PurgeModeDirectly || budgeted
}

// MinAvailable is a binding's fleet-wide availability budget, from its
// policy.karmada-go.io/min-available annotation (copied from its policy):
// a number of replicas, or a percentage of replicas rounded up; 0 when
// absent or invalid (karmada-webhook refuses invalid values on policies).
func MinAvailable(annotations map[string]string, replicas int32) int32 {
	v, ok := annotations[policyv1alpha1.MinAvailableAnnotation]
	if !ok {
		return 0
	}
	n, err := policyv1alpha1.ParseMinAvailable(v, replicas)
	if err != nil {
		return 0
	}
	return n
}

// KeptClusters are the evicted clusters whose copies stay for now.
func KeptClusters(spec *workv1alpha2.ResourceBindingSpec, budgeted bool) []string {
	var out []string
	for i := range spec.GracefulEvictionTasks {
		if t := &spec.GracefulEvictionTasks[i]; KeepsCopy(t, budgeted) && !slices.Contains(out, t.FromCluster) {
			out = append(out, t.FromCluster)
		}
	}
	return out
}

// PreserveState evaluates the rules against a copy's reflected status (the
// JSONPaths start at status, as Karmada's: "{.availableReplicas}") and
// returns the labels to inject into the copies that replace it. A rule whose
// path finds nothing is an error: the state would be lost.
func PreserveState(rules []policyv1alpha1.StatePreservationRule, status []byte) (map[string]string, error) {
	if len(rules) == 0 {
		return nil, nil
	}
	var obj any
	if len(status) > 0 {
		if err := json.Unmarshal(status, &obj); err != nil {
			return nil, fmt.Errorf("reading the status: %w", err)
		}
	}
	out := make(map[string]string, len(rules))
	for _, r := range rules {
		jp := jsonpath.New(r.AliasLabelName)
		if err := jp.Parse(r.JSONPath); err != nil {
			return nil, fmt.Errorf("rule %s: %w", r.AliasLabelName, err)
		}
		results, err := jp.FindResults(obj)
		if err != nil || len(results) == 0 || len(results[0]) == 0 {
			return nil, fmt.Errorf("rule %s: %s finds nothing in the status", r.AliasLabelName, r.JSONPath)
		}
		v := results[0][0].Interface()
		s, ok := v.(string)
		if !ok {
			b, err := json.Marshal(v)
			if err != nil {
				return nil, fmt.Errorf("rule %s: %w", r.AliasLabelName, err)
			}
			s = string(b)
		}
		out[r.AliasLabelName] = s
	}
	return out, nil
}

// InjectedLabels are the preserved labels a cluster's copy carries: those
// of the tasks whose workload moved to it (a cluster not among the task's
// clustersBeforeFailover).
func InjectedLabels(spec *workv1alpha2.ResourceBindingSpec, cluster string) map[string]string {
	var out map[string]string
	for i := range spec.GracefulEvictionTasks {
		t := &spec.GracefulEvictionTasks[i]
		if len(t.PreservedLabelState) == 0 || t.FromCluster == cluster || slices.Contains(t.ClustersBeforeFailover, cluster) {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		for k, v := range t.PreservedLabelState {
			out[k] = v
		}
	}
	return out
}

// EvictionTime says when a workload with these tolerations must leave a
// cluster with these taints: ok is false when it may stay for good (no
// NoExecute taint, or each tolerated without tolerationSeconds). A taint not
// tolerated evicts at once (the zero time); a tolerated one at its
// timeAdded (now when unset) plus the smallest tolerationSeconds of the
// tolerations that match it.
func EvictionTime(taints []corev1.Taint, tolerations []corev1.Toleration, now time.Time) (at time.Time, why string, ok bool) {
	for i := range taints {
		taint := &taints[i]
		if taint.Effect != corev1.TaintEffectNoExecute {
			continue
		}
		forever, matched := false, false
		var seconds int64
		for j := range tolerations {
			tol := &tolerations[j]
			if !tol.ToleratesTaint(taint) {
				continue
			}
			if tol.TolerationSeconds == nil {
				forever = true
				break
			}
			if !matched || *tol.TolerationSeconds < seconds {
				seconds = *tol.TolerationSeconds
			}
			matched = true
		}
		if forever {
			continue
		}
		var t time.Time
		desc := fmt.Sprintf("untolerated taint {%s}", taint.ToString())
		if matched {
			added := now
			if taint.TimeAdded != nil {
				added = taint.TimeAdded.Time
			}
			t = added.Add(time.Duration(max(seconds, 0)) * time.Second)
			desc = fmt.Sprintf("taint {%s} tolerated for %ds", taint.ToString(), seconds)
		}
		if !ok || t.Before(at) {
			at, why, ok = t, desc, true
		}
	}
	return at, why, ok
}
