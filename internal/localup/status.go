package localup

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// ComponentStatus is one process of the fleet as Status sees it.
type ComponentStatus struct {
	Name    string `json:"name"`
	PID     int    `json:"pid,omitempty"`
	Ports   []int  `json:"ports"`
	Running bool   `json:"running"`
	Healthy bool   `json:"healthy"`
	Problem string `json:"problem,omitempty"`
	// Leader is "leader" or "standby" for a process that elects a leader
	// (with --ha), "?" when it could not be asked, else empty.
	Leader string `json:"leader,omitempty"`
	// RSSBytes is the resident memory now, PeakRSSBytes its peak since start.
	RSSBytes     int64 `json:"rssBytes,omitempty"`
	PeakRSSBytes int64 `json:"peakRSSBytes,omitempty"`
}

// Status reports every process of the recorded fleet.
func Status(ctx context.Context, stateDir, binDir string) ([]ComponentStatus, error) {
	f, err := fleetFromState(stateDir, binDir)
	if err != nil {
		return nil, err
	}
	steps, err := f.steps()
	if err != nil {
		return nil, err
	}
	return statusOf(ctx, stateDir, steps)
}

// statusOf reports the process steps of a plan whose processes the state
// directory records.
func statusOf(ctx context.Context, stateDir string, steps []*Step) ([]ComponentStatus, error) {
	running, err := runningProcesses(stateDir)
	if err != nil {
		return nil, err
	}
	var out []ComponentStatus
	for _, s := range steps {
		if !s.isProcess() {
			continue
		}
		st := ComponentStatus{Name: s.Name, Ports: s.Ports}
		if r, ok := running[s.Name]; ok {
			st.PID, st.Running = r.PID, true
			st.RSSBytes, st.PeakRSSBytes, _ = procMemory(r.PID)
			if err := s.Probe.Check(ctx); err != nil {
				st.Problem = err.Error()
			} else {
				st.Healthy = true
			}
			if s.Leader != nil {
				switch leads, err := s.Leader.Leads(ctx); {
				case err != nil:
					st.Leader = "?"
				case leads:
					st.Leader = "leader"
				default:
					st.Leader = "standby"
				}
			}
		} else {
			st.Problem = "not running"
		}
		out = append(out, st)
	}
	return out, nil
}

// PrintStatus writes Status as a table.
func PrintStatus(out io.Writer, statuses []ComponentStatus) {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	// The LEADER column only for a fleet whose processes elect leaders.
	elects := false
	for _, s := range statuses {
		elects = elects || s.Leader != ""
	}
	leader := func(s ComponentStatus) string {
		if !elects {
			return ""
		}
		if s.Leader == "" {
			return "\t-"
		}
		return "\t" + s.Leader
	}
	fmt.Fprintln(tw, "COMPONENT\tPID\tPORTS\tHEALTH"+leader(ComponentStatus{Leader: "LEADER"})+"\tRSS\tPEAK RSS")
	var total, peak int64
	for _, s := range statuses {
		pid, health, rss, hwm := "-", "healthy", "-", "-"
		if s.Running {
			pid = fmt.Sprint(s.PID)
			rss, hwm = fmt.Sprintf("%dMi", s.RSSBytes>>20), fmt.Sprintf("%dMi", s.PeakRSSBytes>>20)
			total += s.RSSBytes
			peak += s.PeakRSSBytes
		}
		if !s.Healthy {
			health = "unhealthy: " + s.Problem
			if !s.Running {
				health = "stopped"
			}
		}
		ports := make([]string, len(s.Ports))
		for i, p := range s.Ports {
			ports[i] = fmt.Sprint(p)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s%s\t%s\t%s\n", s.Name, pid, strings.Join(ports, ","), health, leader(s), rss, hwm)
	}
	// The sum of per-process peaks bounds the fleet's peak from above.
	fmt.Fprintf(tw, "TOTAL\t\t\t%s\t%dMi\t%dMi\n", leader(ComponentStatus{Leader: " "}), total>>20, peak>>20)
	tw.Flush()
}
