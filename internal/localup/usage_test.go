package localup

import (
	"strings"
	"testing"
)

func TestUsageOptionsNameWhatIsWrong(t *testing.T) {
	for _, tc := range []struct {
		o    UsageOptions
		want string
	}{
		{UsageOptions{}, "nothing to set"},
		{UsageOptions{CPU: "lots"}, `--cpu="lots": not a quantity`},
		{UsageOptions{Memory: "-1Mi"}, "must not be negative"},
		{UsageOptions{Metrics: []string{"rps"}}, `--metric="rps": want NAME=QUANTITY`},
		{UsageOptions{Metrics: []string{"=3"}}, `want NAME=QUANTITY`},
		{UsageOptions{Metrics: []string{"r/ps=3"}}, `the name "r/ps"`},
		{UsageOptions{Metrics: []string{"rps=many"}}, `"many" is not a quantity`},
		{UsageOptions{Selector: "app in (", Metrics: []string{"rps=3"}}, "--selector"},
	} {
		err := tc.o.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want an error with %q", tc.o, err, tc.want)
		}
	}
	ok := UsageOptions{Selector: "app=web", Metrics: []string{"requests_per_second=30", "queue.depth=1500m"}}
	if err := ok.Validate(); err != nil {
		t.Errorf("%+v: %v", ok, err)
	}
	m, _ := ok.metrics()
	if m["custom-metrics.local.karmada.io/requests_per_second"] != "30" || m["custom-metrics.local.karmada.io/queue.depth"] != "1500m" {
		t.Errorf("annotations %v", m)
	}
}
