package clusterready

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
)

func TestPlacementChanged(t *testing.T) {
	base := clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "m1"}}
	base.Status.Conditions = []metav1.Condition{{Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionTrue}}
	base.Status.ResourceSummary = &clusterv1alpha1.ResourceSummary{}
	base.Status.APIEnablements = []clusterv1alpha1.APIEnablement{{GroupVersion: "apps/v1"}}
	change := func(f func(c *clusterv1alpha1.Cluster)) *clusterv1alpha1.Cluster {
		c := base.DeepCopy()
		f(c)
		return c
	}
	cases := []struct {
		name string
		new  *clusterv1alpha1.Cluster
		want bool
	}{
		{"resource summary only", change(func(c *clusterv1alpha1.Cluster) {
			c.Status.ResourceSummary.Allocated = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3")}
		}), false},
		{"node summary only", change(func(c *clusterv1alpha1.Cluster) { c.Status.NodeSummary = &clusterv1alpha1.NodeSummary{TotalNum: 3} }), false},
		{"taint", change(func(c *clusterv1alpha1.Cluster) {
			c.Spec.Taints = []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}}
		}), true},
		{"label", change(func(c *clusterv1alpha1.Cluster) { c.Labels = map[string]string{"tier": "gold"} }), true},
		{"not ready", change(func(c *clusterv1alpha1.Cluster) { c.Status.Conditions[0].Status = metav1.ConditionFalse }), true},
		{"APIs", change(func(c *clusterv1alpha1.Cluster) { c.Status.APIEnablements = nil }), true},
		{"first summary", change(func(c *clusterv1alpha1.Cluster) { c.Status.ResourceSummary = nil }), true},
	}
	for _, c := range cases {
		if got := PlacementChanged(&base, c.new); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
