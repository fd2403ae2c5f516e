package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/spf13/pflag"

	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
)

func TestManagerOptions(t *testing.T) {
	o := &ManagerOptions{}
	f := pflag.NewFlagSet("t", pflag.ContinueOnError)
	o.AddFlags(f, ":10999")
	if err := f.Parse([]string{"--kube-api-qps=0"}); err != nil {
		t.Fatal(err)
	}
	if o.HealthProbeBindAddress != ":10999" || !o.LeaderElect || o.KubeAPIBurst != 400 || o.WriteQueueTarget != 20*time.Millisecond {
		t.Errorf("defaults: %+v", o)
	}
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "--kube-api-qps=0") {
		t.Errorf("--kube-api-qps=0: %v, want an error naming the flag", err)
	}
	o.KubeAPIQPS = 7
	if err := f.Set("write-queue-target", "-1ms"); err != nil {
		t.Fatal(err)
	}
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "--write-queue-target=-1ms: must be 0 (off) or positive") {
		t.Errorf("--write-queue-target=-1ms: %v, want an error naming the flag and what is allowed", err)
	}
	o.WriteQueueTarget = 0
	if err := o.Validate(); err != nil {
		t.Errorf("--write-queue-target=0 (off): %v", err)
	}
	// --kubeconfig is honoured, and only it: a missing file is an error
	// naming the flag even where $KUBECONFIG or in-cluster would work.
	o.KubeAPIQPS = 7
	o.Kubeconfig = filepath.Join(t.TempDir(), "missing")
	if _, err := o.RESTConfig(); err == nil || !strings.Contains(err.Error(), "--kubeconfig") {
		t.Errorf("missing --kubeconfig: %v, want an error naming the flag", err)
	}
	path := filepath.Join(t.TempDir(), "config")
	kc := `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:6999"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`
	if err := os.WriteFile(path, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	o.Kubeconfig = path
	cfg, err := o.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://127.0.0.1:6999" || cfg.QPS != 7 || cfg.Burst != 400 {
		t.Errorf("config from --kubeconfig: host %s, QPS %v, burst %d", cfg.Host, cfg.QPS, cfg.Burst)
	}
}

func TestLeaderElectionFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // in the error; empty: valid
	}{
		{nil, ""},
		{[]string{"--leader-elect-lease-duration=30s", "--leader-elect-renew-deadline=20s", "--leader-elect-retry-period=4s"}, ""},
		{[]string{"--leader-elect-lease-duration=10s"}, "--leader-elect-lease-duration=10s: must be longer than --leader-elect-renew-deadline (10s)"},
		{[]string{"--leader-elect-renew-deadline=2s"}, "--leader-elect-renew-deadline=2s: must be longer than --leader-elect-retry-period (2s)"},
		{[]string{"--leader-elect-retry-period=0s"}, "--leader-elect-retry-period=0s: must be positive"},
		// Not checked when there is no election.
		{[]string{"--leader-elect=false", "--leader-elect-lease-duration=1s"}, ""},
	} {
		o := &ManagerOptions{}
		f := pflag.NewFlagSet("t", pflag.ContinueOnError)
		o.AddFlags(f, ":10999")
		if err := f.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		err := o.Validate()
		if tc.want == "" && err != nil {
			t.Errorf("%v: %v", tc.args, err)
		}
		if tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
}

const status = `{"availableReplicas":2,"observedGeneration":1,"readyReplicas":2,"replicas":2,"updatedReplicas":2}`

// Works and bindings decoded apart, with equal manifests or statuses, hold
// them once in the cache.
func TestCacheTransformSharesRawJSON(t *testing.T) {
	decode := func(cluster string) *workv1alpha1.Work {
		doc := `{"apiVersion":"work.karmada.io/v1alpha1","kind":"Work","metadata":{"name":"web","namespace":"karmada-es-` + cluster + `",` +
			`"managedFields":[{"manager":"karmada-controller-manager","operation":"Update"}]},` +
			`"spec":{"workload":{"manifests":[{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop"},"spec":{"replicas":2}}]}},` +
			`"status":{"manifestStatuses":[{"identifier":{"ordinal":0,"version":"v1","kind":"Deployment","name":"web","namespace":"shop"},"status":` + status + `}]}}`
		w := &workv1alpha1.Work{}
		if err := json.Unmarshal([]byte(doc), w); err != nil {
			t.Fatal(err)
		}
		return w
	}
	var got []*workv1alpha1.Work
	for _, c := range []string{"member1", "member2"} {
		o, err := CacheTransform(decode(c))
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, o.(*workv1alpha1.Work))
	}
	a, b := got[0].Spec.Workload.Manifests[0].Raw, got[1].Spec.Workload.Manifests[0].Raw
	if unsafe.SliceData(a) != unsafe.SliceData(b) {
		t.Fatal("equal manifests of two Works not shared")
	}
	if want := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop"},"spec":{"replicas":2}}`; string(b) != want {
		t.Fatalf("manifest changed: %s", b)
	}
	if got[0].ManagedFields != nil || got[1].Namespace != "karmada-es-member2" {
		t.Fatalf("managedFields kept or metadata changed: %+v", got[1].ObjectMeta)
	}
	rb := &workv1alpha2.ResourceBinding{}
	if err := json.Unmarshal([]byte(`{"status":{"aggregatedStatus":[{"clusterName":"member1","status":`+status+`}]}}`), rb); err != nil {
		t.Fatal(err)
	}
	if _, err := CacheTransform(rb); err != nil {
		t.Fatal(err)
	}
	ws, bs := got[0].Status.ManifestStatuses[0].Status.Raw, rb.Status.AggregatedStatus[0].Status.Raw
	if unsafe.SliceData(ws) != unsafe.SliceData(bs) || unsafe.SliceData(ws) != unsafe.SliceData(got[1].Status.ManifestStatuses[0].Status.Raw) {
		t.Fatal("equal statuses of Works and a binding not shared")
	}
	if string(bs) != status {
		t.Fatalf("status changed: %s", bs)
	}
}
