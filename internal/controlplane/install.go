// Package controlplane installs what a Karmada control plane needs inside
// its API server before its components can work: the Karmada CRDs (created,
// or updated in place on an upgrade), karmada-webhook's admission and the
// bindings' conversion, each component's RBAC, API Priority and Fairness for
// Karmada's components, kube-public/cluster-info for pull-mode registration,
// the namespaces karmada-system and karmada-cluster, and the default
// ClusterTaintPolicy. karmada-local runs it at every `up`; the Helm chart's
// post-install and post-upgrade Job runs it through `karmadactl setup`.
// Every step is idempotent.
package controlplane

import (
	"context"
	"fmt"
	"io/fs"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
	"github.com/karmada-go/karmada/internal/scheme"
	"github.com/karmada-go/karmada/internal/webhook"
)

// Namespaces the Karmada control plane needs from the start.
var Namespaces = []string{"karmada-system", "karmada-cluster"}

// AdminBindingName names the ClusterRoleBinding that makes Options.Admins
// cluster administrators.
const AdminBindingName = "karmada-admin"

// Options say where the control plane's parts are.
type Options struct {
	// WebhookURL is where the API server calls karmada-webhook
	// (https://host:port), WebhookCABundle the PEM CA it trusts it with.
	WebhookURL      string
	WebhookCABundle []byte
	// APIServerURL and CABundle are published in kube-public/cluster-info:
	// what a member registering with a bootstrap token trusts and dials.
	APIServerURL string
	CABundle     []byte
	// Admins are users made cluster administrators (the chart's
	// karmada-kubeconfig user); none when empty.
	Admins []string
	// AggregatedAPIServer, when set, is where karmada-aggregated-apiserver
	// serves the Cluster API: no Cluster CRD is installed, and the
	// APIService of cluster.karmada.io/v1alpha1 points at it (on a control
	// plane that served Clusters from the CRD, SwitchClusterAPI does that
	// once the server has imported them).
	AggregatedAPIServer *AggregatedAPIServer
}

// Install makes the API server cfg reaches hold everything of the package
// doc, as o says. Run it again with other options to update them.
func Install(ctx context.Context, cfg *rest.Config, o Options) error {
	var skip map[string]bool
	if o.AggregatedAPIServer != nil {
		// karmada-aggregated-apiserver serves Clusters.
		skip = map[string]bool{ClusterCRD: true}
	}
	if err := installCRDs(ctx, cfg, skip, func(crd *apiextensionsv1.CustomResourceDefinition) {
		webhook.SetConversion(crd, o.WebhookURL, o.WebhookCABundle)
	}); err != nil {
		return err
	}
	cl, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return err
	}
	if a := o.AggregatedAPIServer; a != nil {
		if err := EnsureClusterAPIService(ctx, cl, *a, false); err != nil {
			return err
		}
	}
	if err := webhook.Register(ctx, cl, scheme.Scheme, o.WebhookURL, o.WebhookCABundle); err != nil {
		return fmt.Errorf("registering karmada-webhook: %w", err)
	}
	if err := ApplyComponentRBAC(ctx, cl); err != nil {
		return err
	}
	if err := bindAdmins(ctx, cl, o.Admins); err != nil {
		return err
	}
	if err := ApplyFlowControl(ctx, cl); err != nil {
		return err
	}
	if err := PublishClusterInfo(ctx, cl, o.APIServerURL, o.CABundle); err != nil {
		return err
	}
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	for _, ns := range Namespaces {
		if err := ensureNamespace(ctx, kc, ns); err != nil {
			return err
		}
	}
	return EnsureDefaultClusterTaintPolicy(ctx, cl)
}

// bindAdmins binds admins to cluster-admin; with none, a binding made
// before is left alone (an operator may have changed it).
func bindAdmins(ctx context.Context, c client.Client, admins []string) error {
	if len(admins) == 0 {
		return nil
	}
	crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: AdminBindingName}}
	if _, err := controllerutil.CreateOrUpdate(ctx, c, crb, func() error {
		crb.RoleRef = rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"}
		crb.Subjects = nil
		for _, u := range admins {
			crb.Subjects = append(crb.Subjects, rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: u})
		}
		return nil
	}); err != nil {
		return fmt.Errorf("binding %v to cluster-admin: %w", admins, err)
	}
	return nil
}

// DefaultClusterTaintPolicyName names the ClusterTaintPolicy Install
// creates.
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
	// Some roles are of karmada-cluster (the member credentials).
	for _, ns := range Namespaces {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating namespace %s: %w", ns, err)
		}
	}
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
	return installCRDs(ctx, cfg, nil, mutate...)
}

// installCRDs is InstallCRDs without the CRDs skip names.
func installCRDs(ctx context.Context, cfg *rest.Config, skip map[string]bool, mutate ...func(*apiextensionsv1.CustomResourceDefinition)) error {
	all, err := crd.All()
	if err != nil {
		return err
	}
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, c := range all {
		if !skip[c.Name] {
			crds = append(crds, c)
		}
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
