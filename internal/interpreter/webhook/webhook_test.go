package webhook

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	configv1alpha1 "github.com/karmada-go/karmada/api/config/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/interpreter"
)

// workloadServer answers every operation for example.io Workloads, as a
// user's interpreter webhook would, and records what it was asked.
func workloadServer(t *testing.T, asked *[]configv1alpha1.ResourceInterpreterRequest) *httptest.Server {
	t.Helper()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in configv1alpha1.ResourceInterpreterContext
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Request == nil || in.Kind != "ResourceInterpreterContext" || in.APIVersion != "config.karmada.io/v1alpha1" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		req := in.Request
		*asked = append(*asked, *req)
		resp := &configv1alpha1.ResourceInterpreterResponse{UID: req.UID, Successful: true}
		jp := configv1alpha1.PatchTypeJSONPatch
		switch req.Operation {
		case configv1alpha1.InterpreterOperationInterpretReplica:
			resp.Replicas = ptr.To[int32](5)
			resp.ReplicaRequirements = &workv1alpha2.ReplicaRequirements{ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("300m")}}
		case configv1alpha1.InterpreterOperationReviseReplica:
			resp.Patch = []byte(`[{"op":"replace","path":"/spec/replicas","value":` + itoa(*req.DesiredReplicas) + `}]`)
			resp.PatchType = &jp
		case configv1alpha1.InterpreterOperationRetain:
			var observed map[string]any
			_ = json.Unmarshal(req.ObservedObject.Raw, &observed)
			paused, _ := json.Marshal(observed["spec"].(map[string]any)["paused"])
			resp.Patch = []byte(`[{"op":"add","path":"/spec/paused","value":` + string(paused) + `}]`)
			resp.PatchType = &jp
		case configv1alpha1.InterpreterOperationAggregateStatus:
			ready := 0
			for _, it := range req.AggregatedStatus {
				var s struct{ ReadyReplicas int }
				_ = json.Unmarshal(it.Status.Raw, &s)
				ready += s.ReadyReplicas
			}
			resp.Patch = []byte(`[{"op":"add","path":"/status","value":{"readyReplicas":` + itoa(int32(ready)) + `}}]`)
			resp.PatchType = &jp
		case configv1alpha1.InterpreterOperationInterpretStatus:
			resp.RawStatus = &runtime.RawExtension{Raw: []byte(`{"readyReplicas":2}`)}
		case configv1alpha1.InterpreterOperationInterpretHealth:
			resp.Healthy = ptr.To(false)
		case configv1alpha1.InterpreterOperationInterpretDependency:
			resp.Dependencies = []configv1alpha1.DependentObjectReference{{APIVersion: "v1", Kind: "ConfigMap", Namespace: req.Namespace, Name: "settings"}}
		default:
			resp.Successful = false
			resp.Status = &configv1alpha1.RequestStatus{Code: 400, Message: "not supported"}
		}
		_ = json.NewEncoder(w).Encode(&configv1alpha1.ResourceInterpreterContext{TypeMeta: in.TypeMeta, Response: resp})
	}))
	t.Cleanup(srv.Close)
	return srv
}

func itoa(n int32) string { b, _ := json.Marshal(n); return string(b) }

func caOf(srv *httptest.Server) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
}

func config(url string, ca []byte, ops ...configv1alpha1.InterpreterOperation) configv1alpha1.ResourceInterpreterWebhookConfiguration {
	c := configv1alpha1.ResourceInterpreterWebhookConfiguration{}
	c.Name = "workloads"
	c.Webhooks = []configv1alpha1.ResourceInterpreterWebhook{{
		Name: "workloads.example.io", ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: ca},
		Rules: []configv1alpha1.RuleWithOperations{{Operations: ops,
			Rule: configv1alpha1.Rule{APIGroups: []string{"example.io"}, APIVersions: []string{"v1alpha1"}, Kinds: []string{"Workload"}}}},
		InterpreterContextVersions: []string{"v1alpha1"},
		TimeoutSeconds:             ptr.To[int32](2),
	}}
	return c
}

func workload() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.io/v1alpha1", "kind": "Workload",
		"metadata": map[string]any{"name": "w", "namespace": "shop"},
		"spec":     map[string]any{"replicas": int64(5), "paused": false},
	}}
}

// TestEveryOperationOverTheWire: each operation is asked of the webhook in
// Karmada's format, over TLS checked with the configured CA, and its answer
// (values, patches) applied.
func TestEveryOperationOverTheWire(t *testing.T) {
	var asked []configv1alpha1.ResourceInterpreterRequest
	srv := workloadServer(t, &asked)
	l := &Layer{}
	if err := l.Set(context.Background(), []configv1alpha1.ResourceInterpreterWebhookConfiguration{config(srv.URL+"/interpret", caOf(srv), "*")}, nil); err != nil {
		t.Fatal(err)
	}
	in := interpreter.New(l)
	obj := workload()

	n, req, err := in.Replicas(obj)
	if err != nil || n != 5 || req.ResourceRequest.Cpu().String() != "300m" {
		t.Errorf("replicas %d %v %v", n, req, err)
	}
	revised, err := in.ReviseReplicas(obj, 2)
	if err != nil || revised.Object["spec"].(map[string]any)["replicas"] != int64(2) {
		t.Errorf("revised %v %v", revised, err)
	}
	observed := workload()
	observed.Object["spec"].(map[string]any)["paused"] = true
	kept, err := in.Retain(obj, observed)
	if err != nil || kept.Object["spec"].(map[string]any)["paused"] != true {
		t.Errorf("retained %v %v", kept, err)
	}
	agg, err := in.AggregateStatus(obj, []workv1alpha2.AggregatedStatusItem{
		{ClusterName: "member1", Status: &runtime.RawExtension{Raw: []byte(`{"readyReplicas":1}`)}},
		{ClusterName: "member2", Status: &runtime.RawExtension{Raw: []byte(`{"readyReplicas":3}`)}},
	})
	if err != nil || !cmp.Equal(agg.Object["status"], map[string]any{"readyReplicas": int64(4)}) {
		t.Errorf("aggregated %v %v", agg, err)
	}
	if raw, err := in.ReflectStatus(obj); err != nil || string(raw.Raw) != `{"readyReplicas":2}` {
		t.Errorf("status %v %v", raw, err)
	}
	if h, err := in.Health(obj); err != nil || h != workv1alpha1.ResourceUnhealthy {
		t.Errorf("health %v %v", h, err)
	}
	deps, err := in.Dependencies(obj)
	if err != nil || len(deps) != 1 || deps[0].Name != "settings" || deps[0].Namespace != "shop" {
		t.Errorf("dependencies %v %v", deps, err)
	}
	// InterpretComponent is declared (*) but the server refuses it: the
	// error names the webhook, the operation and its message.
	_, err = in.Components(obj)
	var ie *interpreter.Error
	if !errors.As(err, &ie) || ie.Source != "ResourceInterpreterWebhookConfiguration/workloads/workloads.example.io" || ie.Operation != interpreter.OpInterpretComponent ||
		!strings.Contains(err.Error(), "not supported") {
		t.Errorf("components err = %v", err)
	}
	if len(asked) != 8 || asked[1].DesiredReplicas == nil || *asked[1].DesiredReplicas != 2 || asked[2].ObservedObject == nil || len(asked[3].AggregatedStatus) != 2 ||
		asked[0].Kind.Group != "example.io" || asked[0].Name != "w" || asked[0].Namespace != "shop" || asked[0].UID == "" {
		t.Errorf("requests: %+v", asked)
	}
}

// TestOnlyDeclaredOperationsAndKinds: a webhook answers only what its rules
// name; the rest falls to the next layer.
func TestOnlyDeclaredOperationsAndKinds(t *testing.T) {
	var asked []configv1alpha1.ResourceInterpreterRequest
	srv := workloadServer(t, &asked)
	l := &Layer{}
	_ = l.Set(context.Background(), []configv1alpha1.ResourceInterpreterWebhookConfiguration{config(srv.URL, caOf(srv), configv1alpha1.InterpreterOperationInterpretHealth)}, nil)
	in := interpreter.New(l)
	obj := workload()
	if _, err := in.Health(obj); err != nil {
		t.Fatal(err)
	}
	if n, _, _ := in.Replicas(obj); n != 0 || len(asked) != 1 {
		t.Errorf("replicas %d after %d calls: InterpretReplica is not declared", n, len(asked))
	}
	deploy := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "d"}, "status": map[string]any{}}}
	if _, err := in.Health(deploy); err != nil || len(asked) != 1 {
		t.Errorf("a Deployment went to the webhook (%d calls, %v)", len(asked), err)
	}
	v2 := workload()
	v2.SetAPIVersion("example.io/v2")
	if _, err := in.Health(v2); err == nil || !strings.Contains(err.Error(), "do not name version v2") {
		t.Errorf("a version the rules do not name: %v", err)
	}
}

// TestFailures: an untrusted certificate, a timeout, a wrong UID and HTTP
// errors fail the call with the webhook's name; nothing hangs.
func TestFailures(t *testing.T) {
	var asked []configv1alpha1.ResourceInterpreterRequest
	good := workloadServer(t, &asked)
	var slowCalls atomic.Int32
	slow := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		slowCalls.Add(1)
		select {
		case <-r.Context().Done():
		case <-time.After(3 * time.Second):
		}
	}))
	t.Cleanup(slow.Close)
	wrongUID := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(&configv1alpha1.ResourceInterpreterContext{Response: &configv1alpha1.ResourceInterpreterResponse{UID: "other", Successful: true, Healthy: ptr.To(true)}})
	}))
	t.Cleanup(wrongUID.Close)
	broken := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "boom", http.StatusInternalServerError) }))
	t.Cleanup(broken.Close)
	// A redirect elsewhere (here to plain HTTP) is not followed: the object
	// never reaches the other host.
	var elsewhereCalls atomic.Int32
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { elsewhereCalls.Add(1) }))
	t.Cleanup(elsewhere.Close)
	redirect := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+"/steal", http.StatusTemporaryRedirect)
	}))
	t.Cleanup(redirect.Close)
	for _, c := range []struct {
		name string
		cfg  configv1alpha1.ResourceInterpreterWebhookConfiguration
		want string
	}{
		{"untrusted certificate", config(good.URL, nil, "*"), "certificate signed by unknown authority"},
		{"timeout", config(slow.URL, caOf(slow), "*"), "context deadline exceeded"},
		{"wrong uid", config(wrongUID.URL, caOf(wrongUID), "*"), "is for request \"other\""},
		{"http error", config(broken.URL, caOf(broken), "*"), "answered HTTP 500: boom"},
		{"redirect", config(redirect.URL, caOf(redirect), "*"), "answered HTTP 307"},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := &Layer{}
			_ = l.Set(context.Background(), []configv1alpha1.ResourceInterpreterWebhookConfiguration{c.cfg}, nil)
			start := time.Now()
			_, err := interpreter.New(l).Health(workload())
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "workloads.example.io") {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
			if time.Since(start) > 5*time.Second {
				t.Fatalf("took %s", time.Since(start))
			}
		})
	}
	if slowCalls.Load() != 1 {
		t.Errorf("slow server called %d times", slowCalls.Load())
	}
	if elsewhereCalls.Load() != 0 {
		t.Errorf("a redirect was followed: the other host was called %d times", elsewhereCalls.Load())
	}
}

// TestEveryOperationHasAnAsker: a webhook may answer each operation of
// Karmada's interpreter API (all but Prune, which webhooks do not answer).
func TestEveryOperationHasAnAsker(t *testing.T) {
	for _, op := range interpreter.Operations {
		if _, ok := askers[configv1alpha1.InterpreterOperation(op)]; ok != (op != interpreter.OpPrune) {
			t.Errorf("operation %s: asker %v", op, ok)
		}
	}
}
