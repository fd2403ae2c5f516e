//go:build hae2e

package hae2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/karmada-go/karmada/internal/testenv"
)

// etcdClient is a client of every etcd member, as etcd's root.
func etcdClient(t *testing.T, endpoints []string) *clientv3.Client {
	t.Helper()
	pki := filepath.Join(fleet.StateDir, "etcd", "pki")
	pair, err := tls.LoadX509KeyPair(filepath.Join(pki, "root-client.crt"), filepath.Join(pki, "root-client.key"))
	if err != nil {
		t.Fatal(err)
	}
	ca, err := os.ReadFile(filepath.Join(pki, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 5 * time.Second, Logger: zap.NewNop(),
		TLS: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cli.Close() })
	return cli
}

// The etcd leader dies while templates propagate: the other two elect
// another, writes continue, and every template converges.
func TestKillEtcdLeader(t *testing.T) {
	s := startScenario(t, "etcd")
	ctx := context.Background()
	endpoints := map[string]string{}
	var all []string
	for _, st := range status(t) {
		if st.Name == "karmada/etcd" || strings.HasPrefix(st.Name, "karmada/etcd-") && st.Name != "karmada/etcd-auth" {
			endpoints[st.Name] = fmt.Sprintf("https://127.0.0.1:%d", st.Ports[0])
			all = append(all, endpoints[st.Name])
		}
	}
	if len(endpoints) != 3 {
		t.Fatalf("etcd members: %v, want 3", endpoints)
	}
	cli := etcdClient(t, all)
	var leader string
	for name, ep := range endpoints {
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		st, err := cli.Status(sctx, ep)
		cancel()
		if err != nil {
			t.Fatalf("etcd status of %s: %v", name, err)
		}
		if st.Header.MemberId == st.Leader {
			leader = name
		}
	}
	if leader == "" {
		t.Fatal("no etcd member is the leader")
	}
	created := s.created.Load()
	s.kill(leader)
	killed := time.Now()
	testenv.Eventually(t, time.Minute, "a write to the control plane after the etcd leader died", func(context.Context) error {
		s.heartbeat.mu.Lock()
		defer s.heartbeat.mu.Unlock()
		if !s.heartbeat.last.After(killed) {
			return fmt.Errorf("no write since %s", killed.Format(time.TimeOnly))
		}
		return nil
	})
	s.converged(3 * time.Minute)
	gap, failures := s.heartbeat.longestGap()
	t.Logf("ETCD %s (the leader) killed when %d/%d templates were created; longest time without a write %s (%d writes failed)", leader, created, templates, gap.Round(100*time.Millisecond), failures)
	if gap > 20*time.Second {
		t.Errorf("the control plane took no write for %s after the etcd leader died", gap)
	}
}

// One karmada-apiserver dies while templates propagate: the balancer sends
// everyone to the other, and every component keeps working (the push
// member's copies through the controller manager, the pull member's
// through its agent).
func TestKillKarmadaAPIServer(t *testing.T) {
	s := startScenario(t, "apiserver")
	created := s.created.Load()
	s.kill("karmada/kube-apiserver")
	s.converged(3 * time.Minute)
	gap, failures := s.heartbeat.longestGap()
	t.Logf("APISERVER karmada/kube-apiserver killed when %d/%d templates were created; longest time without a write %s (%d writes failed)", created, templates, gap.Round(100*time.Millisecond), failures)
	if gap > 20*time.Second {
		t.Errorf("the control plane took no write for %s after one of its API servers died", gap)
	}
	for _, st := range status(t) {
		if st.Name == "karmada/kube-apiserver-2" && !st.Healthy {
			t.Errorf("the other karmada-apiserver is not healthy: %s", st.Problem)
		}
	}
}

// The leading controller manager is paused (SIGSTOP) for longer than its
// lease: the other takes over, and when the paused one resumes it finds
// its lease gone and exits instead of acting as a second leader.
func TestPausedLeaderStepsDown(t *testing.T) {
	s := startScenario(t, "paused")
	ctx := context.Background()
	const component = "karmada-controller-manager"
	before, err := holder(ctx, s.karmada, component)
	if err != nil {
		t.Fatal(err)
	}
	leader := leaderOf(t, component)
	paused, created := time.Now(), s.created.Load()
	if err := syscall.Kill(leader.PID, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	resumed := false
	defer func() {
		if !resumed {
			_ = syscall.Kill(leader.PID, syscall.SIGCONT)
		}
	}()
	took := takeover(t, s.karmada, component, before, paused)
	t.Logf("PAUSE %s stopped (SIGSTOP) when %d/%d templates were created; the other replica leads %s later", leader.Name, created, templates, took.Round(100*time.Millisecond))
	// Paused past its lease and its renew deadline by a margin.
	if wait := leaseDuration + 5*time.Second - time.Since(paused); wait > 0 {
		time.Sleep(wait) // the pause itself is what is tested: its length, not a synchronisation
	}
	if err := syscall.Kill(leader.PID, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	resumed = true
	s.stopped = append(s.stopped, leader.Name)
	cont := time.Now()
	testenv.Eventually(t, 30*time.Second, leader.Name+" exiting after it resumed", func(context.Context) error {
		if processAlive(leader.PID) {
			return fmt.Errorf("pid %d still runs", leader.PID)
		}
		return nil
	})
	t.Logf("PAUSE %s exited %s after it resumed (paused %s)", leader.Name, time.Since(cont).Round(100*time.Millisecond), cont.Sub(paused).Round(100*time.Millisecond))
	log, _ := os.ReadFile(filepath.Join(fleet.StateDir, "logs", leader.Name+".log"))
	after := string(log[max(0, len(log)-200000):])
	if !strings.Contains(after, "leader election lost") {
		t.Errorf("%s's log does not end with the loss of its election:\n%s", leader.Name, tail(string(log), 10))
	}
	t.Logf("PAUSE %s's fence refused %d writes after it resumed", leader.Name, strings.Count(after, "Write refused by the leader fence"))
	if h, err := holder(ctx, s.karmada, component); err != nil || h == before {
		t.Errorf("lease %s held by %q (%v) after the paused leader resumed, want the other replica", component, h, err)
	}
	s.converged(3 * time.Minute)
}

func processAlive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command name in parentheses; a zombie is gone.
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}
