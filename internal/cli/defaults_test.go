package cli_test

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"

	cmapp "github.com/karmada-go/karmada/internal/controllermanager/app"
	schedapp "github.com/karmada-go/karmada/internal/scheduler/app"
	webhookapp "github.com/karmada-go/karmada/internal/webhook/app"
)

// The unauthenticated endpoints of every binary (metrics, health, pprof)
// listen on loopback unless told otherwise.
func TestEndpointsBindLoopbackByDefault(t *testing.T) {
	for _, cmd := range []*cobra.Command{cmapp.NewCommand(), schedapp.NewCommand(), webhookapp.NewCommand()} {
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
