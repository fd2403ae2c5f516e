//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	searchv1alpha1 "github.com/karmada-go/karmada/api/search/v1alpha1"
	"github.com/karmada-go/karmada/internal/scheme"
	"github.com/karmada-go/karmada/internal/testenv"
)

const searchCache = "/apis/search.karmada.io/v1alpha1/search/cache"

// searchProxyServer is the proxy as a kubectl --server.
func searchProxyServer(t *testing.T) string {
	return restConfig(t, "karmada-apiserver").Host + "/apis/search.karmada.io/v1alpha1/proxying/karmada/proxy"
}

// A ResourceRegistry for Deployments of member1 and member2: the search API
// lists both members' copies with the cluster annotation, selects by label
// and pages; plain kubectl with the proxy as its server lists them
// (-A, -o json) and gets one; a user without rights in the control plane
// reads nothing; the registry's Ready condition says what is cached; and
// deleting it empties the cache.
func TestSearchCachesSelectedKinds(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	ns := "e2e-search-" + utilrand.String(5)
	createUntilCleanup(ctx, t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	dep := kctlDeployment(ns, "web", 1)
	dep.Labels = map[string]string{"tier": "front"}
	pp := &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}},
			Placement:         policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1", "member2"}}},
		}}
	createUntilCleanup(ctx, t, c, pp, dep)
	rr := &searchv1alpha1.ResourceRegistry{ObjectMeta: metav1.ObjectMeta{Name: "e2e-deployments-" + utilrand.String(5)},
		Spec: searchv1alpha1.ResourceRegistrySpec{
			TargetCluster:     policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1", "member2"}},
			ResourceSelectors: []searchv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment"}},
		}}
	createUntilCleanup(ctx, t, c, rr)

	admin := kube(t, "karmada-apiserver")
	path := searchCache + "/apis/apps/v1/namespaces/" + ns + "/deployments"
	var list struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Continue string `json:"continue"`
		} `json:"metadata"`
		Items []struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
		} `json:"items"`
	}
	testenv.Eventually(t, 60*time.Second, "web of member1 and member2 in the cache", func(ctx context.Context) error {
		raw, err := admin.Discovery().RESTClient().Get().AbsPath(path).DoRaw(ctx)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(raw, &list); err != nil {
			return err
		}
		clusters := map[string]bool{}
		for _, it := range list.Items {
			clusters[it.Metadata.Annotations[searchv1alpha1.CachedFromClusterAnnotation]] = it.Metadata.Name == "web"
		}
		if len(list.Items) != 2 || !clusters["member1"] || !clusters["member2"] {
			return fmt.Errorf("cached: %d items from %v", len(list.Items), clusters)
		}
		return nil
	})
	if list.Kind != "DeploymentList" {
		t.Errorf("list kind %q", list.Kind)
	}
	for _, it := range list.Items {
		if len(it.Metadata.ManagedFields) != 0 {
			t.Errorf("%s from %s keeps managedFields", it.Metadata.Name, it.Metadata.Annotations[searchv1alpha1.CachedFromClusterAnnotation])
		}
	}
	// Label selector, and pages of one.
	raw, err := admin.Discovery().RESTClient().Get().AbsPath(path).Param("labelSelector", "tier=back").DoRaw(ctx)
	if err != nil || strings.Contains(string(raw), `"name":"web"`) {
		t.Errorf("labelSelector tier=back: %v %s", err, raw)
	}
	raw, err = admin.Discovery().RESTClient().Get().AbsPath(path).Param("limit", "1").DoRaw(ctx)
	if err != nil || json.Unmarshal(raw, &list) != nil || len(list.Items) != 1 || list.Metadata.Continue == "" {
		t.Fatalf("limit 1: %v %s", err, raw)
	}
	first := list.Items[0].Metadata.Annotations[searchv1alpha1.CachedFromClusterAnnotation]
	raw, err = admin.Discovery().RESTClient().Get().AbsPath(path).Param("limit", "1").Param("continue", list.Metadata.Continue).DoRaw(ctx)
	if err != nil || json.Unmarshal(raw, &list) != nil || len(list.Items) != 1 || list.Items[0].Metadata.Annotations[searchv1alpha1.CachedFromClusterAnnotation] == first {
		t.Errorf("the second page: %v %s", err, raw)
	}

	// Plain kubectl, the proxy as its server.
	kubectl := func(args ...string) (string, error) {
		out, err := exec.Command(filepath.Join(filepath.Dir(fleet.Bin), "kubectl"), append([]string{"--kubeconfig", fleet.Kubeconfig, "--context", "karmada-apiserver",
			"--server", searchProxyServer(t), "--cache-dir", t.TempDir()}, args...)...).CombinedOutput()
		return string(out), err
	}
	out, err := kubectl("get", "deployments", "-A", "-o", "json")
	if err != nil || strings.Count(out, `"`+searchv1alpha1.CachedFromClusterAnnotation+`": "member`) < 2 {
		t.Errorf("kubectl get deployments -A through the proxy: %v\n%.2000s", err, out)
	}
	out, err = kubectl("get", "deployments", "-n", ns)
	if err != nil || !strings.Contains(out, "CLUSTER") || strings.Count(out, "web ") != 2 {
		t.Errorf("kubectl get deployments through the proxy: %v\n%s", err, out)
	}
	// One name that two members hold is not one object: reading it or
	// changing it through the proxy is a Conflict naming both (as
	// Karmada's), never a guess of which member was meant.
	out, err = kubectl("get", "deployment", "web", "-n", ns, "-o", "jsonpath={.metadata.name}")
	if err == nil || !strings.Contains(out, "ambiguous objects in clusters [member1, member2]") {
		t.Errorf("kubectl get deployment web through the proxy: %v %q, want the Conflict naming both members", err, out)
	}
	out, err = kubectl("label", "deployment", "web", "-n", ns, "e2e-through-search=yes")
	if err == nil || !strings.Contains(out, "ambiguous objects in clusters [member1, member2]") {
		t.Errorf("kubectl label deployment web through the proxy: %v %q, want the Conflict naming both members", err, out)
	}
	// (kubectl reads first; the write itself is refused too.)
	err = admin.Discovery().RESTClient().Patch(types.MergePatchType).AbsPath("/apis/search.karmada.io/v1alpha1/proxying/karmada/proxy/apis/apps/v1/namespaces/" + ns + "/deployments/web").
		Body([]byte(`{"metadata":{"labels":{"e2e-through-search":"yes"}}}`)).Do(ctx).Error()
	if !apierrors.IsConflict(err) || !strings.Contains(err.Error(), "ambiguous objects in clusters [member1, member2]") {
		t.Errorf("a patch of web through the proxy: %v, want the Conflict naming both members", err)
	}
	for _, m := range []string{"member1", "member2"} {
		d, err := kube(t, m).AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil || d.Labels["e2e-through-search"] != "" {
			t.Errorf("%s's web after the refused write: %v, labels %v", m, err, d.GetLabels())
		}
	}
	// What no registry selects is not served.
	if out, err := kubectl("get", "configmaps", "-n", ns); err == nil || !strings.Contains(out, "no ResourceRegistry selects") {
		t.Errorf("configmaps through the proxy: %v %s", err, out)
	}

	// A user with no right to Deployments in the control plane reads
	// nothing through the cache.
	err = asUser(t, "e2e-search-nobody").Discovery().RESTClient().Get().AbsPath(path).Do(ctx).Error()
	if !apierrors.IsForbidden(err) {
		t.Errorf("a user without rights reading the cache: %v; want Forbidden", err)
	}

	// The registry says what it caches.
	testenv.Eventually(t, 30*time.Second, "the registry Ready", func(ctx context.Context) error {
		got := &searchv1alpha1.ResourceRegistry{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(rr), got); err != nil {
			return err
		}
		if cond := meta.FindStatusCondition(got.Status.Conditions, searchv1alpha1.ConditionReady); cond == nil || cond.Status != metav1.ConditionTrue {
			return fmt.Errorf("conditions %+v", got.Status.Conditions)
		}
		return nil
	})
	// An invalid registry is refused with the field.
	bad := &searchv1alpha1.ResourceRegistry{ObjectMeta: metav1.ObjectMeta{Name: "e2e-bad-" + utilrand.String(5)},
		Spec: searchv1alpha1.ResourceRegistrySpec{ResourceSelectors: []searchv1alpha1.ResourceSelector{{APIVersion: "apps/v1"}}}}
	if err := c.Create(ctx, bad); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.resourceSelectors[0].kind") {
		t.Errorf("a selector without kind: %v", err)
	}

	// Deleting the registry empties the cache.
	if err := c.Delete(ctx, rr); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, "the cache emptied", func(ctx context.Context) error {
		raw, err := admin.Discovery().RESTClient().Get().AbsPath(path).DoRaw(ctx)
		if err != nil {
			return err
		}
		if strings.Contains(string(raw), `"name":"web"`) {
			return fmt.Errorf("still cached")
		}
		return nil
	})
}

// BenchmarkSearchList: 150 Deployments in each of member1 and member2 (made
// directly in the members, zero replicas), read from member1 directly, and
// all 300 from karmada-search's cache through the karmada-apiserver
// (search/cache: both members in one answer). Run alone
// (it starts the e2e fleet):
//
//	KARMADA_BIN_DIR=$PWD/bin go test -tags e2e -run XXX -bench SearchList ./test/e2e/
func BenchmarkSearchList(b *testing.B) {
	ctx := context.Background()
	kube := func(context string) kubernetes.Interface {
		cfg := restConfig(b, context)
		cfg.QPS, cfg.Burst = 10000, 10000
		kc, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			b.Fatal(err)
		}
		return kc
	}
	ns := "bench-search"
	members := []string{"member1", "member2"}
	for _, m := range members {
		kc := kube(m)
		if _, err := kc.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			b.Fatal(err)
		}
		for i := range 150 {
			d := kctlDeployment(ns, fmt.Sprintf("d-%03d", i), 0)
			if _, err := kc.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				b.Fatal(err)
			}
		}
	}
	c, err := client.New(restConfig(b, "karmada-apiserver"), client.Options{Scheme: scheme.Scheme})
	if err != nil {
		b.Fatal(err)
	}
	rr := &searchv1alpha1.ResourceRegistry{ObjectMeta: metav1.ObjectMeta{Name: "bench-search"},
		Spec: searchv1alpha1.ResourceRegistrySpec{
			TargetCluster:     policyv1alpha1.ClusterAffinity{ClusterNames: members},
			ResourceSelectors: []searchv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns}},
		}}
	if err := c.Create(ctx, rr); err != nil && !apierrors.IsAlreadyExists(err) {
		b.Fatal(err)
	}
	admin := kube("karmada-apiserver")
	path := searchCache + "/apis/apps/v1/namespaces/" + ns + "/deployments"
	deadline := time.Now().Add(time.Minute)
	for {
		raw, err := admin.Discovery().RESTClient().Get().AbsPath(path).DoRaw(ctx)
		if err == nil && strings.Count(string(raw), `"kind":"Deployment"`) == 300 {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("the cache has not the 300 Deployments: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	get := func(b *testing.B, kc kubernetes.Interface, path string) {
		b.ReportAllocs()
		for range b.N {
			if _, err := kc.Discovery().RESTClient().Get().AbsPath(path).DoRaw(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("member1-direct-150", func(b *testing.B) { get(b, kube("member1"), "/apis/apps/v1/namespaces/"+ns+"/deployments") })
	b.Run("search-cache-300", func(b *testing.B) { get(b, admin, path) })
}

// A ResourceRegistry whose clusters are chosen by label follows the
// clusters' labels, as Karmada's: member1 labelled, its Deployments are in
// the cache (read cluster-wide, as Karmada's client reads them); member2
// labelled too, both; member1's label removed, only member2's.
func TestSearchRegistryFollowsClusterLabels(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	ns := "e2e-search-labels-" + utilrand.String(5)
	createUntilCleanup(ctx, t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	dep := kctlDeployment(ns, "labelled", 1)
	pp := &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "labelled"},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "labelled"}},
			Placement:         policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1", "member2"}}},
		}}
	createUntilCleanup(ctx, t, c, pp, dep)
	key := "e2e-search-" + utilrand.String(5)
	rr := &searchv1alpha1.ResourceRegistry{ObjectMeta: metav1.ObjectMeta{Name: key},
		Spec: searchv1alpha1.ResourceRegistrySpec{
			TargetCluster:     policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{key: "yes"}}},
			ResourceSelectors: []searchv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment"}},
		}}
	createUntilCleanup(ctx, t, c, rr)
	label := func(cluster string, on bool) {
		t.Helper()
		patch := fmt.Sprintf(`{"metadata":{"labels":{%q:null}}}`, key)
		if on {
			patch = fmt.Sprintf(`{"metadata":{"labels":{%q:"yes"}}}`, key)
		}
		cl := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: cluster}}
		if err := c.Patch(ctx, cl, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, m := range []string{"member1", "member2"} {
			_ = c.Patch(context.Background(), &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: m}},
				client.RawPatch(types.MergePatchType, []byte(fmt.Sprintf(`{"metadata":{"labels":{%q:null}}}`, key))))
		}
	})
	admin := kube(t, "karmada-apiserver")
	cachedFrom := func(want ...string) {
		t.Helper()
		testenv.Eventually(t, 60*time.Second, fmt.Sprintf("labelled cached from %v", want), func(ctx context.Context) error {
			raw, err := admin.Discovery().RESTClient().Get().AbsPath(searchCache + "/apis/apps/v1/deployments").DoRaw(ctx)
			if err != nil {
				return err
			}
			var list struct {
				Items []struct {
					Metadata metav1.ObjectMeta `json:"metadata"`
				} `json:"items"`
			}
			if err := json.Unmarshal(raw, &list); err != nil {
				return err
			}
			var got []string
			for _, it := range list.Items {
				if it.Metadata.Namespace == ns && it.Metadata.Name == "labelled" {
					got = append(got, it.Metadata.Annotations[searchv1alpha1.CachedFromClusterAnnotation])
				}
			}
			sort.Strings(got)
			if !slices.Equal(got, want) {
				return fmt.Errorf("cached from %v", got)
			}
			return nil
		})
	}
	cachedFrom()
	label("member1", true)
	cachedFrom("member1")
	label("member2", true)
	cachedFrom("member1", "member2")
	label("member1", false)
	cachedFrom("member2")
}
