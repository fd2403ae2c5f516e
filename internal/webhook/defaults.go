package webhook

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/utils/ptr"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
)

// defaultGracePeriodSeconds is how long application failover waits for the
// new copy before purging the old one, when purgeMode is Gracefully and
// no period is given (Karmada's default).
const defaultGracePeriodSeconds = 600

// defaultPropagation sets what Karmada's mutating webhook sets on a
// PropagationPolicy (ns: its namespace) or a ClusterPropagationPolicy (ns
// ""). The CRD schema's own defaults (priority, preemption, schedulerName,
// conflictResolution...) are set by the API server before.
func defaultPropagation(spec *policyv1alpha1.PropagationSpec, ns string, o Options) {
	addDefaultTolerations(&spec.Placement, o)
	for i := range spec.ResourceSelectors {
		s := &spec.ResourceSelectors[i]
		if ns != "" && s.Namespace == "" {
			s.Namespace = ns
		}
		// A ServiceImport is useless without what it depends on.
		if s.Kind == "ServiceImport" && s.APIVersion == "multicluster.x-k8s.io/v1alpha1" {
			spec.PropagateDeps = true
		}
	}
	for i := range spec.Placement.SpreadConstraints {
		c := &spec.Placement.SpreadConstraints[i]
		if c.SpreadByField == "" && c.SpreadByLabel == "" {
			c.SpreadByField = policyv1alpha1.SpreadByFieldCluster
		}
		if c.MinGroups == 0 {
			c.MinGroups = 1
		}
	}
	if rs := spec.Placement.ReplicaScheduling; rs != nil && rs.ReplicaSchedulingType == policyv1alpha1.ReplicaSchedulingTypeDivided && rs.ReplicaDivisionPreference == "" {
		rs.ReplicaDivisionPreference = policyv1alpha1.ReplicaDivisionPreferenceWeighted
	}
	if f := spec.Failover; f != nil && f.Application != nil && f.Application.PurgeMode == policyv1alpha1.PurgeModeGracefully && f.Application.GracePeriodSeconds == nil {
		f.Application.GracePeriodSeconds = ptr.To[int32](defaultGracePeriodSeconds)
	}
}

// DefaultTolerationSeconds is how long placements tolerate, by default (as
// Karmada's webhook does), the taints a ClusterTaintPolicy puts on a failing
// cluster (clusterv1alpha1.TaintClusterNotReady and
// TaintClusterUnreachable): the default of
// --default-not-ready-toleration-seconds and
// --default-unreachable-toleration-seconds.
const DefaultTolerationSeconds = 300

// addDefaultTolerations gives a placement NoExecute tolerations of the
// not-ready and unreachable taints for the configured seconds, unless it
// tolerates them already (so a workload is evicted from a failed cluster
// only after that time, when the taint manager is on).
func addDefaultTolerations(p *policyv1alpha1.Placement, o Options) {
	for _, d := range []struct {
		key     string
		seconds *int64
	}{{clusterv1alpha1.TaintClusterNotReady, o.DefaultNotReadyTolerationSeconds}, {clusterv1alpha1.TaintClusterUnreachable, o.DefaultUnreachableTolerationSeconds}} {
		if d.seconds == nil {
			continue
		}
		taint := corev1.Taint{Key: d.key, Effect: corev1.TaintEffectNoExecute}
		tolerated := false
		for i := range p.ClusterTolerations {
			tolerated = tolerated || p.ClusterTolerations[i].ToleratesTaint(&taint)
		}
		if !tolerated {
			p.ClusterTolerations = append(p.ClusterTolerations, corev1.Toleration{Key: d.key, Operator: corev1.TolerationOpExists,
				Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To(*d.seconds)})
		}
	}
}

// defaultOverride sets an OverridePolicy's selectors' namespace to its own.
func defaultOverride(spec *policyv1alpha1.OverrideSpec, ns string) {
	for i := range spec.ResourceSelectors {
		if ns != "" && spec.ResourceSelectors[i].Namespace == "" {
			spec.ResourceSelectors[i].Namespace = ns
		}
	}
}

// ensureLabel gives labels key a new UUID when it has none: the permanent id
// of a policy or binding, set once at creation.
func ensureLabel(labels map[string]string, key string) map[string]string {
	if labels[key] != "" {
		return labels
	}
	if labels == nil {
		labels = map[string]string{}
	}
	labels[key] = string(uuid.NewUUID())
	return labels
}
