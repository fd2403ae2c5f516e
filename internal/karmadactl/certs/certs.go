// Package certs is `karmadactl certs check`: the certificates of a control
// plane installed on a host cluster (the chart, or karmadactl init), read
// from its Secrets, with their expiry and the components that use each.
package certs

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	certutil "k8s.io/client-go/util/cert"

	"github.com/karmada-go/karmada/internal/certexpiry"
	"github.com/karmada-go/karmada/internal/cli"
	"github.com/karmada-go/karmada/internal/helmchart"
	"github.com/karmada-go/karmada/internal/karmadactl/options"
)

// Options are the flags of certs check.
type Options struct {
	Context   string
	Namespace string
	Output    string
}

// NewCommand is `karmadactl certs`.
func NewCommand(g *options.Global) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "certs",
		Short: "Certificates of a Karmada control plane installed on a host cluster",
	}
	o := Options{}
	check := &cobra.Command{
		Use:   "check",
		Short: "List every certificate of the installed control plane: its expiry, time left, CA and the components that use it",
		Long: `List every certificate of the control plane that karmadactl init (or the
chart) installed in --namespace of the host cluster --kubeconfig reaches, read
from its Secrets: karmada-cert (the CAs, the serving certificates, etcd's) and
each component's kubeconfig Secret (its client certificate). To renew them in
place, upgrade the release with a new certs.auto.renewal token:
  helm upgrade karmada <chart> -n karmada-system --reuse-values --set certs.auto.renewal=$(date +%F)
For the local fleet, karmada-local certs check and certs renew.`,
		Example: `  karmadactl certs check --kubeconfig ~/.kube/host.config
  karmadactl certs check --kubeconfig ~/.kube/host.config -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := certexpiry.CheckOutput(o.Output); err != nil {
				return err
			}
			cfg, err := cli.LoadConfig(g.Kubeconfig, o.Context)
			if err != nil {
				return fmt.Errorf("reaching the host cluster (--kubeconfig, --context): %w", err)
			}
			kc, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				return err
			}
			certs, err := Check(cmd.Context(), kc, o.Namespace, time.Now())
			if err != nil {
				return err
			}
			return certexpiry.Write(cmd.OutOrStdout(), certs, o.Output)
		},
	}
	f := check.Flags()
	f.StringVar(&o.Context, "context", "", "context of --kubeconfig that reaches the host cluster")
	f.StringVarP(&o.Namespace, "namespace", "n", helmchart.DefaultNamespace, "namespace Karmada is installed in")
	f.StringVarP(&o.Output, "output", "o", "", "output format: json (default: a table)")
	cmd.AddCommand(check)
	return cmd
}

// usedBy says which components use each certificate of karmada-cert, by
// key, as the chart mounts them.
var usedBy = map[string][]string{
	"ca.crt":                               {"karmada-apiserver", "kube-controller-manager (signs agents' certificates)", "karmada-controller-manager", "karmada-scheduler", "karmada-webhook", "karmada-aggregated-apiserver", "karmada-search", "karmada-metrics-adapter", "karmada-kubeconfig"},
	"apiserver.crt":                        {"karmada-apiserver (serving)"},
	"webhook.crt":                          {"karmada-webhook (serving)"},
	"aggregated-apiserver.crt":             {"karmada-aggregated-apiserver (serving)"},
	"search.crt":                           {"karmada-search (serving; with components: [search])"},
	"front-proxy-ca.crt":                   {"karmada-apiserver (aggregation)"},
	"front-proxy-client.crt":               {"karmada-apiserver (aggregation client)"},
	"etcd-ca.crt":                          {"etcd", "karmada-apiserver", "karmada-aggregated-apiserver", "karmada-search"},
	"etcd-server.crt":                      {"etcd (serving and peers)"},
	"etcd-client.crt":                      {"karmada-apiserver (etcd client)"},
	"etcd-aggregated-apiserver-client.crt": {"karmada-aggregated-apiserver (etcd client)"},
	"etcd-search-client.crt":               {"karmada-search (etcd client)"},
	"admin.crt":                            {"karmada-kubeconfig (administrator)"},
	"karmada-controller-manager.crt":       {"karmada-controller-manager (client)"},
	"karmada-scheduler.crt":                {"karmada-scheduler (client)"},
	"karmada-webhook-client.crt":           {"karmada-webhook (client)"},
	"karmada-aggregated-apiserver.crt":     {"karmada-aggregated-apiserver (client)"},
	"karmada-search.crt":                   {"karmada-search (client)"},
	"metrics-adapter.crt":                  {"karmada-metrics-adapter (serving; with components: [metricsAdapter])"},
	"karmada-metrics-adapter.crt":          {"karmada-metrics-adapter (client)"},
	"kube-controller-manager.crt":          {"kube-controller-manager (client)"},
}

// kubeconfigSecrets are the Secrets holding a component's kubeconfig: its
// client certificate is tls.crt beside it, or embedded (the administrator's).
var kubeconfigSecrets = []string{"karmada-controller-manager-kubeconfig", "karmada-scheduler-kubeconfig",
	"karmada-webhook-kubeconfig", "kube-controller-manager-kubeconfig", "karmada-aggregated-apiserver-kubeconfig", "karmada-search-kubeconfig", "karmada-metrics-adapter-kubeconfig", "karmada-kubeconfig"}

// Check lists the certificates in namespace's Secrets.
func Check(ctx context.Context, kc kubernetes.Interface, namespace string, now time.Time) ([]certexpiry.Certificate, error) {
	secret, err := kc.CoreV1().Secrets(namespace).Get(ctx, "karmada-cert", metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("no Secret karmada-cert in namespace %s: is Karmada installed there (karmadactl init, or the chart; --namespace)?", namespace)
	}
	if err != nil {
		return nil, fmt.Errorf("reading Secret %s/karmada-cert: %w", namespace, err)
	}
	var out []certexpiry.Certificate
	add := func(where string, data []byte, users []string) error {
		certs, err := certutil.ParseCertsPEM(data)
		if err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		out = append(out, certexpiry.Describe(where, certs[0], now, users))
		return nil
	}
	keys := make([]string, 0, len(secret.Data))
	for k := range secret.Data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !strings.HasSuffix(k, ".crt") {
			continue
		}
		if err := add(namespace+"/karmada-cert:"+k, secret.Data[k], usedBy[k]); err != nil {
			return nil, err
		}
	}
	for _, name := range kubeconfigSecrets {
		s, err := kc.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading Secret %s/%s: %w", namespace, name, err)
		}
		user := strings.TrimSuffix(name, "-kubeconfig")
		if data := s.Data[corev1.TLSCertKey]; len(data) > 0 {
			if err := add(namespace+"/"+name+":"+corev1.TLSCertKey, data, []string{user + " (client)"}); err != nil {
				return nil, err
			}
			continue
		}
		cfg, err := clientcmd.Load(s.Data["kubeconfig"])
		if err != nil {
			return nil, fmt.Errorf("the kubeconfig in Secret %s/%s: %w", namespace, name, err)
		}
		for _, ai := range cfg.AuthInfos {
			if len(ai.ClientCertificateData) > 0 {
				if err := add(namespace+"/"+name+":kubeconfig", ai.ClientCertificateData, []string{name}); err != nil {
					return nil, err
				}
			}
		}
	}
	certexpiry.Sort(out)
	return out, nil
}
