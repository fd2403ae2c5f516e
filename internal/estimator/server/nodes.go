// Package server is karmada-scheduler-estimator: it answers, for one member
// cluster, how many replicas of a shape its nodes can still run (node by
// node, so that a replica larger than any node's free room counts zero even
// when the cluster's total would hold it), how many whole sets of a
// multi-component workload fit, and how many replicas of a workload have
// stayed unschedulable. Its view of the member is a cache fed by shared
// informers on Nodes, Pods and ResourceQuotas.
package server

import (
	"math"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	resourcehelper "k8s.io/component-helpers/resource"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
)

// unlimited is the answer when nothing requested is limited.
const unlimited = math.MaxInt32

// Cache is the member's nodes with what their pods request, kept current
// by informer events (Add/Update/Delete). A pod counts on its node once
// bound (spec.nodeName) and until it has terminated.
type Cache struct {
	mu    sync.RWMutex
	nodes map[string]*nodeInfo
	// order is the nodes by name, so that first-fit is deterministic.
	order []string
	pods  map[types.UID]podEntry
}

type nodeInfo struct {
	node        *corev1.Node
	allocatable map[corev1.ResourceName]int64 // milli-units
	requested   map[corev1.ResourceName]int64 // milli-units
	pods        int64
}

type podEntry struct {
	node    string
	request map[corev1.ResourceName]int64
}

// NewCache is an empty cache.
func NewCache() *Cache {
	return &Cache{nodes: map[string]*nodeInfo{}, pods: map[types.UID]podEntry{}}
}

func milli(rl corev1.ResourceList) map[corev1.ResourceName]int64 {
	out := make(map[corev1.ResourceName]int64, len(rl))
	for name, q := range rl {
		out[name] = q.MilliValue()
	}
	return out
}

// SetNode adds or replaces a node.
func (c *Cache) SetNode(n *corev1.Node) {
	c.mu.Lock()
	defer c.mu.Unlock()
	info, ok := c.nodes[n.Name]
	if !ok {
		info = &nodeInfo{requested: map[corev1.ResourceName]int64{}}
		c.nodes[n.Name] = info
	}
	if info.node == nil {
		if i, found := slices.BinarySearch(c.order, n.Name); !found {
			c.order = slices.Insert(c.order, i, n.Name)
		}
	}
	info.node = n
	info.allocatable = milli(n.Status.Allocatable)
}

// DeleteNode forgets a node (its pods stay counted until they go, and
// count again if it comes back).
func (c *Cache) DeleteNode(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if info, ok := c.nodes[name]; ok {
		// Keep what its pods request if they are still known: a node
		// object deleted and re-created keeps its pods.
		info.node = nil
		if info.pods == 0 {
			delete(c.nodes, name)
		}
		if i, found := slices.BinarySearch(c.order, name); found {
			c.order = slices.Delete(c.order, i, i+1)
		}
	}
}

// counts says whether a pod takes room on a node.
func counts(p *corev1.Pod) bool {
	return p.Spec.NodeName != "" && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed
}

// SetPod adds or updates a pod.
func (c *Cache) SetPod(p *corev1.Pod) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.removePod(p.UID)
	if !counts(p) {
		return
	}
	e := podEntry{node: p.Spec.NodeName, request: milli(resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{}))}
	info, ok := c.nodes[e.node]
	if !ok {
		// A pod seen before its node: its node arrives later.
		info = &nodeInfo{requested: map[corev1.ResourceName]int64{}}
		c.nodes[e.node] = info
	}
	for name, v := range e.request {
		info.requested[name] += v
	}
	info.pods++
	c.pods[p.UID] = e
}

// DeletePod forgets a pod.
func (c *Cache) DeletePod(uid types.UID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.removePod(uid)
}

func (c *Cache) removePod(uid types.UID) {
	e, ok := c.pods[uid]
	if !ok {
		return
	}
	delete(c.pods, uid)
	info := c.nodes[e.node]
	if info == nil {
		return
	}
	for name, v := range e.request {
		info.requested[name] -= v
	}
	info.pods--
	if info.node == nil && info.pods == 0 {
		delete(c.nodes, e.node)
	}
}

// Nodes is how many nodes the cache holds.
func (c *Cache) Nodes() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.order)
}

// shape is one replica's needs: its request in milli-units (pods excluded)
// and the nodes it may run on. vec is the request aligned with the
// resources of the estimate's rooms (align).
type shape struct {
	request  map[corev1.ResourceName]int64
	vec      []int64
	selector labels.Selector
	affinity *nodeaffinity.NodeSelector
	tols     []corev1.Toleration
}

func newShape(claim *workv1alpha2.NodeClaim, request corev1.ResourceList) (*shape, error) {
	s := &shape{request: map[corev1.ResourceName]int64{}}
	for name, q := range request {
		if name == corev1.ResourcePods || q.IsZero() {
			continue
		}
		s.request[name] = q.MilliValue()
	}
	if claim != nil {
		if len(claim.NodeSelector) > 0 {
			s.selector = labels.SelectorFromSet(claim.NodeSelector)
		}
		if claim.HardNodeAffinity != nil && len(claim.HardNodeAffinity.NodeSelectorTerms) > 0 {
			ns, err := nodeaffinity.NewNodeSelector(claim.HardNodeAffinity)
			if err != nil {
				return nil, err
			}
			s.affinity = ns
		}
		s.tols = claim.Tolerations
	}
	return s, nil
}

// align lays the request out in the order of names.
func (s *shape) align(names []corev1.ResourceName) {
	s.vec = make([]int64, len(names))
	for i, n := range names {
		s.vec[i] = s.request[n]
	}
}

// fits says whether the shape may run on the node at all: not cordoned,
// its node selector and required affinity match, and it tolerates the
// node's NoSchedule and NoExecute taints.
func (s *shape) fits(n *corev1.Node) bool {
	if n.Spec.Unschedulable {
		return false
	}
	if s.selector != nil && !s.selector.Matches(labels.Set(n.Labels)) {
		return false
	}
	if s.affinity != nil && !s.affinity.Match(n) {
		return false
	}
	_, untolerated := corev1helpers.FindMatchingUntoleratedTaint(n.Spec.Taints, s.tols, func(t *corev1.Taint) bool {
		return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
	})
	return !untolerated
}

// room is one node's free resources during one estimate: a private copy,
// so that assumed workloads and simulated sets can be taken from it. free
// is in the order of the estimate's resource names; -1 marks a resource the
// node does not have at all.
type room struct {
	node *corev1.Node
	free []int64
	pods int64
}

// snapshot copies every node's free room for the given resources (one
// allocation for all of them).
func (c *Cache) snapshot(names []corev1.ResourceName) []room {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]room, len(c.order))
	backing := make([]int64, len(c.order)*len(names))
	for i, name := range c.order {
		info := c.nodes[name]
		r := room{node: info.node, free: backing[i*len(names) : (i+1)*len(names) : (i+1)*len(names)], pods: unlimited}
		if p, ok := info.allocatable[corev1.ResourcePods]; ok {
			r.pods = p/1000 - info.pods
		}
		for k, res := range names {
			alloc, ok := info.allocatable[res]
			if !ok {
				r.free[k] = -1
				continue
			}
			r.free[k] = alloc - info.requested[res]
		}
		out[i] = r
	}
	return out
}

// replicasOn is how many replicas of the shape the room holds.
func (r *room) replicasOn(s *shape) int64 {
	n := r.pods
	for k, per := range s.vec {
		if per == 0 {
			continue
		}
		free := r.free[k]
		if free <= 0 {
			return 0
		}
		n = min(n, free/per)
	}
	return max(n, 0)
}

// take removes k replicas of the shape from the room.
func (r *room) take(s *shape, k int64) {
	for i, per := range s.vec {
		r.free[i] -= per * k
	}
	r.pods -= k
}

// placeFirstFit takes up to count replicas of the shape from the rooms,
// filling each node in order before the next (as pods would land), and
// returns how many found no room. from is where the search starts: rooms
// before it are known to be full for this shape.
func placeFirstFit(rooms []room, s *shape, count int64, from *int) int64 {
	for i := *from; i < len(rooms) && count > 0; i++ {
		r := &rooms[i]
		if !s.fits(r.node) {
			continue
		}
		k := min(r.replicasOn(s), count)
		if k > 0 {
			r.take(s, k)
			count -= k
		}
		if count > 0 {
			*from = i + 1
		}
	}
	return count
}
