package deploy

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Every rule of the alert rules can page someone: a name, an expression,
// a duration, a severity Alertmanager routes on, a summary, and a section
// of docs/metrics.md saying what to do.
func TestAlertRules(t *testing.T) {
	rules, err := AlertRules()
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) < 10 {
		t.Fatalf("%d alert rules read", len(rules))
	}
	doc := readDoc(t)
	seen := map[string]bool{}
	for _, r := range rules {
		if r.Alert == "" || r.Expr == "" || r.For == "" {
			t.Errorf("rule %+v lacks a name, an expression or a duration", r)
		}
		if seen[r.Alert] {
			t.Errorf("two rules named %s", r.Alert)
		}
		seen[r.Alert] = true
		switch r.Labels["severity"] {
		case "critical", "warning", "info":
		default:
			t.Errorf("%s: severity %q, want critical, warning or info", r.Alert, r.Labels["severity"])
		}
		if r.Annotations["summary"] == "" {
			t.Errorf("%s has no summary", r.Alert)
		}
		if !strings.Contains(doc, "\n### "+r.Alert+"\n") {
			t.Errorf("docs/metrics.md has no section ### %s saying what to do", r.Alert)
		}
	}
}

// Every metric the dashboard and the rules read is one docs/metrics.md
// lists (the HA lane checks that a running fleet exports each).
func TestMonitoredMetricsAreDocumented(t *testing.T) {
	monitored, err := MonitoredMetrics()
	if err != nil {
		t.Fatal(err)
	}
	panels, err := DashboardExpressions()
	if err != nil {
		t.Fatal(err)
	}
	if len(panels) < 20 {
		t.Errorf("%d dashboard panels with queries", len(panels))
	}
	doc := readDoc(t)
	for name, where := range monitored {
		base := name
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			if b, ok := strings.CutSuffix(name, suffix); ok && strings.Contains(doc, "`"+b+"`") {
				base = b
			}
		}
		if !strings.Contains(doc, "`"+base+"`") {
			t.Errorf("%s (read by %s) is not in docs/metrics.md", name, strings.Join(where, ", "))
		}
	}
}

// Every metric our code defines is documented.
func TestEveryMetricIsDocumented(t *testing.T) {
	doc := readDoc(t)
	defined := regexp.MustCompile(`(?:Name:\s*|NewDesc\(|Gauge\()"([a-z][a-z0-9_:]*)"`)
	n := 0
	err := filepath.WalkDir(filepath.Join(repoRoot(t), "internal"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil || !bytes.Contains(src, []byte("client_golang/prometheus\"")) {
			return err
		}
		for _, m := range defined.FindAllSubmatch(src, -1) {
			n++
			if name := string(m[1]); !strings.Contains(doc, "`"+name+"`") {
				t.Errorf("%s (defined in %s) is not in docs/metrics.md", name, path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 30 {
		t.Errorf("found %d metric definitions: the pattern no longer matches the code", n)
	}
}

// The chart ships the same files.
func TestChartShipsTheMonitoringFiles(t *testing.T) {
	for _, f := range []string{AlertsFile, DashboardFile} {
		ours, err := Monitoring.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		chart, err := os.ReadFile(filepath.Join(repoRoot(t), "charts", "karmada", "files", f))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(ours, chart) {
			t.Errorf("charts/karmada/files/%s differs from deploy/%s: run make generate", f, f)
		}
	}
}

func repoRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(wd)
}

func readDoc(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "metrics.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
