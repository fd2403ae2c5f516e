package v1alpha2

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/types"

	"sigs.k8s.io/controller-runtime/pkg/conversion"

	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
)

// ConversionAnnotation holds, on a binding read as v1alpha1, the v1alpha2
// fields that v1alpha1 has no place for, as JSON: {"uid": the template's uid,
// "spec": and "status": the v1alpha2 spec and status with only those fields
// set}; absent when there are none. Converting back
// to v1alpha2 restores them and removes the annotation, so a v1alpha1 client
// that reads, changes and writes a binding loses nothing: the way Kubernetes
// keeps newer fields through older API versions.
const ConversionAnnotation = "conversion.work.karmada.io/v1alpha2-fields"

// rest is what v1alpha1 cannot express: the template's uid, and the spec and
// status with every field v1alpha1 has cleared.
type rest struct {
	UID    types.UID       `json:"uid,omitempty"`
	Spec   json.RawMessage `json:"spec,omitempty"`
	Status json.RawMessage `json:"status,omitempty"`
}

// marshalRest encodes what is left of spec and status, nil when nothing is.
func marshalRest(uid types.UID, spec ResourceBindingSpec, status ResourceBindingStatus) ([]byte, error) {
	r := rest{UID: uid}
	data, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return nil, err
	}
	// The reference's fields are all in v1alpha1 (the uid is kept apart).
	delete(fields, "resource")
	if len(fields) > 0 {
		if r.Spec, err = json.Marshal(fields); err != nil {
			return nil, err
		}
	}
	if data, err = json.Marshal(status); err != nil {
		return nil, err
	}
	if string(data) != "{}" {
		r.Status = data
	}
	if r.UID == "" && r.Spec == nil && r.Status == nil {
		return nil, nil
	}
	return json.Marshal(r)
}

// Conversion goes through v1alpha1 as controller-runtime's hub: the hub is
// only the version every other converts to and from, and v1alpha1 cannot
// import this package. v1alpha2 stays the stored version.
var (
	_ conversion.Convertible = &ResourceBinding{}
	_ conversion.Convertible = &ClusterResourceBinding{}
)

// ConvertTo converts this binding to v1alpha1.
func (b *ResourceBinding) ConvertTo(dst conversion.Hub) error {
	out, ok := dst.(*workv1alpha1.ResourceBinding)
	if !ok {
		return fmt.Errorf("cannot convert a v1alpha2 ResourceBinding to %T", dst)
	}
	out.ObjectMeta = *b.ObjectMeta.DeepCopy()
	out.APIVersion, out.Kind = workv1alpha1.SchemeGroupVersion.String(), "ResourceBinding"
	return toV1alpha1(&out.ObjectMeta.Annotations, b.Spec, b.Status, &out.Spec, &out.Status)
}

// ConvertFrom converts a v1alpha1 binding to this version.
func (b *ResourceBinding) ConvertFrom(src conversion.Hub) error {
	in, ok := src.(*workv1alpha1.ResourceBinding)
	if !ok {
		return fmt.Errorf("cannot convert %T to a v1alpha2 ResourceBinding", src)
	}
	b.ObjectMeta = *in.ObjectMeta.DeepCopy()
	b.APIVersion, b.Kind = SchemeGroupVersion.String(), "ResourceBinding"
	return fromV1alpha1(&b.ObjectMeta.Annotations, in.Spec, in.Status, &b.Spec, &b.Status)
}

// ConvertTo converts this binding to v1alpha1.
func (b *ClusterResourceBinding) ConvertTo(dst conversion.Hub) error {
	out, ok := dst.(*workv1alpha1.ClusterResourceBinding)
	if !ok {
		return fmt.Errorf("cannot convert a v1alpha2 ClusterResourceBinding to %T", dst)
	}
	out.ObjectMeta = *b.ObjectMeta.DeepCopy()
	out.APIVersion, out.Kind = workv1alpha1.SchemeGroupVersion.String(), "ClusterResourceBinding"
	return toV1alpha1(&out.ObjectMeta.Annotations, b.Spec, b.Status, &out.Spec, &out.Status)
}

// ConvertFrom converts a v1alpha1 binding to this version.
func (b *ClusterResourceBinding) ConvertFrom(src conversion.Hub) error {
	in, ok := src.(*workv1alpha1.ClusterResourceBinding)
	if !ok {
		return fmt.Errorf("cannot convert %T to a v1alpha2 ClusterResourceBinding", src)
	}
	b.ObjectMeta = *in.ObjectMeta.DeepCopy()
	b.APIVersion, b.Kind = SchemeGroupVersion.String(), "ClusterResourceBinding"
	return fromV1alpha1(&b.ObjectMeta.Annotations, in.Spec, in.Status, &b.Spec, &b.Status)
}

func toV1alpha1(annotations *map[string]string, spec ResourceBindingSpec, status ResourceBindingStatus,
	outSpec *workv1alpha1.ResourceBindingSpec, outStatus *workv1alpha1.ResourceBindingStatus) error {
	spec, status = *spec.DeepCopy(), *status.DeepCopy()
	// What v1alpha1 expresses.
	*outSpec = workv1alpha1.ResourceBindingSpec{Resource: workv1alpha1.ObjectReference{
		APIVersion: spec.Resource.APIVersion, Kind: spec.Resource.Kind, Namespace: spec.Resource.Namespace,
		Name: spec.Resource.Name, ResourceVersion: spec.Resource.ResourceVersion, Replicas: spec.Replicas,
	}}
	if spec.ReplicaRequirements != nil {
		outSpec.Resource.ReplicaResourceRequirements = spec.ReplicaRequirements.ResourceRequest
	}
	for _, c := range spec.Clusters {
		outSpec.Clusters = append(outSpec.Clusters, workv1alpha1.TargetCluster{Name: c.Name, Replicas: c.Replicas})
	}
	*outStatus = workv1alpha1.ResourceBindingStatus{Conditions: status.Conditions}
	for _, s := range status.AggregatedStatus {
		outStatus.AggregatedStatus = append(outStatus.AggregatedStatus, workv1alpha1.AggregatedStatusItem{
			ClusterName: s.ClusterName, Status: s.Status, Applied: s.Applied, AppliedMessage: s.AppliedMessage,
		})
	}

	// What it does not: the rest, with the fields above cleared.
	uid := spec.Resource.UID
	spec.Resource = ObjectReference{}
	spec.Replicas = 0
	if rr := spec.ReplicaRequirements; rr != nil {
		hadRequest := len(rr.ResourceRequest) > 0
		rr.ResourceRequest = nil
		if hadRequest && rr.NodeClaim == nil && rr.Namespace == "" && rr.PriorityClassName == "" {
			// resourcePerReplicas brings it back.
			spec.ReplicaRequirements = nil
		}
	}
	spec.Clusters = restClusters(spec.Clusters)
	status.Conditions = nil
	status.AggregatedStatus = restAggregated(status.AggregatedStatus)

	delete(*annotations, ConversionAnnotation)
	data, err := marshalRest(uid, spec, status)
	if err != nil {
		return err
	}
	if data != nil {
		if *annotations == nil {
			*annotations = map[string]string{}
		}
		(*annotations)[ConversionAnnotation] = string(data)
	} else if len(*annotations) == 0 {
		*annotations = nil
	}
	return nil
}

// restClusters keeps each cluster's name (to match it up again) and the
// components, when any cluster has components.
func restClusters(clusters []TargetCluster) []TargetCluster {
	has := false
	for _, c := range clusters {
		has = has || c.Components != nil
	}
	if !has {
		return nil
	}
	out := make([]TargetCluster, len(clusters))
	for i, c := range clusters {
		out[i] = TargetCluster{Name: c.Name, Components: c.Components}
	}
	return out
}

// restAggregated keeps each item's cluster name and health, when any item
// has a health.
func restAggregated(items []AggregatedStatusItem) []AggregatedStatusItem {
	has := false
	for _, s := range items {
		has = has || s.Health != ""
	}
	if !has {
		return nil
	}
	out := make([]AggregatedStatusItem, len(items))
	for i, s := range items {
		out[i] = AggregatedStatusItem{ClusterName: s.ClusterName, Health: s.Health}
	}
	return out
}

func fromV1alpha1(annotations *map[string]string, spec workv1alpha1.ResourceBindingSpec, status workv1alpha1.ResourceBindingStatus,
	outSpec *ResourceBindingSpec, outStatus *ResourceBindingStatus) error {
	spec, status = *spec.DeepCopy(), *status.DeepCopy()
	var r rest
	var restSpec ResourceBindingSpec
	var restStatus ResourceBindingStatus
	if data, ok := (*annotations)[ConversionAnnotation]; ok {
		// A value that does not decode was not written by ConvertTo: it
		// holds nothing to restore.
		if json.Unmarshal([]byte(data), &r) == nil {
			if len(r.Spec) > 0 && json.Unmarshal(r.Spec, &restSpec) != nil {
				restSpec = ResourceBindingSpec{}
			}
			if len(r.Status) > 0 && json.Unmarshal(r.Status, &restStatus) != nil {
				restStatus = ResourceBindingStatus{}
			}
		}
		delete(*annotations, ConversionAnnotation)
		if len(*annotations) == 0 {
			*annotations = nil
		}
	}
	*outSpec, *outStatus = restSpec, restStatus

	outSpec.Resource = ObjectReference{
		APIVersion: spec.Resource.APIVersion, Kind: spec.Resource.Kind, Namespace: spec.Resource.Namespace,
		Name: spec.Resource.Name, UID: r.UID, ResourceVersion: spec.Resource.ResourceVersion,
	}
	outSpec.Replicas = spec.Resource.Replicas
	if len(spec.Resource.ReplicaResourceRequirements) > 0 {
		// (An empty list is no list on the wire.)
		if outSpec.ReplicaRequirements == nil {
			outSpec.ReplicaRequirements = &ReplicaRequirements{}
		}
		outSpec.ReplicaRequirements.ResourceRequest = spec.Resource.ReplicaResourceRequirements
	}
	outSpec.Clusters = nil
	for i, c := range spec.Clusters {
		tc := TargetCluster{Name: c.Name, Replicas: c.Replicas}
		if i < len(restSpec.Clusters) && restSpec.Clusters[i].Name == c.Name {
			tc.Components = restSpec.Clusters[i].Components
		}
		outSpec.Clusters = append(outSpec.Clusters, tc)
	}
	outStatus.Conditions = status.Conditions
	outStatus.AggregatedStatus = nil
	for i, s := range status.AggregatedStatus {
		item := AggregatedStatusItem{ClusterName: s.ClusterName, Status: s.Status, Applied: s.Applied, AppliedMessage: s.AppliedMessage}
		if i < len(restStatus.AggregatedStatus) && restStatus.AggregatedStatus[i].ClusterName == s.ClusterName {
			item.Health = restStatus.AggregatedStatus[i].Health
		}
		outStatus.AggregatedStatus = append(outStatus.AggregatedStatus, item)
	}
	return nil
}
