package algorithm

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
)

func TestDeselected(t *testing.T) {
	cluster := func(name string, labels map[string]string, taints ...corev1.Taint) clusterv1alpha1.Cluster {
		return clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: clusterv1alpha1.ClusterSpec{Region: "eu", Taints: taints}}
	}
	leaving := cluster("m4", nil)
	now := metav1.Now()
	leaving.DeletionTimestamp = &now
	clusters := []clusterv1alpha1.Cluster{
		cluster("m1", map[string]string{"env": "prod"}),
		cluster("m2", map[string]string{"env": "test"}),
		// A taint does not deselect: it is not the user's selection.
		cluster("m3", map[string]string{"env": "prod"}, corev1.Taint{Key: "cluster.karmada.io/not-ready", Effect: corev1.TaintEffectNoExecute}),
		leaving,
	}
	placed := []workv1alpha2.TargetCluster{{Name: "m1"}, {Name: "m2"}, {Name: "m3"}, {Name: "m4"}, {Name: "gone"}}
	prod := &policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}}
	for _, c := range []struct {
		name      string
		placement *policyv1alpha1.Placement
		want      []string
	}{
		{"no placement", nil, nil},
		{"no affinity", &policyv1alpha1.Placement{}, nil},
		{"labels", &policyv1alpha1.Placement{ClusterAffinity: prod}, []string{"m2"}},
		{"names", &policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"m2", "m3"}}}, []string{"m1"}},
		{"exclude", &policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{Exclude: []string{"m3"}}}, []string{"m3"}},
		{"every cluster still selected", &policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{Exclude: []string{"other"}}}, nil},
	} {
		spec := &workv1alpha2.ResourceBindingSpec{Placement: c.placement, Clusters: placed}
		if d := cmp.Diff(c.want, Deselected(spec, clusters, nil)); d != "" {
			t.Errorf("%s (-want,+got):\n%s", c.name, d)
		}
	}
}

// A binding placed in an overflow group is not deselected by its primary
// group's affinity: any group of the term still selects the cluster. (Before
// overflow groups counted here, every reconcile of such a binding would
// have scheduled it again.)
func TestDeselectedCountsOverflowGroups(t *testing.T) {
	clusters := []clusterv1alpha1.Cluster{{ObjectMeta: metav1.ObjectMeta{Name: "idc"}}, {ObjectMeta: metav1.ObjectMeta{Name: "cloud"}}, {ObjectMeta: metav1.ObjectMeta{Name: "gone-from-groups"}}}
	dynamic := &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided,
		WeightPreference: &policyv1alpha1.ClusterPreferences{DynamicWeight: policyv1alpha1.DynamicWeightByAvailableReplicas}}
	spec := &workv1alpha2.ResourceBindingSpec{
		Replicas: 6,
		Placement: &policyv1alpha1.Placement{ReplicaScheduling: dynamic, ClusterAffinities: []policyv1alpha1.ClusterAffinityTerm{{
			AffinityName:       "on-prem",
			ClusterAffinity:    policyv1alpha1.ClusterAffinity{ClusterNames: []string{"idc"}},
			OverflowAffinities: []policyv1alpha1.OverflowAffinityTerm{{AffinityName: "cloud", ClusterAffinity: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"cloud"}}}},
		}}},
		Clusters: []workv1alpha2.TargetCluster{{Name: "idc", Replicas: 3}, {Name: "cloud", Replicas: 2}, {Name: "gone-from-groups", Replicas: 1}},
	}
	effective := EffectiveSpec(spec, "on-prem")
	tiers := OverflowTiers(spec, AffinityTerm(spec, "on-prem"))
	if d := cmp.Diff([]string{"gone-from-groups"}, Deselected(effective, clusters, tiers)); d != "" {
		t.Errorf("with the overflow groups (-want,+got):\n%s", d)
	}
	if d := cmp.Diff([]string{"cloud", "gone-from-groups"}, Deselected(effective, clusters, nil)); d != "" {
		t.Errorf("the primary group alone (-want,+got):\n%s", d)
	}
}
