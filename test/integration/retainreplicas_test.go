package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	"github.com/karmada-go/karmada/internal/testenv"
)

// A Deployment marked resourcetemplate.karmada.io/retain-replicas keeps the
// replicas the member decides (its HPA, here the test writing the scale
// subresource) while the Work's replicas change at the same time, round
// after round: each apply keeps the copy's replicas and is made over the
// version it read them from (a scale in between is a conflict, and the
// copy is read again), and the copy ends at the member's last count.
// (The race of a cache behind the member is not forced here: the version
// precondition is what closes it, checked in TestRetainReplicas.)
func TestRetainedReplicasNeverOverwriteTheMembers(t *testing.T) {
	t.Parallel()
	plane := testenv.Start(t)
	ctx := context.Background()
	member := pushMember(ctx, t, plane)
	c, mc := plane.Client, member.Client
	runMemberControllers(t, plane)
	createNamespace(ctx, t, mc, "shop")
	manifest := func(replicas int32) workv1alpha1.Manifest {
		d := &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
			ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", Labels: map[string]string{policyv1alpha1.RetainReplicasLabel: policyv1alpha1.RetainReplicasValue}},
			Spec: appsv1.DeploymentSpec{Replicas: ptr.To(replicas), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}}}}}
		raw, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		return workv1alpha1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}}
	}
	w := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: workv1alpha1.ExecutionNamespace("member1"), Name: "web"},
		Spec: workv1alpha1.WorkSpec{Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{manifest(1)}}}}
	if err := c.Create(ctx, w); err != nil {
		t.Fatal(err)
	}
	copyReplicas := func(ctx context.Context) (int32, error) {
		d := &appsv1.Deployment{}
		if err := mc.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "web"}, d); err != nil {
			return 0, err
		}
		return ptr.Deref(d.Spec.Replicas, 1), nil
	}
	testenv.Eventually(t, deadline, "the copy created with the Work's replicas", func(ctx context.Context) error {
		if n, err := copyReplicas(ctx); err != nil || n != 1 {
			return fmt.Errorf("replicas %d (%v)", n, err)
		}
		return nil
	})
	kc := kubernetes.NewForConfigOrDie(member.Config)
	scale := func(n int32) {
		t.Helper()
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			_, err := kc.AppsV1().Deployments("shop").UpdateScale(ctx, "web",
				&autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}, Spec: autoscalingv1.ScaleSpec{Replicas: n}},
				metav1.UpdateOptions{FieldManager: "horizontal-pod-autoscaler"})
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	setWork := func(n int32) {
		t.Helper()
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			if err := c.Get(ctx, client.ObjectKeyFromObject(w), w); err != nil {
				return err
			}
			w.Spec.Workload.Manifests = []workv1alpha1.Manifest{manifest(n)}
			return c.Update(ctx, w)
		}); err != nil {
			t.Fatal(err)
		}
	}
	// Each round the member scales and the Work changes in the same
	// instant, the member's scale last: the copy ends at the member's.
	var last int32
	for round := int32(0); round < 30; round++ {
		setWork(100 + round)
		last = 2 + round%7
		scale(last)
	}
	testenv.Eventually(t, deadline, "the Work's last generation applied", func(ctx context.Context) error {
		got, cond, err := appliedCondition(ctx, c, client.ObjectKeyFromObject(w))
		if err != nil {
			return err
		}
		d := &appsv1.Deployment{}
		if err := mc.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "web"}, d); err != nil {
			return err
		}
		if cond == nil || cond.Status != metav1.ConditionTrue || d.Annotations[workv1alpha1.WorkGenerationAnnotation] != fmt.Sprint(got.Generation) {
			return fmt.Errorf("Applied %+v, copy at Work generation %s of %d", cond, d.Annotations[workv1alpha1.WorkGenerationAnnotation], got.Generation)
		}
		return nil
	})
	testenv.Consistently(t, 3*time.Second, "the copy at the member's last scale", func(ctx context.Context) error {
		if n, err := copyReplicas(ctx); err != nil || n != last {
			return fmt.Errorf("replicas %d, want the member's %d (%v)", n, last, err)
		}
		return nil
	})
}
