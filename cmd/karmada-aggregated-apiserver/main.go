// Command karmada-aggregated-apiserver serves the Cluster API, with its
// status and proxy subresources, behind the karmada-apiserver's aggregation
// layer.
package main

import (
	"os"

	"github.com/karmada-go/karmada/internal/aggregatedapiserver/app"
)

func main() {
	os.Exit(app.Main())
}
