package webhook

import (
	"context"
	"fmt"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	"github.com/karmada-go/karmada/internal/clusters/clustervalidation"
)

// uniqueClusterID refuses a spec.id (a member's kube-system UID) that
// another Cluster has: one member registered under two names would have
// two sets of Works applied to it, each undoing the other's.
func uniqueClusterID(clusters client.Reader, c *clusterv1alpha1.Cluster) field.ErrorList {
	path := field.NewPath("spec", "id")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	list := &clusterv1alpha1.ClusterList{}
	if err := clusters.List(ctx, list); err != nil {
		return field.ErrorList{field.InternalError(path, fmt.Errorf("reading the other Clusters to check that the id is not theirs: %w", err))}
	}
	for _, other := range list.Items {
		if other.Name != c.Name && other.Spec.ID == c.Spec.ID {
			return field.ErrorList{field.Invalid(path, c.Spec.ID, fmt.Sprintf("the member is already cluster %q (spec.id is its kube-system UID): one member may be registered under one name only; unjoin or unregister %s first", other.Name, other.Name))}
		}
	}
	return nil
}

// clusterEndpoints are the admission endpoints of Clusters: validation, a
// unique id, and what an agent may change of its own.
func clusterEndpoints(k kindEnv) []Endpoint {
	dec, o := k.dec, k.o
	return []Endpoint{
		{Path: "/validate-cluster", GVR: clusterResource("clusters"), Kind: "Cluster",
			handler: &validating[*clusterv1alpha1.Cluster]{dec: dec, new: func() *clusterv1alpha1.Cluster { return &clusterv1alpha1.Cluster{} },
				validate: func(c, old *clusterv1alpha1.Cluster) field.ErrorList {
					if old != nil && equality.Semantic.DeepEqual(c.Spec, old.Spec) {
						return nil
					}
					errs := clustervalidation.Validate(c, old)
					if o.Clusters != nil && c.Spec.ID != "" && (old == nil || old.Spec.ID != c.Spec.ID) {
						errs = append(errs, uniqueClusterID(o.Clusters, c)...)
					}
					return errs
				},
				authorize: func(_ context.Context, user authenticationv1.UserInfo, c, old *clusterv1alpha1.Cluster) (field.ErrorList, error) {
					return agentClusterChange(user, c, old), nil
				}}},
	}
}
