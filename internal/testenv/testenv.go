// Package testenv gives integration tests a real kube-apiserver and etcd, from
// the binaries `make build` puts in bin/, with the Karmada CRDs installed.
package testenv

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/karmada-go/karmada/internal/scheme"
)

// RepoRoot is the root of this repository, found from this file's location.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// BinDir is where the upstream binaries are: $KUBEBUILDER_ASSETS, else bin/.
func BinDir() string {
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		return dir
	}
	return filepath.Join(RepoRoot(), "bin")
}

// Env is a running API server for one test.
type Env struct {
	Config *rest.Config
	Client client.Client
}

// Start runs kube-apiserver and etcd with the Karmada CRDs installed and stops
// them when the test ends. A missing binary fails the test: it is never
// skipped.
func Start(t testing.TB) *Env {
	t.Helper()
	bin := BinDir()
	for _, b := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(bin, b)); err != nil {
			t.Fatalf("integration tests need %s: run `make build` (or set KUBEBUILDER_ASSETS)", filepath.Join(bin, b))
		}
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory: bin,
		CRDDirectoryPaths:     []string{filepath.Join(RepoRoot(), "config", "crd")},
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("starting kube-apiserver and etcd: %v", err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stopping kube-apiserver and etcd: %v", err)
		}
	})
	c, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return &Env{Config: cfg, Client: c}
}
