package register

import (
	"context"
	"errors"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	"github.com/karmada-go/karmada/internal/clusters/memberrights"
)

// The agent's identity in the member: a ServiceAccount, and RBAC objects
// of the same name.
const (
	AgentName = "karmada-agent"
	// AgentUser is the member user karmada-local's agent process acts as
	// (with a client certificate; a Deployment uses the ServiceAccount).
	AgentUser = "system:karmada:karmada-agent"
)

// AgentMember says what the agent may do in its member and how it runs.
type AgentMember struct {
	ClusterName string
	// PropagateKinds / ClusterAdmin: as karmadactl join's.
	PropagateKinds []string
	ClusterAdmin   bool
	// Subjects besides the ServiceAccount bound to the agent's rights.
	Subjects []rbacv1.Subject
	// Image, when set, installs the agent as a Deployment of this image.
	Image    string
	Replicas int32
	// Agent flags the Deployment passes on.
	Provider, Region string
	Zones            []string
	// FeatureGates is the agent's --feature-gates (Karmada's gates).
	FeatureGates string
}

func (a AgentMember) kinds() []string {
	if len(a.PropagateKinds) == 0 {
		return memberrights.DefaultKinds
	}
	return a.PropagateKinds
}

// AgentMemberRules are the agent's rights in its member: what Karmada's
// controller manager gets there in push mode (join's rules: read all but
// Secrets, write the propagated kinds and namespaces), plus updating its
// own kubeconfig Secret (certificate rotation) and the reviews behind its
// authenticated /metrics.
func AgentMemberRules(mc kubernetes.Interface, a AgentMember) (cluster, local []rbacv1.PolicyRule, err error) {
	cluster = memberrights.AdminRules()
	if !a.ClusterAdmin {
		kinds, err := memberrights.ParseKinds(a.kinds())
		if err != nil {
			return nil, nil, err
		}
		resources, err := mc.Discovery().ServerPreferredResources()
		if len(resources) == 0 && err != nil {
			return nil, nil, fmt.Errorf("reading the member's API resources: %w", err)
		}
		cluster = memberrights.Rules(resources, kinds)
	}
	cluster = append(cluster,
		rbacv1.PolicyRule{APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"tokenreviews"}, Verbs: []string{"create"}},
		rbacv1.PolicyRule{APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"subjectaccessreviews"}, Verbs: []string{"create"}})
	local = []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{AgentSecretName}, Verbs: []string{"get", "update", "patch"}}}
	return cluster, local, nil
}

// InstallAgent creates or updates, in the member, the agent's
// ServiceAccount and RBAC (and its Deployment when a.Image is set).
// Objects of these names that register did not make are not taken over.
func InstallAgent(ctx context.Context, mc kubernetes.Interface, a AgentMember) error {
	labels := map[string]string{clusterv1alpha1.ManagedByLabel: clusterv1alpha1.ManagedByKarmadactl, clusterv1alpha1.ClusterNameLabel: a.ClusterName}
	grant := memberrights.ClusterAdminGrant
	if !a.ClusterAdmin {
		grant = strings.Join(a.kinds(), ",")
	}
	clusterRules, localRules, err := AgentMemberRules(mc, a)
	if err != nil {
		return err
	}
	subjects := append([]rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: AgentNamespace, Name: AgentName}}, a.Subjects...)
	meta := func(ns string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: ns, Name: AgentName, Labels: labels, Annotations: map[string]string{clusterv1alpha1.PropagateKindsAnnotation: grant}}
	}
	objs := []agentObject{
		memberObject(ctx, "ServiceAccount", mc.CoreV1().ServiceAccounts(AgentNamespace), &corev1.ServiceAccount{ObjectMeta: meta(AgentNamespace)}, false),
		memberObject(ctx, "ClusterRole", mc.RbacV1().ClusterRoles(), &rbacv1.ClusterRole{ObjectMeta: meta(""), Rules: clusterRules}, true),
		memberObject(ctx, "ClusterRoleBinding", mc.RbacV1().ClusterRoleBindings(), &rbacv1.ClusterRoleBinding{ObjectMeta: meta(""), Subjects: subjects,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: AgentName}}, true),
		memberObject(ctx, "Role", mc.RbacV1().Roles(AgentNamespace), &rbacv1.Role{ObjectMeta: meta(AgentNamespace), Rules: localRules}, true),
		memberObject(ctx, "RoleBinding", mc.RbacV1().RoleBindings(AgentNamespace), &rbacv1.RoleBinding{ObjectMeta: meta(AgentNamespace), Subjects: subjects,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: AgentName}}, true),
	}
	if a.Image != "" {
		objs = append(objs, memberObject(ctx, "Deployment", mc.AppsV1().Deployments(AgentNamespace), AgentDeployment(a), true))
	}
	// Checked first, all of them: nothing is written when one is not ours.
	exists := make([]bool, len(objs))
	for i, o := range objs {
		var err error
		if exists[i], err = ours(o.kind, a.ClusterName, o.get); err != nil {
			return err
		}
	}
	for i, o := range objs {
		if err := o.put(!exists[i]); err != nil {
			return fmt.Errorf("writing the agent's %s %s in the member: %w", o.kind, AgentName, err)
		}
	}
	return nil
}

// agentObject is one object InstallAgent writes in the member: read to
// check it is register's, then created, or (unless it is kept as it is)
// updated.
type agentObject struct {
	kind string
	get  func() (metav1.Object, error)
	put  func(create bool) error
}

// typedGetter and typedClient are what client-go's typed clients offer
// for one kind.
type typedGetter[T metav1.Object] interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
}

type typedClient[T metav1.Object] interface {
	typedGetter[T]
	Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error)
	Update(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error)
}

// getter reads the object named name of one kind, for ours.
func getter[T metav1.Object](ctx context.Context, c typedGetter[T], name string) func() (metav1.Object, error) {
	return func() (metav1.Object, error) { return c.Get(ctx, name, metav1.GetOptions{}) }
}

// memberObject is the agent's object want (named AgentName) of one kind;
// update false keeps an existing one as it is.
func memberObject[T metav1.Object](ctx context.Context, kind string, c typedClient[T], want T, update bool) agentObject {
	return agentObject{
		kind: kind,
		get:  getter[T](ctx, c, AgentName),
		put: func(create bool) error {
			var err error
			switch {
			case create:
				_, err = c.Create(ctx, want, metav1.CreateOptions{})
			case update:
				_, err = c.Update(ctx, want, metav1.UpdateOptions{})
			}
			return err
		},
	}
}

// ours says whether the object get reads exists, and fails when it exists
// but register did not make it for cluster.
func ours(kind, cluster string, get func() (metav1.Object, error)) (bool, error) {
	cur, err := get()
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("reading %s %s in the member: %w", kind, AgentName, err)
	}
	if l := cur.GetLabels(); l[clusterv1alpha1.ManagedByLabel] != clusterv1alpha1.ManagedByKarmadactl || l[clusterv1alpha1.ClusterNameLabel] != cluster {
		return false, fmt.Errorf("%s %s already exists in the member and was not made by karmadactl register for cluster %s (labels %s=%s, %s=%s missing): refusing to take it over",
			kind, cur.GetName(), cluster, clusterv1alpha1.ManagedByLabel, clusterv1alpha1.ManagedByKarmadactl, clusterv1alpha1.ClusterNameLabel, cluster)
	}
	return true, nil
}

// CheckMember fails, before anything is registered, when the member holds
// an object register would write (the agent's Secret, ServiceAccount, RBAC
// or Deployment) that it did not make for this cluster.
func CheckMember(ctx context.Context, mc kubernetes.Interface, cluster string, deployment bool) error {
	checks := []struct {
		kind string
		get  func() (metav1.Object, error)
	}{
		{"Secret", getter(ctx, mc.CoreV1().Secrets(AgentNamespace), AgentSecretName)},
		{"ServiceAccount", getter(ctx, mc.CoreV1().ServiceAccounts(AgentNamespace), AgentName)},
		{"ClusterRole", getter(ctx, mc.RbacV1().ClusterRoles(), AgentName)},
		{"ClusterRoleBinding", getter(ctx, mc.RbacV1().ClusterRoleBindings(), AgentName)},
		{"Role", getter(ctx, mc.RbacV1().Roles(AgentNamespace), AgentName)},
		{"RoleBinding", getter(ctx, mc.RbacV1().RoleBindings(AgentNamespace), AgentName)},
	}
	if deployment {
		checks = append(checks, struct {
			kind string
			get  func() (metav1.Object, error)
		}{"Deployment", getter(ctx, mc.AppsV1().Deployments(AgentNamespace), AgentName)})
	}
	for _, c := range checks {
		if _, err := ours(c.kind, cluster, c.get); err != nil {
			return err
		}
	}
	return nil
}

// AgentDeployment runs the agent in the member with its ServiceAccount and
// the kubeconfig Secret register wrote.
func AgentDeployment(a AgentMember) *appsv1.Deployment {
	labels := map[string]string{"app": AgentName}
	args := []string{
		"--karmada-kubeconfig=/etc/karmada/config/" + AgentSecretKey,
		"--cluster-name=" + a.ClusterName,
		"--metrics-bind-address=:8080",
		"--health-probe-bind-address=:10357",
	}
	if a.Provider != "" {
		args = append(args, "--cluster-provider="+a.Provider)
	}
	if a.Region != "" {
		args = append(args, "--cluster-region="+a.Region)
	}
	if len(a.Zones) > 0 {
		args = append(args, "--cluster-zones="+strings.Join(a.Zones, ","))
	}
	if a.FeatureGates != "" {
		args = append(args, "--feature-gates="+a.FeatureGates)
	}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: AgentNamespace, Name: AgentName, Labels: map[string]string{clusterv1alpha1.ManagedByLabel: clusterv1alpha1.ManagedByKarmadactl, clusterv1alpha1.ClusterNameLabel: a.ClusterName}},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(a.Replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			// One agent at a time: two would apply the same Works.
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					ServiceAccountName: AgentName,
					Containers: []corev1.Container{{
						Name:    AgentName,
						Image:   a.Image,
						Command: []string{"/bin/karmada-agent"},
						Args:    args,
						LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(10357)}},
							InitialDelaySeconds: 15, PeriodSeconds: 15},
						SecurityContext: &corev1.SecurityContext{
							AllowPrivilegeEscalation: ptr.To(false),
							ReadOnlyRootFilesystem:   ptr.To(true),
							RunAsNonRoot:             ptr.To(true),
							Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
						},
						VolumeMounts: []corev1.VolumeMount{{Name: "karmada-kubeconfig", MountPath: "/etc/karmada/config", ReadOnly: true}},
					}},
					Volumes: []corev1.Volume{{Name: "karmada-kubeconfig", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: AgentSecretName}}}},
				},
			},
		},
	}
}

// RemoveAgent deletes what InstallAgent made (those of its objects
// labelled for this cluster), and says what it left alone.
func RemoveAgent(ctx context.Context, mc kubernetes.Interface, cluster string) (left []string, err error) {
	mine := func(o metav1.Object) bool {
		l := o.GetLabels()
		return l[clusterv1alpha1.ManagedByLabel] == clusterv1alpha1.ManagedByKarmadactl && l[clusterv1alpha1.ClusterNameLabel] == cluster
	}
	type item struct {
		kind string
		get  func() (metav1.Object, error)
		del  func(opts metav1.DeleteOptions) error
	}
	n := AgentName
	items := []item{
		{"Deployment", func() (metav1.Object, error) {
			return mc.AppsV1().Deployments(AgentNamespace).Get(ctx, n, metav1.GetOptions{})
		},
			func(o metav1.DeleteOptions) error { return mc.AppsV1().Deployments(AgentNamespace).Delete(ctx, n, o) }},
		{"RoleBinding", func() (metav1.Object, error) {
			return mc.RbacV1().RoleBindings(AgentNamespace).Get(ctx, n, metav1.GetOptions{})
		},
			func(o metav1.DeleteOptions) error { return mc.RbacV1().RoleBindings(AgentNamespace).Delete(ctx, n, o) }},
		{"Role", func() (metav1.Object, error) {
			return mc.RbacV1().Roles(AgentNamespace).Get(ctx, n, metav1.GetOptions{})
		},
			func(o metav1.DeleteOptions) error { return mc.RbacV1().Roles(AgentNamespace).Delete(ctx, n, o) }},
		{"ClusterRoleBinding", func() (metav1.Object, error) {
			return mc.RbacV1().ClusterRoleBindings().Get(ctx, n, metav1.GetOptions{})
		},
			func(o metav1.DeleteOptions) error { return mc.RbacV1().ClusterRoleBindings().Delete(ctx, n, o) }},
		{"ClusterRole", func() (metav1.Object, error) { return mc.RbacV1().ClusterRoles().Get(ctx, n, metav1.GetOptions{}) },
			func(o metav1.DeleteOptions) error { return mc.RbacV1().ClusterRoles().Delete(ctx, n, o) }},
		{"ServiceAccount", func() (metav1.Object, error) {
			return mc.CoreV1().ServiceAccounts(AgentNamespace).Get(ctx, n, metav1.GetOptions{})
		},
			func(o metav1.DeleteOptions) error {
				return mc.CoreV1().ServiceAccounts(AgentNamespace).Delete(ctx, n, o)
			}},
	}
	var errs []error
	for _, it := range items {
		cur, err := it.get()
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			errs = append(errs, fmt.Errorf("reading %s %s in the member: %w", it.kind, n, err))
			continue
		case !mine(cur):
			left = append(left, it.kind+" "+n)
			continue
		}
		uid := cur.GetUID()
		if err := it.del(metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("deleting %s %s in the member: %w", it.kind, n, err))
		}
	}
	return left, errors.Join(errs...)
}
