// Command karmada-scheduler places bindings on member clusters.
package main

import (
	"os"

	"github.com/karmada-go/karmada/internal/scheduler/app"
)

func main() {
	os.Exit(app.Main())
}
