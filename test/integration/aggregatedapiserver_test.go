package integration

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	"github.com/karmada-go/karmada/internal/scheme"
	"github.com/karmada-go/karmada/internal/testenv"
)

// karmada-aggregated-apiserver stores Clusters: create drops the status and
// sets generation 1; an invalid Cluster is refused with the field path;
// the status subresource writes only the status; a spec change moves the
// generation and keeps the status; watch, field selectors and kubectl's
// table work; a user without RBAC on clusters is refused; delete removes.
func TestAggregatedAPIServerStoresClusters(t *testing.T) {
	t.Parallel()
	env := testenv.StartMember(t)
	cfg := env.StartAggregatedAPIServer(t)
	// The server alone serves one group, not /api: a fixed mapping instead
	// of discovery (behind the aggregation layer clients discover it).
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(clusterv1alpha1.SchemeGroupVersion.WithKind("Cluster"), meta.RESTScopeRoot)
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme.Scheme, Mapper: mapper})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	cl := &clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "member1", Labels: map[string]string{"env": "test"}},
		Spec:       clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Push, APIEndpoint: "https://127.0.0.1:6443", Region: "eu"},
		Status:     clusterv1alpha1.ClusterStatus{KubernetesVersion: "v9.9.9"},
	}
	if err := c.Create(ctx, cl); err != nil {
		t.Fatal(err)
	}
	if cl.Status.KubernetesVersion != "" || cl.Generation != 1 || cl.UID == "" {
		t.Errorf("created: status %+v generation %d uid %q; want no status, generation 1, a uid", cl.Status, cl.Generation, cl.UID)
	}

	bad := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "bad"}, Spec: clusterv1alpha1.ClusterSpec{SyncMode: "Sideways",
		SecretRef: &clusterv1alpha1.LocalSecretReference{Name: "x"}}}
	err = c.Create(ctx, bad)
	if !apierrors.IsInvalid(err) {
		t.Fatalf("an invalid Cluster: %v, want Invalid", err)
	}
	for _, want := range []string{`spec.syncMode: Unsupported value: "Sideways"`, `"Push"`, "spec.secretRef.namespace: Required value"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}

	w, err := c.Watch(ctx, &clusterv1alpha1.ClusterList{}, client.MatchingFields{"metadata.name": "member1"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	// The status subresource: the status is written, a spec change in the
	// same request is not.
	cl.Status = clusterv1alpha1.ClusterStatus{KubernetesVersion: "v1.33.3", Conditions: []metav1.Condition{{Type: clusterv1alpha1.ClusterConditionReady,
		Status: metav1.ConditionTrue, Reason: "ClusterReady", Message: "ok", LastTransitionTime: metav1.Now()}}}
	cl.Spec.Region = "us"
	if err := c.Status().Update(ctx, cl); err != nil {
		t.Fatal(err)
	}
	got := &clusterv1alpha1.Cluster{}
	if err := c.Get(ctx, client.ObjectKey{Name: "member1"}, got); err != nil {
		t.Fatal(err)
	}
	if got.Status.KubernetesVersion != "v1.33.3" || got.Spec.Region != "eu" || got.Generation != 1 {
		t.Errorf("after the status update: version %q region %q generation %d; want v1.33.3, eu (spec unchanged), 1", got.Status.KubernetesVersion, got.Spec.Region, got.Generation)
	}
	// The main resource: the spec is written, the status kept.
	got.Spec.Region = "us"
	got.Status.KubernetesVersion = "v0"
	if err := c.Update(ctx, got); err != nil {
		t.Fatal(err)
	}
	if got.Generation != 2 || got.Status.KubernetesVersion != "v1.33.3" || got.Spec.Region != "us" {
		t.Errorf("after the spec update: generation %d version %q region %q; want 2, v1.33.3 (status kept), us", got.Generation, got.Status.KubernetesVersion, got.Spec.Region)
	}
	// A merge patch, as kubectl label does.
	if err := c.Patch(ctx, got, client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"labels":{"tier":"gold"}}}`))); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(10 * time.Second)
	for seen := false; !seen; {
		select {
		case ev := <-w.ResultChan():
			if o, ok := ev.Object.(*clusterv1alpha1.Cluster); ok && ev.Type == watch.Modified && o.Labels["tier"] == "gold" {
				seen = true
			}
		case <-deadline:
			t.Fatal("the watch never saw the label")
		}
	}

	list := &clusterv1alpha1.ClusterList{}
	if err := c.List(ctx, list, &client.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", "member1")}); err != nil || len(list.Items) != 1 {
		t.Fatalf("listing by field selector: %v, %d items", err, len(list.Items))
	}
	if err := c.List(ctx, list, &client.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.region", "us")}); err == nil {
		t.Error("an unsupported field selector was accepted")
	}

	// kubectl's table.
	table := tableOf(t, cfg, "/apis/cluster.karmada.io/v1alpha1/clusters")
	var names []string
	for _, col := range table.ColumnDefinitions {
		names = append(names, col.Name)
	}
	if strings.Join(names, ",") != "Name,Version,Mode,Ready,Age,APIEndpoint,Insecure-Skip-TLS-Verify" {
		t.Errorf("columns %v", names)
	}
	if len(table.Rows) != 1 || table.Rows[0].Cells[0] != "member1" || table.Rows[0].Cells[1] != "v1.33.3" || table.Rows[0].Cells[2] != "Push" || table.Rows[0].Cells[3] != "True" {
		t.Errorf("rows %+v", table.Rows)
	}

	// RBAC of the karmada-apiserver decides.
	userCfg := env.AddUser(t, "alice", nil, cfg.Host)
	uc, err := client.New(userCfg, client.Options{Scheme: scheme.Scheme, Mapper: mapper})
	if err != nil {
		t.Fatal(err)
	}
	if err := uc.Get(ctx, client.ObjectKey{Name: "member1"}, &clusterv1alpha1.Cluster{}); !apierrors.IsForbidden(err) {
		t.Errorf("alice without rights reading a Cluster: %v, want Forbidden", err)
	}
	grant(ctx, t, env.Client, "alice", []rbacv1.PolicyRule{{APIGroups: []string{clusterv1alpha1.GroupName}, Resources: []string{"clusters"}, Verbs: []string{"get"}}})
	testenv.Eventually(t, 10*time.Second, "alice reading with get granted", func(ctx context.Context) error {
		return uc.Get(ctx, client.ObjectKey{Name: "member1"}, &clusterv1alpha1.Cluster{})
	})
	if err := uc.Delete(ctx, got); !apierrors.IsForbidden(err) {
		t.Errorf("alice deleting with get only: %v, want Forbidden", err)
	}

	if err := c.Delete(ctx, got); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKey{Name: "member1"}, &clusterv1alpha1.Cluster{}); !apierrors.IsNotFound(err) {
		t.Errorf("after delete: %v, want NotFound", err)
	}
}

// tableOf GETs path as a Table, as kubectl get does.
func tableOf(t *testing.T, cfg *rest.Config, path string) *metav1.Table {
	t.Helper()
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodGet, cfg.Host+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	table := &metav1.Table{}
	if err := json.NewDecoder(resp.Body).Decode(table); err != nil || table.Kind != "Table" {
		t.Fatalf("a table of %s: %v, kind %q (status %d)", path, err, table.Kind, resp.StatusCode)
	}
	return table
}

// grant gives user a ClusterRole with rules.
func grant(ctx context.Context, t *testing.T, c client.Client, user string, rules []rbacv1.PolicyRule) {
	t.Helper()
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "test-" + user}, Rules: rules}
	if err := c.Create(ctx, role); err != nil {
		t.Fatal(err)
	}
	rb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "test-" + user},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}}
	if err := c.Create(ctx, rb); err != nil {
		t.Fatal(err)
	}
}
