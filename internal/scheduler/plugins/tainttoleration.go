// The TaintToleration plugin is a filter: a cluster's
// NoSchedule and NoExecute taints must be tolerated by the placement.

package plugins

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/scheduler/framework"
)

// TaintTolerationName is the plugin's name.
const TaintTolerationName = "TaintToleration"

// TaintToleration filters clusters with untolerated taints.
type TaintToleration struct{}

var _ framework.FilterPlugin = &TaintToleration{}

// NewTaintToleration returns the plugin.
func NewTaintToleration() (framework.Plugin, error) { return &TaintToleration{}, nil }

// Name returns the plugin's name.
func (p *TaintToleration) Name() string { return TaintTolerationName }

// Filter passes clusters whose every NoSchedule and NoExecute taint is
// tolerated; PreferNoSchedule never filters. A cluster the binding is placed
// on already always passes: a taint keeps new workloads away but never moves
// one by itself (as in Karmada). Workloads leave a tainted cluster only
// through eviction: the taint manager, for NoExecute taints they do not
// tolerate, after their tolerationSeconds.
func (p *TaintToleration) Filter(_ context.Context, spec *workv1alpha2.ResourceBindingSpec, cluster *clusterv1alpha1.Cluster) *framework.Status {
	for _, t := range spec.Clusters {
		if t.Name == cluster.Name {
			return nil
		}
	}
	var tolerations []corev1.Toleration
	if spec.Placement != nil {
		tolerations = spec.Placement.ClusterTolerations
	}
	for i := range cluster.Spec.Taints {
		taint := &cluster.Spec.Taints[i]
		if taint.Effect != corev1.TaintEffectNoSchedule && taint.Effect != corev1.TaintEffectNoExecute {
			continue
		}
		tolerated := false
		for j := range tolerations {
			if tolerations[j].ToleratesTaint(taint) {
				tolerated = true
				break
			}
		}
		if !tolerated {
			return framework.NewStatus(framework.Unschedulable, fmt.Sprintf("cluster had untolerated taint {%s}", taint.ToString()))
		}
	}
	return nil
}
