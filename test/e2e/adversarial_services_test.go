//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	mcsv1alpha1 "github.com/karmada-go/karmada/api/multicluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	"github.com/karmada-go/karmada/internal/registration/agentcert"
	"github.com/karmada-go/karmada/internal/scheme"
	"github.com/karmada-go/karmada/internal/testenv"
)

// mcsTenant is a tenant of namespace ns who may also write Deployments,
// Services, EndpointSlices and the multi-cluster services' kinds there.
func mcsTenant(ctx context.Context, t *testing.T, ns string) client.Client {
	t.Helper()
	cfg := tenantConfig(ctx, t, ns)
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tenant-mcs"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{"", "apps", "discovery.k8s.io", mcsv1alpha1.GroupName},
			Resources: []string{"services", "deployments", "endpointslices", "serviceimports", "serviceexports"}, Verbs: []string{"*"}}}}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tenant-mcs"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "tenant-mcs"},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: cfg.Impersonate.UserName}}}
	createUntilCleanup(ctx, t, karmadaClient(t), role, binding)
	tc, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return tc
}

// importInto imports serve in ns into member2.
func importInto(ns string) []client.Object {
	return []client.Object{
		&mcsv1alpha1.ServiceImport{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "serve"},
			Spec: mcsv1alpha1.ServiceImportSpec{Type: mcsv1alpha1.ClusterSetIP, Ports: []mcsv1alpha1.ServicePort{{Name: "http", Port: 80}}}},
		&policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "serve-import"},
			Spec: policyv1alpha1.PropagationSpec{
				ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: mcsv1alpha1.SchemeGroupVersion.String(), Kind: "ServiceImport", Name: "serve"}},
				Placement:         policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2"}}}}},
	}
}

// A tenant with rights in one namespace cannot import another namespace's
// exported Service (an import of the same name in its own namespace gets
// nothing of it), cannot write in the other namespace, and the endpoints
// it forges in its own namespace (an EndpointSlice carrying the derived
// Service's name and Karmada's marks) are dispatched nowhere: Karmada
// dispatches only the slices it collected.
func TestTenantCannotImportOrInjectAcrossNamespaces(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	mcsCRDsInMembers(ctx, t, c)
	victim, attacker := "e2e-mcs-v-"+utilrand.String(4), "e2e-mcs-a-"+utilrand.String(4)
	for _, ns := range []string{victim, attacker} {
		createNamespaceUntilCleanup(ctx, t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	}
	// The victim exports serve from member1 and imports it into member2.
	d, svc := serveApp(victim, 2)
	objs := []client.Object{d, svc, &mcsv1alpha1.ServiceExport{ObjectMeta: metav1.ObjectMeta{Namespace: victim, Name: "serve"}},
		&policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: victim, Name: "serve"},
			Spec: policyv1alpha1.PropagationSpec{ResourceSelectors: []policyv1alpha1.ResourceSelector{
				{APIVersion: "apps/v1", Kind: "Deployment", Name: "serve"}, {APIVersion: "v1", Kind: "Service", Name: "serve"},
				{APIVersion: mcsv1alpha1.SchemeGroupVersion.String(), Kind: "ServiceExport", Name: "serve"}},
				Placement: policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}}}}}
	createUntilCleanup(ctx, t, c, append(objs, importInto(victim)...)...)
	waitImportedFrom(ctx, t, victim, 2, "member1")

	// The attacker imports the same name in its own namespace, and forges
	// an EndpointSlice for it there, marked as Karmada marks the slices it
	// imports from member1.
	tenant := mcsTenant(ctx, t, attacker)
	forged := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: attacker, Name: "imported-member1-forged",
		Labels:      map[string]string{discoveryv1.LabelServiceName: "derived-serve", discoveryv1.LabelManagedBy: "endpointslice-controller.karmada.io"},
		Annotations: map[string]string{workv1alpha1.WorkNamespaceAnnotation: "karmada-es-member1"}},
		AddressType: discoveryv1.AddressTypeIPv4, Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"203.0.113.66"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}}}
	createUntilCleanup(ctx, t, tenant, append(importInto(attacker), forged)...)
	wantRefused(t, "the tenant writing an EndpointSlice in the victim's namespace", tenant.Create(ctx, &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: victim, Name: "imported-member1-forged", Labels: forged.Labels},
		AddressType: discoveryv1.AddressTypeIPv4, Endpoints: forged.Endpoints}))
	wantRefused(t, "the tenant importing into the victim's namespace", tenant.Create(ctx, importInto(victim)[0].DeepCopyObject().(client.Object)))

	// The attacker's import is made (its derived Service reaches member2)
	// and gets nothing: neither the victim's endpoints nor its forged one
	// (not collected by Karmada); the victim's keeps member1's.
	testenv.Eventually(t, 60*time.Second, "the attacker's derived-serve in member2", func(ctx context.Context) error {
		_, err := kube(t, "member2").CoreV1().Services(attacker).Get(ctx, "derived-serve", metav1.GetOptions{})
		return err
	})
	testenv.Consistently(t, 3*time.Second, "the namespaces kept apart", func(ctx context.Context) error {
		imp := &mcsv1alpha1.ServiceImport{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: attacker, Name: "serve"}, imp); err != nil {
			return err
		}
		if len(imp.Status.Clusters) > 0 {
			return fmt.Errorf("the attacker's import lists exporters %v", imp.Status.Clusters)
		}
		if got, names, err := importedAddresses(ctx, t, "member2", attacker, "derived-serve"); err != nil || len(names) > 0 {
			return fmt.Errorf("the attacker's derived-serve in member2 has slices %v, endpoints %v (err %v)", names, got, err)
		}
		got, _, err := importedAddresses(ctx, t, "member2", victim, "derived-serve")
		if err != nil {
			return err
		}
		want, err := readyPodIPs(ctx, t, "member1", victim)
		if err != nil {
			return err
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			return fmt.Errorf("the victim's endpoints in member2 %v, want member1's %v", got, want)
		}
		return nil
	})
}

// A compromised agent (member3's) may write Works in its own execution
// namespace, but the control plane takes the endpoints it publishes only
// for a Service the control plane exports to member3: a forged collected
// Work for another Service is refused (event EndpointSliceImportFailed on
// the Work) and no imported-member3-* slice appears; it cannot write in
// another cluster's execution namespace at all.
func TestAgentCannotPublishEndpointsOfAServiceItDoesNotExport(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	const ns = "default"
	s, err := kube(t, "member3").CoreV1().Secrets(agentcert.Namespace).Get(ctx, agentcert.SecretName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	agent, _ := agentClient(t, s.Data[agentcert.SecretKey])
	slice := discoveryv1.EndpointSlice{TypeMeta: metav1.TypeMeta{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice"},
		ObjectMeta:  metav1.ObjectMeta{Namespace: ns, Name: "forged-e2e", Labels: map[string]string{discoveryv1.LabelServiceName: "kubernetes"}},
		AddressType: discoveryv1.AddressTypeIPv4, Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"203.0.113.77"}}}}
	raw, _ := json.Marshal(&slice)
	forged := func(cluster string) *workv1alpha1.Work {
		return &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: workv1alpha1.ExecutionNamespace(cluster), Name: "e2e-forged-" + utilrand.String(4),
			Labels: map[string]string{mcsv1alpha1.ServiceNamespaceLabel: ns, mcsv1alpha1.ServiceNameLabel: "kubernetes", mcsv1alpha1.EndpointSliceWorkManagedByLabel: "ServiceExport"}},
			Spec: workv1alpha1.WorkSpec{SuspendDispatching: ptr.To(true),
				Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}}}}
	}
	wantRefused(t, "member3's agent writing a Work for member1", agent.Create(ctx, forged("member1")))
	w := forged("member3")
	if err := agent.Create(ctx, w); err != nil {
		t.Fatalf("member3's agent writing a Work in its own namespace: %v", err)
	}
	t.Cleanup(func() { deleteAll(t, c, w) })
	// The control plane refuses it (EndpointSliceImportFailed), unless
	// member3's running agent, which did not collect it, removed it first
	// (its serviceExport keeps only the Works of what member3 exports):
	// either way nothing is imported. The refusal itself is pinned by
	// integration TestServiceImportPath.
	testenv.Eventually(t, 30*time.Second, "the forged Work refused or removed", func(ctx context.Context) error {
		err := c.Get(ctx, client.ObjectKeyFromObject(w), &workv1alpha1.Work{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		list, lerr := kube(t, "karmada-apiserver").CoreV1().Events(w.Namespace).List(ctx, metav1.ListOptions{
			FieldSelector: fields.Set{"involvedObject.kind": "Work", "involvedObject.name": w.Name, "reason": "EndpointSliceImportFailed"}.String()})
		if lerr != nil {
			return lerr
		}
		for _, e := range list.Items {
			if strings.Contains(e.Message, "propagates no ServiceExport") {
				return nil
			}
		}
		return fmt.Errorf("neither refused nor removed (get: %v)", err)
	})
	testenv.Consistently(t, 3*time.Second, "no endpoint of member3 imported for the kubernetes Service", func(ctx context.Context) error {
		list := &discoveryv1.EndpointSliceList{}
		if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
			return err
		}
		for _, s := range list.Items {
			if strings.HasPrefix(s.Name, "imported-member3-") {
				return fmt.Errorf("slice %s imported from member3's forged Work", s.Name)
			}
		}
		return nil
	})
}
