// Command karmada-agent runs a pull-mode member cluster's side of Karmada.
package main

import (
	"os"

	"github.com/karmada-go/karmada/internal/agent/app"
)

func main() {
	os.Exit(app.Main())
}
