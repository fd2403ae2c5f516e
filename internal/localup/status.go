package localup

import (
	"context"

	"github.com/karmada-go/karmada/internal/localup/process"
)

// Status reports every process of the recorded fleet.
func Status(ctx context.Context, stateDir, binDir string) ([]process.ComponentStatus, error) {
	f, err := fleetFromState(stateDir, binDir)
	if err != nil {
		return nil, err
	}
	steps, err := f.Steps()
	if err != nil {
		return nil, err
	}
	return process.StatusOf(ctx, stateDir, steps)
}
