// Package anybinding lets controllers handle ResourceBindings and
// ClusterResourceBindings as one shape (object, spec, status, the labels put
// on their Works), and finds a binding's Works through an index of the
// manager's cache.
package anybinding

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/names"
	"github.com/karmada-go/karmada/internal/requeue"
)

// Binding is a ResourceBinding or a ClusterResourceBinding. Spec and Status
// point into Object, so changing them changes the object to be written.
type Binding struct {
	Object client.Object
	Spec   *workv1alpha2.ResourceBindingSpec
	Status *workv1alpha2.ResourceBindingStatus
}

// Of adapts a *ResourceBinding or *ClusterResourceBinding; any other object
// is an error.
func Of(obj client.Object) (Binding, error) {
	switch b := obj.(type) {
	case *workv1alpha2.ResourceBinding:
		return Binding{Object: b, Spec: &b.Spec, Status: &b.Status}, nil
	case *workv1alpha2.ClusterResourceBinding:
		return Binding{Object: b, Spec: &b.Spec, Status: &b.Status}, nil
	}
	return Binding{}, fmt.Errorf("%T is not a ResourceBinding or ClusterResourceBinding", obj)
}

// ClusterScoped reports whether the binding is a ClusterResourceBinding.
func (b Binding) ClusterScoped() bool { return b.Object.GetNamespace() == "" }

// PermanentIDLabel is the key of the binding's permanent-id label.
func (b Binding) PermanentIDLabel() string {
	if b.ClusterScoped() {
		return workv1alpha2.ClusterResourceBindingPermanentIDLabel
	}
	return workv1alpha2.ResourceBindingPermanentIDLabel
}

// WorkLabels are the labels that name the binding on each of its Works, and
// its permanent id when it has one. A name longer than a label value may be
// is shortened with a hash (names.LabelValue); WorkAnnotations then carry it
// whole.
func (b Binding) WorkLabels() map[string]string {
	out := map[string]string{}
	if b.ClusterScoped() {
		out[workv1alpha2.ClusterResourceBindingLabel] = names.LabelValue(b.Object.GetName())
	} else {
		out[workv1alpha2.ResourceBindingNamespaceLabel] = b.Object.GetNamespace()
		out[workv1alpha2.ResourceBindingNameLabel] = names.LabelValue(b.Object.GetName())
	}
	if id := b.Object.GetLabels()[b.PermanentIDLabel()]; id != "" {
		out[b.PermanentIDLabel()] = id
	}
	return out
}

// WorkAnnotations are the binding's name annotations of each of its Works
// (with "" values when they are not needed): needed only when the name
// label had to be shortened, so that a Work still names its binding.
func (b Binding) WorkAnnotations() map[string]string {
	name := b.Object.GetName()
	full := ""
	if names.LabelValue(name) != name {
		full = name
	}
	if b.ClusterScoped() {
		return map[string]string{workv1alpha2.ClusterResourceBindingAnnotation: full}
	}
	ns := ""
	if full != "" {
		ns = b.Object.GetNamespace()
	}
	return map[string]string{workv1alpha2.ResourceBindingNamespaceAnnotation: ns, workv1alpha2.ResourceBindingNameAnnotation: full}
}

// CopyMarks are the labels and annotations a Work's manifest carries, and so
// the member's copy, to name the binding it came from: the permanent-id
// label, and the binding's name (and namespace) annotations.
func (b Binding) CopyMarks() (labels, annotations map[string]string) {
	labels = map[string]string{}
	if id := b.Object.GetLabels()[b.PermanentIDLabel()]; id != "" {
		labels[b.PermanentIDLabel()] = id
	}
	if b.ClusterScoped() {
		return labels, map[string]string{workv1alpha2.ClusterResourceBindingAnnotation: b.Object.GetName()}
	}
	return labels, map[string]string{workv1alpha2.ResourceBindingNamespaceAnnotation: b.Object.GetNamespace(), workv1alpha2.ResourceBindingNameAnnotation: b.Object.GetName()}
}

// Kind is one of the two binding kinds.
type Kind struct {
	// Name is the kind's name, as a controller name suffix.
	Name          string
	ClusterScoped bool
}

// Kinds are ResourceBinding, then ClusterResourceBinding.
var Kinds = []Kind{{Name: "ResourceBinding"}, {Name: "ClusterResourceBinding", ClusterScoped: true}}

// KindFor is the kind of the binding of a template in namespace: a
// ClusterResourceBinding for a cluster-scoped template ("").
func KindFor(namespace string) Kind {
	if namespace == "" {
		return Kinds[1]
	}
	return Kinds[0]
}

// New returns an empty binding of the kind.
func (k Kind) New() Binding {
	if k.ClusterScoped {
		b, _ := Of(&workv1alpha2.ClusterResourceBinding{})
		return b
	}
	b, _ := Of(&workv1alpha2.ResourceBinding{})
	return b
}

// Get reads a binding of the kind.
func (k Kind) Get(ctx context.Context, c client.Reader, key client.ObjectKey) (Binding, error) {
	b := k.New()
	err := c.Get(ctx, key, b.Object)
	return b, err
}

// List lists the bindings of the kind.
func (k Kind) List(ctx context.Context, c client.Reader, opts ...client.ListOption) ([]Binding, error) {
	var list client.ObjectList = &workv1alpha2.ResourceBindingList{}
	if k.ClusterScoped {
		list = &workv1alpha2.ClusterResourceBindingList{}
	}
	if err := c.List(ctx, list, opts...); err != nil {
		return nil, err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	out := make([]Binding, 0, len(items))
	for _, it := range items {
		obj, ok := it.(client.Object)
		if !ok {
			return nil, fmt.Errorf("%T in a binding list", it)
		}
		b, err := Of(obj)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// OfWork returns the key of the binding of this kind that a Work names
// (by its labels, or its annotations when the name label was shortened),
// and false when it names none of this kind.
func (k Kind) OfWork(work client.Object) (client.ObjectKey, bool) {
	labels, annotations := work.GetLabels(), work.GetAnnotations()
	if k.ClusterScoped {
		n := labels[workv1alpha2.ClusterResourceBindingLabel]
		if full := annotations[workv1alpha2.ClusterResourceBindingAnnotation]; full != "" && n != "" {
			n = full
		}
		return client.ObjectKey{Name: n}, n != ""
	}
	n := labels[workv1alpha2.ResourceBindingNameLabel]
	if full := annotations[workv1alpha2.ResourceBindingNameAnnotation]; full != "" && n != "" {
		n = full
	}
	return client.ObjectKey{Namespace: labels[workv1alpha2.ResourceBindingNamespaceLabel], Name: n}, n != ""
}

// workBindingField indexes Works in a manager's cache by the binding they
// were made from: the binding and bindingStatus controllers look a binding's
// Works up on every sync, and a label selector would scan every Work of the
// control plane each time.
const workBindingField = "karmada.io/work-binding"

// indexKey is the index value for a Work's labels: "rb:" and the
// namespace/name of a ResourceBinding, or "crb:" and the name of a
// ClusterResourceBinding; "" when the labels name neither.
func indexKey(labels map[string]string) string {
	if n := labels[workv1alpha2.ResourceBindingNameLabel]; n != "" {
		return "rb:" + labels[workv1alpha2.ResourceBindingNamespaceLabel] + "/" + n
	}
	if n := labels[workv1alpha2.ClusterResourceBindingLabel]; n != "" {
		return "crb:" + n
	}
	return ""
}

// IndexWorks registers the index that Works needs. Call it once per
// manager, before the manager starts, when any controller that calls Works
// runs.
func IndexWorks(ctx context.Context, indexer client.FieldIndexer) error {
	return indexer.IndexField(ctx, &workv1alpha1.Work{}, workBindingField, func(o client.Object) []string {
		if k := indexKey(o.GetLabels()); k != "" {
			return []string{k}
		}
		return nil
	})
}

// Works lists, from a cache with IndexWorks registered, the binding's Works.
func (b Binding) Works(ctx context.Context, c client.Reader) ([]workv1alpha1.Work, error) {
	works := &workv1alpha1.WorkList{}
	if err := c.List(ctx, works, client.MatchingFields{workBindingField: indexKey(b.WorkLabels())}); err != nil {
		return nil, err
	}
	return works.Items, nil
}

// SyncFunc handles one binding of a kind and says when to look at it again
// (0: when it changes).
type SyncFunc func(ctx context.Context, req reconcile.Request, b Binding) (time.Duration, error)

// Reconciler adapts a SyncFunc to controller-runtime: the binding is read
// from c; one that is gone is passed to gone (when not nil) and otherwise
// ignored; a write that lost an optimistic-lock race is retried once the
// cache has caught up.
func (k Kind) Reconciler(c client.Reader, sync SyncFunc, gone func(reconcile.Request)) reconcile.Reconciler {
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		b, err := k.Get(ctx, c, req.NamespacedName)
		if err != nil {
			if apierrors.IsNotFound(err) && gone != nil {
				gone(req)
			}
			return reconcile.Result{}, client.IgnoreNotFound(err)
		}
		after, err := sync(ctx, req, b)
		if err != nil {
			return requeue.OnConflict(err)
		}
		return reconcile.Result{RequeueAfter: after}, nil
	})
}

// Targets are the clusters a binding's object goes to: its scheduling
// result and, for an object workloads depend on (spec.requiredBy), every
// cluster such a workload runs in, each once, in that order.
func Targets(spec *workv1alpha2.ResourceBindingSpec) []workv1alpha2.TargetCluster {
	if len(spec.RequiredBy) == 0 {
		return spec.Clusters
	}
	out := append([]workv1alpha2.TargetCluster(nil), spec.Clusters...)
	seen := make(map[string]bool, len(out))
	for _, c := range out {
		seen[c.Name] = true
	}
	var more []string
	for _, s := range spec.RequiredBy {
		for _, c := range s.Clusters {
			if !seen[c.Name] {
				seen[c.Name] = true
				more = append(more, c.Name)
			}
		}
	}
	sort.Strings(more)
	for _, n := range more {
		out = append(out, workv1alpha2.TargetCluster{Name: n})
	}
	return out
}

// SetInterpreted sets the binding's ResourceInterpreted condition as
// MarkInterpreted does and writes the status when it changed.
func SetInterpreted(ctx context.Context, c client.Client, b Binding, ops []string, failure error) error {
	before := b.Object.DeepCopyObject().(client.Object)
	if !MarkInterpreted(b, ops, failure) {
		return nil
	}
	return client.IgnoreNotFound(c.Status().Patch(ctx, b.Object, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})))
}

// MarkInterpreted sets, in memory, the binding's ResourceInterpreted
// condition for the interpreter operations ops (a controller passes those
// it runs): False with the failure when one failed, True again once they
// succeed after one of them failed (a binding that never saw a failure of
// ops gets no condition, and costs no write). It reports whether the
// status changed; the caller writes it.
func MarkInterpreted(b Binding, ops []string, failure error) bool {
	obj, status := b.Object, b.Status
	cur := meta.FindStatusCondition(status.Conditions, workv1alpha2.ResourceInterpreted)
	cond := metav1.Condition{Type: workv1alpha2.ResourceInterpreted, Status: metav1.ConditionTrue, Reason: workv1alpha2.ReasonInterpretSucceeded,
		Message: workv1alpha2.MessageInterpretSucceeded, ObservedGeneration: obj.GetGeneration()}
	if failure != nil {
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, workv1alpha2.ReasonInterpretFailed, failure.Error()
	} else {
		if cur == nil || cur.Status == metav1.ConditionTrue {
			return false
		}
		// Another operation's failure is not this controller's to clear.
		mine := false
		for _, op := range ops {
			mine = mine || strings.Contains(cur.Message, "operation "+op+":")
		}
		if !mine {
			return false
		}
	}
	if cur != nil && cur.Status == cond.Status && cur.Message == cond.Message {
		return false
	}
	meta.SetStatusCondition(&status.Conditions, cond)
	return true
}
