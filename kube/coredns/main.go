// Command coredns is CoreDNS, built from its pinned Go module with only the
// plugins a cluster's DNS needs, for the host cluster of
// `karmada-local host`.
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	// The plugins of a cluster DNS Corefile; each registers itself.
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/forward"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/loop"
	_ "github.com/coredns/coredns/plugin/metrics"
	_ "github.com/coredns/coredns/plugin/ready"
	_ "github.com/coredns/coredns/plugin/reload"
)

// directives are the plugins above in the order CoreDNS runs them (its
// plugin.cfg order); a Corefile may use no others.
var directives = []string{"reload", "ready", "health", "prometheus", "errors", "log", "loadbalance", "cache", "kubernetes", "loop", "forward"}

func main() {
	dnsserver.Directives = directives
	coremain.Run()
}
