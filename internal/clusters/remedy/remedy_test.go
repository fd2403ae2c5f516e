package remedy

import (
	"fmt"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	remedyv1alpha1 "github.com/karmada-go/karmada/api/remedy/v1alpha1"
)

func match(typ string, op remedyv1alpha1.ClusterConditionOperator, status string) remedyv1alpha1.DecisionMatch {
	return remedyv1alpha1.DecisionMatch{ClusterConditionMatch: &remedyv1alpha1.ClusterConditionRequirement{
		ConditionType: remedyv1alpha1.ConditionType(typ), Operator: op, ConditionStatus: status}}
}

func TestMatches(t *testing.T) {
	dns := []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue}, {Type: "ServiceDomainNameResolutionReady", Status: metav1.ConditionFalse}}
	for _, c := range []struct {
		name    string
		matches []remedyv1alpha1.DecisionMatch
		conds   []metav1.Condition
		want    bool
	}{
		{"no matches: at once", nil, nil, true},
		{"an empty list: at once, as documented", []remedyv1alpha1.DecisionMatch{}, dns, true},
		{"Equal, met", []remedyv1alpha1.DecisionMatch{match("ServiceDomainNameResolutionReady", remedyv1alpha1.ClusterConditionEqual, "False")}, dns, true},
		{"Equal, not met", []remedyv1alpha1.DecisionMatch{match("ServiceDomainNameResolutionReady", remedyv1alpha1.ClusterConditionEqual, "True")}, dns, false},
		{"NotEqual, met", []remedyv1alpha1.DecisionMatch{match("Ready", remedyv1alpha1.ClusterConditionNotEqual, "False")}, dns, true},
		{"NotEqual, not met", []remedyv1alpha1.DecisionMatch{match("Ready", remedyv1alpha1.ClusterConditionNotEqual, "True")}, dns, false},
		{"a condition the cluster lacks meets Equal not", []remedyv1alpha1.DecisionMatch{match("Other", remedyv1alpha1.ClusterConditionEqual, "False")}, dns, false},
		{"a condition the cluster lacks meets NotEqual not", []remedyv1alpha1.DecisionMatch{match("Other", remedyv1alpha1.ClusterConditionNotEqual, "True")}, dns, false},
		{"no conditions at all", []remedyv1alpha1.DecisionMatch{match("Ready", remedyv1alpha1.ClusterConditionNotEqual, "True")}, nil, false},
		{"any one is enough", []remedyv1alpha1.DecisionMatch{match("Ready", remedyv1alpha1.ClusterConditionEqual, "False"), match("ServiceDomainNameResolutionReady", remedyv1alpha1.ClusterConditionEqual, "False")}, dns, true},
		{"a match without a condition requirement matches nothing", []remedyv1alpha1.DecisionMatch{{}}, dns, false},
	} {
		if got := Matches(c.matches, c.conds); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestActions(t *testing.T) {
	cluster := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member1"},
		Status: clusterv1alpha1.ClusterStatus{Conditions: []metav1.Condition{{Type: "ServiceDomainNameResolutionReady", Status: metav1.ConditionFalse}}}}
	dnsDown := []remedyv1alpha1.DecisionMatch{match("ServiceDomainNameResolutionReady", remedyv1alpha1.ClusterConditionEqual, "False")}
	remedy := func(name string, clusters []string, matches []remedyv1alpha1.DecisionMatch, actions ...remedyv1alpha1.RemedyAction) remedyv1alpha1.Remedy {
		r := remedyv1alpha1.Remedy{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: remedyv1alpha1.RemedySpec{DecisionMatches: matches, Actions: actions}}
		if clusters != nil {
			r.Spec.ClusterAffinity = &remedyv1alpha1.ClusterAffinity{ClusterNames: clusters}
		}
		return r
	}
	for _, c := range []struct {
		name     string
		remedies []remedyv1alpha1.Remedy
		want     []string
	}{
		{"none", nil, nil},
		{"selected by name and matching", []remedyv1alpha1.Remedy{remedy("a", []string{"member1"}, dnsDown, remedyv1alpha1.TrafficControl)}, []string{"TrafficControl"}},
		{"another cluster's", []remedyv1alpha1.Remedy{remedy("a", []string{"member2"}, dnsDown, remedyv1alpha1.TrafficControl)}, nil},
		{"an empty name list selects none", []remedyv1alpha1.Remedy{remedy("a", []string{}, dnsDown, remedyv1alpha1.TrafficControl)}, nil},
		{"every cluster without clusterAffinity", []remedyv1alpha1.Remedy{remedy("a", nil, dnsDown, remedyv1alpha1.TrafficControl)}, []string{"TrafficControl"}},
		{"not matching", []remedyv1alpha1.Remedy{remedy("a", nil, []remedyv1alpha1.DecisionMatch{match("ServiceDomainNameResolutionReady", remedyv1alpha1.ClusterConditionEqual, "True")}, remedyv1alpha1.TrafficControl)}, nil},
		{"no actions", []remedyv1alpha1.Remedy{remedy("a", nil, nil)}, nil},
		{"sorted, once each", []remedyv1alpha1.Remedy{
			remedy("a", nil, nil, "TrafficControl", "Zeta"),
			remedy("b", []string{"member1"}, dnsDown, "Alpha", "TrafficControl")}, []string{"Alpha", "TrafficControl", "Zeta"}},
	} {
		if got := Actions(c.remedies, cluster); !slices.Equal(got, c.want) || (c.want == nil && got != nil) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// The decision for one cluster among 100 Remedies (half selecting it by
// name, half every cluster; two decision matches each) and 10 conditions:
// what each reconcile of a Cluster computes.
func BenchmarkActions(b *testing.B) {
	var conds []metav1.Condition
	for i := range 10 {
		conds = append(conds, metav1.Condition{Type: fmt.Sprintf("Condition%d", i), Status: metav1.ConditionTrue})
	}
	cluster := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member7"}, Status: clusterv1alpha1.ClusterStatus{Conditions: conds}}
	var remedies []remedyv1alpha1.Remedy
	for i := range 100 {
		r := remedyv1alpha1.Remedy{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("r%d", i)}, Spec: remedyv1alpha1.RemedySpec{
			DecisionMatches: []remedyv1alpha1.DecisionMatch{match(fmt.Sprintf("Condition%d", i%10), remedyv1alpha1.ClusterConditionEqual, "False"),
				match(fmt.Sprintf("Condition%d", (i+1)%10), remedyv1alpha1.ClusterConditionNotEqual, "False")},
			Actions: []remedyv1alpha1.RemedyAction{remedyv1alpha1.TrafficControl}}}
		if i%2 == 0 {
			r.Spec.ClusterAffinity = &remedyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1", "member7", "member9"}}
		}
		remedies = append(remedies, r)
	}
	b.ReportAllocs()
	for b.Loop() {
		if got := Actions(remedies, cluster); len(got) != 1 {
			b.Fatalf("actions %v", got)
		}
	}
}
