package multiclusterservice

import (
	"context"
	"encoding/json"
	"errors"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	mcsv1alpha1 "github.com/karmada-go/karmada/api/multicluster/v1alpha1"
	networkingv1alpha1 "github.com/karmada-go/karmada/api/networking/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	"github.com/karmada-go/karmada/internal/names"
	"github.com/karmada-go/karmada/internal/services/mcs"
)

// SliceName is the name, in a consumer, of provider's EndpointSlice slice.
func SliceName(provider, slice string) string { return provider + "-" + slice }

// dispatch makes the MultiClusterService's dispatched Works exactly one per
// consumer and EndpointSlice collected from a Ready provider other than
// the consumer (and not kept from traffic by a Remedy, TrafficControl); nil consumers removes them all.
func (r *Reconciler) dispatch(ctx context.Context, m *networkingv1alpha1.MultiClusterService, consumers []string) error {
	labels := client.MatchingLabels{networkingv1alpha1.MultiClusterServiceNamespaceLabel: m.Namespace, networkingv1alpha1.MultiClusterServiceNameLabel: m.Name}
	all := &workv1alpha1.WorkList{}
	if err := r.Client.List(ctx, all, labels); err != nil {
		return err
	}
	existing := map[client.ObjectKey]*workv1alpha1.Work{}
	var collected []*workv1alpha1.Work
	for i := range all.Items {
		w := &all.Items[i]
		switch {
		case mcs.CollectedFor(w.Labels):
			collected = append(collected, w)
		case w.Annotations[networkingv1alpha1.EndpointSliceProvisionClusterAnnotation] != "" && w.Labels[mcsv1alpha1.EndpointSliceWorkManagedByLabel] == "":
			existing[client.ObjectKeyFromObject(w)] = w
		}
	}
	var errs []error
	for _, src := range collected {
		provider, ok := workv1alpha1.ClusterOfExecutionNamespace(src.Namespace)
		if !ok || !mcs.Provides(m, provider) || !mcs.Serves(ctx, r.Client, provider) || !src.DeletionTimestamp.IsZero() {
			continue
		}
		raw, slice, err := dispatched(provider, src, m)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, c := range consumers {
			if c == provider {
				// A consumer that provides keeps its own endpoints.
				continue
			}
			key := client.ObjectKey{Namespace: workv1alpha1.ExecutionNamespace(c), Name: names.WorkName("EndpointSlice", slice, m.Namespace)}
			cur := existing[key]
			delete(existing, key)
			errs = append(errs, mcs.WriteDispatched(ctx, r.Client, key,
				map[string]string{networkingv1alpha1.MultiClusterServiceNamespaceLabel: m.Namespace, networkingv1alpha1.MultiClusterServiceNameLabel: m.Name},
				map[string]string{networkingv1alpha1.EndpointSliceProvisionClusterAnnotation: provider}, raw, cur))
		}
	}
	for _, w := range existing {
		if err := r.Client.Delete(ctx, w, client.Preconditions{UID: &w.UID}); client.IgnoreNotFound(err) != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// dispatched is the consumer's copy of a provider's collected slice: named
// <provider>-<slice>, of the Service's own name, marked as dispatched.
func dispatched(provider string, src *workv1alpha1.Work, m *networkingv1alpha1.MultiClusterService) ([]byte, string, error) {
	if len(src.Spec.Workload.Manifests) != 1 {
		return nil, "", errors.New("collected Work " + src.Namespace + "/" + src.Name + " holds other than one EndpointSlice")
	}
	s := &discoveryv1.EndpointSlice{}
	if err := json.Unmarshal(src.Spec.Workload.Manifests[0].Raw, s); err != nil {
		return nil, "", err
	}
	if s.Namespace != m.Namespace || s.Labels[discoveryv1.LabelServiceName] != m.Name {
		return nil, "", errors.New("collected Work " + src.Namespace + "/" + src.Name + " holds an EndpointSlice of another Service")
	}
	name := SliceName(provider, s.Name)
	out := discoveryv1.EndpointSlice{TypeMeta: metav1.TypeMeta{APIVersion: discoveryv1.SchemeGroupVersion.String(), Kind: "EndpointSlice"},
		ObjectMeta: metav1.ObjectMeta{Namespace: m.Namespace, Name: name, Labels: map[string]string{
			discoveryv1.LabelServiceName: m.Name, discoveryv1.LabelManagedBy: networkingv1alpha1.EndpointSliceDispatchManagedBy}},
		AddressType: s.AddressType, Endpoints: s.Endpoints, Ports: s.Ports}
	raw, err := json.Marshal(&out)
	return raw, name, err
}
