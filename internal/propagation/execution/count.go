package execution

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	"github.com/karmada-go/karmada/internal/clusters/clusterclient"
	"github.com/karmada-go/karmada/internal/names"
)

// CountQuotaName is the ResourceQuota Karmada puts into a member namespace
// it created and is about to delete: with a hard limit of 0 objects of
// every kind, it freezes the namespace (nothing can be created in it once
// the member's quota controller has set its status), so that what Karmada
// finds there is all it will ever hold; and the quota controller counts for
// it the objects of the kinds it may not list (Secrets, with the rights
// karmadactl join gives by default). The namespace is deleted only when it
// holds nothing but Karmada's; otherwise it is released and the quota
// removed.
const CountQuotaName = names.CountQuotaName

// countWait bounds the wait for the member's quota controller to set the
// quota's status; after it, the namespace is not frozen and the kinds not
// counted are unknown (the namespace is then released if it has any).
const countWait = 30 * time.Second

// frozen is the hard limit of every kind in the count quota: no object can
// be created in the namespace.
var frozen = resource.MustParse("0")

// unlistedKind is a kind the member identity may not list.
type unlistedKind struct {
	Kind     string
	Resource schema.GroupResource
}

func (u unlistedKind) quotaKey() corev1.ResourceName { return quotaKey(u.Resource) }

func quotaKey(gr schema.GroupResource) corev1.ResourceName {
	if gr.Group == "" {
		return corev1.ResourceName("count/" + gr.Resource)
	}
	return corev1.ResourceName("count/" + gr.Resource + "." + gr.Group)
}

// errCounting says the member's quota controller has not answered yet.
var errCounting = errors.New("waiting for the member's quota controller to freeze the namespace (and count the objects of kinds Karmada may not list)")

// freezeNamespace puts the count quota into a namespace about to be
// deleted, and returns it once the member's quota controller has set its
// status (the namespace is frozen from then on): errCounting until then; nil
// without error when the quota controller has not answered within countWait
// (the namespace is not frozen).
func freezeNamespace(ctx context.Context, m *clusterclient.Member, work *workv1alpha1.Work, namespace string, now time.Time) (*corev1.ResourceQuota, error) {
	quotas := m.Kube.CoreV1().ResourceQuotas(namespace)
	q, err := quotas.Get(ctx, CountQuotaName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		kinds, err := creatableKinds(m)
		if err != nil {
			return nil, err
		}
		q = &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: CountQuotaName, Namespace: namespace}, Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{}}}
		for _, gr := range kinds {
			q.Spec.Hard[quotaKey(gr)] = frozen
		}
		markQuota(q, work)
		if _, err := quotas.Create(ctx, q, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("creating ResourceQuota %s/%s: %w", namespace, CountQuotaName, err)
		}
		return nil, errCounting
	}
	if err != nil {
		return nil, err
	}
	if !quotaOfWork(q, work) {
		// The member's own quota of that name (or another Work's): never
		// taken for the freeze, never removed.
		return nil, nil
	}
	if len(q.Status.Hard) == 0 {
		if now.Sub(q.CreationTimestamp.Time) < countWait {
			return nil, errCounting
		}
		return nil, nil
	}
	return q, nil
}

// creatableKinds are the namespaced kinds of the member's API an object of
// which can be created (events aside: recording them harms nothing).
func creatableKinds(m *clusterclient.Member) ([]schema.GroupResource, error) {
	lists, err := m.Kube.Discovery().ServerPreferredNamespacedResources()
	if err != nil {
		return nil, err
	}
	var out []schema.GroupResource
	for _, list := range lists {
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			return nil, err
		}
		for _, res := range list.APIResources {
			if strings.Contains(res.Name, "/") || !slices.Contains(res.Verbs, "create") || res.Kind == "Event" {
				continue
			}
			out = append(out, schema.GroupResource{Group: gv.Group, Resource: res.Name})
		}
	}
	return out, nil
}

// countUnlisted reads, from the count quota (nil: none answered), the
// objects of the kinds Karmada may not list in a namespace: the kinds that
// hold some (as "Secret ×2"), and those that could not be counted.
func countUnlisted(q *corev1.ResourceQuota, kinds []unlistedKind) (held, unknown []string) {
	if q == nil {
		return nil, kindNames(kinds)
	}
	for _, k := range kinds {
		used, ok := q.Status.Used[k.quotaKey()]
		switch {
		case !ok:
			// Not asked (a kind that appeared since), or not counted.
			unknown = append(unknown, k.Kind)
		case !used.IsZero():
			held = append(held, fmt.Sprintf("%s ×%s", k.Kind, used.String()))
		}
	}
	return held, unknown
}

// removeCountQuota deletes the count quota the Work put into a namespace
// that is kept; a quota of that name it did not put there stays.
func removeCountQuota(ctx context.Context, m *clusterclient.Member, work *workv1alpha1.Work, namespace string) error {
	quotas := m.Kube.CoreV1().ResourceQuotas(namespace)
	q, err := quotas.Get(ctx, CountQuotaName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) || (err == nil && !quotaOfWork(q, work)) {
		return nil
	}
	if err == nil {
		err = quotas.Delete(ctx, CountQuotaName, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &q.UID}})
	}
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
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

// quotaOfWork reports whether a count quota carries the Work's marks.
func quotaOfWork(q *corev1.ResourceQuota, work *workv1alpha1.Work) bool {
	return names.FromWork(q.Annotations, client.ObjectKeyFromObject(work))
}

// markQuota carries Karmada's marks onto the count quota, as on any object
// a Work put into the member: it comes from the namespace's Work.
func markQuota(q *corev1.ResourceQuota, work *workv1alpha1.Work) {
	q.Labels = map[string]string{workv1alpha1.ManagedLabel: "true"}
	q.Annotations = names.MarkWork(nil, client.ObjectKeyFromObject(work))
}
