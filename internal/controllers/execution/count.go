package execution

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	"github.com/karmada-go/karmada/internal/clusterclient"
	"github.com/karmada-go/karmada/internal/reserved"
)

// CountQuotaName is the ResourceQuota Karmada puts into a member namespace
// it created and is about to delete, when it may not list some kinds there
// (Secrets, with the rights karmadactl join gives by default): the member's
// quota controller counts their objects for it, so the namespace is deleted
// only when it holds none.
const CountQuotaName = reserved.CountQuotaName

// countWait bounds the wait for the member's quota controller to count;
// after it, the kinds not counted are unknown and the namespace is released.
const countWait = 30 * time.Second

// unlimited is the hard limit of the count quota: it counts, it does not
// limit.
var unlimited = resource.MustParse("1G")

// unlistedKind is a kind the member identity may not list.
type unlistedKind struct {
	Kind     string
	Resource schema.GroupResource
}

func (u unlistedKind) quotaKey() corev1.ResourceName {
	if u.Resource.Group == "" {
		return corev1.ResourceName("count/" + u.Resource.Resource)
	}
	return corev1.ResourceName("count/" + u.Resource.Resource + "." + u.Resource.Group)
}

// errCounting says the member's quota controller has not counted yet.
var errCounting = errors.New("waiting for the member to count the objects of kinds Karmada may not list")

// countUnlisted counts, with the count quota, the objects of the kinds
// Karmada may not list in a namespace: the kinds that hold some (as
// "Secret ×2"), and those that could not be counted. errCounting while the
// count is pending.
func countUnlisted(ctx context.Context, m *clusterclient.Member, work *workv1alpha1.Work, namespace string, kinds []unlistedKind, now time.Time) (held, unknown []string, err error) {
	quotas := m.Kube.CoreV1().ResourceQuotas(namespace)
	q, err := quotas.Get(ctx, CountQuotaName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		q = &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: CountQuotaName, Namespace: namespace}, Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{}}}
		for _, k := range kinds {
			q.Spec.Hard[k.quotaKey()] = unlimited
		}
		markQuota(q, work)
		if _, err := quotas.Create(ctx, q, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, kindNames(kinds), fmt.Errorf("creating ResourceQuota %s/%s to count %v: %w", namespace, CountQuotaName, kindNames(kinds), err)
		}
		return nil, nil, errCounting
	}
	if err != nil {
		return nil, kindNames(kinds), err
	}
	pending := false
	for _, k := range kinds {
		used, ok := q.Status.Used[k.quotaKey()]
		if _, asked := q.Spec.Hard[k.quotaKey()]; !asked {
			// A kind that became unlistable after the quota was made.
			unknown = append(unknown, k.Kind)
			continue
		}
		switch {
		case !ok && now.Sub(q.CreationTimestamp.Time) < countWait:
			pending = true
		case !ok:
			unknown = append(unknown, k.Kind)
		case !used.IsZero():
			held = append(held, fmt.Sprintf("%s ×%s", k.Kind, used.String()))
		}
	}
	if pending {
		return nil, nil, errCounting
	}
	return held, unknown, nil
}

// removeCountQuota deletes the count quota from a namespace that is kept.
func removeCountQuota(ctx context.Context, m *clusterclient.Member, namespace string) error {
	err := m.Kube.CoreV1().ResourceQuotas(namespace).Delete(ctx, CountQuotaName, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting ResourceQuota %s/%s: %w", namespace, CountQuotaName, err)
	}
	return nil
}

func kindNames(kinds []unlistedKind) []string {
	out := make([]string, 0, len(kinds))
	for _, k := range kinds {
		out = append(out, k.Kind)
	}
	sort.Strings(out)
	return out
}

// markQuota carries Karmada's marks onto the count quota, as on any object
// a Work put into the member: it comes from the namespace's Work.
func markQuota(q *corev1.ResourceQuota, work *workv1alpha1.Work) {
	q.Labels = map[string]string{workv1alpha1.ManagedLabel: "true"}
	q.Annotations = map[string]string{
		workv1alpha1.WorkNamespaceAnnotation: work.Namespace,
		workv1alpha1.WorkNameAnnotation:      work.Name,
	}
}
