package division

import (
	"container/heap"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
)

func TestDivideByWeightAlwaysGivesAllReplicas(t *testing.T) {
	for replicas := int32(0); replicas < 50; replicas++ {
		got := DivideByWeight(replicas, []WeightedCluster{{"a", 3}, {"b", 5}, {"c", 7}})
		var sum int32
		for _, tc := range got {
			sum += tc.Replicas
		}
		if sum != replicas {
			t.Fatalf("%d replicas divided into %v (sum %d)", replicas, got, sum)
		}
	}
}

func BenchmarkDivideByWeight10000Replicas(b *testing.B) {
	clusters := make([]WeightedCluster, 1000)
	for i := range clusters {
		clusters[i] = WeightedCluster{Name: "member" + strconv.Itoa(i), Weight: int64(1 + i%7)}
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if got := DivideByWeight(10000, clusters); len(got) == 0 {
			b.Fatal("nothing divided")
		}
	}
}

// Weights at the limits of int64 divide exactly: their sum and the products
// do not overflow (two weights of 2^63-1 with 3 replicas gave 4 before).
func TestDivideByWeightAtTheLimits(t *testing.T) {
	const maxW = math.MaxInt64
	cases := []struct {
		name     string
		replicas int32
		clusters []WeightedCluster
		want     []workv1alpha2.TargetCluster
	}{
		{"two maximal weights", 3, []WeightedCluster{{"a", maxW}, {"b", maxW}},
			[]workv1alpha2.TargetCluster{{Name: "a", Replicas: 2}, {Name: "b", Replicas: 1}}},
		{"three maximal weights, the most replicas", math.MaxInt32, []WeightedCluster{{"a", maxW}, {"b", maxW}, {"c", maxW}},
			[]workv1alpha2.TargetCluster{{Name: "a", Replicas: 715827883}, {Name: "b", Replicas: 715827882}, {Name: "c", Replicas: 715827882}}},
		{"a maximal weight beside 1", math.MaxInt32, []WeightedCluster{{"a", maxW}, {"b", 1}},
			[]workv1alpha2.TargetCluster{{Name: "a", Replicas: math.MaxInt32}}},
		{"weights of 2^62 in proportion 1:3", 4, []WeightedCluster{{"a", 1 << 62}, {"b", 3 << 62 / 2}, {"c", 3 << 62 / 2}},
			[]workv1alpha2.TargetCluster{{Name: "a", Replicas: 1}, {Name: "b", Replicas: 2}, {Name: "c", Replicas: 1}}},
		{"a negative weight counts as 0", 2, []WeightedCluster{{"a", -5}, {"b", 1}},
			[]workv1alpha2.TargetCluster{{Name: "b", Replicas: 2}}},
	}
	for _, c := range cases {
		got := DivideByWeight(c.replicas, c.clusters)
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s (-want,+got):\n%s", c.name, diff)
		}
	}
}

// Webster's method against published divisions: Karmada issue 6735's
// weights (the largest-remainder rule took a replica from westus when the
// total grew from 5 to 6) and the Sainte-Laguë example of the method's
// literature (10 seats over 47000:16000:15900:12000:6000:3100).
func TestDivideByWeightIsWebster(t *testing.T) {
	regions := []WeightedCluster{{"southcentralus", 170}, {"westus", 110}, {"eastus2", 60}}
	parties := []WeightedCluster{{"a", 47000}, {"b", 16000}, {"c", 15900}, {"d", 12000}, {"e", 6000}, {"f", 3100}}
	cases := []struct {
		name     string
		replicas int32
		clusters []WeightedCluster
		want     []workv1alpha2.TargetCluster
	}{
		{"6735: 5 replicas", 5, regions, tc("eastus2", 1, "southcentralus", 2, "westus", 2)},
		{"6735: 6 replicas keeps westus's 2", 6, regions, tc("eastus2", 1, "southcentralus", 3, "westus", 2)},
		{"6735: 7 replicas", 7, regions, tc("eastus2", 1, "southcentralus", 4, "westus", 2)},
		{"Sainte-Laguë: 10 seats", 10, parties, tc("a", 4, "b", 2, "c", 2, "d", 1, "e", 1)},
		{"equal weights: the names break the tie", 5, []WeightedCluster{{"m2", 1}, {"m1", 1}}, tc("m1", 3, "m2", 2)},
		{"the smaller weight gets a replica before the larger gets a third", 3, []WeightedCluster{{"big", 3}, {"small", 1}}, tc("big", 2, "small", 1)},
	}
	for _, c := range cases {
		if diff := cmp.Diff(c.want, DivideByWeight(c.replicas, c.clusters)); diff != "" {
			t.Errorf("%s (-want,+got):\n%s", c.name, diff)
		}
	}
}

// websterFromZero is Webster's method without the head start: every
// replica handed out one by one.
func websterFromZero(replicas int32, clusters []WeightedCluster) map[string]int32 {
	q := &websterQueue{}
	for _, c := range clusters {
		if c.Weight > 0 {
			q.parties = append(q.parties, party{name: c.Name, votes: uint64(c.Weight)})
		}
	}
	if len(q.parties) == 0 {
		return map[string]int32{}
	}
	heap.Init(q)
	for i := int32(0); i < replicas; i++ {
		q.parties[0].seats++
		heap.Fix(q, 0)
	}
	out := map[string]int32{}
	for _, p := range q.parties {
		if p.seats > 0 {
			out[p.name] = p.seats
		}
	}
	return out
}

// The head start (every cluster starts at its quota minus (n+1)/2) ends
// where handing out every replica from zero does, and more replicas never
// give a cluster fewer.
func TestDivideByWeightHeadStartAndMonotony(t *testing.T) {
	rnd := rand.New(rand.NewPCG(45, 1))
	for round := 0; round < 300; round++ {
		n := 1 + rnd.IntN(9)
		clusters := make([]WeightedCluster, n)
		for i := range clusters {
			w := int64(rnd.IntN(20))
			if round%3 == 0 {
				w = rnd.Int64N(1 << 40)
			}
			clusters[i] = WeightedCluster{Name: fmt.Sprintf("m%d", i), Weight: w}
		}
		var before map[string]int32
		for replicas := int32(0); replicas <= 60; replicas++ {
			got := map[string]int32{}
			for _, t := range DivideByWeight(replicas, clusters) {
				got[t.Name] = t.Replicas
			}
			if want := websterFromZero(replicas, clusters); !maps.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
				t.Fatalf("%d replicas over %v: %v with the head start, %v from zero", replicas, clusters, got, want)
			}
			for name, n := range before {
				if got[name] < n {
					t.Fatalf("%d replicas over %v gave %s %d, %d replicas gave it %d", replicas, clusters, name, got[name], replicas-1, n)
				}
			}
			before = got
		}
	}
}

// tc returns targets from pairs: name, replicas, ...
func tc(pairs ...any) []workv1alpha2.TargetCluster {
	var out []workv1alpha2.TargetCluster
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, workv1alpha2.TargetCluster{Name: pairs[i].(string), Replicas: int32(pairs[i+1].(int))})
	}
	return out
}
