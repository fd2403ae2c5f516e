// Package join registers a member cluster with the Karmada control plane in
// push mode: what `karmadactl join` (internal/karmadactl/join) and karmada-local
// run.
package join

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	"github.com/karmada-go/karmada/internal/clusters/clusterclient"
	"github.com/karmada-go/karmada/internal/clusters/memberrights"
	"github.com/karmada-go/karmada/internal/names"
)

// Names of what join creates.
const (
	// DefaultClusterNamespace is the control plane namespace of member credentials.
	DefaultClusterNamespace = "karmada-cluster"
	// MemberNamespace holds, in the member, the identity Karmada acts as.
	MemberNamespace = "karmada-cluster"
)

// ImpersonatorName names the member ServiceAccount, ClusterRole and
// ClusterRoleBinding of the impersonator: the identity
// karmada-aggregated-apiserver's clusters/<name>/proxy acts as, with the
// right to impersonate (only) the caller it forwards.
func ImpersonatorName(cluster string) string { return "karmada-" + cluster + "-impersonator" }

// ImpersonatorSecretName is the control plane Secret (in the cluster
// namespace) holding the impersonator's token.
func ImpersonatorSecretName(cluster string) string { return cluster + "-impersonator" }

// ServiceAccountName is the member ServiceAccount Karmada acts as.
func ServiceAccountName(cluster string) string { return "karmada-" + cluster }

// TokenSecretName is the member Secret in which earlier versions of join had
// a never-expiring token issued; join now deletes it (unjoin too).
func TokenSecretName(cluster string) string { return "karmada-" + cluster + "-token" }

// ClusterRoleName is the member ClusterRole (and binding) granted to it.
func ClusterRoleName(cluster string) string { return memberrights.PushClusterRole(cluster) }

// DefaultTokenTTL is the lifetime of the member token unless
// --cluster-token-ttl says otherwise.
const DefaultTokenTTL = 24 * time.Hour

// Options is what join needs.
type Options struct {
	ClusterName      string
	ClusterNamespace string
	Provider         string
	Region           string
	Zone             string
	Zones            []string
	// TokenTimeout bounds the wait for the member namespace (an earlier
	// unjoin may still be deleting it).
	TokenTimeout time.Duration
	// TokenTTL is the lifetime of the member token (a bound ServiceAccount
	// token; the controller manager renews it at 80% of its lifetime).
	TokenTTL time.Duration
	// PropagateKinds are the resources the member identity may write
	// (resource[.group]; memberrights.DefaultKinds when empty).
	PropagateKinds []string
	// ClusterAdmin grants the member identity every right instead.
	ClusterAdmin bool
	// InsecureSkipTLSVerify accepts a member kubeconfig that skips TLS
	// verification (the Cluster then says so in
	// spec.insecureSkipTLSVerification); without it such a kubeconfig is
	// refused rather than copied silently.
	InsecureSkipTLSVerify bool
	// DryRun makes every check join makes (the member reachable and not
	// joined under another name, nothing of its own in the way) and
	// writes nothing.
	DryRun bool
}

// Validate checks the options before anything is touched.
func (o *Options) Validate() error {
	if errs := names.ClusterNameErrors(o.ClusterName); len(errs) > 0 {
		return fmt.Errorf("cluster name %q is invalid: %s", o.ClusterName, errs[0])
	}
	if o.TokenTTL != 0 && o.TokenTTL < MinTokenTTL {
		return fmt.Errorf("--cluster-token-ttl=%s: the member's API server issues tokens for %s at least", o.TokenTTL, MinTokenTTL)
	}
	if !o.ClusterAdmin {
		if _, err := memberrights.ParseKinds(o.kinds()); err != nil {
			return err
		}
	} else if len(o.PropagateKinds) > 0 {
		return errors.New("--propagate-kinds and --cluster-admin: choose one (--cluster-admin grants every kind)")
	}
	if o.ClusterNamespace != DefaultClusterNamespace {
		return fmt.Errorf("--cluster-namespace=%q: member credentials must live in %s, the only namespace the controller manager reads them from (and the webhook admits in a Cluster's secretRef)", o.ClusterNamespace, DefaultClusterNamespace)
	}
	return nil
}

// MinTokenTTL is the shortest token lifetime a Kubernetes API server grants.
const MinTokenTTL = 10 * time.Minute

func (o *Options) kinds() []string {
	if len(o.PropagateKinds) == 0 {
		return memberrights.DefaultKinds
	}
	return o.PropagateKinds
}

// Run joins the member reached by member to the control plane reached by karmada.
func Run(ctx context.Context, karmada client.Client, member *rest.Config, o Options, out io.Writer) error {
	if err := o.Validate(); err != nil {
		return err
	}
	if o.TokenTimeout == 0 {
		o.TokenTimeout = 30 * time.Second
	}
	if o.TokenTTL == 0 {
		o.TokenTTL = DefaultTokenTTL
	}
	if member.Insecure && !o.InsecureSkipTLSVerify {
		return errors.New("the member's kubeconfig skips TLS verification: the controller manager would then reach it without verifying who answers; give it the member's CA, or pass --cluster-insecure-skip-tls-verify to accept that")
	}
	mc, err := kubernetes.NewForConfig(member)
	if err != nil {
		return err
	}
	id, err := memberID(ctx, karmada, mc, o.ClusterName)
	if err != nil {
		return err
	}
	if err := o.keepEarlierGrant(ctx, mc, out); err != nil {
		return err
	}
	if o.DryRun {
		if err := notTheirs(ctx, mc, o.ClusterName); err != nil {
			return err
		}
		grant := "--propagate-kinds=" + strings.Join(o.kinds(), ",")
		if o.ClusterAdmin {
			grant = "--cluster-admin"
		}
		fmt.Fprintf(out, "[dry-run] cluster(%s) can be joined: join would write Karmada's identity in the member (ServiceAccount %s/%s, %s) and its credentials and Cluster in the control plane; nothing was written\n",
			o.ClusterName, MemberNamespace, ServiceAccountName(o.ClusterName), grant)
		return nil
	}
	if o.ClusterAdmin {
		fmt.Fprintf(out, "warning: --cluster-admin grants Karmada's identity in %s every right there (Secrets of every namespace, escalate, bind, impersonate): anyone who reads its token in the control plane owns the member\n", o.ClusterName)
	}
	token, err := ensureMemberIdentity(ctx, mc, o)
	if err != nil {
		return err
	}
	impToken, err := ensureImpersonator(ctx, karmada, mc, o)
	if err != nil {
		return err
	}
	ca, err := caOf(member)
	if err != nil {
		return err
	}
	impSecret, err := writeCredentials(ctx, karmada, o, token, impToken, ca)
	if err != nil {
		return err
	}
	return writeCluster(ctx, karmada, member, o, id, impSecret, out)
}

// memberID is the member's identity (its kube-system namespace's UID),
// refused when the member is joined under another name or the name stands
// for another member: checked before any credential is written, so that
// joining the wrong cluster under an existing name cannot replace that
// cluster's credentials.
func memberID(ctx context.Context, karmada client.Client, mc kubernetes.Interface, name string) (string, error) {
	ks, err := mc.CoreV1().Namespaces().Get(ctx, metav1.NamespaceSystem, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("reading the member's kube-system namespace (is --cluster-kubeconfig right and the cluster up?): %w", err)
	}
	id := string(ks.UID)

	clusters := &clusterv1alpha1.ClusterList{}
	if err := karmada.List(ctx, clusters); err != nil {
		return "", fmt.Errorf("listing clusters in the control plane (are the Karmada CRDs installed?): %w", err)
	}
	for _, c := range clusters.Items {
		if c.Spec.ID == id && c.Name != name {
			return "", fmt.Errorf("this member cluster is already joined as %q (Cluster %s has the same id %s); unjoin it first or use that name", c.Name, c.Name, id)
		}
		if c.Name == name && c.Spec.ID != "" && c.Spec.ID != id {
			return "", fmt.Errorf("cluster %s already exists for another member (id %s, this one is %s); unjoin it first or choose another name", name, c.Spec.ID, id)
		}
	}
	return id, nil
}

// caOf is the member's CA bundle, from the kubeconfig's data or file.
func caOf(member *rest.Config) ([]byte, error) {
	if len(member.CAData) > 0 || member.CAFile == "" {
		return member.CAData, nil
	}
	ca, err := os.ReadFile(member.CAFile)
	if err != nil {
		return nil, fmt.Errorf("reading the member's CA file %s: %w", member.CAFile, err)
	}
	return ca, nil
}

// writeCredentials writes the member identity's and the impersonator's
// tokens (with the CA bundle) into the cluster namespace; it returns the
// impersonator's Secret.
func writeCredentials(ctx context.Context, karmada client.Client, o Options, token, impToken, ca []byte) (*corev1.Secret, error) {
	if err := ensureNamespace(ctx, karmada, o.ClusterNamespace); err != nil {
		return nil, err
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: o.ClusterNamespace, Name: o.ClusterName}}
	if _, err := controllerutil.CreateOrUpdate(ctx, karmada, secret, func() error {
		secret.Labels = map[string]string{clusterv1alpha1.ClusterNameLabel: o.ClusterName}
		secret.Data = map[string][]byte{clusterclient.SecretTokenKey: token}
		if len(ca) > 0 {
			secret.Data[clusterclient.SecretCABundleKey] = ca
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("writing credentials %s/%s: %w", o.ClusterNamespace, o.ClusterName, err)
	}

	impSecret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: o.ClusterNamespace, Name: ImpersonatorSecretName(o.ClusterName)}}
	if _, err := controllerutil.CreateOrUpdate(ctx, karmada, impSecret, func() error {
		impSecret.Labels = map[string]string{clusterv1alpha1.ClusterNameLabel: o.ClusterName}
		impSecret.Data = map[string][]byte{clusterclient.SecretTokenKey: impToken}
		if len(ca) > 0 {
			impSecret.Data[clusterclient.SecretCABundleKey] = ca
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("writing the impersonator's credentials %s/%s: %w", o.ClusterNamespace, impSecret.Name, err)
	}
	return impSecret, nil
}

// writeCluster creates or updates the Cluster, in push mode, and says so.
func writeCluster(ctx context.Context, karmada client.Client, member *rest.Config, o Options, id string, impSecret *corev1.Secret, out io.Writer) error {
	cluster := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: o.ClusterName}}
	op, err := controllerutil.CreateOrUpdate(ctx, karmada, cluster, func() error {
		if cluster.Spec.ID != "" && cluster.Spec.ID != id {
			return fmt.Errorf("cluster %s already exists for another member (id %s, this one is %s); unjoin it first or choose another name", o.ClusterName, cluster.Spec.ID, id)
		}
		s := &cluster.Spec
		s.ID = id
		s.SyncMode = clusterv1alpha1.Push
		s.APIEndpoint = member.Host
		s.SecretRef = &clusterv1alpha1.LocalSecretReference{Namespace: o.ClusterNamespace, Name: o.ClusterName}
		s.ImpersonatorSecretRef = &clusterv1alpha1.LocalSecretReference{Namespace: o.ClusterNamespace, Name: impSecret.Name}
		s.InsecureSkipTLSVerification = member.Insecure
		if o.Provider != "" {
			s.Provider = o.Provider
		}
		if o.Region != "" {
			s.Region = o.Region
		}
		if o.Zone != "" {
			s.Zone = o.Zone
		}
		if len(o.Zones) > 0 {
			s.Zones = o.Zones
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("writing Cluster %s: %w", o.ClusterName, err)
	}
	if op == controllerutil.OperationResultCreated {
		fmt.Fprintf(out, "cluster(%s) is joined successfully\n", o.ClusterName)
	} else {
		fmt.Fprintf(out, "cluster(%s) is joined successfully (it was already registered; its registration is up to date)\n", o.ClusterName)
	}
	return nil
}

// keepEarlierGrant: joining again without --propagate-kinds or
// --cluster-admin keeps what the earlier join granted (recorded on its
// ClusterRole) rather than narrowing it to the default, which would stop
// the propagation of the kinds it had.
func (o *Options) keepEarlierGrant(ctx context.Context, mc kubernetes.Interface, out io.Writer) error {
	if o.ClusterAdmin || len(o.PropagateKinds) > 0 {
		return nil
	}
	role, err := mc.RbacV1().ClusterRoles().Get(ctx, ClusterRoleName(o.ClusterName), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading ClusterRole %s in the member: %w", ClusterRoleName(o.ClusterName), err)
	}
	if l := role.Labels; l[clusterv1alpha1.ManagedByLabel] != clusterv1alpha1.ManagedByKarmadactl || l[clusterv1alpha1.ClusterNameLabel] != o.ClusterName {
		return nil // not join's: refused later, naming it
	}
	switch grant := role.Annotations[clusterv1alpha1.PropagateKindsAnnotation]; {
	case grant == memberrights.ClusterAdminGrant:
		o.ClusterAdmin = true
		fmt.Fprintf(out, "keeping --cluster-admin from the earlier join of %s (pass --propagate-kinds to narrow it)\n", o.ClusterName)
	case grant != "":
		o.PropagateKinds = strings.Split(grant, ",")
		if _, err := memberrights.ParseKinds(o.PropagateKinds); err != nil {
			return fmt.Errorf("the earlier join's %s annotation on ClusterRole %s: %w", clusterv1alpha1.PropagateKindsAnnotation, role.Name, err)
		}
		fmt.Fprintf(out, "keeping --propagate-kinds=%s from the earlier join of %s\n", grant, o.ClusterName)
	}
	return nil
}

// ensureMemberIdentity creates, in the member, the ServiceAccount Karmada acts
// as and its RBAC, and returns a bound token of it lasting o.TokenTTL.
func ensureMemberIdentity(ctx context.Context, mc kubernetes.Interface, o Options) ([]byte, error) {
	labels := map[string]string{clusterv1alpha1.ManagedByLabel: clusterv1alpha1.ManagedByKarmadactl, clusterv1alpha1.ClusterNameLabel: o.ClusterName}
	// Nothing of the member's own is taken over: an object of join's names
	// that join did not create for this cluster stops it, before anything
	// is written.
	if err := notTheirs(ctx, mc, o.ClusterName); err != nil {
		return nil, err
	}
	if err := ensureMemberNamespace(ctx, mc, o.TokenTimeout); err != nil {
		return nil, err
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: MemberNamespace, Name: ServiceAccountName(o.ClusterName), Labels: labels}}
	if _, err := mc.CoreV1().ServiceAccounts(MemberNamespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("creating ServiceAccount %s/%s in the member: %w", MemberNamespace, sa.Name, err)
	}
	rules := memberrights.AdminRules()
	if !o.ClusterAdmin {
		kinds, err := memberrights.ParseKinds(o.kinds())
		if err != nil {
			return nil, err
		}
		// A group the member cannot list is left out of the read rule;
		// what came back is still used.
		resources, err := mc.Discovery().ServerPreferredResources()
		if len(resources) == 0 && err != nil {
			return nil, fmt.Errorf("reading the member's API resources: %w", err)
		}
		rules = memberrights.Rules(resources, kinds)
	}
	rules = append(rules, ImpersonatorNarrowingRule(o.ClusterName))
	name := ClusterRoleName(o.ClusterName)
	grant := memberrights.ClusterAdminGrant
	if !o.ClusterAdmin {
		grant = strings.Join(o.kinds(), ",")
	}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Annotations: map[string]string{clusterv1alpha1.PropagateKindsAnnotation: grant}}, Rules: rules}
	if _, err := mc.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); apierrors.IsAlreadyExists(err) {
		if _, err := mc.RbacV1().ClusterRoles().Update(ctx, role, metav1.UpdateOptions{}); err != nil {
			return nil, fmt.Errorf("updating ClusterRole %s in the member: %w", name, err)
		}
	} else if err != nil {
		return nil, fmt.Errorf("creating ClusterRole %s in the member: %w", name, err)
	}
	subjects := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: MemberNamespace, Name: sa.Name}}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects:   subjects,
	}
	if _, err := mc.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("creating ClusterRoleBinding %s in the member: %w", name, err)
	}
	// The right to renew its own token, and only its own.
	self := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: MemberNamespace, Name: name, Labels: labels}, Rules: SelfTokenRules(o.ClusterName)}
	if _, err := mc.RbacV1().Roles(MemberNamespace).Create(ctx, self, metav1.CreateOptions{}); apierrors.IsAlreadyExists(err) {
		if _, err := mc.RbacV1().Roles(MemberNamespace).Update(ctx, self, metav1.UpdateOptions{}); err != nil {
			return nil, fmt.Errorf("updating Role %s/%s in the member: %w", MemberNamespace, name, err)
		}
	} else if err != nil {
		return nil, fmt.Errorf("creating Role %s/%s in the member: %w", MemberNamespace, name, err)
	}
	selfBinding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: MemberNamespace, Name: name, Labels: labels},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects:   subjects,
	}
	if _, err := mc.RbacV1().RoleBindings(MemberNamespace).Create(ctx, selfBinding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("creating RoleBinding %s/%s in the member: %w", MemberNamespace, name, err)
	}
	// An earlier version's never-expiring token Secret is revoked.
	if legacy, err := mc.CoreV1().Secrets(MemberNamespace).Get(ctx, TokenSecretName(o.ClusterName), metav1.GetOptions{}); err == nil {
		uid := legacy.UID
		if err := mc.CoreV1().Secrets(MemberNamespace).Delete(ctx, legacy.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}); err != nil && !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("revoking the legacy token Secret %s/%s in the member: %w", MemberNamespace, legacy.Name, err)
		}
	}
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(o.TokenTTL / time.Second))}}
	tr, err := mc.CoreV1().ServiceAccounts(MemberNamespace).CreateToken(ctx, sa.Name, tr, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("requesting a token for ServiceAccount %s/%s in the member: %w", MemberNamespace, sa.Name, err)
	}
	return []byte(tr.Status.Token), nil
}

// notTheirs fails when the member holds an object under one of the names
// join gives (its ServiceAccount, ClusterRole, ClusterRoleBinding, Role,
// RoleBinding, legacy token Secret) that join did not create for this cluster: join would otherwise
// overwrite or bind it.
func notTheirs(ctx context.Context, mc kubernetes.Interface, cluster string) error {
	ours := func(kind, name string, obj metav1.Object, err error) error {
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading %s %s in the member: %w", kind, name, err)
		}
		if l := obj.GetLabels(); l[clusterv1alpha1.ManagedByLabel] != clusterv1alpha1.ManagedByKarmadactl || l[clusterv1alpha1.ClusterNameLabel] != cluster {
			return fmt.Errorf("%s %s already exists in the member and was not created by karmadactl join for cluster %s (labels %s=%s, %s=%s missing): refusing to take it over; remove it or join under another name",
				kind, name, cluster, clusterv1alpha1.ManagedByLabel, clusterv1alpha1.ManagedByKarmadactl, clusterv1alpha1.ClusterNameLabel, cluster)
		}
		return nil
	}
	name := ClusterRoleName(cluster)
	// (ours reads the object only when Get found it.)
	role, err := mc.RbacV1().ClusterRoles().Get(ctx, name, metav1.GetOptions{})
	if err := ours("ClusterRole", name, role, err); err != nil {
		return err
	}
	rb, err := mc.RbacV1().ClusterRoleBindings().Get(ctx, name, metav1.GetOptions{})
	if err := ours("ClusterRoleBinding", name, rb, err); err != nil {
		return err
	}
	self, err := mc.RbacV1().Roles(MemberNamespace).Get(ctx, name, metav1.GetOptions{})
	if err := ours("Role", MemberNamespace+"/"+name, self, err); err != nil {
		return err
	}
	selfBinding, err := mc.RbacV1().RoleBindings(MemberNamespace).Get(ctx, name, metav1.GetOptions{})
	if err := ours("RoleBinding", MemberNamespace+"/"+name, selfBinding, err); err != nil {
		return err
	}
	saName := ServiceAccountName(cluster)
	sa, err := mc.CoreV1().ServiceAccounts(MemberNamespace).Get(ctx, saName, metav1.GetOptions{})
	if err := ours("ServiceAccount", MemberNamespace+"/"+saName, sa, err); err != nil {
		return err
	}
	imp := ImpersonatorName(cluster)
	impSA, err := mc.CoreV1().ServiceAccounts(MemberNamespace).Get(ctx, imp, metav1.GetOptions{})
	if err := ours("ServiceAccount", MemberNamespace+"/"+imp, impSA, err); err != nil {
		return err
	}
	impRole, err := mc.RbacV1().ClusterRoles().Get(ctx, imp, metav1.GetOptions{})
	if err := ours("ClusterRole", imp, impRole, err); err != nil {
		return err
	}
	impBinding, err := mc.RbacV1().ClusterRoleBindings().Get(ctx, imp, metav1.GetOptions{})
	if err := ours("ClusterRoleBinding", imp, impBinding, err); err != nil {
		return err
	}
	impSelf, err := mc.RbacV1().Roles(MemberNamespace).Get(ctx, imp, metav1.GetOptions{})
	if err := ours("Role", MemberNamespace+"/"+imp, impSelf, err); err != nil {
		return err
	}
	impSelfBinding, err := mc.RbacV1().RoleBindings(MemberNamespace).Get(ctx, imp, metav1.GetOptions{})
	if err := ours("RoleBinding", MemberNamespace+"/"+imp, impSelfBinding, err); err != nil {
		return err
	}
	secretName := TokenSecretName(cluster)
	secret, err := mc.CoreV1().Secrets(MemberNamespace).Get(ctx, secretName, metav1.GetOptions{})
	return ours("Secret", MemberNamespace+"/"+secretName, secret, err)
}

// ensureMemberNamespace creates the member namespace, first waiting out an
// earlier unjoin that is still deleting it.
func ensureMemberNamespace(ctx context.Context, mc kubernetes.Interface, timeout time.Duration) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: MemberNamespace, Labels: map[string]string{clusterv1alpha1.ManagedByLabel: clusterv1alpha1.ManagedByKarmadactl}}}
	var last error
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		cur, err := mc.CoreV1().Namespaces().Get(ctx, MemberNamespace, metav1.GetOptions{})
		switch {
		case err == nil && cur.DeletionTimestamp.IsZero():
			return true, nil
		case err == nil:
			last = fmt.Errorf("namespace %s is still being deleted", MemberNamespace)
			return false, nil
		case !apierrors.IsNotFound(err):
			last = err
			return false, nil
		}
		_, err = mc.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
		if err == nil || apierrors.IsAlreadyExists(err) {
			return err == nil, nil
		}
		last = err
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("creating namespace %s in the member: %w (last: %v)", MemberNamespace, err, last)
	}
	return nil
}

func ensureNamespace(ctx context.Context, c client.Client, name string) error {
	err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s in the control plane: %w", name, err)
	}
	return nil
}

// SelfTokenRules let the identity request new tokens for its own
// ServiceAccount only (a Role in MemberNamespace): the controller manager
// renews the member token with it. Not the impersonator's: whoever holds
// the member token could otherwise mint a token that acts as anyone
// (ImpersonatorSelfRenewal renews that one).
func SelfTokenRules(cluster string) []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"serviceaccounts/token"},
		ResourceNames: []string{ServiceAccountName(cluster)}, Verbs: []string{"create"}}}
}
