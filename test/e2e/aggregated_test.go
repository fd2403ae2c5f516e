//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	"github.com/karmada-go/karmada/internal/testenv"
)

// proxyPath is a path in member's API through the control plane.
func proxyPath(member, path string) string {
	return "/apis/cluster.karmada.io/v1alpha1/clusters/" + member + "/proxy" + path
}

// asUser is the karmada-apiserver's configuration impersonating user (as
// the aggregation layer forwards them to karmada-aggregated-apiserver).
func asUser(t *testing.T, user string, groups ...string) kubernetes.Interface {
	t.Helper()
	cfg := restConfig(t, "karmada-apiserver")
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: append(groups, "system:authenticated")}
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return kc
}

// TestClusterProxy: karmada-aggregated-apiserver serves Clusters (the
// APIService points at it, kubectl's columns), and
// clusters/member1/proxy reaches member1 as the caller: the admin lists its
// Pods; a user with clusters/proxy in the control plane is seen by the
// member as that user, with its groups granted clusters/proxy and never
// system:masters (SelfSubjectReview through the proxy), and gets only what
// the member's RBAC gives that user; a group not granted is refused; a user
// without clusters/proxy is refused by the control plane; a pull cluster
// without proxyURL is refused with the reason.
func TestClusterProxy(t *testing.T) {
	ctx := context.Background()
	admin := kube(t, "karmada-apiserver")

	// The Cluster API is the aggregated server's.
	raw, err := admin.Discovery().RESTClient().Get().AbsPath("/apis/apiregistration.k8s.io/v1/apiservices/v1alpha1.cluster.karmada.io").DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var svc struct {
		Spec struct {
			Service *struct{ Namespace, Name string } `json:"service"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(raw, &svc); err != nil || svc.Spec.Service == nil || svc.Spec.Service.Name != "karmada-aggregated-apiserver" {
		t.Fatalf("APIService v1alpha1.cluster.karmada.io: %s", raw)
	}

	// The admin, through the control plane, lists member1's Pods.
	var pods corev1.PodList
	if err := admin.CoreV1().RESTClient().Get().AbsPath(proxyPath("member1", "/api/v1/namespaces/kube-system/pods")).Do(ctx).Into(&pods); err != nil {
		t.Fatalf("listing member1's pods through the proxy: %v", err)
	}
	if pods.Kind != "PodList" && pods.ResourceVersion == "" {
		t.Errorf("not a pod list from member1: %+v", pods.ListMeta)
	}

	// A user allowed to proxy to member1 (only) is that user in the member.
	user := "e2e-proxy-" + utilrand.String(5)
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: user}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{clusterv1alpha1.GroupName}, Resources: []string{"clusters/proxy"}, ResourceNames: []string{"member1"}, Verbs: []string{"*"}}}}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: user},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}, {APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: user + "-group"}}}
	createUntilCleanup(ctx, t, karmadaClient(t), role, binding)
	uc := asUser(t, user, user+"-group")
	// In system:masters in the control plane, it is not one in member1.
	ucm := asUser(t, user, user+"-group", "system:masters")
	var review authenticationv1.SelfSubjectReview
	testenv.Eventually(t, 20*time.Second, "the member seeing the proxied user", func(ctx context.Context) error {
		body := []byte(`{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}`)
		return ucm.CoreV1().RESTClient().Post().AbsPath(proxyPath("member1", "/apis/authentication.k8s.io/v1/selfsubjectreviews")).
			SetHeader("Content-Type", "application/json").Body(body).Do(ctx).Into(&review)
	})
	got := review.Status.UserInfo
	if got.Username != user || !slices.Contains(got.Groups, user+"-group") || slices.Contains(got.Groups, "system:masters") {
		t.Errorf("member1 saw %q groups %v; want %q with %s-group and no system:masters", got.Username, got.Groups, user, user)
	}
	// A group of the caller's that the control plane does not let
	// through clusters/proxy is not impersonated: member1 refuses (as
	// Karmada's impersonator does).
	err = asUser(t, user, "e2e-unbound-group").CoreV1().RESTClient().Get().AbsPath(proxyPath("member1", "/api/v1/namespaces")).Do(ctx).Error()
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "cannot impersonate") || !strings.Contains(err.Error(), "e2e-unbound-group") {
		t.Errorf("the user in a group not granted clusters/proxy: %v; want member1's Forbidden on impersonating that group", err)
	}
	// The member's RBAC decides: the user has no right there.
	err = uc.CoreV1().RESTClient().Get().AbsPath(proxyPath("member1", "/api/v1/namespaces/kube-system/secrets")).Do(ctx).Error()
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), user) {
		t.Errorf("the user reading member1's secrets: %v; want member1's Forbidden naming the user", err)
	}
	// Its grant names member1 only.
	err = uc.CoreV1().RESTClient().Get().AbsPath(proxyPath("member2", "/api/v1/namespaces")).Do(ctx).Error()
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "clusters/proxy") {
		t.Errorf("the user proxying to member2: %v; want the control plane's Forbidden on clusters/proxy", err)
	}
	// A user without clusters/proxy is refused by the control plane.
	err = asUser(t, "e2e-nobody").CoreV1().RESTClient().Get().AbsPath(proxyPath("member1", "/api/v1/namespaces")).Do(ctx).Error()
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "clusters/proxy") {
		t.Errorf("a user without clusters/proxy: %v; want Forbidden on clusters/proxy", err)
	}
	// member3 is a pull cluster without proxyURL.
	err = admin.CoreV1().RESTClient().Get().AbsPath(proxyPath("member3", "/api/v1/namespaces")).Do(ctx).Error()
	if !apierrors.IsServiceUnavailable(err) || !strings.Contains(err.Error(), "proxyURL") {
		t.Errorf("proxying to the pull cluster member3: %v; want ServiceUnavailable naming spec.proxyURL", err)
	}
}

// TestClusterTableColumns: kubectl get clusters prints Karmada's columns
// from the aggregated server.
func TestClusterTableColumns(t *testing.T) {
	cmd := exec.Command(filepath.Join(filepath.Dir(fleet.Bin), "kubectl"), "--kubeconfig", fleet.Kubeconfig, "--context", "karmada-apiserver", "get", "clusters", "-o", "wide")
	outb, err := cmd.CombinedOutput()
	out := string(outb)
	if err != nil {
		t.Fatalf("kubectl get clusters: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 4 || strings.Join(strings.Fields(lines[0]), " ") != "NAME VERSION MODE READY AGE APIENDPOINT INSECURE-SKIP-TLS-VERIFY" {
		t.Fatalf("kubectl get clusters -o wide:\n%s", out)
	}
	for _, l := range lines[1:] {
		if f := strings.Fields(l); len(f) < 5 || f[3] != "True" {
			t.Errorf("a cluster not Ready in %q", l)
		}
	}
}

// BenchmarkClusterProxy: one GET of member1's kube-system Pods, sent to
// member1 directly and through clusters/member1/proxy (the karmada-apiserver,
// karmada-aggregated-apiserver, then member1), and one GET of a Cluster
// through the aggregation layer beside one of a Namespace (served by the
// karmada-apiserver itself). Run alone (it starts the e2e fleet):
//
//	KARMADA_BIN_DIR=$PWD/bin go test -tags e2e -run XXX -bench ClusterProxy ./test/e2e/
func BenchmarkClusterProxy(b *testing.B) {
	ctx := context.Background()
	// No client-side rate limit: the servers are measured.
	client := func(context string) kubernetes.Interface {
		cfg := restConfig(b, context)
		cfg.QPS, cfg.Burst = 10000, 10000
		kc, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			b.Fatal(err)
		}
		return kc
	}
	direct, admin := client("member1"), client("karmada-apiserver")
	get := func(b *testing.B, c rest.Interface, path string) {
		b.ReportAllocs()
		for range b.N {
			if _, err := c.Get().AbsPath(path).DoRaw(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("pods-direct", func(b *testing.B) { get(b, direct.CoreV1().RESTClient(), "/api/v1/namespaces/kube-system/pods") })
	b.Run("pods-proxied", func(b *testing.B) {
		get(b, admin.CoreV1().RESTClient(), proxyPath("member1", "/api/v1/namespaces/kube-system/pods"))
	})
	// A read the karmada-apiserver serves itself, for comparison.
	b.Run("namespace-get", func(b *testing.B) { get(b, admin.CoreV1().RESTClient(), "/api/v1/namespaces/default") })
	b.Run("cluster-get", func(b *testing.B) {
		get(b, admin.CoreV1().RESTClient(), "/apis/cluster.karmada.io/v1alpha1/clusters/member1")
	})
}
