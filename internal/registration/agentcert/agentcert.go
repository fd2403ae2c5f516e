// Package agentcert is what karmadactl register and karmada-agent share
// about the agent's control plane identity: requesting its client
// certificate, the kubeconfig that carries it, and the member Secret that
// keeps it.
package agentcert

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/certificate/csr"
	"k8s.io/client-go/util/keyutil"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	"github.com/karmada-go/karmada/internal/names"
)

// Where the agent's kubeconfig is kept in the member, as Karmada keeps it,
// and the labels that say register made it.
// DefaultMaxLifetime is the longest lifetime an agent certificate is
// approved for unless the approver is told otherwise: short, as the agent
// renews it itself at 80% of it (and asks for no more than this).
const DefaultMaxLifetime = 7 * 24 * time.Hour

const (
	Namespace   = "karmada-system"
	SecretName  = "karmada-kubeconfig"
	SecretKey   = "karmada-kubeconfig"
	contextName = "karmada-apiserver"
)

// RequestCertificate submits, with cfg's identity (a bootstrap token, or
// the agent's current certificate when it renews), a CSR for the agent of
// cluster, and waits up to timeout for the signed certificate. The request
// carries the group of a registration: registration, when renewing within
// it; a new one made from the request's own key when registration is ""
// (registering, or renewing a certificate of an earlier version, which has
// none). A positive expirationSeconds asks the signer for that lifetime.
func RequestCertificate(ctx context.Context, cfg *rest.Config, cluster, registration string, timeout time.Duration, expirationSeconds int32) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	if registration == "" {
		if registration, err = RegistrationID(key.Public()); err != nil {
			return nil, nil, err
		}
	}
	subject := pkix.Name{CommonName: names.AgentUserPrefix + cluster, Organization: []string{names.AgentGroup, names.AgentRegistrationGroupPrefix + registration}}
	request, err := certutil.MakeCSR(key, &subject, nil, nil)
	if err != nil {
		return nil, nil, err
	}
	if keyPEM, err = keyutil.MarshalPrivateKeyToPEM(key); err != nil {
		return nil, nil, err
	}
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	// client-go's CSR helpers, as the kubelet's bootstrap uses them: the
	// request, then a watch of it until it is issued, denied or failed.
	var lifetime *time.Duration
	if expirationSeconds > 0 {
		d := time.Duration(expirationSeconds) * time.Second
		lifetime = &d
	}
	usages := []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}
	name, uid, err := csr.RequestCertificateWithContext(ctx, kc, request, fmt.Sprintf("agent-%s-%s", cluster, utilrand.String(5)),
		certificatesv1.KubeAPIServerClientSignerName, lifetime, usages, key)
	if err != nil {
		return nil, nil, fmt.Errorf("requesting the agent's certificate: %w", err)
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if certPEM, err = csr.WaitForCertificate(wctx, kc, name, uid); err != nil {
		if wctx.Err() != nil && ctx.Err() == nil {
			return nil, nil, fmt.Errorf("the agent's certificate request %s was not signed within %s (is the control plane's karmada-controller-manager running its agentcsrapproving controller, and its kube-controller-manager the CSR signer?)", name, timeout)
		}
		return nil, nil, fmt.Errorf("the control plane refused the agent's certificate request %s: %w", name, err)
	}
	return certPEM, keyPEM, nil
}

// Kubeconfig is the agent's kubeconfig of the control plane at server
// (https://host:port).
func Kubeconfig(server string, ca, cert, key []byte) ([]byte, error) {
	kc := clientcmdapi.NewConfig()
	kc.Clusters[contextName] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
	kc.AuthInfos["karmada-agent"] = &clientcmdapi.AuthInfo{ClientCertificateData: cert, ClientKeyData: key}
	kc.Contexts[contextName] = &clientcmdapi.Context{Cluster: contextName, AuthInfo: "karmada-agent"}
	kc.CurrentContext = contextName
	return clientcmd.Write(*kc)
}

// WriteSecret stores the agent's kubeconfig in the member's Secret
// karmada-system/karmada-kubeconfig; a Secret of that name that register
// did not make is not taken over. With createNamespace, karmada-system is
// created first.
func WriteSecret(ctx context.Context, mc kubernetes.Interface, cluster string, kubeconfig []byte, createNamespace bool) error {
	if createNamespace {
		if _, err := mc.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating namespace %s in the member: %w", Namespace, err)
		}
	}
	labels := map[string]string{clusterv1alpha1.ManagedByLabel: clusterv1alpha1.ManagedByKarmadactl, clusterv1alpha1.ClusterNameLabel: cluster}
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: SecretName, Labels: labels}, Data: map[string][]byte{SecretKey: kubeconfig}}
	cur, err := mc.CoreV1().Secrets(Namespace).Get(ctx, SecretName, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		_, err = mc.CoreV1().Secrets(Namespace).Create(ctx, s, metav1.CreateOptions{})
	case err != nil:
	case cur.Labels[clusterv1alpha1.ManagedByLabel] != clusterv1alpha1.ManagedByKarmadactl || (cur.Labels[clusterv1alpha1.ClusterNameLabel] != "" && cur.Labels[clusterv1alpha1.ClusterNameLabel] != cluster):
		return fmt.Errorf("the Secret %s/%s already exists in the member and was not made by karmadactl register for cluster %s: refusing to replace it", Namespace, SecretName, cluster)
	default:
		cur.Labels, cur.Data = labels, s.Data
		_, err = mc.CoreV1().Secrets(Namespace).Update(ctx, cur, metav1.UpdateOptions{})
	}
	if err != nil {
		return fmt.Errorf("writing Secret %s/%s in the member: %w", Namespace, SecretName, err)
	}
	return nil
}

// RegistrationID is the id of the registration that a key's request makes:
// the first 16 bytes of the SHA-256 of its public key (PKIX DER), in hex.
func RegistrationID(pub any) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(der)
	return hex.EncodeToString(sum[:16]), nil
}

// RegistrationOf is the registration id an agent's subject organizations
// carry ("" when none: a certificate of an earlier version).
func RegistrationOf(orgs []string) string {
	for _, o := range orgs {
		if id, ok := strings.CutPrefix(o, names.AgentRegistrationGroupPrefix); ok {
			return id
		}
	}
	return ""
}
