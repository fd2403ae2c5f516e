package plugins

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/scheduler/framework"
)

func cluster(name string, taints []corev1.Taint, apis ...string) *clusterv1alpha1.Cluster {
	c := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: clusterv1alpha1.ClusterSpec{Taints: taints}}
	for _, a := range apis {
		gv, kind, _ := strings.Cut(a, ":")
		c.Status.APIEnablements = append(c.Status.APIEnablements, clusterv1alpha1.APIEnablement{GroupVersion: gv, Resources: []clusterv1alpha1.APIResource{{Name: strings.ToLower(kind) + "s", Kind: kind}}})
	}
	return c
}

func binding(p *policyv1alpha1.Placement) *workv1alpha2.ResourceBindingSpec {
	return &workv1alpha2.ResourceBindingSpec{Resource: workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "d"}, Placement: p}
}

func evicting(from string) *workv1alpha2.ResourceBindingSpec {
	b := binding(nil)
	b.GracefulEvictionTasks = []workv1alpha2.GracefulEvictionTask{{FromCluster: from}}
	return b
}

func placedOn(name string) *workv1alpha2.ResourceBindingSpec {
	b := binding(nil)
	b.Clusters = []workv1alpha2.TargetCluster{{Name: name}}
	return b
}

func TestFilters(t *testing.T) {
	fw, err := framework.New(NewInTreeRegistry(), []string{"*"})
	if err != nil {
		t.Fatal(err)
	}
	notReady := corev1.Taint{Key: "cluster.karmada.io/not-ready", Effect: corev1.TaintEffectNoSchedule}
	prefer := corev1.Taint{Key: "soft", Effect: corev1.TaintEffectPreferNoSchedule}
	cases := []struct {
		name       string
		spec       *workv1alpha2.ResourceBindingSpec
		cluster    *clusterv1alpha1.Cluster
		wantPlugin string
		wantReason string
	}{
		{"passes", binding(nil), cluster("m1", nil, "apps/v1:Deployment"), "", ""},
		{"API not served", binding(nil), cluster("m1", nil, "v1:ConfigMap"), "APIEnablement", "does not serve apps/v1 Deployment"},
		{"not in clusterNames", binding(&policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"m2"}}}), cluster("m1", nil, "apps/v1:Deployment"), "ClusterAffinity", "clusterNames"},
		{"untolerated taint", binding(nil), cluster("m1", []corev1.Taint{notReady}, "apps/v1:Deployment"), "TaintToleration", "cluster.karmada.io/not-ready:NoSchedule"},
		{"tolerated taint", binding(&policyv1alpha1.Placement{ClusterTolerations: []corev1.Toleration{{Key: "cluster.karmada.io/not-ready", Operator: corev1.TolerationOpExists}}}), cluster("m1", []corev1.Taint{notReady}, "apps/v1:Deployment"), "", ""},
		{"untolerated NoExecute taint", binding(nil), cluster("m1", []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoExecute}}, "apps/v1:Deployment"), "TaintToleration", "k:NoExecute"},
		{"taints keep no binding off a cluster it is on", placedOn("m1"), cluster("m1", []corev1.Taint{notReady, {Key: "k", Effect: corev1.TaintEffectNoExecute}}, "apps/v1:Deployment"), "", ""},
		{"placed elsewhere", placedOn("m2"), cluster("m1", []corev1.Taint{notReady}, "apps/v1:Deployment"), "TaintToleration", "not-ready"},
		{"PreferNoSchedule never filters", binding(nil), cluster("m1", []corev1.Taint{prefer}, "apps/v1:Deployment"), "", ""},
		{"no region to spread by", binding(&policyv1alpha1.Placement{SpreadConstraints: []policyv1alpha1.SpreadConstraint{{SpreadByField: policyv1alpha1.SpreadByFieldRegion, MinGroups: 1}}}), cluster("m1", nil, "apps/v1:Deployment"), "SpreadConstraint", "no region"},
		{"no label to spread by", binding(&policyv1alpha1.Placement{SpreadConstraints: []policyv1alpha1.SpreadConstraint{{SpreadByLabel: "tier", MinGroups: 1}}}), cluster("m1", nil, "apps/v1:Deployment"), "SpreadConstraint", "no label tier"},
		{"spread by cluster needs nothing", binding(&policyv1alpha1.Placement{SpreadConstraints: []policyv1alpha1.SpreadConstraint{{SpreadByField: policyv1alpha1.SpreadByFieldCluster, MaxGroups: 1}}}), cluster("m1", nil, "apps/v1:Deployment"), "", ""},
		{"being evicted", evicting("m1"), cluster("m1", nil, "apps/v1:Deployment"), "ClusterEviction", "evicted"},
		{"eviction elsewhere", evicting("m2"), cluster("m1", nil, "apps/v1:Deployment"), "", ""},
	}
	for _, c := range cases {
		st := fw.RunFilters(context.Background(), c.spec, c.cluster)
		if st.Plugin() != c.wantPlugin || !strings.Contains(st.Message(), c.wantReason) {
			t.Errorf("%s: plugin %q reason %q, want %q with %q", c.name, st.Plugin(), st.Message(), c.wantPlugin, c.wantReason)
		}
	}

	off, err := framework.New(NewInTreeRegistry(), []string{"*", "-TaintToleration"})
	if err != nil {
		t.Fatal(err)
	}
	if st := off.RunFilters(context.Background(), binding(nil), cluster("m1", []corev1.Taint{notReady}, "apps/v1:Deployment")); !st.IsSuccess() {
		t.Errorf("a disabled plugin still filtered: %s", st.Message())
	}
	if _, err := framework.New(NewInTreeRegistry(), []string{"Bogus"}); err == nil || !strings.Contains(err.Error(), "--plugins") {
		t.Errorf("an unknown plugin should be refused naming --plugins, got %v", err)
	}
}

func TestScores(t *testing.T) {
	fw, err := framework.New(NewInTreeRegistry(), []string{"*"})
	if err != nil {
		t.Fatal(err)
	}
	spec := binding(nil)
	spec.Clusters = []workv1alpha2.TargetCluster{{Name: "m2", Replicas: 1}}
	got, st := fw.RunScores(context.Background(), spec, []*clusterv1alpha1.Cluster{cluster("m1", nil), cluster("m2", nil)})
	if !st.IsSuccess() {
		t.Fatal(st.Message())
	}
	if len(got.Plugins) != 1 || got.Plugins[0] != "ClusterLocality" {
		t.Fatalf("score plugins %v, want [ClusterLocality]", got.Plugins)
	}
	if got.Total("m1") != 0 || got.Total("m2") != 100 {
		t.Errorf("scores m1=%d m2=%d, want 0 and 100 (the binding is on m2)", got.Total("m1"), got.Total("m2"))
	}
}
