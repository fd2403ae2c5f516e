package plan

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	"github.com/karmada-go/karmada/internal/clusters/join"
	"github.com/karmada-go/karmada/internal/controlplane"
	"github.com/karmada-go/karmada/internal/estimator"
	"github.com/karmada-go/karmada/internal/localup/pki"
	"github.com/karmada-go/karmada/internal/scheme"
)

const (
	kwokNodeAnnotation = "kwok.x-k8s.io/node"
	// resourceMetricsPathAnnotation tells metrics-server where a node's
	// kubelet resource metrics are: kwok serves every node's under its own
	// path of one server.
	resourceMetricsPathAnnotation = "metrics.k8s.io/resource-metrics-path"
	// managedNodeLabel marks the nodes karmada-local created, so that it only
	// ever removes its own.
	managedNodeLabel = "karmada-local.karmada.io/node-index"
)

func (c *Cluster) restConfig() (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", c.adminConfig)
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", c.adminConfig, err)
	}
	cfg.QPS, cfg.Burst = 50, 100
	return cfg, nil
}

// setupControlPlane installs what the control plane needs in its API server
// (controlplane.Install): the CRDs with the bindings' conversion and the
// admission webhooks pointed at karmada-webhook, the components' RBAC, flow
// control, cluster-info, namespaces and the default ClusterTaintPolicy.
func (f *Fleet) setupControlPlane(c *Cluster) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		cfg, err := c.restConfig()
		if err != nil {
			return err
		}
		return controlplane.Install(ctx, cfg, controlplane.Options{
			WebhookURL: c.webhookURL(), WebhookCABundle: c.CA.CertPEM,
			APIServerURL: c.apiURL(), CABundle: c.CA.CertPEM,
			AggregatedAPIServer: f.aggregatedAPIServer(c),
		})
	}
}

// memberTopology gives each member its own region and zones, so that
// placement by region and zone has something to tell apart.
func memberTopology(index int) (region string, zones []string) {
	regions := []string{"us-east-1", "eu-west-1", "ap-southeast-1", "us-west-2", "eu-central-1", "ap-northeast-1", "sa-east-1", "ca-central-1"}
	region = regions[(index-1)%len(regions)]
	if index > len(regions) {
		region = fmt.Sprintf("%s-%d", region, (index-1)/len(regions)+1)
	}
	for _, z := range []string{"a", "b", "c"} {
		zones = append(zones, region+z)
	}
	return region, zones
}

// kwokNode is the Node object of kwok node i (1-based) of a member: a
// realistic mid-size machine, labelled with the member's topology.
func kwokNode(c *Cluster, i int, custom corev1.ResourceList) *corev1.Node {
	region, zones := memberTopology(c.Index)
	name := fmt.Sprintf("%s-node%d", c.Name, i)
	capacity := NodeCapacity(custom)
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: name,
			Labels: map[string]string{
				"kubernetes.io/hostname":           name,
				"kubernetes.io/os":                 "linux",
				"kubernetes.io/arch":               "amd64",
				"node.kubernetes.io/instance-type": instanceType(capacity),
				"topology.kubernetes.io/region":    region,
				"topology.kubernetes.io/zone":      zones[(i-1)%len(zones)],
				"type":                             "kwok",
				managedNodeLabel:                   strconv.Itoa(i),
			},
			Annotations: map[string]string{
				kwokNodeAnnotation:             "fake",
				"node.alpha.kubernetes.io/ttl": "0",
				resourceMetricsPathAnnotation:  resourceMetricsPath(name),
			},
		},
		Status: corev1.NodeStatus{
			Capacity:    capacity,
			Allocatable: capacity,
			NodeInfo: corev1.NodeSystemInfo{
				Architecture:    "amd64",
				OperatingSystem: "linux",
				KubeletVersion:  "kwok",
			},
			Phase: corev1.NodeRunning,
		},
	}
}

// NodeCapacity is a kwok node's capacity: a realistic mid-size machine
// (8 cpu, 32Gi, 110 pods), or what --node-capacity says.
func NodeCapacity(custom corev1.ResourceList) corev1.ResourceList {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:              resource.MustParse("8"),
		corev1.ResourceMemory:           resource.MustParse("32Gi"),
		corev1.ResourcePods:             resource.MustParse("110"),
		corev1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
	}
	for n, q := range custom {
		capacity[n] = q.DeepCopy()
	}
	return capacity
}

// instanceType names the node size, as kwok.<cpu>c<memory in Gi>g.
func instanceType(capacity corev1.ResourceList) string {
	mem := capacity[corev1.ResourceMemory]
	return fmt.Sprintf("kwok.%dc%dg", capacity.Cpu().Value(), mem.Value()>>30)
}

// ParseNodeCapacity reads --node-capacity values, MEMBER:RESOURCE=QUANTITY
// [,RESOURCE=QUANTITY...], e.g. member2:cpu=16,memory=64Gi.
func ParseNodeCapacity(values []string) (map[string]corev1.ResourceList, error) {
	if len(values) == 0 {
		return nil, nil
	}
	out := map[string]corev1.ResourceList{}
	for _, v := range values {
		member, list, ok := strings.Cut(v, ":")
		if !ok || member == "" || list == "" {
			return nil, fmt.Errorf("--node-capacity %q: want MEMBER:RESOURCE=QUANTITY[,RESOURCE=QUANTITY], e.g. member2:cpu=16,memory=64Gi", v)
		}
		parsed, err := estimator.ParseResourceList(list)
		if err != nil {
			return nil, fmt.Errorf("--node-capacity %q: %w", v, err)
		}
		if out[member] == nil {
			out[member] = corev1.ResourceList{}
		}
		for name, q := range parsed {
			out[member][name] = q
		}
	}
	return out, nil
}

// setupMember creates the member's kwok nodes (removing managed nodes beyond
// the requested count), waits until all are Ready, and waits for the default
// ServiceAccount so that pods can be created at once.
func (f *Fleet) setupMember(c *Cluster) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		cfg, err := c.restConfig()
		if err != nil {
			return err
		}
		kc, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return err
		}
		for i := 1; i <= f.Cfg.NodesPerMember; i++ {
			_, err := kc.CoreV1().Nodes().Create(ctx, kwokNode(c, i, f.Cfg.NodeCapacity[c.Name]), metav1.CreateOptions{})
			if err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("creating node %d of %s: %w", i, c.Name, err)
			}
		}
		existing, err := kc.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: managedNodeLabel})
		if err != nil {
			return fmt.Errorf("listing nodes of %s: %w", c.Name, err)
		}
		for _, n := range existing.Items {
			if i, err := strconv.Atoi(n.Labels[managedNodeLabel]); err == nil && i > f.Cfg.NodesPerMember {
				if err := kc.CoreV1().Nodes().Delete(ctx, n.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
					return fmt.Errorf("removing node %s: %w", n.Name, err)
				}
				continue
			}
			// A node of an earlier fleet takes the size asked for now.
			if want := NodeCapacity(f.Cfg.NodeCapacity[c.Name]); !equality.Semantic.DeepEqual(n.Status.Capacity, want) || !equality.Semantic.DeepEqual(n.Status.Allocatable, want) {
				n.Status.Capacity, n.Status.Allocatable = want, want
				if _, err := kc.CoreV1().Nodes().UpdateStatus(ctx, &n, metav1.UpdateOptions{}); err != nil {
					return fmt.Errorf("resizing node %s: %w", n.Name, err)
				}
				n.Labels["node.kubernetes.io/instance-type"] = instanceType(want)
				patch := fmt.Appendf(nil, `{"metadata":{"labels":{"node.kubernetes.io/instance-type":%q}}}`, instanceType(want))
				if _, err := kc.CoreV1().Nodes().Patch(ctx, n.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
					return fmt.Errorf("labelling node %s: %w", n.Name, err)
				}
			}
			// metrics-server scrapes the node's metrics where kwok serves
			// them (a node of an earlier fleet gets the annotation now).
			if n.Annotations[resourceMetricsPathAnnotation] != resourceMetricsPath(n.Name) {
				patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, resourceMetricsPathAnnotation, resourceMetricsPath(n.Name))
				if _, err := kc.CoreV1().Nodes().Patch(ctx, n.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
					return fmt.Errorf("annotating node %s: %w", n.Name, err)
				}
			}
			// The kubelet API (logs, exec) is kwok's server: kwok writes
			// the port when it initializes a node; a node of an earlier
			// fleet is pointed there now.
			if port := int32(c.ports[slotKwok]); n.Status.DaemonEndpoints.KubeletEndpoint.Port != port {
				patch := fmt.Appendf(nil, `{"status":{"daemonEndpoints":{"kubeletEndpoint":{"Port":%d}}}}`, port)
				if _, err := kc.CoreV1().Nodes().Patch(ctx, n.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
					return fmt.Errorf("pointing node %s's kubelet endpoint at kwok: %w", n.Name, err)
				}
			}
		}
		var notReady []string
		err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
			list, err := kc.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: managedNodeLabel})
			if err != nil {
				return false, nil
			}
			notReady = notReady[:0]
			for _, n := range list.Items {
				if !nodeReady(&n) {
					notReady = append(notReady, n.Name)
				}
			}
			return len(list.Items) == f.Cfg.NodesPerMember && len(notReady) == 0, nil
		})
		if err != nil {
			return fmt.Errorf("nodes of %s not Ready (%v): %w; see %s", c.Name, notReady, err, f.LogPath(c.Name+"/kwok"))
		}
		err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
			_, err := kc.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
			return err == nil, nil
		})
		if err != nil {
			return fmt.Errorf("the default ServiceAccount of %s was not created: %w; see %s", c.Name, err, f.LogPath(c.Name+"/kube-controller-manager"))
		}
		return nil
	}
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// joinMember registers a member with the control plane through the same code
// as `karmadactl join`.
func (f *Fleet) joinMember(c *Cluster) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		karmada, err := f.karmadaClient()
		if err != nil {
			return err
		}
		member, err := c.restConfig()
		if err != nil {
			return err
		}
		if !f.Cfg.External() {
			if err := ensureAdminProxy(ctx, karmada, member); err != nil {
				return err
			}
		}
		region, zones := memberTopology(c.Index)
		kinds := f.Cfg.PropagateKinds
		if len(kinds) == 0 && !f.Cfg.ClusterAdmin {
			kinds = DefaultPropagateKinds
		}
		return join.Run(ctx, karmada, member, join.Options{
			ClusterName:      c.Name,
			ClusterNamespace: join.DefaultClusterNamespace,
			Provider:         "kwok",
			Region:           region,
			Zones:            zones,
			PropagateKinds:   kinds,
			ClusterAdmin:     f.Cfg.ClusterAdmin,
		}, io.Discard)
	}
}

// AdminProxyName names the control plane's ClusterRole and
// ClusterRoleBinding letting the fleet's administrator through every
// cluster proxy (as Karmada's chart names its own), and the member's
// ClusterRoleBinding making it the member's administrator there.
const AdminProxyName = "karmada-cluster-proxy-admin"

// ensureAdminProxy lets the fleet's administrator reach the member through
// the control plane's proxies as itself: the proxies never forward
// system:masters, so the member knows AdminUser by name (cluster-admin),
// and the control plane grants it clusters/proxy, which makes it one of
// the subjects the impersonator may act as.
func ensureAdminProxy(ctx context.Context, karmada client.Client, member *rest.Config) error {
	// The members join at once: one's create may meet another's.
	return retry.OnError(retry.DefaultRetry, func(err error) bool { return apierrors.IsAlreadyExists(err) || apierrors.IsConflict(err) }, func() error {
		return ensureAdminProxyOnce(ctx, karmada, member)
	})
}

func ensureAdminProxyOnce(ctx context.Context, karmada client.Client, member *rest.Config) error {
	subjects := []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: pki.AdminUser}}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: AdminProxyName}}
	if _, err := controllerutil.CreateOrUpdate(ctx, karmada, role, func() error {
		role.Rules = []rbacv1.PolicyRule{{APIGroups: []string{clusterv1alpha1.GroupName}, Resources: []string{"clusters/proxy"}, Verbs: []string{"*"}}}
		return nil
	}); err != nil {
		return fmt.Errorf("granting %s clusters/proxy in the control plane: %w", pki.AdminUser, err)
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: AdminProxyName}}
	if _, err := controllerutil.CreateOrUpdate(ctx, karmada, binding, func() error {
		binding.RoleRef = rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: AdminProxyName}
		binding.Subjects = subjects
		return nil
	}); err != nil {
		return fmt.Errorf("granting %s clusters/proxy in the control plane: %w", pki.AdminUser, err)
	}
	mc, err := client.New(member, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return err
	}
	admin := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: AdminProxyName}}
	if _, err := controllerutil.CreateOrUpdate(ctx, mc, admin, func() error {
		admin.RoleRef = rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"}
		admin.Subjects = subjects
		return nil
	}); err != nil {
		return fmt.Errorf("binding %s to cluster-admin in the member: %w", pki.AdminUser, err)
	}
	return nil
}

func (f *Fleet) karmadaClient() (client.Client, error) {
	cfg, err := f.karmadaConfig()
	if err != nil {
		return nil, err
	}
	return client.New(cfg, client.Options{Scheme: scheme.Scheme})
}

// karmadaConfig reaches the control plane the members join: the fleet's
// own, or the one --karmada-kubeconfig names.
func (f *Fleet) karmadaConfig() (*rest.Config, error) {
	if !f.Cfg.External() {
		return f.Clusters[0].restConfig()
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: f.Cfg.ExternalKarmada},
		&clientcmd.ConfigOverrides{CurrentContext: f.Cfg.ExternalKarmadaContext}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("--karmada-kubeconfig %s: %w", f.Cfg.ExternalKarmada, err)
	}
	cfg.QPS, cfg.Burst = 50, 100
	return cfg, nil
}

// karmadaEndpoint is the control plane's host:port and CA (PEM), as a
// registering member reaches and trusts it.
func (f *Fleet) karmadaEndpoint() (hostPort string, caPEM []byte, err error) {
	if !f.Cfg.External() {
		cp := f.Clusters[0]
		return strings.TrimPrefix(cp.apiURL(), "https://"), cp.CA.CertPEM, nil
	}
	cfg, err := f.karmadaConfig()
	if err != nil {
		return "", nil, err
	}
	caPEM = cfg.CAData
	if len(caPEM) == 0 && cfg.CAFile != "" {
		if caPEM, err = os.ReadFile(cfg.CAFile); err != nil {
			return "", nil, err
		}
	}
	if len(caPEM) == 0 {
		return "", nil, fmt.Errorf("--karmada-kubeconfig %s names no CA: a registering member could not verify the control plane", f.Cfg.ExternalKarmada)
	}
	return strings.TrimPrefix(cfg.Host, "https://"), caPEM, nil
}

// waitClustersReady waits until every member's Cluster reports Ready.
func (f *Fleet) waitClustersReady(_ *Cluster) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		karmada, err := f.karmadaClient()
		if err != nil {
			return err
		}
		var notReady []string
		err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
			notReady = notReady[:0]
			for _, c := range f.Clusters[1:] {
				cl := &clusterv1alpha1.Cluster{}
				if err := karmada.Get(ctx, client.ObjectKey{Name: c.Name}, cl); err != nil {
					notReady = append(notReady, c.Name+" (not joined)")
					continue
				}
				if cond := meta.FindStatusCondition(cl.Status.Conditions, clusterv1alpha1.ClusterConditionReady); cond == nil || cond.Status != metav1.ConditionTrue {
					msg := "no status yet"
					if cond != nil {
						msg = cond.Message
					}
					notReady = append(notReady, fmt.Sprintf("%s (%s)", c.Name, msg))
				}
			}
			return len(notReady) == 0, nil
		})
		if err != nil {
			return fmt.Errorf("clusters not Ready: %s: %w; see %s", strings.Join(notReady, ", "), err, f.LogPath("karmada/karmada-controller-manager"))
		}
		return nil
	}
}
