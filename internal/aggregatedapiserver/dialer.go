package aggregatedapiserver

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	"github.com/karmada-go/karmada/internal/aggregatedapiserver/registry/cluster"
	"github.com/karmada-go/karmada/internal/clusters/clusterclient"
	"github.com/karmada-go/karmada/internal/names"
)

// secretDialer reaches members with the credentials of their Cluster's
// Secrets in karmada-cluster (read from an informer): the impersonator's
// token, the member's CA bundle. One transport per member and set of
// settings, kept while they do not change, so connections are reused.
type secretDialer struct {
	secrets corelisters.SecretNamespaceLister

	mu         sync.Mutex
	transports map[string]cachedTransport
}

type cachedTransport struct {
	key string
	rt  http.RoundTripper
}

// NewSecretDialer returns a dialer of members reading their credentials
// from secrets (karmada-search forwards writes with it too).
func NewSecretDialer(secrets corelisters.SecretLister) cluster.Dialer {
	return &secretDialer{secrets: secrets.Secrets(names.ClusterNamespace), transports: map[string]cachedTransport{}}
}

// unavailable is the error of a member the proxy cannot reach as configured.
func unavailable(format string, args ...any) error {
	return apierrors.NewServiceUnavailable(fmt.Sprintf(format, args...))
}

func (d *secretDialer) Dial(_ context.Context, c *clusterv1alpha1.Cluster) (*cluster.Connection, error) {
	if c.Spec.SyncMode == clusterv1alpha1.Pull && c.Spec.ProxyURL == "" {
		return nil, unavailable("cluster %s is in Pull mode: the control plane reaches its API only through spec.proxyURL, which is not set", c.Name)
	}
	if c.Spec.APIEndpoint == "" {
		return nil, unavailable("cluster %s has no spec.apiEndpoint", c.Name)
	}
	endpoint, err := url.Parse(c.Spec.APIEndpoint)
	if err != nil || endpoint.Host == "" {
		return nil, unavailable("cluster %s has an invalid spec.apiEndpoint %q", c.Name, c.Spec.APIEndpoint)
	}
	ref := c.Spec.ImpersonatorSecretRef
	if ref == nil {
		return nil, unavailable("cluster %s has no spec.impersonatorSecretRef: join it again with this version of karmadactl to proxy to it", c.Name)
	}
	imp, err := d.secret(c, "impersonatorSecretRef", ref)
	if err != nil {
		return nil, err
	}
	token := string(imp.Data[clusterclient.SecretTokenKey])
	if token == "" {
		return nil, unavailable("the impersonator Secret %s/%s of cluster %s has no %q", ref.Namespace, ref.Name, c.Name, clusterclient.SecretTokenKey)
	}
	ca := imp.Data[clusterclient.SecretCABundleKey]
	if len(ca) == 0 && !c.Spec.InsecureSkipTLSVerification && c.Spec.SecretRef != nil {
		creds, err := d.secret(c, "secretRef", c.Spec.SecretRef)
		if err != nil {
			return nil, err
		}
		ca = creds.Data[clusterclient.SecretCABundleKey]
	}
	if len(ca) == 0 && !c.Spec.InsecureSkipTLSVerification {
		return nil, unavailable("cluster %s: no CA bundle to verify its API server with (caBundle in its Secrets) and it does not skip TLS verification", c.Name)
	}
	rt, err := d.transport(c, ca)
	if err != nil {
		return nil, err
	}
	return &cluster.Connection{Endpoint: endpoint, Transport: rt, Token: token}, nil
}

// secret reads a Secret a Cluster names, from karmada-cluster only: whoever
// may write a Cluster must not be able to point the proxy at another
// namespace's Secrets.
func (d *secretDialer) secret(c *clusterv1alpha1.Cluster, field string, ref *clusterv1alpha1.LocalSecretReference) (*corev1.Secret, error) {
	if ref.Namespace != names.ClusterNamespace {
		return nil, unavailable("cluster %s: spec.%s names a Secret in %q; member credentials are read from %q only", c.Name, field, ref.Namespace, names.ClusterNamespace)
	}
	s, err := d.secrets.Get(ref.Name)
	if err != nil {
		return nil, unavailable("cluster %s: reading its Secret %s/%s: %v", c.Name, ref.Namespace, ref.Name, err)
	}
	return s, nil
}

// transport is the member's transport: its CA, the proxy of proxyURL with
// proxyHeader; reused while they are unchanged.
func (d *secretDialer) transport(c *clusterv1alpha1.Cluster, ca []byte) (http.RoundTripper, error) {
	headers := make([]string, 0, len(c.Spec.ProxyHeader))
	for k, v := range c.Spec.ProxyHeader {
		headers = append(headers, k+"="+v)
	}
	sort.Strings(headers)
	key := strings.Join([]string{c.Spec.APIEndpoint, string(ca), fmt.Sprint(c.Spec.InsecureSkipTLSVerification), c.Spec.ProxyURL, strings.Join(headers, "\x00")}, "\x00")
	d.mu.Lock()
	defer d.mu.Unlock()
	if t, ok := d.transports[c.Name]; ok && t.key == key {
		return t.rt, nil
	}
	cfg := &rest.Config{Host: c.Spec.APIEndpoint}
	if c.Spec.InsecureSkipTLSVerification {
		cfg.TLSClientConfig.Insecure = true
	} else {
		cfg.TLSClientConfig.CAData = ca
	}
	tlsCfg, err := rest.TLSConfigFor(cfg)
	if err != nil {
		return nil, unavailable("cluster %s: %v", c.Name, err)
	}
	t := &http.Transport{TLSClientConfig: tlsCfg}
	if c.Spec.ProxyURL != "" {
		u, err := url.Parse(c.Spec.ProxyURL)
		if err != nil {
			return nil, unavailable("cluster %s has an invalid spec.proxyURL %q", c.Name, c.Spec.ProxyURL)
		}
		header := http.Header{}
		for k, v := range c.Spec.ProxyHeader {
			header.Set(k, v)
		}
		// The tunnel is the transport's dialer, not its Proxy: exec and
		// attach upgrades dial with the dialer and ignore Proxy.
		dial, err := tunnelDialer(u, header)
		if err != nil {
			return nil, unavailable("cluster %s: spec.proxyURL: %v", c.Name, err)
		}
		t.DialContext = dial
		t.Proxy = func(*http.Request) (*url.URL, error) { return nil, nil }
	}
	// An *http.Transport, not wrapped: exec and attach upgrades read its TLS
	// settings and dialer.
	rt := utilnet.SetTransportDefaults(t)
	d.transports[c.Name] = cachedTransport{key: key, rt: rt}
	return rt, nil
}
