package execution

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	"github.com/karmada-go/karmada/internal/clusters/clusterclient"
	"github.com/karmada-go/karmada/internal/jsonvalue"
)

// cacheSyncWait bounds how long a reconcile waits for a member's informer of
// a type to sync before it falls back to reading the member directly.
const cacheSyncWait = 10 * time.Second

// appliedAtGeneration reports whether the Work's current generation was
// applied successfully before: only then can its manifests be compared with
// the members' copies instead of applied (a manifest that lost a field must
// be applied for the member to drop it).
func appliedAtGeneration(work *workv1alpha1.Work) bool {
	c := meta.FindStatusCondition(work.Status.Conditions, workv1alpha1.WorkApplied)
	return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == work.Generation
}

// appliedGenerations remembers, per Work, the generation this process last
// applied successfully. The Applied condition written for it reaches the
// cache some time after the write, and a Work reconciled again before then
// (another event queued meanwhile) must not be taken for a generation never
// applied: that would apply its manifests again.
type appliedGenerations struct {
	mu sync.Mutex
	m  map[types.NamespacedName]appliedGeneration
}

type appliedGeneration struct {
	uid        types.UID
	generation int64
}

func (a *appliedGenerations) record(work *workv1alpha1.Work) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.m == nil {
		a.m = map[types.NamespacedName]appliedGeneration{}
	}
	a.m[types.NamespacedName{Namespace: work.Namespace, Name: work.Name}] = appliedGeneration{uid: work.UID, generation: work.Generation}
}

// has reports whether the Work's current generation was applied by this
// process (a Work deleted and created again under its name is another Work).
func (a *appliedGenerations) has(work *workv1alpha1.Work) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	g, ok := a.m[types.NamespacedName{Namespace: work.Namespace, Name: work.Name}]
	return ok && g.uid == work.UID && g.generation == work.Generation
}

func (a *appliedGenerations) forget(work types.NamespacedName) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.m, work)
}

// holds reports whether a member's copy (from the cache, or read from the
// member) already holds the manifest, for a generation of the Work that was
// applied before (as the Work's status or this process knows, or as the
// copy's own generation annotation says): then applying it again would
// change nothing.
func holds(cur, manifest *unstructured.Unstructured, work *workv1alpha1.Work, applied bool) bool {
	return cur != nil && fromWork(cur, work) && (applied || workv1alpha1.AppliedFromGeneration(cur.GetAnnotations(), work.Generation)) &&
		jsonvalue.Contains(cur.Object, manifest.Object)
}

// cachedCopy returns the member's copy of obj from the member's informer of
// managed objects, waiting briefly for that informer to sync. ok is false
// when the cache cannot answer (not synced): the caller must ask the member.
// found is false when the member has no managed copy (it may still have an
// object of that name that Karmada does not manage).
func cachedCopy(ctx context.Context, m *clusterclient.Member, mapping *meta.RESTMapping, work types.NamespacedName, obj *unstructured.Unstructured) (cur *unstructured.Unstructured, found, ok bool) {
	lister, synced := m.Managed(mapping.Resource, work, nil)
	if !synced {
		wctx, cancel := context.WithTimeout(ctx, cacheSyncWait)
		synced = m.WaitManaged(wctx, mapping.Resource)
		cancel()
		if !synced {
			return nil, false, false
		}
	}
	var got any
	var err error
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		got, err = lister.ByNamespace(obj.GetNamespace()).Get(obj.GetName())
	} else {
		got, err = lister.Get(obj.GetName())
	}
	if err != nil {
		return nil, false, true
	}
	u, isU := got.(*unstructured.Unstructured)
	if !isU {
		return nil, false, false
	}
	return u, true, true
}
