// Command karmada-controller-manager runs the Karmada control plane's controllers.
package main

import (
	"os"

	"github.com/karmada-go/karmada/internal/controllermanager/app"
)

func main() {
	os.Exit(app.Main())
}
