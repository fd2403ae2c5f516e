// Package estimator answers "how many more replicas of this shape can a
// cluster run". The general estimator reads only what the control plane
// already has: the Cluster's resource summary and, when the cluster declares
// resource models, how many of its nodes fall into each model grade.
package estimator

import (
	"math"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
)

// Unlimited is the estimate for a cluster that reports no capacity limit
// relevant to the request (e.g. a request of nothing but pods on a cluster
// that does not report pod capacity).
const Unlimited int32 = math.MaxInt32

// General estimates the replicas the cluster can still take: the free part
// of each requested resource (allocatable minus allocated minus allocating)
// divided by the per-replica request, the least over the resources, and never
// more than the free pod slots. With resource models and node counts per
// grade, the estimate is per node instead (a replica must fit on one node),
// which is tighter for large replicas. A cluster without a resource summary
// can take nothing.
func General(cluster *clusterv1alpha1.Cluster, req *workv1alpha2.ReplicaRequirements) int32 {
	rs := cluster.Status.ResourceSummary
	if rs == nil {
		return 0
	}
	pods := freeOf(rs, corev1.ResourcePods)
	maxPods := Unlimited
	if pods != nil {
		maxPods = clamp(pods.Value())
	}
	if req == nil || len(req.ResourceRequest) == 0 {
		return maxPods
	}
	if len(rs.AllocatableModelings) > 0 && len(cluster.Spec.ResourceModels) > 0 {
		if n, ok := byModels(cluster.Spec.ResourceModels, rs.AllocatableModelings, req.ResourceRequest); ok {
			return min(n, maxPods)
		}
	}
	est := maxPods
	for name, q := range req.ResourceRequest {
		if name == corev1.ResourcePods || q.IsZero() {
			continue
		}
		free := freeOf(rs, name)
		if free == nil {
			// The cluster does not have the resource at all (e.g. a GPU
			// request on a cluster without GPUs).
			return 0
		}
		est = min(est, divide(free, q))
	}
	return est
}

// freeOf is allocatable - allocated - allocating for one resource, nil when
// the cluster does not report it as allocatable, and never below zero.
func freeOf(rs *clusterv1alpha1.ResourceSummary, name corev1.ResourceName) *resource.Quantity {
	alloc, ok := rs.Allocatable[name]
	if !ok {
		return nil
	}
	free := alloc.DeepCopy()
	if q, ok := rs.Allocated[name]; ok {
		free.Sub(q)
	}
	if q, ok := rs.Allocating[name]; ok {
		free.Sub(q)
	}
	if free.Sign() < 0 {
		free = resource.Quantity{}
	}
	return &free
}

// divide is floor(free / per) in milli-units, so that cpu requests like 250m
// divide exactly.
func divide(free *resource.Quantity, per resource.Quantity) int32 {
	p := per.MilliValue()
	if p <= 0 {
		return Unlimited
	}
	return clamp(free.MilliValue() / p)
}

func clamp(n int64) int32 {
	switch {
	case n < 0:
		return 0
	case n > int64(Unlimited):
		return Unlimited
	}
	return int32(n)
}

// byModels estimates from the resource models: a node of a grade is assumed
// to have the grade's minimum of every resource free, so it holds
// min over resources of (grade min / request) replicas. Resources the models
// do not describe are not limited here. ok is false when the models do not
// describe any requested resource.
func byModels(models []clusterv1alpha1.ResourceModel, counts []clusterv1alpha1.AllocatableModeling, req corev1.ResourceList) (int32, bool) {
	nodes := map[uint]int{}
	for _, c := range counts {
		nodes[c.Grade] += c.Count
	}
	described := false
	var total int64
	for _, m := range models {
		perNode := int64(-1)
		for _, r := range m.Ranges {
			q, ok := req[r.Name]
			if !ok || q.IsZero() {
				continue
			}
			described = true
			n := r.Min.MilliValue() / q.MilliValue()
			if perNode < 0 || n < perNode {
				perNode = n
			}
		}
		if perNode < 0 {
			// The grade constrains none of the requested resources.
			continue
		}
		total += perNode * int64(nodes[m.Grade])
	}
	return clamp(total), described
}

// Grade returns the grade of a node with the given allocatable resources: for
// every resource the models describe, the grade whose [min, max) holds the
// node's amount; the node's grade is the lowest of those (it is only as good
// as its scarcest resource). ok is false when a resource falls in no range.
func Grade(models []clusterv1alpha1.ResourceModel, allocatable corev1.ResourceList) (uint, bool) {
	var grade uint
	first := true
	names := map[corev1.ResourceName]bool{}
	for _, m := range models {
		for _, r := range m.Ranges {
			names[r.Name] = true
		}
	}
	for name := range names {
		have := allocatable[name]
		found := false
		var g uint
		for _, m := range models {
			for _, r := range m.Ranges {
				if r.Name == name && have.Cmp(r.Min) >= 0 && have.Cmp(r.Max) < 0 {
					g, found = m.Grade, true
				}
			}
		}
		if !found {
			return 0, false
		}
		if first || g < grade {
			grade, first = g, false
		}
	}
	return grade, !first
}

// ComponentSets estimates how many whole sets of a multi-component
// workload's replicas the cluster can still take: each set is every
// component's replicas, each replica asking its component's request. A set
// is placed whole, so the least over the resources of free / (a set's
// total) decides, and never more than the free pod slots divided by a set's
// pods. A cluster without a resource summary can take nothing.
func ComponentSets(cluster *clusterv1alpha1.Cluster, components []workv1alpha2.Component) int32 {
	rs := cluster.Status.ResourceSummary
	if rs == nil {
		return 0
	}
	total := corev1.ResourceList{}
	var pods int64
	for _, c := range components {
		pods += int64(c.Replicas)
		if c.ReplicaRequirements == nil {
			continue
		}
		for name, q := range c.ReplicaRequirements.ResourceRequest {
			if name == corev1.ResourcePods {
				continue
			}
			sum := total[name]
			for i := int32(0); i < c.Replicas; i++ {
				sum.Add(q)
			}
			total[name] = sum
		}
	}
	est := Unlimited
	if free := freeOf(rs, corev1.ResourcePods); free != nil && pods > 0 {
		est = clamp(free.Value() / pods)
	}
	for name, q := range total {
		if q.IsZero() {
			continue
		}
		free := freeOf(rs, name)
		if free == nil {
			return 0
		}
		est = min(est, divide(free, q))
	}
	return est
}
