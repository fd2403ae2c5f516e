// Package clusterclient builds clients for member clusters from their Cluster
// objects and the credentials Secret the Cluster refers to.
package clusterclient

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	"github.com/karmada-go/karmada/internal/names"
)

// Keys of the credentials Secret, as karmadactl join writes them.
const (
	SecretTokenKey    = "token"
	SecretCABundleKey = "caBundle"
)

// Options tune the clients built for members.
type Options struct {
	QPS     float32
	Burst   int
	Timeout time.Duration
	// Static gives the configuration of clusters reached otherwise than
	// through a Cluster's credentials Secret: a karmada-agent's own member.
	Static map[string]*rest.Config
}

// Side is the side of the fleet a member-facing controller (execution,
// workStatus, clusterStatus) runs on. The control plane runs them for its
// push-mode members; a karmada-agent runs them for its own pull-mode
// cluster, with less to read in the control plane (no bindings) and the
// member's rights of the pull grant. The zero Side is the control plane.
type Side uint8

const (
	// ControlPlane runs in karmada-controller-manager for the push-mode
	// members.
	ControlPlane Side = iota
	// Agent runs in a karmada-agent for its own pull-mode cluster.
	Agent
)

// Serves reports whether a controller on this side acts for cluster c:
// the control plane for push-mode clusters, an agent for pull-mode ones.
func (s Side) Serves(c *clusterv1alpha1.Cluster) bool {
	return (c.Spec.SyncMode == clusterv1alpha1.Pull) == (s == Agent)
}

// RESTConfig returns the configuration that reaches a push-mode member with
// the token and CA bundle of its Secret, read through c (the control plane).
func RESTConfig(ctx context.Context, c client.Reader, cluster *clusterv1alpha1.Cluster, opts Options) (*rest.Config, error) {
	if cluster.Spec.APIEndpoint == "" {
		return nil, fmt.Errorf("cluster %s has no spec.apiEndpoint", cluster.Name)
	}
	ref := cluster.Spec.SecretRef
	if ref == nil {
		return nil, fmt.Errorf("cluster %s has no spec.secretRef", cluster.Name)
	}
	if ref.Namespace != names.ClusterNamespace {
		// Whoever may write a Cluster must not be able to have its token
		// sent anywhere: credentials live in karmada-cluster only (the
		// webhook refuses such a Cluster too).
		return nil, fmt.Errorf("cluster %s: spec.secretRef names a Secret in %q; member credentials are read from %q only", cluster.Name, ref.Namespace, names.ClusterNamespace)
	}
	secret := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, secret); err != nil {
		return nil, fmt.Errorf("reading credentials %s/%s of cluster %s: %w", ref.Namespace, ref.Name, cluster.Name, err)
	}
	token := string(secret.Data[SecretTokenKey])
	if token == "" {
		return nil, fmt.Errorf("credentials %s/%s of cluster %s have no %q", ref.Namespace, ref.Name, cluster.Name, SecretTokenKey)
	}
	cfg := &rest.Config{
		Host:        cluster.Spec.APIEndpoint,
		BearerToken: token,
		QPS:         opts.QPS,
		Burst:       opts.Burst,
		Timeout:     opts.Timeout,
	}
	if cluster.Spec.InsecureSkipTLSVerification {
		cfg.TLSClientConfig.Insecure = true
	} else {
		ca := secret.Data[SecretCABundleKey]
		if len(ca) == 0 {
			return nil, fmt.Errorf("credentials %s/%s of cluster %s have no %q and the cluster does not skip TLS verification", ref.Namespace, ref.Name, cluster.Name, SecretCABundleKey)
		}
		cfg.TLSClientConfig.CAData = ca
	}
	if cluster.Spec.ProxyURL != "" {
		u, err := url.Parse(cluster.Spec.ProxyURL)
		if err != nil {
			return nil, fmt.Errorf("cluster %s has an invalid spec.proxyURL %q: %w", cluster.Name, cluster.Spec.ProxyURL, err)
		}
		cfg.Proxy = http.ProxyURL(u)
	}
	return cfg, nil
}
