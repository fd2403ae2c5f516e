package plugins

import (
	"context"
	"testing"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
)

func TestWorkloadAffinityFilter(t *testing.T) {
	member := func(name string) *clusterv1alpha1.Cluster {
		c := &clusterv1alpha1.Cluster{}
		c.Name = name
		return c
	}
	placedOn := func(names ...string) *workv1alpha2.ResourceBindingSpec {
		s := &workv1alpha2.ResourceBindingSpec{}
		for _, n := range names {
			s.Clusters = append(s.Clusters, workv1alpha2.TargetCluster{Name: n})
		}
		return s
	}
	p := &WorkloadAffinity{}
	for _, tc := range []struct {
		name    string
		peers   *Peers
		spec    *workv1alpha2.ResourceBindingSpec
		cluster string
		pass    bool
	}{
		{"no peers: anywhere", nil, placedOn(), "m1", true},
		{"affinity, the first of its group: anywhere", &Peers{AffinityGroup: "a", AntiAffinity: map[string]bool{}}, placedOn(), "m1", true},
		{"affinity: where the group runs", &Peers{AffinityGroup: "a", Affinity: map[string]bool{"m2": true}}, placedOn(), "m2", true},
		{"affinity: not elsewhere", &Peers{AffinityGroup: "a", Affinity: map[string]bool{"m2": true}}, placedOn(), "m1", false},
		{"anti-affinity: not where the group runs", &Peers{AntiAffinityGroup: "x", AntiAffinity: map[string]bool{"m1": true}}, placedOn(), "m1", false},
		{"anti-affinity: elsewhere", &Peers{AntiAffinityGroup: "x", AntiAffinity: map[string]bool{"m1": true}}, placedOn(), "m2", true},
		{"where it runs already: kept", &Peers{AntiAffinityGroup: "x", AntiAffinity: map[string]bool{"m1": true}}, placedOn("m1"), "m1", true},
	} {
		ctx := context.Background()
		if tc.peers != nil {
			ctx = WithPeers(ctx, tc.peers)
		}
		st := p.Filter(ctx, tc.spec, member(tc.cluster))
		if st.IsSuccess() != tc.pass {
			t.Errorf("%s: %v (%s), want pass %v", tc.name, st.IsSuccess(), st.Message(), tc.pass)
		}
	}
}
