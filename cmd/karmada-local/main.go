// Command karmada-local runs a whole Karmada fleet on this machine.
package main

import (
	"os"

	"github.com/karmada-go/karmada/internal/karmadalocal/app"
)

func main() {
	os.Exit(app.Run())
}
