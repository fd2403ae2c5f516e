package cmdinit

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	"github.com/karmada-go/karmada/internal/helmchart"
	"github.com/karmada-go/karmada/internal/karmadactl/options"
)

// DeinitOptions are deinit's flags.
type DeinitOptions struct {
	Context, Namespace string
	Force              bool
	PurgeNamespace     bool
	Timeout            time.Duration
	DryRun             bool
}

// NewDeinitCommand returns `karmadactl deinit`.
func NewDeinitCommand(g *options.Global) *cobra.Command {
	o := DeinitOptions{}
	cmd := &cobra.Command{
		Use:   "deinit",
		Short: "Remove the Karmada control plane that init installed from the host cluster",
		Long: `Remove the Karmada control plane from the host cluster: uninstall the release
karmada (every object of the chart, etcd's claims and data with it), wait
until its pods are gone, and delete the namespace when init created it and
it is empty (--purge-namespace). Member clusters are not touched: unjoin or
unregister them first if Karmada's copies in them should go.`,
		Example: `  karmadactl deinit --kubeconfig ~/.kube/host.config
  # without the question
  karmadactl deinit --force`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return RunDeinit(cmd.Context(), g.Kubeconfig, o, cmd.InOrStdin(), cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Context, "context", "", "context of --kubeconfig that reaches the host cluster")
	f.StringVarP(&o.Namespace, "namespace", "n", helmchart.DefaultNamespace, "namespace Karmada is installed in")
	f.BoolVarP(&o.Force, "force", "f", false, "do not ask for confirmation")
	f.BoolVar(&o.PurgeNamespace, "purge-namespace", true, "delete the namespace too, when init created it and nothing else is left in it")
	f.DurationVar(&o.Timeout, "timeout", 5*time.Minute, "how long to wait for the objects to be gone")
	f.BoolVar(&o.DryRun, "dry-run", false, "say what would be removed, and remove nothing")
	return cmd
}

// RunDeinit uninstalls the release.
func RunDeinit(ctx context.Context, kubeconfig string, o DeinitOptions, in io.Reader, out io.Writer) error {
	g := getter(kubeconfig, o.Context, o.Namespace)
	cfg, err := g.ToRESTConfig()
	if err != nil {
		return fmt.Errorf("reaching the host cluster (--kubeconfig, --context): %w", err)
	}
	if o.DryRun {
		fmt.Fprintf(out, "would uninstall release %s from namespace %s of %s\n", helmchart.DefaultRelease, o.Namespace, cfg.Host)
		return nil
	}
	if !o.Force {
		fmt.Fprintf(out, "Remove the Karmada control plane in namespace %s of %s, with its etcd data? [y/N]: ", o.Namespace, cfg.Host)
		answer, _ := bufio.NewReader(in).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
			return fmt.Errorf("deinit cancelled")
		}
	}
	found, err := helmchart.Uninstall(helmchart.Options{Getter: g, Namespace: o.Namespace, Release: helmchart.DefaultRelease, Timeout: o.Timeout, Wait: true})
	if err != nil {
		return err
	}
	if !found {
		fmt.Fprintf(out, "No release %s in namespace %s: nothing to uninstall.\n", helmchart.DefaultRelease, o.Namespace)
	} else {
		fmt.Fprintf(out, "Uninstalled release %s from namespace %s.\n", helmchart.DefaultRelease, o.Namespace)
	}
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	// Pods end after their controllers are deleted, and etcd's claims
	// after its pods; wait for both.
	if err := wait.PollUntilContextTimeout(ctx, time.Second, o.Timeout, true, func(ctx context.Context) (bool, error) {
		pods, err := kc.CoreV1().Pods(o.Namespace).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=" + helmchart.DefaultRelease})
		if err != nil || len(pods.Items) > 0 {
			return false, nil
		}
		// etcd's claims go with its StatefulSet (whenDeleted: Delete).
		claims, err := kc.CoreV1().PersistentVolumeClaims(o.Namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		for _, c := range claims.Items {
			if strings.HasPrefix(c.Name, "etcd-data-etcd-") {
				return false, nil
			}
		}
		return true, nil
	}); err != nil {
		return fmt.Errorf("the control plane's pods are still there after %s: %w", o.Timeout, err)
	}
	if !o.PurgeNamespace {
		return nil
	}
	ns, err := kc.CoreV1().Namespaces().Get(ctx, o.Namespace, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if ns.Labels[clusterv1alpha1.CreatedByLabel] != createdByInit {
		fmt.Fprintf(out, "Namespace %s was not created by karmadactl init: left in place.\n", o.Namespace)
		return nil
	}
	if left, err := leftovers(ctx, kc, o.Namespace); err != nil || len(left) > 0 {
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "Namespace %s still holds %s: left in place.\n", o.Namespace, strings.Join(left, ", "))
		return nil
	}
	if err := kc.CoreV1().Namespaces().Delete(ctx, o.Namespace, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &ns.UID}}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting namespace %s: %w", o.Namespace, err)
	}
	fmt.Fprintf(out, "Deleted namespace %s.\n", o.Namespace)
	return nil
}

// leftovers lists what else the namespace holds (workloads, Secrets and
// claims not of the release), which keeps deinit from deleting it.
func leftovers(ctx context.Context, kc kubernetes.Interface, ns string) ([]string, error) {
	var out []string
	pods, err := kc.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, p := range pods.Items {
		out = append(out, "pod "+p.Name)
	}
	secrets, err := kc.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, s := range secrets.Items {
		if s.Type == corev1.SecretTypeServiceAccountToken {
			continue
		}
		out = append(out, "secret "+s.Name)
	}
	pvcs, err := kc.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, c := range pvcs.Items {
		out = append(out, "claim "+c.Name)
	}
	return out, nil
}
