package register

import (
	"bytes"
	"strings"
	"testing"

	"github.com/karmada-go/karmada/internal/karmadactl/options"
)

// Karmada's register flags: accepted when they ask for what register does,
// refused with the reason otherwise, before anything is reached.
func TestUpstreamFlags(t *testing.T) {
	base := []string{"127.0.0.1:1", "--token", "abcdef.0123456789abcdef", "--discovery-token-ca-cert-hash", "sha256:" + strings.Repeat("a", 64),
		"--cluster-name", "member4", "--kubeconfig", "/nonexistent"}
	for _, c := range []struct {
		args []string
		want string
	}{
		// Accepted: the run goes on to the member's kubeconfig (a file that
		// does not exist).
		{[]string{"-n", "karmada-system", "--cluster-namespace", "karmada-cluster", "--enable-cert-rotation"}, "reaching the member cluster"},
		{[]string{"--enable-cert-rotation=true", "--dry-run"}, "reaching the member cluster"},
		// Refused, with the reason.
		{[]string{"--namespace", "agents"}, `--namespace "agents": the agent's objects live in karmada-system`},
		{[]string{"--cluster-namespace", "secrets"}, `--cluster-namespace "secrets": the control plane keeps member clusters' Secrets in karmada-cluster only`},
		{[]string{"--enable-cert-rotation=false"}, "the agent always renews its certificate"},
		{[]string{"--discovery-token-unsafe-skip-ca-verification"}, "anyone holding the token could pose as the control plane"},
		{[]string{"--proxy-server-address", "http://proxy:3128"}, "--proxy-server-address: not supported"},
		{[]string{"--feature-gates", "Failover=true"}, "give --karmada-agent-image too"},
	} {
		g := &options.Global{}
		cmd := NewCommand(g)
		g.AddFlags(cmd.PersistentFlags())
		var out bytes.Buffer
		cmd.SetOut(&out)
		cmd.SetErr(&out)
		cmd.SetArgs(append(append([]string{}, base...), c.args...))
		err := cmd.Execute()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("register %v: %v, want an error with %q", c.args, err, c.want)
		}
	}
}
