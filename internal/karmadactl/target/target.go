// Package target is how karmadactl's everyday commands (get, describe,
// logs, exec, apply, ...) reach either the Karmada control plane or a member
// cluster: a member is reached through the control plane, at
// /apis/cluster.karmada.io/v1alpha1/clusters/<name>/proxy (served by
// karmada-aggregated-apiserver), as the caller — no member credential is
// needed, and the member's RBAC decides what the caller may do there.
package target

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/discovery"
	diskcached "k8s.io/client-go/discovery/cached/disk"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/homedir"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	"github.com/karmada-go/karmada/internal/karmadactl/options"
)

// Operation scopes: Karmada's --operation-scope values.
const (
	// Karmada is the control plane.
	Karmada = "karmada"
	// Members are member clusters (--cluster / --clusters).
	Members = "members"
	// All is the control plane and member clusters.
	All = "all"
)

// ProxyPath is the path under the control plane's URL at which a member's
// API is served.
func ProxyPath(cluster string) string {
	return "/apis/" + clusterv1alpha1.SchemeGroupVersion.String() + "/clusters/" + cluster + "/proxy"
}

// Flags are what a command reaching one cluster shares: -n/--namespace,
// --operation-scope and -C/--cluster.
type Flags struct {
	global *options.Global
	config *genericclioptions.ConfigFlags
	// Namespace is -n; "" : the kubeconfig context's.
	Namespace string
	// Scope is --operation-scope.
	Scope string
	// Cluster is -C/--cluster: the member with --operation-scope members.
	Cluster string
	// scopes are the values the command allows.
	scopes []string
}

// NewFlags returns the flags of a command whose --operation-scope may be
// one of scopes (the first is the default); with none, the command acts on
// the control plane only and has neither flag.
func NewFlags(g *options.Global, scopes ...string) *Flags {
	f := &Flags{global: g, scopes: scopes}
	if len(scopes) > 0 {
		f.Scope = scopes[0]
	}
	cf := genericclioptions.NewConfigFlags(true)
	cf.KubeConfig = &g.Kubeconfig
	cf.Context = &g.KarmadaContext
	cf.Namespace = &f.Namespace
	f.config = cf
	return f
}

// AddFlags registers -n, and --operation-scope and -C/--cluster when the
// command has scopes (on its subcommands too, when it has some).
func (f *Flags) AddFlags(cmd *cobra.Command) {
	fs := cmd.Flags()
	if cmd.HasSubCommands() {
		fs = cmd.PersistentFlags()
	}
	fs.StringVarP(&f.Namespace, "namespace", "n", "", "namespace of the objects (default: the kubeconfig context's)")
	if len(f.scopes) == 0 {
		return
	}
	if f.membersOnly() {
		fs.StringVarP(&f.Cluster, "cluster", "C", "", "the member cluster (required)")
		return
	}
	fs.StringVar(&f.Scope, "operation-scope", f.Scope, "where the command acts: "+strings.Join(f.scopes, " or ")+" (members: the member cluster -C names)")
	fs.StringVarP(&f.Cluster, "cluster", "C", "", "the member cluster, with --operation-scope members")
	_ = cmd.RegisterFlagCompletionFunc("operation-scope", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return f.scopes, cobra.ShellCompDirectiveNoFileComp
	})
}

// membersOnly: the command acts in a member only (logs, top): -C is
// required and there is no --operation-scope.
func (f *Flags) membersOnly() bool { return len(f.scopes) == 1 && f.scopes[0] == Members }

// Validate checks --operation-scope and --cluster.
func (f *Flags) Validate() error {
	if len(f.scopes) == 0 {
		return nil
	}
	if f.membersOnly() && f.Cluster == "" {
		return fmt.Errorf("--cluster (-C) is required: the member cluster to act in")
	}
	if !slices.Contains(f.scopes, f.Scope) {
		return fmt.Errorf("--operation-scope=%q: must be %s", f.Scope, strings.Join(f.scopes, " or "))
	}
	if f.Scope == Members && f.Cluster == "" {
		return fmt.Errorf("--cluster (-C) is required with --operation-scope members: the member cluster to act in")
	}
	if f.Scope != Members && f.Cluster != "" {
		return fmt.Errorf("--cluster=%s goes with --operation-scope members", f.Cluster)
	}
	return ValidateClusterName(f.Cluster)
}

// CheckCluster reads the Cluster the flags name, when they name one, from
// the control plane: a cluster that is not joined is refused with the API
// server's NotFound before anything is sent through the proxy.
func (f *Flags) CheckCluster(ctx context.Context) error {
	if f.Scope != Members || f.Cluster == "" {
		return nil
	}
	cfg, err := f.ForCluster("").ToRESTConfig()
	if err != nil {
		return err
	}
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	_, err = dc.Resource(clusterv1alpha1.SchemeGroupVersion.WithResource("clusters")).Get(ctx, f.Cluster, metav1.GetOptions{})
	return err
}

var clusterName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// ValidateClusterName refuses what cannot be a Cluster's name (it becomes
// a path segment).
func ValidateClusterName(name string) error {
	if name != "" && (len(name) > 48 || !clusterName.MatchString(name)) {
		return fmt.Errorf("cluster name %q: must be a DNS label of at most 48 characters", name)
	}
	return nil
}

// Factory returns kubectl's factory for the target the flags name (read
// when the command runs), with kubectl's client defaults.
func (f *Flags) Factory() cmdutil.Factory {
	return cmdutil.NewFactory(cmdutil.NewMatchVersionFlags(f.Getter(func() string {
		if f.Scope == Members {
			return f.Cluster
		}
		return ""
	})))
}

// Getter returns a RESTClientGetter of the control plane (cluster() == "")
// or of the member cluster() names, through the control plane's proxy.
func (f *Flags) Getter(cluster func() string) genericclioptions.RESTClientGetter {
	return &getter{config: f.config, cluster: cluster}
}

// ForCluster returns a RESTClientGetter of one member ("" : the control
// plane).
func (f *Flags) ForCluster(name string) genericclioptions.RESTClientGetter {
	return f.Getter(func() string { return name })
}

type getter struct {
	config  *genericclioptions.ConfigFlags
	cluster func() string
}

func (g *getter) ToRESTConfig() (*rest.Config, error) {
	cfg, err := g.config.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("reaching the Karmada control plane (--kubeconfig, --karmada-context): %w", err)
	}
	cfg = rest.CopyConfig(cfg)
	if c := g.cluster(); c != "" {
		cfg.Host = strings.TrimSuffix(cfg.Host, "/") + ProxyPath(c)
	}
	// kubectl's defaults: enough for a burst of discovery.
	if cfg.QPS == 0 {
		cfg.QPS, cfg.Burst = 50, 300
	}
	return cfg, nil
}

func (g *getter) ToDiscoveryClient() (discovery.CachedDiscoveryInterface, error) {
	cfg, err := g.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	cache := filepath.Join(homedir.HomeDir(), ".kube", "cache")
	if d := os.Getenv("KUBECACHEDIR"); d != "" {
		cache = d
	}
	return diskcached.NewCachedDiscoveryClientForConfig(cfg, filepath.Join(cache, "discovery", cacheDirName(cfg.Host)), filepath.Join(cache, "http"), 6*time.Hour)
}

func (g *getter) ToRESTMapper() (meta.RESTMapper, error) {
	dc, err := g.ToDiscoveryClient()
	if err != nil {
		return nil, err
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(dc)
	return restmapper.NewShortcutExpander(mapper, dc, func(string) {}), nil
}

func (g *getter) ToRawKubeConfigLoader() clientcmd.ClientConfig {
	return g.config.ToRawKubeConfigLoader()
}

var unsafeInPath = regexp.MustCompile(`[^a-zA-Z0-9._-]`)

// cacheDirName is a directory name for a server URL (its path included: a
// member's discovery is not the control plane's).
func cacheDirName(host string) string {
	h := strings.TrimPrefix(strings.TrimPrefix(host, "https://"), "http://")
	return unsafeInPath.ReplaceAllString(h, "_")
}
