// Package descheduler is karmada-descheduler: every interval it asks the
// members' estimators how many replicas of each dynamically divided
// binding have waited longer than a threshold for a node there, and takes
// them out of that cluster's share, so that karmada-scheduler places them
// where they fit.
package descheduler

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	estimatorclient "github.com/karmada-go/karmada/internal/estimator/client"
	"github.com/karmada-go/karmada/internal/estimator/pb"
	"github.com/karmada-go/karmada/internal/events"
)

// Descheduler is the periodic pass.
type Descheduler struct {
	Client    client.Client
	Pool      *estimatorclient.Pool
	Interval  time.Duration
	Threshold time.Duration
	// Recorder records events on bindings and templates (nil: none).
	Recorder record.EventRecorder
}

// NeedLeaderElection: one replica deschedules at a time.
func (d *Descheduler) NeedLeaderElection() bool { return true }

// Start runs a pass every interval until ctx ends.
func (d *Descheduler) Start(ctx context.Context) error {
	t := time.NewTicker(d.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			if err := d.RunOnce(ctx); err != nil {
				klog.FromContext(ctx).Error(err, "Descheduling pass failed")
			}
		}
	}
}

// Dynamic says whether a placement divides replicas by what the clusters
// can take (dynamic weights or Aggregated): only such a division can move
// replicas elsewhere; static weights and duplication say where they go.
func Dynamic(p *policyv1alpha1.Placement) bool {
	if p == nil || p.ReplicaScheduling == nil {
		return false
	}
	s := p.ReplicaScheduling
	if s.ReplicaSchedulingType != policyv1alpha1.ReplicaSchedulingTypeDivided {
		return false
	}
	return s.ReplicaDivisionPreference == policyv1alpha1.ReplicaDivisionPreferenceAggregated ||
		(s.ReplicaDivisionPreference == policyv1alpha1.ReplicaDivisionPreferenceWeighted && s.WeightPreference != nil && s.WeightPreference.DynamicWeight != "")
}

// RunOnce is one pass over every ResourceBinding.
func (d *Descheduler) RunOnce(ctx context.Context) error {
	var list workv1alpha2.ResourceBindingList
	if err := d.Client.List(ctx, &list); err != nil {
		return fmt.Errorf("listing ResourceBindings: %w", err)
	}
	for i := range list.Items {
		rb := &list.Items[i]
		if !rb.DeletionTimestamp.IsZero() || !Dynamic(rb.Spec.Placement) || len(rb.Spec.Components) > 0 ||
			!meta.IsStatusConditionTrue(rb.Status.Conditions, workv1alpha2.Scheduled) {
			continue
		}
		if err := d.deschedule(ctx, rb); err != nil {
			klog.FromContext(ctx).Error(err, "Descheduling binding", "binding", klog.KObj(rb))
		}
	}
	return nil
}

// deschedule asks the estimators of the binding's clusters and lowers the
// clusters' shares by their unschedulable replicas.
func (d *Descheduler) deschedule(ctx context.Context, rb *workv1alpha2.ResourceBinding) error {
	var clusters []string
	for _, t := range rb.Spec.Clusters {
		if t.Replicas > 0 {
			clusters = append(clusters, t.Name)
		}
	}
	if len(clusters) == 0 {
		return nil
	}
	r := rb.Spec.Resource
	answers := d.Pool.UnschedulableReplicas(ctx, clusters, &pb.ObjectReference{ApiVersion: r.APIVersion, Kind: r.Kind, Namespace: r.Namespace, Name: r.Name}, d.Threshold)
	unschedulable := map[string]int32{}
	for c, a := range answers {
		if a.Err != nil {
			klog.FromContext(ctx).V(2).Info("Estimator did not answer", "cluster", c, "binding", klog.KObj(rb), "err", a.Err)
			continue
		}
		if a.Value > 0 {
			unschedulable[c] = a.Value
		}
	}
	if len(unschedulable) == 0 {
		return nil
	}
	targets, removed := Lower(rb.Spec.Clusters, unschedulable, availableIn(rb.Status.AggregatedStatus))
	if len(removed) == 0 {
		return nil
	}
	before := rb.DeepCopy()
	rb.Spec.Clusters = targets
	if err := d.Client.Patch(ctx, rb, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		events.OnBinding(d.Recorder, rb, rb.Spec.Resource, corev1.EventTypeWarning, events.DescheduleBindingFailed, "descheduling %s: %v", strings.Join(removed, ", "), err)
		return err
	}
	klog.FromContext(ctx).Info("Descheduled binding", "binding", klog.KObj(rb), "removed", removed)
	events.OnBinding(d.Recorder, rb, rb.Spec.Resource, corev1.EventTypeNormal, events.DescheduleBindingSucceed,
		"Binding has been descheduled: %s (replicas unschedulable there for %s)", strings.Join(removed, ", "), d.Threshold)
	return nil
}

// Lower takes each cluster's unschedulable replicas out of its share,
// never more than the replicas there that are not available (so the
// workload's available replicas, across the fleet, do not drop: the
// member scales down its pending pods first); a cluster left with none is
// removed. It returns the new targets and what was taken ("member1: 2").
func Lower(targets []workv1alpha2.TargetCluster, unschedulable, available map[string]int32) ([]workv1alpha2.TargetCluster, []string) {
	out := make([]workv1alpha2.TargetCluster, 0, len(targets))
	var removed []string
	for _, t := range targets {
		take := min(unschedulable[t.Name], t.Replicas-min(available[t.Name], t.Replicas))
		if take > 0 {
			t.Replicas -= take
			removed = append(removed, fmt.Sprintf("%s: %d", t.Name, take))
		}
		if t.Replicas > 0 {
			out = append(out, t)
		}
	}
	sort.Strings(removed)
	return out, removed
}

// availableIn reads each cluster's available replicas from the binding's
// aggregated status (status.availableReplicas of the member's copy).
func availableIn(items []workv1alpha2.AggregatedStatusItem) map[string]int32 {
	out := map[string]int32{}
	for _, it := range items {
		if it.Status == nil {
			continue
		}
		var s struct {
			AvailableReplicas int32 `json:"availableReplicas"`
		}
		if json.Unmarshal(it.Status.Raw, &s) == nil {
			out[it.ClusterName] = s.AvailableReplicas
		}
	}
	return out
}
