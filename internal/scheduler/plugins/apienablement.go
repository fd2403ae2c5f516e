// The APIEnablement plugin is a filter: the cluster must serve
// the template's API.

package plugins

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/scheduler/framework"
)

// APIEnablementName is the plugin's name.
const APIEnablementName = "APIEnablement"

// APIEnablement filters clusters that do not serve the template's kind.
type APIEnablement struct{}

var _ framework.FilterPlugin = &APIEnablement{}

// NewAPIEnablement returns the plugin.
func NewAPIEnablement() (framework.Plugin, error) { return &APIEnablement{}, nil }

// Name returns the plugin's name.
func (p *APIEnablement) Name() string { return APIEnablementName }

// Filter passes clusters whose apiEnablements list the template's group,
// version and kind. When the cluster's discovery was incomplete, an API
// missing from the list may still be served, so the cluster passes.
func (p *APIEnablement) Filter(_ context.Context, spec *workv1alpha2.ResourceBindingSpec, cluster *clusterv1alpha1.Cluster) *framework.Status {
	gv, kind := spec.Resource.APIVersion, spec.Resource.Kind
	for _, e := range cluster.Status.APIEnablements {
		if e.GroupVersion != gv {
			continue
		}
		for _, r := range e.Resources {
			if r.Kind == kind {
				return nil
			}
		}
	}
	if c := meta.FindStatusCondition(cluster.Status.Conditions, clusterv1alpha1.ClusterConditionCompleteAPIEnablements); c != nil && c.Status == metav1.ConditionFalse {
		return nil
	}
	return framework.NewStatus(framework.Unschedulable, fmt.Sprintf("cluster does not serve %s %s", gv, kind))
}
