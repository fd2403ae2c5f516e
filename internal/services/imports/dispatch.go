package imports

import (
	"context"
	"encoding/json"
	"errors"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	mcsv1alpha1 "github.com/karmada-go/karmada/api/multicluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	"github.com/karmada-go/karmada/internal/names"
	"github.com/karmada-go/karmada/internal/services/mcs"
)

// manifest is what a consumer gets of one object: its kind, name,
// namespace and labels, and the Service's spec or the slice's endpoints.
func manifest(o client.Object) (kind string, raw []byte, err error) {
	switch o := o.(type) {
	case *corev1.Service:
		labels := map[string]string{}
		for k, v := range o.Labels {
			if k != policyv1alpha1.ResourceTemplateClaimedByLabel {
				labels[k] = v
			}
		}
		out := corev1.Service{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
			ObjectMeta: metav1.ObjectMeta{Namespace: o.Namespace, Name: o.Name, Labels: labels}, Spec: o.Spec}
		raw, err = json.Marshal(&out)
		return "Service", raw, err
	case *discoveryv1.EndpointSlice:
		out := discoveryv1.EndpointSlice{TypeMeta: metav1.TypeMeta{APIVersion: discoveryv1.SchemeGroupVersion.String(), Kind: "EndpointSlice"},
			ObjectMeta:  metav1.ObjectMeta{Namespace: o.Namespace, Name: o.Name, Labels: o.Labels},
			AddressType: o.AddressType, Endpoints: o.Endpoints, Ports: o.Ports}
		raw, err = json.Marshal(&out)
		return "EndpointSlice", raw, err
	}
	return "", nil, errors.New("only Services and EndpointSlices are dispatched")
}

// dispatch makes the Works of the import namespace/name exactly one per
// consumer and object: created where missing, updated where different,
// deleted where no longer wanted.
func (r *Reconciler) dispatch(ctx context.Context, namespace, name string, consumers []string, objs []client.Object) error {
	labels := map[string]string{
		mcsv1alpha1.ServiceNamespaceLabel:           namespace,
		mcsv1alpha1.ServiceNameLabel:                name,
		mcsv1alpha1.EndpointSliceWorkManagedByLabel: mcs.ManagedByServiceImport,
	}
	have := &workv1alpha1.WorkList{}
	if err := r.Client.List(ctx, have, client.MatchingLabels(labels)); err != nil {
		return err
	}
	existing := map[client.ObjectKey]*workv1alpha1.Work{}
	for i := range have.Items {
		existing[client.ObjectKeyFromObject(&have.Items[i])] = &have.Items[i]
	}
	var errs []error
	for _, o := range objs {
		kind, raw, err := manifest(o)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, c := range consumers {
			key := client.ObjectKey{Namespace: workv1alpha1.ExecutionNamespace(c), Name: names.WorkName(kind, o.GetName(), o.GetNamespace())}
			cur := existing[key]
			delete(existing, key)
			errs = append(errs, mcs.WriteDispatched(ctx, r.Client, key, labels, nil, raw, cur))
		}
	}
	for _, w := range existing {
		if err := r.Client.Delete(ctx, w, client.Preconditions{UID: &w.UID}); client.IgnoreNotFound(err) != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
