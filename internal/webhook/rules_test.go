package webhook

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/scheme"
)

// testAuthorizer grants every right to every user but those whose name
// starts with "tenant", who hold none; it records what it was asked.
type testAuthorizer struct {
	asked []authorizationv1.ResourceAttributes
}

func (a *testAuthorizer) Allowed(_ context.Context, user authenticationv1.UserInfo, attrs authorizationv1.ResourceAttributes) (bool, error) {
	a.asked = append(a.asked, attrs)
	return !strings.HasPrefix(user.Username, "tenant"), nil
}

// testScaleTargets: every kind serves a scale subresource but
// ConfigMaps.
type testScaleTargets struct{}

func (testScaleTargets) Scalable(_ context.Context, _, kind string) (string, bool, error) {
	return strings.ToLower(kind) + "s", kind != "ConfigMap", nil
}

var endpoints = func() map[string]Endpoint {
	m := map[string]Endpoint{}
	for _, e := range EndpointsWith(scheme.Scheme, Options{Authorizer: &testAuthorizer{}, ScaleTargets: testScaleTargets{}}) {
		m[e.Path] = e
	}
	return m
}()

// request builds the AdmissionRequest the API server sends for obj (and
// old, on update).
func request(t testing.TB, e Endpoint, obj, old client.Object) admission.Request {
	t.Helper()
	req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		UID: "1", Kind: metav1.GroupVersionKind{Group: e.GVR.Group, Version: e.GVR.Version, Kind: e.Kind},
		Resource: metav1.GroupVersionResource{Group: e.GVR.Group, Version: e.GVR.Version, Resource: e.GVR.Resource},
		Name:     obj.GetName(), Namespace: obj.GetNamespace(), Operation: admissionv1.Create,
		Object: runtime.RawExtension{Raw: mustJSON(t, obj)},
	}}
	if old != nil {
		req.Operation = admissionv1.Update
		req.OldObject = runtime.RawExtension{Raw: mustJSON(t, old)}
	}
	return req
}

// denials returns "field: message" for every cause of a denial, nil when
// the request was allowed.
func denials(t testing.TB, resp admission.Response) []string {
	t.Helper()
	if resp.Allowed {
		return nil
	}
	if resp.Result == nil || resp.Result.Details == nil {
		t.Fatalf("denied without causes: %+v", resp.Result)
	}
	var out []string
	for _, c := range resp.Result.Details.Causes {
		out = append(out, c.Field+": "+c.Message)
	}
	return out
}

func admit(t testing.TB, path string, obj, old client.Object) []string {
	t.Helper()
	e, ok := endpoints[path]
	if !ok {
		t.Fatalf("no endpoint %s", path)
	}
	return denials(t, e.Handler().Handle(context.Background(), request(t, e, obj, old)))
}

type ruleCase struct {
	name string
	path string
	obj  client.Object
	old  client.Object
	want []string
}

func pp(change func(p *policyv1alpha1.PropagationPolicy)) *policyv1alpha1.PropagationPolicy {
	p := validPP()
	change(p)
	return p
}

func cpp(change func(p *policyv1alpha1.ClusterPropagationPolicy)) *policyv1alpha1.ClusterPropagationPolicy {
	p := validCPP()
	change(p)
	return p
}

func op(change func(o *policyv1alpha1.OverridePolicy)) *policyv1alpha1.OverridePolicy {
	o := validOP()
	change(o)
	return o
}

func overriders(o *policyv1alpha1.OverridePolicy) *policyv1alpha1.Overriders {
	return &o.Spec.OverrideRules[0].Overriders
}

func cluster(change func(c *clusterv1alpha1.Cluster)) *clusterv1alpha1.Cluster {
	c := validCluster()
	change(c)
	return c
}

func rb(change func(b *workv1alpha2.ResourceBinding)) *workv1alpha2.ResourceBinding {
	b := validRB()
	change(b)
	return b
}

const (
	ppPath  = "/validate-propagationpolicy"
	cppPath = "/validate-clusterpropagationpolicy"
	opPath  = "/validate-overridepolicy"
	copPath = "/validate-clusteroverridepolicy"
	rbPath  = "/validate-resourcebinding"
	crbPath = "/validate-clusterresourcebinding"
	wPath   = "/validate-work"
	clPath  = "/validate-cluster"
)

// TestRules: every rule, one valid and one or more invalid cases, with the
// exact causes of the denial.
func TestRules(t *testing.T) {
	long := strings.Repeat("a", 64)
	cases := []ruleCase{
		// Valid objects of every kind are admitted, on create and update.
		{name: "valid PropagationPolicy", path: ppPath, obj: validPP()},
		{name: "valid PropagationPolicy update", path: ppPath, obj: validPP(), old: validPP()},
		{name: "valid ClusterPropagationPolicy", path: cppPath, obj: validCPP()},
		{name: "valid OverridePolicy", path: opPath, obj: validOP()},
		{name: "valid ClusterOverridePolicy", path: copPath, obj: validCOP()},
		{name: "valid ResourceBinding", path: rbPath, obj: validRB()},
		{name: "valid ClusterResourceBinding", path: crbPath, obj: validCRB()},
		{name: "valid Work", path: wPath, obj: validWork()},
		{name: "valid Cluster", path: clPath, obj: validCluster()},

		// Policy metadata.
		// Any valid object name, as in Karmada (the API server checks it).
		{name: "policy name past 63 characters", path: ppPath, obj: pp(func(p *policyv1alpha1.PropagationPolicy) { p.Name = long })},
		{name: "cluster policy name past 63 characters", path: cppPath, obj: cpp(func(p *policyv1alpha1.ClusterPropagationPolicy) { p.Name = long })},
		{name: "policy in karmada-system", path: ppPath, obj: pp(func(p *policyv1alpha1.PropagationPolicy) {
			p.Namespace = "karmada-system"
			p.Spec.ResourceSelectors[0].Namespace = ""
		}), want: []string{`metadata.namespace: Forbidden: "karmada-system" holds the control plane's own objects and member credentials: policies may not be created in karmada-system, karmada-cluster or karmada-es-*`}},
		{name: "override policy in an execution namespace", path: opPath, obj: op(func(o *policyv1alpha1.OverridePolicy) {
			o.Namespace = "karmada-es-member1"
			o.Spec.ResourceSelectors[0].Namespace = ""
		}), want: []string{`metadata.namespace: Forbidden: "karmada-es-member1" holds the control plane's own objects and member credentials: policies may not be created in karmada-system, karmada-cluster or karmada-es-*`}},
		{name: "availability budget", path: ppPath, obj: pp(func(p *policyv1alpha1.PropagationPolicy) {
			p.Annotations = map[string]string{policyv1alpha1.MinAvailableAnnotation: "60%"}
		})},
		{name: "availability budget not a number", path: ppPath, obj: pp(func(p *policyv1alpha1.PropagationPolicy) {
			p.Annotations = map[string]string{policyv1alpha1.MinAvailableAnnotation: "most"}
		}), want: []string{`metadata.annotations[policy.karmada-go.io/min-available]: Invalid value: "most": must be a number of replicas ("4") or a percentage of the workload's replicas ("60%")`}},
		{name: "narrowing mode", path: ppPath, obj: pp(func(p *policyv1alpha1.PropagationPolicy) {
			p.Annotations = map[string]string{policyv1alpha1.PlacementNarrowingAnnotation: "Later"}
		}), want: []string{`metadata.annotations[policy.karmada-go.io/placement-narrowing]: Unsupported value: "Later": supported values: "Gracefully", "Directly"`}},
		{name: "permanent id missing on create", path: ppPath, obj: pp(func(p *policyv1alpha1.PropagationPolicy) { p.Labels = nil }),
			want: []string{`metadata.labels[propagationpolicy.karmada.io/permanent-id]: Required value: set by the mutating webhook when the policy is created`}},
		{name: "permanent id changed", path: ppPath, old: validPP(), obj: pp(func(p *policyv1alpha1.PropagationPolicy) {
			p.Labels[policyv1alpha1.PropagationPolicyPermanentIDLabel] = "other"
		}), want: []string{`metadata.labels[propagationpolicy.karmada.io/permanent-id]: Invalid value: "other": immutable: it was "8c4c3f2e-1111-4000-8000-000000000001", given when the policy was created`}},
		{name: "permanent id given to a policy made before the webhook", path: ppPath, obj: validPP(), old: pp(func(p *policyv1alpha1.PropagationPolicy) { p.Labels = nil })},
		{name: "schedulerName changed", path: ppPath, old: validPP(), obj: pp(func(p *policyv1alpha1.PropagationPolicy) { p.Spec.SchedulerName = "other" }),
			want: []string{`spec.schedulerName: Invalid value: "other": immutable: it was "default-scheduler"`}},
		{name: "priority may change", path: ppPath, old: validPP(), obj: pp(func(p *policyv1alpha1.PropagationPolicy) { p.Spec.Priority = ptr.To[int32](-3) })},
		{name: "an update that leaves the spec alone is not held to rules added since", path: ppPath,
			old: pp(func(p *policyv1alpha1.PropagationPolicy) { p.Spec.Placement.SpreadConstraints[0].MinGroups = -1 }),
			obj: pp(func(p *policyv1alpha1.PropagationPolicy) {
				p.Spec.Placement.SpreadConstraints[0].MinGroups = -1
				p.Finalizers = []string{"example.com/keep"}
			})},

		// Resource selectors.
		{name: "selector without apiVersion and kind", path: ppPath, obj: pp(func(p *policyv1alpha1.PropagationPolicy) {
			p.Spec.ResourceSelectors[1].APIVersion, p.Spec.ResourceSelectors[1].Kind = "", ""
		}), want: []string{
			`spec.resourceSelectors[1].apiVersion: Required value: the API version of the templates, e.g. apps/v1`,
			`spec.resourceSelectors[1].kind: Required value: the kind of the templates, e.g. Deployment`,
		}},
		{name: "selector apiVersion malformed", path: ppPath, obj: pp(func(p *policyv1alpha1.PropagationPolicy) { p.Spec.ResourceSelectors[1].APIVersion = "a/b/c" }),
			want: []string{`spec.resourceSelectors[1].apiVersion: Invalid value: "a/b/c": must be <group>/<version> or <version>`}},
		{name: "selector in another namespace", path: ppPath, obj: pp(func(p *policyv1alpha1.PropagationPolicy) { p.Spec.ResourceSelectors[0].Namespace = "kube-system" }),
			want: []string{`spec.resourceSelectors[0].namespace: Invalid value: "kube-system": must be empty or "shop": a namespaced policy selects templates of its own namespace only`}},
		{name: "override selector in another namespace", path: opPath, obj: op(func(o *policyv1alpha1.OverridePolicy) { o.Spec.ResourceSelectors[0].Namespace = "other" }),
			want: []string{`spec.resourceSelectors[0].namespace: Invalid value: "other": must be empty or "shop": a namespaced policy selects templates of its own namespace only`}},
		{name: "cluster policy selects any namespace", path: cppPath, obj: validCPP()},
		{name: "bad label selector", path: ppPath, obj: pp(func(p *policyv1alpha1.PropagationPolicy) {
			p.Spec.ResourceSelectors[1].LabelSelector.MatchLabels = map[string]string{"bad key!": "x"}
		}), want: []string{`spec.resourceSelectors[1].labelSelector.matchLabels: Invalid value: "bad key!": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`}},
		{name: "preemption Always needs names", path: ppPath, obj: validPP(), want: nil},
		{name: "preemption Always without a name", path: ppPath, obj: pp(func(p *policyv1alpha1.PropagationPolicy) { p.Spec.ResourceSelectors[0].Name = "" }),
			want: []string{`spec.resourceSelectors[0].name: Invalid value: "": must be set when preemption is Always: a policy without names could take every matching template from other policies`}},

		// Placement.
		{name: "clusterAffinity with clusterAffinities", path: ppPath, obj: pp(func(p *policyv1alpha1.PropagationPolicy) {
			p.Spec.Placement.ClusterAffinity = &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}
		}), want: []string{`spec.placement.clusterAffinities: Forbidden: may not be set together with clusterAffinity: use one or the other`}},
		{name: "affinity names empty and repeated", path: ppPath, obj: pp(func(p *policyv1alpha1.PropagationPolicy) {
			p.Spec.Placement.ClusterAffinities[0].AffinityName = ""
			p.Spec.Placement.ClusterAffinities = append(p.Spec.Placement.ClusterAffinities, p.Spec.Placement.ClusterAffinities[1])
		}), want: []string{
			`spec.placement.clusterAffinities[0].affinityName: Required value: each cluster affinity term needs a name`,
			`spec.placement.clusterAffinities[2].affinityName: Duplicate value: "backup (already the name of spec.placement.clusterAffinities[1])"`,
		}},
		{name: "field selector key and operator", path: ppPath, obj: pp(func(p *policyv1alpha1.PropagationPolicy) {
			p.Spec.Placement.ClusterAffinities[0].FieldSelector.MatchExpressions[0].Key = "country"
			p.Spec.Placement.ClusterAffinities[0].FieldSelector.MatchExpressions[0].Operator = corev1.NodeSelectorOpExists
		}), want: []string{
			`spec.placement.clusterAffinities[0].fieldSelector.matchExpressions[0].key: Unsupported value: "country": supported values: "provider", "region", "zone"`,
			`spec.placement.clusterAffinities[0].fieldSelector.matchExpressions[0].operator: Unsupported value: "Exists": supported values: "In", "NotIn"`,
		}},
		{name: "overflow groups with dynamic weights", path: ppPath, obj: pp(func(p *policyv1alpha1.PropagationPolicy) {
			p.Spec.Placement.ReplicaScheduling.WeightPreference = &policyv1alpha1.ClusterPreferences{DynamicWeight: policyv1alpha1.DynamicWeightByAvailableReplicas}
			p.Spec.Placement.ClusterAffinities[0].OverflowAffinities = []policyv1alpha1.OverflowAffinityTerm{
				{AffinityName: "cloud", ClusterAffinity: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member3"}}}}
		})},
		{name: "overflow groups: static weights, no primary, names repeated", path: ppPath, obj: pp(func(p *policyv1alpha1.PropagationPolicy) {
			p.Spec.Placement.ClusterAffinities[0].ClusterAffinity = policyv1alpha1.ClusterAffinity{}
			p.Spec.Placement.ClusterAffinities[0].OverflowAffinities = []policyv1alpha1.OverflowAffinityTerm{
				{AffinityName: "cloud"}, {AffinityName: "cloud"}, {AffinityName: "primary"}}
		}), want: []string{
			`spec.placement.clusterAffinities[0].clusterNames: Required value: overflowAffinities extend the term's primary group: select it with clusterNames, labelSelector, fieldSelector or exclude`,
			`spec.placement.clusterAffinities[0].overflowAffinities: Forbidden: overflowAffinities need replicaScheduling Divided by what the clusters can take: weightPreference.dynamicWeight AvailableReplicas, or replicaDivisionPreference Aggregated`,
			`spec.placement.clusterAffinities[0].overflowAffinities[1].affinityName: Duplicate value: "cloud (already the name of spec.placement.clusterAffinities[0].overflowAffinities[0])"`,
			`spec.placement.clusterAffinities[0].overflowAffinities[2].affinityName: Duplicate value: "primary (already the name of the term)"`,
		}},
		{name: "cluster name malformed", path: ppPath, obj: pp(func(p *policyv1alpha1.PropagationPolicy) {
			p.Spec.Placement.ClusterAffinities[1].ClusterNames = []string{"Member_3"}
		}), want: []string{`spec.placement.clusterAffinities[1].clusterNames[0]: Invalid value: "Member_3": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`}},
		{name: "toleration seconds without NoExecute", path: ppPath, obj: pp(func(p *policyv1alpha1.PropagationPolicy) {
			p.Spec.Placement.ClusterTolerations[0].Effect = corev1.TaintEffectNoSchedule
		}), want: []string{`spec.placement.clusterTolerations[0].tolerationSeconds: Invalid value: 30: must be empty unless effect is NoExecute`}},
		{name: "spread by field and label", path: ppPath, obj: pp(func(p *policyv1alpha1.PropagationPolicy) {
			p.Spec.Placement.SpreadConstraints[1].SpreadByLabel = "team"
		}), want: []string{`spec.placement.spreadConstraints[1].spreadByLabel: Invalid value: "team": must be empty when spreadByField is set: a constraint spreads by a field or by a label, not both`}},
		{name: "maxGroups below minGroups, negative minGroups", path: ppPath, obj: pp(func(p *policyv1alpha1.PropagationPolicy) {
			p.Spec.Placement.SpreadConstraints[0].MinGroups = 3
			p.Spec.Placement.SpreadConstraints[1].MinGroups = -1
		}), want: []string{
			`spec.placement.spreadConstraints[0].maxGroups: Invalid value: 2: must be greater than or equal to minGroups (3)`,
			`spec.placement.spreadConstraints[1].minGroups: Invalid value: -1: must be greater than or equal to 0`,
		}},
		{name: "spread by region without a cluster constraint", path: ppPath, obj: pp(func(p *policyv1alpha1.PropagationPolicy) {
			p.Spec.Placement.SpreadConstraints = p.Spec.Placement.SpreadConstraints[1:]
		}), want: []string{`spec.placement.spreadConstraints: Invalid value: "spreadByField region": a constraint with spreadByField: cluster is required when spreading by region, zone or provider (it says how many clusters to choose)`}},
		{name: "the same field twice", path: ppPath, obj: pp(func(p *policyv1alpha1.PropagationPolicy) {
			p.Spec.Placement.SpreadConstraints[1].SpreadByField = policyv1alpha1.SpreadByFieldCluster
		}), want: []string{`spec.placement.spreadConstraints[1].spreadByField: Duplicate value: "cluster (already spread by in spec.placement.spreadConstraints[0])"`}},
		{name: "Duplicated with a division preference", path: ppPath, obj: pp(func(p *policyv1alpha1.PropagationPolicy) {
			p.Spec.Placement.ReplicaScheduling.ReplicaSchedulingType = policyv1alpha1.ReplicaSchedulingTypeDuplicated
		}), want: []string{
			`spec.placement.replicaScheduling.replicaDivisionPreference: Invalid value: "Weighted": must be empty when replicaSchedulingType is Duplicated (replicas are copied, not divided)`,
			`spec.placement.replicaScheduling.weightPreference: Forbidden: must be empty when replicaSchedulingType is Duplicated (replicas are copied, not divided)`,
		}},
		{name: "Aggregated with weights, weight 0", path: ppPath, obj: pp(func(p *policyv1alpha1.PropagationPolicy) {
			p.Spec.Placement.ReplicaScheduling.ReplicaDivisionPreference = policyv1alpha1.ReplicaDivisionPreferenceAggregated
			p.Spec.Placement.ReplicaScheduling.WeightPreference.StaticWeightList[1].Weight = 0
		}), want: []string{
			`spec.placement.replicaScheduling.weightPreference: Forbidden: must be empty when replicaDivisionPreference is Aggregated (weights apply to Weighted division)`,
			`spec.placement.replicaScheduling.weightPreference.staticWeightList[1].weight: Invalid value: 0: must be greater than or equal to 1`,
		}},

		// Failover, suspension, scheduling priority.
		{name: "application failover without propagateDeps", path: ppPath, obj: pp(func(p *policyv1alpha1.PropagationPolicy) { p.Spec.PropagateDeps = false }),
			want: []string{`spec.propagateDeps: Invalid value: false: must be true when spec.failover.application is set`}},
		{name: "failover bounds", path: ppPath, obj: pp(func(p *policyv1alpha1.PropagationPolicy) {
			p.Spec.Failover.Application.DecisionConditions.TolerationSeconds = ptr.To[int32](-1)
			p.Spec.Failover.Application.GracePeriodSeconds = ptr.To[int32](0)
		}), want: []string{
			`spec.failover.application.decisionConditions.tolerationSeconds: Invalid value: -1: must be greater than or equal to 0`,
			`spec.failover.application.gracePeriodSeconds: Invalid value: 0: must be greater than 0`,
		}},
		{name: "grace period without Gracefully", path: ppPath, obj: pp(func(p *policyv1alpha1.PropagationPolicy) {
			p.Spec.Failover.Application.PurgeMode = policyv1alpha1.PurgeModeDirectly
		}), want: []string{`spec.failover.application.gracePeriodSeconds: Invalid value: 600: must be empty unless purgeMode is Gracefully`}},
		{name: "Gracefully without a grace period", path: ppPath, obj: pp(func(p *policyv1alpha1.PropagationPolicy) {
			p.Spec.Failover.Application.GracePeriodSeconds = nil
		}), want: []string{`spec.failover.application.gracePeriodSeconds: Required value: how long to wait for the new copy when purgeMode is Gracefully`}},
		{name: "state preservation rule", path: ppPath, obj: pp(func(p *policyv1alpha1.PropagationPolicy) {
			p.Spec.Failover.Application.StatePreservation.Rules[0] = policyv1alpha1.StatePreservationRule{AliasLabelName: "bad label!", JSONPath: "{.replicas"}
		}), want: []string{
			`spec.failover.application.statePreservation.rules[0].aliasLabelName: Invalid value: "bad label!": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
			`spec.failover.application.statePreservation.rules[0].jsonPath: Invalid value: "{.replicas": must be a JSONPath expression: unclosed action`,
		}},
		{name: "cluster failover purge mode", path: ppPath, obj: pp(func(p *policyv1alpha1.PropagationPolicy) {
			p.Spec.Failover.Cluster = &policyv1alpha1.ClusterFailoverBehavior{PurgeMode: policyv1alpha1.PurgeModeNever}
		}), want: []string{`spec.failover.cluster.purgeMode: Unsupported value: "Never": supported values: "Directly", "Gracefully"`}},
		{name: "suspension on every cluster and on some", path: ppPath, obj: pp(func(p *policyv1alpha1.PropagationPolicy) {
			p.Spec.Suspension.Dispatching = ptr.To(true)
		}), want: []string{`spec.suspension.dispatchingOnClusters.clusterNames: Invalid value: []string{"member3"}: must be empty when suspension.dispatching is true (dispatching is already suspended on every cluster)`}},
		{name: "schedule priority without a class", path: ppPath, obj: pp(func(p *policyv1alpha1.PropagationPolicy) { p.Spec.SchedulePriority.PriorityClassName = "" }),
			want: []string{`spec.schedulePriority.priorityClassName: Required value: the PriorityClass to take the priority from`}},

		// Overriders.
		{name: "override to kube-system", path: opPath, obj: op(func(o *policyv1alpha1.OverridePolicy) {
			overriders(o).Plaintext = []policyv1alpha1.PlaintextOverrider{{Path: "/metadata/namespace", Operator: policyv1alpha1.OverriderOpReplace, Value: rawJSON(`"kube-system"`)}}
		}), want: []string{`spec.overrideRules[0].overriders.plaintext[0].path: Forbidden: "/metadata/namespace" would change metadata.namespace: overriders may not change apiVersion, kind, metadata.name, metadata.namespace, metadata.generateName, metadata.uid or metadata.ownerReferences (the member object must be the template's)`}},
		{name: "override of kind, of all metadata, of an owner reference, of the whole object", path: copPath, obj: func() client.Object {
			c := validCOP()
			c.Spec.OverrideRules[0].Overriders.Plaintext = []policyv1alpha1.PlaintextOverrider{
				{Path: "/kind", Operator: policyv1alpha1.OverriderOpReplace, Value: rawJSON(`"ClusterRole"`)},
				{Path: "/metadata", Operator: policyv1alpha1.OverriderOpReplace, Value: rawJSON(`{}`)},
				{Path: "/metadata/ownerReferences/0/uid", Operator: policyv1alpha1.OverriderOpRemove},
				{Path: "", Operator: policyv1alpha1.OverriderOpReplace, Value: rawJSON(`{}`)},
			}
			return c
		}(), want: []string{
			`spec.overrideRules[0].overriders.plaintext[0].path: Forbidden: "/kind" would change kind: overriders may not change apiVersion, kind, metadata.name, metadata.namespace, metadata.generateName, metadata.uid or metadata.ownerReferences (the member object must be the template's)`,
			`spec.overrideRules[0].overriders.plaintext[1].path: Forbidden: "/metadata" would change metadata.name: overriders may not change apiVersion, kind, metadata.name, metadata.namespace, metadata.generateName, metadata.uid or metadata.ownerReferences (the member object must be the template's)`,
			`spec.overrideRules[0].overriders.plaintext[2].path: Forbidden: "/metadata/ownerReferences/0/uid" would change metadata.ownerReferences: overriders may not change apiVersion, kind, metadata.name, metadata.namespace, metadata.generateName, metadata.uid or metadata.ownerReferences (the member object must be the template's)`,
			`spec.overrideRules[0].overriders.plaintext[3].path: Invalid value: "": must be a JSON pointer starting with "/", e.g. /spec/replicas`,
		}},
		{name: "labels and annotations may be overridden", path: opPath, obj: op(func(o *policyv1alpha1.OverridePolicy) {
			overriders(o).Plaintext = []policyv1alpha1.PlaintextOverrider{{Path: "/metadata/labels/tier", Operator: policyv1alpha1.OverriderOpAdd, Value: rawJSON(`"web"`)}}
		})},
		{name: "JSON pointer escapes, operator and value", path: opPath, obj: op(func(o *policyv1alpha1.OverridePolicy) {
			overriders(o).Plaintext = []policyv1alpha1.PlaintextOverrider{
				{Path: "/spec/a~2b", Operator: policyv1alpha1.OverriderOpReplace, Value: rawJSON(`1`)},
				{Path: "spec/replicas", Operator: policyv1alpha1.OverriderOpAdd},
				{Path: "/spec/replicas", Operator: policyv1alpha1.OverriderOpRemove, Value: rawJSON(`1`)},
				{Path: "/spec/replicas", Operator: "set", Value: rawJSON(`1`)},
			}
		}), want: []string{
			`spec.overrideRules[0].overriders.plaintext[0].path: Invalid value: "/spec/a~2b": "~" must be followed by 0 (for "~") or 1 (for "/") in a JSON pointer`,
			`spec.overrideRules[0].overriders.plaintext[1].path: Invalid value: "spec/replicas": must be a JSON pointer starting with "/", e.g. /spec/replicas`,
			`spec.overrideRules[0].overriders.plaintext[1].value: Required value: the value to add`,
			`spec.overrideRules[0].overriders.plaintext[2].value: Invalid value: "1": must be empty when operator is remove`,
			`spec.overrideRules[0].overriders.plaintext[3].operator: Unsupported value: "set": supported values: "add", "remove", "replace"`,
		}},
		{name: "image component values", path: opPath, obj: op(func(o *policyv1alpha1.OverridePolicy) {
			overriders(o).ImageOverrider = []policyv1alpha1.ImageOverrider{
				{Component: policyv1alpha1.Registry, Operator: policyv1alpha1.OverriderOpReplace, Value: "https://registry.example.com"},
				{Component: policyv1alpha1.Repository, Operator: policyv1alpha1.OverriderOpReplace, Value: "Library/Nginx"},
				{Component: policyv1alpha1.Tag, Operator: policyv1alpha1.OverriderOpReplace, Value: "-latest"},
				{Component: policyv1alpha1.Tag, Operator: policyv1alpha1.OverriderOpAdd},
				{Component: "Digest", Operator: policyv1alpha1.OverriderOpRemove},
				{Predicate: &policyv1alpha1.ImagePredicate{Path: "spec"}, Component: policyv1alpha1.Registry, Operator: policyv1alpha1.OverriderOpAdd, Value: "-cn"},
			}
		}), want: []string{
			`spec.overrideRules[0].overriders.imageOverrider[0].value: Invalid value: "https://registry.example.com": must be a registry host with an optional port, e.g. registry.example.com:5000`,
			`spec.overrideRules[0].overriders.imageOverrider[1].value: Invalid value: "Library/Nginx": must be lower-case path components separated by '/', e.g. library/nginx`,
			`spec.overrideRules[0].overriders.imageOverrider[2].value: Invalid value: "-latest": must be a tag: up to 128 letters, digits, '_', '.' and '-', not starting with '.' or '-'`,
			`spec.overrideRules[0].overriders.imageOverrider[3].value: Required value: the tag to add`,
			`spec.overrideRules[0].overriders.imageOverrider[4].component: Unsupported value: "Digest": supported values: "Registry", "Repository", "Tag"`,
			`spec.overrideRules[0].overriders.imageOverrider[5].predicate.path: Invalid value: "spec": must be a JSON pointer starting with "/", e.g. /spec/replicas`,
		}},
		{name: "command overrider", path: opPath, obj: op(func(o *policyv1alpha1.OverridePolicy) {
			overriders(o).CommandOverrider = []policyv1alpha1.CommandArgsOverrider{{Operator: policyv1alpha1.OverriderOpReplace}}
		}), want: []string{
			`spec.overrideRules[0].overriders.commandOverrider[0].containerName: Required value: the container whose command to change`,
			`spec.overrideRules[0].overriders.commandOverrider[0].operator: Unsupported value: "replace": supported values: "add", "remove"`,
		}},
		{name: "label and annotation overriders", path: opPath, obj: op(func(o *policyv1alpha1.OverridePolicy) {
			overriders(o).LabelsOverrider[0].Value = map[string]string{"tier": "a b"}
			overriders(o).AnnotationsOverrider[0].Operator = "merge"
		}), want: []string{
			`spec.overrideRules[0].overriders.labelsOverrider[0].value: Invalid value: "a b": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`,
			`spec.overrideRules[0].overriders.annotationsOverrider[0].operator: Unsupported value: "merge": supported values: "add", "remove", "replace"`,
		}},
		{name: "field overrider", path: opPath, obj: op(func(o *policyv1alpha1.OverridePolicy) {
			f := &overriders(o).FieldOverrider[0]
			f.FieldPath = "/metadata/name"
			f.YAML = []policyv1alpha1.PatchOperation{{SubPath: "/x", Operator: policyv1alpha1.OverriderOpRemove}}
			f.JSON[0].SubPath = "db"
		}), want: []string{
			`spec.overrideRules[0].overriders.fieldOverrider[0].fieldPath: Forbidden: "/metadata/name" would change metadata.name: overriders may not change apiVersion, kind, metadata.name, metadata.namespace, metadata.generateName, metadata.uid or metadata.ownerReferences (the member object must be the template's)`,
			`spec.overrideRules[0].overriders.fieldOverrider[0].yaml: Forbidden: may not be set together with json: a field holds either JSON or YAML`,
			`spec.overrideRules[0].overriders.fieldOverrider[0].json[0].subPath: Invalid value: "db": must be a JSON pointer starting with "/", e.g. /spec/replicas`,
		}},
		{name: "overriders with overrideRules, targetCluster with overrideRules", path: opPath, obj: op(func(o *policyv1alpha1.OverridePolicy) {
			o.Spec.TargetCluster = &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}
			o.Spec.Overriders = policyv1alpha1.Overriders{Plaintext: []policyv1alpha1.PlaintextOverrider{{Path: "/spec/replicas", Operator: policyv1alpha1.OverriderOpReplace, Value: rawJSON(`1`)}}}
		}), want: []string{
			`spec.targetCluster: Forbidden: may not be set together with overrideRules: put the target cluster in each rule`,
			`spec.overriders: Forbidden: may not be set together with overrideRules: put the overriders in each rule`,
		}},

		// Bindings and Works.
		{name: "binding of another namespace's template", path: rbPath, obj: rb(func(b *workv1alpha2.ResourceBinding) { b.Spec.Resource.Namespace = "karmada-cluster" }),
			want: []string{`spec.resource.namespace: Invalid value: "karmada-cluster": must be "shop": a ResourceBinding binds a template of its own namespace`}},
		{name: "cluster binding of a namespaced template", path: crbPath, obj: func() client.Object {
			c := validCRB()
			c.Spec.Resource.Namespace = "karmada-cluster"
			return c
		}(), want: []string{`spec.resource.namespace: Invalid value: "karmada-cluster": must be empty: a ClusterResourceBinding binds a cluster-scoped template (a namespaced one has a ResourceBinding in its namespace)`}},
		{name: "binding without a template, clusters repeated, negative replicas", path: rbPath, obj: rb(func(b *workv1alpha2.ResourceBinding) {
			b.Spec.Resource.Kind, b.Spec.Resource.Name = "", ""
			b.Spec.Clusters[1].Name = "member1"
			b.Spec.Clusters[1].Replicas = -1
		}), want: []string{
			`spec.resource.kind: Required value: the kind of the bound template`,
			`spec.resource.name: Required value: the name of the bound template`,
			`spec.clusters[1].name: Duplicate value: "member1 (already in spec.clusters[0])"`,
			`spec.clusters[1].replicas: Invalid value: -1: must be greater than or equal to 0`,
		}},
		{name: "a binding made before the webhook may lose its finalizer", path: rbPath,
			old: rb(func(b *workv1alpha2.ResourceBinding) {
				b.Spec.Resource.Namespace = "karmada-cluster"
				b.Finalizers = []string{workv1alpha2.BindingControllerFinalizer}
			}),
			obj: rb(func(b *workv1alpha2.ResourceBinding) { b.Spec.Resource.Namespace = "karmada-cluster" })},
		{name: "a cluster named before the name rule stays updatable", path: clPath,
			old: cluster(func(c *clusterv1alpha1.Cluster) { c.Name = strings.Repeat("m", 49) }),
			obj: cluster(func(c *clusterv1alpha1.Cluster) {
				c.Name = strings.Repeat("m", 49)
				c.Spec.Taints = nil
			})},
		{name: "binding permanent id changed", path: rbPath, old: validRB(), obj: rb(func(b *workv1alpha2.ResourceBinding) {
			b.Labels[workv1alpha2.ResourceBindingPermanentIDLabel] = "x"
		}), want: []string{`metadata.labels[resourcebinding.karmada.io/permanent-id]: Invalid value: "x": immutable: it was "8c4c3f2e-1111-4000-8000-000000000003", given when the binding was created`}},
		{name: "work manifest without kind or name", path: wPath, obj: func() client.Object {
			w := validWork()
			w.Spec.Workload.Manifests[0].Raw = []byte(`{"apiVersion":"v1","metadata":{}}`)
			return w
		}(), want: []string{
			`spec.workload.manifests[0].kind: Required value: every manifest is an object with a kind`,
			`spec.workload.manifests[0].metadata.name: Required value: every manifest is an object with a name`,
		}},

		// Clusters.
		{name: "cluster name too long for its execution namespace", path: clPath, obj: cluster(func(c *clusterv1alpha1.Cluster) { c.Name = strings.Repeat("m", 49) }),
			want: []string{`metadata.name: Invalid value: "` + strings.Repeat("m", 49) + `": must be no more than 48 characters (the execution namespace karmada-es-<name> must fit in 63)`}},
		{name: "cluster sync mode, endpoint, secret, proxy", path: clPath, obj: cluster(func(c *clusterv1alpha1.Cluster) {
			c.Spec.SyncMode = "Poll"
			c.Spec.APIEndpoint = "https://user:pw@host:6443?x=1"
			c.Spec.SecretRef.Namespace = ""
			c.Spec.ProxyURL = "ftp://proxy"
		}), want: []string{
			`spec.syncMode: Unsupported value: "Poll": supported values: "Push", "Pull"`,
			`spec.apiEndpoint: Invalid value: "https://user:pw@host:6443?x=1": may not hold user information`,
			`spec.apiEndpoint: Invalid value: "https://user:pw@host:6443?x=1": may not hold a query or a fragment`,
			`spec.secretRef.namespace: Required value: the namespace of the Secret: karmada-cluster`,
			`spec.proxyURL: Invalid value: "ftp://proxy": unsupported scheme "ftp": must be http, https or socks5`,
		}},
		{name: "cluster credentials outside karmada-cluster", path: clPath, obj: cluster(func(c *clusterv1alpha1.Cluster) {
			c.Spec.ImpersonatorSecretRef = &clusterv1alpha1.LocalSecretReference{Namespace: "default", Name: "token"}
		}), want: []string{`spec.impersonatorSecretRef.namespace: Unsupported value: "default": supported values: "karmada-cluster"`}},
		{name: "cluster taints", path: clPath, obj: cluster(func(c *clusterv1alpha1.Cluster) {
			c.Spec.Taints = []corev1.Taint{
				{Key: "a", Effect: corev1.TaintEffectPreferNoSchedule},
				{Key: "b", Effect: corev1.TaintEffectNoSchedule}, {Key: "b", Value: "2", Effect: corev1.TaintEffectNoSchedule},
			}
		}), want: []string{
			`spec.taints[0].effect: Unsupported value: "PreferNoSchedule": supported values: "NoSchedule", "NoExecute"`,
			`spec.taints[2]: Duplicate value: "b:NoSchedule (the same key and effect as spec.taints[1])"`,
		}},
		{name: "cluster resource models", path: clPath, obj: cluster(func(c *clusterv1alpha1.Cluster) {
			c.Spec.ResourceModels[1].Ranges[0].Min = resource.MustParse("3")
			c.Spec.ResourceModels[1].Ranges[0].Max = resource.MustParse("8")
		}), want: []string{
			`spec.resourceModels[1].ranges[0].min: Invalid value: "3": must be 4, the max of the model before (ranges may not overlap or leave gaps)`,
			`spec.resourceModels[1].ranges[0].max: Invalid value: "8": must be 9223372036854775807 in the last model`,
		}},
		{name: "cluster id and sync mode are immutable", path: clPath, old: validCluster(), obj: cluster(func(c *clusterv1alpha1.Cluster) {
			c.Spec.ID = "other"
			c.Spec.SyncMode = clusterv1alpha1.Pull
		}), want: []string{
			`spec.id: Invalid value: "other": immutable: it was "b7c0c0de-0000-4000-8000-000000000002", the member's identity (unjoin the cluster and join it again to change it)`,
			`spec.syncMode: Invalid value: "Pull": immutable: it was Push (unjoin or unregister the cluster and join or register it again to change it)`,
		}},
		{name: "cluster id may be set once", path: clPath, old: cluster(func(c *clusterv1alpha1.Cluster) { c.Spec.ID = "" }), obj: validCluster()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := admit(t, tc.path, tc.obj, tc.old)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("causes (-want +got):\n%s", diff)
			}
		})
	}
}
