package localup

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/karmada-go/karmada/internal/localup/plan"
	"github.com/karmada-go/karmada/internal/localup/process"
)

// --profiling reaches every kube-apiserver and etcd, and nothing serves
// /debug/pprof without it.
func TestProfilingReachesAPIServersAndEtcd(t *testing.T) {
	for _, on := range []bool{false, true} {
		dir := t.TempDir()
		cfg := plan.Config{StateDir: filepath.Join(dir, "state"), Kubeconfig: filepath.Join(dir, "kubeconfig"),
			Members: 2, NodesPerMember: 1, PortBase: 31000, PullMembers: []string{plan.MemberName(2)}, Profiling: on}
		f := plan.NewFleet(cfg)
		if err := f.Prepare(); err != nil {
			t.Fatal(err)
		}
		steps, err := f.Steps()
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, s := range steps {
			var want string
			switch {
			case strings.HasSuffix(s.Name, "/kube-apiserver"):
				want = "--profiling=false"
				if on {
					want = "--profiling=true"
				}
			case s.Name == "karmada/etcd":
				want = "--enable-pprof=false"
				if on {
					want = "--enable-pprof=true"
				}
			default:
				continue
			}
			seen[s.Name] = true
			if !slices.Contains(s.Args, want) {
				t.Errorf("profiling %t: %s has no %s in %v", on, s.Name, want, s.Args)
			}
		}
		for _, name := range []string{"karmada/etcd", "karmada/kube-apiserver", "member1/kube-apiserver", "member2/kube-apiserver"} {
			if !seen[name] {
				t.Errorf("profiling %t: no step %s", on, name)
			}
		}
	}
}

// A running fleet is not changed to or from --profiling behind the user's
// back: up says to run down first, and names the setting it runs with.
func TestUpRefusesToChangeProfilingOfARunningFleet(t *testing.T) {
	cfg := testConfig(t, fakeBinDir(t, "exec sleep 60\n"))
	if err := writeState(cfg.StateDir, recordOf(cfg)); err != nil {
		t.Fatal(err)
	}
	f := plan.NewFleet(cfg)
	p, err := process.Start("member1/kwok", "/bin/sleep", []string{"60"}, nil, f.LogPath("member1/kwok"), f.PidPath("member1/kwok"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = process.Stop(p.Rec, 5*time.Second) }()
	cfg.Profiling = true
	err = Up(context.Background(), cfg, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "--profiling=false") || !strings.Contains(err.Error(), "karmada-local down") {
		t.Fatalf("want an error naming the running fleet's --profiling=false and telling to run down, got %v", err)
	}
}

// What up records of a configuration gives back the same fleet: the state
// file is what status and component restart rebuild it from.
func TestStateRecordKeepsTheFleet(t *testing.T) {
	dir := t.TempDir()
	cfg := plan.Config{StateDir: dir, BinDir: "/bin", Kubeconfig: filepath.Join(dir, "kc"), Members: 4, NodesPerMember: 7,
		PortBase: 31000, PullMembers: []string{plan.MemberName(3), plan.MemberName(1)}, Profiling: true, PropagateKinds: []string{"deployments.apps", "pods"}}
	if err := writeState(dir, recordOf(cfg)); err != nil {
		t.Fatal(err)
	}
	rec, err := readState(dir)
	if err != nil || rec == nil {
		t.Fatalf("reading the record: %v", err)
	}
	got := rec.config(dir, "/bin")
	if got.Members != 4 || got.NodesPerMember != 7 || got.PortBase != 31000 || got.Kubeconfig != cfg.Kubeconfig ||
		!slices.Equal(got.PullMembers, cfg.PullMembers) || !got.Profiling || !slices.Equal(got.PropagateKinds, cfg.PropagateKinds) {
		t.Errorf("record gives %+v, want the fleet of %+v", got, cfg)
	}
	other := recordOf(cfg)
	other.PullMembers = []string{plan.MemberName(1), plan.MemberName(3)}
	if !rec.sameFleet(other) {
		t.Error("the same pull members in another order were taken for another fleet")
	}
	// The grant may change while the fleet runs (join updates the members).
	other.PropagateKinds, other.ClusterAdmin = nil, true
	if !rec.sameFleet(other) {
		t.Error("another --propagate-kinds was taken for another fleet")
	}
	other.Profiling = false
	if rec.sameFleet(other) {
		t.Error("a fleet without --profiling was taken for the same fleet")
	}
}
