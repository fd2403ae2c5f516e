// Command karmada-descheduler moves replicas that stay unschedulable in a
// member cluster to clusters where they fit.
package main

import (
	"os"

	"github.com/karmada-go/karmada/internal/descheduler/app"
)

func main() { os.Exit(app.Main()) }
