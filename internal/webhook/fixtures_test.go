package webhook

import (
	"encoding/json"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	configv1alpha1 "github.com/karmada-go/karmada/api/config/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
)

// Valid objects of every kind, with most fields set: each rule's test
// breaks one of them, and the fuzz tests start from them.

func validPP() *policyv1alpha1.PropagationPolicy {
	return &policyv1alpha1.PropagationPolicy{
		TypeMeta: metav1.TypeMeta{APIVersion: "policy.karmada.io/v1alpha1", Kind: "PropagationPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop",
			Labels: map[string]string{policyv1alpha1.PropagationPolicyPermanentIDLabel: "8c4c3f2e-1111-4000-8000-000000000001"}},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{
				{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web"},
				{APIVersion: "v1", Kind: "ConfigMap", Name: "web-config", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
			},
			PropagateDeps: true,
			Placement: policyv1alpha1.Placement{
				ClusterAffinities: []policyv1alpha1.ClusterAffinityTerm{
					{AffinityName: "primary", ClusterAffinity: policyv1alpha1.ClusterAffinity{
						ClusterNames: []string{"member1", "member2"},
						FieldSelector: &policyv1alpha1.FieldSelector{MatchExpressions: []corev1.NodeSelectorRequirement{
							{Key: "region", Operator: corev1.NodeSelectorOpIn, Values: []string{"eu-west-1"}}}},
					}},
					{AffinityName: "backup", ClusterAffinity: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member3"}}},
				},
				ClusterTolerations: []corev1.Toleration{{Key: "cluster.karmada.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](30)}},
				SpreadConstraints: []policyv1alpha1.SpreadConstraint{
					{SpreadByField: policyv1alpha1.SpreadByFieldCluster, MinGroups: 1, MaxGroups: 2},
					{SpreadByField: policyv1alpha1.SpreadByFieldRegion, MinGroups: 1, MaxGroups: 1},
				},
				ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{
					ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided, ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted,
					WeightPreference: &policyv1alpha1.ClusterPreferences{StaticWeightList: []policyv1alpha1.StaticClusterWeight{
						{TargetCluster: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}, Weight: 2},
						{TargetCluster: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2"}}, Weight: 1},
					}},
				},
			},
			Priority:           ptr.To[int32](5),
			Preemption:         policyv1alpha1.PreemptAlways,
			DependentOverrides: []string{"web-op"},
			SchedulerName:      "default-scheduler",
			Failover: &policyv1alpha1.FailoverBehavior{Application: &policyv1alpha1.ApplicationFailoverBehavior{
				DecisionConditions: policyv1alpha1.DecisionConditions{TolerationSeconds: ptr.To[int32](300)},
				PurgeMode:          policyv1alpha1.PurgeModeGracefully, GracePeriodSeconds: ptr.To[int32](600),
				StatePreservation: &policyv1alpha1.StatePreservation{Rules: []policyv1alpha1.StatePreservationRule{{AliasLabelName: "app.io/replicas", JSONPath: "{.replicas}"}}},
			}},
			ConflictResolution: policyv1alpha1.ConflictAbort,
			Suspension:         &policyv1alpha1.Suspension{DispatchingOnClusters: &policyv1alpha1.SuspendClusters{ClusterNames: []string{"member3"}}},
			SchedulePriority:   &policyv1alpha1.SchedulePriority{PriorityClassSource: policyv1alpha1.KubePriorityClass, PriorityClassName: "high"},
		},
	}
}

func validCPP() *policyv1alpha1.ClusterPropagationPolicy {
	pp := validPP()
	pp.Spec.ResourceSelectors[0].Namespace = "any"
	return &policyv1alpha1.ClusterPropagationPolicy{
		TypeMeta: metav1.TypeMeta{APIVersion: "policy.karmada.io/v1alpha1", Kind: "ClusterPropagationPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: "all-web",
			Labels: map[string]string{policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel: "8c4c3f2e-1111-4000-8000-000000000002"}},
		Spec: pp.Spec,
	}
}

func rawJSON(s string) apiextensionsv1.JSON { return apiextensionsv1.JSON{Raw: []byte(s)} }

func validOP() *policyv1alpha1.OverridePolicy {
	return &policyv1alpha1.OverridePolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "policy.karmada.io/v1alpha1", Kind: "OverridePolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: "web-op", Namespace: "shop"},
		Spec: policyv1alpha1.OverrideSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web"}},
			OverrideRules: []policyv1alpha1.RuleWithCluster{{
				TargetCluster: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}},
				Overriders: policyv1alpha1.Overriders{
					Plaintext: []policyv1alpha1.PlaintextOverrider{{Path: "/spec/replicas", Operator: policyv1alpha1.OverriderOpReplace, Value: rawJSON(`3`)}},
					ImageOverrider: []policyv1alpha1.ImageOverrider{
						{Component: policyv1alpha1.Registry, Operator: policyv1alpha1.OverriderOpReplace, Value: "registry.example.com:5000"},
						{Predicate: &policyv1alpha1.ImagePredicate{Path: "/spec/template/spec/containers/0/image"}, Component: policyv1alpha1.Tag, Operator: policyv1alpha1.OverriderOpReplace, Value: "1.27.0"},
					},
					CommandOverrider:     []policyv1alpha1.CommandArgsOverrider{{ContainerName: "web", Operator: policyv1alpha1.OverriderOpAdd, Value: []string{"--debug"}}},
					ArgsOverrider:        []policyv1alpha1.CommandArgsOverrider{{ContainerName: "web", Operator: policyv1alpha1.OverriderOpRemove, Value: []string{"--quiet"}}},
					LabelsOverrider:      []policyv1alpha1.LabelAnnotationOverrider{{Operator: policyv1alpha1.OverriderOpAdd, Value: map[string]string{"cluster": "member1"}}},
					AnnotationsOverrider: []policyv1alpha1.LabelAnnotationOverrider{{Operator: policyv1alpha1.OverriderOpRemove, Value: map[string]string{"note": ""}}},
					FieldOverrider: []policyv1alpha1.FieldOverrider{{FieldPath: "/data/config.json",
						JSON: []policyv1alpha1.PatchOperation{{SubPath: "/db/host", Operator: policyv1alpha1.OverriderOpReplace, Value: rawJSON(`"db.member1"`)}}}},
				},
			}},
		},
	}
}

func validCOP() *policyv1alpha1.ClusterOverridePolicy {
	op := validOP()
	return &policyv1alpha1.ClusterOverridePolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "policy.karmada.io/v1alpha1", Kind: "ClusterOverridePolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: "all-op"},
		Spec:       op.Spec,
	}
}

func validRB() *workv1alpha2.ResourceBinding {
	return &workv1alpha2.ResourceBinding{
		TypeMeta: metav1.TypeMeta{APIVersion: "work.karmada.io/v1alpha2", Kind: "ResourceBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: "web-deployment", Namespace: "shop",
			Labels: map[string]string{workv1alpha2.ResourceBindingPermanentIDLabel: "8c4c3f2e-1111-4000-8000-000000000003"}},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource: workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web", UID: "u-1", ResourceVersion: "7"},
			Replicas: 3,
			ReplicaRequirements: &workv1alpha2.ReplicaRequirements{
				ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}, Namespace: "shop"},
			Clusters: []workv1alpha2.TargetCluster{{Name: "member1", Replicas: 2}, {Name: "member2", Replicas: 1}},
		},
	}
}

func validFRQ() *policyv1alpha1.FederatedResourceQuota {
	return &policyv1alpha1.FederatedResourceQuota{
		TypeMeta:   metav1.TypeMeta{APIVersion: "policy.karmada.io/v1alpha1", Kind: "FederatedResourceQuota"},
		ObjectMeta: metav1.ObjectMeta{Name: "team", Namespace: "shop"},
		Spec: policyv1alpha1.FederatedResourceQuotaSpec{
			Overall:           corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10")},
			StaticAssignments: []policyv1alpha1.StaticClusterAssignment{{ClusterName: "member1", Hard: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")}}},
		},
	}
}

func validCRB() *workv1alpha2.ClusterResourceBinding {
	rb := validRB()
	rb.Spec.Resource = workv1alpha2.ObjectReference{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: "reader"}
	return &workv1alpha2.ClusterResourceBinding{
		TypeMeta: metav1.TypeMeta{APIVersion: "work.karmada.io/v1alpha2", Kind: "ClusterResourceBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: "reader-clusterrole",
			Labels: map[string]string{workv1alpha2.ClusterResourceBindingPermanentIDLabel: "8c4c3f2e-1111-4000-8000-000000000004"}},
		Spec: rb.Spec,
	}
}

func validWork() *workv1alpha1.Work {
	return &workv1alpha1.Work{
		TypeMeta:   metav1.TypeMeta{APIVersion: "work.karmada.io/v1alpha1", Kind: "Work"},
		ObjectMeta: metav1.ObjectMeta{Name: "web-6c47d997fc", Namespace: "karmada-es-member1"},
		Spec: workv1alpha1.WorkSpec{Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{
			{RawExtension: runtime.RawExtension{Raw: []byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop"},"spec":{"replicas":2}}`)}},
		}}},
	}
}

func validCluster() *clusterv1alpha1.Cluster {
	return &clusterv1alpha1.Cluster{
		TypeMeta:   metav1.TypeMeta{APIVersion: "cluster.karmada.io/v1alpha1", Kind: "Cluster"},
		ObjectMeta: metav1.ObjectMeta{Name: "member1"},
		Spec: clusterv1alpha1.ClusterSpec{
			ID: "b7c0c0de-0000-4000-8000-000000000002", SyncMode: clusterv1alpha1.Push, APIEndpoint: "https://127.0.0.1:6443",
			SecretRef: &clusterv1alpha1.LocalSecretReference{Namespace: "karmada-cluster", Name: "member1"},
			ProxyURL:  "socks5://127.0.0.1:1080", Provider: "aws", Region: "eu-west-1", Zones: []string{"eu-west-1a"},
			Taints: []corev1.Taint{{Key: "cluster.karmada.io/not-ready", Effect: corev1.TaintEffectNoSchedule}},
			ResourceModels: []clusterv1alpha1.ResourceModel{
				{Grade: 0, Ranges: []clusterv1alpha1.ResourceModelRange{{Name: corev1.ResourceCPU, Min: resource.MustParse("0"), Max: resource.MustParse("4")}}},
				{Grade: 1, Ranges: []clusterv1alpha1.ResourceModelRange{{Name: corev1.ResourceCPU, Min: resource.MustParse("4"), Max: *resource.NewQuantity(1<<63-1, resource.DecimalSI)}}},
			},
		},
	}
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func validCTP() *policyv1alpha1.ClusterTaintPolicy {
	return &policyv1alpha1.ClusterTaintPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "policy.karmada.io/v1alpha1", Kind: "ClusterTaintPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: "detect-cluster-notready"},
		Spec: policyv1alpha1.ClusterTaintPolicySpec{
			TargetClusters:     &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1", "member2"}},
			AddOnConditions:    []policyv1alpha1.MatchCondition{{ConditionType: "Ready", Operator: policyv1alpha1.MatchConditionOpNotIn, StatusValues: []metav1.ConditionStatus{metav1.ConditionTrue}}},
			RemoveOnConditions: []policyv1alpha1.MatchCondition{{ConditionType: "Ready", Operator: policyv1alpha1.MatchConditionOpIn, StatusValues: []metav1.ConditionStatus{metav1.ConditionTrue}}},
			Taints:             []policyv1alpha1.Taint{{Key: "not-ready", Effect: corev1.TaintEffectNoSchedule}},
		},
	}
}

func validRIC() *configv1alpha1.ResourceInterpreterCustomization {
	return &configv1alpha1.ResourceInterpreterCustomization{
		TypeMeta:   metav1.TypeMeta{APIVersion: "config.karmada.io/v1alpha1", Kind: "ResourceInterpreterCustomization"},
		ObjectMeta: metav1.ObjectMeta{Name: "cloneset"},
		Spec: configv1alpha1.ResourceInterpreterCustomizationSpec{
			Target: configv1alpha1.CustomizationTarget{APIVersion: "apps.kruise.io/v1alpha1", Kind: "CloneSet"},
			Customizations: configv1alpha1.CustomizationRules{
				ReplicaRevision:      &configv1alpha1.ReplicaRevision{LuaScript: "function ReviseReplica(obj, n)\n  obj.spec.replicas = n\n  return obj\nend"},
				HealthInterpretation: &configv1alpha1.HealthInterpretation{LuaScript: "function InterpretHealth(obj) return true end"},
			},
		},
	}
}

func validRIWC() *configv1alpha1.ResourceInterpreterWebhookConfiguration {
	u := "https://127.0.0.1:8443/interpret"
	return &configv1alpha1.ResourceInterpreterWebhookConfiguration{
		TypeMeta:   metav1.TypeMeta{APIVersion: "config.karmada.io/v1alpha1", Kind: "ResourceInterpreterWebhookConfiguration"},
		ObjectMeta: metav1.ObjectMeta{Name: "workloads"},
		Webhooks: []configv1alpha1.ResourceInterpreterWebhook{{
			Name:         "workloads.example.com",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &u},
			Rules: []configv1alpha1.RuleWithOperations{{Operations: []configv1alpha1.InterpreterOperation{"InterpretReplica", "ReviseReplica"},
				Rule: configv1alpha1.Rule{APIGroups: []string{"workload.example.io"}, APIVersions: []string{"v1alpha1"}, Kinds: []string{"Workload"}}}},
			InterpreterContextVersions: []string{"v1alpha1"},
		}},
	}
}
