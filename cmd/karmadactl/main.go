// Command karmadactl manages a Karmada control plane's member clusters. The
// same binary installed as kubectl-karmada is a kubectl plugin.
package main

import (
	"os"

	"github.com/karmada-go/karmada/internal/karmadactl/app"
)

func main() {
	os.Exit(app.Run())
}
