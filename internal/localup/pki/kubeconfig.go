package pki

import (
	"errors"
	"fmt"
	"net"
	"os"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/karmada-go/karmada/internal/atomicfile"
)

// The kubeconfigs that carry the certificates, and the names every cluster
// karmada-local makes shares.

// RemoveContexts deletes contexts (with their clusters and users of the
// same names) from the kubeconfig at path, and the file itself when
// nothing else is left in it.
func RemoveContexts(path string, contexts []string) error {
	cfg, err := LoadKubeconfig(path)
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
	return WriteKubeconfig(*cfg, path)
}

// LoadKubeconfig reads the kubeconfig at path; a missing file is an empty
// one.
func LoadKubeconfig(path string) (*clientcmdapi.Config, error) {
	cfg, err := clientcmd.LoadFromFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return clientcmdapi.NewConfig(), nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading kubeconfig %s: %w (fix or remove the file, or pass another --kubeconfig)", path, err)
	}
	return cfg, nil
}

// WriteKubeconfig writes a kubeconfig whole or not at all (a temporary
// file renamed over it): a client reading it meanwhile (kubectl, a test,
// a component restarting) sees the old file or the new one, never a
// truncated one, as `karmada-local certs renew` rewrites them under load.
func WriteKubeconfig(cfg clientcmdapi.Config, path string) error {
	data, err := clientcmd.Write(cfg)
	if err != nil {
		return err
	}
	return atomicfile.Write(path, data, 0o600)
}

// AdminUser is the user of the administrator credentials karmada-local
// makes: in the fleet's control plane and each member, and in the host
// cluster (all in system:masters).
const AdminUser = "karmada-local-admin"

var Loopback = []net.IP{net.ParseIP("127.0.0.1")}
