package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	mcsv1alpha1 "github.com/karmada-go/karmada/api/multicluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/names"
	"github.com/karmada-go/karmada/internal/services/endpointslice"
	"github.com/karmada-go/karmada/internal/services/imports"
	"github.com/karmada-go/karmada/internal/services/mcs"
	"github.com/karmada-go/karmada/internal/testenv"
)

// collectedWork is what the service export controller writes for the
// member's slice of Service shop/serve with the addresses.
func collectedWork(t *testing.T, cluster, slice string, addrs ...string) *workv1alpha1.Work {
	t.Helper()
	s := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: slice, Labels: map[string]string{discoveryv1.LabelServiceName: "serve"}},
		AddressType: discoveryv1.AddressTypeIPv4, Ports: []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](8080)}}}
	for _, a := range addrs {
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{a}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}})
	}
	raw, err := mcs.Manifest(s)
	if err != nil {
		t.Fatal(err)
	}
	return &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: workv1alpha1.ExecutionNamespace(cluster), Name: mcs.WorkName("shop", slice),
		Labels:     map[string]string{mcsv1alpha1.ServiceNamespaceLabel: "shop", mcsv1alpha1.ServiceNameLabel: "serve", mcsv1alpha1.EndpointSliceWorkManagedByLabel: "ServiceExport"},
		Finalizers: []string{mcsv1alpha1.EndpointSliceControllerFinalizer}},
		Spec: workv1alpha1.WorkSpec{SuspendDispatching: ptr.To(true), Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}}}}
}

// dispatched lists, per consumer execution namespace, the objects the
// import's Works hold ("Kind name [addresses]"), sorted.
func dispatched(ctx context.Context, c client.Client) (map[string][]string, error) {
	works := &workv1alpha1.WorkList{}
	if err := c.List(ctx, works, client.MatchingLabels{mcsv1alpha1.EndpointSliceWorkManagedByLabel: "ServiceImport"}); err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for _, w := range works.Items {
		for _, m := range w.Spec.Workload.Manifests {
			var o struct {
				Kind      string `json:"kind"`
				Metadata  struct{ Name string }
				Endpoints []struct{ Addresses []string }
			}
			if err := json.Unmarshal(m.Raw, &o); err != nil {
				return nil, err
			}
			var addrs []string
			for _, e := range o.Endpoints {
				addrs = append(addrs, e.Addresses...)
			}
			out[w.Namespace] = append(out[w.Namespace], fmt.Sprintf("%s %s %v", o.Kind, o.Metadata.Name, addrs))
		}
	}
	for k := range out {
		sort.Strings(out[k])
	}
	return out, nil
}

// The control plane's side of multi-cluster services, with the member side
// played by hand: collected Works of member1 become imported slices; a
// ServiceImport scheduled to member2 and member3 gets derived-serve and
// one Work per consumer and object, and status.clusters; a new slice, a
// changed one, an exporter going not Ready, a consumer removed and the
// import deleted are followed; a pull-mode cluster's Work for a Service
// the control plane does not export there is refused; a Service
// derived-serve Karmada did not make is left alone.
func TestServiceImportPath(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t)
	ctx := context.Background()
	c := env.Client
	env.RunManager(t, func(ctx context.Context, mgr manager.Manager) error {
		if err := (&endpointslice.Reconciler{Client: mgr.GetClient()}).SetupWithManager(mgr); err != nil {
			return err
		}
		return (&imports.Reconciler{Client: mgr.GetClient()}).SetupWithManager(mgr)
	})
	for _, m := range []string{"member1", "member2", "member3"} {
		readyCluster(ctx, t, c, m)
		createNamespace(ctx, t, c, workv1alpha1.ExecutionNamespace(m))
	}
	pull := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "edge"}, Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Pull}}
	if err := c.Create(ctx, pull); err != nil {
		t.Fatal(err)
	}
	createNamespace(ctx, t, c, workv1alpha1.ExecutionNamespace("edge"))
	createNamespace(ctx, t, c, "shop")

	if err := c.Create(ctx, collectedWork(t, "member1", "serve-a", "10.1.0.1", "10.1.0.2")); err != nil {
		t.Fatal(err)
	}
	imp := &mcsv1alpha1.ServiceImport{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "serve"},
		Spec: mcsv1alpha1.ServiceImportSpec{Type: mcsv1alpha1.ClusterSetIP, Ports: []mcsv1alpha1.ServicePort{{Name: "http", Port: 80}}}}
	if err := c.Create(ctx, imp); err != nil {
		t.Fatal(err)
	}
	rb := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: names.BindingName("ServiceImport", "serve")},
		Spec: workv1alpha2.ResourceBindingSpec{Resource: workv1alpha2.ObjectReference{APIVersion: mcsv1alpha1.SchemeGroupVersion.String(), Kind: "ServiceImport", Namespace: "shop", Name: "serve", UID: imp.UID},
			Clusters: []workv1alpha2.TargetCluster{{Name: "member2"}, {Name: "member3"}}}}
	if err := c.Create(ctx, rb); err != nil {
		t.Fatal(err)
	}
	want := func(what string, expect map[string][]string) {
		t.Helper()
		testenv.Eventually(t, 20*time.Second, what, func(ctx context.Context) error {
			got, err := dispatched(ctx, c)
			if err != nil {
				return err
			}
			if fmt.Sprint(got) != fmt.Sprint(expect) {
				return fmt.Errorf("dispatched %v, want %v", got, expect)
			}
			return nil
		})
	}
	both := func(objs ...string) map[string][]string {
		return map[string][]string{"karmada-es-member2": objs, "karmada-es-member3": objs}
	}
	want("derived-serve and member1's slice in member2 and member3", both("EndpointSlice imported-member1-serve-a [10.1.0.1 10.1.0.2]", "Service derived-serve []"))
	svc := &corev1.Service{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "derived-serve"}, svc); err != nil || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 80 ||
		svc.Labels[policyv1alpha1.ResourceTemplateClaimedByLabel] != "ServiceImport" {
		t.Fatalf("the control plane's derived-serve: %+v (err %v)", svc, err)
	}
	testenv.Eventually(t, 10*time.Second, "status.clusters [member1]", func(ctx context.Context) error {
		got := &mcsv1alpha1.ServiceImport{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(imp), got); err != nil {
			return err
		}
		if fmt.Sprint(got.Status.Clusters) != "[{member1}]" {
			return fmt.Errorf("status.clusters %v", got.Status.Clusters)
		}
		return nil
	})

	// A changed slice, and a second exporter.
	w := collectedWork(t, "member1", "serve-a", "10.1.0.1", "10.1.0.2", "10.1.0.3")
	cur := &workv1alpha1.Work{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(w), cur); err != nil {
		t.Fatal(err)
	}
	cur.Spec = w.Spec
	if err := c.Update(ctx, cur); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, collectedWork(t, "member3", "serve-b", "10.3.0.1")); err != nil {
		t.Fatal(err)
	}
	want("the changed slice and member3's", both("EndpointSlice imported-member1-serve-a [10.1.0.1 10.1.0.2 10.1.0.3]", "EndpointSlice imported-member3-serve-b [10.3.0.1]", "Service derived-serve []"))

	// member1 not Ready: its endpoints are held back; Ready again, back.
	setReady(ctx, t, c, "member1", metav1.ConditionUnknown)
	want("member1's endpoints held back", both("EndpointSlice imported-member3-serve-b [10.3.0.1]", "Service derived-serve []"))
	setReady(ctx, t, c, "member1", metav1.ConditionTrue)
	want("member1's endpoints back", both("EndpointSlice imported-member1-serve-a [10.1.0.1 10.1.0.2 10.1.0.3]", "EndpointSlice imported-member3-serve-b [10.3.0.1]", "Service derived-serve []"))

	// A pull-mode cluster's Work for a Service not exported there.
	edge := collectedWork(t, "edge", "serve-x", "203.0.113.9")
	if err := c.Create(ctx, edge); err != nil {
		t.Fatal(err)
	}
	testenv.Consistently(t, 2*time.Second, "edge's endpoints refused", func(ctx context.Context) error {
		err := c.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "imported-edge-serve-x"}, &discoveryv1.EndpointSlice{})
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("imported-edge-serve-x: %v", err)
		}
		return nil
	})
	// With a ServiceExport of the control plane propagated to edge, taken.
	if err := c.Create(ctx, &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: names.BindingName("ServiceExport", "serve")},
		Spec: workv1alpha2.ResourceBindingSpec{Resource: workv1alpha2.ObjectReference{APIVersion: mcsv1alpha1.SchemeGroupVersion.String(), Kind: "ServiceExport", Namespace: "shop", Name: "serve"},
			Clusters: []workv1alpha2.TargetCluster{{Name: "edge"}}}}); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(edge), edge); err != nil {
		t.Fatal(err)
	}
	metav1.SetMetaDataAnnotation(&edge.ObjectMeta, "touch", "1")
	if err := c.Update(ctx, edge); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, "edge's endpoints taken once the control plane exports there", func(ctx context.Context) error {
		return c.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "imported-edge-serve-x"}, &discoveryv1.EndpointSlice{})
	})

	// member3 no longer a consumer (edge's endpoints are held back: edge
	// is not Ready); then the import deleted.
	if err := c.Get(ctx, client.ObjectKeyFromObject(rb), rb); err != nil {
		t.Fatal(err)
	}
	rb.Spec.Clusters = []workv1alpha2.TargetCluster{{Name: "member2"}}
	if err := c.Update(ctx, rb); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 20*time.Second, "member3's Works gone", func(ctx context.Context) error {
		got, err := dispatched(ctx, c)
		if err != nil {
			return err
		}
		if len(got["karmada-es-member3"]) > 0 || len(got["karmada-es-member2"]) != 3 {
			return fmt.Errorf("dispatched %v", got)
		}
		return nil
	})
	if err := c.Delete(ctx, imp); err != nil {
		t.Fatal(err)
	}
	want("nothing dispatched once the import is gone", map[string][]string{})
	testenv.Eventually(t, 10*time.Second, "the derived Service gone", func(ctx context.Context) error {
		if err := c.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "derived-serve"}, &corev1.Service{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("derived-serve: %v", err)
		}
		return nil
	})

	// A collected Work deleted: its imported slice goes, then its finalizer.
	if err := c.Delete(ctx, collectedWork(t, "member3", "serve-b")); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, "member3's imported slice and Work gone", func(ctx context.Context) error {
		if err := c.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "imported-member3-serve-b"}, &discoveryv1.EndpointSlice{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("slice: %v", err)
		}
		if err := c.Get(ctx, client.ObjectKeyFromObject(collectedWork(t, "member3", "serve-b")), &workv1alpha1.Work{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("work: %v", err)
		}
		return nil
	})

	// A Service derived-other that a user made is left alone.
	mine := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "derived-other"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 9}}}}
	if err := c.Create(ctx, mine); err != nil {
		t.Fatal(err)
	}
	other := &mcsv1alpha1.ServiceImport{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "other"},
		Spec: mcsv1alpha1.ServiceImportSpec{Type: mcsv1alpha1.ClusterSetIP, Ports: []mcsv1alpha1.ServicePort{{Port: 80}}}}
	if err := c.Create(ctx, other); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, other); err != nil {
		t.Fatal(err)
	}
	testenv.Consistently(t, 2*time.Second, "the user's derived-other kept as it was", func(ctx context.Context) error {
		got := &corev1.Service{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(mine), got); err != nil {
			return err
		}
		if got.Spec.Ports[0].Port != 9 || strings.Contains(fmt.Sprint(got.Labels), "claimed-by") {
			return fmt.Errorf("changed: %+v", got)
		}
		return nil
	})
}
