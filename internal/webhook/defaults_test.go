package webhook

import (
	"context"
	"encoding/json"
	"regexp"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
)

// mutate sends raw (a create, or an update when old is set) to the mutating
// endpoint and returns the object with the patch applied.
func mutate(t *testing.T, path, namespace string, raw, old []byte) map[string]any {
	t.Helper()
	e := endpoints[path]
	req := request(t, e, validPP(), nil)
	req.Namespace = namespace
	req.Object = runtime.RawExtension{Raw: raw}
	if old != nil {
		req.Operation = admissionv1.Update
		req.OldObject = runtime.RawExtension{Raw: old}
	}
	resp := e.Handler().Handle(context.Background(), req)
	if !resp.Allowed {
		t.Fatalf("mutation denied: %+v", resp.Result)
	}
	out := raw
	if len(resp.Patches) > 0 {
		ops, err := json.Marshal(resp.Patches)
		if err != nil {
			t.Fatal(err)
		}
		patch, err := jsonpatch.DecodePatch(ops)
		if err != nil {
			t.Fatal(err)
		}
		if out, err = patch.Apply(raw); err != nil {
			t.Fatal(err)
		}
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// takeID checks that labels[key] is a UUID and replaces it with "<uuid>".
func takeID(t *testing.T, obj map[string]any, key string) {
	t.Helper()
	labels, _ := obj["metadata"].(map[string]any)["labels"].(map[string]any)
	id, _ := labels[key].(string)
	if !uuidRE.MatchString(id) {
		t.Fatalf("label %s = %q, want a UUID", key, id)
	}
	labels[key] = "<uuid>"
}

func fromJSON(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestDefaultsOfAMinimalPolicy: a PropagationPolicy with only the required
// fields (and the CRD schema's defaults, which the API server sets first)
// reads back as it does from Karmada's webhook: the selector's namespace, an
// empty placement and a permanent id. (Karmada also adds a finalizer that
// its policy controller removes; we do not, see docs/karmada-webhook.md.)
func TestDefaultsOfAMinimalPolicy(t *testing.T) {
	in := `{"apiVersion":"policy.karmada.io/v1alpha1","kind":"PropagationPolicy","metadata":{"name":"web","namespace":"shop"},
		"spec":{"resourceSelectors":[{"apiVersion":"apps/v1","kind":"Deployment"}],
		"conflictResolution":"Abort","preemption":"Never","priority":0,"schedulerName":"default-scheduler"}}`
	got := mutate(t, "/mutate-propagationpolicy", "shop", []byte(in), nil)
	takeID(t, got, "propagationpolicy.karmada.io/permanent-id")
	want := fromJSON(t, `{"apiVersion":"policy.karmada.io/v1alpha1","kind":"PropagationPolicy",
		"metadata":{"name":"web","namespace":"shop","creationTimestamp":null,"labels":{"propagationpolicy.karmada.io/permanent-id":"<uuid>"}},
		"spec":{"resourceSelectors":[{"apiVersion":"apps/v1","kind":"Deployment","namespace":"shop"}],
		"placement":{},"conflictResolution":"Abort","preemption":"Never","priority":0,"schedulerName":"default-scheduler"}}`)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("defaulted policy (-want +got):\n%s", diff)
	}
}

// TestDefaults: each default Karmada sets, and what is left alone.
func TestDefaults(t *testing.T) {
	t.Run("spread constraints, division preference, grace period, ServiceImport", func(t *testing.T) {
		in := `{"apiVersion":"policy.karmada.io/v1alpha1","kind":"ClusterPropagationPolicy","metadata":{"name":"all"},
			"spec":{"resourceSelectors":[{"apiVersion":"multicluster.x-k8s.io/v1alpha1","kind":"ServiceImport"}],
			"placement":{"spreadConstraints":[{"maxGroups":2},{"spreadByLabel":"team","minGroups":2}],
			"replicaScheduling":{"replicaSchedulingType":"Divided"}},
			"failover":{"application":{"decisionConditions":{"tolerationSeconds":300},"purgeMode":"Gracefully"}}}}`
		got := mutate(t, "/mutate-clusterpropagationpolicy", "", []byte(in), nil)
		takeID(t, got, "clusterpropagationpolicy.karmada.io/permanent-id")
		spec := got["spec"].(map[string]any)
		want := fromJSON(t, `{"resourceSelectors":[{"apiVersion":"multicluster.x-k8s.io/v1alpha1","kind":"ServiceImport"}],
			"propagateDeps":true,
			"placement":{"spreadConstraints":[{"spreadByField":"cluster","maxGroups":2,"minGroups":1},{"spreadByLabel":"team","minGroups":2}],
			"replicaScheduling":{"replicaSchedulingType":"Divided","replicaDivisionPreference":"Weighted"}},
			"failover":{"application":{"decisionConditions":{"tolerationSeconds":300},"purgeMode":"Gracefully","gracePeriodSeconds":600}}}`)
		if diff := cmp.Diff(want, spec); diff != "" {
			t.Fatalf("defaulted spec (-want +got):\n%s", diff)
		}
	})
	t.Run("an update keeps the permanent id it has and gets none", func(t *testing.T) {
		in := `{"apiVersion":"policy.karmada.io/v1alpha1","kind":"PropagationPolicy","metadata":{"name":"web","namespace":"shop","labels":{"propagationpolicy.karmada.io/permanent-id":"kept"}},
			"spec":{"resourceSelectors":[{"apiVersion":"apps/v1","kind":"Deployment","namespace":"shop"}]}}`
		got := mutate(t, "/mutate-propagationpolicy", "shop", []byte(in), []byte(in))
		if id := got["metadata"].(map[string]any)["labels"].(map[string]any)["propagationpolicy.karmada.io/permanent-id"]; id != "kept" {
			t.Fatalf("permanent id = %v, want kept", id)
		}
		noID := `{"apiVersion":"policy.karmada.io/v1alpha1","kind":"PropagationPolicy","metadata":{"name":"web","namespace":"shop"},"spec":{"resourceSelectors":[]}}`
		got = mutate(t, "/mutate-propagationpolicy", "shop", []byte(noID), []byte(noID))
		if _, ok := got["metadata"].(map[string]any)["labels"]; ok {
			t.Fatalf("an update was given a permanent id: %v", got["metadata"])
		}
	})
	t.Run("override policy selectors get its namespace", func(t *testing.T) {
		in := `{"apiVersion":"policy.karmada.io/v1alpha1","kind":"OverridePolicy","metadata":{"name":"op","namespace":"shop"},
			"spec":{"resourceSelectors":[{"apiVersion":"apps/v1","kind":"Deployment"}]}}`
		got := mutate(t, "/mutate-overridepolicy", "shop", []byte(in), nil)
		sel := got["spec"].(map[string]any)["resourceSelectors"].([]any)[0].(map[string]any)
		if sel["namespace"] != "shop" {
			t.Fatalf("selector namespace = %v, want shop", sel["namespace"])
		}
	})
	t.Run("a binding gets a permanent id on create", func(t *testing.T) {
		in := string(mustJSON(t, validRB()))
		raw := fromJSON(t, in)
		delete(raw["metadata"].(map[string]any), "labels")
		got := mutate(t, "/mutate-resourcebinding", "shop", mustJSON(t, raw), nil)
		takeID(t, got, "resourcebinding.karmada.io/permanent-id")
	})
}

func TestDefaultTolerations(t *testing.T) {
	five := int64(5)
	o := Options{DefaultNotReadyTolerationSeconds: &five, DefaultUnreachableTolerationSeconds: &five}
	exists := func(key string, secs *int64) corev1.Toleration {
		return corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: secs}
	}
	cases := []struct {
		name string
		have []corev1.Toleration
		want []corev1.Toleration
	}{
		{"none", nil, []corev1.Toleration{exists(clusterv1alpha1.TaintClusterNotReady, &five), exists(clusterv1alpha1.TaintClusterUnreachable, &five)}},
		{"one of its own kept", []corev1.Toleration{exists(clusterv1alpha1.TaintClusterUnreachable, nil)}, []corev1.Toleration{exists(clusterv1alpha1.TaintClusterUnreachable, nil), exists(clusterv1alpha1.TaintClusterNotReady, &five)}},
		{"tolerating everything", []corev1.Toleration{{Operator: corev1.TolerationOpExists}}, []corev1.Toleration{{Operator: corev1.TolerationOpExists}}},
	}
	for _, c := range cases {
		p := policyv1alpha1.Placement{ClusterTolerations: c.have}
		addDefaultTolerations(&p, o)
		if d := cmp.Diff(c.want, p.ClusterTolerations); d != "" {
			t.Errorf("%s: (-want +got)\n%s", c.name, d)
		}
	}
	p := policyv1alpha1.Placement{}
	addDefaultTolerations(&p, Options{})
	if len(p.ClusterTolerations) != 0 {
		t.Errorf("without the options: %v", p.ClusterTolerations)
	}
}
