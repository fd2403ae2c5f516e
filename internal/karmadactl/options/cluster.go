package options

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
)

// RemovalOptions are what unjoin and unregister are given.
type RemovalOptions struct {
	ClusterName string
	// Force removes the Cluster anyway (unjoin: the member unreachable,
	// its credentials left there; unregister: Works still there, what
	// the agent applied left in the member).
	Force bool
	// Wait bounds the wait for the Cluster (and its Works) to be gone
	// (DefaultRemovalWait when zero).
	Wait time.Duration
}

// DefaultRemovalWait is how long unjoin and unregister wait for the
// Cluster to be gone unless told.
const DefaultRemovalWait = 2 * time.Minute

// GetCluster reads the Cluster of that name; nil when there is none.
func GetCluster(ctx context.Context, c client.Client, name string) (*clusterv1alpha1.Cluster, error) {
	cluster := &clusterv1alpha1.Cluster{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, cluster); apierrors.IsNotFound(err) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("reading Cluster %s: %w", name, err)
	}
	return cluster, nil
}

// DeleteCluster deletes a Cluster and waits up to timeout until it is gone:
// the cluster controller removes its Works and execution namespace first.
func DeleteCluster(ctx context.Context, c client.Client, cluster *clusterv1alpha1.Cluster, timeout time.Duration) error {
	if err := c.Delete(ctx, cluster); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting Cluster %s: %w", cluster.Name, err)
	}
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		return apierrors.IsNotFound(c.Get(ctx, client.ObjectKey{Name: cluster.Name}, &clusterv1alpha1.Cluster{})), nil
	})
	if err != nil {
		return fmt.Errorf("cluster %s is still being removed after %s (its Works are being cleaned up; is karmada-controller-manager running?): %w", cluster.Name, timeout, err)
	}
	return nil
}

// KarmadaClientset returns the control plane's configuration and clientset.
func (g *Global) KarmadaClientset() (*rest.Config, kubernetes.Interface, error) {
	cfg, err := g.KarmadaConfig()
	if err != nil {
		return nil, nil, err
	}
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	return cfg, kc, nil
}
