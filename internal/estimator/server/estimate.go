package server

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"

	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
)

// QuotaLister lists a namespace's ResourceQuotas (an informer's lister).
type QuotaLister func(namespace string) ([]*corev1.ResourceQuota, error)

// Estimator answers for one member cluster from its cache and quotas.
type Estimator struct {
	Cache  *Cache
	Quotas QuotaLister
}

// Assumed is a workload the scheduler has just given the cluster whose
// pods the cluster does not show yet: its namespace and, per component, the
// replicas it was given and what each needs.
type Assumed struct {
	Namespace  string
	Components []workv1alpha2.Component
}

type componentShape struct {
	shape    *shape
	replicas int64
	request  corev1.ResourceList
	priority string
}

func shapesOf(cs []workv1alpha2.Component) ([]componentShape, error) {
	out := make([]componentShape, 0, len(cs))
	for _, c := range cs {
		var claim *workv1alpha2.NodeClaim
		var req corev1.ResourceList
		var prio string
		if r := c.ReplicaRequirements; r != nil {
			claim, req, prio = r.NodeClaim, r.ResourceRequest, r.PriorityClassName
		}
		s, err := newShape(claim, req)
		if err != nil {
			return nil, fmt.Errorf("component %q: nodeClaim: %w", c.Name, err)
		}
		out = append(out, componentShape{shape: s, replicas: int64(c.Replicas), request: req, priority: prio})
	}
	return out, nil
}

// rooms is the cluster's free room for the given shapes, with the assumed
// workloads already placed (first fit, node by node).
func (e *Estimator) rooms(shapes []*shape, assumed [][]componentShape) ([]room, []corev1.ResourceName) {
	set := map[corev1.ResourceName]bool{}
	all := slices.Clone(shapes)
	for _, a := range assumed {
		for _, c := range a {
			all = append(all, c.shape)
		}
	}
	for _, s := range all {
		for n := range s.request {
			set[n] = true
		}
	}
	names := make([]corev1.ResourceName, 0, len(set))
	for n := range set {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, s := range all {
		s.align(names)
	}
	rooms := e.Cache.snapshot(names)
	for _, a := range assumed {
		for _, c := range a {
			from := 0
			placeFirstFit(rooms, c.shape, c.replicas, &from)
		}
	}
	return rooms, names
}

func (e *Estimator) assumedShapes(assumed []Assumed) ([][]componentShape, error) {
	out := make([][]componentShape, 0, len(assumed))
	for i, a := range assumed {
		cs, err := shapesOf(a.Components)
		if err != nil {
			return nil, fmt.Errorf("assumedWorkloads[%d]: %w", i, err)
		}
		out = append(out, cs)
	}
	return out, nil
}

// MaxReplicas is how many more replicas of the requirements the cluster
// can run: the sum over the nodes they may run on of what each node's free
// room holds, and no more than the namespace's ResourceQuotas leave.
func (e *Estimator) MaxReplicas(req *workv1alpha2.ReplicaRequirements, assumed []Assumed) (int32, error) {
	if req == nil {
		req = &workv1alpha2.ReplicaRequirements{}
	}
	s, err := newShape(req.NodeClaim, req.ResourceRequest)
	if err != nil {
		return 0, fmt.Errorf("replicaRequirements.nodeClaim: %w", err)
	}
	as, err := e.assumedShapes(assumed)
	if err != nil {
		return 0, err
	}
	var total int64
	rooms, _ := e.rooms([]*shape{s}, as)
	for i := range rooms {
		r := &rooms[i]
		if total >= unlimited {
			break
		}
		if s.fits(r.node) {
			total += r.replicasOn(s)
		}
	}
	q, err := e.quotaLimit(req.Namespace, req.PriorityClassName, perUnit(req.ResourceRequest, 1), assumedIn(req.Namespace, assumed, as))
	if err != nil {
		return 0, err
	}
	return clamp(min(total, q)), nil
}

// MaxComponentSets is how many whole sets of the components (every
// component's replicas together) the cluster can run: sets are placed one
// after another, each replica on the first node with room, until one does
// not fit; never more than the namespace's ResourceQuotas leave.
func (e *Estimator) MaxComponentSets(namespace string, components []workv1alpha2.Component, assumed []Assumed) (int32, error) {
	cs, err := shapesOf(components)
	if err != nil {
		return 0, err
	}
	as, err := e.assumedShapes(assumed)
	if err != nil {
		return 0, err
	}
	shapes := make([]*shape, 0, len(cs))
	set := corev1.ResourceList{}
	var setPods int64
	prio := ""
	for _, c := range cs {
		shapes = append(shapes, c.shape)
		addTimes(set, c.request, c.replicas)
		setPods += c.replicas
		if prio == "" {
			prio = c.priority
		}
	}
	if setPods == 0 {
		return unlimited, nil
	}
	rooms, names := e.rooms(shapes, as)
	// The bound: no more sets than the cluster's total free room holds.
	upper := aggregateBound(rooms, set, setPods, names)
	set[corev1.ResourcePods] = *resourceQuantity(setPods)
	q, err := e.quotaLimit(namespace, prio, set, assumedIn(namespace, assumed, as))
	if err != nil {
		return 0, err
	}
	upper = min(upper, q)
	cursors := make([]int, len(cs))
	for n := int64(0); n < upper; n++ {
		for i, c := range cs {
			if c.replicas == 0 {
				continue
			}
			if placeFirstFit(rooms, c.shape, c.replicas, &cursors[i]) > 0 {
				return clamp(n), nil
			}
		}
	}
	return clamp(upper), nil
}

// aggregateBound is floor(total free / a set's total) over the resources
// (names, in the rooms' order) and pods: an upper bound of the sets the
// simulation can place.
func aggregateBound(rooms []room, set corev1.ResourceList, setPods int64, names []corev1.ResourceName) int64 {
	bound := int64(unlimited)
	var pods int64
	for i := range rooms {
		pods = min(pods+max(rooms[i].pods, 0), unlimited)
	}
	bound = min(bound, pods/setPods)
	for k, name := range names {
		q := set[name]
		per := q.MilliValue()
		if per <= 0 {
			continue
		}
		var free int64
		for i := range rooms {
			if f := rooms[i].free[k]; f > 0 {
				free += f
			}
		}
		bound = min(bound, free/per)
	}
	return bound
}

func clamp(n int64) int32 {
	switch {
	case n < 0:
		return 0
	case n > unlimited:
		return unlimited
	}
	return int32(n)
}

// assumedIn is what the assumed workloads of a namespace take from its
// quotas.
func assumedIn(namespace string, assumed []Assumed, shapes [][]componentShape) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i, a := range assumed {
		if a.Namespace != namespace {
			continue
		}
		for _, c := range shapes[i] {
			addTimes(out, c.request, c.replicas)
			addTimes(out, corev1.ResourceList{corev1.ResourcePods: *resourceQuantity(1)}, c.replicas)
		}
	}
	return out
}

// perUnit is one replica's request with its pod.
func perUnit(req corev1.ResourceList, pods int64) corev1.ResourceList {
	out := corev1.ResourceList{corev1.ResourcePods: *resourceQuantity(pods)}
	for n, q := range req {
		if n != corev1.ResourcePods {
			out[n] = q.DeepCopy()
		}
	}
	return out
}
