package integration

import (
	"fmt"
	"os"
	"testing"

	"github.com/karmada-go/karmada/internal/features"
	"github.com/karmada-go/karmada/internal/localup/plan"
)

// TestMain runs the in-process controllers with the feature gates the local
// fleet's controller managers and estimators run with (beyond Karmada's
// defaults: preemption, state preservation, multi-component scheduling,
// quotas in estimates), so what is tested here is what the fleet does.
func TestMain(m *testing.M) {
	if err := features.Gate.Set(plan.LocalControllerManagerGates + ",ResourceQuotaEstimate=true"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}
