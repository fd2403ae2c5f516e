package metricsadapter

import (
	"context"
	"sort"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	"github.com/karmada-go/karmada/internal/clusters/clusterclient"
)

// ClusterMembers are the Clusters of the karmada-apiserver, reached with
// the credentials of their Secrets in karmada-cluster (push-mode members,
// and pull-mode ones whose Cluster names an endpoint and credentials the
// adapter can reach; like Karmada's adapter, a pull member it cannot reach
// is left out of the answers).
type ClusterMembers struct {
	Karmada client.Reader
	Cache   *clusterclient.Cache
}

// Ready names the Ready Clusters that are not being deleted.
func (m ClusterMembers) Ready(ctx context.Context) ([]string, error) {
	list := &clusterv1alpha1.ClusterList{}
	if err := m.Karmada.List(ctx, list); err != nil {
		return nil, err
	}
	var out []string
	for i := range list.Items {
		c := &list.Items[i]
		if c.DeletionTimestamp == nil && meta.IsStatusConditionTrue(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady) {
			out = append(out, c.Name)
		}
	}
	sort.Strings(out)
	return out, nil
}

// Client is the member's REST client (connections shared between
// requests).
func (m ClusterMembers) Client(ctx context.Context, name string) (rest.Interface, error) {
	c := &clusterv1alpha1.Cluster{}
	if err := m.Karmada.Get(ctx, client.ObjectKey{Name: name}, c); err != nil {
		return nil, err
	}
	member, err := m.Cache.Get(ctx, c)
	if err != nil {
		return nil, err
	}
	return member.Kube.CoreV1().RESTClient(), nil
}
