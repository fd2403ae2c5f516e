//go:build e2e

package e2e

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// Karmada's components have a priority level of their own on the
// karmada-apiserver (API Priority and Fairness), so that users' requests are
// never queued behind theirs: a request made as any of them is classified
// into it, a user's is not, and the running controllers' requests are
// dispatched through it.
func TestControllersHaveTheirOwnPriorityLevel(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := restConfig(t, "karmada-apiserver")
	kc := kube(t, "karmada-apiserver")
	fs, err := kc.FlowcontrolV1().FlowSchemas().Get(ctx, "karmada-controllers", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("karmada-local installs FlowSchema karmada-controllers: %v", err)
	}
	pl, err := kc.FlowcontrolV1().PriorityLevelConfigurations().Get(ctx, "karmada-controllers", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("karmada-local installs PriorityLevelConfiguration karmada-controllers: %v", err)
	}
	if fs.Spec.PriorityLevelConfiguration.Name != pl.Name {
		t.Fatalf("FlowSchema karmada-controllers points at priority level %q", fs.Spec.PriorityLevelConfiguration.Name)
	}

	// classify makes a request as user (impersonated by the admin) and
	// returns the flow schema and priority level the API server chose.
	classify := func(user string, groups ...string) (string, string) {
		t.Helper()
		c := rest.CopyConfig(cfg)
		c.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: groups}
		hc, err := rest.HTTPClientFor(c)
		if err != nil {
			t.Fatal(err)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.Host+"/version", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatalf("GET /version as %s: %v", user, err)
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.Header.Get("X-Kubernetes-PF-FlowSchema-UID"), resp.Header.Get("X-Kubernetes-PF-PriorityLevel-UID")
	}
	for _, who := range []struct {
		user   string
		groups []string
	}{
		{user: "system:karmada:karmada-controller-manager"},
		{user: "system:karmada:karmada-scheduler"},
		{user: "system:karmada:karmada-webhook"},
		{user: "system:karmada:agent:member3", groups: []string{"system:karmada:agents"}},
	} {
		f, p := classify(who.user, who.groups...)
		if f != string(fs.UID) || p != string(pl.UID) {
			t.Errorf("a request as %s went to flow schema %q, priority level %q; want karmada-controllers (%s, %s)", who.user, f, p, fs.UID, pl.UID)
		}
	}
	// A user, even one who may write templates everywhere, is not theirs.
	if f, p := classify("alice", "platform-team"); f == "" || f == string(fs.UID) || p == string(pl.UID) {
		t.Errorf("a user's request went to flow schema %q, priority level %q; want one that is not karmada-controllers", f, p)
	}

	// The running components' own requests go through it.
	raw, err := kc.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dispatched := false
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(line, "apiserver_flowcontrol_dispatched_requests_total{") &&
			strings.Contains(line, `flow_schema="karmada-controllers"`) && strings.Contains(line, `priority_level="karmada-controllers"`) && !strings.HasSuffix(line, " 0") {
			dispatched = true
		}
	}
	if !dispatched {
		t.Error("no request was dispatched through flow schema karmada-controllers: the running components are not classified into it")
	}
}
