// Package token manages, for `karmadactl token create|list|delete`
// (internal/karmadactl/token) and karmada-local, the bootstrap tokens of the
// Karmada control plane, with which `karmadactl register`
// verifies the control plane and has the agent's first credentials issued.
// They are Kubernetes bootstrap tokens (Secrets bootstrap-token-<id> in
// kube-system), as kubeadm and Karmada keep them.
package token

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/url"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	bootstraputil "k8s.io/cluster-bootstrap/token/util"
	bootstrapsecrets "k8s.io/cluster-bootstrap/util/secrets"
	"k8s.io/utils/clock"
)

// DefaultGroup is the extra group Karmada's agents' bootstrap tokens
// authenticate as.
const DefaultGroup = "system:bootstrappers:karmada:default-cluster-token"

// DefaultTTL is how long a token lives unless --ttl says otherwise.
const DefaultTTL = 24 * time.Hour

// CreateOptions are the flags of `token create`.
type CreateOptions struct {
	TTL                  time.Duration
	Description          string
	Groups               []string
	Usages               []string
	PrintRegisterCommand bool
	// Clock is the clock (the real one when nil); tests pass a fake.
	Clock clock.PassiveClock
}

// Validate checks the flags, naming the bad one.
func (o *CreateOptions) Validate() error {
	if o.TTL < 0 {
		return fmt.Errorf("--ttl=%s: must not be negative (0: the token never expires)", o.TTL)
	}
	if err := bootstraputil.ValidateUsages(o.Usages); err != nil {
		return fmt.Errorf("--usages: %w", err)
	}
	for _, g := range o.Groups {
		if err := bootstraputil.ValidateBootstrapGroupName(g); err != nil {
			return fmt.Errorf("--groups: %w", err)
		}
	}
	if len(o.Groups) > 0 && !contains(o.Usages, "authentication") {
		return errors.New("--groups are what the token authenticates as: they need --usages to include authentication")
	}
	return nil
}

// Create makes a new bootstrap token and returns it ("<id>.<secret>").
func Create(ctx context.Context, kc kubernetes.Interface, o CreateOptions) (string, error) {
	if err := o.Validate(); err != nil {
		return "", err
	}
	now := time.Now
	if o.Clock != nil {
		now = o.Clock.Now
	}
	// A new random token; one whose id is taken (1 in 36^6) is drawn again.
	for range 5 {
		token, err := bootstraputil.GenerateBootstrapToken()
		if err != nil {
			return "", err
		}
		id, secret, _ := strings.Cut(token, ".")
		s := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceSystem, Name: bootstraputil.BootstrapTokenSecretName(id)},
			Type:       bootstrapapi.SecretTypeBootstrapToken,
			StringData: map[string]string{
				bootstrapapi.BootstrapTokenIDKey:     id,
				bootstrapapi.BootstrapTokenSecretKey: secret,
			},
		}
		if o.Description != "" {
			s.StringData[bootstrapapi.BootstrapTokenDescriptionKey] = o.Description
		}
		if o.TTL > 0 {
			s.StringData[bootstrapapi.BootstrapTokenExpirationKey] = now().Add(o.TTL).UTC().Format(time.RFC3339)
		}
		for _, u := range o.Usages {
			s.StringData[bootstrapapi.BootstrapTokenUsagePrefix+u] = "true"
		}
		if len(o.Groups) > 0 {
			s.StringData[bootstrapapi.BootstrapTokenExtraGroupsKey] = strings.Join(o.Groups, ",")
		}
		_, err = kc.CoreV1().Secrets(metav1.NamespaceSystem).Create(ctx, s, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("creating bootstrap token Secret %s/%s: %w", s.Namespace, s.Name, err)
		}
		return token, nil
	}
	return "", errors.New("creating a bootstrap token: five random ids in a row were taken")
}

// Info is one bootstrap token as `token list` shows it.
type Info struct {
	ID          string
	Token       string
	Expires     *time.Time
	Usages      []string
	Description string
	Groups      []string
}

// List returns the bootstrap tokens of the control plane, by id.
func List(ctx context.Context, kc kubernetes.Interface) ([]Info, error) {
	secrets, err := kc.CoreV1().Secrets(metav1.NamespaceSystem).List(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("type", string(bootstrapapi.SecretTypeBootstrapToken)).String(),
	})
	if err != nil {
		return nil, fmt.Errorf("listing bootstrap tokens: %w", err)
	}
	var out []Info
	for i := range secrets.Items {
		s := &secrets.Items[i]
		id := bootstrapsecrets.GetData(s, bootstrapapi.BootstrapTokenIDKey)
		secret := bootstrapsecrets.GetData(s, bootstrapapi.BootstrapTokenSecretKey)
		if name, ok := bootstrapsecrets.ParseName(s.Name); !ok || name != id {
			continue // not a well-formed bootstrap token
		}
		info := Info{ID: id, Token: bootstraputil.TokenFromIDAndSecret(id, secret), Description: bootstrapsecrets.GetData(s, bootstrapapi.BootstrapTokenDescriptionKey)}
		if exp := bootstrapsecrets.GetData(s, bootstrapapi.BootstrapTokenExpirationKey); exp != "" {
			if t, err := time.Parse(time.RFC3339, exp); err == nil {
				info.Expires = &t
			}
		}
		for k, v := range s.Data {
			if u, ok := strings.CutPrefix(k, bootstrapapi.BootstrapTokenUsagePrefix); ok && string(v) == "true" {
				info.Usages = append(info.Usages, u)
			}
		}
		sort.Strings(info.Usages)
		if g := bootstrapsecrets.GetData(s, bootstrapapi.BootstrapTokenExtraGroupsKey); g != "" {
			info.Groups = strings.Split(g, ",")
		}
		out = append(out, info)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// Delete removes bootstrap tokens given by id or as whole tokens.
func Delete(ctx context.Context, kc kubernetes.Interface, tokens []string, out io.Writer) error {
	ids, err := TokenIDs(tokens)
	if err != nil {
		return err
	}
	for _, id := range ids {
		name := bootstraputil.BootstrapTokenSecretName(id)
		if err := kc.CoreV1().Secrets(metav1.NamespaceSystem).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			// Karmada's words: `failed to delete bootstrap token "abcdef",
			// err: secrets "bootstrap-token-abcdef" not found`.
			return fmt.Errorf("failed to delete bootstrap token %q, err: %w", id, err)
		}
		fmt.Fprintf(out, "bootstrap token %q deleted\n", id)
	}
	return nil
}

// TokenIDs is the id of each token given by id or whole; an argument that
// is neither is refused in Karmada's (and kubeadm's) words.
func TokenIDs(tokens []string) ([]string, error) {
	ids := make([]string, 0, len(tokens))
	for _, t := range tokens {
		switch {
		case bootstraputil.IsValidBootstrapTokenID(t):
			ids = append(ids, t)
		case bootstraputil.IsValidBootstrapToken(t):
			id, _, _ := strings.Cut(t, ".")
			ids = append(ids, id)
		default:
			return nil, fmt.Errorf("given token didn't match pattern %q or %q", bootstrapapi.BootstrapTokenPattern, bootstrapapi.BootstrapTokenIDPattern)
		}
	}
	return ids, nil
}

// CACertHash is the hash register checks the control plane's CA against:
// sha256 of the CA certificate's public key (its SubjectPublicKeyInfo), as
// kubeadm and Karmada write it.
func CACertHash(caPEM []byte) (string, error) {
	block, _ := pem.Decode(caPEM)
	if block == nil {
		return "", errors.New("no PEM certificate in the CA data")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(cert.RawSubjectPublicKeyInfo)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// RegisterCommand is the `karmadactl register` line for a token.
func RegisterCommand(parent string, cfg *rest.Config, token string) (string, error) {
	ca := cfg.CAData
	if len(ca) == 0 {
		return "", errors.New("the control plane's kubeconfig has no certificate-authority-data: register verifies the control plane by its CA, so the command cannot be printed")
	}
	hash, err := CACertHash(ca)
	if err != nil {
		return "", fmt.Errorf("reading the control plane's CA: %w", err)
	}
	u, err := url.Parse(cfg.Host)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("the control plane's address %q is not a URL", cfg.Host)
	}
	return fmt.Sprintf("%s register %s --token %s --discovery-token-ca-cert-hash %s", parent, u.Host, token, hash), nil
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
