package localup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/karmada-go/karmada/internal/atomicfile"
)

// writeComponentKubeconfig writes a kubeconfig with one context for a
// component's client certificate.
func writeComponentKubeconfig(path string, c *cluster, user, cert, key string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[c.context] = &clientcmdapi.Cluster{Server: c.apiURL(), CertificateAuthorityData: c.ca.CertPEM}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{ClientCertificate: cert, ClientKey: key}
	cfg.Contexts[c.context] = &clientcmdapi.Context{Cluster: c.context, AuthInfo: user}
	cfg.CurrentContext = c.context
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", filepath.Dir(path), err)
	}
	if err := writeKubeconfigFile(*cfg, path); err != nil {
		return fmt.Errorf("writing kubeconfig %s: %w", path, err)
	}
	return nil
}

// writeUserKubeconfig merges one context per cluster into the user's
// kubeconfig, with the credentials embedded so the file stands alone, and
// keeps any other contexts the file holds.
func (f *fleet) writeUserKubeconfig() error {
	path := f.cfg.Kubeconfig
	cfg, err := loadKubeconfigOrEmpty(path)
	if err != nil {
		return err
	}
	for _, c := range f.clusters {
		if c.index == 0 && f.cfg.external() {
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
		cfg.Clusters[c.context] = &clientcmdapi.Cluster{Server: c.apiURL(), CertificateAuthorityData: c.ca.CertPEM}
		cfg.AuthInfos[c.context] = &clientcmdapi.AuthInfo{ClientCertificateData: cert, ClientKeyData: key}
		cfg.Contexts[c.context] = &clientcmdapi.Context{Cluster: c.context, AuthInfo: c.context}
	}
	if cfg.CurrentContext == "" || cfg.Contexts[cfg.CurrentContext] == nil {
		cfg.CurrentContext = f.clusters[len(f.clusters)-1].context
		if !f.cfg.external() {
			cfg.CurrentContext = ControlPlaneContext
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", filepath.Dir(path), err)
	}
	if err := writeKubeconfigFile(*cfg, path); err != nil {
		return fmt.Errorf("writing kubeconfig %s: %w", path, err)
	}
	return nil
}

// removeFromUserKubeconfig deletes the fleet's contexts from the user's
// kubeconfig, and the file itself when nothing else is left in it.
func removeFromUserKubeconfig(path string, contexts []string) error {
	cfg, err := loadKubeconfigOrEmpty(path)
	if err != nil {
		return err
	}
	for _, name := range contexts {
		delete(cfg.Clusters, name)
		delete(cfg.AuthInfos, name)
		delete(cfg.Contexts, name)
	}
	if len(cfg.Contexts) == 0 {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("removing %s: %w", path, err)
		}
		return nil
	}
	if cfg.Contexts[cfg.CurrentContext] == nil {
		cfg.CurrentContext = ""
	}
	return writeKubeconfigFile(*cfg, path)
}

func loadKubeconfigOrEmpty(path string) (*clientcmdapi.Config, error) {
	cfg, err := clientcmd.LoadFromFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return clientcmdapi.NewConfig(), nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading kubeconfig %s: %w (fix or remove the file, or pass another --kubeconfig)", path, err)
	}
	return cfg, nil
}

// writeKubeconfigFile writes a kubeconfig whole or not at all (a temporary
// file renamed over it): a client reading it meanwhile (kubectl, a test,
// a component restarting) sees the old file or the new one, never a
// truncated one, as `karmada-local certs renew` rewrites them under load.
func writeKubeconfigFile(cfg clientcmdapi.Config, path string) error {
	data, err := clientcmd.Write(cfg)
	if err != nil {
		return err
	}
	return atomicfile.Write(path, data, 0o600)
}
