//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/karmada-go/karmada/api/apps/v1alpha1"
	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/names"
	"github.com/karmada-go/karmada/internal/scheme"
	"github.com/karmada-go/karmada/internal/testenv"
)

// The checks of this file are behaviours found different when Karmada
// v1.19's own e2e checks were run against a default fleet.

var allMembers = []string{"member1", "member2", "member3"}

// clusterPolicy is a ClusterPropagationPolicy of the selectors.
func clusterPolicy(name string, placement policyv1alpha1.Placement, selectors ...policyv1alpha1.ResourceSelector) *policyv1alpha1.ClusterPropagationPolicy {
	return &policyv1alpha1.ClusterPropagationPolicy{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: policyv1alpha1.PropagationSpec{ResourceSelectors: selectors, Placement: placement}}
}

// namespacedPolicy is a PropagationPolicy in default of the selectors.
func namespacedPolicy(name string, placement policyv1alpha1.Placement, selectors ...policyv1alpha1.ResourceSelector) *policyv1alpha1.PropagationPolicy {
	return &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: policyv1alpha1.PropagationSpec{ResourceSelectors: selectors, Placement: placement}}
}

// createUntilCleanup creates the objects and deletes them when the test ends.
func createUntilCleanup(ctx context.Context, t *testing.T, c client.Client, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := c.Create(ctx, o); err != nil {
			t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
	t.Cleanup(func() { deleteAll(t, c, objs...) })
}

// inMembers waits until get finds the object in every member named, or
// (present false) in none of them.
func inMembers(t *testing.T, what string, members []string, present bool, get func(ctx context.Context, kc kubernetes.Interface) error) {
	t.Helper()
	testenv.Eventually(t, 60*time.Second, fmt.Sprintf("%s present=%t in %v", what, present, members), func(ctx context.Context) error {
		for _, m := range members {
			err := get(ctx, kube(t, m))
			if present && err != nil {
				return fmt.Errorf("%s: %w", m, err)
			}
			if !present && !apierrors.IsNotFound(err) {
				return fmt.Errorf("%s: still there (%v)", m, err)
			}
		}
		return nil
	})
}

// setClusterLabel sets (value "" removes) a label of a Cluster.
func setClusterLabel(ctx context.Context, t *testing.T, c client.Client, cluster, key, value string) {
	t.Helper()
	v := any(value)
	if value == "" {
		v = nil
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{key: v}}})
	if err := c.Patch(ctx, &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: cluster}}, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatalf("labelling cluster %s: %v", cluster, err)
	}
}

// Pods, Secrets, Roles, RoleBindings (granting view), ClusterRoles and a
// ClusterRoleBinding with a name like Karmada's own checks use reach every
// member of a default fleet, push and pull.
func TestDefaultKindsPropagate(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	suffix := rand.String(5)
	crb := "system:test.tt:crb-" + suffix
	objs := []client.Object{
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "probe-pod-" + suffix},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "pull-secret-" + suffix}, StringData: map[string]string{"k": "v"}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "reader-" + suffix},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list"}}}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "team-view-" + suffix},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"},
			Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: "team-a"}}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: crb}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: crb}, RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: crb}},
	}
	everywhere := policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: allMembers}}
	pp := namespacedPolicy("kinds-"+suffix, everywhere,
		policyv1alpha1.ResourceSelector{APIVersion: "v1", Kind: "Pod", Name: "probe-pod-" + suffix},
		policyv1alpha1.ResourceSelector{APIVersion: "v1", Kind: "Secret", Name: "pull-secret-" + suffix},
		policyv1alpha1.ResourceSelector{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role", Name: "reader-" + suffix},
		policyv1alpha1.ResourceSelector{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding", Name: "team-view-" + suffix})
	cpp := clusterPolicy("kinds-"+suffix, everywhere,
		policyv1alpha1.ResourceSelector{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: crb},
		policyv1alpha1.ResourceSelector{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding", Name: crb})
	createUntilCleanup(ctx, t, c, append([]client.Object{pp, cpp}, objs...)...)
	inMembers(t, "the Pod", allMembers, true, func(ctx context.Context, kc kubernetes.Interface) error {
		_, err := kc.CoreV1().Pods("default").Get(ctx, "probe-pod-"+suffix, metav1.GetOptions{})
		return err
	})
	inMembers(t, "the Secret", allMembers, true, func(ctx context.Context, kc kubernetes.Interface) error {
		s, err := kc.CoreV1().Secrets("default").Get(ctx, "pull-secret-"+suffix, metav1.GetOptions{})
		if err == nil && string(s.Data["k"]) != "v" {
			return fmt.Errorf("data %v", s.Data)
		}
		return err
	})
	inMembers(t, "the Role and the RoleBinding to view", allMembers, true, func(ctx context.Context, kc kubernetes.Interface) error {
		if _, err := kc.RbacV1().Roles("default").Get(ctx, "reader-"+suffix, metav1.GetOptions{}); err != nil {
			return err
		}
		_, err := kc.RbacV1().RoleBindings("default").Get(ctx, "team-view-"+suffix, metav1.GetOptions{})
		return err
	})
	inMembers(t, "the ClusterRole and ClusterRoleBinding "+crb, allMembers, true, func(ctx context.Context, kc kubernetes.Interface) error {
		if _, err := kc.RbacV1().ClusterRoles().Get(ctx, crb, metav1.GetOptions{}); err != nil {
			return err
		}
		_, err := kc.RbacV1().ClusterRoleBindings().Get(ctx, crb, metav1.GetOptions{})
		return err
	})
}

// A kind a member does not let Karmada write (a CRD group not granted) is
// reported on the Work, the binding and the Work's event with the command
// that grants it: join for the push members, register for the pull one.
func TestRefusedKindNamesTheGrant(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	const group = "refused.e2e.test"
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "gadgets." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group, Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "gadgets", Singular: "gadget", Kind: "Gadget", ListKind: "GadgetList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr.To(true)}}}},
		},
	}
	members := []string{"member1", "member3"}
	cpp := clusterPolicy("gadgets-crd", policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: members}},
		policyv1alpha1.ResourceSelector{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: crd.Name})
	// Registered first, so that it runs after the deletions below: the test
	// leaves no Gadget CRD behind, so that it can run again.
	t.Cleanup(func() {
		testenv.Eventually(t, 60*time.Second, "the Gadget CRD gone from the members", func(ctx context.Context) error {
			for _, m := range members {
				mc, err := client.New(restConfig(t, m), client.Options{Scheme: scheme.Scheme})
				if err != nil {
					return err
				}
				if err := mc.Get(ctx, client.ObjectKeyFromObject(crd), &apiextensionsv1.CustomResourceDefinition{}); !apierrors.IsNotFound(err) {
					return fmt.Errorf("%s: still there (%v)", m, err)
				}
			}
			return nil
		})
	})
	createUntilCleanup(ctx, t, c, cpp, crd)
	testenv.Eventually(t, 30*time.Second, "the Gadget CRD Established", func(ctx context.Context) error {
		got := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(crd), got); err != nil {
			return err
		}
		for _, cond := range got.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return nil
			}
		}
		return fmt.Errorf("conditions %+v", got.Status.Conditions)
	})
	gadget := &unstructured.Unstructured{Object: map[string]any{"apiVersion": group + "/v1", "kind": "Gadget",
		"metadata": map[string]any{"namespace": "default", "name": "g1"}, "spec": map[string]any{"size": 1}}}
	pp := namespacedPolicy("gadgets", policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: members}},
		policyv1alpha1.ResourceSelector{APIVersion: group + "/v1", Kind: "Gadget", Name: "g1"})
	createUntilCleanup(ctx, t, c, pp, gadget)

	want := map[string]string{
		"member1": "karmadactl join member1 --cluster-kubeconfig <kubeconfig of member1> --propagate-kinds=",
		"member3": "karmadactl register <control plane host:port> --cluster-name member3 --kubeconfig <kubeconfig of member3> --propagate-kinds=",
	}
	for m, cmd := range want {
		work := client.ObjectKey{Namespace: workv1alpha1.ExecutionNamespace(m), Name: names.WorkName("Gadget", "g1", "default")}
		testenv.Eventually(t, 60*time.Second, "the refusal on "+m+"'s Work", func(ctx context.Context) error {
			w := &workv1alpha1.Work{}
			if err := c.Get(ctx, work, w); err != nil {
				return err
			}
			cond := meta.FindStatusCondition(w.Status.Conditions, workv1alpha1.WorkApplied)
			if cond == nil || cond.Status != metav1.ConditionFalse || !strings.Contains(cond.Message, cmd) ||
				!strings.Contains(cond.Message, ",gadgets."+group) || !strings.Contains(cond.Message, "does not let Karmada write gadgets."+group) {
				return fmt.Errorf("Applied %+v", cond)
			}
			return nil
		})
		testenv.Eventually(t, 30*time.Second, "the Work's SyncFailed event in "+m, func(ctx context.Context) error {
			reasons, err := eventReasons(ctx, kube(t, "karmada-apiserver"), "Work", work.Namespace, work.Name)
			if err != nil {
				return err
			}
			if msg, ok := reasons["SyncFailed"]; !ok || !strings.Contains(msg, cmd) {
				return fmt.Errorf("events %v", reasons)
			}
			return nil
		})
	}
	testenv.Eventually(t, 30*time.Second, "the refusal on the binding", func(ctx context.Context) error {
		rb := &workv1alpha2.ResourceBinding{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: names.BindingName("Gadget", "g1")}, rb); err != nil {
			return err
		}
		found := 0
		for _, it := range rb.Status.AggregatedStatus {
			if !it.Applied && strings.Contains(it.AppliedMessage, want[it.ClusterName]) {
				found++
			}
		}
		if found != len(want) {
			return fmt.Errorf("aggregated status %+v", rb.Status.AggregatedStatus)
		}
		return nil
	})
}

// status.observedWorkloads lists the workloads in Karmada's order: by
// apiVersion, kind, namespace and name, whatever the spec's order.
func TestRebalancerReportsInKarmadasOrder(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	suffix := rand.String(5)
	a, b := "a-"+suffix, "b-"+suffix
	pp := namespacedPolicy("rebalanced-cms-"+suffix, policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}},
		policyv1alpha1.ResourceSelector{APIVersion: "v1", Kind: "ConfigMap", Name: a}, policyv1alpha1.ResourceSelector{APIVersion: "v1", Kind: "ConfigMap", Name: b})
	createUntilCleanup(ctx, t, c, pp,
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: a}}, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: b}})
	inMembers(t, "the ConfigMaps", []string{"member1"}, true, func(ctx context.Context, kc kubernetes.Interface) error {
		_, err := kc.CoreV1().ConfigMaps("default").Get(ctx, b, metav1.GetOptions{})
		return err
	})
	ref := func(apiVersion, kind, name string) appsv1alpha1.ObjectReference {
		return appsv1alpha1.ObjectReference{APIVersion: apiVersion, Kind: kind, Namespace: "default", Name: name}
	}
	wr := &appsv1alpha1.WorkloadRebalancer{ObjectMeta: metav1.ObjectMeta{Name: "e2e-order-" + suffix}, Spec: appsv1alpha1.WorkloadRebalancerSpec{
		Workloads: []appsv1alpha1.ObjectReference{ref("v1", "ConfigMap", b), ref("apps/v1", "Deployment", "missing-"+suffix), ref("v1", "ConfigMap", a)}}}
	createUntilCleanup(ctx, t, c, wr)
	want := []string{"apps/v1/Deployment/missing-" + suffix, "v1/ConfigMap/" + a, "v1/ConfigMap/" + b}
	testenv.Eventually(t, 30*time.Second, "every workload observed, in order", func(ctx context.Context) error {
		got := &appsv1alpha1.WorkloadRebalancer{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(wr), got); err != nil {
			return err
		}
		var order []string
		for _, o := range got.Status.ObservedWorkloads {
			if o.Result == "" {
				return fmt.Errorf("%s has no result yet", o.Workload.Name)
			}
			order = append(order, o.Workload.APIVersion+"/"+o.Workload.Kind+"/"+o.Workload.Name)
		}
		if strings.Join(order, " ") != strings.Join(want, " ") {
			return fmt.Errorf("observed %v, want %v", order, want)
		}
		return nil
	})
}

// A PropagationPolicy's name may be any valid object name, longer than a
// label value, as in Karmada.
func TestLongPolicyNamePropagates(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	name := "long-" + strings.Repeat("x", 64) + "-" + rand.String(5)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "long-policy-" + rand.String(5)}}
	pp := namespacedPolicy(name, policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}},
		policyv1alpha1.ResourceSelector{APIVersion: "v1", Kind: "ConfigMap", Name: cm.Name})
	createUntilCleanup(ctx, t, c, pp, cm)
	inMembers(t, "the ConfigMap of a policy named with 75 characters", []string{"member1"}, true, func(ctx context.Context, kc kubernetes.Interface) error {
		got, err := kc.CoreV1().ConfigMaps("default").Get(ctx, cm.Name, metav1.GetOptions{})
		if err == nil && got.Annotations[policyv1alpha1.PropagationPolicyNameAnnotation] != name {
			return fmt.Errorf("annotations %v", got.Annotations)
		}
		return err
	})
}

// A cluster whose labels stop matching a Duplicated policy's affinity loses
// the workload, and gets it back when they match again, for a
// PropagationPolicy and a ClusterPropagationPolicy alike; so do the last
// ones selected, with no cluster left to go to.
func TestClusterNoLongerSelectedIsLeft(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	key := "e2e-selected-" + rand.String(5)
	for _, m := range []string{"member1", "member2"} {
		setClusterLabel(ctx, t, c, m, key, "ok")
	}
	t.Cleanup(func() {
		for _, m := range []string{"member1", "member2"} {
			setClusterLabel(context.Background(), t, c, m, key, "")
		}
	})
	affinity := policyv1alpha1.Placement{
		ClusterAffinity:   &policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{key: "ok"}}},
		ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDuplicated},
	}
	d := deploymentNamed("selected-"+rand.String(5), 1)
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "e2e-selected-" + rand.String(5)}}
	createUntilCleanup(ctx, t, c,
		placementPolicy(d.Name, affinity), d,
		clusterPolicy(role.Name, affinity, policyv1alpha1.ResourceSelector{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: role.Name}), role)
	both := func(members []string, present bool) {
		t.Helper()
		inMembers(t, "the Deployment and the ClusterRole", members, present, func(ctx context.Context, kc kubernetes.Interface) error {
			if _, err := kc.AppsV1().Deployments("default").Get(ctx, d.Name, metav1.GetOptions{}); err != nil {
				return err
			}
			_, err := kc.RbacV1().ClusterRoles().Get(ctx, role.Name, metav1.GetOptions{})
			return err
		})
	}
	both([]string{"member1", "member2"}, true)
	setClusterLabel(ctx, t, c, "member2", key, "not-ok")
	both([]string{"member2"}, false)
	both([]string{"member1"}, true)
	setClusterLabel(ctx, t, c, "member2", key, "ok")
	both([]string{"member1", "member2"}, true)
	// Neither selected any more: the workload leaves both, as in Karmada
	// (a change of the selection, not a failure: the last copy is not
	// kept), and comes back when one matches again.
	setClusterLabel(ctx, t, c, "member1", key, "not-ok")
	setClusterLabel(ctx, t, c, "member2", key, "not-ok")
	both([]string{"member1", "member2"}, false)
	setClusterLabel(ctx, t, c, "member1", key, "ok")
	both([]string{"member1"}, true)
}

// Spread by cluster (exactly one) and by region (exactly two) places a
// duplicated workload in two regions, one cluster each, as Karmada does;
// narrowed to one region, on one cluster.
func TestSpreadByRegionWinsOverTheClusterBound(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	spread := func(regions int) []policyv1alpha1.SpreadConstraint {
		return []policyv1alpha1.SpreadConstraint{
			{SpreadByField: policyv1alpha1.SpreadByFieldCluster, MinGroups: 1, MaxGroups: 1},
			{SpreadByField: policyv1alpha1.SpreadByFieldRegion, MinGroups: regions, MaxGroups: regions},
		}
	}
	d := deploymentNamed("by-region-"+rand.String(5), 1)
	propagate(ctx, t, d, policyv1alpha1.Placement{SpreadConstraints: spread(2),
		ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDuplicated}})
	regionsOf := func(rb *workv1alpha2.ResourceBinding) map[string]bool {
		out := map[string]bool{}
		for name := range placed(rb) {
			out[getCluster(ctx, t, c, name).Spec.Region] = true
		}
		return out
	}
	rb := waitScheduled(ctx, t, d.Name, 0)
	if got := placed(rb); len(got) != 2 || len(regionsOf(rb)) != 2 {
		t.Fatalf("placed on %v in regions %v, want two clusters in two regions", got, regionsOf(rb))
	}
	pp := &policyv1alpha1.PropagationPolicy{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: d.Name}, pp); err != nil {
		t.Fatal(err)
	}
	pp.Spec.Placement.SpreadConstraints = spread(1)
	if err := c.Update(ctx, pp); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 60*time.Second, "one cluster", func(ctx context.Context) error {
		rb, err := getBinding(ctx, c, d.Name)
		if err != nil {
			return err
		}
		if len(rb.Spec.Clusters) != 1 {
			return fmt.Errorf("placed on %v", placed(rb))
		}
		return nil
	})
}

// A Job with a label-selected set of clusters and exactly two clusters goes
// to two of them as the template is (Duplicated), and a change of its
// parallelism reaches both.
func TestJobWithLabelAndGroupConstraints(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	key := "e2e-location-" + rand.String(5)
	for _, m := range allMembers {
		setClusterLabel(ctx, t, c, m, key, "CHN")
	}
	t.Cleanup(func() {
		for _, m := range allMembers {
			setClusterLabel(context.Background(), t, c, m, key, "")
		}
	})
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "grouped-" + rand.String(5)},
		Spec: batchv1.JobSpec{BackoffLimit: ptr.To[int32](4), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "pi", Image: "perl"}}}}}}
	pp := namespacedPolicy(job.Name, policyv1alpha1.Placement{
		ClusterAffinity:   &policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{key: "CHN"}}},
		SpreadConstraints: []policyv1alpha1.SpreadConstraint{{SpreadByField: policyv1alpha1.SpreadByFieldCluster, MinGroups: 2, MaxGroups: 2}},
	}, policyv1alpha1.ResourceSelector{APIVersion: "batch/v1", Kind: "Job", Name: job.Name})
	createUntilCleanup(ctx, t, c, pp, job)
	var targets []string
	testenv.Eventually(t, 60*time.Second, "the Job's binding on two clusters", func(ctx context.Context) error {
		rb := &workv1alpha2.ResourceBinding{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: names.BindingName("Job", job.Name)}, rb); err != nil {
			return err
		}
		if !meta.IsStatusConditionTrue(rb.Status.Conditions, workv1alpha2.Scheduled) || len(rb.Spec.Clusters) != 2 {
			return fmt.Errorf("clusters %v, conditions %+v", rb.Spec.Clusters, rb.Status.Conditions)
		}
		targets = nil
		for _, tc := range rb.Spec.Clusters {
			targets = append(targets, tc.Name)
		}
		return nil
	})
	inMembers(t, "the Job", targets, true, func(ctx context.Context, kc kubernetes.Interface) error {
		_, err := kc.BatchV1().Jobs("default").Get(ctx, job.Name, metav1.GetOptions{})
		return err
	})
	if err := c.Patch(ctx, job, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"parallelism":3}}`))); err != nil {
		t.Fatal(err)
	}
	inMembers(t, "the Job's new parallelism", targets, true, func(ctx context.Context, kc kubernetes.Interface) error {
		got, err := kc.BatchV1().Jobs("default").Get(ctx, job.Name, metav1.GetOptions{})
		if err == nil && ptr.Deref(got.Spec.Parallelism, 0) != 3 {
			return fmt.Errorf("parallelism %d", ptr.Deref(got.Spec.Parallelism, 0))
		}
		return err
	})
}

// Suspending dispatching on a ClusterPropagationPolicy shows on the binding
// and on the Work, found by the name Karmada v1.19 gives it, as Karmada
// shows it: spec.suspendDispatching and WorkDispatching False.
func TestClusterPolicySuspensionReachesTheWork(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "system:test-suspended-" + rand.String(5)}}
	cpp := clusterPolicy("suspended-"+rand.String(5), policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}},
		policyv1alpha1.ResourceSelector{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: role.Name})
	createUntilCleanup(ctx, t, c, cpp, role)
	inMembers(t, "the ClusterRole", []string{"member1"}, true, func(ctx context.Context, kc kubernetes.Interface) error {
		_, err := kc.RbacV1().ClusterRoles().Get(ctx, role.Name, metav1.GetOptions{})
		return err
	})
	if err := c.Patch(ctx, cpp, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"suspension":{"dispatching":true}}}`))); err != nil {
		t.Fatal(err)
	}
	work := client.ObjectKey{Namespace: workv1alpha1.ExecutionNamespace("member1"), Name: names.WorkName("ClusterRole", role.Name, "")}
	testenv.Eventually(t, 30*time.Second, "the suspension on the binding and on Work "+work.Name, func(ctx context.Context) error {
		crb := &workv1alpha2.ClusterResourceBinding{}
		if err := c.Get(ctx, client.ObjectKey{Name: names.BindingName("ClusterRole", role.Name)}, crb); err != nil {
			return err
		}
		if crb.Spec.Suspension == nil || !ptr.Deref(crb.Spec.Suspension.Dispatching, false) {
			return fmt.Errorf("binding suspension %+v", crb.Spec.Suspension)
		}
		w := &workv1alpha1.Work{}
		if err := c.Get(ctx, work, w); err != nil {
			return err
		}
		if !ptr.Deref(w.Spec.SuspendDispatching, false) || !meta.IsStatusConditionPresentAndEqual(w.Status.Conditions, workv1alpha1.WorkDispatching, metav1.ConditionFalse) {
			return fmt.Errorf("Work suspendDispatching %v, conditions %+v", w.Spec.SuspendDispatching, w.Status.Conditions)
		}
		return nil
	})
}
