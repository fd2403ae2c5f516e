//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1alpha1 "github.com/karmada-go/karmada/api/autoscaling/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	"github.com/karmada-go/karmada/internal/testenv"
)

// webDeployment is a Deployment of replicas pods in namespace ns.
func webDeployment(ns string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": "web"}
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To(replicas), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "web:e2e"}}}}}}
}

// memberReplicas is the spec.replicas of the member's copy of ns/web.
func memberReplicas(ctx context.Context, t *testing.T, member, ns string) (int32, error) {
	d, err := kube(t, member).AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		return 0, err
	}
	return ptr.Deref(d.Spec.Replicas, 1), nil
}

// A CronFederatedHPA's every-minute rule scales the template (and so its
// copy in member1) and records the execution; karmada-webhook refuses a
// bad rule with its field path.
func TestCronFederatedHPAScalesOnSchedule(t *testing.T) {
	quiet(t)
	ctx := context.Background()
	c := karmadaClient(t)
	const ns = "e2e-cron"
	createNamespaceUntilCleanup(ctx, t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	pp := &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: policyv1alpha1.PropagationSpec{ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}},
			Placement: policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}}}}
	cron := &autoscalingv1alpha1.CronFederatedHPA{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: autoscalingv1alpha1.CronFederatedHPASpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			Rules:          []autoscalingv1alpha1.CronFederatedHPARule{{Name: "every-minute", Schedule: "* * * * *", TargetReplicas: ptr.To[int32](3), TimeZone: ptr.To("Asia/Tokyo")}}}}
	bad := cron.DeepCopy()
	bad.Name = "bad"
	bad.Spec.Rules[0].Schedule = "every minute"
	err := c.Create(ctx, bad)
	if !apierrors.IsInvalid(err) && !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `spec.rules[0].schedule: Invalid value: "every minute": invalid cron format`) {
		t.Errorf("a bad schedule: %v, want refused with its field path", err)
	}
	createUntilCleanup(ctx, t, c, webDeployment(ns, 1), pp, cron)
	// A CronFederatedHPA reaches only its own namespace: one in another
	// namespace, aiming at web (which that namespace does not have), fails
	// and leaves e2e-cron's web alone.
	const other = "e2e-cron-other"
	createNamespaceUntilCleanup(ctx, t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: other}})
	intruder := cron.DeepCopy()
	intruder.Namespace, intruder.ResourceVersion, intruder.UID = other, "", ""
	intruder.Spec.Rules[0].TargetReplicas = ptr.To[int32](9)
	createUntilCleanup(ctx, t, c, intruder)
	testenv.Eventually(t, 100*time.Second, "the other namespace's rule failed", func(ctx context.Context) error {
		got := &autoscalingv1alpha1.CronFederatedHPA{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(intruder), got); err != nil {
			return err
		}
		if h := got.Status.ExecutionHistories; len(h) != 1 || len(h[0].FailedExecutions) == 0 || !strings.Contains(h[0].FailedExecutions[0].Message, "not found") {
			return fmt.Errorf("histories %+v", h)
		}
		return nil
	})
	testenv.Eventually(t, 100*time.Second, "the rule run and recorded, member1 at 3", func(ctx context.Context) error {
		got := &autoscalingv1alpha1.CronFederatedHPA{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(cron), got); err != nil {
			return err
		}
		h := got.Status.ExecutionHistories
		if len(h) != 1 || len(h[0].SuccessfulExecutions) == 0 {
			return fmt.Errorf("histories %+v", h)
		}
		s := h[0].SuccessfulExecutions[0]
		if ptr.Deref(s.AppliedReplicas, 0) != 3 || s.ScheduleTime == nil || s.ScheduleTime.Second() != 0 || h[0].NextExecutionTime == nil ||
			!h[0].NextExecutionTime.After(s.ScheduleTime.Time) {
			return fmt.Errorf("execution %+v, next %v", s, h[0].NextExecutionTime)
		}
		d := &appsv1.Deployment{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, d); err != nil || ptr.Deref(d.Spec.Replicas, 1) != 3 {
			return fmt.Errorf("the template: %v (err %v)", d.Spec.Replicas, err)
		}
		if n, err := memberReplicas(ctx, t, "member1", ns); err != nil || n != 3 {
			return fmt.Errorf("member1: %d (err %v)", n, err)
		}
		return nil
	})
}

// The native-HPA path: an HPA propagated with its Deployment marks the
// template retain-replicas (hpaScaleTargetMarker); each member's HPA
// scales its copy to its minReplicas (3) and the copies keep what the
// members decide; deploymentReplicasSyncer writes their sum (6) into the
// template.
func TestNativeHPARetainsMemberReplicas(t *testing.T) {
	quiet(t)
	ctx := context.Background()
	c := karmadaClient(t)
	const ns = "e2e-native-hpa"
	createNamespaceUntilCleanup(ctx, t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	two := []string{"member1", "member2"}
	divided := &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: policyv1alpha1.PropagationSpec{ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}},
			Placement: policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: two},
				ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided,
					ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted,
					WeightPreference: &policyv1alpha1.ClusterPreferences{StaticWeightList: []policyv1alpha1.StaticClusterWeight{
						{TargetCluster: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}, Weight: 1},
						{TargetCluster: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2"}}, Weight: 1}}}}}}}
	hpa := &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MinReplicas: ptr.To[int32](3), MaxReplicas: 5,
			Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU,
				Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](50)}}}}}}
	duplicated := &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-hpa"},
		Spec: policyv1alpha1.PropagationSpec{ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler", Name: "web"}},
			Placement: policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: two}}}}
	createUntilCleanup(ctx, t, c, webDeployment(ns, 2), divided, hpa, duplicated)

	testenv.Eventually(t, 120*time.Second, "the template marked, each member at its HPA's 3, the template at their sum", func(ctx context.Context) error {
		d := &appsv1.Deployment{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, d); err != nil {
			return err
		}
		if d.Labels[policyv1alpha1.RetainReplicasLabel] != "true" {
			return fmt.Errorf("template labels %v", d.Labels)
		}
		for _, m := range two {
			if n, err := memberReplicas(ctx, t, m, ns); err != nil || n != 3 {
				return fmt.Errorf("%s: %d (err %v)", m, n, err)
			}
			// The label travels with the manifest, as in Karmada: the
			// execution controller reads it there to keep the member's
			// replicas.
			md, err := kube(t, m).AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
			if err != nil || md.Labels[policyv1alpha1.RetainReplicasLabel] != "true" {
				return fmt.Errorf("%s's copy: labels %v (err %v)", m, md.GetLabels(), err)
			}
		}
		if r := ptr.Deref(d.Spec.Replicas, 1); r != 6 {
			return fmt.Errorf("template replicas %d, want 6", r)
		}
		return nil
	})
	// The members' replicas hold: Karmada does not push the template's
	// division back over them.
	testenv.Consistently(t, 5*time.Second, "members stay at 3", func(ctx context.Context) error {
		for _, m := range two {
			d, err := kube(t, m).AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
			if err != nil {
				return fmt.Errorf("%s: %w", m, err)
			}
			if n := ptr.Deref(d.Spec.Replicas, 1); n != 3 {
				// Who wrote the replicas, and when.
				var writers []string
				for _, f := range d.ManagedFields {
					writers = append(writers, fmt.Sprintf("%s %s %s %s", f.Manager, f.Operation, f.Subresource, f.Time))
				}
				return fmt.Errorf("%s: %d replicas (resourceVersion %s, generation %d, written by %v)", m, n, d.ResourceVersion, d.Generation, writers)
			}
		}
		return nil
	})
	// Nothing ever scaled a copy back below its HPA's minimum (a manifest
	// without the label once put the template's division over the HPA's 3).
	for _, m := range two {
		evs, err := kube(t, m).CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "reason=ScalingReplicaSet"})
		if err != nil {
			t.Fatalf("%s: events: %v", m, err)
		}
		for _, e := range evs.Items {
			if strings.HasPrefix(e.Message, "Scaled down") {
				t.Errorf("%s: %s (%d times, last %v)", m, e.Message, e.Count, e.LastTimestamp)
			}
		}
	}
	// The HPA goes: so does the mark.
	deleteAll(t, c, hpa)
	testenv.Eventually(t, 30*time.Second, "the mark removed", func(ctx context.Context) error {
		d := &appsv1.Deployment{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, d); err != nil {
			return err
		}
		if _, ok := d.Labels[policyv1alpha1.RetainReplicasLabel]; ok {
			return fmt.Errorf("template labels %v", d.Labels)
		}
		return nil
	})
}

// webDividedOverTwo is web (2 replicas asking 100m cpu each) and a policy
// dividing it equally over member1 and member2.
func webDividedOverTwo(ns string) (*appsv1.Deployment, *policyv1alpha1.PropagationPolicy) {
	pp := &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: policyv1alpha1.PropagationSpec{ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}},
			Placement: policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1", "member2"}},
				ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided,
					ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted,
					WeightPreference: &policyv1alpha1.ClusterPreferences{StaticWeightList: []policyv1alpha1.StaticClusterWeight{
						{TargetCluster: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}, Weight: 1},
						{TargetCluster: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2"}}, Weight: 1}}}}}}}
	d := webDeployment(ns, 2)
	d.Spec.Template.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}
	return d, pp
}

// A FederatedHPA over a Deployment divided over member1 and member2: the
// controller reads the members' scale and pods through its member
// clients and raises the template to minReplicas (the scheduler divides
// the 4 over both members, with the HPA's event); then it reads the idle
// pods' metrics from the members and holds the minimum.
func TestFederatedHPAScalesToItsBounds(t *testing.T) {
	quiet(t)
	ctx := context.Background()
	c := karmadaClient(t)
	const ns = "e2e-fhpa"
	createNamespaceUntilCleanup(ctx, t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	d, pp := webDividedOverTwo(ns)
	f := &autoscalingv1alpha1.FederatedHPA{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: autoscalingv1alpha1.FederatedHPASpec{ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MinReplicas: ptr.To(int32(4)), MaxReplicas: 6,
			Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU,
				Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To(int32(50))}}}}}}
	createUntilCleanup(ctx, t, c, d, pp)
	testenv.Eventually(t, 60*time.Second, "web in both members", func(ctx context.Context) error {
		for _, m := range []string{"member1", "member2"} {
			if _, err := memberReplicas(ctx, t, m, ns); err != nil {
				return fmt.Errorf("%s: %w", m, err)
			}
		}
		return nil
	})
	createUntilCleanup(ctx, t, c, f)
	testenv.Eventually(t, 90*time.Second, "the template raised to minReplicas and divided 2+2", func(ctx context.Context) error {
		got := &appsv1.Deployment{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(d), got); err != nil {
			return err
		}
		if r := ptr.Deref(got.Spec.Replicas, 0); r != 4 {
			return fmt.Errorf("template replicas %d", r)
		}
		for _, m := range []string{"member1", "member2"} {
			if r, err := memberReplicas(ctx, t, m, ns); err != nil || r != 2 {
				return fmt.Errorf("%s: %d replicas (%v)", m, r, err)
			}
		}
		return nil
	})
	waitEventWith(ctx, t, "FederatedHPA", ns, "web", "SuccessfulRescale", "New size: 4; reason: Current number of replicas below Spec.MinReplicas")
	// Then the members' metrics: every pod idles at 1m (1 % of its
	// request), which asks for fewer replicas than minReplicas: 4 held.
	testenv.Eventually(t, 120*time.Second, "the members' metrics read and the minimum held", func(ctx context.Context) error {
		got := &autoscalingv1alpha1.FederatedHPA{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(f), got); err != nil {
			return err
		}
		for _, cond := range got.Status.Conditions {
			if cond.Type == autoscalingv2.ScalingActive && cond.Status == corev1.ConditionTrue && cond.Reason == "ValidMetricFound" &&
				got.Status.CurrentReplicas == 4 && got.Status.DesiredReplicas == 4 && len(got.Status.CurrentMetrics) == 1 {
				return nil
			}
		}
		return fmt.Errorf("status %+v", got.Status)
	})
	got := &appsv1.Deployment{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(d), got); err != nil || ptr.Deref(got.Spec.Replicas, 0) != 4 {
		t.Errorf("template replicas %d with idle pods (%v), want minReplicas 4 kept", ptr.Deref(got.Spec.Replicas, 0), err)
	}
}

// A FederatedHPA on real member metrics: each member's metrics-server
// serves kwok's emulated usage; a Deployment of 2 (100m each) divided over
// member1 and member2 scales up when `karmada-local usage set` raises its
// pods' cpu to 150m (150 % of a 50 % target) and back down to its minimum
// when the usage falls (a scale-down window of 0 s keeps the test short).
func TestFederatedHPAScalesWithMemberCPU(t *testing.T) {
	quiet(t)
	ctx := context.Background()
	c := karmadaClient(t)
	const ns = "e2e-fhpa-cpu"
	createNamespaceUntilCleanup(ctx, t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	d, pp := webDividedOverTwo(ns)
	f := &autoscalingv1alpha1.FederatedHPA{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: autoscalingv1alpha1.FederatedHPASpec{ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MinReplicas: ptr.To(int32(2)), MaxReplicas: 6,
			Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU,
				Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To(int32(50))}}}},
			// Only the window: karmada-webhook completes the behaviour.
			Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To(int32(0))}}}}
	createUntilCleanup(ctx, t, c, d, pp, f)
	templateAndMembers := func(want func(int32) bool, what string) {
		t.Helper()
		testenv.Eventually(t, 150*time.Second, what, func(ctx context.Context) error {
			got := &appsv1.Deployment{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(d), got); err != nil {
				return err
			}
			r := ptr.Deref(got.Spec.Replicas, 0)
			if !want(r) {
				return fmt.Errorf("template replicas %d", r)
			}
			var sum int32
			for _, m := range []string{"member1", "member2"} {
				n, err := memberReplicas(ctx, t, m, ns)
				if err != nil {
					return fmt.Errorf("%s: %w", m, err)
				}
				sum += n
			}
			if sum != r {
				return fmt.Errorf("members run %d of the template's %d", sum, r)
			}
			return nil
		})
	}
	templateAndMembers(func(r int32) bool { return r == 2 }, "web divided 1+1")
	testenv.Eventually(t, 60*time.Second, "web's pods in both members", func(ctx context.Context) error {
		for _, m := range []string{"member1", "member2"} {
			pods, err := kube(t, m).CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
			if err != nil || len(pods.Items) == 0 {
				return fmt.Errorf("%s: %d pods (%v)", m, len(pods.Items), err)
			}
		}
		return nil
	})
	if out, err := karmadaLocal("usage", "set", "-n", ns, "-l", "app=web", "--cpu", "150m"); err != nil {
		t.Fatalf("usage set: %v\n%s", err, out)
	}
	templateAndMembers(func(r int32) bool { return r > 2 }, "scaled up on 150% cpu")
	waitEventWith(ctx, t, "FederatedHPA", ns, "web", "SuccessfulRescale", "reason: cpu resource utilization (percentage of request) above target")
	if out, err := karmadaLocal("usage", "set", "-n", ns, "-l", "app=web", "--cpu", "5m"); err != nil {
		t.Fatalf("usage set: %v\n%s", err, out)
	}
	templateAndMembers(func(r int32) bool { return r == 2 }, "scaled back down to minReplicas")
	waitEventWith(ctx, t, "FederatedHPA", ns, "web", "SuccessfulRescale", "reason: All metrics below target")
}

// A FederatedHPA on a custom Pods metric, as Karmada's reads it: each push
// member's custom.metrics.k8s.io serves the value `karmada-local usage set
// --metric` gives its pods, the control plane's karmada-metrics-adapter
// lists both members' pods under custom.metrics.k8s.io, and the template
// scales up to its maximum when the metric is three times its target and
// back down to its minimum when it falls on every pod.
func TestFederatedHPAScalesOnACustomPodsMetric(t *testing.T) {
	quiet(t)
	ctx := context.Background()
	c := karmadaClient(t)
	const ns = "e2e-fhpa-custom"
	const metric = "requests_per_second"
	createNamespaceUntilCleanup(ctx, t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	d, pp := webDividedOverTwo(ns)
	f := &autoscalingv1alpha1.FederatedHPA{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: autoscalingv1alpha1.FederatedHPASpec{ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MinReplicas: ptr.To(int32(2)), MaxReplicas: 6,
			Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{
				Metric: autoscalingv2.MetricIdentifier{Name: metric},
				Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: resource.NewQuantity(10, resource.DecimalSI)}}}},
			Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To(int32(0))}}}}
	createUntilCleanup(ctx, t, c, d, pp)
	var pods []string
	testenv.Eventually(t, 90*time.Second, "web's pods in both members", func(ctx context.Context) error {
		pods = nil
		for _, m := range []string{"member1", "member2"} {
			list, err := kube(t, m).CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
			if err != nil || len(list.Items) != 1 {
				return fmt.Errorf("%s: %d pods (%v)", m, len(list.Items), err)
			}
			pods = append(pods, list.Items[0].Name)
		}
		return nil
	})
	if out, err := karmadaLocal("usage", "set", "-n", ns, "-l", "app=web", "--metric", metric+"=30"); err != nil {
		t.Fatalf("usage set: %v\n%s", err, out)
	}
	// The control plane's custom.metrics.k8s.io: both members' pods.
	rc := kube(t, "karmada-apiserver").Discovery().RESTClient()
	testenv.Eventually(t, 30*time.Second, "both members' pods in the control plane's custom.metrics.k8s.io", func(ctx context.Context) error {
		raw, err := rc.Get().AbsPath("/apis/custom.metrics.k8s.io/v1beta2/namespaces/"+ns+"/pods/*/"+metric).Param("labelSelector", "app=web").DoRaw(ctx)
		if err != nil {
			return err
		}
		for _, p := range pods {
			if !strings.Contains(string(raw), `"name":"`+p+`"`) {
				return fmt.Errorf("pod %s missing from %.400s", p, raw)
			}
		}
		if !strings.Contains(string(raw), `"value":"30"`) {
			return fmt.Errorf("no value 30 in %.400s", raw)
		}
		return nil
	})
	createUntilCleanup(ctx, t, c, f)
	template := func(want func(int32) bool, what string) {
		t.Helper()
		testenv.Eventually(t, 120*time.Second, what, func(ctx context.Context) error {
			got := &appsv1.Deployment{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(d), got); err != nil {
				return err
			}
			if r := ptr.Deref(got.Spec.Replicas, 0); !want(r) {
				return fmt.Errorf("template replicas %d", r)
			}
			return nil
		})
	}
	// 3 × the target over 2 pods: 6 (the default scale-up policy allows
	// +4 at once), the maximum.
	template(func(r int32) bool { return r == 6 }, "scaled up to 6 on 30 requests per second per pod (target 10)")
	waitEventWith(ctx, t, "FederatedHPA", ns, "web", "SuccessfulRescale", "New size: 6; reason: pods metric "+metric+" above target")
	// Every pod running before the metric falls, so that each reports it
	// (a pod without the metric counts at the target on a scale down, as
	// the HPA counts it, and holds the count up).
	testenv.Eventually(t, 90*time.Second, "6 pods running in the members", func(ctx context.Context) error {
		n := 0
		for _, m := range []string{"member1", "member2"} {
			list, err := kube(t, m).CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
			if err != nil {
				return err
			}
			for _, p := range list.Items {
				if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
					n++
				}
			}
		}
		if n != 6 {
			return fmt.Errorf("%d pods running", n)
		}
		return nil
	})
	got := &autoscalingv1alpha1.FederatedHPA{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(f), got); err != nil {
		t.Fatal(err)
	}
	if st := got.Status.CurrentMetrics; len(st) != 1 || st[0].Pods == nil || st[0].Pods.Metric.Name != metric {
		t.Errorf("current metrics %+v, want the pods metric", st)
	}
	if out, err := karmadaLocal("usage", "set", "-n", ns, "-l", "app=web", "--metric", metric+"=1"); err != nil {
		t.Fatalf("usage set: %v\n%s", err, out)
	}
	template(func(r int32) bool { return r == 2 }, "scaled back down to minReplicas")
	waitEventWith(ctx, t, "FederatedHPA", ns, "web", "SuccessfulRescale", "reason: All metrics below target")
}
