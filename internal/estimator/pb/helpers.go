package pb

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
)

// encodeResources is a ResourceList as Quantity#Marshal bytes per name.
func encodeResources(rl corev1.ResourceList) (map[string][]byte, error) {
	if len(rl) == 0 {
		return nil, nil
	}
	out := make(map[string][]byte, len(rl))
	for name, q := range rl {
		b, err := q.Marshal()
		if err != nil {
			return nil, fmt.Errorf("encoding %s=%s: %w", name, q.String(), err)
		}
		out[string(name)] = b
	}
	return out, nil
}

// decodeResources reads the current field, or the pre-1.18 one when the
// sender wrote only that.
func decodeResources(current, legacy map[string][]byte) (corev1.ResourceList, error) {
	data := current
	if len(data) == 0 {
		data = legacy
	}
	if len(data) == 0 {
		return nil, nil
	}
	out := make(corev1.ResourceList, len(data))
	for name, b := range data {
		var q resource.Quantity
		if err := q.Unmarshal(b); err != nil {
			return nil, fmt.Errorf("resourceRequest[%s]: not a Quantity: %w", name, err)
		}
		out[corev1.ResourceName(name)] = q
	}
	return out, nil
}

// NewNodeClaim encodes a binding's node claim (nil stays nil).
func NewNodeClaim(nc *workv1alpha2.NodeClaim) (*NodeClaim, error) {
	if nc == nil {
		return nil, nil
	}
	out := &NodeClaim{NodeSelector: nc.NodeSelector}
	if nc.HardNodeAffinity != nil {
		b, err := nc.HardNodeAffinity.Marshal()
		if err != nil {
			return nil, fmt.Errorf("encoding nodeAffinity: %w", err)
		}
		out.NodeAffinityBytes, out.NodeAffinityLegacy = b, b
	}
	for i := range nc.Tolerations {
		b, err := nc.Tolerations[i].Marshal()
		if err != nil {
			return nil, fmt.Errorf("encoding tolerations[%d]: %w", i, err)
		}
		out.TolerationsBytes = append(out.TolerationsBytes, b)
		out.TolerationsLegacy = append(out.TolerationsLegacy, b)
	}
	return out, nil
}

// Decode is the claim as the binding's type.
func (m *NodeClaim) Decode() (*workv1alpha2.NodeClaim, error) {
	if m == nil {
		return nil, nil
	}
	out := &workv1alpha2.NodeClaim{NodeSelector: m.GetNodeSelector()}
	aff := m.GetNodeAffinityBytes()
	if len(aff) == 0 {
		aff = m.GetNodeAffinityLegacy()
	}
	if len(aff) > 0 {
		out.HardNodeAffinity = &corev1.NodeSelector{}
		if err := out.HardNodeAffinity.Unmarshal(aff); err != nil {
			return nil, fmt.Errorf("nodeClaim.nodeAffinity: not a NodeSelector: %w", err)
		}
	}
	tols := m.GetTolerationsBytes()
	if len(tols) == 0 {
		tols = m.GetTolerationsLegacy()
	}
	for i, b := range tols {
		var t corev1.Toleration
		if err := t.Unmarshal(b); err != nil {
			return nil, fmt.Errorf("nodeClaim.tolerations[%d]: not a Toleration: %w", i, err)
		}
		out.Tolerations = append(out.Tolerations, t)
	}
	return out, nil
}

// NewReplicaRequirements encodes what one replica of a binding needs.
func NewReplicaRequirements(r *workv1alpha2.ReplicaRequirements) (*ReplicaRequirements, error) {
	if r == nil {
		return &ReplicaRequirements{}, nil
	}
	nc, err := NewNodeClaim(r.NodeClaim)
	if err != nil {
		return nil, err
	}
	res, err := encodeResources(r.ResourceRequest)
	if err != nil {
		return nil, err
	}
	return &ReplicaRequirements{NodeClaim: nc, ResourceRequestBytes: res, ResourceRequestLegacy: res,
		Namespace: r.Namespace, PriorityClassName: r.PriorityClassName}, nil
}

// Decode is the requirements as the binding's type.
func (m *ReplicaRequirements) Decode() (*workv1alpha2.ReplicaRequirements, error) {
	nc, err := m.GetNodeClaim().Decode()
	if err != nil {
		return nil, err
	}
	res, err := decodeResources(m.GetResourceRequestBytes(), m.GetResourceRequestLegacy())
	if err != nil {
		return nil, err
	}
	return &workv1alpha2.ReplicaRequirements{NodeClaim: nc, ResourceRequest: res, Namespace: m.GetNamespace(), PriorityClassName: m.GetPriorityClassName()}, nil
}

// NewComponents encodes a multi-component workload's components; replicas
// overrides each component's count when not nil (an assumed workload's
// share of a cluster).
func NewComponents(cs []workv1alpha2.Component) ([]*Component, error) {
	out := make([]*Component, 0, len(cs))
	for _, c := range cs {
		pc := &Component{Name: c.Name, Replicas: c.Replicas}
		if r := c.ReplicaRequirements; r != nil {
			nc, err := NewNodeClaim(r.NodeClaim)
			if err != nil {
				return nil, fmt.Errorf("component %s: %w", c.Name, err)
			}
			res, err := encodeResources(r.ResourceRequest)
			if err != nil {
				return nil, fmt.Errorf("component %s: %w", c.Name, err)
			}
			pc.ReplicaRequirements = &ComponentReplicaRequirements{NodeClaim: nc, ResourceRequestBytes: res, ResourceRequestLegacy: res, PriorityClassName: r.PriorityClassName}
		}
		out = append(out, pc)
	}
	return out, nil
}

// DecodeComponents is the components as the binding's type.
func DecodeComponents(cs []*Component) ([]workv1alpha2.Component, error) {
	out := make([]workv1alpha2.Component, 0, len(cs))
	for i, c := range cs {
		if c == nil {
			continue
		}
		wc := workv1alpha2.Component{Name: c.GetName(), Replicas: c.GetReplicas()}
		if c.Replicas < 0 {
			return nil, fmt.Errorf("components[%d].replicas=%d: must not be negative", i, c.Replicas)
		}
		if r := c.GetReplicaRequirements(); r != nil {
			nc, err := r.GetNodeClaim().Decode()
			if err != nil {
				return nil, fmt.Errorf("components[%d]: %w", i, err)
			}
			res, err := decodeResources(r.GetResourceRequestBytes(), r.GetResourceRequestLegacy())
			if err != nil {
				return nil, fmt.Errorf("components[%d]: %w", i, err)
			}
			wc.ReplicaRequirements = &workv1alpha2.ComponentReplicaRequirements{NodeClaim: nc, ResourceRequest: res, PriorityClassName: r.GetPriorityClassName()}
		}
		out = append(out, wc)
	}
	return out, nil
}
