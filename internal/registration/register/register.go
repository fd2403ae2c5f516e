// Package register registers a member cluster with the Karmada control plane
// in pull mode, run against the member: what `karmadactl register`
// (internal/karmadactl/register) and karmada-local run.
// It trusts the control plane by a bootstrap token and the hash of its CA
// (no insecure skip): kube-public/cluster-info is read, its signature with
// the token checked, and the CA it names compared with the hash. The token
// then serves only to request the agent's client certificate, which the
// control plane's agentcsrapproving controller approves; the agent's
// kubeconfig goes into the member's Secret karmada-system/karmada-kubeconfig.
package register

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	jws "k8s.io/cluster-bootstrap/token/jws"
	bootstraputil "k8s.io/cluster-bootstrap/token/util"
	"k8s.io/component-base/featuregate"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	"github.com/karmada-go/karmada/internal/clusters/memberrights"
	"github.com/karmada-go/karmada/internal/features"
	"github.com/karmada-go/karmada/internal/names"
	"github.com/karmada-go/karmada/internal/registration/agentcert"
	"github.com/karmada-go/karmada/internal/registration/token"
)

// Where the agent's kubeconfig goes in the member, as Karmada keeps it.
const (
	AgentNamespace  = agentcert.Namespace
	AgentSecretName = agentcert.SecretName
	AgentSecretKey  = agentcert.SecretKey
)

var caHashRE = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// DefaultCertExpirationSeconds is the lifetime register asks for the
// agent's certificate: a week (the most the control plane approves by
// default), renewed by the agent at 80% of it.
const DefaultCertExpirationSeconds = 7 * 24 * 3600

// Options is what register needs.
type Options struct {
	// Endpoint is the karmada-apiserver's host:port.
	Endpoint    string
	Token       string
	CACertHash  string
	ClusterName string
	// Timeout bounds the discovery and the wait for the certificate.
	Timeout time.Duration
	// CertExpirationSeconds is the lifetime asked for the agent's
	// certificate.
	CertExpirationSeconds int32
	// Agent is what the agent may do in the member and how it is
	// installed there (its ClusterName is ClusterName's).
	Agent AgentMember
	// DryRun checks everything register would check (the member, what
	// it holds already, the control plane's cluster-info against the token
	// and the CA hash) and writes nothing.
	DryRun bool
}

// Validate checks the options before anything is touched.
func (o *Options) Validate() error {
	if _, _, err := net.SplitHostPort(o.Endpoint); err != nil {
		return fmt.Errorf("the control plane's endpoint %q must be host:port (as token create --print-register-command prints it): %w", o.Endpoint, err)
	}
	if o.Token != "" || o.CACertHash != "" {
		if err := o.validateBootstrap(); err != nil {
			return err
		}
	}
	if errs := names.ClusterNameErrors(o.ClusterName); len(errs) > 0 {
		return fmt.Errorf("--cluster-name %q is invalid: %s", o.ClusterName, errs[0])
	}
	if o.Agent.ClusterAdmin && len(o.Agent.PropagateKinds) > 0 {
		return errors.New("--propagate-kinds and --cluster-admin: choose one (--cluster-admin grants every kind)")
	}
	if len(o.Agent.PropagateKinds) > 0 {
		if _, err := memberrights.ParseKinds(o.Agent.PropagateKinds); err != nil {
			return err
		}
	}
	if o.CertExpirationSeconds != 0 && o.CertExpirationSeconds < 600 {
		return fmt.Errorf("--cert-expiration-seconds=%d: must be at least 600 (the signer's minimum)", o.CertExpirationSeconds)
	}
	if o.Agent.Replicas < 0 || o.Agent.Replicas > 1 {
		return fmt.Errorf("--karmada-agent-replicas=%d: must be 0 or 1 (two agents of one cluster would apply the same Works; the agent runs no leader election)", o.Agent.Replicas)
	}
	if o.Agent.FeatureGates != "" {
		if o.Agent.Image == "" {
			return errors.New("--feature-gates is passed to the agent's Deployment: give --karmada-agent-image too, or pass --feature-gates to the agent you run")
		}
		gate := featuregate.NewFeatureGate()
		if err := gate.Add(features.Specs); err != nil {
			return err
		}
		if err := gate.Set(o.Agent.FeatureGates); err != nil {
			return fmt.Errorf("--feature-gates: %w", err)
		}
		if err := features.CheckGate(gate); err != nil {
			return err
		}
	}
	return nil
}

// validateBootstrap checks what a new registration needs: the bootstrap
// token and the hash of the control plane's CA. (A member registered
// already needs neither to have its agent's rights updated.)
func (o *Options) validateBootstrap() error {
	if !bootstraputil.IsValidBootstrapToken(o.Token) {
		return errors.New("--token must be a bootstrap token [a-z0-9]{6}.[a-z0-9]{16} (karmadactl token create)")
	}
	if !caHashRE.MatchString(o.CACertHash) {
		return fmt.Errorf("--discovery-token-ca-cert-hash %q must be sha256:<64 hex digits>: register trusts the control plane only by its CA's hash", o.CACertHash)
	}
	return nil
}

// RegisteredKubeconfig reads the agent's kubeconfig from the member's
// Secret, which register made for the cluster: nil when there is none, or
// it holds a certificate already expired (the member is not registered,
// or must be registered again). A Secret of that name made for another
// cluster is an error.
func RegisteredKubeconfig(ctx context.Context, mc kubernetes.Interface, cluster string) ([]byte, error) {
	s, err := mc.CoreV1().Secrets(agentcert.Namespace).Get(ctx, agentcert.SecretName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading Secret %s/%s of %s: %w", agentcert.Namespace, agentcert.SecretName, cluster, err)
	}
	if s.Labels[clusterv1alpha1.ClusterNameLabel] != cluster {
		return nil, fmt.Errorf("the Secret %s/%s of %s was not made by register for cluster %s", agentcert.Namespace, agentcert.SecretName, cluster, cluster)
	}
	data := s.Data[agentcert.SecretKey]
	cfg, err := clientcmd.RESTConfigFromKubeConfig(data)
	if err != nil {
		return nil, fmt.Errorf("the Secret %s/%s of %s: %w", agentcert.Namespace, agentcert.SecretName, cluster, err)
	}
	block, _ := pem.Decode(cfg.CertData)
	if block == nil {
		return nil, nil
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil || time.Now().After(cert.NotAfter) {
		return nil, nil
	}
	return data, nil
}

// Discover reads the control plane's cluster-info, checks its signature
// with the token and its CA against the hash, and returns the CA. Until
// then nothing from the endpoint is trusted; nothing is sent but the
// anonymous read.
func Discover(ctx context.Context, o Options) ([]byte, error) {
	id, secret, _ := strings.Cut(o.Token, ".")
	url := fmt.Sprintf("https://%s/api/v1/namespaces/%s/configmaps/%s", o.Endpoint, metav1.NamespacePublic, bootstrapapi.ConfigMapClusterInfo)
	// Not yet trusted: the answer is checked below, by the token's
	// signature and the CA's hash.
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}}} //nolint:gosec // see above
	var ca []byte
	var last error
	err := wait.PollUntilContextTimeout(ctx, time.Second, o.Timeout, true, func(ctx context.Context) (bool, error) {
		got, err := discoverOnce(ctx, hc, url, id, secret, o.CACertHash)
		if err != nil && ctx.Err() != nil {
			return false, nil // cut by the deadline: the earlier reason stands
		}
		ca, last = got, err
		var fatal *untrustedError
		if errors.As(last, &fatal) {
			return false, last
		}
		return last == nil, nil
	})
	if err != nil {
		if last != nil {
			return nil, last
		}
		return nil, err
	}
	return ca, nil
}

// untrustedError: the control plane's answer is not to be trusted; no
// retry changes that.
type untrustedError struct{ msg string }

func (e *untrustedError) Error() string { return e.msg }

func discoverOnce(ctx context.Context, hc *http.Client, url, id, secret, wantHash string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("reading cluster-info from the control plane: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("reading kube-public/cluster-info: %s %s", resp.Status, strings.TrimSpace(string(body)))
	}
	cm := &corev1.ConfigMap{}
	if err := json.Unmarshal(body, cm); err != nil {
		return nil, fmt.Errorf("kube-public/cluster-info is not a ConfigMap: %w", err)
	}
	kubeconfig := cm.Data[bootstrapapi.KubeConfigKey]
	sig, ok := cm.Data[bootstrapapi.JWSSignatureKeyPrefix+id]
	if !ok {
		return nil, fmt.Errorf("kube-public/cluster-info is not signed with token %s yet (the control plane's kube-controller-manager signs it with every valid token; an expired or deleted token is never signed)", id)
	}
	if !jws.DetachedTokenIsValid(sig, kubeconfig, id, secret) {
		return nil, &untrustedError{fmt.Sprintf("kube-public/cluster-info's signature for token %s does not match the token: the endpoint is not the control plane that issued it", id)}
	}
	cfg, err := clientcmd.Load([]byte(kubeconfig))
	if err != nil {
		return nil, &untrustedError{fmt.Sprintf("the cluster-info kubeconfig: %v", err)}
	}
	for _, c := range cfg.Clusters {
		if len(c.CertificateAuthorityData) == 0 {
			continue
		}
		if matchesHash(c.CertificateAuthorityData, wantHash) {
			return c.CertificateAuthorityData, nil
		}
		return nil, &untrustedError{"the control plane's CA does not match --discovery-token-ca-cert-hash: refusing to trust it"}
	}
	return nil, &untrustedError{"the cluster-info kubeconfig names no CA"}
}

// matchesHash reports whether one certificate of a PEM bundle has the hash.
func matchesHash(bundle []byte, want string) bool {
	for rest := bundle; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			return false
		}
		if h, err := token.CACertHash(pem.EncodeToMemory(block)); err == nil && h == want {
			return true
		}
	}
}

// Run registers the member reached by member.
func Run(ctx context.Context, member *rest.Config, o Options, out io.Writer) error {
	if err := o.Validate(); err != nil {
		return err
	}
	if o.Timeout == 0 {
		o.Timeout = 5 * time.Minute
	}
	mc, err := kubernetes.NewForConfig(member)
	if err != nil {
		return err
	}
	if _, err := mc.CoreV1().Namespaces().Get(ctx, metav1.NamespaceSystem, metav1.GetOptions{}); err != nil {
		return fmt.Errorf("reading the member's kube-system namespace (is --kubeconfig the member cluster's?): %w", err)
	}
	o.Agent.ClusterName = o.ClusterName
	grant := "--propagate-kinds=" + strings.Join(o.Agent.kinds(), ",")
	if o.Agent.ClusterAdmin {
		grant = "--cluster-admin"
	}
	// Registered from this member already: its registration is kept, and
	// the agent's rights and Deployment in the member are brought up to
	// date (the control plane is not contacted; no token is needed).
	if kubeconfig, err := RegisteredKubeconfig(ctx, mc, o.ClusterName); err != nil {
		return err
	} else if kubeconfig != nil {
		if o.DryRun {
			fmt.Fprintf(out, "[dry-run] cluster(%s) is registered already: register would keep its registration and bring the agent's rights (%s) up to date; nothing was written\n", o.ClusterName, grant)
			return nil
		}
		if err := InstallAgent(ctx, mc, o.Agent); err != nil {
			return err
		}
		fmt.Fprintf(out, "[member] the agent's ServiceAccount %s/%s and its rights there (%s) are up to date\n", AgentNamespace, AgentName, grant)
		fmt.Fprintf(out, "cluster(%s) is registered already; its registration is kept\n", o.ClusterName)
		return nil
	}
	if err := o.validateBootstrap(); err != nil {
		return err
	}
	// What register writes in the member is checked before the control
	// plane registers anything: a refusal then leaves nothing behind.
	if err := CheckMember(ctx, mc, o.ClusterName, o.Agent.Image != ""); err != nil {
		return err
	}
	ca, err := Discover(ctx, o)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "[discovery] the control plane at %s is trusted: cluster-info is signed with the token and its CA matches the hash\n", o.Endpoint)
	if o.DryRun {
		fmt.Fprintf(out, "[dry-run] the member holds nothing in the way; register would request the agent's certificate (%s%s) and write its kubeconfig and rights (%s) in the member; nothing was written\n", names.AgentUserPrefix, o.ClusterName, grant)
		return nil
	}
	bootstrap := &rest.Config{Host: "https://" + o.Endpoint, BearerToken: o.Token, TLSClientConfig: rest.TLSClientConfig{CAData: ca}, Timeout: 30 * time.Second}
	certPEM, keyPEM, err := agentcert.RequestCertificate(ctx, bootstrap, o.ClusterName, "", o.Timeout, o.CertExpirationSeconds)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "[csr] the agent's certificate (%s%s) is issued\n", names.AgentUserPrefix, o.ClusterName)
	kubeconfig, err := agentcert.Kubeconfig("https://"+o.Endpoint, ca, certPEM, keyPEM)
	if err != nil {
		return err
	}
	if err := agentcert.WriteSecret(ctx, mc, o.ClusterName, kubeconfig, true); err != nil {
		return err
	}
	fmt.Fprintf(out, "[member] the agent's kubeconfig is in Secret %s/%s of the member\n", AgentNamespace, AgentSecretName)
	if err := InstallAgent(ctx, mc, o.Agent); err != nil {
		return err
	}
	fmt.Fprintf(out, "[member] the agent's ServiceAccount %s/%s and its rights there (%s) are in place\n", AgentNamespace, AgentName, grant)
	if o.Agent.Image != "" {
		fmt.Fprintf(out, "[member] Deployment %s/%s runs %s\n", AgentNamespace, AgentName, o.Agent.Image)
	} else {
		fmt.Fprintf(out, "[member] no --karmada-agent-image: run the agent yourself, with the member's ServiceAccount %s/%s and the kubeconfig of that Secret:\n  karmada-agent --karmada-kubeconfig <file of Secret %s/%s> --cluster-name %s\n",
			AgentNamespace, AgentName, AgentNamespace, AgentSecretName, o.ClusterName)
	}
	fmt.Fprintf(out, "cluster(%s) is registered; its agent claims the Cluster and pulls its Works\n", o.ClusterName)
	return nil
}
