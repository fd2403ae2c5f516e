package metrics

import (
	"slices"
	"testing"
)

func TestReferenced(t *testing.T) {
	for _, c := range []struct {
		expr string
		want []string
	}{
		{`cluster_ready_state == 0`, []string{"cluster_ready_state"}},
		{`cluster_ready_node_number / cluster_node_number < 0.8`, []string{"cluster_node_number", "cluster_ready_node_number"}},
		{`histogram_quantile(0.99, sum by (member_cluster, le) (rate(cluster_sync_status_duration_seconds_bucket[5m]))) > 5`,
			[]string{"cluster_sync_status_duration_seconds_bucket"}},
		{`sum(rate(karmada_scheduler_schedule_attempts_total{result="error", x=~"a|b(c)"}[5m])) / sum(rate(karmada_scheduler_schedule_attempts_total[5m])) > 0.1`,
			[]string{"karmada_scheduler_schedule_attempts_total"}},
		{`(sum by (member_cluster) (rate(a_total{result="error"}[5m])) > 0) or (sum without (x) (rate(b_total[1h])) > 1e3)`, []string{"a_total", "b_total"}},
		{`karmada_certificate_expiration_timestamp_seconds - time() < 30 * 24 * 3600`, []string{"karmada_certificate_expiration_timestamp_seconds"}},
		{`count(count by (git_version) (karmada_build_info)) > 1`, []string{"karmada_build_info"}},
		{`x_total offset 5m unless on (job) group_left (instance) y_total`, []string{"x_total", "y_total"}},
	} {
		if got := Referenced(c.expr); !slices.Equal(got, c.want) {
			t.Errorf("Referenced(%q) = %v, want %v", c.expr, got, c.want)
		}
	}
}
