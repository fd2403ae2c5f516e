package clusteraffinity

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
)

func TestExplain(t *testing.T) {
	c := &clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "member1", Labels: map[string]string{"env": "prod"}},
		Spec:       clusterv1alpha1.ClusterSpec{Provider: "aws", Region: "us-east-1", Zones: []string{"us-east-1a", "us-east-1b"}},
	}
	field := func(key string, op corev1.NodeSelectorOperator, vals ...string) *policyv1alpha1.FieldSelector {
		return &policyv1alpha1.FieldSelector{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: key, Operator: op, Values: vals}}}
	}
	cases := []struct {
		name    string
		a       *policyv1alpha1.ClusterAffinity
		want    bool
		wantWhy string
	}{
		{"nil selects all", nil, true, ""},
		{"empty selects all", &policyv1alpha1.ClusterAffinity{}, true, ""},
		{"by name", &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2", "member1"}}, true, ""},
		{"not named", &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2"}}, false, "clusterNames"},
		{"excluded wins over named", &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}, Exclude: []string{"member1"}}, false, "excluded"},
		{"labels", &policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}}, true, ""},
		{"other labels", &policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "dev"}}}, false, "labelSelector"},
		{"region in", &policyv1alpha1.ClusterAffinity{FieldSelector: field(RegionField, corev1.NodeSelectorOpIn, "us-east-1")}, true, ""},
		{"region not in", &policyv1alpha1.ClusterAffinity{FieldSelector: field(RegionField, corev1.NodeSelectorOpNotIn, "us-east-1")}, false, "region"},
		{"any zone in", &policyv1alpha1.ClusterAffinity{FieldSelector: field(ZoneField, corev1.NodeSelectorOpIn, "us-east-1b")}, true, ""},
		{"provider exists", &policyv1alpha1.ClusterAffinity{FieldSelector: field(ProviderField, corev1.NodeSelectorOpExists)}, true, ""},
		{"provider does not exist", &policyv1alpha1.ClusterAffinity{FieldSelector: field(ProviderField, corev1.NodeSelectorOpDoesNotExist)}, false, "provider"},
		{"unknown field", &policyv1alpha1.ClusterAffinity{FieldSelector: field("country", corev1.NodeSelectorOpIn, "x")}, false, "not one of provider, region, zone"},
		{"all criteria together", &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}, FieldSelector: field(ProviderField, corev1.NodeSelectorOpIn, "aws")}, true, ""},
	}
	for _, tc := range cases {
		got, why := Explain(tc.a, c)
		if got != tc.want || !strings.Contains(why, tc.wantWhy) {
			t.Errorf("%s: %v %q, want %v with %q", tc.name, got, why, tc.want, tc.wantWhy)
		}
	}
}
