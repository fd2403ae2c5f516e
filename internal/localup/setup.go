package localup

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/yaml"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	"github.com/karmada-go/karmada/config/crd"
	"github.com/karmada-go/karmada/deploy"
	"github.com/karmada-go/karmada/internal/clusters/join"
	"github.com/karmada-go/karmada/internal/scheme"
	"github.com/karmada-go/karmada/internal/webhook"
)

// Namespaces the Karmada control plane needs from the start.
var controlPlaneNamespaces = []string{"karmada-system", "karmada-cluster"}

const (
	kwokNodeAnnotation = "kwok.x-k8s.io/node"
	// managedNodeLabel marks the nodes karmada-local created, so that it only
	// ever removes its own.
	managedNodeLabel = "karmada-local.karmada.io/node-index"
)

func (c *cluster) restConfig() (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", c.adminConfig)
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", c.adminConfig, err)
	}
	cfg.QPS, cfg.Burst = 50, 100
	return cfg, nil
}

// setupControlPlane installs the Karmada CRDs (the bindings' conversion
// pointed at karmada-webhook), waits until they are Established, registers
// the webhook's admission, and creates the control plane's namespaces.
func (f *fleet) setupControlPlane(c *cluster) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		cfg, err := c.restConfig()
		if err != nil {
			return err
		}
		caBundle, url := c.ca.CertPEM, c.webhookURL()
		if err := InstallCRDs(ctx, cfg, func(crd *apiextensionsv1.CustomResourceDefinition) {
			webhook.SetConversion(crd, url, caBundle)
		}); err != nil {
			return err
		}
		cl, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
		if err != nil {
			return err
		}
		if err := webhook.Register(ctx, cl, scheme.Scheme, url, caBundle); err != nil {
			return fmt.Errorf("registering karmada-webhook: %w", err)
		}
		if err := ApplyComponentRBAC(ctx, cl); err != nil {
			return err
		}
		if err := ApplyFlowControl(ctx, cl); err != nil {
			return err
		}
		if err := PublishClusterInfo(ctx, cl, c.apiURL(), c.ca.CertPEM); err != nil {
			return err
		}
		kc, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return err
		}
		for _, ns := range controlPlaneNamespaces {
			if err := ensureNamespace(ctx, kc, ns); err != nil {
				return err
			}
		}
		return EnsureDefaultClusterTaintPolicy(ctx, cl)
	}
}

// DefaultClusterTaintPolicyName names the ClusterTaintPolicy karmada-local
// installs.
const DefaultClusterTaintPolicyName = "cluster-not-ready"

// DefaultClusterTaintPolicy is the policy Karmada recommends for failover:
// a cluster whose Ready condition is not True is tainted
// cluster.karmada.io/not-ready:NoExecute, and untainted once Ready again.
// With the taint manager on, workloads leave it after their toleration
// (300 s by default, given by karmada-webhook).
func DefaultClusterTaintPolicy() *policyv1alpha1.ClusterTaintPolicy {
	return &policyv1alpha1.ClusterTaintPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: DefaultClusterTaintPolicyName},
		Spec: policyv1alpha1.ClusterTaintPolicySpec{
			AddOnConditions:    []policyv1alpha1.MatchCondition{{ConditionType: clusterv1alpha1.ClusterConditionReady, Operator: policyv1alpha1.MatchConditionOpNotIn, StatusValues: []metav1.ConditionStatus{metav1.ConditionTrue}}},
			RemoveOnConditions: []policyv1alpha1.MatchCondition{{ConditionType: clusterv1alpha1.ClusterConditionReady, Operator: policyv1alpha1.MatchConditionOpIn, StatusValues: []metav1.ConditionStatus{metav1.ConditionTrue}}},
			Taints:             []policyv1alpha1.Taint{{Key: clusterv1alpha1.TaintClusterNotReady, Effect: corev1.TaintEffectNoExecute}},
		},
	}
}

// EnsureDefaultClusterTaintPolicy creates the default ClusterTaintPolicy
// when there is none of its name; one there (changed by the user, say) is
// left as it is.
func EnsureDefaultClusterTaintPolicy(ctx context.Context, c client.Client) error {
	if err := c.Create(ctx, DefaultClusterTaintPolicy()); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating ClusterTaintPolicy %s: %w", DefaultClusterTaintPolicyName, err)
	}
	return nil
}

// PublishClusterInfo writes kube-public/cluster-info as kubeadm does: a
// kubeconfig naming the control plane's address and CA, which the
// kube-controller-manager's bootstrap signer signs with every bootstrap
// token, so that karmadactl register can trust it with a token and the CA's
// hash.
func PublishClusterInfo(ctx context.Context, c client.Client, server string, caPEM []byte) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters[""] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caPEM}
	data, err := clientcmd.Write(*kc)
	if err != nil {
		return err
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespacePublic, Name: bootstrapapi.ConfigMapClusterInfo}}
	if _, err := controllerutil.CreateOrUpdate(ctx, c, cm, func() error {
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		// The signatures (jws-kubeconfig-<id>) are the signer's to keep.
		cm.Data[bootstrapapi.KubeConfigKey] = string(data)
		return nil
	}); err != nil {
		return fmt.Errorf("publishing %s/%s: %w", cm.Namespace, cm.Name, err)
	}
	return nil
}

// ApplyComponentRBAC creates or updates the ClusterRoles and
// ClusterRoleBindings of deploy/rbac: each Karmada component's rights in the
// control plane.
func ApplyComponentRBAC(ctx context.Context, c client.Client) error {
	return applyManifests(ctx, c, deploy.RBAC, "rbac/*.yaml")
}

// ApplyFlowControl creates or updates the priority level and flow schema of
// Karmada's components (deploy/flowcontrol), so that users' requests are
// never queued behind theirs.
func ApplyFlowControl(ctx context.Context, c client.Client) error {
	return applyManifests(ctx, c, deploy.FlowControl, "flowcontrol/*.yaml")
}

// applyManifests creates or updates every object of the files of fsys that
// match pattern; an object that exists gets the manifest's rules, roleRef,
// subjects, spec and labels, and keeps what else it has.
func applyManifests(ctx context.Context, c client.Client, fsys fs.FS, pattern string) error {
	files, err := fs.Glob(fsys, pattern)
	if err != nil {
		return err
	}
	for _, file := range files {
		data, err := fs.ReadFile(fsys, file)
		if err != nil {
			return err
		}
		for _, doc := range strings.Split(string(data), "\n---\n") {
			obj := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(doc), &obj.Object); err != nil {
				return fmt.Errorf("deploy/%s: %w", file, err)
			}
			if len(obj.Object) == 0 {
				continue
			}
			want := obj.DeepCopy()
			if _, err := controllerutil.CreateOrUpdate(ctx, c, obj, func() error {
				for _, k := range []string{"rules", "roleRef", "subjects", "spec"} {
					if v, ok := want.Object[k]; ok {
						obj.Object[k] = v
					}
				}
				obj.SetLabels(want.GetLabels())
				return nil
			}); err != nil {
				return fmt.Errorf("applying %s %s from deploy/%s: %w", obj.GetKind(), obj.GetName(), file, err)
			}
		}
	}
	return nil
}

// InstallCRDs creates or updates every Karmada CRD, changed by each of
// mutate first, and waits until each is Established.
func InstallCRDs(ctx context.Context, cfg *rest.Config, mutate ...func(*apiextensionsv1.CustomResourceDefinition)) error {
	crds, err := crd.All()
	if err != nil {
		return err
	}
	for _, c := range crds {
		for _, m := range mutate {
			m(c)
		}
	}
	client, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return err
	}
	api := client.ApiextensionsV1().CustomResourceDefinitions()
	for _, want := range crds {
		got, err := api.Get(ctx, want.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			if _, err := api.Create(ctx, want, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("creating CRD %s: %w", want.Name, err)
			}
		case err != nil:
			return fmt.Errorf("reading CRD %s: %w", want.Name, err)
		default:
			want.ResourceVersion = got.ResourceVersion
			if _, err := api.Update(ctx, want, metav1.UpdateOptions{}); err != nil {
				return fmt.Errorf("updating CRD %s: %w", want.Name, err)
			}
		}
	}
	for _, want := range crds {
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			got, err := api.Get(ctx, want.Name, metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			for _, cond := range got.Status.Conditions {
				if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			return fmt.Errorf("CRD %s did not become Established: %w", want.Name, err)
		}
	}
	return nil
}

func ensureNamespace(ctx context.Context, kc kubernetes.Interface, name string) error {
	_, err := kc.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", name, err)
	}
	return nil
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
func kwokNode(c *cluster, i int) *corev1.Node {
	region, zones := memberTopology(c.index)
	name := fmt.Sprintf("%s-node%d", c.name, i)
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:              resource.MustParse("8"),
		corev1.ResourceMemory:           resource.MustParse("32Gi"),
		corev1.ResourcePods:             resource.MustParse("110"),
		corev1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: name,
			Labels: map[string]string{
				"kubernetes.io/hostname":           name,
				"kubernetes.io/os":                 "linux",
				"kubernetes.io/arch":               "amd64",
				"node.kubernetes.io/instance-type": "kwok.8c32g",
				"topology.kubernetes.io/region":    region,
				"topology.kubernetes.io/zone":      zones[(i-1)%len(zones)],
				"type":                             "kwok",
				managedNodeLabel:                   strconv.Itoa(i),
			},
			Annotations: map[string]string{
				kwokNodeAnnotation:             "fake",
				"node.alpha.kubernetes.io/ttl": "0",
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

// setupMember creates the member's kwok nodes (removing managed nodes beyond
// the requested count), waits until all are Ready, and waits for the default
// ServiceAccount so that pods can be created at once.
func (f *fleet) setupMember(c *cluster) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		cfg, err := c.restConfig()
		if err != nil {
			return err
		}
		kc, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return err
		}
		for i := 1; i <= f.cfg.NodesPerMember; i++ {
			_, err := kc.CoreV1().Nodes().Create(ctx, kwokNode(c, i), metav1.CreateOptions{})
			if err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("creating node %d of %s: %w", i, c.name, err)
			}
		}
		existing, err := kc.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: managedNodeLabel})
		if err != nil {
			return fmt.Errorf("listing nodes of %s: %w", c.name, err)
		}
		for _, n := range existing.Items {
			if i, err := strconv.Atoi(n.Labels[managedNodeLabel]); err == nil && i > f.cfg.NodesPerMember {
				if err := kc.CoreV1().Nodes().Delete(ctx, n.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
					return fmt.Errorf("removing node %s: %w", n.Name, err)
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
			return len(list.Items) == f.cfg.NodesPerMember && len(notReady) == 0, nil
		})
		if err != nil {
			return fmt.Errorf("nodes of %s not Ready (%v): %w; see %s", c.name, notReady, err, f.logPath(c.name+"/kwok"))
		}
		err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
			_, err := kc.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
			return err == nil, nil
		})
		if err != nil {
			return fmt.Errorf("the default ServiceAccount of %s was not created: %w; see %s", c.name, err, f.logPath(c.name+"/kube-controller-manager"))
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
func (f *fleet) joinMember(c *cluster) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		karmada, err := f.karmadaClient()
		if err != nil {
			return err
		}
		member, err := c.restConfig()
		if err != nil {
			return err
		}
		region, zones := memberTopology(c.index)
		kinds := f.cfg.PropagateKinds
		if len(kinds) == 0 && !f.cfg.ClusterAdmin {
			kinds = DefaultPropagateKinds
		}
		return join.Run(ctx, karmada, member, join.Options{
			ClusterName:      c.name,
			ClusterNamespace: join.DefaultClusterNamespace,
			Provider:         "kwok",
			Region:           region,
			Zones:            zones,
			PropagateKinds:   kinds,
			ClusterAdmin:     f.cfg.ClusterAdmin,
		}, io.Discard)
	}
}

func (f *fleet) karmadaClient() (client.Client, error) {
	cfg, err := f.clusters[0].restConfig()
	if err != nil {
		return nil, err
	}
	return client.New(cfg, client.Options{Scheme: scheme.Scheme})
}

// waitClustersReady waits until every member's Cluster reports Ready.
func (f *fleet) waitClustersReady(_ *cluster) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		karmada, err := f.karmadaClient()
		if err != nil {
			return err
		}
		var notReady []string
		err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
			notReady = notReady[:0]
			for _, c := range f.clusters[1:] {
				cl := &clusterv1alpha1.Cluster{}
				if err := karmada.Get(ctx, client.ObjectKey{Name: c.name}, cl); err != nil {
					notReady = append(notReady, c.name+" (not joined)")
					continue
				}
				if cond := meta.FindStatusCondition(cl.Status.Conditions, clusterv1alpha1.ClusterConditionReady); cond == nil || cond.Status != metav1.ConditionTrue {
					msg := "no status yet"
					if cond != nil {
						msg = cond.Message
					}
					notReady = append(notReady, fmt.Sprintf("%s (%s)", c.name, msg))
				}
			}
			return len(notReady) == 0, nil
		})
		if err != nil {
			return fmt.Errorf("clusters not Ready: %s: %w; see %s", strings.Join(notReady, ", "), err, f.logPath("karmada/karmada-controller-manager"))
		}
		return nil
	}
}
