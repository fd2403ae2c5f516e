// Command kubelet is the upstream Kubernetes node agent, built from the
// pinned k8s.io/kubernetes module. Only the host cluster of
// `karmada-local host` runs it: the local fleet's members use kwok nodes.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client metrics
	_ "k8s.io/component-base/metrics/prometheus/version"  // version metric
	"k8s.io/kubernetes/cmd/kubelet/app"
)

func main() {
	os.Exit(cli.Run(app.NewKubeletCommand()))
}
