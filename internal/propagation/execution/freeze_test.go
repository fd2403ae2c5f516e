package execution

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"

	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	"github.com/karmada-go/karmada/internal/clusters/clusterclient"
	"github.com/karmada-go/karmada/internal/testenv"
)

// A namespace about to be deleted is frozen: once the member's quota
// controller has set the count quota's status, the API server refuses every
// new object in it, so nothing created after Karmada looked is deleted
// with it. (This member runs no quota controller: the test sets the status
// as it would.)
func TestFreezeNamespace(t *testing.T) {
	member := testenv.StartMember(t)
	ctx := context.Background()
	kc := kubernetes.NewForConfigOrDie(member.Config)
	m := &clusterclient.Member{Name: "member1", Kube: kc}
	if _, err := kc.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "going"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	work := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-es-member1", Name: "going-ns"}}
	now := time.Now()

	if q, err := freezeNamespace(ctx, m, work, "going", now); err != errCounting || q != nil {
		t.Fatalf("first call: %v %v, want errCounting while the quota controller has not answered", q, err)
	}
	q, err := kc.CoreV1().ResourceQuotas("going").Get(ctx, CountQuotaName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []corev1.ResourceName{"count/configmaps", "count/secrets", "count/deployments.apps", "count/rolebindings.rbac.authorization.k8s.io"} {
		if v, ok := q.Spec.Hard[key]; !ok || !v.IsZero() {
			t.Errorf("the count quota's hard %s is %v (set %v), want 0", key, v, ok)
		}
	}
	if _, ok := q.Spec.Hard["count/events"]; ok {
		t.Errorf("the count quota freezes events: %v", q.Spec.Hard)
	}
	if q.Annotations[workv1alpha1.WorkNameAnnotation] != work.Name || q.Labels[workv1alpha1.ManagedLabel] != "true" {
		t.Errorf("the quota is not marked as the Work's: %v %v", q.Labels, q.Annotations)
	}
	if got, err := freezeNamespace(ctx, m, work, "going", now.Add(time.Second)); err != errCounting || got != nil {
		t.Fatalf("no status yet: %v %v, want errCounting", got, err)
	}
	if got, err := freezeNamespace(ctx, m, work, "going", now.Add(countWait+time.Minute)); err != nil || got != nil {
		t.Fatalf("no status past countWait: %v %v, want not frozen, no error", got, err)
	}

	// The quota controller answers: one Secret, nothing else.
	q.Status.Hard = q.Spec.Hard
	q.Status.Used = corev1.ResourceList{}
	for k := range q.Spec.Hard {
		q.Status.Used[k] = resource.MustParse("0")
	}
	q.Status.Used["count/secrets"] = resource.MustParse("1")
	if _, err := kc.CoreV1().ResourceQuotas("going").UpdateStatus(ctx, q, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := freezeNamespace(ctx, m, work, "going", now.Add(time.Second))
	if err != nil || got == nil {
		t.Fatalf("with the status: %v %v, want the quota", got, err)
	}
	held, unknown := countUnlisted(got, []unlistedKind{{Kind: "Secret", Resource: schema.GroupResource{Resource: "secrets"}}, {Kind: "Widget", Resource: schema.GroupResource{Group: "example.com", Resource: "widgets"}}})
	if len(held) != 1 || held[0] != "Secret ×1" || len(unknown) != 1 || unknown[0] != "Widget" {
		t.Errorf("counted held %v unknown %v, want [Secret ×1] and [Widget]", held, unknown)
	}
	// Frozen: the member's administrator cannot add an object that the
	// namespace's deletion would take with it.
	testenv.Eventually(t, 10*time.Second, "a new ConfigMap refused by the quota", func(ctx context.Context) error {
		_, err := kc.CoreV1().ConfigMaps("going").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "late"}}, metav1.CreateOptions{})
		if err == nil {
			_ = kc.CoreV1().ConfigMaps("going").Delete(ctx, "late", metav1.DeleteOptions{})
			return errors.New("the ConfigMap was created: the namespace is not frozen (yet)")
		}
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "quota") {
			t.Fatalf("creating in the frozen namespace: %v, want refused by the quota", err)
		}
		return nil
	})
	if err := removeCountQuota(ctx, m, work, "going"); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, "a ConfigMap accepted once the quota is removed", func(ctx context.Context) error {
		_, err := kc.CoreV1().ConfigMaps("going").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "after"}}, metav1.CreateOptions{})
		return err
	})
}

// A quota of the count quota's name that the member's administrators made
// is neither taken for the freeze nor removed.
func TestFreezeLeavesTheMembersOwnQuota(t *testing.T) {
	member := testenv.StartMember(t)
	ctx := context.Background()
	kc := kubernetes.NewForConfigOrDie(member.Config)
	m := &clusterclient.Member{Name: "member1", Kube: kc}
	if _, err := kc.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "theirs"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	theirs := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: "theirs", Name: CountQuotaName},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("5")}}}
	if _, err := kc.CoreV1().ResourceQuotas("theirs").Create(ctx, theirs, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	work := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-es-member1", Name: "theirs-ns"}}
	if q, err := freezeNamespace(ctx, m, work, "theirs", time.Now()); err != nil || q != nil {
		t.Fatalf("freezing with the member's own quota there: %v %v, want not frozen, no error", q, err)
	}
	if err := removeCountQuota(ctx, m, work, "theirs"); err != nil {
		t.Fatal(err)
	}
	q, err := kc.CoreV1().ResourceQuotas("theirs").Get(ctx, CountQuotaName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the member's own quota is gone: %v", err)
	}
	if want := resource.MustParse("5"); q.Spec.Hard.Pods().Cmp(want) != 0 || len(q.Spec.Hard) != 1 {
		t.Errorf("the member's own quota was changed: %v", q.Spec.Hard)
	}
}
