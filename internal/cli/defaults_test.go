package cli_test

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"

	agentapp "github.com/karmada-go/karmada/internal/agent/app"
	"github.com/karmada-go/karmada/internal/cli"
	cmapp "github.com/karmada-go/karmada/internal/controllermanager/app"
	schedapp "github.com/karmada-go/karmada/internal/scheduler/app"
	webhookapp "github.com/karmada-go/karmada/internal/webhook/app"
)

// The unauthenticated endpoints of every binary (metrics, health, pprof)
// listen on loopback unless told otherwise.
func TestEndpointsBindLoopbackByDefault(t *testing.T) {
	for _, cmd := range []*cobra.Command{cmapp.NewCommand(), schedapp.NewCommand(), webhookapp.NewCommand(), agentapp.NewCommand()} {
		for _, name := range []string{"metrics-bind-address", "health-probe-bind-address"} {
			f := cmd.Flags().Lookup(name)
			if f == nil {
				t.Errorf("%s has no --%s", cmd.Name(), name)
				continue
			}
			if !strings.HasPrefix(f.DefValue, "127.0.0.1:") {
				t.Errorf("%s --%s defaults to %q, want a loopback address", cmd.Name(), name, f.DefValue)
			}
		}
		if f := cmd.Flags().Lookup("enable-pprof"); f == nil || f.DefValue != "false" {
			t.Errorf("%s: pprof must be off by default", cmd.Name())
		}
	}
}

// Metrics are served over HTTPS and authenticated unless told otherwise;
// an unauthenticated pprof listens on loopback only.
func TestMetricsSecureByDefault(t *testing.T) {
	for _, cmd := range []*cobra.Command{cmapp.NewCommand(), schedapp.NewCommand(), webhookapp.NewCommand(), agentapp.NewCommand()} {
		if f := cmd.Flags().Lookup("metrics-secure"); f == nil || f.DefValue != "true" {
			t.Errorf("%s: --metrics-secure must default to true", cmd.Name())
		}
	}
	o := &cli.ManagerOptions{KubeAPIQPS: 1, KubeAPIBurst: 1, PprofBindAddress: "0.0.0.0:6060"}
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Errorf("--profiling-bind-address=0.0.0.0:6060 accepted: %v", err)
	}
	for _, ok := range []string{"127.0.0.1:6060", "localhost:6060", "[::1]:6060", ""} {
		o.PprofBindAddress = ok
		if err := o.Validate(); err != nil {
			t.Errorf("--profiling-bind-address=%q refused: %v", ok, err)
		}
	}
	m := cli.MetricsFlags{BindAddress: "127.0.0.1:8080", Secure: false, ClientCAFile: "/etc/hostname"}
	if err := m.Validate(); err == nil {
		t.Error("--client-ca-file without --metrics-secure accepted")
	}
	m = cli.MetricsFlags{BindAddress: "127.0.0.1:8080", Secure: true, CertFile: "/nonexistent/tls.crt", KeyFile: "/nonexistent/tls.key"}
	if err := m.Validate(); err == nil {
		t.Error("a missing metrics certificate accepted")
	}
	m = cli.MetricsFlags{BindAddress: "127.0.0.1:8080", Secure: true, CertFile: "/etc/hostname"}
	if err := m.Validate(); err == nil {
		t.Error("a certificate without its key accepted")
	}
	// The webhook has no API server to review requests unless given one.
	w := &webhookapp.Options{SecurePort: 8443, BindAddress: "127.0.0.1", TLSMinVersion: "1.3", Metrics: cli.MetricsFlags{BindAddress: "127.0.0.1:8080", Secure: true}}
	if err := w.Validate(); err == nil || !strings.Contains(err.Error(), "--kubeconfig") {
		t.Errorf("webhook with secure metrics and no --kubeconfig: %v", err)
	}
}
