package testenv

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
)

func affinity() policyv1alpha1.ClusterAffinity {
	return policyv1alpha1.ClusterAffinity{
		LabelSelector: &metav1.LabelSelector{
			MatchLabels:      map[string]string{"env": "prod"},
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"a", "b"}}},
		},
		FieldSelector: &policyv1alpha1.FieldSelector{MatchExpressions: []corev1.NodeSelectorRequirement{
			{Key: "region", Operator: corev1.NodeSelectorOpIn, Values: []string{"us-east-1"}},
		}},
		ClusterNames: []string{"member1", "member2"},
		Exclude:      []string{"member3"},
	}
}

// placement sets every field but clusterAffinity, which may not go with
// clusterAffinities: placementByAffinity has it instead.
func placement() policyv1alpha1.Placement {
	return policyv1alpha1.Placement{
		ClusterAffinities: []policyv1alpha1.ClusterAffinityTerm{{
			AffinityName:       "primary",
			ClusterAffinity:    affinity(),
			OverflowAffinities: []policyv1alpha1.OverflowAffinityTerm{{AffinityName: "backup", ClusterAffinity: affinity()}},
		}},
		// Both taints karmada-webhook gives default tolerations of: the
		// object reads back as sent.
		ClusterTolerations: []corev1.Toleration{{Key: "cluster.karmada.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](30)},
			{Key: "cluster.karmada.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](60)}},
		SpreadConstraints: []policyv1alpha1.SpreadConstraint{
			{SpreadByField: policyv1alpha1.SpreadByFieldCluster, MinGroups: 1, MaxGroups: 3},
			{SpreadByField: policyv1alpha1.SpreadByFieldRegion, MinGroups: 1, MaxGroups: 2},
			{SpreadByLabel: "team", MinGroups: 1, MaxGroups: 3},
		},
		ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{
			ReplicaSchedulingType:     policyv1alpha1.ReplicaSchedulingTypeDivided,
			ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted,
			WeightPreference: &policyv1alpha1.ClusterPreferences{
				StaticWeightList: []policyv1alpha1.StaticClusterWeight{{TargetCluster: affinity(), Weight: 2}},
				DynamicWeight:    policyv1alpha1.DynamicWeightByAvailableReplicas,
			},
		},
		WorkloadAffinity: &policyv1alpha1.WorkloadAffinity{
			Affinity:     &policyv1alpha1.WorkloadAffinityTerm{GroupByLabelKey: "app.group"},
			AntiAffinity: &policyv1alpha1.WorkloadAffinityTerm{GroupByLabelKey: "app.shard"},
		},
	}
}

func failover() *policyv1alpha1.FailoverBehavior {
	sp := &policyv1alpha1.StatePreservation{Rules: []policyv1alpha1.StatePreservationRule{{AliasLabelName: "app.io/replicas", JSONPath: "{ .replicas }"}}}
	return &policyv1alpha1.FailoverBehavior{
		Application: &policyv1alpha1.ApplicationFailoverBehavior{
			DecisionConditions: policyv1alpha1.DecisionConditions{TolerationSeconds: ptr.To[int32](120)},
			PurgeMode:          policyv1alpha1.PurgeModeGracefully,
			GracePeriodSeconds: ptr.To[int32](600),
			StatePreservation:  sp,
		},
		Cluster: &policyv1alpha1.ClusterFailoverBehavior{PurgeMode: policyv1alpha1.PurgeModeDirectly, StatePreservation: sp},
	}
}

func placementByAffinity() policyv1alpha1.Placement {
	p := placement()
	a := affinity()
	p.ClusterAffinity, p.ClusterAffinities = &a, nil
	return p
}

// propagationSpec is valid for a policy in namespace (every field set; the
// placement in two shapes, since clusterAffinity and clusterAffinities may
// not go together).
func propagationSpec(namespace string, placement policyv1alpha1.Placement) policyv1alpha1.PropagationSpec {
	return policyv1alpha1.PropagationSpec{
		ResourceSelectors: []policyv1alpha1.ResourceSelector{
			{APIVersion: "apps/v1", Kind: "Deployment", Name: "nginx", Namespace: namespace},
			{APIVersion: "v1", Kind: "ConfigMap", Name: "nginx-config", Namespace: namespace, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "nginx"}}},
		},
		Association:                 true,
		PropagateDeps:               true,
		Placement:                   placement,
		Priority:                    ptr.To[int32](5),
		Preemption:                  policyv1alpha1.PreemptAlways,
		DependentOverrides:          []string{"op-a"},
		SchedulerName:               "default-scheduler",
		Failover:                    failover(),
		ConflictResolution:          policyv1alpha1.ConflictOverwrite,
		ActivationPreference:        policyv1alpha1.LazyActivation,
		Suspension:                  &policyv1alpha1.Suspension{Dispatching: ptr.To(false), DispatchingOnClusters: &policyv1alpha1.SuspendClusters{ClusterNames: []string{"member3"}}},
		PreserveResourcesOnDeletion: ptr.To(true),
		SchedulePriority:            &policyv1alpha1.SchedulePriority{PriorityClassSource: policyv1alpha1.KubePriorityClass, PriorityClassName: "high"},
	}
}

func overriders() policyv1alpha1.Overriders {
	return policyv1alpha1.Overriders{
		Plaintext:            []policyv1alpha1.PlaintextOverrider{{Path: "/spec/replicas", Operator: policyv1alpha1.OverriderOpReplace, Value: apiextensionsv1.JSON{Raw: []byte(`3`)}}},
		ImageOverrider:       []policyv1alpha1.ImageOverrider{{Predicate: &policyv1alpha1.ImagePredicate{Path: "/spec/template/spec/containers/0/image"}, Component: policyv1alpha1.Registry, Operator: policyv1alpha1.OverriderOpReplace, Value: "registry.example"}},
		CommandOverrider:     []policyv1alpha1.CommandArgsOverrider{{ContainerName: "nginx", Operator: policyv1alpha1.OverriderOpAdd, Value: []string{"--debug"}}},
		ArgsOverrider:        []policyv1alpha1.CommandArgsOverrider{{ContainerName: "nginx", Operator: policyv1alpha1.OverriderOpRemove, Value: []string{"--quiet"}}},
		LabelsOverrider:      []policyv1alpha1.LabelAnnotationOverrider{{Operator: policyv1alpha1.OverriderOpAdd, Value: map[string]string{"cluster": "member1"}}},
		AnnotationsOverrider: []policyv1alpha1.LabelAnnotationOverrider{{Operator: policyv1alpha1.OverriderOpRemove, Value: map[string]string{"note": ""}}},
		FieldOverrider: []policyv1alpha1.FieldOverrider{{
			FieldPath: "/data/config.json",
			JSON:      []policyv1alpha1.PatchOperation{{SubPath: "/db/host", Operator: policyv1alpha1.OverriderOpReplace, Value: apiextensionsv1.JSON{Raw: []byte(`{"name":"db","port":5432}`)}}},
		}, {
			FieldPath: "/data/config.yaml",
			YAML:      []policyv1alpha1.PatchOperation{{SubPath: "/log/level", Operator: policyv1alpha1.OverriderOpAdd, Value: apiextensionsv1.JSON{Raw: []byte(`"debug"`)}}},
		}},
	}
}

// overrideSpec is valid for a policy in namespace: with rules, or (byRules
// false) with the older targetCluster and overriders, which may not go with
// rules.
func overrideSpec(namespace string, byRules bool) policyv1alpha1.OverrideSpec {
	a := affinity()
	spec := policyv1alpha1.OverrideSpec{
		ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "nginx", Namespace: namespace}},
	}
	if byRules {
		spec.OverrideRules = []policyv1alpha1.RuleWithCluster{{TargetCluster: &a, Overriders: overriders()}}
	} else {
		spec.TargetCluster, spec.Overriders = &a, overriders()
	}
	return spec
}

func bindingSpec(namespace string) workv1alpha2.ResourceBindingSpec {
	p := placement()
	now := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	req := &workv1alpha2.ReplicaRequirements{
		NodeClaim: &workv1alpha2.NodeClaim{
			HardNodeAffinity: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}},
				MatchFields:      []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpNotIn, Values: []string{"n1"}}},
			}}},
			NodeSelector: map[string]string{"disk": "ssd"},
			Tolerations:  []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpEqual, Value: "true", Effect: corev1.TaintEffectNoSchedule}},
		},
		ResourceRequest:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
		Namespace:         namespace,
		PriorityClassName: "high",
	}
	return workv1alpha2.ResourceBindingSpec{
		Resource:            workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: namespace, Name: "nginx", UID: "6b1f5c9e-0000-4000-8000-000000000001", ResourceVersion: "42"},
		PropagateDeps:       true,
		ReplicaRequirements: req,
		Replicas:            4,
		Components: []workv1alpha2.Component{{Name: "worker", Replicas: 2, ReplicaRequirements: &workv1alpha2.ComponentReplicaRequirements{
			NodeClaim: req.NodeClaim, ResourceRequest: req.ResourceRequest, PriorityClassName: "high",
		}}},
		Clusters:  []workv1alpha2.TargetCluster{{Name: "member1", Replicas: 3, Components: []workv1alpha2.ComponentReplicas{{Name: "worker", Replicas: 1}}}, {Name: "member2", Replicas: 1}},
		Placement: &p,
		GracefulEvictionTasks: []workv1alpha2.GracefulEvictionTask{{
			FromCluster: "member3", PurgeMode: policyv1alpha1.PurgeModeGracefully, Replicas: ptr.To[int32](1), Reason: "TaintUntolerated",
			Message: "cluster not ready", Producer: "taint-manager", GracePeriodSeconds: ptr.To[int32](60), SuppressDeletion: ptr.To(false),
			PreservedLabelState: map[string]string{"app.io/replicas": "3"}, ClustersBeforeFailover: []string{"member3"}, CreationTimestamp: &now,
		}},
		RequiredBy:                  []workv1alpha2.BindingSnapshot{{Namespace: namespace, Name: "web-deployment", Clusters: []workv1alpha2.TargetCluster{{Name: "member1", Replicas: 2}}}},
		SchedulerName:               "default-scheduler",
		Failover:                    failover(),
		ConflictResolution:          policyv1alpha1.ConflictOverwrite,
		RescheduleTriggeredAt:       &now,
		Suspension:                  &workv1alpha2.Suspension{Suspension: policyv1alpha1.Suspension{Dispatching: ptr.To(true)}, Scheduling: ptr.To(false)},
		PreserveResourcesOnDeletion: ptr.To(false),
		SchedulePriority:            &workv1alpha2.SchedulePriority{Priority: 7},
		WorkloadAffinityGroups:      &workv1alpha2.WorkloadAffinityGroups{AffinityGroup: "g1", AntiAffinityGroup: "g2"},
	}
}

// CoreObjects returns one fully populated object of each of the 8 core kinds,
// the namespaced ones in namespace; each is valid, as karmada-webhook
// checks, and every field is set in at least one of them. Names carry suffix so that several sets
// can coexist.
func CoreObjects(namespace, suffix string) []client.Object {
	n := func(s string) string { return s + suffix }
	manifest := runtime.RawExtension{Raw: []byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"nginx","namespace":"default"},"spec":{"replicas":1}}`)}
	return []client.Object{
		&clusterv1alpha1.Cluster{
			ObjectMeta: metav1.ObjectMeta{Name: n("cluster")},
			Spec: clusterv1alpha1.ClusterSpec{
				ID: "b7c0c0de-0000-4000-8000-000000000002", SyncMode: clusterv1alpha1.Push, APIEndpoint: "https://127.0.0.1:6443",
				SecretRef:                   &clusterv1alpha1.LocalSecretReference{Namespace: "karmada-cluster", Name: "member1"},
				ImpersonatorSecretRef:       &clusterv1alpha1.LocalSecretReference{Namespace: "karmada-cluster", Name: "member1-impersonator"},
				InsecureSkipTLSVerification: true, ProxyURL: "socks5://127.0.0.1:1080", ProxyHeader: map[string]string{"X-Team": "platform"},
				Provider: "aws", Region: "us-east-1", Zone: "us-east-1a", Zones: []string{"us-east-1a", "us-east-1b"},
				Taints: []corev1.Taint{{Key: "cluster.karmada.io/not-ready", Effect: corev1.TaintEffectNoSchedule}},
				ResourceModels: []clusterv1alpha1.ResourceModel{
					{Grade: 1, Ranges: []clusterv1alpha1.ResourceModelRange{{Name: corev1.ResourceCPU, Min: resource.MustParse("0"), Max: resource.MustParse("4")}}},
					{Grade: 2, Ranges: []clusterv1alpha1.ResourceModelRange{{Name: corev1.ResourceCPU, Min: resource.MustParse("4"), Max: *resource.NewQuantity(math.MaxInt64, resource.DecimalSI)}}},
				},
			},
		},
		&policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Name: n("pp"), Namespace: namespace}, Spec: propagationSpec(namespace, placement())},
		&policyv1alpha1.ClusterPropagationPolicy{ObjectMeta: metav1.ObjectMeta{Name: n("cpp")}, Spec: propagationSpec("default", placementByAffinity())},
		&policyv1alpha1.OverridePolicy{ObjectMeta: metav1.ObjectMeta{Name: n("op"), Namespace: namespace}, Spec: overrideSpec(namespace, true)},
		&policyv1alpha1.ClusterOverridePolicy{ObjectMeta: metav1.ObjectMeta{Name: n("cop")}, Spec: overrideSpec("default", false)},
		&workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Name: n("nginx-deployment"), Namespace: namespace}, Spec: bindingSpec(namespace)},
		&workv1alpha2.ClusterResourceBinding{ObjectMeta: metav1.ObjectMeta{Name: n("crb")}, Spec: bindingSpec("")},
		&workv1alpha1.Work{
			ObjectMeta: metav1.ObjectMeta{Name: n("nginx-work"), Namespace: namespace},
			Spec: workv1alpha1.WorkSpec{
				Workload:                    workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{{RawExtension: manifest}}},
				SuspendDispatching:          ptr.To(false),
				PreserveResourcesOnDeletion: ptr.To(true),
			},
		},
	}
}

// RoundTrip creates every object, reads it back, and fails the test when any
// field of the spec, as stored or as read while unchanged, differs from what
// was sent. The objects are deleted when
// the test ends, so that they do not act on a live control plane.
func RoundTrip(ctx context.Context, t *testing.T, c client.Client, objs []client.Object) {
	t.Helper()
	for _, want := range objs {
		sent := want.DeepCopyObject().(client.Object)
		if err := c.Create(ctx, want); err != nil {
			t.Fatalf("creating %T %s: %v", want, want.GetName(), err)
		}
		t.Cleanup(func() {
			if err := c.Delete(context.Background(), sent.DeepCopyObject().(client.Object)); client.IgnoreNotFound(err) != nil {
				t.Errorf("deleting %T %s: %v", sent, sent.GetName(), err)
			}
		})
		// The create response is what the API server stored.
		if diff := cmp.Diff(specOf(sent), specOf(want)); diff != "" {
			t.Errorf("%T %s changed on the way into the API server (-sent +stored):\n%s", sent, sent.GetName(), diff)
		}
		got := sent.DeepCopyObject().(client.Object)
		if err := c.Get(ctx, client.ObjectKeyFromObject(sent), got); err != nil {
			t.Fatalf("reading back %T %s: %v", sent, sent.GetName(), err)
		}
		// Against a running fleet a controller may already have acted on
		// the object (the gracefulEviction controller may end the binding's
		// eviction task); only an unchanged object must read back as sent.
		if got.GetResourceVersion() != want.GetResourceVersion() {
			continue
		}
		if diff := cmp.Diff(specOf(sent), specOf(got)); diff != "" {
			t.Errorf("%T %s changed on the way through the API server (-sent +read):\n%s", sent, sent.GetName(), diff)
		}
	}
}

// specOf returns the spec of a core object as unstructured JSON data, so that
// comparisons are by wire content.
func specOf(obj client.Object) any {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		panic(fmt.Sprintf("converting %T: %v", obj, err))
	}
	return u["spec"]
}
