// Package register implements `karmadactl register`: run against a member
// cluster, it registers it with the Karmada control plane in pull mode.
// It trusts the control plane by a bootstrap token and the hash of its CA
// (no insecure skip): kube-public/cluster-info is read, its signature with
// the token checked, and the CA it names compared with the hash. The token
// then serves only to request the agent's client certificate, which the
// control plane's agentcsrapproving controller approves; the agent's
// kubeconfig goes into the member's Secret karmada-system/karmada-kubeconfig.
package register

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
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

	"github.com/spf13/cobra"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	jws "k8s.io/cluster-bootstrap/token/jws"
	bootstraputil "k8s.io/cluster-bootstrap/token/util"

	"github.com/karmada-go/karmada/internal/cli"
	"github.com/karmada-go/karmada/internal/controllers/agentcsr"
	"github.com/karmada-go/karmada/internal/karmadactl/options"
	"github.com/karmada-go/karmada/internal/karmadactl/token"
	"github.com/karmada-go/karmada/internal/names"
)

// Where the agent's kubeconfig goes in the member, as Karmada keeps it.
const (
	AgentNamespace     = "karmada-system"
	AgentSecretName    = "karmada-kubeconfig"
	AgentSecretKey     = "karmada-kubeconfig"
	ManagedByLabel     = "karmada.io/managed-by"
	managedByValue     = "karmadactl"
	ClusterNameLabel   = "cluster.karmada.io/name"
	karmadaContextName = "karmada-apiserver"
)

var caHashRE = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// Options is what register needs.
type Options struct {
	// Endpoint is the karmada-apiserver's host:port.
	Endpoint    string
	Token       string
	CACertHash  string
	ClusterName string
	// Timeout bounds the discovery and the wait for the certificate.
	Timeout time.Duration
}

// Validate checks the options before anything is touched.
func (o *Options) Validate() error {
	if _, _, err := net.SplitHostPort(o.Endpoint); err != nil {
		return fmt.Errorf("the control plane's endpoint %q must be host:port (as token create --print-register-command prints it): %w", o.Endpoint, err)
	}
	if !bootstraputil.IsValidBootstrapToken(o.Token) {
		return errors.New("--token must be a bootstrap token [a-z0-9]{6}.[a-z0-9]{16} (karmadactl token create)")
	}
	if !caHashRE.MatchString(o.CACertHash) {
		return fmt.Errorf("--discovery-token-ca-cert-hash %q must be sha256:<64 hex digits>: register trusts the control plane only by its CA's hash", o.CACertHash)
	}
	if errs := names.ClusterNameErrors(o.ClusterName); len(errs) > 0 {
		return fmt.Errorf("--cluster-name %q is invalid: %s", o.ClusterName, errs[0])
	}
	return nil
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
	ca, err := Discover(ctx, o)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "[discovery] the control plane at %s is trusted: cluster-info is signed with the token and its CA matches the hash\n", o.Endpoint)
	bootstrap := &rest.Config{Host: "https://" + o.Endpoint, BearerToken: o.Token, TLSClientConfig: rest.TLSClientConfig{CAData: ca}, Timeout: 30 * time.Second}
	certPEM, keyPEM, err := requestCertificate(ctx, bootstrap, o)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "[csr] the agent's certificate (%s%s) is issued\n", agentcsr.UserPrefix, o.ClusterName)
	kubeconfig, err := agentKubeconfig(o.Endpoint, ca, certPEM, keyPEM)
	if err != nil {
		return err
	}
	if err := writeAgentSecret(ctx, mc, o.ClusterName, kubeconfig); err != nil {
		return err
	}
	fmt.Fprintf(out, "[member] the agent's kubeconfig is in Secret %s/%s of the member\ncluster(%s) is registered; karmada-agent, started with it, creates the Cluster and pulls its Works\n", AgentNamespace, AgentSecretName, o.ClusterName)
	return nil
}

// requestCertificate submits a CSR for the agent's identity with the
// bootstrap token and waits for its certificate.
func requestCertificate(ctx context.Context, bootstrap *rest.Config, o Options) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: agentcsr.UserPrefix + o.ClusterName, Organization: []string{agentcsr.Group}}}, key)
	if err != nil {
		return nil, nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	keyPEM = pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	bc, err := kubernetes.NewForConfig(bootstrap)
	if err != nil {
		return nil, nil, err
	}
	csr := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("agent-%s-%s", o.ClusterName, utilrand.String(5))},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
			SignerName: certificatesv1.KubeAPIServerClientSignerName,
			Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth},
		},
	}
	if _, err := bc.CertificatesV1().CertificateSigningRequests().Create(ctx, csr, metav1.CreateOptions{}); err != nil {
		return nil, nil, fmt.Errorf("requesting the agent's certificate with the bootstrap token: %w", err)
	}
	err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, o.Timeout, true, func(ctx context.Context) (bool, error) {
		got, err := bc.CertificatesV1().CertificateSigningRequests().Get(ctx, csr.Name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		for _, c := range got.Status.Conditions {
			if c.Type == certificatesv1.CertificateDenied || c.Type == certificatesv1.CertificateFailed {
				return false, fmt.Errorf("the control plane %s the agent's certificate request %s: %s: %s", strings.ToLower(string(c.Type)), csr.Name, c.Reason, c.Message)
			}
		}
		certPEM = got.Status.Certificate
		return len(certPEM) > 0, nil
	})
	if err != nil && len(certPEM) == 0 {
		if wait.Interrupted(err) {
			return nil, nil, fmt.Errorf("the agent's certificate request %s was not signed within %s (is the control plane's karmada-controller-manager running its agentcsrapproving controller, and its kube-controller-manager the CSR signer?)", csr.Name, o.Timeout)
		}
		return nil, nil, err
	}
	return certPEM, keyPEM, nil
}

func agentKubeconfig(endpoint string, ca, cert, key []byte) ([]byte, error) {
	kc := clientcmdapi.NewConfig()
	kc.Clusters[karmadaContextName] = &clientcmdapi.Cluster{Server: "https://" + endpoint, CertificateAuthorityData: ca}
	kc.AuthInfos["karmada-agent"] = &clientcmdapi.AuthInfo{ClientCertificateData: cert, ClientKeyData: key}
	kc.Contexts[karmadaContextName] = &clientcmdapi.Context{Cluster: karmadaContextName, AuthInfo: "karmada-agent"}
	kc.CurrentContext = karmadaContextName
	return clientcmd.Write(*kc)
}

// writeAgentSecret stores the agent's kubeconfig in the member; a Secret of
// that name that register did not make is not taken over.
func writeAgentSecret(ctx context.Context, mc kubernetes.Interface, cluster string, kubeconfig []byte) error {
	if _, err := mc.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: AgentNamespace}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s in the member: %w", AgentNamespace, err)
	}
	labels := map[string]string{ManagedByLabel: managedByValue, ClusterNameLabel: cluster}
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: AgentNamespace, Name: AgentSecretName, Labels: labels}, Data: map[string][]byte{AgentSecretKey: kubeconfig}}
	cur, err := mc.CoreV1().Secrets(AgentNamespace).Get(ctx, AgentSecretName, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		_, err = mc.CoreV1().Secrets(AgentNamespace).Create(ctx, s, metav1.CreateOptions{})
	case err != nil:
	case cur.Labels[ManagedByLabel] != managedByValue:
		return fmt.Errorf("Secret %s/%s already exists in the member and was not made by karmadactl register: refusing to replace it", AgentNamespace, AgentSecretName)
	default:
		cur.Labels, cur.Data = labels, s.Data
		_, err = mc.CoreV1().Secrets(AgentNamespace).Update(ctx, cur, metav1.UpdateOptions{})
	}
	if err != nil {
		return fmt.Errorf("writing Secret %s/%s in the member: %w", AgentNamespace, AgentSecretName, err)
	}
	return nil
}

// NewCommand returns `karmadactl register`.
func NewCommand(g *options.Global) *cobra.Command {
	o := Options{}
	var memberContext string
	cmd := &cobra.Command{
		Use:   "register ENDPOINT --token T --discovery-token-ca-cert-hash sha256:H --cluster-name NAME",
		Short: "Register a member cluster with the Karmada control plane (pull mode)",
		Long: `Register the member cluster of --kubeconfig (and --context) with the Karmada
control plane at ENDPOINT (host:port) in pull mode.

register trusts the control plane by the bootstrap token and the hash of its
CA, never by skipping TLS verification: it reads kube-public/cluster-info,
checks its signature with the token, and compares the CA it names with
--discovery-token-ca-cert-hash. With the token it then requests the agent's
client certificate (user system:karmada:agent:<name>, group
system:karmada:agents), which the control plane approves for a cluster not
registered yet, and stores the agent's kubeconfig in the member's Secret
karmada-system/karmada-kubeconfig (key karmada-kubeconfig). The agent,
started with it, creates the Cluster and pulls its Works.

karmadactl token create --print-register-command prints the whole command.`,
		Example: `  karmadactl register 10.10.0.1:5443 --token abcdef.0123456789abcdef \
    --discovery-token-ca-cert-hash sha256:0123...cdef --cluster-name member4 --kubeconfig member4.config`,
		Args: cli.OneName("the control plane's endpoint, host:port"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Endpoint = args[0]
			if err := o.Validate(); err != nil {
				return err
			}
			member, err := options.LoadConfig(g.Kubeconfig, memberContext)
			if err != nil {
				return fmt.Errorf("reaching the member cluster (--kubeconfig %s, --context %q): %w", g.Kubeconfig, memberContext, err)
			}
			return Run(cmd.Context(), member, o, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Token, "token", "", "bootstrap token (karmadactl token create)")
	f.StringVar(&o.CACertHash, "discovery-token-ca-cert-hash", "", "sha256:<hash> of the control plane CA's public key")
	f.StringVar(&o.ClusterName, "cluster-name", "", "name of the member cluster in the control plane")
	f.StringVar(&memberContext, "context", "", "context of --kubeconfig that reaches the member cluster (for register, --kubeconfig is the member's)")
	f.DurationVar(&o.Timeout, "discovery-timeout", 5*time.Minute, "how long to wait for the control plane's cluster-info and for the agent's certificate")
	return cmd
}
