package images

import "path/filepath"

// Karmada's images put their binary in /bin; Kubernetes' and etcd's in
// /usr/local/bin. Ours follow Karmada's, so that commands written for
// Karmada's chart (`/bin/karmada-controller-manager`) work unchanged.
const ourDir = "/bin/"

// Ours are the binaries of this repository shipped as images.
var Ours = []string{"karmada-controller-manager", "karmada-scheduler", "karmada-scheduler-estimator", "karmada-descheduler", "karmada-webhook", "karmada-aggregated-apiserver", "karmada-search", "karmada-metrics-adapter", "karmada-agent", "karmadactl", "karmada-local", "karmada-bench"}

// Upstream are the pinned upstream binaries the chart runs.
var Upstream = []string{"kube-apiserver", "kube-controller-manager", "etcd"}

// HostCluster are the images the host cluster of karmada-local host needs
// beside the chart's: the pod sandbox and cluster DNS.
var HostCluster = []string{"pause", "coredns"}

// Catalog returns the spec of every image, reading our binaries (and
// pause) from binDir and the upstream ones (and CoreDNS) from upstreamDir.
func Catalog(binDir, upstreamDir string) []Spec {
	var out []Spec
	for _, n := range Ours {
		out = append(out, Spec{Name: n, Binary: filepath.Join(binDir, n), Path: ourDir + n})
	}
	for _, n := range Upstream {
		out = append(out, Spec{Name: n, Binary: filepath.Join(upstreamDir, n), Path: "/usr/local/bin/" + n})
	}
	out = append(out,
		Spec{Name: "pause", Binary: filepath.Join(binDir, "pause"), Path: "/pause"},
		Spec{Name: "coredns", Binary: filepath.Join(upstreamDir, "coredns"), Path: "/coredns"})
	return out
}
