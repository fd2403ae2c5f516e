// Command karmada-search serves search.karmada.io/v1alpha1 behind the
// karmada-apiserver's aggregation layer: ResourceRegistries, a cache of
// what they select from the member clusters, and a proxy over it.
package main

import (
	"os"

	"github.com/karmada-go/karmada/internal/search/app"
)

func main() {
	os.Exit(app.Main())
}
