package images

import "path/filepath"

// Karmada's images put their binary in /bin; Kubernetes' and etcd's in
// /usr/local/bin. Ours follow Karmada's, so that commands written for
// Karmada's chart (`/bin/karmada-controller-manager`) work unchanged.
const (
	ourDir      = "/bin/"
	upstreamDir = "/usr/local/bin/"
)

// Ours are the binaries of this repository shipped as images.
var Ours = []string{"karmada-controller-manager", "karmada-scheduler", "karmada-webhook", "karmada-agent", "karmadactl", "karmada-local", "karmada-bench"}

// Upstream are the pinned upstream binaries the chart runs.
var Upstream = []string{"kube-apiserver", "kube-controller-manager", "etcd"}

// HostCluster are the images the host cluster of karmada-local host needs
// beside the chart's: the pod sandbox and cluster DNS.
var HostCluster = []string{"pause", "coredns"}

// Catalog returns the spec of every image, reading binaries from binDir.
func Catalog(binDir string) []Spec {
	var out []Spec
	for _, n := range Ours {
		out = append(out, Spec{Name: n, Binary: filepath.Join(binDir, n), Path: ourDir + n})
	}
	for _, n := range Upstream {
		out = append(out, Spec{Name: n, Binary: filepath.Join(binDir, n), Path: upstreamDir + n})
	}
	for _, n := range HostCluster {
		out = append(out, Spec{Name: n, Binary: filepath.Join(binDir, n), Path: "/" + n})
	}
	return out
}
