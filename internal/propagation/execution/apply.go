package execution

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	"github.com/karmada-go/karmada/internal/clusters/clusterclient"
	"github.com/karmada-go/karmada/internal/clusters/memberrights"
	"github.com/karmada-go/karmada/internal/interpreter"
	"github.com/karmada-go/karmada/internal/metrics"
	"github.com/karmada-go/karmada/internal/names"
)

// The apply phase: each manifest of a Work sent to its member by a
// server-side apply, unless the member's copy holds it already; what is in
// the way decided by the conflict resolution; refusals of the member's
// authorizer explained.

// notServedError says a member does not serve a manifest's type (yet).
type notServedError struct{ err error }

func (e *notServedError) Error() string { return e.err.Error() }

func (e *notServedError) Unwrap() error { return e.err }

// invalidManifestError is a manifest that is not an object: no retry can
// apply it.
type invalidManifestError struct{ err error }

func (e *invalidManifestError) Error() string { return e.err.Error() }

func (e *invalidManifestError) Unwrap() error { return e.err }

// onlyInvalid reports whether every apply error is an invalid manifest.
func onlyInvalid(err error) bool {
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	for _, e := range errs {
		var im *invalidManifestError
		if !errors.As(e, &im) {
			return false
		}
	}
	return len(errs) > 0
}

// soonResolved reports whether every apply error is of the kind that goes
// away without a new Work: a type not served yet, a namespace not created
// yet, or a kind the member refuses until an administrator grants it.
func soonResolved(err error) bool {
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else {
		errs = []error{err}
	}
	for _, e := range errs {
		var ns *notServedError
		var refused *memberrights.Refusal
		if !errors.As(e, &ns) && !errors.As(e, &refused) && !apierrors.IsNotFound(e) {
			return false
		}
	}
	return len(errs) > 0
}

// apply server-side applies every manifest, marked as coming from the Work.
// A manifest whose member copy already holds it (seen in the member's cache
// of managed objects), for a generation of the Work applied before, is not
// sent again: restarts and status updates cost the member nothing.
// It returns how many manifests it sent.
func (r *Reconciler) apply(ctx context.Context, m *clusterclient.Member, work *workv1alpha1.Work) (int, error) {
	var errs []error
	sent := 0
	run := applyRun{r: r, m: m, work: work, key: types.NamespacedName{Namespace: work.Namespace, Name: work.Name},
		applied: appliedAtGeneration(work) || r.done.has(work),
		// After a failed apply (something in the way, say), the member is
		// read first rather than refusing the same create-only apply on
		// every retry.
		failedBefore: meta.IsStatusConditionFalse(work.Status.Conditions, workv1alpha1.WorkApplied)}
	for i, manifest := range work.Spec.Workload.Manifests {
		s, err := run.manifest(ctx, i, manifest.Raw)
		if err != nil {
			errs = append(errs, err)
		}
		if s {
			sent++
		}
	}
	return sent, errors.Join(errs...)
}

// applyRun is one apply of a Work's manifests to its member.
type applyRun struct {
	r    *Reconciler
	m    *clusterclient.Member
	work *workv1alpha1.Work
	key  types.NamespacedName
	// applied: this generation of the Work was applied before;
	// failedBefore: its last apply failed.
	applied, failedBefore bool
}

// manifest applies manifest i unless the member's copy holds it already;
// sent says it was sent.
func (a applyRun) manifest(ctx context.Context, i int, raw []byte) (sent bool, err error) {
	r, m, work := a.r, a.m, a.work
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(raw); err != nil {
		return false, &invalidManifestError{fmt.Errorf("manifest %d is not a valid object: %w", i, err)}
	}
	overwrite := obj.GetAnnotations()[workv1alpha1.ConflictResolutionAnnotation] == workv1alpha1.ConflictOverwrite
	markFromWork(obj, work)
	ri, mapping, err := resourceFor(m, obj)
	if err != nil {
		return false, err
	}
	// What the member has in the way: a managed copy (from the cache),
	// nothing (the cache has no managed copy: sent as a create-only apply,
	// which a member object of that name refuses), or unknown (the cache
	// cannot answer: the member is asked).
	ours, absent := false, false
	if cur, found, ok := cachedCopy(ctx, m, mapping, a.key, obj); ok && found && fromWork(cur, work) {
		kept, err := retained(r.Interpreter, obj, cur)
		if err != nil {
			return false, err
		}
		obj = kept
		// An adopted copy stays marked as adopted.
		keepAdoption(obj, cur)
		if holds(cur, obj, work, a.applied) {
			return false, nil
		}
		// A generation applied before whose copy the cache does not show
		// may be the cache lagging behind that very apply: the member is
		// asked before writing again.
		ours = !a.applied
	} else if ok && !found && !a.failedBefore && !a.applied {
		// (A generation applied before, not in the cache: the cache may
		// lag behind that apply, and the read below tells.)
		absent = true
	}
	c := conflict{a: a, ri: ri, mapping: mapping, obj: obj, overwrite: overwrite}
	if !ours && !absent {
		if send, err := c.resolve(ctx); !send {
			return false, err
		}
	}
	obj = c.obj
	ctrl.LoggerFrom(ctx).V(4).Info("Applying manifest", "work", klog.KObj(work), "generation", work.Generation, "appliedBefore", a.applied, "object", objectName(obj), "createOnly", absent)
	err = r.send(ctx, ri, obj, absent)
	countSend(m.Name, obj, absent, err)
	if !absent && keptFromCopy(obj) && apierrors.IsConflict(err) {
		// The copy changed since the version whose fields were kept (or
		// the cache was behind): read it and keep its fields.
		if send, rerr := c.resolve(ctx); !send {
			return false, rerr
		}
		obj = c.obj
		err = r.send(ctx, ri, obj, false)
		countSend(m.Name, obj, false, err)
	}
	if absent && apierrors.IsConflict(err) {
		// Something of that name is there after all (not Karmada's, or a
		// copy the cache has not shown yet): untouched; decide as above.
		if send, rerr := c.resolve(ctx); !send {
			return false, rerr
		}
		obj = c.obj
		err = r.send(ctx, ri, obj, false)
		countSend(m.Name, obj, false, err)
	}
	if err != nil {
		return false, r.refusal(ctx, m, mapping, fmt.Errorf("applying %s %s: %w", obj.GetKind(), objectName(obj), err))
	}
	return true, nil
}

// conflict is a manifest whose member object of that name must be read
// before it is sent.
type conflict struct {
	a         applyRun
	ri        dynamic.ResourceInterface
	mapping   *meta.RESTMapping
	obj       *unstructured.Unstructured
	overwrite bool
}

// resolve reads the member's object of that name and decides: with Abort,
// what is there decides whether to apply; with Overwrite, whether the
// object was there before Karmada, and so is adopted rather than created
// (and released, not deleted, with the Work). It returns whether to send
// the manifest (c.obj, completed with what the member keeps).
func (c *conflict) resolve(ctx context.Context) (bool, error) {
	r, m, work, obj := c.a.r, c.a.m, c.a.work, c.obj
	cur, err := c.ri.Get(ctx, obj.GetName(), metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return false, r.refusal(ctx, m, c.mapping, fmt.Errorf("reading %s %s: %w", obj.GetKind(), objectName(obj), err))
	}
	if err == nil && !c.overwrite && !fromWork(cur, work) {
		return false, fmt.Errorf("%s %s already exists in cluster %s and was not created by Karmada; it is left alone (set conflictResolution: Overwrite in the policy to take it over)", obj.GetKind(), objectName(obj), m.Name)
	}
	if err == nil {
		kept, rerr := retained(r.Interpreter, obj, cur)
		if rerr != nil {
			return false, rerr
		}
		c.obj = kept
		if fromWork(cur, work) {
			keepAdoption(c.obj, cur)
		} else {
			adopt(c.obj, cur, work)
		}
	}
	// The cache could not answer (a member's informer still syncing after
	// a restart, or lagging): the copy just read tells as well whether it
	// already holds the manifest.
	return err != nil || !holds(cur, c.obj, work, c.a.applied), nil
}

// retained is the manifest completed with what the member owns in its copy
// cur, for kinds whose customization (or interpreter webhook) defines
// Retain: server-side apply already keeps every field the manifest leaves
// out, so the built-in kinds need none. On failure the copy is left as it
// is (the error names the customization), and applied again at the next
// try.
func retained(in *interpreter.Interpreter, obj, cur *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	obj = retainReplicas(obj, cur)
	if !in.HasRetain(obj.GroupVersionKind().GroupKind()) {
		return obj, nil
	}
	out, err := in.Retain(obj, cur)
	if err != nil {
		metrics.InterpreterErrors.WithLabelValues("Retain").Inc()
		return nil, fmt.Errorf("retaining the member's fields of %s %s: %w", obj.GetKind(), objectName(obj), err)
	}
	// As for replicas: what was kept is applied over the version it was
	// kept from.
	out.SetResourceVersion(cur.GetResourceVersion())
	return out, nil
}

// retainReplicas keeps the member's spec.replicas in the manifest of a
// template labelled resourcetemplate.karmada.io/retain-replicas: true
// (an HPA in the member decides them), as Karmada's interpreter retains
// them.
func retainReplicas(obj, cur *unstructured.Unstructured) *unstructured.Unstructured {
	if cur == nil || obj.GetLabels()[policyv1alpha1.RetainReplicasLabel] != policyv1alpha1.RetainReplicasValue {
		return obj
	}
	have, found, err := unstructured.NestedFieldNoCopy(cur.Object, "spec", "replicas")
	if err != nil || !found {
		return obj
	}
	if _, want, _ := unstructured.NestedFieldNoCopy(obj.Object, "spec", "replicas"); !want {
		return obj
	}
	out := obj.DeepCopy()
	_ = unstructured.SetNestedField(out.Object, have, "spec", "replicas")
	// The replicas kept are those of this version of the copy: applied
	// only over it (a member's HPA scaling in between, or a cache behind
	// the member, makes the apply a conflict, and the copy is read again)
	// so an older count never overwrites the HPA's.
	out.SetResourceVersion(cur.GetResourceVersion())
	return out
}

// keptFromCopy reports whether obj holds fields retained from a version of
// the member's copy (and so is applied only over that version).
func keptFromCopy(obj *unstructured.Unstructured) bool {
	return obj.GetResourceVersion() != "" && obj.GetResourceVersion() != absentResourceVersion
}

// refusal explains a refusal of the member's authorizer (Karmada's identity
// there may not write that kind, or not grant those rights) with the flag
// or command that grants it, read from the record of the identity's grant
// on its ClusterRole; any other error is returned as it is.
func (r *Reconciler) refusal(ctx context.Context, m *clusterclient.Member, mapping *meta.RESTMapping, err error) error {
	escalation, ok := memberrights.Refused(err)
	if !ok {
		return err
	}
	pull := r.side == clusterclient.Agent
	refusal := &memberrights.Refusal{Cluster: m.Name, Pull: pull, Escalation: escalation, Err: err,
		Kind: memberrights.Kind{Group: mapping.Resource.Group, Resource: mapping.Resource.Resource}}
	role := memberrights.PushClusterRole(m.Name)
	if pull {
		role = memberrights.PullClusterRole
	}
	// Read on failures only; without it the hint names the kind alone.
	if cr, gerr := m.Kube.RbacV1().ClusterRoles().Get(ctx, role, metav1.GetOptions{}); gerr == nil {
		refusal.Granted = cr.Annotations[clusterv1alpha1.PropagateKindsAnnotation]
	}
	return refusal
}

// absentResourceVersion makes a server-side apply create-only: as a
// precondition no live object can meet (no etcd revision reaches it), it has
// the member refuse the apply with a conflict when an object of that name
// exists, and is ignored when the apply creates the object. One request
// instead of a read and an apply, and what is in the way is never touched.
const absentResourceVersion = "9223372036854775807"

// countSend counts a create (createOnly) or update of a member object. A
// create refused because the object exists is not a failed create: what
// happens next decides.
func countSend(cluster string, obj *unstructured.Unstructured, createOnly bool, err error) {
	if createOnly {
		if apierrors.IsConflict(err) {
			return
		}
		metrics.CreateResourceToCluster.WithLabelValues(metrics.ResultOf(err), obj.GetAPIVersion(), obj.GetKind(), cluster, "false").Inc()
		return
	}
	metrics.UpdateResourceToCluster.WithLabelValues(metrics.ResultOf(err), obj.GetAPIVersion(), obj.GetKind(), cluster, "updated").Inc()
}

// send server-side applies the manifest, create-only when absent.
func (r *Reconciler) send(ctx context.Context, ri dynamic.ResourceInterface, obj *unstructured.Unstructured, createOnly bool) error {
	body := obj
	if createOnly {
		body = obj.DeepCopy()
		body.SetResourceVersion(absentResourceVersion)
	}
	data, err := json.Marshal(body.Object)
	if err != nil {
		return err
	}
	_, err = ri.Patch(ctx, obj.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: FieldManager, Force: ptrTrue()})
	return err
}

// fromWork reports whether a member object carries this Work's mark.
func fromWork(obj *unstructured.Unstructured, work *workv1alpha1.Work) bool {
	return names.FromWork(obj.GetAnnotations(), client.ObjectKeyFromObject(work))
}

func markFromWork(obj *unstructured.Unstructured, work *workv1alpha1.Work) {
	a := names.MarkWork(obj.GetAnnotations(), client.ObjectKeyFromObject(work))
	a[workv1alpha1.WorkGenerationAnnotation] = strconv.FormatInt(work.Generation, 10)
	obj.SetAnnotations(a)
	l := obj.GetLabels()
	if l == nil {
		l = map[string]string{}
	}
	l[workv1alpha1.ManagedLabel] = "true"
	obj.SetLabels(l)
}

func resourceFor(m *clusterclient.Member, obj *unstructured.Unstructured) (dynamic.ResourceInterface, *meta.RESTMapping, error) {
	gvk := obj.GroupVersionKind()
	mapping, err := m.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		// The member may have gained the API since discovery was cached:
		// read it again, unless another Work just did.
		if !m.RefreshDiscovery() {
			return nil, nil, &notServedError{fmt.Errorf("cluster %s does not serve %s: %w", m.Name, gvk, err)}
		}
		if mapping, err = m.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
			return nil, nil, &notServedError{fmt.Errorf("cluster %s does not serve %s: %w", m.Name, gvk, err)}
		}
	}
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		return m.Dynamic.Resource(mapping.Resource).Namespace(obj.GetNamespace()), mapping, nil
	}
	return m.Dynamic.Resource(mapping.Resource), mapping, nil
}
