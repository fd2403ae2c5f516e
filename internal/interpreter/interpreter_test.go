package interpreter

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
)

// Every built-in entry defines at least one operation, and the operation
// list is Karmada's eight (InterpretComponent since 1.16) plus Prune.
func TestBuiltinRegistry(t *testing.T) {
	if len(Operations) != 9 {
		t.Errorf("%d operations, want 9", len(Operations))
	}
	for gk, k := range builtin {
		any := false
		for _, op := range Operations {
			any = any || k.Defines(op)
		}
		if !any {
			t.Errorf("%s has an entry with no operation", gk)
		}
	}
	for _, c := range []struct {
		gk   schema.GroupKind
		want bool
	}{
		{schema.GroupKind{Group: "apps", Kind: "Deployment"}, true},
		{schema.GroupKind{Group: "batch", Kind: "Job"}, true},
		{schema.GroupKind{Kind: "Pod"}, true},
		{schema.GroupKind{Group: "apps", Kind: "DaemonSet"}, false},
		{schema.GroupKind{Kind: "ConfigMap"}, false},
	} {
		if got := Default.HasReplicas(c.gk); got != c.want {
			t.Errorf("Default.HasReplicas(%s) = %v, want %v", c.gk, got, c.want)
		}
	}
}

// A layer in front of the built-in registry answers only the operations it
// defines; the others still come from the registry, and a kind no layer
// knows gets the defaults.
func TestLayerPrecedenceByOperation(t *testing.T) {
	deploy := obj(t, `
apiVersion: apps/v1
kind: Deployment
metadata: {name: d, namespace: shop, generation: 1}
spec: {replicas: 3, template: {spec: {containers: [{name: c, image: i}]}}}
status: {observedGeneration: 1, updatedReplicas: 3, availableReplicas: 3}
`)
	deployGK := schema.GroupKind{Group: "apps", Kind: "Deployment"}
	custom := Registry{deployGK: {
		Health: func(*unstructured.Unstructured) (workv1alpha1.ResourceHealth, error) {
			return workv1alpha1.ResourceUnhealthy, nil
		},
	}}
	in := New(custom)
	if got, _ := in.Health(deploy); got != workv1alpha1.ResourceUnhealthy {
		t.Errorf("health %s: the layer's InterpretHealth should win", got)
	}
	if got, _ := Default.Health(deploy); got != workv1alpha1.ResourceHealthy {
		t.Errorf("built-in health %s, want Healthy", got)
	}
	if n, _, err := in.Replicas(deploy); err != nil || n != 3 {
		t.Errorf("replicas %d (%v): InterpretReplica should still come from the registry", n, err)
	}
	if got := in.Answers(deployGK, OpInterpretHealth); got != 0 {
		t.Errorf("InterpretHealth answered by layer %d, want 0 (the custom one)", got)
	}
	if got := in.Answers(deployGK, OpInterpretReplica); got != 1 {
		t.Errorf("InterpretReplica answered by layer %d, want 1 (the built-in registry)", got)
	}
	if got := in.Answers(deployGK, OpRetain); got != -1 {
		t.Errorf("Retain answered by layer %d, want -1 (the default)", got)
	}

	cm := obj(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: shop}, data: {a: b}}`)
	if n, req, err := in.Replicas(cm); n != 0 || req != nil || err != nil {
		t.Errorf("ConfigMap replicas %d %v %v, want none", n, req, err)
	}
	revised, err := in.ReviseReplicas(cm, 5)
	if err != nil || !cmp.Equal(revised.Object, cm.Object) || revised == cm {
		t.Errorf("ConfigMap revised to %v (%v), want an unchanged copy", revised.Object, err)
	}
	kept, err := in.Retain(cm, obj(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: c, labels: {member: x}}}`))
	if err != nil || !cmp.Equal(kept.Object, cm.Object) {
		t.Errorf("default Retain changed desired: %v (%v)", kept.Object, err)
	}
	agg, err := in.AggregateStatus(cm, []workv1alpha2.AggregatedStatusItem{{ClusterName: "m1"}})
	if err != nil || !cmp.Equal(agg.Object, cm.Object) {
		t.Errorf("default AggregateStatus changed the template: %v (%v)", agg.Object, err)
	}
	if h, _ := in.Health(cm); h != workv1alpha1.ResourceUnknownHealth {
		t.Errorf("default health %s, want Unknown", h)
	}
	if deps, err := in.Dependencies(cm); deps != nil || err != nil {
		t.Errorf("default dependencies %v (%v), want none", deps, err)
	}
	if in.Unobserved(cm) {
		t.Error("a ConfigMap has no observedGeneration to wait for")
	}
}

func TestPodDependencies(t *testing.T) {
	d := obj(t, `
apiVersion: apps/v1
kind: Deployment
metadata: {name: d, namespace: shop}
spec:
  template:
    spec:
      serviceAccountName: runner
      imagePullSecrets: [{name: pull}]
      volumes:
      - {name: a, configMap: {name: cfg}}
      - {name: b, secret: {secretName: tls}}
      - {name: c, persistentVolumeClaim: {claimName: data}}
      - {name: d, projected: {sources: [{configMap: {name: extra}}, {secret: {name: tls}}]}}
      initContainers: [{name: i, image: x, envFrom: [{secretRef: {name: init-env}}]}]
      containers:
      - name: c
        image: x
        envFrom: [{configMapRef: {name: cfg}}]
        env: [{name: K, valueFrom: {secretKeyRef: {name: key, key: k}}}, {name: P, value: plain}]
`)
	got, err := Default.Dependencies(d)
	if err != nil {
		t.Fatal(err)
	}
	dep := func(kind, name string) DependentObject {
		return DependentObject{APIVersion: "v1", Kind: kind, Namespace: "shop", Name: name}
	}
	// Karmada's order: ConfigMaps, Secrets, ServiceAccounts, PVCs.
	want := []DependentObject{dep("ConfigMap", "cfg"), dep("ConfigMap", "extra"),
		dep("Secret", "init-env"), dep("Secret", "key"), dep("Secret", "pull"), dep("Secret", "tls"), dep("ServiceAccount", "runner"), dep("PersistentVolumeClaim", "data")}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("dependencies (-want,+got):\n%s", diff)
	}
	plain := obj(t, `{apiVersion: v1, kind: Pod, metadata: {name: p, namespace: shop}, spec: {serviceAccountName: default, containers: [{name: c, image: x}]}}`)
	if got, err := Default.Dependencies(plain); err != nil || len(got) != 0 {
		t.Errorf("a pod with nothing to depend on: %v (%v)", got, err)
	}
}
