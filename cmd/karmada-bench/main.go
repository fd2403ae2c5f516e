// Command karmada-bench measures a Karmada-API control plane through its API
// and its member clusters' APIs.
package main

import (
	"os"

	"github.com/karmada-go/karmada/internal/bench/app"
)

func main() {
	os.Exit(app.Main())
}
