// Command karmada-webhook admits Karmada objects: validation, defaulting and
// the conversion of bindings between v1alpha1 and v1alpha2.
package main

import (
	"os"

	"github.com/karmada-go/karmada/internal/webhook/app"
)

func main() {
	os.Exit(app.Main())
}
