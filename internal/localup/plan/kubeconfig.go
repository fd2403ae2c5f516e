package plan

import (
	"fmt"
	"os"
	"path/filepath"

	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/karmada-go/karmada/internal/localup/pki"
)

// writeComponentKubeconfig writes a kubeconfig with one context for a
// component's client certificate.
func writeComponentKubeconfig(path string, c *Cluster, user, cert, key string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[c.context] = &clientcmdapi.Cluster{Server: c.apiURL(), CertificateAuthorityData: c.CA.CertPEM}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{ClientCertificate: cert, ClientKey: key}
	cfg.Contexts[c.context] = &clientcmdapi.Context{Cluster: c.context, AuthInfo: user}
	cfg.CurrentContext = c.context
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", filepath.Dir(path), err)
	}
	if err := pki.WriteKubeconfig(*cfg, path); err != nil {
		return fmt.Errorf("writing kubeconfig %s: %w", path, err)
	}
	return nil
}

// WriteUserKubeconfig merges one context per cluster into the user's
// kubeconfig, with the credentials embedded so the file stands alone, and
// keeps any other contexts the file holds.
func (f *Fleet) WriteUserKubeconfig() error {
	path := f.Cfg.Kubeconfig
	cfg, err := pki.LoadKubeconfig(path)
	if err != nil {
		return err
	}
	for _, c := range f.Clusters {
		if c.Index == 0 && f.Cfg.External() {
			// The control plane is not the fleet's.
			continue
		}
		cert, err := os.ReadFile(c.admin)
		if err != nil {
			return fmt.Errorf("reading admin certificate: %w", err)
		}
		key, err := os.ReadFile(c.adminKey)
		if err != nil {
			return fmt.Errorf("reading admin key: %w", err)
		}
		cfg.Clusters[c.context] = &clientcmdapi.Cluster{Server: c.apiURL(), CertificateAuthorityData: c.CA.CertPEM}
		cfg.AuthInfos[c.context] = &clientcmdapi.AuthInfo{ClientCertificateData: cert, ClientKeyData: key}
		cfg.Contexts[c.context] = &clientcmdapi.Context{Cluster: c.context, AuthInfo: c.context}
	}
	if cfg.CurrentContext == "" || cfg.Contexts[cfg.CurrentContext] == nil {
		cfg.CurrentContext = f.Clusters[len(f.Clusters)-1].context
		if !f.Cfg.External() {
			cfg.CurrentContext = ControlPlaneContext
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", filepath.Dir(path), err)
	}
	if err := pki.WriteKubeconfig(*cfg, path); err != nil {
		return fmt.Errorf("writing kubeconfig %s: %w", path, err)
	}
	return nil
}
