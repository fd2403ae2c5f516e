package algorithm

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/scheduler/framework"
	"github.com/karmada-go/karmada/internal/scheduler/plugins"
	"github.com/karmada-go/karmada/internal/scheduler/schedulertest"
)

func TestSchedule(t *testing.T) {
	fw, err := framework.New(plugins.NewInTreeRegistry(), []string{"*"})
	if err != nil {
		t.Fatal(err)
	}
	cordoned := corev1.Taint{Key: "cluster.karmada.io/unschedulable", Effect: corev1.TaintEffectNoSchedule}
	fleet := []clusterv1alpha1.Cluster{schedulertest.Member("m1", "east", 10, cordoned), schedulertest.Member("m2", "east", 10), schedulertest.Member("m3", "west", 20), schedulertest.Member("m4", "west", 0)}
	dynamic := &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided,
		ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted,
		WeightPreference:          &policyv1alpha1.ClusterPreferences{DynamicWeight: policyv1alpha1.DynamicWeightByAvailableReplicas}}
	names := func(n ...string) *policyv1alpha1.ClusterAffinity {
		return &policyv1alpha1.ClusterAffinity{ClusterNames: n}
	}
	cases := []struct {
		name         string
		spec         *workv1alpha2.ResourceBindingSpec
		want         string
		wantAffinity string
		wantErr      string
	}{
		{"duplicated skips the cordoned cluster", schedulertest.Spec(2, nil), "m2=2,m3=2,m4=2", "", ""},
		{"dynamic weights follow free cpu; a full cluster is left out", schedulertest.Spec(9, &policyv1alpha1.Placement{ReplicaScheduling: dynamic}), "m2=3,m3=6", "", ""},
		{"affinity groups fall through past a cordoned primary", schedulertest.Spec(3, &policyv1alpha1.Placement{ClusterAffinities: []policyv1alpha1.ClusterAffinityTerm{
			{AffinityName: "primary", ClusterAffinity: *names("m1")}, {AffinityName: "backup", ClusterAffinity: *names("m3")}}}), "m3=3", "backup", ""},
		{"the first group that fits wins", schedulertest.Spec(3, &policyv1alpha1.Placement{ClusterAffinities: []policyv1alpha1.ClusterAffinityTerm{
			{AffinityName: "primary", ClusterAffinity: *names("m2")}, {AffinityName: "backup", ClusterAffinity: *names("m3")}}}), "m2=3", "primary", ""},
		{"no group fits", schedulertest.Spec(3, &policyv1alpha1.Placement{ClusterAffinities: []policyv1alpha1.ClusterAffinityTerm{
			{AffinityName: "a", ClusterAffinity: *names("m1")}, {AffinityName: "b", ClusterAffinity: *names("m9")}}}), "", "", "clusterAffinities[a]"},
		{"two regions", schedulertest.Spec(4, &policyv1alpha1.Placement{ReplicaScheduling: dynamic, SpreadConstraints: []policyv1alpha1.SpreadConstraint{
			{SpreadByField: policyv1alpha1.SpreadByFieldRegion, MinGroups: 2, MaxGroups: 2}}}), "m2=1,m3=3", "", ""},
		{"more than the fleet can hold", schedulertest.Spec(31, &policyv1alpha1.Placement{ReplicaScheduling: dynamic}), "", "", "Clusters available replicas 30 are not enough to schedule."},
	}
	for _, c := range cases {
		r := Schedule(context.Background(), fw, c.spec, fleet)
		check(t, c.name, r, c.want, c.wantAffinity, c.wantErr)
	}
}

// check compares a scheduling result with what is wanted: an error
// containing wantErr (carried by the explanation too), or the targets and
// affinity term.
func check(t *testing.T, name string, r Result, want, wantAffinity, wantErr string) {
	t.Helper()
	if wantErr != "" {
		if r.Err == nil || !strings.Contains(r.Err.Error(), wantErr) {
			t.Errorf("%s: error %v, want %q", name, r.Err, wantErr)
			return
		}
		if r.Explanation == nil || r.Explanation.Message != r.Err.Error() {
			t.Errorf("%s: the explanation does not carry the error", name)
		}
		return
	}
	if r.Err != nil {
		t.Errorf("%s: %v", name, r.Err)
		return
	}
	if got := schedulertest.Targets(r.Targets); got != want || r.AffinityName != wantAffinity {
		t.Errorf("%s: %s (affinity %q), want %s (%q)", name, got, r.AffinityName, want, wantAffinity)
	}
}

// With clusterAffinities, a binding placed by a later term is scheduled
// from that term on (it stays, or falls further), as in Karmada; only a
// fresh scheduling starts at the first term again.
func TestScheduleFromTheObservedTerm(t *testing.T) {
	fw, err := framework.New(plugins.NewInTreeRegistry(), []string{"*"})
	if err != nil {
		t.Fatal(err)
	}
	fleet := []clusterv1alpha1.Cluster{schedulertest.Member("m1", "east", 10), schedulertest.Member("m2", "east", 10), schedulertest.Member("m3", "west", 10)}
	terms := &policyv1alpha1.Placement{ClusterAffinities: []policyv1alpha1.ClusterAffinityTerm{
		{AffinityName: "primary", ClusterAffinity: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"m1"}}},
		{AffinityName: "backup", ClusterAffinity: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"m2"}}},
		{AffinityName: "last", ClusterAffinity: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"m3"}}},
	}}
	for _, c := range []struct{ from, want, wantAffinity string }{
		{"", "m1=2", "primary"},
		{"backup", "m2=2", "backup"},
		{"last", "m3=2", "last"},
		{"gone", "m1=2", "primary"},
	} {
		check(t, "from "+c.from, ScheduleFrom(context.Background(), fw, schedulertest.Spec(2, terms), fleet, c.from), c.want, c.wantAffinity, "")
	}
	// The observed term fits no more: the next one.
	down := []clusterv1alpha1.Cluster{schedulertest.Member("m1", "east", 10), schedulertest.Member("m3", "west", 10)}
	check(t, "backup gone", ScheduleFrom(context.Background(), fw, schedulertest.Spec(2, terms), down, "backup"), "m3=2", "last", "")
}

// Spread constraints as Karmada's own checks use them: clusters of which
// two have a region, a Duplicated workload spread over exactly two regions
// and exactly one cluster goes to both regions (a cluster constraint never
// leaves a chosen group without a cluster); over one region, to one cluster.
func TestScheduleSpreadByRegionAndCluster(t *testing.T) {
	fw, err := framework.New(plugins.NewInTreeRegistry(), []string{"*"})
	if err != nil {
		t.Fatal(err)
	}
	fleet := []clusterv1alpha1.Cluster{schedulertest.Member("member1", "2", 10), schedulertest.Member("member2", "1", 10), schedulertest.Member("member3", "", 10)}
	spread := func(clusters, regions int) *policyv1alpha1.Placement {
		return &policyv1alpha1.Placement{
			ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDuplicated},
			SpreadConstraints: []policyv1alpha1.SpreadConstraint{
				{SpreadByField: policyv1alpha1.SpreadByFieldCluster, MinGroups: clusters, MaxGroups: clusters},
				{SpreadByField: policyv1alpha1.SpreadByFieldRegion, MinGroups: regions, MaxGroups: regions},
			}}
	}
	check(t, "two regions, one cluster", Schedule(context.Background(), fw, schedulertest.Spec(2, spread(1, 2)), fleet), "member1=2,member2=2", "", "")
	r := Schedule(context.Background(), fw, schedulertest.Spec(2, spread(1, 1)), fleet)
	if r.Err != nil || len(r.Targets) != 1 || r.Targets[0].Name == "member3" {
		t.Errorf("one region, one cluster: %s (%v), want one cluster with a region", schedulertest.Targets(r.Targets), r.Err)
	}
	check(t, "three regions", Schedule(context.Background(), fw, schedulertest.Spec(2, spread(1, 3)), fleet), "", "", "at least 3 groups")
}

func TestScheduleExplains(t *testing.T) {
	fw, err := framework.New(plugins.NewInTreeRegistry(), []string{"*"})
	if err != nil {
		t.Fatal(err)
	}
	cordoned := corev1.Taint{Key: "cluster.karmada.io/unschedulable", Effect: corev1.TaintEffectNoSchedule}
	fleet := []clusterv1alpha1.Cluster{schedulertest.Member("m1", "east", 10, cordoned), schedulertest.Member("m2", "east", 10), schedulertest.Member("m3", "west", 20)}
	s := schedulertest.Spec(2, &policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{Exclude: []string{"m3"}}})
	s.Clusters = []workv1alpha2.TargetCluster{{Name: "m2", Replicas: 2}}
	r := Schedule(context.Background(), fw, s, fleet)
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	ex := r.Explanation.Clusters
	if len(ex) != 3 || ex[0].Name != "m2" || !ex[0].Selected || ex[0].Replicas != 2 || ex[0].Score != 100 {
		t.Fatalf("first entry %+v, want m2 selected with 2 replicas and ClusterLocality 100", ex[0])
	}
	if ex[1].Name != "m1" || ex[1].Feasible || ex[1].Plugin != "TaintToleration" || !strings.Contains(ex[1].Reason, "unschedulable") {
		t.Errorf("m1: %+v, want filtered by TaintToleration", ex[1])
	}
	if ex[2].Name != "m3" || ex[2].Plugin != "ClusterAffinity" || ex[2].Reason != "cluster is excluded" {
		t.Errorf("m3: %+v, want filtered by ClusterAffinity as excluded", ex[2])
	}
	if ex[0].AvailableReplicas == nil || *ex[0].AvailableReplicas != 12 {
		t.Errorf("m2 available %v, want 12 (10 free + the 2 it runs)", ex[0].AvailableReplicas)
	}

	// Explanations are bounded.
	var many []clusterv1alpha1.Cluster
	for i := 0; i < MaxExplained+10; i++ {
		many = append(many, schedulertest.Member("c"+strconv.Itoa(i), "east", 1))
	}
	r = Schedule(context.Background(), fw, schedulertest.Spec(1, nil), many)
	if len(r.Explanation.Clusters) != MaxExplained || r.Explanation.Omitted != 10 {
		t.Errorf("%d explained, %d omitted; want %d and 10", len(r.Explanation.Clusters), r.Explanation.Omitted, MaxExplained)
	}
}

// verdict is a filter plugin that answers code for the cluster named bad.
type verdict struct {
	code framework.Code
	bad  string
}

func (verdict) Name() string { return "Verdict" }

func (v verdict) Filter(_ context.Context, _ *workv1alpha2.ResourceBindingSpec, c *clusterv1alpha1.Cluster) *framework.Status {
	if c.Name == v.bad {
		return framework.NewStatus(v.code, "verdict on "+c.Name)
	}
	return nil
}

// A plugin's Error stops the cycle with a PluginError (retried, placement
// kept); its Unschedulable only rules the cluster out.
func TestScheduleHonoursStatusCodes(t *testing.T) {
	clusters := []clusterv1alpha1.Cluster{schedulertest.Member("m1", "r", 10), schedulertest.Member("m2", "r", 10)}
	for _, c := range []struct {
		code       framework.Code
		wantPlugin bool
		want       string
	}{
		{framework.Unschedulable, false, "m1=1"},
		{framework.Error, true, ""},
	} {
		v := verdict{code: c.code, bad: "m2"}
		fw, err := framework.New(framework.Registry{"Verdict": func() (framework.Plugin, error) { return v, nil }}, []string{"*"})
		if err != nil {
			t.Fatal(err)
		}
		res := Schedule(context.Background(), fw, schedulertest.Spec(1, &policyv1alpha1.Placement{}), clusters)
		var pe *PluginError
		if got := errors.As(res.Err, &pe); got != c.wantPlugin {
			t.Errorf("code %d: PluginError %v (%v), want %v", c.code, got, res.Err, c.wantPlugin)
			continue
		}
		if pe != nil && (pe.Plugin != "Verdict" || !strings.Contains(pe.Message, "m2")) {
			t.Errorf("code %d: %+v, want the plugin and its message", c.code, pe)
		}
		if got := schedulertest.Targets(res.Targets); got != c.want {
			t.Errorf("code %d: targets %q, want %q", c.code, got, c.want)
		}
	}
}

// TestTaintsMoveNothing: a cluster that turns NotReady or is cordoned keeps
// the workloads placed on it, whatever the placement; only new placements
// avoid it.
func TestTaintsMoveNothing(t *testing.T) {
	fw, err := framework.New(plugins.NewInTreeRegistry(), []string{"*"})
	if err != nil {
		t.Fatal(err)
	}
	notReady := corev1.Taint{Key: "cluster.karmada.io/not-ready", Effect: corev1.TaintEffectNoSchedule}
	cordoned := corev1.Taint{Key: "cluster.karmada.io/unschedulable", Effect: corev1.TaintEffectNoSchedule}
	divided := &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided,
		ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceAggregated}
	oneCluster := []policyv1alpha1.SpreadConstraint{{SpreadByField: policyv1alpha1.SpreadByFieldCluster, MaxGroups: 1, MinGroups: 1}}
	for _, taint := range []corev1.Taint{notReady, cordoned} {
		fleet := []clusterv1alpha1.Cluster{schedulertest.Member("m1", "east", 10), schedulertest.Member("m2", "east", 10, taint), schedulertest.Member("m3", "west", 20)}
		cases := []struct {
			name   string
			spec   *workv1alpha2.ResourceBindingSpec
			placed string
			want   string
		}{
			{"spread over one cluster", schedulertest.Spec(2, &policyv1alpha1.Placement{SpreadConstraints: oneCluster}), "m2", "m2=2"},
			{"duplicated", schedulertest.Spec(2, nil), "m2", "m1=2,m2=2,m3=2"},
			{"divided, aggregated", schedulertest.Spec(4, &policyv1alpha1.Placement{ReplicaScheduling: divided}), "m2", "m2=4"},
		}
		for _, c := range cases {
			c.spec.Clusters = []workv1alpha2.TargetCluster{{Name: c.placed, Replicas: c.spec.Replicas}}
			r := Schedule(context.Background(), fw, c.spec, fleet)
			if r.Err != nil {
				t.Errorf("%s, %s: %v", taint.Key, c.name, r.Err)
				continue
			}
			if got := schedulertest.Targets(r.Targets); got != c.want {
				t.Errorf("%s, %s: %s, want %s", taint.Key, c.name, got, c.want)
			}
			// Placed afresh, the tainted cluster is avoided.
			c.spec.Clusters = nil
			r = Schedule(context.Background(), fw, c.spec, fleet)
			if r.Err != nil || strings.Contains(schedulertest.Targets(r.Targets), "m2") {
				t.Errorf("%s, %s afresh: %s (%v), want no m2", taint.Key, c.name, schedulertest.Targets(r.Targets), r.Err)
			}
		}
	}
}

// TestScheduleComponents: a multi-component workload goes only where one
// whole set of its components fits, every component counted, and a Divided
// placement puts it whole in one cluster (the one it runs in, if any).
func TestScheduleComponents(t *testing.T) {
	fw, err := framework.New(plugins.NewInTreeRegistry(), []string{"*"})
	if err != nil {
		t.Fatal(err)
	}
	one := func(cpu string) *workv1alpha2.ComponentReplicaRequirements {
		return &workv1alpha2.ComponentReplicaRequirements{ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}
	}
	s := schedulertest.Spec(0, &policyv1alpha1.Placement{})
	s.ReplicaRequirements = nil
	// A set needs 1 + 3×2 = 7 cpu; member1 has 4 (each component alone fits), member2 8, member3 20.
	s.Components = []workv1alpha2.Component{{Name: "jobmanager", Replicas: 1, ReplicaRequirements: one("1")}, {Name: "taskmanager", Replicas: 3, ReplicaRequirements: one("2")}}
	fleet := []clusterv1alpha1.Cluster{schedulertest.Member("member1", "", 4), schedulertest.Member("member2", "", 8), schedulertest.Member("member3", "", 20)}
	r := Schedule(context.Background(), fw, s, fleet)
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	got := map[string][]workv1alpha2.ComponentReplicas{}
	for _, tc := range r.Targets {
		got[tc.Name] = tc.Components
	}
	wantSet := []workv1alpha2.ComponentReplicas{{Name: "jobmanager", Replicas: 1}, {Name: "taskmanager", Replicas: 3}}
	if len(got) != 2 || !slices.Equal(got["member2"], wantSet) || !slices.Equal(got["member3"], wantSet) {
		t.Errorf("duplicated: targets %+v, want member2 and member3 with the whole set", r.Targets)
	}
	for _, e := range r.Explanation.Clusters {
		if e.Name == "member1" && (e.Feasible || !strings.Contains(e.Reason, "cannot fit one set")) {
			t.Errorf("member1 explanation %+v", e)
		}
	}
	s.Placement.ReplicaScheduling = &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided,
		ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted}
	r = Schedule(context.Background(), fw, s, fleet)
	if r.Err != nil || len(r.Targets) != 1 || !slices.Equal(r.Targets[0].Components, wantSet) {
		t.Fatalf("divided: %+v %v, want one cluster with the whole set", r.Targets, r.Err)
	}
	// It stays where it runs.
	s.Clusters = []workv1alpha2.TargetCluster{{Name: "member2", Components: wantSet}}
	r = Schedule(context.Background(), fw, s, fleet)
	if r.Err != nil || len(r.Targets) != 1 || r.Targets[0].Name != "member2" {
		t.Errorf("divided, running in member2: %+v %v", r.Targets, r.Err)
	}
}

// overflowAffinities: the primary group fills first, then each overflow
// group in order; scaling down empties the last group used first; a
// primary cluster that cannot take replicas leaves them to the next group.
func TestOverflowAffinities(t *testing.T) {
	fw, err := framework.New(plugins.NewInTreeRegistry(), []string{"*"})
	if err != nil {
		t.Fatal(err)
	}
	cordoned := corev1.Taint{Key: "cluster.karmada.io/unschedulable", Effect: corev1.TaintEffectNoSchedule}
	fleet := []clusterv1alpha1.Cluster{schedulertest.Member("idc", "east", 10), schedulertest.Member("cloud-a", "west", 20), schedulertest.Member("cloud-b", "west", 20),
		schedulertest.Member("spare", "north", 50), schedulertest.Member("broken", "east", 10, cordoned)}
	dynamic := &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided,
		ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted,
		WeightPreference:          &policyv1alpha1.ClusterPreferences{DynamicWeight: policyv1alpha1.DynamicWeightByAvailableReplicas}}
	aggregated := &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided,
		ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceAggregated}
	tiered := func(primary string, strategy *policyv1alpha1.ReplicaSchedulingStrategy) *policyv1alpha1.Placement {
		return &policyv1alpha1.Placement{ReplicaScheduling: strategy, ClusterAffinities: []policyv1alpha1.ClusterAffinityTerm{{
			AffinityName:    "on-prem",
			ClusterAffinity: policyv1alpha1.ClusterAffinity{ClusterNames: []string{primary}},
			OverflowAffinities: []policyv1alpha1.OverflowAffinityTerm{
				// cloud-a is in both overflow groups: its first one counts.
				{AffinityName: "cloud", ClusterAffinity: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"cloud-a", "cloud-b"}}},
				{AffinityName: "last-resort", ClusterAffinity: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"spare", "cloud-a"}}},
			},
		}}}
	}
	placed := func(s *workv1alpha2.ResourceBindingSpec, prev ...workv1alpha2.TargetCluster) *workv1alpha2.ResourceBindingSpec {
		s.Clusters = prev
		return s
	}
	cases := []struct {
		name, want, wantErr string
		spec                *workv1alpha2.ResourceBindingSpec
	}{
		{"the primary holds it", "idc=8", "", schedulertest.Spec(8, tiered("idc", dynamic))},
		{"full primary: the rest overflows to the next group", "cloud-a=3,cloud-b=2,idc=10", "", schedulertest.Spec(15, tiered("idc", dynamic))},
		{"two groups full: the last resort", "cloud-a=20,cloud-b=20,idc=10,spare=5", "", schedulertest.Spec(55, tiered("idc", dynamic))},
		{"past every group", "", "Clusters available replicas 100 are not enough to schedule.", schedulertest.Spec(101, tiered("idc", dynamic))},
		{"a cordoned primary: the overflow group takes all", "cloud-a=3,cloud-b=3", "", schedulertest.Spec(6, tiered("broken", dynamic))},
		{"aggregated within each group", "cloud-a=5,idc=10", "", schedulertest.Spec(15, tiered("idc", aggregated))},
		{"scale up keeps what runs and fills the primary first",
			"cloud-a=2,cloud-b=2,idc=10", "", placed(schedulertest.Spec(14, tiered("idc", dynamic)), tc("idc", 6), tc("cloud-a", 2), tc("cloud-b", 2))},
		{"scale down empties the last group first",
			"cloud-a=3,cloud-b=3,idc=10", "", placed(schedulertest.Spec(16, tiered("idc", dynamic)), tc("idc", 10), tc("cloud-a", 5), tc("cloud-b", 5), tc("spare", 4))},
		{"scale down into the primary",
			"idc=7", "", placed(schedulertest.Spec(7, tiered("idc", dynamic)), tc("idc", 10), tc("cloud-a", 5), tc("cloud-b", 5))},
		{"duplicated: overflow groups do not apply", "idc=3", "", schedulertest.Spec(3, tiered("idc", nil))},
	}
	for _, c := range cases {
		r := Schedule(context.Background(), fw, c.spec, fleet)
		check(t, c.name, r, c.want, "on-prem", c.wantErr)
	}

	// The explanation says why an overflow group's clusters were not used.
	r := Schedule(context.Background(), fw, schedulertest.Spec(8, tiered("idc", dynamic)), fleet)
	for _, e := range r.Explanation.Clusters {
		if e.Name == "spare" && !strings.Contains(e.Reason, `overflow group "last-resort" not needed`) {
			t.Errorf("spare's explanation: %+v", e)
		}
	}
}

func tc(name string, n int32) workv1alpha2.TargetCluster {
	return workv1alpha2.TargetCluster{Name: name, Replicas: n}
}
