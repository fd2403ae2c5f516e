// Package division divides replicas between clusters in proportion to
// weights: the scheduler's weighted placements and the binding controller's
// division of a Job's completions share it.
package division

import (
	"container/heap"
	"math/big"
	"math/bits"
	"sort"

	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
)

// WeightedCluster is a feasible cluster with its weight for division.
type WeightedCluster struct {
	Name   string
	Weight int64
}

// DivideByWeight splits replicas in proportion to weight by Webster's
// (Sainte-Laguë) method, as Karmada since 1.16: replicas go one at a time to
// the cluster whose weight / (2 × its replicas + 1) is highest; ties go to
// the higher weight, then to the name that sorts first, so that the result
// is the same every time. The method is house-monotone: dividing more
// replicas over the same weights never gives a cluster fewer (the largest
// remainder rule can), and no cluster's share is pulled towards the heavy
// ones. Clusters of weight 0 or less and clusters that get nothing are left
// out; the result is sorted by name.
func DivideByWeight(replicas int32, clusters []WeightedCluster) []workv1alpha2.TargetCluster {
	// The weights may be as large as int64 allows (static weights are the
	// user's): the comparisons of priorities and the quotas are exact.
	q := &websterQueue{}
	for _, c := range clusters {
		if c.Weight > 0 {
			q.parties = append(q.parties, party{name: c.Name, votes: uint64(c.Weight)})
		}
	}
	if len(q.parties) == 0 || replicas <= 0 {
		return nil
	}
	// A head start: Webster's result gives each of n clusters at least its
	// quota of replicas-n/2, whole. Starting every cluster there and handing
	// out the rest one by one ends where starting from zero does, in at most
	// 3n/2 steps however many replicas there are.
	left := replicas
	if n := int64(len(q.parties)); 2*int64(replicas) > n {
		share := shares(2*int64(replicas)-n, clusters) // quotas of 2×(replicas-n/2)
		for i := range q.parties {
			p := &q.parties[i]
			p.seats = int32(share(int64(p.votes)) / 2)
			left -= p.seats
		}
	}
	heap.Init(q)
	for ; left > 0; left-- {
		q.parties[0].seats++
		heap.Fix(q, 0)
	}
	out := make([]workv1alpha2.TargetCluster, 0, len(q.parties))
	for _, p := range q.parties {
		if p.seats > 0 {
			out = append(out, workv1alpha2.TargetCluster{Name: p.name, Replicas: p.seats})
		}
	}
	sortTargets(out)
	return out
}

// party is a cluster in Webster's method: its weight (votes) and the
// replicas (seats) it has so far.
type party struct {
	name  string
	votes uint64
	seats int32
}

// websterQueue keeps the cluster due the next replica on top.
type websterQueue struct{ parties []party }

func (q *websterQueue) Len() int      { return len(q.parties) }
func (q *websterQueue) Swap(i, j int) { q.parties[i], q.parties[j] = q.parties[j], q.parties[i] }
func (q *websterQueue) Push(any)      { panic("the parties are fixed") }
func (q *websterQueue) Pop() any      { panic("the parties are fixed") }

// Less compares votes_a/(2 seats_a+1) with votes_b/(2 seats_b+1) without
// division: votes_a × (2 seats_b+1) against votes_b × (2 seats_a+1), both
// exact in 128 bits.
func (q *websterQueue) Less(i, j int) bool {
	a, b := &q.parties[i], &q.parties[j]
	ahi, alo := bits.Mul64(a.votes, 2*uint64(b.seats)+1)
	bhi, blo := bits.Mul64(b.votes, 2*uint64(a.seats)+1)
	if ahi != bhi {
		return ahi > bhi
	}
	if alo != blo {
		return alo > blo
	}
	if a.votes != b.votes {
		return a.votes > b.votes
	}
	if a.seats != b.seats {
		return a.seats < b.seats
	}
	return a.name < b.name
}

// shares returns the function giving a weight its whole share of replicas,
// floor(replicas × weight / sum of weights), exact for any int64 weights
// (negative ones count as 0); nil when there is nothing to divide.
func shares(replicas int64, clusters []WeightedCluster) func(weight int64) int64 {
	var sumHi, sumLo uint64
	for _, c := range clusters {
		var carry uint64
		sumLo, carry = bits.Add64(sumLo, uint64(max(c.Weight, 0)), 0)
		sumHi += carry
	}
	if (sumHi == 0 && sumLo == 0) || replicas <= 0 {
		return nil
	}
	if sumHi == 0 {
		return func(weight int64) int64 {
			// replicas × weight ≤ replicas × sum: the quotient fits, so
			// Div64 cannot overflow.
			hi, lo := bits.Mul64(uint64(replicas), uint64(max(weight, 0)))
			q, _ := bits.Div64(hi, lo, sumLo)
			return int64(q)
		}
	}
	// More than 2^64 in all: rare enough for big integers.
	sum := new(big.Int).Lsh(new(big.Int).SetUint64(sumHi), 64)
	sum.Or(sum, new(big.Int).SetUint64(sumLo))
	return func(weight int64) int64 {
		n := new(big.Int).Mul(big.NewInt(replicas), big.NewInt(max(weight, 0)))
		return n.Quo(n, sum).Int64()
	}
}

func sortTargets(ts []workv1alpha2.TargetCluster) {
	sort.Slice(ts, func(i, j int) bool { return ts[i].Name < ts[j].Name })
}
