//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	mcsv1alpha1 "github.com/karmada-go/karmada/api/multicluster/v1alpha1"
	networkingv1alpha1 "github.com/karmada-go/karmada/api/networking/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	"github.com/karmada-go/karmada/internal/testenv"
)

// mcsCRDsInMembers propagates the ServiceExport and ServiceImport CRDs to
// every member, as Karmada's documentation has users do, and waits until
// every Cluster lists the kinds among its API enablements. The policy stays
// for the run (deleting it would leave the CRDs in place anyway).
func mcsCRDsInMembers(ctx context.Context, t *testing.T, c client.Client) {
	t.Helper()
	cpp := clusterPolicy("e2e-mcs-crds", policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: allMembers}},
		policyv1alpha1.ResourceSelector{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: "serviceexports.multicluster.x-k8s.io"},
		policyv1alpha1.ResourceSelector{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: "serviceimports.multicluster.x-k8s.io"})
	if err := c.Create(ctx, cpp); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	testenv.Eventually(t, 90*time.Second, "every Cluster serving ServiceExports and ServiceImports", func(ctx context.Context) error {
		for _, m := range allMembers {
			cl := &clusterv1alpha1.Cluster{}
			if err := c.Get(ctx, client.ObjectKey{Name: m}, cl); err != nil {
				return err
			}
			found := 0
			for _, e := range cl.Status.APIEnablements {
				if e.GroupVersion == mcsv1alpha1.SchemeGroupVersion.String() {
					for _, r := range e.Resources {
						if r.Name == "serviceexports" || r.Name == "serviceimports" {
							found++
						}
					}
				}
			}
			if found != 2 {
				return fmt.Errorf("%s lists %d of the two kinds", m, found)
			}
		}
		return nil
	})
}

// serveApp is a Deployment and its Service in namespace ns.
func serveApp(ns string, replicas int32) (*appsv1.Deployment, *corev1.Service) {
	labels := map[string]string{"app": "serve"}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "serve"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To(replicas), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "serve", Image: "serve:e2e", Ports: []corev1.ContainerPort{{ContainerPort: 8080}}}}}}}}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "serve"},
		Spec: corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP}}}}
	return d, svc
}

// readyPodIPs are the IPs of the member's ready pods labelled app=serve.
func readyPodIPs(ctx context.Context, t *testing.T, member, ns string) ([]string, error) {
	pods, err := kube(t, member).CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=serve"})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range pods.Items {
		ready := false
		for _, c := range p.Status.Conditions {
			ready = ready || c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue
		}
		if ready && p.Status.PodIP != "" && p.DeletionTimestamp == nil {
			out = append(out, p.Status.PodIP)
		}
	}
	sort.Strings(out)
	return out, nil
}

// importedAddresses are the ready endpoints' addresses of the member's
// EndpointSlices of Service svc, and the slices' names.
func importedAddresses(ctx context.Context, t *testing.T, member, ns, svc string) (addrs, slicesSeen []string, err error) {
	list, err := kube(t, member).DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + svc})
	if err != nil {
		return nil, nil, err
	}
	for _, s := range list.Items {
		slicesSeen = append(slicesSeen, s.Name)
		for _, e := range s.Endpoints {
			if e.Conditions.Ready == nil || *e.Conditions.Ready {
				addrs = append(addrs, e.Addresses...)
			}
		}
	}
	sort.Strings(addrs)
	sort.Strings(slicesSeen)
	return addrs, slicesSeen, nil
}

// waitImportedFrom waits until member2's derived-serve has exactly the
// ready pod IPs of the exporting members, in slices named
// imported-<exporter>-*, and returns how long that took.
func waitImportedFrom(ctx context.Context, t *testing.T, ns string, wantPods int, exporters ...string) time.Duration {
	t.Helper()
	start := time.Now()
	testenv.Eventually(t, 90*time.Second, fmt.Sprintf("member2's derived-serve showing the %d ready pods of %v", wantPods, exporters), func(ctx context.Context) error {
		var want []string
		for _, e := range exporters {
			ips, err := readyPodIPs(ctx, t, e, ns)
			if err != nil {
				return err
			}
			want = append(want, ips...)
		}
		sort.Strings(want)
		if len(want) != wantPods {
			return fmt.Errorf("the exporters run %d ready pods, want %d", len(want), wantPods)
		}
		got, names, err := importedAddresses(ctx, t, "member2", ns, "derived-serve")
		if err != nil {
			return err
		}
		if !slices.Equal(got, want) {
			return fmt.Errorf("member2's derived-serve endpoints %v (slices %v), want %v", got, names, want)
		}
		for _, n := range names {
			if !slices.ContainsFunc(exporters, func(e string) bool { return strings.HasPrefix(n, "imported-"+e+"-") }) {
				return fmt.Errorf("slice %s is not imported from %v", n, exporters)
			}
		}
		return nil
	})
	return time.Since(start)
}

// A Service exported from member1 and imported into member2, as in
// Karmada's multi-cluster service documentation: member2 gets
// derived-serve with member1's ready pod IPs (from member1's own
// EndpointSlice controller over kwok pods), following a scale from 2 to 5;
// the control plane holds imported-member1-* and the import lists member1;
// member1 failing, its endpoints leave member2 and the workload's new
// cluster's (member3) take their place; deleting the import and the export
// leaves nothing behind.
func TestServiceExportAndImport(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	mcsCRDsInMembers(ctx, t, c)
	const ns = "e2e-mcs"
	createNamespaceUntilCleanup(ctx, t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	// Everything starts on member1: member3 cordoned meanwhile.
	if out, err := karmadactl("cordon", "member3"); err != nil {
		t.Fatalf("cordon: %v\n%s", err, out)
	}
	t.Cleanup(func() { _, _ = karmadactl("uncordon", "member3") })
	d, svc := serveApp(ns, 2)
	export := &mcsv1alpha1.ServiceExport{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "serve"}}
	workload := &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "serve"},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{
				{APIVersion: "apps/v1", Kind: "Deployment", Name: "serve"},
				{APIVersion: "v1", Kind: "Service", Name: "serve"},
				{APIVersion: mcsv1alpha1.SchemeGroupVersion.String(), Kind: "ServiceExport", Name: "serve"},
			},
			Placement: policyv1alpha1.Placement{
				ClusterAffinity:    &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1", "member3"}},
				SpreadConstraints:  []policyv1alpha1.SpreadConstraint{{SpreadByField: policyv1alpha1.SpreadByFieldCluster, MaxGroups: 1, MinGroups: 1}},
				ClusterTolerations: []corev1.Toleration{notReadyToleration(5)},
			}}}
	imp := &mcsv1alpha1.ServiceImport{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "serve"},
		Spec: mcsv1alpha1.ServiceImportSpec{Type: mcsv1alpha1.ClusterSetIP, Ports: []mcsv1alpha1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}}}}
	importPolicy := &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "serve-import"},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: mcsv1alpha1.SchemeGroupVersion.String(), Kind: "ServiceImport", Name: "serve"}},
			Placement:         policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2"}}}}}
	createUntilCleanup(ctx, t, c, d, svc, export, workload, imp, importPolicy)
	// The webhook gave the import's policy propagateDeps, as Karmada's.
	if err := c.Get(ctx, client.ObjectKeyFromObject(importPolicy), importPolicy); err != nil || !importPolicy.Spec.PropagateDeps {
		t.Errorf("the ServiceImport's policy: propagateDeps %t (err %v), want true", importPolicy.Spec.PropagateDeps, err)
	}
	took := waitImportedFrom(ctx, t, ns, 2, "member1")
	t.Logf("member1's 2 endpoints in member2 %s after the objects were created", took.Round(time.Millisecond))
	if out, err := karmadactl("uncordon", "member3"); err != nil {
		t.Fatalf("uncordon: %v\n%s", err, out)
	}

	// member2 has the derived Service, with the import's port; the control
	// plane has it and the imported slices; the import lists member1.
	derived, err := kube(t, "member2").CoreV1().Services(ns).Get(ctx, "derived-serve", metav1.GetOptions{})
	if err != nil || len(derived.Spec.Ports) != 1 || derived.Spec.Ports[0].Port != 80 || derived.Spec.ClusterIP == "" || derived.Spec.ClusterIP == corev1.ClusterIPNone {
		t.Errorf("member2's derived-serve: %+v (err %v), want a ClusterIP Service of port 80", derived, err)
	}
	testenv.Eventually(t, 30*time.Second, "the import's status listing member1", func(ctx context.Context) error {
		got := &mcsv1alpha1.ServiceImport{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(imp), got); err != nil {
			return err
		}
		if fmt.Sprint(got.Status.Clusters) != "[{member1}]" {
			return fmt.Errorf("status.clusters %v", got.Status.Clusters)
		}
		return nil
	})
	cpSlices := &discoveryv1.EndpointSliceList{}
	if err := c.List(ctx, cpSlices, client.InNamespace(ns), client.MatchingLabels{discoveryv1.LabelServiceName: "derived-serve"}); err != nil || len(cpSlices.Items) == 0 {
		t.Errorf("the control plane's imported slices: %d (err %v), want at least one", len(cpSlices.Items), err)
	}
	for _, s := range cpSlices.Items {
		if !strings.HasPrefix(s.Name, "imported-member1-") || !strings.HasPrefix(s.Annotations[workv1alpha1.WorkNamespaceAnnotation], "karmada-es-member1") {
			t.Errorf("control plane slice %s (annotations %v) is not imported from member1", s.Name, s.Annotations)
		}
	}

	// Scale from 2 to 5: member2 follows.
	patch := client.MergeFrom(d.DeepCopy())
	d.Spec.Replicas = ptr.To[int32](5)
	if err := c.Patch(ctx, d, patch); err != nil {
		t.Fatal(err)
	}
	took = waitImportedFrom(ctx, t, ns, 5, "member1")
	t.Logf("scaled to 5: member2 followed %s after the template changed", took.Round(time.Millisecond))

	// member1 fails: its endpoints leave member2 once it is not Ready, and
	// the workload moves to member3, whose endpoints take their place.
	startMember1 := stopMember(t, "member1")
	took = waitImportedFrom(ctx, t, ns, 5, "member3")
	t.Logf("member1 stopped: member2 showed member3's endpoints only %s later", took.Round(time.Millisecond))
	startMember1()
	waitMemberHealthy(t, "member1")
	testenv.Eventually(t, 90*time.Second, "member1's copies and collected Works gone once it is back", func(ctx context.Context) error {
		works := &workv1alpha1.WorkList{}
		if err := c.List(ctx, works, client.InNamespace("karmada-es-member1"), client.MatchingLabels{mcsv1alpha1.ServiceNamespaceLabel: ns}); err != nil {
			return err
		}
		if len(works.Items) > 0 {
			return fmt.Errorf("%d collected Works of member1 left", len(works.Items))
		}
		return nil
	})
	waitImportedFrom(ctx, t, ns, 5, "member3")

	// Deleting the import removes derived-serve and its slices from
	// member2 and the control plane; deleting the export removes the
	// collected Works and the imported slices.
	deleteAll(t, c, imp)
	testenv.Eventually(t, 60*time.Second, "member2 and the control plane without derived-serve", func(ctx context.Context) error {
		if _, err := kube(t, "member2").CoreV1().Services(ns).Get(ctx, "derived-serve", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("member2's derived-serve: %v", err)
		}
		if _, names, err := importedAddresses(ctx, t, "member2", ns, "derived-serve"); err != nil || len(names) > 0 {
			return fmt.Errorf("member2's slices %v (err %v)", names, err)
		}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "derived-serve"}, &corev1.Service{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("the control plane's derived-serve: %v", err)
		}
		return nil
	})
	deleteAll(t, c, export)
	testenv.Eventually(t, 60*time.Second, "no collected Work nor imported slice left", func(ctx context.Context) error {
		works := &workv1alpha1.WorkList{}
		if err := c.List(ctx, works, client.MatchingLabels{mcsv1alpha1.ServiceNamespaceLabel: ns}); err != nil {
			return err
		}
		if len(works.Items) > 0 {
			return fmt.Errorf("%d Works of the service left, e.g. %s/%s", len(works.Items), works.Items[0].Namespace, works.Items[0].Name)
		}
		left := &discoveryv1.EndpointSliceList{}
		if err := c.List(ctx, left, client.InNamespace(ns)); err != nil {
			return err
		}
		if len(left.Items) > 0 {
			return fmt.Errorf("%d EndpointSlices left in the control plane", len(left.Items))
		}
		return nil
	})
}

// mcsEndpoints waits until the consumer's EndpointSlices of Service serve
// hold exactly the ready pod IPs of the providers, in its own slice (when
// it provides) and in slices <provider>-* dispatched from the others.
func mcsEndpoints(ctx context.Context, t *testing.T, ns, consumer string, wantPods int, providers ...string) {
	t.Helper()
	testenv.Eventually(t, 90*time.Second, fmt.Sprintf("%s's serve showing the %d ready pods of %v", consumer, wantPods, providers), func(ctx context.Context) error {
		var want []string
		for _, p := range providers {
			ips, err := readyPodIPs(ctx, t, p, ns)
			if err != nil {
				return err
			}
			want = append(want, ips...)
		}
		sort.Strings(want)
		if len(want) != wantPods {
			return fmt.Errorf("the providers run %d ready pods, want %d", len(want), wantPods)
		}
		got, names, err := importedAddresses(ctx, t, consumer, ns, "serve")
		if err != nil {
			return err
		}
		if !slices.Equal(got, want) {
			return fmt.Errorf("%s's serve endpoints %v (slices %v), want %v", consumer, got, names, want)
		}
		for _, p := range providers {
			if p != consumer && !slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, p+"-serve-") }) {
				return fmt.Errorf("no slice dispatched from %s among %v", p, names)
			}
		}
		return nil
	})
}

// MultiClusterService CrossCluster, as Karmada's documentation has it
// (examples/multi-cluster-service/30-multicluster-service.yaml): the
// workload in two providers (member1, member3; member3 is pull-mode), the Service claimed and
// propagated by the MultiClusterService; the consumer member2 reaches both
// providers' pods through its own serve (slices member1-* and member3-*);
// member1 made a consumer too keeps its own endpoints and gets member3's;
// deleting the MultiClusterService removes the dispatched slices and the
// Service's copies and releases the Service.
func TestMultiClusterServiceCrossCluster(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	// Applied from the example users read (namespace mcsx).
	const ns = "mcsx"
	example := filepath.Join("..", "..", "examples", "multi-cluster-service", "30-multicluster-service.yaml")
	kubectlApply(t, "apply", "-f", example)
	t.Cleanup(func() {
		_ = c.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
		testenv.Eventually(t, 90*time.Second, "namespace mcsx gone", func(ctx context.Context) error {
			if err := c.Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("still there (%v)", err)
			}
			return nil
		})
	})
	m := &networkingv1alpha1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "serve"}}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "serve"}}
	if err := c.Get(ctx, client.ObjectKeyFromObject(m), m); err != nil {
		t.Fatal(err)
	}
	mcsEndpoints(ctx, t, ns, "member2", 4, "member1", "member3")
	testenv.Eventually(t, 30*time.Second, "the MultiClusterService's conditions", func(ctx context.Context) error {
		got := &networkingv1alpha1.MultiClusterService{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(m), got); err != nil {
			return err
		}
		for _, ty := range []string{"ServiceApplied", "EndpointSliceDispatched"} {
			if cond := meta.FindStatusCondition(got.Status.Conditions, ty); cond == nil || cond.Status != metav1.ConditionTrue {
				return fmt.Errorf("%s: %+v", ty, cond)
			}
		}
		return nil
	})
	claimed := &corev1.Service{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(svc), claimed); err != nil || claimed.Labels["resourcetemplate.karmada.io/claimed-by"] != "MultiClusterService" {
		t.Errorf("the Service's labels %v (err %v), want it claimed by the MultiClusterService", claimed.Labels, err)
	}

	// member1 becomes a consumer too: it keeps its own endpoints (from its
	// own EndpointSlice controller) and gets member3's.
	patch := client.MergeFrom(m.DeepCopy())
	m.Spec.ConsumerClusters = append(m.Spec.ConsumerClusters, networkingv1alpha1.ClusterSelector{Name: "member1"})
	if err := c.Patch(ctx, m, patch); err != nil {
		t.Fatal(err)
	}
	mcsEndpoints(ctx, t, ns, "member1", 4, "member1", "member3")
	if _, names, err := importedAddresses(ctx, t, "member1", ns, "serve"); err != nil || slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "member1-") }) {
		t.Errorf("member1's slices %v (err %v): its own endpoints were dispatched back to it", names, err)
	}

	// Deleted: member2's dispatched slices and Service go; the Service is
	// released in the control plane.
	deleteAll(t, c, m)
	testenv.Eventually(t, 60*time.Second, "member2 without serve, the Service released", func(ctx context.Context) error {
		if _, err := kube(t, "member2").CoreV1().Services(ns).Get(ctx, "serve", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("member2's serve: %v", err)
		}
		if _, names, err := importedAddresses(ctx, t, "member2", ns, "serve"); err != nil || len(names) > 0 {
			return fmt.Errorf("member2's slices %v (err %v)", names, err)
		}
		got := &corev1.Service{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(svc), got); err != nil {
			return err
		}
		if got.Labels["resourcetemplate.karmada.io/claimed-by"] != "" {
			return fmt.Errorf("the Service still claimed: %v", got.Labels)
		}
		return nil
	})
}
