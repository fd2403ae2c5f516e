package bench

import (
	"encoding/json"
	"testing"
	"time"
)

func ms(n ...int) []time.Duration {
	out := make([]time.Duration, len(n))
	for i, v := range n {
		out[i] = time.Duration(v) * time.Millisecond
	}
	return out
}

func TestPercentile(t *testing.T) {
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = i + 1
	}
	cases := []struct {
		name   string
		values []time.Duration
		p      float64
		want   time.Duration
	}{
		{"empty", nil, 50, 0},
		{"one value", ms(7), 99, 7 * time.Millisecond},
		{"p50 of 1..100", ms(hundred...), 50, 50 * time.Millisecond},
		{"p90 of 1..100", ms(hundred...), 90, 90 * time.Millisecond},
		{"p99 of 1..100", ms(hundred...), 99, 99 * time.Millisecond},
		{"p100 is the max", ms(hundred...), 100, 100 * time.Millisecond},
		{"nearest rank rounds up", ms(1, 2, 3), 50, 2 * time.Millisecond},
		{"p99 of few values is the max", ms(1, 2, 3, 4), 99, 4 * time.Millisecond},
		{"tiny p is the min", ms(5, 6), 0.1, 5 * time.Millisecond},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Percentile(c.values, c.p); got != c.want {
				t.Errorf("Percentile(%v) = %v, want %v", c.p, got, c.want)
			}
		})
	}
}

func TestSummarizeSortsACopy(t *testing.T) {
	in := ms(30, 10, 20)
	s := Summarize(in)
	if s.Count != 3 || time.Duration(s.P50) != 20*time.Millisecond || time.Duration(s.Max) != 30*time.Millisecond {
		t.Errorf("Summarize = %+v", s)
	}
	if in[0] != 30*time.Millisecond {
		t.Error("Summarize reordered its input")
	}
	if (Summarize(nil) != Summary{}) {
		t.Error("the summary of nothing is not empty")
	}
}

func TestDurationJSONIsSeconds(t *testing.T) {
	data, err := json.Marshal(struct{ D Duration }{Duration(1500*time.Millisecond + 400*time.Microsecond)})
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != `{"D":1.5}` {
		t.Errorf("got %s", data)
	}
}
