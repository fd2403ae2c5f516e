package v1alpha2

import (
	"encoding/json"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/conversion"

	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
)

// ConversionAnnotation holds, on a binding read as v1alpha1, the v1alpha2
// fields that v1alpha1 has no place for (JSON of a ResourceBindingSpec and
// ResourceBindingStatus in which only those fields are set). Converting back
// to v1alpha2 restores them and removes the annotation, so a v1alpha1 client
// that reads, changes and writes a binding loses nothing: the way Kubernetes
// keeps newer fields through older API versions.
const ConversionAnnotation = "conversion.work.karmada.io/v1alpha2-fields"

// rest is what v1alpha1 cannot express.
type rest struct {
	Spec   ResourceBindingSpec   `json:"spec"`
	Status ResourceBindingStatus `json:"status"`
}

// emptyRest is the annotation a binding needs none of.
var emptyRest = func() string {
	b, _ := json.Marshal(rest{})
	return string(b)
}()

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
	spec.Resource = ObjectReference{UID: spec.Resource.UID}
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
	data, err := json.Marshal(rest{Spec: spec, Status: status})
	if err != nil {
		return err
	}
	if string(data) != emptyRest {
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
	if data, ok := (*annotations)[ConversionAnnotation]; ok {
		// A value that does not decode was not written by ConvertTo: it
		// holds nothing to restore.
		_ = json.Unmarshal([]byte(data), &r)
		delete(*annotations, ConversionAnnotation)
		if len(*annotations) == 0 {
			*annotations = nil
		}
	}
	*outSpec, *outStatus = r.Spec, r.Status

	outSpec.Resource = ObjectReference{
		APIVersion: spec.Resource.APIVersion, Kind: spec.Resource.Kind, Namespace: spec.Resource.Namespace,
		Name: spec.Resource.Name, UID: r.Spec.Resource.UID, ResourceVersion: spec.Resource.ResourceVersion,
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
		if i < len(r.Spec.Clusters) && r.Spec.Clusters[i].Name == c.Name {
			tc.Components = r.Spec.Clusters[i].Components
		}
		outSpec.Clusters = append(outSpec.Clusters, tc)
	}
	outStatus.Conditions = status.Conditions
	outStatus.AggregatedStatus = nil
	for i, s := range status.AggregatedStatus {
		item := AggregatedStatusItem{ClusterName: s.ClusterName, Status: s.Status, Applied: s.Applied, AppliedMessage: s.AppliedMessage}
		if i < len(r.Status.AggregatedStatus) && r.Status.AggregatedStatus[i].ClusterName == s.ClusterName {
			item.Health = r.Status.AggregatedStatus[i].Health
		}
		outStatus.AggregatedStatus = append(outStatus.AggregatedStatus, item)
	}
	return nil
}
