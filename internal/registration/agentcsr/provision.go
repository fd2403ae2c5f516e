package agentcsr

import (
	"context"
	"errors"
	"fmt"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	configv1alpha1 "github.com/karmada-go/karmada/api/config/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	"github.com/karmada-go/karmada/internal/names"
)

// AgentRBAC is what one pull-mode cluster's agent may do in the control
// plane, and nothing more: read and update its own Cluster and its status;
// read and update the Works (and their status) of its own execution
// namespace; renew its own Lease; record events there and on its Cluster.
// Names are fixed by the cluster, so that no agent reaches another's. The
// rights are bound to the group of the cluster's current registration, so
// that a certificate of an earlier registration has none. Creating its
// Cluster and Lease is not among them: the control plane makes both when
// it approves the registration.
func AgentRBAC(cluster, registration string) []client.Object {
	user := names.AgentUserPrefix + cluster
	subjects := []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: names.AgentRegistrationGroupPrefix + registration}}
	labels := map[string]string{clusterv1alpha1.SystemLabel: "true", clusterv1alpha1.ClusterNameLabel: cluster}
	es := workv1alpha1.ExecutionNamespace(cluster)
	meta := func(ns string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: ns, Name: user, Labels: labels}
	}
	role := func(ns string, rules ...rbacv1.PolicyRule) (*rbacv1.Role, *rbacv1.RoleBinding) {
		return &rbacv1.Role{ObjectMeta: meta(ns), Rules: rules},
			&rbacv1.RoleBinding{ObjectMeta: meta(ns), RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: user}, Subjects: subjects}
	}
	events := rbacv1.PolicyRule{APIGroups: []string{"", "events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch", "update"}}
	worksRole, worksBinding := role(es,
		rbacv1.PolicyRule{APIGroups: []string{workv1alpha1.GroupName}, Resources: []string{"works"}, Verbs: []string{"get", "list", "watch", "update", "patch"}},
		// The Works holding its exported Services' EndpointSlices
		// (serviceExport), which the control plane takes only for a
		// Service it exports there itself.
		rbacv1.PolicyRule{APIGroups: []string{workv1alpha1.GroupName}, Resources: []string{"works"}, Verbs: []string{"create", "delete"}},
		rbacv1.PolicyRule{APIGroups: []string{workv1alpha1.GroupName}, Resources: []string{"works/status"}, Verbs: []string{"get", "update", "patch"}},
		events)
	leaseRole, leaseBinding := role(names.ClusterNamespace,
		rbacv1.PolicyRule{APIGroups: []string{coordinationv1.GroupName}, Resources: []string{"leases"}, ResourceNames: []string{cluster}, Verbs: []string{"get", "list", "watch", "update", "patch"}})
	// Events about a cluster-scoped object (its Cluster) are recorded in
	// "default".
	eventsRole, eventsBinding := role(metav1.NamespaceDefault, events)
	return []client.Object{
		&rbacv1.ClusterRole{ObjectMeta: meta(""), Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{clusterv1alpha1.GroupName}, Resources: []string{"clusters"}, ResourceNames: []string{cluster}, Verbs: []string{"get", "list", "watch", "update", "patch"}},
			{APIGroups: []string{clusterv1alpha1.GroupName}, Resources: []string{"clusters/status"}, ResourceNames: []string{cluster}, Verbs: []string{"get", "update", "patch"}},
			// The customizations and interpreter webhooks, read only: the
			// agent interprets its copies' status, health and retention as
			// the control plane does.
			{APIGroups: []string{configv1alpha1.GroupName}, Resources: []string{"resourceinterpretercustomizations", "resourceinterpreterwebhookconfigurations"}, Verbs: []string{"get", "list", "watch"}},
		}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: meta(""), RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: user}, Subjects: subjects},
		worksRole, worksBinding, leaseRole, leaseBinding, eventsRole, eventsBinding,
	}
}

const registrationValuePrefix = "sha256:"

// errNotRegistered: a renewal for a cluster that is not (or no longer)
// registered.
var errNotRegistered = errors.New("not registered")

// provision makes, for a cluster whose registration is approved, its
// Cluster (pull mode, recording the registration; the agent fills in the
// rest), execution namespace, Lease and the agent's RBAC, all owned by the
// Cluster so that removing it removes them. For a renewal (bootstrap
// false), the Cluster must exist: a removed cluster is not brought back by
// its agent; the rest is kept up to date, and a Cluster of an earlier
// version records the registration from now on.
func (r *Reconciler) provision(ctx context.Context, name, registration string, bootstrap bool) error {
	cluster, err := r.registeredCluster(ctx, name, registration, bootstrap)
	if err != nil {
		return err
	}
	owner := metav1.OwnerReference{APIVersion: clusterv1alpha1.SchemeGroupVersion.String(), Kind: "Cluster", Name: cluster.Name, UID: cluster.UID}
	for _, ns := range []string{workv1alpha1.ExecutionNamespace(name), names.ClusterNamespace} {
		if err := ensureNamespace(ctx, r.Client, ns); err != nil {
			return err
		}
	}
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: names.ClusterNamespace, Name: name}}
	if _, err := controllerutil.CreateOrUpdate(ctx, r.Client, lease, func() error {
		lease.OwnerReferences = []metav1.OwnerReference{owner}
		if lease.Spec.HolderIdentity == nil {
			lease.Spec.HolderIdentity = ptr.To(name)
		}
		return nil
	}); err != nil {
		return fmt.Errorf("writing Lease %s/%s: %w", lease.Namespace, lease.Name, err)
	}
	for _, want := range AgentRBAC(name, registration) {
		obj := want.DeepCopyObject().(client.Object)
		if _, err := controllerutil.CreateOrUpdate(ctx, r.Client, obj, func() error {
			obj.SetLabels(want.GetLabels())
			obj.SetOwnerReferences([]metav1.OwnerReference{owner})
			switch o := obj.(type) {
			case *rbacv1.ClusterRole:
				o.Rules = want.(*rbacv1.ClusterRole).Rules
			case *rbacv1.ClusterRoleBinding:
				o.RoleRef, o.Subjects = want.(*rbacv1.ClusterRoleBinding).RoleRef, want.(*rbacv1.ClusterRoleBinding).Subjects
			case *rbacv1.Role:
				o.Rules = want.(*rbacv1.Role).Rules
			case *rbacv1.RoleBinding:
				o.RoleRef, o.Subjects = want.(*rbacv1.RoleBinding).RoleRef, want.(*rbacv1.RoleBinding).Subjects
			}
			return nil
		}); err != nil {
			return fmt.Errorf("writing the agent's %T %s: %w", want, want.GetName(), err)
		}
	}
	return nil
}

// registeredCluster makes the Cluster of a registration, or reads the one a
// renewal is for (recording the registration on a Cluster of an earlier
// version).
func (r *Reconciler) registeredCluster(ctx context.Context, name, registration string, bootstrap bool) (*clusterv1alpha1.Cluster, error) {
	value := registrationValuePrefix + registration
	cluster := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{clusterv1alpha1.RegistrationAnnotation: value}},
		Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Pull}}
	if bootstrap {
		err := r.Client.Create(ctx, cluster)
		if err == nil {
			return cluster, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("creating Cluster %s: %w", name, err)
		}
	}
	if err := r.Reader.Get(ctx, client.ObjectKey{Name: name}, cluster); apierrors.IsNotFound(err) {
		return nil, errNotRegistered
	} else if err != nil {
		return nil, err
	}
	if cluster.Spec.SyncMode != clusterv1alpha1.Pull {
		return nil, fmt.Errorf("cluster %s is in %s mode: an agent does not take it over", name, cluster.Spec.SyncMode)
	}
	if cluster.Annotations[clusterv1alpha1.RegistrationAnnotation] != value {
		if recordedID(cluster) != "" {
			// checkRegistration approved only this registration's requests.
			return nil, fmt.Errorf("cluster %s records another registration", name)
		}
		patch := client.MergeFromWithOptions(cluster.DeepCopy(), client.MergeFromWithOptimisticLock{})
		if cluster.Annotations == nil {
			cluster.Annotations = map[string]string{}
		}
		cluster.Annotations[clusterv1alpha1.RegistrationAnnotation] = value
		if err := r.Client.Patch(ctx, cluster, patch); err != nil {
			return nil, fmt.Errorf("recording the registration on Cluster %s: %w", name, err)
		}
	}
	return cluster, nil
}

func ensureNamespace(ctx context.Context, c client.Client, name string) error {
	err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", name, err)
	}
	return nil
}
