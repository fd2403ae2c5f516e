package deploy

import (
	"embed"
	"encoding/json"
	"fmt"
	"sort"

	"sigs.k8s.io/yaml"

	"github.com/karmada-go/karmada/internal/metrics"
)

// Monitoring holds monitoring/: the Grafana dashboard and the Prometheus
// alert rules (the chart ships the same files, monitoring.* values).
//
//go:embed monitoring/karmada-alerts.yaml monitoring/karmada-dashboard.json
var Monitoring embed.FS

// Monitoring's files.
const (
	AlertsFile    = "monitoring/karmada-alerts.yaml"
	DashboardFile = "monitoring/karmada-dashboard.json"
)

// AlertRule is one rule of the alert rules file.
type AlertRule struct {
	Alert       string            `json:"alert"`
	Expr        string            `json:"expr"`
	For         string            `json:"for"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

// AlertRules reads the alert rules.
func AlertRules() ([]AlertRule, error) {
	data, err := Monitoring.ReadFile(AlertsFile)
	if err != nil {
		return nil, err
	}
	var file struct {
		Groups []struct {
			Name  string      `json:"name"`
			Rules []AlertRule `json:"rules"`
		} `json:"groups"`
	}
	if err := yaml.UnmarshalStrict(data, &file); err != nil {
		return nil, fmt.Errorf("%s: %w", AlertsFile, err)
	}
	var out []AlertRule
	for _, g := range file.Groups {
		out = append(out, g.Rules...)
	}
	return out, nil
}

// DashboardExpressions reads the PromQL of every panel of the dashboard, by
// panel title.
func DashboardExpressions() (map[string][]string, error) {
	data, err := Monitoring.ReadFile(DashboardFile)
	if err != nil {
		return nil, err
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(data, &dash); err != nil {
		return nil, fmt.Errorf("%s: %w", DashboardFile, err)
	}
	out := map[string][]string{}
	for _, p := range dash.Panels {
		for _, t := range p.Targets {
			out[p.Title] = append(out[p.Title], t.Expr)
		}
	}
	return out, nil
}

// MonitoredMetrics returns every metric name the dashboard and the alert
// rules read, each with where it is read (a panel or an alert).
func MonitoredMetrics() (map[string][]string, error) {
	rules, err := AlertRules()
	if err != nil {
		return nil, err
	}
	panels, err := DashboardExpressions()
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for _, r := range rules {
		for _, n := range metrics.Referenced(r.Expr) {
			out[n] = append(out[n], "alert "+r.Alert)
		}
	}
	titles := make([]string, 0, len(panels))
	for t := range panels {
		titles = append(titles, t)
	}
	sort.Strings(titles)
	for _, t := range titles {
		for _, e := range panels[t] {
			for _, n := range metrics.Referenced(e) {
				out[n] = append(out[n], "panel "+t)
			}
		}
	}
	return out, nil
}
