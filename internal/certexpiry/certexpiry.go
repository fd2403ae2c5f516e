// Package certexpiry exports when the certificates a component relies on
// expire, as karmada_certificate_expiration_timestamp_seconds{certificate,
// usage}: the files it was given (its client certificate, its serving
// certificates, the CAs it trusts), read again at every scrape so that a
// renewed file shows at once, and the serving certificate each API server
// it talks to presented on the last response (usage "peer"). One alert rule
// (deploy/monitoring) covers every certificate of the fleet that way.
package certexpiry

import (
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/rest"
	certutil "k8s.io/client-go/util/cert"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// KarmadaAPIServer names the control plane's API server in the metric.
const KarmadaAPIServer = "karmada-apiserver"

// Usages, the usage label's values.
const (
	Client  = "client"
	Serving = "serving"
	CA      = "ca"
	// Peer is the serving certificate of a server this component calls.
	Peer = "peer"
)

var desc = prometheus.NewDesc("karmada_certificate_expiration_timestamp_seconds",
	"When a certificate this component uses expires (Unix seconds): its own client and serving certificates and the CAs it trusts (read from their files at every scrape), and the serving certificate of each API server it calls (usage peer, from the last response).",
	[]string{"certificate", "usage"}, nil)

type fileKey struct{ name, usage, path string }

type collector struct {
	mu    sync.Mutex
	files map[fileKey]struct{}
	// fixed are embedded certificates' expiries.
	fixed map[fileKey]time.Time
	// peers maps a peer's name to its last serving certificate's NotAfter.
	peers sync.Map // string -> *atomic.Int64
}

var (
	c            = &collector{files: map[fileKey]struct{}{}, fixed: map[fileKey]time.Time{}}
	registerOnce sync.Once
)

// registered returns the collector, registered the first time.
func registered() *collector {
	registerOnce.Do(func() { metrics.Registry.MustRegister(c) })
	return c
}

// File exports the expiry of the first certificate in path under name and
// usage (empty path: nothing). A file that cannot be read is left out of
// that scrape.
func File(name, usage, path string) {
	if path == "" {
		return
	}
	c := registered()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.files[fileKey{name, usage, path}] = struct{}{}
}

// Config exports the certificates of a client configuration (its client
// certificate and the CA it trusts, from their files or, embedded, as they
// are) under name, and records the serving certificate of the server it
// calls (Wrap).
func Config(name string, cfg *rest.Config) {
	File(name, Client, cfg.CertFile)
	File(name, CA, cfg.CAFile)
	if cfg.CertFile == "" {
		data(name, Client, cfg.CertData)
	}
	if cfg.CAFile == "" {
		data(name, CA, cfg.CAData)
	}
	cfg.Wrap(Wrap(name))
}

// data exports an embedded certificate's expiry (nothing when absent).
func data(name, usage string, pemData []byte) {
	if len(pemData) == 0 {
		return
	}
	certs, err := certutil.ParseCertsPEM(pemData)
	if err != nil {
		return
	}
	c := registered()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fixed[fileKey{name: name, usage: usage}] = certs[0].NotAfter
}

// Wrap returns rt recording the serving certificate of every TLS response
// under peer name (usage Peer).
func Wrap(name string) func(http.RoundTripper) http.RoundTripper {
	v, _ := registered().peers.LoadOrStore(name, &atomic.Int64{})
	notAfter := v.(*atomic.Int64)
	return func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper{next: rt, notAfter: notAfter}
	}
}

type roundTripper struct {
	next     http.RoundTripper
	notAfter *atomic.Int64
}

func (r roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.next.RoundTrip(req)
	if err == nil && resp.TLS != nil && len(resp.TLS.PeerCertificates) > 0 {
		if t := resp.TLS.PeerCertificates[0].NotAfter.Unix(); r.notAfter.Load() != t {
			r.notAfter.Store(t)
		}
	}
	return resp, err
}

func (r roundTripper) WrappedRoundTripper() http.RoundTripper { return r.next }

func (*collector) Describe(ch chan<- *prometheus.Desc) { ch <- desc }

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	files := make([]fileKey, 0, len(c.files))
	for k := range c.files {
		files = append(files, k)
	}
	for k, t := range c.fixed {
		ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, float64(t.Unix()), k.name, k.usage)
	}
	c.mu.Unlock()
	for _, k := range files {
		if certs, err := certutil.CertsFromFile(k.path); err == nil {
			ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, float64(certs[0].NotAfter.Unix()), k.name, k.usage)
		}
	}
	c.peers.Range(func(name, v any) bool {
		if t := v.(*atomic.Int64).Load(); t != 0 {
			ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, float64(t), name.(string), Peer)
		}
		return true
	})
}
