package plan

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/karmada-go/karmada/internal/localup/process"
)

func planOf(t *testing.T, cfg Config) []*process.Step {
	t.Helper()
	f := NewFleet(cfg)
	if err := f.Prepare(); err != nil {
		t.Fatal(err)
	}
	steps, err := f.Steps()
	if err != nil {
		t.Fatal(err)
	}
	return steps
}

func argOf(s *process.Step, flag string) string {
	for _, a := range s.Args {
		if v, ok := strings.CutPrefix(a, flag+"="); ok {
			return v
		}
	}
	return ""
}

// --ha lays out three etcd members, two karmada-apiservers and webhooks
// behind haproxy and two replicas of each controller, every port distinct
// and inside the range Validate checks; without it the plan has one of each.
func TestHAPlan(t *testing.T) {
	if _, err := FindHAProxy(); err != nil {
		t.Fatalf("the plan of --ha names haproxy, which this machine lacks (make ha-deps): %v", err)
	}
	dir := t.TempDir()
	for _, ha := range []bool{false, true} {
		cfg := Config{StateDir: filepath.Join(dir, "state", map[bool]string{false: "single", true: "ha"}[ha]), Kubeconfig: filepath.Join(dir, "kubeconfig"),
			Members: 2, NodesPerMember: 1, PortBase: 31000, PullMembers: []string{MemberName(2)}, HA: ha}
		if err := cfg.Validate(); err != nil {
			t.Fatal(err)
		}
		steps := planOf(t, cfg)
		byName := map[string]*process.Step{}
		ports := map[int]string{}
		for _, s := range steps {
			byName[s.Name] = s
			for _, p := range s.Ports {
				if other, dup := ports[p]; dup {
					t.Errorf("ha %t: port %d used by %s and %s", ha, p, other, s.Name)
				}
				ports[p] = s.Name
				if p < cfg.PortBase || p > cfg.LastPort() {
					t.Errorf("ha %t: %s's port %d is outside %d-%d", ha, s.Name, p, cfg.PortBase, cfg.LastPort())
				}
			}
		}
		replicas := []string{"karmada/etcd-2", "karmada/etcd-3", "karmada/kube-apiserver-2", "karmada/haproxy", "karmada/kube-controller-manager-2",
			"karmada/karmada-controller-manager-2", "karmada/karmada-scheduler-2", "karmada/karmada-webhook-2"}
		for _, name := range replicas {
			if _, ok := byName[name]; ok != ha {
				t.Errorf("ha %t: step %s present: %t", ha, name, ok)
			}
		}
		wantEtcd, wantElect := 1, "false"
		if ha {
			wantEtcd, wantElect = 3, "true"
		}
		// Every API server, the members' too, reaches every etcd member.
		for _, name := range []string{"karmada/kube-apiserver", "member1/kube-apiserver"} {
			if got := strings.Split(argOf(byName[name], "--etcd-servers"), ","); len(got) != wantEtcd {
				t.Errorf("ha %t: %s --etcd-servers=%v, want %d", ha, name, got, wantEtcd)
			}
		}
		if got := strings.Split(argOf(byName["karmada/etcd"], "--initial-cluster"), ","); len(got) != wantEtcd {
			t.Errorf("ha %t: --initial-cluster=%v", ha, got)
		}
		for _, name := range []string{"karmada/karmada-controller-manager", "karmada/karmada-scheduler", "karmada/kube-controller-manager"} {
			if got := argOf(byName[name], "--leader-elect"); got != wantElect {
				t.Errorf("ha %t: %s --leader-elect=%s", ha, name, got)
			}
			if (byName[name].Leader != nil) != ha {
				t.Errorf("ha %t: %s has a leader probe: %t", ha, name, byName[name].Leader != nil)
			}
		}
		// A member's controllers stay alone.
		if got := argOf(byName["member1/kube-controller-manager"], "--leader-elect"); got != "false" {
			t.Errorf("ha %t: member1's kube-controller-manager --leader-elect=%s", ha, got)
		}
		// Clients reach the control plane on the same port either way: the
		// single API server's, or the load balancer's.
		api := NewFleet(cfg).Clusters[0].ports[slotAPIServer]
		owner := "karmada/kube-apiserver"
		if ha {
			owner = "karmada/haproxy"
		}
		if ports[api] != owner {
			t.Errorf("ha %t: the control plane's API port %d belongs to %s, want %s", ha, api, ports[api], owner)
		}
		if !ha {
			continue
		}
		lb, err := os.ReadFile(filepath.Join(cfg.StateDir, ControlPlane, "haproxy.cfg"))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{"karmada/kube-apiserver", "karmada/kube-apiserver-2", "karmada/karmada-webhook", "karmada/karmada-webhook-2"} {
			if want := argOf(byName[s], "--secure-port"); !strings.Contains(string(lb), "127.0.0.1:"+want+"\n") {
				t.Errorf("haproxy.cfg has no server for %s (port %s):\n%s", s, want, lb)
			}
		}
		// The setup that registers the webhooks waits for both, and for the
		// load balancer that reaches them.
		if setup := byName["karmada/setup"]; !slices.Contains(setup.After, "karmada/haproxy") || !slices.Contains(setup.After, "karmada/karmada-webhook-2") {
			t.Errorf("setup runs after %v", setup.After)
		}
	}
}

func TestHAConfigValidation(t *testing.T) {
	dir := t.TempDir()
	base := Config{StateDir: dir, Kubeconfig: filepath.Join(dir, "k"), Members: 3, NodesPerMember: 1, PortBase: 31000, HA: true}
	if err := base.Validate(); err != nil {
		t.Fatal(err)
	}
	c := base
	c.ExternalKarmada = filepath.Join(dir, "other")
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "--ha with --karmada-kubeconfig") {
		t.Errorf("--ha with --karmada-kubeconfig: %v", err)
	}
	// The HA blocks must fit below 65536 too (the clusters' blocks and the
	// components block fit here).
	c = base
	c.PortBase = 65535 - 10*(c.Members+2) + 1
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "65535") {
		t.Errorf("--port-base=%d with --ha: %v, want the range named", c.PortBase, err)
	}
	c.HA = false
	if err := c.Validate(); err != nil {
		t.Errorf("--port-base=%d without --ha: %v", c.PortBase, err)
	}
}

func TestIsEtcdStep(t *testing.T) {
	for name, want := range map[string]bool{"karmada/etcd": true, "karmada/etcd-2": true, "host/etcd": true, "karmada/etcd-auth": false,
		"karmada/kube-apiserver": false, "karmada/etcdx": false} {
		if got := IsEtcdStep(name); got != want {
			t.Errorf("%s: %t", name, got)
		}
	}
}

// The health thresholds reach the controller manager and the agents as
// their flags of the same names, only when given; negative ones are refused.
func TestThresholdsReachTheComponents(t *testing.T) {
	dir := t.TempDir()
	for _, given := range []bool{false, true} {
		cfg := Config{StateDir: filepath.Join(dir, map[bool]string{false: "default", true: "given"}[given]), Kubeconfig: filepath.Join(dir, "kubeconfig"),
			Members: 2, NodesPerMember: 1, PortBase: 31000, PullMembers: []string{MemberName(2)}}
		if given {
			cfg.ClusterFailureThreshold, cfg.ClusterSuccessThreshold = 10*time.Second, 12*time.Second
		}
		if err := cfg.Validate(); err != nil {
			t.Fatal(err)
		}
		for _, s := range planOf(t, cfg) {
			if s.Name != "karmada/karmada-controller-manager" && s.Name != "member2/karmada-agent" {
				continue
			}
			args := strings.Join(s.Args, " ")
			has := strings.Contains(args, "--cluster-failure-threshold=10s") && strings.Contains(args, "--cluster-success-threshold=12s")
			if has != given || (!given && strings.Contains(args, "threshold")) {
				t.Errorf("given %t: %s runs with %s", given, s.Name, args)
			}
		}
	}
	bad := Config{StateDir: dir, Kubeconfig: filepath.Join(dir, "kubeconfig"), Members: 1, NodesPerMember: 1, PortBase: 31000, ClusterFailureThreshold: -time.Second}
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "--cluster-failure-threshold") {
		t.Errorf("a negative threshold: %v", err)
	}
}
