// Command karmada-scheduler-estimator estimates, node by node, how many
// replicas one member cluster can still run, for karmada-scheduler.
package main

import (
	"os"

	"github.com/karmada-go/karmada/internal/estimator/app"
)

func main() { os.Exit(app.Main()) }
