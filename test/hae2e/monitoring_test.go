//go:build hae2e

package hae2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	"github.com/karmada-go/karmada/deploy"
	"github.com/karmada-go/karmada/internal/localup/plan"
	"github.com/karmada-go/karmada/internal/localup/process"
	"github.com/karmada-go/karmada/internal/testenv"
)

// onlyWhileItHappens are metrics the dashboard or the alert rules read that
// have no series until what they count happens, and that this test cannot
// make happen without disturbing the fleet, with why.
var onlyWhileItHappens = map[string]string{
	"karmada_eviction_kind_total": "labelled by cluster and kind, a series exists only while a binding waits to be evicted (a NoExecute taint on a member)",
}

// Every metric the Grafana dashboard and the Prometheus alert rules of
// deploy/monitoring read is exported by a running HA fleet: the components
// are scraped (every replica: a standby exports no scheduling) after one
// template went to both members and was deleted again.
func TestMonitoringMetricsAreExported(t *testing.T) {
	ensureUp(t)
	ctx := context.Background()
	c := karmadaClient(t)
	ns := "monitoring"
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}) })
	pp := &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "probe"},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap", Name: "probe"}},
			Placement:         policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: members}},
		},
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "probe"}, Data: map[string]string{"a": "b"}}
	for _, o := range []client.Object{pp, cm} {
		if err := c.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	copies := func(want bool) func(ctx context.Context) error {
		return func(ctx context.Context) error {
			for _, m := range members {
				_, err := kube(t, m).CoreV1().ConfigMaps(ns).Get(ctx, "probe", metav1.GetOptions{})
				if want && err != nil {
					return fmt.Errorf("%s: %v", m, err)
				}
				if !want && !apierrors.IsNotFound(err) {
					return fmt.Errorf("%s still has the copy (%v)", m, err)
				}
			}
			return nil
		}
	}
	testenv.Eventually(t, time.Minute, "the probe ConfigMap in both members", copies(true))
	// An update, for the update counters.
	if err := c.Patch(ctx, cm, client.RawPatch(types.MergePatchType, []byte(`{"data":{"a":"c"}}`))); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, time.Minute, "the update in both members", func(ctx context.Context) error {
		for _, m := range members {
			got, err := kube(t, m).CoreV1().ConfigMaps(ns).Get(ctx, "probe", metav1.GetOptions{})
			if err != nil || got.Data["a"] != "c" {
				return fmt.Errorf("%s: %v %v", m, got.Data, err)
			}
		}
		return nil
	})
	if err := c.Delete(ctx, cm); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, time.Minute, "the probe ConfigMap gone from both members", copies(false))

	exported := map[string][]*dto.MetricFamily{}
	var scraped []string
	for _, s := range status(t) {
		component := strings.TrimPrefix(s.Name, "karmada/")
		if !strings.HasPrefix(component, "karmada-controller-manager") && !strings.HasPrefix(component, "karmada-scheduler") && !strings.HasPrefix(component, "karmada-webhook") {
			continue
		}
		families := scrapeAny(t, s, controlPlaneTLS(t), "")
		scraped = append(scraped, s.Name)
		if families["karmada_build_info"] == nil {
			t.Errorf("%s exports no karmada_build_info", s.Name)
		}
		for name, f := range families {
			exported[name] = append(exported[name], f)
		}
	}
	// The pull member's agent, whose /metrics the member's API server
	// reviews: a token of a member ServiceAccount bound to system:monitoring.
	for _, s := range status(t) {
		if s.Name != "member2/karmada-agent" {
			continue
		}
		for name, f := range scrapeAny(t, s, &tls.Config{InsecureSkipVerify: true}, monitoringToken(t, "member2")) { //nolint:gosec // the agent's self-signed serving certificate
			exported[name] = append(exported[name], f)
		}
		scraped = append(scraped, s.Name)
	}
	t.Logf("scraped %s", strings.Join(scraped, ", "))
	if len(scraped) != 7 {
		t.Fatalf("scraped %d processes (%v), want both replicas of the controller manager, scheduler and webhook, and the agent", len(scraped), scraped)
	}

	monitored, err := deploy.MonitoredMetrics()
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(monitored))
	for n := range monitored {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if _, ok := onlyWhileItHappens[n]; ok {
			continue
		}
		if !has(exported, n) {
			t.Errorf("%s (read by %s) is exported by no component of the fleet", n, strings.Join(monitored[n], ", "))
		}
	}
	t.Logf("%d metrics read by the dashboard and the alerts, %d of them checked here", len(names), len(names)-len(onlyWhileItHappens))

	// A few values, not only names.
	if v, ok := gauge(exported, "cluster_ready_state", map[string]string{"member_cluster": "member1"}); !ok || v != 1 {
		t.Errorf("cluster_ready_state{member_cluster=member1} = %v (found %t), want 1", v, ok)
	}
	if v, ok := gauge(exported, "karmada_certificate_expiration_timestamp_seconds", map[string]string{"certificate": "karmada-apiserver", "usage": "peer"}); !ok || time.Unix(int64(v), 0).Before(time.Now()) {
		t.Errorf("the karmada-apiserver's serving certificate expires at %v (found %t), want a time to come", v, ok)
	}
	if v, ok := gauge(exported, "leader_election_master_status", map[string]string{"name": "karmada-scheduler"}); !ok || v != 1 {
		t.Errorf("no replica of karmada-scheduler says it leads (%v, found %t)", v, ok)
	}
	if v := counter(exported, "karmada_delete_resource_from_cluster", map[string]string{"member_cluster": "member1", "kind": "ConfigMap", "result": "success"}); v < 1 {
		t.Errorf("karmada_delete_resource_from_cluster{member1, ConfigMap, success} = %v after the probe's copy was deleted", v)
	}
}

// has reports whether a family of that name, or a histogram or summary
// whose series it names (_bucket, _sum, _count), was exported.
func has(exported map[string][]*dto.MetricFamily, name string) bool {
	if fs := exported[name]; len(fs) > 0 {
		for _, f := range fs {
			if len(f.GetMetric()) > 0 {
				return true
			}
		}
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok {
			for _, f := range exported[base] {
				if len(f.GetMetric()) > 0 && (f.GetType() == dto.MetricType_HISTOGRAM || f.GetType() == dto.MetricType_SUMMARY) {
					return true
				}
			}
		}
	}
	return false
}

func matches(m *dto.Metric, labels map[string]string) bool {
	n := 0
	for _, l := range m.GetLabel() {
		if v, ok := labels[l.GetName()]; ok {
			if v != l.GetValue() {
				return false
			}
			n++
		}
	}
	return n == len(labels)
}

// gauge is the largest value of a gauge's series with those labels.
func gauge(exported map[string][]*dto.MetricFamily, name string, labels map[string]string) (float64, bool) {
	var v float64
	found := false
	for _, f := range exported[name] {
		for _, m := range f.GetMetric() {
			if matches(m, labels) && (!found || m.GetGauge().GetValue() > v) {
				v, found = m.GetGauge().GetValue(), true
			}
		}
	}
	return v, found
}

// counter is the sum of a counter's series with those labels.
func counter(exported map[string][]*dto.MetricFamily, name string, labels map[string]string) float64 {
	var v float64
	for _, f := range exported[name] {
		for _, m := range f.GetMetric() {
			if matches(m, labels) {
				v += m.GetCounter().GetValue()
			}
		}
	}
	return v
}

// controlPlaneTLS authenticates as the fleet's admin (a certificate of the
// control plane's CA, which the components' --client-ca-file trusts).
func controlPlaneTLS(t *testing.T) *tls.Config {
	t.Helper()
	cfg := restConfig(t, plan.ControlPlaneContext)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(cfg.CAData)
	admin, err := tls.X509KeyPair(cfg.CertData, cfg.KeyData)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{admin}, MinVersion: tls.VersionTLS12}
}

// monitoringToken is a token of a ServiceAccount of the member bound to
// Kubernetes' system:monitoring role (get /metrics).
func monitoringToken(t *testing.T, member string) string {
	t.Helper()
	ctx := context.Background()
	kc := kube(t, member)
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "hae2e-monitoring"}}
	if _, err := kc.CoreV1().ServiceAccounts("default").Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "hae2e-monitoring"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:monitoring"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "default", Name: sa.Name}}}
	if _, err := kc.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = kc.RbacV1().ClusterRoleBindings().Delete(context.Background(), crb.Name, metav1.DeleteOptions{})
		_ = kc.CoreV1().ServiceAccounts("default").Delete(context.Background(), sa.Name, metav1.DeleteOptions{})
	})
	tr, err := kc.CoreV1().ServiceAccounts("default").CreateToken(ctx, sa.Name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}

// scrapeAny reads /metrics from whichever of the process's ports serves
// it (the others serve health), retrying until one answers.
func scrapeAny(t *testing.T, s process.ComponentStatus, tlsConfig *tls.Config, token string) map[string]*dto.MetricFamily {
	t.Helper()
	var families map[string]*dto.MetricFamily
	testenv.Eventually(t, 30*time.Second, "/metrics of "+s.Name, func(ctx context.Context) error {
		var errs []string
		for _, port := range s.Ports {
			f, err := scrape(ctx, fmt.Sprintf("https://127.0.0.1:%d/metrics", port), tlsConfig, token)
			if err == nil {
				families = f
				return nil
			}
			errs = append(errs, err.Error())
		}
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	})
	return families
}

func scrape(ctx context.Context, url string, tlsConfig *tls.Config, token string) (map[string]*dto.MetricFamily, error) {
	tr := &http.Transport{TLSClientConfig: tlsConfig, DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 256))
		return nil, fmt.Errorf("%s: %d %s", url, resp.StatusCode, body)
	}
	var p expfmt.TextParser
	return p.TextToMetricFamilies(resp.Body)
}
