package core

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
)

// regional returns a candidate in a region with a score and room.
func regional(name, region string, score int64, available int32) Candidate {
	return Candidate{Cluster: &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: clusterv1alpha1.ClusterSpec{Region: region}},
		Score: score, Available: available}
}

func names(cs []Candidate) string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name())
	}
	return strings.Join(out, ",")
}

func TestSelectBySpread(t *testing.T) {
	fleet := []Candidate{
		regional("a1", "east", 0, 10), regional("a2", "east", 100, 5),
		regional("b1", "west", 0, 30),
		regional("c1", "north", 0, 1),
	}
	region := func(lo, hi int) policyv1alpha1.SpreadConstraint {
		return policyv1alpha1.SpreadConstraint{SpreadByField: policyv1alpha1.SpreadByFieldRegion, MinGroups: lo, MaxGroups: hi}
	}
	clusterSC := func(lo, hi int) policyv1alpha1.SpreadConstraint {
		return policyv1alpha1.SpreadConstraint{SpreadByField: policyv1alpha1.SpreadByFieldCluster, MinGroups: lo, MaxGroups: hi}
	}
	cases := []struct {
		name    string
		scs     []policyv1alpha1.SpreadConstraint
		needed  int32
		want    string
		wantErr string
	}{
		{"none: all", nil, 0, "a1,a2,b1,c1", ""},
		{"two regions, duplicated: the best two (east has the top score)", []policyv1alpha1.SpreadConstraint{region(2, 2)}, 0, "a1,a2,b1", ""},
		{"one region at most, divided: the best that fits", []policyv1alpha1.SpreadConstraint{region(1, 1)}, 10, "a1,a2", ""},
		{"min 1 max 3, divided: add regions until it fits", []policyv1alpha1.SpreadConstraint{region(1, 3)}, 40, "a1,a2,b1", ""},
		{"too few regions", []policyv1alpha1.SpreadConstraint{region(4, 4)}, 0, "", "at least 4 groups but the feasible clusters are in 3 (east, north, west)"},
		{"two clusters at most: best score, then room", []policyv1alpha1.SpreadConstraint{clusterSC(1, 2)}, 0, "a2,b1", ""},
		{"two regions and two clusters: one per region", []policyv1alpha1.SpreadConstraint{region(2, 2), clusterSC(2, 2)}, 0, "a2,b1", ""},
		{"two regions and one cluster: one per region, as in Karmada", []policyv1alpha1.SpreadConstraint{region(2, 2), clusterSC(1, 1)}, 0, "a2,b1", ""},
		{"one region and one cluster", []policyv1alpha1.SpreadConstraint{region(1, 1), clusterSC(1, 1)}, 0, "a2", ""},
		{"too few clusters", []policyv1alpha1.SpreadConstraint{clusterSC(5, 5)}, 0, "", "at least 5 clusters"},
		{"by label", []policyv1alpha1.SpreadConstraint{{SpreadByLabel: "tier", MinGroups: 1, MaxGroups: 1}}, 0, "", "feasible clusters are in 0"},
	}
	for _, c := range cases {
		got, dropped, err := SelectBySpread(c.scs, fleet, c.needed)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%s: error %v, want %q", c.name, err, c.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if names(got) != c.want {
			t.Errorf("%s: %s, want %s", c.name, names(got), c.want)
		}
		for _, f := range fleet {
			if !strings.Contains(","+c.want+",", ","+f.Name()+",") && dropped[f.Name()] == "" {
				t.Errorf("%s: %s left out without a reason", c.name, f.Name())
			}
		}
	}
}
