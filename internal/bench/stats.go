// Package bench measures a Karmada-API control plane from the outside: it
// talks only to the karmada-apiserver and to the member clusters' API
// servers, so the same run measures this project or any other implementation
// of the Karmada API.
package bench

import (
	"math"
	"sort"
	"strconv"
	"time"
)

// Summary describes a set of latencies.
type Summary struct {
	Count int      `json:"count"`
	P50   Duration `json:"p50"`
	P90   Duration `json:"p90"`
	P99   Duration `json:"p99"`
	Max   Duration `json:"max"`
}

// Duration is a time.Duration that is written to JSON in seconds, so that
// results are easy to read and to plot.
type Duration time.Duration

// MarshalJSON writes the duration as seconds with millisecond precision.
func (d Duration) MarshalJSON() ([]byte, error) {
	s := math.Round(time.Duration(d).Seconds()*1000) / 1000
	return []byte(formatFloat(s)), nil
}

func (d Duration) String() string { return time.Duration(d).Round(time.Millisecond).String() }

// Summarize returns the nearest-rank percentiles of ds. It does not change ds.
func Summarize(ds []time.Duration) Summary {
	if len(ds) == 0 {
		return Summary{}
	}
	sorted := append([]time.Duration(nil), ds...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	return Summary{
		Count: len(sorted),
		P50:   Duration(Percentile(sorted, 50)),
		P90:   Duration(Percentile(sorted, 90)),
		P99:   Duration(Percentile(sorted, 99)),
		Max:   Duration(sorted[len(sorted)-1]),
	}
}

// Percentile returns the nearest-rank p-th percentile (0 < p <= 100) of
// sorted, which must be sorted ascending: the smallest value such that at
// least p% of the values are at most it.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	if rank < 1 {
		rank = 1
	}
	if rank > len(sorted) {
		rank = len(sorted)
	}
	return sorted[rank-1]
}

func formatFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
