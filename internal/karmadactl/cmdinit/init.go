// Package cmdinit is `karmadactl init` and `karmadactl deinit`: install the
// Karmada control plane on a host cluster, and remove it, with Karmada's
// flag names. Both go through the embedded Helm chart (internal/helmchart):
// what init installs is exactly what `helm install charts/karmada` does
// with the values its flags map to, recorded as the Helm release karmada.
package cmdinit

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	"github.com/karmada-go/karmada/internal/atomicfile"
	"github.com/karmada-go/karmada/internal/helmchart"
	"github.com/karmada-go/karmada/internal/karmadactl/options"
)

// createdByInit is clusterv1alpha1.CreatedByLabel's value.
const createdByInit = "karmadactl-init"

// Options are init's flags.
type Options struct {
	Context   string
	Namespace string
	// The karmada-apiserver's address and port as members and users
	// reach it (a node's address and the Service's NodePort).
	AdvertiseAddress string
	Port             int32
	// etcd.
	EtcdStorageMode    string
	EtcdReplicas       int32
	StorageClassName   string
	EtcdPVCSize        string
	EtcdHostDataPath   string
	ExternalEtcd       string
	ExternalEtcdCA     string
	ExternalEtcdCert   string
	ExternalEtcdKey    string
	ExternalEtcdPrefix string
	// Certificates.
	CertExternalIPs []string
	CertExternalDNS []string
	CertValidity    time.Duration
	CACertFile      string
	CAKeyFile       string
	// Replicas.
	APIServerReplicas, ControllerManagerReplicas, SchedulerReplicas, WebhookReplicas, KubeControllerManagerReplicas, AggregatedAPIServerReplicas int32
	// Images.
	ImageRegistry   string
	ImageTag        string
	ImagePullPolicy string
	Images          map[string]string
	// PullSecrets name Secrets of --namespace every pod pulls with.
	PullSecrets []string
	// KubeImageRegistry and KubeImageTag: of the Kubernetes images (etcd,
	// the karmada-apiserver, its kube-controller-manager).
	KubeImageRegistry, KubeImageTag string
	// EtcdNodeSelector is k=v[,k=v]: the nodes the chart's etcd runs on.
	EtcdNodeSelector string
	// PriorityClasses: a priorityClassFlags flag → the PriorityClass it
	// names.
	PriorityClasses map[string]string
	// HostClusterDomain is the host cluster's DNS domain.
	HostClusterDomain string
	// KarmadaData is where the administrator's kubeconfig is written.
	KarmadaData string
	Timeout     time.Duration
	DryRun      bool
}

// imageFlags map a Karmada image flag to the chart's component.
var imageFlags = map[string]string{
	"karmada-apiserver-image":               "apiServer",
	"karmada-kube-controller-manager-image": "kubeControllerManager",
	"karmada-controller-manager-image":      "controllerManager",
	"karmada-scheduler-image":               "scheduler",
	"karmada-webhook-image":                 "webhook",
	"karmada-aggregated-apiserver-image":    "aggregatedApiServer",
	"etcd-image":                            "etcd.internal",
	"karmadactl-image":                      "postInstallJob",
}

// kubeImages are the components whose images are Kubernetes' (Karmada's
// --kube-image-registry and --kube-image-tag).
var kubeImages = []string{"apiServer", "kubeControllerManager", "etcd.internal"}

// priorityClassFlags map Karmada's per-component PriorityClass flags to
// the chart's component.
var priorityClassFlags = map[string]string{
	"etcd-priority-class":                            "etcd.internal",
	"karmada-apiserver-priority-class":               "apiServer",
	"karmada-scheduler-priority-class":               "scheduler",
	"karmada-kube-controller-manager-priority-class": "kubeControllerManager",
	"karmada-controller-manager-priority-class":      "controllerManager",
	"karmada-webhook-priority-class":                 "webhook",
	"karmada-aggregated-apiserver-priority-class":    "aggregatedApiServer",
}

// refusedFlags are Karmada's init flags for what this init does otherwise,
// each with why.
var refusedFlags = map[string]string{
	"crds":                      "the CRDs are built into karmadactl and installed from it; nothing is downloaded",
	"config":                    "init takes its settings from flags only",
	"karmada-pki":               "the certificates live in Secrets of --namespace, not on the machine running init",
	"etcd-init-image":           "the chart's etcd has no init container",
	"kube-image-mirror-country": "the images are built (make images), never pulled from a mirror; use --kube-image-registry or --private-image-registry for your registry",
}

// Validate checks the flags before anything is touched.
func (o *Options) Validate() error {
	switch o.EtcdStorageMode {
	case "PVC", "emptyDir", "hostPath":
	default:
		return fmt.Errorf("--etcd-storage-mode=%q: must be PVC, emptyDir or hostPath", o.EtcdStorageMode)
	}
	if o.EtcdReplicas != 1 && o.EtcdReplicas != 3 {
		return fmt.Errorf("--etcd-replicas=%d: must be 1 or 3", o.EtcdReplicas)
	}
	if o.AdvertiseAddress != "" && net.ParseIP(o.AdvertiseAddress) == nil {
		return fmt.Errorf("--karmada-apiserver-advertise-address=%q: must be an IP address", o.AdvertiseAddress)
	}
	if o.Port != 0 && (o.Port < 1 || o.Port > 65535) {
		return fmt.Errorf("--port=%d: must be a port (1-65535), within the host cluster's NodePort range", o.Port)
	}
	if o.CertValidity < 24*time.Hour || o.CertValidity%time.Hour != 0 {
		return fmt.Errorf("--cert-validity-period=%s: must be whole hours, at least 24h (e.g. 8760h)", o.CertValidity)
	}
	if (o.CACertFile == "") != (o.CAKeyFile == "") {
		return fmt.Errorf("--ca-cert-file and --ca-key-file go together")
	}
	if o.ExternalEtcd != "" && (o.ExternalEtcdCA == "" || o.ExternalEtcdCert == "" || o.ExternalEtcdKey == "") {
		return fmt.Errorf("--external-etcd-servers needs --external-etcd-ca-cert-path, --external-etcd-client-cert-path and --external-etcd-client-key-path")
	}
	if o.Timeout < 0 {
		return fmt.Errorf("--wait-component-ready-timeout must not be negative (0: wait as long as it takes)")
	}
	if o.EtcdNodeSelector != "" {
		if _, err := labels.ConvertSelectorToLabelsMap(o.EtcdNodeSelector); err != nil {
			return fmt.Errorf("--etcd-node-selector-labels=%q: want key=value[,key=value]: %w", o.EtcdNodeSelector, err)
		}
	}
	for flag, name := range o.PriorityClasses {
		if errs := validation.IsDNS1123Subdomain(name); name != "" && len(errs) > 0 {
			return fmt.Errorf("--%s=%q: %s", flag, name, errs[0])
		}
	}
	if errs := validation.IsDNS1123Subdomain(o.HostClusterDomain); len(errs) > 0 {
		return fmt.Errorf("--host-cluster-domain=%q: %s", o.HostClusterDomain, errs[0])
	}
	return nil
}

func readFile(flag, path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("--%s: %w", flag, err)
	}
	return string(b), nil
}

// Values are the chart values the flags say.
func (o *Options) Values() (map[string]any, error) {
	v := values{}
	o.imageValues(v)
	if err := o.certValues(v); err != nil {
		return nil, err
	}
	if o.Port != 0 || o.AdvertiseAddress != "" {
		v.set("apiServer.serviceType", "NodePort")
		v.set("apiServer.nodePort", int64(o.Port))
	}
	if o.AdvertiseAddress != "" && o.Port != 0 {
		v.set("apiServer.externalURL", fmt.Sprintf("https://%s", net.JoinHostPort(o.AdvertiseAddress, fmt.Sprint(o.Port))))
	}
	if err := o.etcdValues(v); err != nil {
		return nil, err
	}
	if len(o.PullSecrets) > 0 {
		secrets := make([]any, 0, len(o.PullSecrets))
		for _, n := range o.PullSecrets {
			secrets = append(secrets, map[string]any{"name": n})
		}
		v.set("global.imagePullSecrets", secrets)
	}
	for flag, name := range o.PriorityClasses {
		if name != "" {
			v.set(priorityClassFlags[flag]+".priorityClassName", name)
		}
	}
	if o.HostClusterDomain != "" {
		v.set("clusterDomain", o.HostClusterDomain)
	}
	for comp, n := range map[string]int32{"apiServer": o.APIServerReplicas, "controllerManager": o.ControllerManagerReplicas,
		"scheduler": o.SchedulerReplicas, "webhook": o.WebhookReplicas, "kubeControllerManager": o.KubeControllerManagerReplicas,
		"aggregatedApiServer": o.AggregatedAPIServerReplicas} {
		v.set(comp+".replicaCount", int64(n))
	}
	return v, nil
}

// values are the chart's values, set by dotted path.
type values map[string]any

func (v values) set(path string, val any) {
	m := map[string]any(v)
	parts := strings.Split(path, ".")
	for _, p := range parts[:len(parts)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	m[parts[len(parts)-1]] = val
}

// imageValues: the registry, tag and pull policy of every image, and each
// image flag's reference split into registry, repository and tag.
func (o *Options) imageValues(v values) {
	if o.ImageRegistry != "" {
		v.set("global.imageRegistry", o.ImageRegistry)
	}
	for _, comp := range kubeImages {
		if o.KubeImageRegistry != "" {
			v.set(comp+".image.registry", o.KubeImageRegistry)
		}
		if o.KubeImageTag != "" {
			v.set(comp+".image.tag", o.KubeImageTag)
		}
	}
	for flag, comp := range imageFlags {
		if o.ImageTag != "" {
			v.set(comp+".image.tag", o.ImageTag)
		}
		if o.ImagePullPolicy != "" {
			v.set(comp+".image.pullPolicy", o.ImagePullPolicy)
		}
		ref, ok := o.Images[flag]
		if !ok || ref == "" {
			continue
		}
		repo, tag := ref, ""
		if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
			repo, tag = ref[:i], ref[i+1:]
		}
		registry := ""
		if i := strings.Index(repo, "/"); i > 0 && strings.ContainsAny(repo[:i], ".:") {
			registry, repo = repo[:i], repo[i+1:]
		}
		v.set(comp+".image.registry", registry)
		v.set(comp+".image.repository", repo)
		if tag != "" {
			v.set(comp+".image.tag", tag)
		}
	}
}

// certValues: the certificates' lifetime and extra names, and a CA of the
// user's (--ca-cert-file, --ca-key-file).
func (o *Options) certValues(v values) error {
	v.set("certs.auto.expiry", fmt.Sprintf("%dh", int(o.CertValidity.Hours())))
	hosts := append(append([]string{}, o.CertExternalIPs...), o.CertExternalDNS...)
	if o.AdvertiseAddress != "" {
		hosts = append(hosts, o.AdvertiseAddress)
	}
	if len(hosts) > 0 {
		v.set("certs.auto.hosts", toAny(hosts))
	}
	if o.CACertFile != "" {
		crt, err := readFile("ca-cert-file", o.CACertFile)
		if err != nil {
			return err
		}
		key, err := readFile("ca-key-file", o.CAKeyFile)
		if err != nil {
			return err
		}
		v.set("certs.mode", "custom")
		v.set("certs.custom.caCrt", crt)
		v.set("certs.custom.caKey", key)
	}
	return nil
}

// etcdValues: an external etcd with its certificates, or the chart's own
// with its storage.
func (o *Options) etcdValues(v values) error {
	if o.ExternalEtcd != "" {
		v.set("etcd.mode", "external")
		v.set("etcd.external.servers", o.ExternalEtcd)
		if o.ExternalEtcdPrefix != "" {
			v.set("etcd.external.registryPrefix", o.ExternalEtcdPrefix)
		}
		for flag, key := range map[string]string{"external-etcd-ca-cert-path": "caCrt", "external-etcd-client-cert-path": "crt", "external-etcd-client-key-path": "key"} {
			path := map[string]string{"external-etcd-ca-cert-path": o.ExternalEtcdCA, "external-etcd-client-cert-path": o.ExternalEtcdCert, "external-etcd-client-key-path": o.ExternalEtcdKey}[flag]
			data, err := readFile(flag, path)
			if err != nil {
				return err
			}
			v.set("etcd.external.certs."+key, data)
		}
	} else {
		v.set("etcd.internal.replicaCount", int64(o.EtcdReplicas))
		v.set("etcd.internal.storageType", map[string]string{"PVC": "pvc", "emptyDir": "emptyDir", "hostPath": "hostPath"}[o.EtcdStorageMode])
		if o.StorageClassName != "" {
			v.set("etcd.internal.pvc.storageClass", o.StorageClassName)
		}
		if o.EtcdPVCSize != "" {
			v.set("etcd.internal.pvc.size", o.EtcdPVCSize)
		}
		if o.EtcdHostDataPath != "" {
			v.set("etcd.internal.hostPath.path", o.EtcdHostDataPath)
		}
		if o.EtcdNodeSelector != "" {
			sel, _ := labels.ConvertSelectorToLabelsMap(o.EtcdNodeSelector)
			m := map[string]any{}
			for k, x := range sel {
				m[k] = x
			}
			v.set("etcd.internal.nodeSelector", m)
		}
	}
	return nil
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, x := range s {
		out[i] = x
	}
	return out
}

// NewInitCommand returns `karmadactl init`.
func NewInitCommand(g *options.Global) *cobra.Command {
	o := Options{Images: map[string]string{}, PriorityClasses: map[string]string{}, Timeout: 10 * time.Minute}
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Install the Karmada control plane on a host Kubernetes cluster",
		Long: `Install the Karmada control plane on the host cluster --kubeconfig reaches:
etcd, the karmada-apiserver, its kube-controller-manager,
karmada-controller-manager, karmada-scheduler, karmada-webhook and
karmada-aggregated-apiserver, each with
an identity of its own, then the CRDs, webhooks and RBAC in the
karmada-apiserver. It installs the embedded Helm chart (the release karmada
in --namespace), so helm list, helm upgrade and helm uninstall work on it
too, and running init again upgrades in place. It waits until every
component is ready, then writes the administrator's kubeconfig to
--karmada-data/karmada-apiserver.config.`,
		Example: `  # On a cluster whose node 172.30.255.1 members can reach, NodePort 32443
  karmadactl init --kubeconfig ~/.kube/host.config --karmada-apiserver-advertise-address 172.30.255.1

  # Three etcd members on the cluster's default StorageClass, certificates valid two years
  karmadactl init --etcd-replicas 3 --cert-validity-period 17520h

  # Print what would be installed
  karmadactl init --dry-run`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			for flag := range imageFlags {
				if v, _ := cmd.Flags().GetString(flag); v != "" {
					o.Images[flag] = v
				}
			}
			for flag := range priorityClassFlags {
				o.PriorityClasses[flag], _ = cmd.Flags().GetString(flag)
			}
			for flag, why := range refusedFlags {
				if cmd.Flags().Changed(flag) {
					return fmt.Errorf("--%s: not supported: %s", flag, why)
				}
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return RunInit(cmd.Context(), g.Kubeconfig, o, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Context, "context", "", "context of --kubeconfig that reaches the host cluster (default: its current context)")
	f.StringVarP(&o.Namespace, "namespace", "n", helmchart.DefaultNamespace, "namespace of the host cluster to install into")
	f.StringVar(&o.AdvertiseAddress, "karmada-apiserver-advertise-address", "", "address of a host node members and users reach the karmada-apiserver at (its NodePort --port); added to the serving certificate")
	f.Int32VarP(&o.Port, "port", "p", 32443, "NodePort of the karmada-apiserver; 0 with no --karmada-apiserver-advertise-address: a ClusterIP Service only")
	f.StringVar(&o.EtcdStorageMode, "etcd-storage-mode", "PVC", "etcd's storage: PVC (the StorageClass --storage-classes-name, or the default one), emptyDir (lost with the pod) or hostPath (not allowed by restricted Pod Security)")
	f.Int32Var(&o.EtcdReplicas, "etcd-replicas", 1, "etcd members: 1 or 3")
	f.StringVar(&o.StorageClassName, "storage-classes-name", "", "StorageClass of etcd's claims (default: the cluster's default)")
	f.StringVar(&o.EtcdPVCSize, "etcd-pvc-size", "5Gi", "size of each etcd member's claim")
	f.StringVar(&o.EtcdHostDataPath, "etcd-data", "", "etcd's directory on the node with --etcd-storage-mode hostPath (default /var/lib/karmada-etcd)")
	f.StringVar(&o.ExternalEtcd, "external-etcd-servers", "", "client URLs of an etcd of yours, comma-separated, instead of the chart's")
	f.StringVar(&o.ExternalEtcdCA, "external-etcd-ca-cert-path", "", "CA of the external etcd")
	f.StringVar(&o.ExternalEtcdCert, "external-etcd-client-cert-path", "", "client certificate for the external etcd")
	f.StringVar(&o.ExternalEtcdKey, "external-etcd-client-key-path", "", "client key for the external etcd")
	f.StringVar(&o.ExternalEtcdPrefix, "external-etcd-key-prefix", "", "key prefix in the external etcd (default /registry/karmada)")
	f.StringSliceVar(&o.CertExternalIPs, "cert-external-ip", nil, "more IP addresses of the karmada-apiserver's serving certificate")
	f.StringSliceVar(&o.CertExternalDNS, "cert-external-dns", nil, "more DNS names of the karmada-apiserver's serving certificate")
	f.DurationVar(&o.CertValidity, "cert-validity-period", 8760*time.Hour, "lifetime of the certificates init makes (whole hours)")
	f.StringVar(&o.CACertFile, "ca-cert-file", "", "a CA of yours (PEM) to sign every certificate with, instead of a new one")
	f.StringVar(&o.CAKeyFile, "ca-key-file", "", "the key of --ca-cert-file")
	f.Int32Var(&o.APIServerReplicas, "karmada-apiserver-replicas", 1, "karmada-apiserver replicas")
	f.Int32Var(&o.ControllerManagerReplicas, "karmada-controller-manager-replicas", 1, "karmada-controller-manager replicas (leader-elected)")
	f.Int32Var(&o.SchedulerReplicas, "karmada-scheduler-replicas", 1, "karmada-scheduler replicas (leader-elected)")
	f.Int32Var(&o.WebhookReplicas, "karmada-webhook-replicas", 1, "karmada-webhook replicas")
	f.Int32Var(&o.AggregatedAPIServerReplicas, "karmada-aggregated-apiserver-replicas", 1, "karmada-aggregated-apiserver replicas")
	f.Int32Var(&o.KubeControllerManagerReplicas, "karmada-kube-controller-manager-replicas", 1, "kube-controller-manager replicas (leader-elected)")
	f.StringVar(&o.ImageRegistry, "private-image-registry", "", "registry of every image, in place of their own")
	f.StringVar(&o.ImageTag, "image-tag", "", "tag of every image (default: the chart's appVersion, the tag make images writes)")
	f.StringVar(&o.ImagePullPolicy, "image-pull-policy", "", "pull policy of every image: Always, IfNotPresent or Never (default IfNotPresent)")
	for flag, comp := range imageFlags {
		f.String(flag, "", "image of "+comp+" (registry/repository:tag)")
	}
	f.StringSliceVar(&o.PullSecrets, "image-pull-secrets", nil, "Secrets of --namespace every pod pulls its image with (comma-separated)")
	f.StringVar(&o.KubeImageRegistry, "kube-image-registry", "", "registry of the Kubernetes images (etcd, the karmada-apiserver, its kube-controller-manager)")
	f.StringVar(&o.KubeImageTag, "kube-image-tag", "", "tag of the Kubernetes images (default: the chart's)")
	f.StringVar(&o.EtcdNodeSelector, "etcd-node-selector-labels", "", "nodes the chart's etcd runs on, key=value[,key=value]")
	for flag := range priorityClassFlags {
		f.String(flag, "", "PriorityClass of the "+strings.TrimSuffix(flag, "-priority-class")+" pods (default: none, the cluster's default priority; Karmada's is system-node-critical)")
	}
	f.StringVar(&o.HostClusterDomain, "host-cluster-domain", "cluster.local", "the host cluster's DNS domain (its Services' names end in svc.<domain>)")
	for flag, why := range refusedFlags {
		f.String(flag, "", "refused: "+why)
	}
	f.StringVar(&o.KarmadaData, "karmada-data", "/etc/karmada", "directory the administrator's kubeconfig (karmada-apiserver.config) is written to")
	f.Var((*waitTimeout)(&o.Timeout), "wait-component-ready-timeout", "how long to wait for every component to be ready: seconds, as Karmada's (0: as long as it takes), or a duration such as 10m (default 10m0s)")
	f.BoolVar(&o.DryRun, "dry-run", false, "print the objects that would be installed, and install nothing")
	return cmd
}

// waitTimeout is --wait-component-ready-timeout: whole seconds, as
// Karmada's flag takes it (0: no limit), or a Go duration.
type waitTimeout time.Duration

func (w *waitTimeout) String() string { return time.Duration(*w).String() }
func (w *waitTimeout) Type() string   { return "seconds|duration" }
func (w *waitTimeout) Set(s string) error {
	if n, err := strconv.Atoi(s); err == nil {
		if n < 0 {
			return fmt.Errorf("%d: must not be negative", n)
		}
		*w = waitTimeout(time.Duration(n) * time.Second)
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("%q: want seconds (e.g. 600) or a duration (e.g. 10m)", s)
	}
	*w = waitTimeout(d)
	return nil
}

// getter reaches the host cluster.
func getter(kubeconfig, context, namespace string) *genericclioptions.ConfigFlags {
	cf := genericclioptions.NewConfigFlags(false)
	cf.KubeConfig, cf.Context, cf.Namespace = &kubeconfig, &context, &namespace
	return cf
}

// RunInit installs (or upgrades) the release and writes the kubeconfig.
func RunInit(ctx context.Context, kubeconfig string, o Options, out io.Writer) error {
	vals, err := o.Values()
	if err != nil {
		return err
	}
	ch, err := helmchart.Load()
	if err != nil {
		return err
	}
	if o.DryRun {
		r, err := helmchart.Render(ctx, ch, vals, helmchart.DefaultRelease, o.Namespace)
		if err != nil {
			return err
		}
		for _, m := range r.Manifests {
			fmt.Fprintf(out, "---\n%s\n", m.Content)
		}
		for _, h := range r.Hooks {
			fmt.Fprintf(out, "---\n%s\n", h.Manifest)
		}
		return nil
	}
	g := getter(kubeconfig, o.Context, o.Namespace)
	cfg, err := g.ToRESTConfig()
	if err != nil {
		return fmt.Errorf("reaching the host cluster (--kubeconfig, --context): %w", err)
	}
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	if err := ensureNamespace(ctx, kc, o.Namespace); err != nil {
		return err
	}
	began := time.Now()
	fmt.Fprintf(out, "Installing the Karmada control plane in namespace %s of %s\n", o.Namespace, cfg.Host)
	timeout := o.Timeout
	if timeout == 0 {
		// As Karmada's 0: as long as it takes (until interrupted).
		timeout = 100 * 365 * 24 * time.Hour
	}
	rel, err := helmchart.Apply(ctx, ch, vals, helmchart.Options{Getter: g, Namespace: o.Namespace, Release: helmchart.DefaultRelease, Timeout: timeout, Wait: true})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Release %s revision %d: every component ready in %.0fs\n", rel.Name, rel.Version, time.Since(began).Seconds())
	s, err := kc.CoreV1().Secrets(o.Namespace).Get(ctx, "karmada-kubeconfig", metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading the administrator's kubeconfig: %w", err)
	}
	path := filepath.Join(o.KarmadaData, "karmada-apiserver.config")
	if err := os.MkdirAll(o.KarmadaData, 0o700); err != nil {
		return err
	}
	// Replaced whole with mode 0600: an existing file's mode is not kept,
	// and a symbolic link there is replaced, not followed.
	if err := atomicfile.Write(path, s.Data["kubeconfig"], 0o600); err != nil {
		return err
	}
	fmt.Fprintf(out, `Karmada is installed. Its administrator's kubeconfig is %s:
  kubectl --kubeconfig %s get clusters
Join a member cluster (push mode):
  karmadactl --kubeconfig %s join <name> --cluster-kubeconfig <member kubeconfig>
or register one in pull mode (run the printed command against the member):
  karmadactl --kubeconfig %s token create --print-register-command
`, path, path, path, path)
	return nil
}

// ensureNamespace creates the namespace, marked as init's, when missing.
func ensureNamespace(ctx context.Context, kc kubernetes.Interface, name string) error {
	_, err := kc.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
	if err == nil {
		return nil
	}
	if !apierrors.IsNotFound(err) {
		return fmt.Errorf("reading namespace %s: %w", name, err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
		clusterv1alpha1.CreatedByLabel: createdByInit,
		// Every pod of the chart passes the restricted standard.
		"pod-security.kubernetes.io/enforce": "restricted",
	}}}
	if _, err := kc.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", name, err)
	}
	return nil
}
