// Package unjoin implements `karmadactl unjoin`: remove a member cluster from
// the control plane and the credentials join created in it.
package unjoin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	"github.com/karmada-go/karmada/internal/cli"
	"github.com/karmada-go/karmada/internal/clusters/join"
	"github.com/karmada-go/karmada/internal/karmadactl/options"
)

// Options is what unjoin needs.
type Options = options.RemovalOptions

// Run unjoins. member may be nil when no member kubeconfig was given; then
// only --force proceeds.
func Run(ctx context.Context, karmada client.Client, member *rest.Config, o Options, out io.Writer) error {
	if o.Wait == 0 {
		o.Wait = options.DefaultRemovalWait
	}
	cluster, err := options.GetCluster(ctx, karmada, o.ClusterName)
	if err != nil {
		return err
	}

	var mc kubernetes.Interface
	if member != nil {
		if mc, err = kubernetes.NewForConfig(member); err != nil {
			return err
		}
		if _, err := mc.Discovery().ServerVersion(); err != nil {
			if !o.Force {
				return fmt.Errorf("member cluster %s is unreachable (%v): its credentials cannot be removed; retry when it is back, or pass --force to remove it from Karmada anyway and leave them behind", o.ClusterName, err)
			}
			fmt.Fprintf(out, "warning: member %s is unreachable; its Karmada credentials stay in it\n", o.ClusterName)
			mc = nil
		}
	} else if !o.Force {
		return errors.New("--cluster-kubeconfig is required to remove the credentials from the member; pass --force to skip that")
	}

	if cluster != nil {
		if err := options.DeleteCluster(ctx, karmada, cluster, o.Wait); err != nil {
			return err
		}
		for _, ref := range []*clusterv1alpha1.LocalSecretReference{cluster.Spec.SecretRef, cluster.Spec.ImpersonatorSecretRef} {
			if ref == nil {
				continue
			}
			s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ref.Namespace, Name: ref.Name}}
			if err := karmada.Delete(ctx, s); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("deleting credentials %s/%s: %w", s.Namespace, s.Name, err)
			}
		}
	}

	if mc != nil {
		if err := removeMemberIdentity(ctx, mc, o.ClusterName); err != nil {
			return err
		}
	} else {
		fmt.Fprint(out, LeftBehind(o.ClusterName))
	}
	if cluster == nil {
		fmt.Fprintf(out, "cluster(%s) was not joined; its member credentials are removed\n", o.ClusterName)
		return nil
	}
	fmt.Fprintf(out, "cluster(%s) is unjoined successfully\n", o.ClusterName)
	return nil
}

// LeftBehind says what join created in an unreachable member and how to
// remove it once the member is back.
func LeftBehind(name string) string {
	role := join.ClusterRoleName(name)
	return fmt.Sprintf(`The member's Karmada credentials were left in it. Once it is reachable, remove them with
  karmadactl unjoin %[1]s --cluster-kubeconfig <member kubeconfig> [--cluster-context <context>]
or, with kubectl on the member:
  kubectl delete clusterrolebinding %[2]s
  kubectl delete clusterrole %[2]s
  kubectl -n %[3]s delete rolebinding %[2]s
  kubectl -n %[3]s delete role %[2]s
  kubectl -n %[3]s delete secret %[4]s --ignore-not-found
  kubectl -n %[3]s delete serviceaccount %[5]s
  kubectl delete clusterrolebinding %[6]s
  kubectl delete clusterrole %[6]s
  kubectl -n %[3]s delete rolebinding %[6]s --ignore-not-found
  kubectl -n %[3]s delete role %[6]s --ignore-not-found
  kubectl -n %[3]s delete serviceaccount %[6]s
Until then its tokens stay valid until they expire (at most --cluster-token-ttl
after the last renewal).
`, name, role, join.MemberNamespace, join.TokenSecretName(name), join.ServiceAccountName(name), join.ImpersonatorName(name))
}

// removeMemberIdentity deletes what join created in the member for this
// cluster name (only objects carrying join's labels for it: a same-named
// object of the member's own stays), and the namespace when nothing else of
// Karmada is left in it.
func removeMemberIdentity(ctx context.Context, mc kubernetes.Interface, name string) error {
	ns := join.MemberNamespace
	ours := func(obj metav1.Object) bool {
		l := obj.GetLabels()
		return l[clusterv1alpha1.ManagedByLabel] == "karmadactl" && l[clusterv1alpha1.ClusterNameLabel] == name
	}
	// remove deletes what get finds, when it is ours, with its UID as a
	// precondition.
	remove := func(what string, get func() (metav1.Object, error), del func(metav1.DeleteOptions) error) error {
		obj, err := get()
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading %s in the member: %w", what, err)
		}
		if !ours(obj) {
			return nil
		}
		uid := obj.GetUID()
		if err := del(metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting %s in the member: %w", what, err)
		}
		return nil
	}
	role := join.ClusterRoleName(name)
	imp := join.ImpersonatorName(name)
	steps := []struct {
		what string
		get  func() (metav1.Object, error)
		del  func(metav1.DeleteOptions) error
	}{
		{"ClusterRoleBinding " + role, func() (metav1.Object, error) {
			return mc.RbacV1().ClusterRoleBindings().Get(ctx, role, metav1.GetOptions{})
		},
			func(o metav1.DeleteOptions) error { return mc.RbacV1().ClusterRoleBindings().Delete(ctx, role, o) }},
		{"ClusterRole " + role, func() (metav1.Object, error) { return mc.RbacV1().ClusterRoles().Get(ctx, role, metav1.GetOptions{}) },
			func(o metav1.DeleteOptions) error { return mc.RbacV1().ClusterRoles().Delete(ctx, role, o) }},
		{"RoleBinding " + role, func() (metav1.Object, error) {
			return mc.RbacV1().RoleBindings(ns).Get(ctx, role, metav1.GetOptions{})
		},
			func(o metav1.DeleteOptions) error { return mc.RbacV1().RoleBindings(ns).Delete(ctx, role, o) }},
		{"Role " + role, func() (metav1.Object, error) { return mc.RbacV1().Roles(ns).Get(ctx, role, metav1.GetOptions{}) },
			func(o metav1.DeleteOptions) error { return mc.RbacV1().Roles(ns).Delete(ctx, role, o) }},
		{"token Secret", func() (metav1.Object, error) {
			return mc.CoreV1().Secrets(ns).Get(ctx, join.TokenSecretName(name), metav1.GetOptions{})
		},
			func(o metav1.DeleteOptions) error {
				return mc.CoreV1().Secrets(ns).Delete(ctx, join.TokenSecretName(name), o)
			}},
		{"ServiceAccount", func() (metav1.Object, error) {
			return mc.CoreV1().ServiceAccounts(ns).Get(ctx, join.ServiceAccountName(name), metav1.GetOptions{})
		}, func(o metav1.DeleteOptions) error {
			return mc.CoreV1().ServiceAccounts(ns).Delete(ctx, join.ServiceAccountName(name), o)
		}},
		{"ClusterRoleBinding " + imp, func() (metav1.Object, error) {
			return mc.RbacV1().ClusterRoleBindings().Get(ctx, imp, metav1.GetOptions{})
		},
			func(o metav1.DeleteOptions) error { return mc.RbacV1().ClusterRoleBindings().Delete(ctx, imp, o) }},
		{"ClusterRole " + imp, func() (metav1.Object, error) { return mc.RbacV1().ClusterRoles().Get(ctx, imp, metav1.GetOptions{}) },
			func(o metav1.DeleteOptions) error { return mc.RbacV1().ClusterRoles().Delete(ctx, imp, o) }},
		{"RoleBinding " + imp, func() (metav1.Object, error) {
			return mc.RbacV1().RoleBindings(ns).Get(ctx, imp, metav1.GetOptions{})
		},
			func(o metav1.DeleteOptions) error { return mc.RbacV1().RoleBindings(ns).Delete(ctx, imp, o) }},
		{"Role " + imp, func() (metav1.Object, error) { return mc.RbacV1().Roles(ns).Get(ctx, imp, metav1.GetOptions{}) },
			func(o metav1.DeleteOptions) error { return mc.RbacV1().Roles(ns).Delete(ctx, imp, o) }},
		{"impersonator ServiceAccount", func() (metav1.Object, error) {
			return mc.CoreV1().ServiceAccounts(ns).Get(ctx, imp, metav1.GetOptions{})
		}, func(o metav1.DeleteOptions) error {
			return mc.CoreV1().ServiceAccounts(ns).Delete(ctx, imp, o)
		}},
	}
	for _, s := range steps {
		if err := remove(s.what, s.get, s.del); err != nil {
			return err
		}
	}
	// Another registration of the same member (after a rename) may still use
	// the namespace; only remove it once no Karmada identity is left there.
	left, err := mc.CoreV1().ServiceAccounts(ns).List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(labels.Set{clusterv1alpha1.ManagedByLabel: "karmadactl"}).String()})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("listing ServiceAccounts in the member: %w", err)
	}
	if err == nil && len(left.Items) == 0 {
		n, err := mc.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if err == nil && n.Labels[clusterv1alpha1.ManagedByLabel] == "karmadactl" {
			uid := n.UID
			err := mc.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
			if err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("deleting namespace %s in the member: %w", ns, err)
			}
		}
	}
	return nil
}

// NewCommand returns `karmadactl unjoin`.
func NewCommand(g *options.Global) *cobra.Command {
	o := Options{}
	var clusterKubeconfig, clusterContext string
	cmd := &cobra.Command{
		Use:   "unjoin CLUSTER_NAME --cluster-kubeconfig=<member kubeconfig>",
		Short: "Remove a member cluster from the Karmada control plane",
		Long: `Remove a push-mode member cluster: delete its Cluster (after the controller
has removed its Works and execution namespace), its credentials Secret in the
control plane, and the ServiceAccount, token and RBAC that join created in the
member. When the member cannot be reached, unjoin refuses unless --force, which
removes it from Karmada and leaves its credentials in the member.`,
		Example: `  karmadactl unjoin member1 --kubeconfig ~/.kube/karmada.config --karmada-context karmada-apiserver \
    --cluster-kubeconfig member.config --cluster-context member1

  # The member is gone for good
  karmadactl unjoin member1 --force`,
		Args: cli.OneName("the name of the cluster to unjoin"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.ClusterName = args[0]
			var member *rest.Config
			if clusterKubeconfig != "" {
				var err error
				if member, err = cli.LoadConfig(clusterKubeconfig, clusterContext); err != nil {
					return fmt.Errorf("loading the member cluster's kubeconfig (--cluster-kubeconfig %s, --cluster-context %q): %w", clusterKubeconfig, clusterContext, err)
				}
				member.Timeout = 5 * time.Second
			}
			karmada, err := g.KarmadaClient()
			if err != nil {
				return err
			}
			return Run(cmd.Context(), karmada, member, o, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&clusterKubeconfig, "cluster-kubeconfig", "", "kubeconfig of the member cluster, to remove the credentials join created there")
	f.StringVar(&clusterContext, "cluster-context", "", "context of --cluster-kubeconfig (default: its current context)")
	f.BoolVar(&o.Force, "force", false, "remove the cluster from Karmada even if the member cannot be reached")
	f.DurationVar(&o.Wait, "wait", 2*time.Minute, "how long to wait for the cluster's Works to be removed")
	return cmd
}
