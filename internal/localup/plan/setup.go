package plan

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	"github.com/karmada-go/karmada/internal/localup/kwok"
	"github.com/karmada-go/karmada/internal/localup/pki"
	"github.com/karmada-go/karmada/internal/scheme"
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
		if err := kwok.EnsureNodes(ctx, kc, c.Name, c.Index, f.Cfg.NodesPerMember, f.Cfg.NodeCapacity[c.Name], int32(c.ports[slotKwok])); err != nil {
			return err
		}
		var notReady []string
		err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
			list, err := kc.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: kwok.ManagedNodeLabel})
			if err != nil {
				return false, nil
			}
			notReady = notReady[:0]
			for _, n := range list.Items {
				if !kwok.NodeReady(&n) {
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
		region, zones := kwok.Topology(c.Index)
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
