package agent

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/connrotation"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/karmada-go/karmada/internal/atomicfile"
	"github.com/karmada-go/karmada/internal/registration/agentcert"
)

var certExpiry = prometheus.NewGauge(prometheus.GaugeOpts{
	Name: "karmada_agent_certificate_expiration_timestamp_seconds",
	Help: "When the agent's client certificate of the control plane expires (Unix seconds); it is renewed before.",
})

func init() { metrics.Registry.MustRegister(certExpiry) }

// Credentials is the agent's client certificate of the control plane,
// renewed in place: every connection made after a renewal presents the new
// certificate, and the connections made before are closed, so that nothing
// keeps using a certificate about to expire (no restart needed).
type Credentials struct {
	server string
	ca     []byte

	mu      sync.RWMutex
	cert    *tls.Certificate
	leaf    *x509.Certificate
	certPEM []byte
	keyPEM  []byte

	conns *connrotation.ConnectionTracker
}

// RotatingConfig turns a control plane config with client certificate data
// (or files, read once) into one whose certificate can be replaced with
// Renew. A config without a client certificate (a token) is returned as it
// is, with nil Credentials: nothing to rotate.
func RotatingConfig(cfg *rest.Config) (*rest.Config, *Credentials, error) {
	tc := cfg.TLSClientConfig
	certPEM, keyPEM := tc.CertData, tc.KeyData
	var err error
	if len(certPEM) == 0 && tc.CertFile != "" {
		if certPEM, err = os.ReadFile(tc.CertFile); err != nil {
			return nil, nil, err
		}
	}
	if len(keyPEM) == 0 && tc.KeyFile != "" {
		if keyPEM, err = os.ReadFile(tc.KeyFile); err != nil {
			return nil, nil, err
		}
	}
	if len(certPEM) == 0 || len(keyPEM) == 0 {
		return cfg, nil, nil
	}
	ca := tc.CAData
	if len(ca) == 0 && tc.CAFile != "" {
		if ca, err = os.ReadFile(tc.CAFile); err != nil {
			return nil, nil, err
		}
	}
	c := &Credentials{server: cfg.Host, ca: ca, conns: connrotation.NewConnectionTracker()}
	if err := c.set(certPEM, keyPEM); err != nil {
		return nil, nil, fmt.Errorf("the agent's client certificate: %w", err)
	}
	tlsCfg := &tls.Config{
		MinVersion:         tls.VersionTLS12,
		ServerName:         tc.ServerName,
		InsecureSkipVerify: tc.Insecure, //nolint:gosec // as the kubeconfig says
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			c.mu.RLock()
			defer c.mu.RUnlock()
			return c.cert, nil
		},
	}
	if len(ca) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(ca) {
			return nil, nil, errors.New("the kubeconfig's certificate-authority-data holds no certificate")
		}
		tlsCfg.RootCAs = pool
	}
	dial := connrotation.NewDialerWithTracker((&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext, c.conns)
	transport := utilnet.SetTransportDefaults(&http.Transport{
		DialContext:         dial.DialContext,
		TLSClientConfig:     tlsCfg,
		TLSHandshakeTimeout: 10 * time.Second,
		MaxIdleConnsPerHost: 25,
	})
	out := rest.CopyConfig(cfg)
	out.TLSClientConfig = rest.TLSClientConfig{}
	out.Transport = transport
	return out, c, nil
}

func (c *Credentials) set(certPEM, keyPEM []byte) error {
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return err
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.cert, c.leaf, c.certPEM, c.keyPEM = &pair, leaf, certPEM, keyPEM
	c.mu.Unlock()
	certExpiry.Set(float64(leaf.NotAfter.Unix()))
	return nil
}

// Leaf is the certificate in use.
func (c *Credentials) Leaf() *x509.Certificate {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.leaf
}

// Due: the share of the certificate's lifetime left at now is at most
// threshold (0.2: renewed at 80% of its lifetime).
func (c *Credentials) Due(now time.Time, threshold float64) bool {
	leaf := c.Leaf()
	total := leaf.NotAfter.Sub(leaf.NotBefore)
	if total <= 0 {
		return true
	}
	return float64(leaf.NotAfter.Sub(now))/float64(total) <= threshold
}

// Renew installs a new certificate: connections opened from now on present
// it, and those opened before are closed (their requests are retried by
// the clients on new connections).
func (c *Credentials) Renew(certPEM, keyPEM []byte) error {
	if err := c.set(certPEM, keyPEM); err != nil {
		return err
	}
	c.conns.CloseAll()
	return nil
}

// Kubeconfig is the agent's kubeconfig with the certificate in use.
func (c *Credentials) Kubeconfig() ([]byte, error) {
	c.mu.RLock()
	certPEM, keyPEM := c.certPEM, c.keyPEM
	c.mu.RUnlock()
	return agentcert.Kubeconfig(c.server, c.ca, certPEM, keyPEM)
}

// RotationConfig says when and how the agent renews its certificate.
type RotationConfig struct {
	// CheckInterval spaces the checks; Threshold is the share of the
	// lifetime left at which the certificate is renewed.
	CheckInterval time.Duration
	Threshold     float64
	// ExpirationSeconds is asked for the new certificate (0: the
	// lifetime of the one it replaces).
	ExpirationSeconds int32
	// KubeconfigFile, when writable, receives the renewed kubeconfig
	// besides the member Secret (a file of a Secret volume is not).
	KubeconfigFile string
}

// rotate renews the certificate whenever it is due, until ctx ends. A
// failed renewal is retried at the next check (sooner than CheckInterval
// when that is long: the certificate is running out).
func (c *Credentials) rotate(ctx context.Context, karmada *rest.Config, member kubernetes.Interface, cluster string, rc RotationConfig) error {
	log := klog.FromContext(ctx).WithValues("cluster", cluster)
	for {
		wait := rc.CheckInterval
		if c.Due(time.Now(), rc.Threshold) {
			if err := c.renewOnce(ctx, karmada, member, cluster, rc); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				log.Error(err, "Renewing the agent's certificate", "expires", c.Leaf().NotAfter)
				wait = min(wait, time.Minute)
			} else {
				log.Info("Renewed the agent's certificate", "expires", c.Leaf().NotAfter, "serial", c.Leaf().SerialNumber.String())
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
}

func (c *Credentials) renewOnce(ctx context.Context, karmada *rest.Config, member kubernetes.Interface, cluster string, rc RotationConfig) error {
	leaf := c.Leaf()
	exp := rc.ExpirationSeconds
	if exp == 0 {
		// As long as the one it replaces, within what the control plane
		// approves by default (a certificate of an earlier version may
		// have lived a year).
		exp = int32(min(max(leaf.NotAfter.Sub(leaf.NotBefore), 10*time.Minute), agentcert.DefaultMaxLifetime) / time.Second)
	}
	// Within the registration it belongs to ("" for a certificate of an
	// earlier version: the renewal starts one).
	certPEM, keyPEM, err := agentcert.RequestCertificate(ctx, karmada, cluster, agentcert.RegistrationOf(leaf.Subject.Organization), 5*time.Minute, exp)
	if err != nil {
		return err
	}
	if err := c.Renew(certPEM, keyPEM); err != nil {
		return fmt.Errorf("the renewed certificate: %w", err)
	}
	kubeconfig, err := c.Kubeconfig()
	if err != nil {
		return err
	}
	// Kept where the agent is started from next time. In use already:
	// failing to keep it is reported, not a failed renewal.
	if err := agentcert.WriteSecret(ctx, member, cluster, kubeconfig, false); err != nil {
		klog.FromContext(ctx).Error(err, "Keeping the renewed certificate in the member's Secret (the agent uses it until it restarts)")
	}
	if rc.KubeconfigFile != "" {
		if err := writeFileAtomic(rc.KubeconfigFile, kubeconfig); err != nil {
			klog.FromContext(ctx).V(1).Info("Not rewriting --karmada-kubeconfig (the member Secret holds the renewed certificate)", "file", rc.KubeconfigFile, "err", err.Error())
		}
	}
	return nil
}

// writeFileAtomic replaces path with data (mode 0600) by renaming a file
// written beside it, so that a crash leaves the old or the new one.
func writeFileAtomic(path string, data []byte) error {
	st, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file (a Secret volume?)", path)
	}
	return atomicfile.Write(path, data, 0o600)
}
