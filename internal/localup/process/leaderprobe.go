package process

import (
	"context"
	"crypto/tls"
	"fmt"
	"strings"
	"time"
)

// LeaderProbe tells whether a leader-elected process leads, from its
// /metrics: ours report leader_election_master_status{name=<lease>} 1
// while they lead (the gauge client-go's leader election sets).
// kube-controller-manager exports no such gauge; only its leader runs
// controllers, so the work queue of its namespace controller tells.
type LeaderProbe struct {
	URL string
	TLS *tls.Config
	// Lease is the lease's name, for the gauge; Marker, when set, is a
	// series only the leader exports instead.
	Lease, Marker string
}

// Leads asks the process.
func (p *LeaderProbe) Leads(ctx context.Context) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	body, err := Get(ctx, p.URL, p.TLS, 64<<20)
	if err != nil {
		return false, err
	}
	return p.LeadsIn(body), nil
}

// LeadsIn reads a Prometheus text exposition.
func (p *LeaderProbe) LeadsIn(metrics []byte) bool {
	for _, line := range strings.Split(string(metrics), "\n") {
		if p.Marker != "" {
			if strings.HasPrefix(line, p.Marker+" ") {
				return true
			}
			continue
		}
		if v, ok := strings.CutPrefix(line, fmt.Sprintf(`leader_election_master_status{name=%q}`, p.Lease)); ok {
			return strings.TrimSpace(v) == "1"
		}
	}
	// A standby has not set the gauge.
	return false
}
