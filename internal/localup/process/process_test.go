package process

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestRunDAGRespectsDependencies(t *testing.T) {
	var mu sync.Mutex
	var order []string
	steps := []*Step{
		{Name: "c", After: []string{"a", "b"}},
		{Name: "a"},
		{Name: "b", After: []string{"a"}},
	}
	err := RunDAG(context.Background(), steps, func(_ context.Context, s *Step) error {
		mu.Lock()
		order = append(order, s.Name)
		mu.Unlock()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(order, "") != "abc" {
		t.Fatalf("ran in order %v, want a, b, c", order)
	}
}

func TestRunDAGStopsAtFirstErrorAndSkipsDependents(t *testing.T) {
	ran := map[string]bool{}
	var mu sync.Mutex
	steps := []*Step{{Name: "a"}, {Name: "b", After: []string{"a"}}}
	err := RunDAG(context.Background(), steps, func(_ context.Context, s *Step) error {
		mu.Lock()
		ran[s.Name] = true
		mu.Unlock()
		if s.Name == "a" {
			return errors.New("boom")
		}
		return nil
	})
	if err == nil || err.Error() != "boom" {
		t.Fatalf("want the step's error, got %v", err)
	}
	if ran["b"] {
		t.Fatal("a step ran although its dependency failed")
	}
}

func TestRunDAGRejectsCycles(t *testing.T) {
	steps := []*Step{{Name: "a", After: []string{"b"}}, {Name: "b", After: []string{"a"}}}
	err := RunDAG(context.Background(), steps, func(context.Context, *Step) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "cycle") {
		t.Fatalf("want a cycle error, got %v", err)
	}
}

func TestPortInUseNamesPortAndProcess(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	err = CheckPortFree(port, "member1/kube-apiserver")
	var pe *PortInUseError
	if !errors.As(err, &pe) {
		t.Fatalf("want *PortInUseError, got %v", err)
	}
	if pe.PID != os.Getpid() {
		t.Errorf("reported pid %d, want this test's pid %d", pe.PID, os.Getpid())
	}
	// The kernel's comm: the first 15 bytes of the executable's name.
	if want := filepath.Base(os.Args[0]); pe.Command == "" || !strings.HasPrefix(want, pe.Command) {
		t.Errorf("reported command %q, want a prefix of %q", pe.Command, want)
	}
	for _, want := range []string{fmt.Sprint(port), "member1/kube-apiserver", "--port-base"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	l.Close()
	if err := CheckPortFree(port, "x"); err != nil {
		t.Fatalf("a free port was reported busy: %v", err)
	}
}

func TestProcMemoryReadsOwnProcess(t *testing.T) {
	rss, peak, err := Memory(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if rss <= 0 || peak < rss {
		t.Fatalf("rss=%d peak=%d: want 0 < rss <= peak", rss, peak)
	}
}

func TestLeadsIn(t *testing.T) {
	const exposition = `# HELP leader_election_master_status Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease. Please make sure to group by name.
# TYPE leader_election_master_status gauge
leader_election_master_status{name="karmada-scheduler"} 1
leader_election_master_status{name="other"} 0
`
	const kcm = `workqueue_adds_total{name="DynamicClientCertificate"} 2
workqueue_adds_total{name="namespace"} 14
`
	for _, tc := range []struct {
		probe   LeaderProbe
		metrics string
		want    bool
	}{
		{LeaderProbe{Lease: "karmada-scheduler"}, exposition, true},
		{LeaderProbe{Lease: "other"}, exposition, false},
		{LeaderProbe{Lease: "absent"}, exposition, false},
		{LeaderProbe{Marker: `workqueue_adds_total{name="namespace"}`}, kcm, true},
		{LeaderProbe{Marker: `workqueue_adds_total{name="namespace"}`}, exposition, false},
	} {
		if got := tc.probe.LeadsIn([]byte(tc.metrics)); got != tc.want {
			t.Errorf("%+v: %t, want %t", tc.probe, got, tc.want)
		}
	}
}
