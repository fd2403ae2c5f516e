package addons

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/storage/driver"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"

	"github.com/karmada-go/karmada/internal/helmchart"
)

// Options say where the control plane is installed.
type Options struct {
	// Kubeconfig and Context reach the host cluster.
	Kubeconfig, Context string
	Namespace           string
	// Cluster names the member of a scheduler estimator; MemberKubeconfig
	// and MemberContext reach it (enable).
	Cluster, MemberKubeconfig, MemberContext string
	Timeout                                  time.Duration
}

func (o Options) getter() *genericclioptions.ConfigFlags {
	cf := genericclioptions.NewConfigFlags(false)
	cf.KubeConfig, cf.Context, cf.Namespace = &o.Kubeconfig, &o.Context, &o.Namespace
	return cf
}

// values are the release's own values (what was given at install or
// upgrade, as `helm get values` prints them).
func (o Options) values() (map[string]any, error) {
	cfg := &action.Configuration{}
	if err := cfg.Init(o.getter(), o.Namespace, "secret", func(string, ...any) {}); err != nil {
		return nil, fmt.Errorf("reaching the host cluster (--kubeconfig, --context): %w", err)
	}
	vals, err := action.NewGetValues(cfg).Run(helmchart.DefaultRelease)
	if errors.Is(err, driver.ErrReleaseNotFound) {
		return nil, fmt.Errorf("no release %s in namespace %s of the host cluster: install the control plane with karmadactl init first (or give --namespace)", helmchart.DefaultRelease, o.Namespace)
	}
	if err != nil {
		return nil, fmt.Errorf("reading release %s in namespace %s: %w", helmchart.DefaultRelease, o.Namespace, err)
	}
	if vals == nil {
		vals = map[string]any{}
	}
	return vals, nil
}

// deployments are the Deployments an enabled addon runs.
func deployments(vals map[string]any, a Addon) []string {
	if a.Name == estimator {
		var out []string
		for _, m := range EstimatorMembers(vals) {
			out = append(out, estimator+"-"+m)
		}
		return out
	}
	return []string{a.Name}
}

// Status is the addon's: disabled when the release does not run it,
// enabled when every Deployment of it has all its replicas ready,
// unhealthy otherwise, unknown when they cannot be read.
func Status(ctx context.Context, kc kubernetes.Interface, namespace string, vals map[string]any, a Addon) string {
	if !Enabled(vals, a) {
		return StatusDisabled
	}
	for _, name := range deployments(vals, a) {
		d, err := kc.AppsV1().Deployments(namespace).Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return StatusUnhealthy
		case err != nil:
			return StatusUnknown
		}
		want := int32(1)
		if d.Spec.Replicas != nil {
			want = *d.Spec.Replicas
		}
		if d.Status.ReadyReplicas < want || d.Status.UpdatedReplicas < want {
			return StatusUnhealthy
		}
	}
	return StatusEnabled
}

// PrintTable prints rows of name and status in a bordered table, as
// Karmada's addons list does.
func PrintTable(out io.Writer, rows [][2]string) {
	header := [2]string{"ADDON NAME", "STATUS"}
	width := [2]int{len(header[0]), len(header[1])}
	for _, r := range rows {
		for i := range r {
			width[i] = max(width[i], len(r[i]))
		}
	}
	line := "|" + strings.Repeat("-", width[0]+2) + "|" + strings.Repeat("-", width[1]+2) + "|\n"
	center := func(s string, w int) string {
		gap := w - len(s)
		return strings.Repeat(" ", gap/2) + s + strings.Repeat(" ", gap-gap/2)
	}
	fmt.Fprint(out, line)
	fmt.Fprintf(out, "| %s | %s |\n", center(header[0], width[0]), center(header[1], width[1]))
	fmt.Fprint(out, line)
	for _, r := range rows {
		fmt.Fprintf(out, "| %-*s | %-*s |\n", width[0], r[0], width[1], r[1])
	}
	fmt.Fprint(out, line)
}

// RunList prints every addon's status.
func RunList(ctx context.Context, o Options, out io.Writer) error {
	vals, err := o.values()
	if err != nil {
		return err
	}
	cfg, err := o.getter().ToRESTConfig()
	if err != nil {
		return err
	}
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	var rows [][2]string
	for _, a := range Known {
		rows = append(rows, [2]string{a.Name, Status(ctx, kc, o.Namespace, vals, a)})
	}
	PrintTable(out, rows)
	return nil
}

// RunChange enables or disables the addons: the release upgraded with its
// values, components changed, waiting until every object is ready.
func RunChange(ctx context.Context, o Options, args []string, enable bool, out io.Writer) error {
	list, err := Resolve(args, !enable)
	if err != nil {
		return err
	}
	var member *Member
	for _, a := range list {
		if a.Name == estimator && enable {
			if o.Cluster == "" || o.MemberKubeconfig == "" {
				return fmt.Errorf("%s runs one per member cluster: give --cluster and --member-kubeconfig", estimator)
			}
			if member, err = MemberFromKubeconfig(o.Cluster, o.MemberKubeconfig, o.MemberContext); err != nil {
				return err
			}
		}
	}
	vals, err := o.values()
	if err != nil {
		return err
	}
	var next map[string]any
	if enable {
		next, err = Enable(vals, list, member)
	} else {
		next, err = Disable(vals, list, o.Cluster)
	}
	if err != nil {
		return err
	}
	ch, err := helmchart.Load()
	if err != nil {
		return err
	}
	verb := map[bool]string{true: "Enabling", false: "Disabling"}[enable]
	var named []string
	for _, a := range list {
		named = append(named, a.Name)
	}
	fmt.Fprintf(out, "%s %s in namespace %s\n", verb, strings.Join(named, ", "), o.Namespace)
	began := time.Now()
	rel, err := helmchart.Apply(ctx, ch, next, helmchart.Options{Getter: o.getter(), Namespace: o.Namespace, Release: helmchart.DefaultRelease, Timeout: o.Timeout, Wait: true})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Release %s revision %d: every component ready in %.0fs\n", rel.Name, rel.Version, time.Since(began).Seconds())
	return nil
}

// NewCommand returns `karmadactl addons`; kubeconfig is the global
// --kubeconfig (the host cluster's here, as for init).
func NewCommand(kubeconfig *string) *cobra.Command {
	o := Options{}
	cmd := &cobra.Command{
		Use:   "addons",
		Short: "Enable or disable the control plane's optional components (karmada-descheduler, karmada-metrics-adapter, karmada-scheduler-estimator, karmada-search)",
		Long: `List, enable and disable the optional components of a control plane installed
with karmadactl init (or helm install of the chart) on the host cluster
--kubeconfig reaches. An addon is a component of the release karmada: enabling
or disabling one upgrades the release with its own values and that component
turned on or off, and waits until every object is ready.

These addons are supported:
  karmada-descheduler          (needs a karmada-scheduler-estimator)
  karmada-metrics-adapter      (metrics.k8s.io and custom.metrics.k8s.io of the members)
  karmada-scheduler-estimator  (one per member: --cluster and --member-kubeconfig)
  karmada-search`,
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&o.Context, "context", "", "context of --kubeconfig that reaches the host cluster")
	pf.StringVarP(&o.Namespace, "namespace", "n", helmchart.DefaultNamespace, "namespace Karmada is installed in")
	pf.StringVarP(&o.Cluster, "cluster", "C", "", "member cluster of the karmada-scheduler-estimator to enable or disable")
	list := &cobra.Command{
		Use:     "list",
		Short:   "List the addons and their status (enabled, disabled, unhealthy, unknown)",
		Example: "  karmadactl addons list --kubeconfig ~/.kube/host.config",
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			o.Kubeconfig = *kubeconfig
			return RunList(c.Context(), o, c.OutOrStdout())
		},
	}
	enable := &cobra.Command{
		Use:   "enable NAME... | all",
		Short: "Enable addons (all: every one but karmada-scheduler-estimator)",
		Example: `  karmadactl addons enable karmada-search karmada-metrics-adapter --kubeconfig ~/.kube/host.config
  karmadactl addons enable karmada-scheduler-estimator -C member1 --member-kubeconfig member1-estimator.config`,
		RunE: func(c *cobra.Command, args []string) error {
			o.Kubeconfig = *kubeconfig
			return RunChange(c.Context(), o, args, true, c.OutOrStdout())
		},
	}
	enable.Flags().StringVar(&o.MemberKubeconfig, "member-kubeconfig", "", "kubeconfig of the --cluster member, with a client certificate: the estimator's identity there")
	enable.Flags().StringVar(&o.MemberContext, "member-context", "", "context of --member-kubeconfig (default: its current context)")
	enable.Flags().DurationVar(&o.Timeout, "pod-timeout", 5*time.Minute, "how long to wait for every component to be ready")
	disable := &cobra.Command{
		Use:     "disable NAME... | all",
		Short:   "Disable addons (with --cluster, one member's karmada-scheduler-estimator)",
		Example: "  karmadactl addons disable karmada-search --kubeconfig ~/.kube/host.config",
		RunE: func(c *cobra.Command, args []string) error {
			o.Kubeconfig = *kubeconfig
			return RunChange(c.Context(), o, args, false, c.OutOrStdout())
		},
	}
	disable.Flags().DurationVar(&o.Timeout, "pod-timeout", 5*time.Minute, "how long to wait for the release to settle")
	cmd.AddCommand(list, enable, disable)
	return cmd
}
