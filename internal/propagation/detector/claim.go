package detector

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/dynamic"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/anybinding"
	"github.com/karmada-go/karmada/internal/cache/compactobj"
	"github.com/karmada-go/karmada/internal/events"
	"github.com/karmada-go/karmada/internal/features"
	"github.com/karmada-go/karmada/internal/metrics"
	"github.com/karmada-go/karmada/internal/names"
	"github.com/karmada-go/karmada/internal/propagation/policymatch"
)

// reconcile claims one template for its policy and keeps its binding. The
// policies are matched against the template's metadata from the informer's
// cache: a template no policy selects costs no API call, and claiming a new
// one costs one patch, whose answer is the full object the binding is built
// from.
func (d *Detector) reconcile(ctx context.Context, k key) (err error) {
	log := klog.FromContext(ctx)
	ri := d.resource(k)
	obj, err := d.cachedMeta(k)
	if apierrors.IsNotFound(err) {
		return nil // the binding follows its template through the owner reference
	}
	if err != nil {
		return err
	}
	if !obj.GetDeletionTimestamp().IsZero() {
		return nil
	}
	if obj.GetLabels()[policyv1alpha1.ResourceTemplateClaimedByLabel] != "" {
		// Propagated by what claims it (a MultiClusterService, a
		// ServiceImport), not by a policy.
		return nil
	}
	matchStart := time.Now()
	pps := &policyv1alpha1.PropagationPolicyList{}
	if obj.GetNamespace() != "" {
		if err := d.Client.List(ctx, pps, client.InNamespace(obj.GetNamespace())); err != nil {
			return err
		}
	}
	cpps := &policyv1alpha1.ClusterPropagationPolicyList{}
	if err := d.Client.List(ctx, cpps); err != nil {
		return err
	}
	current, claimed := policymatch.ClaimOf(obj)
	chosen, ok := policymatch.Choose(current, claimed, policymatch.Candidates(obj, pps.Items, cpps.Items), features.Gate.Enabled(features.PolicyPreemption))
	metrics.ResourceMatchPolicyDuration.Observe(metrics.Since(matchStart))
	if !ok {
		if claimed {
			log.Info("Releasing template: no policy selects it any more")
			// The binding first: a failure between the two writes leaves
			// the template claimed, and the retry does both again.
			if err := d.releaseBinding(ctx, obj); err != nil {
				return err
			}
			_, err := d.setClaim(ctx, ri, obj, nil)
			return err
		}
		return d.touchAttached(ctx, obj)
	}
	applyStart := time.Now()
	defer func() {
		result := metrics.ResultOf(err)
		metrics.PolicyApplyAttempts.WithLabelValues(result).Inc()
		metrics.ResourceApplyPolicyDuration.WithLabelValues(result).Observe(metrics.Since(applyStart))
	}()
	if err := d.ensurePermanentID(ctx, &chosen); err != nil {
		return err
	}
	preempted := claimed && (current.Namespaced != chosen.Namespaced || current.Name != chosen.Name || current.Namespace != chosen.Namespace)
	patched, err := d.setClaim(ctx, ri, obj, &chosen)
	if preempted {
		metrics.PolicyPreemption.WithLabelValues(metrics.ResultOf(err)).Inc()
	}
	if err != nil {
		events.Warning(d.Recorder, obj, events.ApplyPolicyFailed, "Failed to claim the template for policy %s: %v", chosen.Key(), err)
		return err
	}
	if patched && preempted {
		events.Normal(d.Recorder, obj, events.PreemptPolicySucceed, "Policy %s took the template over", chosen.Key())
	}
	if !patched {
		// Already claimed: read the whole template for its binding.
		full, err := d.whole(ctx, ri, k, obj)
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		obj = full
	}
	if wait, err := d.lazyWait(ctx, ri, obj, chosen); err != nil || wait {
		return err
	}
	return d.ensureBinding(ctx, obj, chosen)
}

// whole returns the whole template whose cached metadata is m: from the
// template cache when that holds the same version of it (so that going
// through every claimed template, as after a restart, costs no request),
// else (also while that cache is still listing) from the API server.
func (d *Detector) whole(ctx context.Context, ri dynamic.ResourceInterface, k key, m *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if d.Templates != nil {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(m.GroupVersionKind())
		ok, err := d.Templates.GetIfSynced(ctx, client.ObjectKey{Namespace: k.namespace, Name: k.name}, u)
		if ok && err == nil && u.GetResourceVersion() == m.GetResourceVersion() {
			return u, nil
		}
	}
	return ri.Get(ctx, k.name, metav1.GetOptions{})
}

// cachedMeta returns the template's metadata from the informer's cache as
// an unstructured object with its apiVersion and kind.
func (d *Detector) cachedMeta(k key) (*unstructured.Unstructured, error) {
	d.mu.RLock()
	gvk, ok := d.watching[k.gvr]
	d.mu.RUnlock()
	if !ok {
		return nil, apierrors.NewNotFound(k.gvr.GroupResource(), k.name)
	}
	lister := d.factory.ForResource(k.gvr).Lister()
	var got runtime.Object
	var err error
	if k.namespace != "" {
		got, err = lister.ByNamespace(k.namespace).Get(k.name)
	} else {
		got, err = lister.Get(k.name)
	}
	if err != nil {
		return nil, err
	}
	m, ok := got.(*metav1.PartialObjectMetadata)
	if !ok {
		return nil, fmt.Errorf("unexpected %T in the metadata cache", got)
	}
	return compactobj.FromMetadata(m, gvk), nil
}

func (d *Detector) resource(k key) dynamic.ResourceInterface {
	d.mu.RLock()
	namespaced := d.namespaced[k.gvr]
	d.mu.RUnlock()
	if namespaced {
		return d.dynamic.Resource(k.gvr).Namespace(k.namespace)
	}
	return d.dynamic.Resource(k.gvr)
}

// setClaim writes (or, with nil, removes) the claim annotations and labels
// on the template when they differ. When it patches, obj becomes the whole
// object the API server answered with, and patched is true.
func (d *Detector) setClaim(ctx context.Context, ri dynamic.ResourceInterface, obj *unstructured.Unstructured, c *policymatch.Candidate) (patched bool, err error) {
	body, ok := claimPatch(obj, c)
	if !ok {
		return false, nil
	}
	updated, err := ri.Patch(ctx, obj.GetName(), types.MergePatchType, []byte(body), metav1.PatchOptions{})
	if err != nil {
		return false, fmt.Errorf("claiming %s: %w", obj.GetName(), err)
	}
	obj.Object = updated.Object
	return true, nil
}

// claimPatch is the merge patch that gives obj's annotations and labels
// claim c (nil: no claim), and false when they already match it.
func claimPatch(obj metav1.Object, c *policymatch.Candidate) (string, bool) {
	wantA, wantL := policymatch.ClaimChanges(c)
	md := map[string]any{}
	if p := policymatch.MergePatch(obj.GetAnnotations(), wantA); p != nil {
		md["annotations"] = p
	}
	if p := policymatch.MergePatch(obj.GetLabels(), wantL); p != nil {
		md["labels"] = p
	}
	if len(md) == 0 {
		return "", false
	}
	return mustJSON(map[string]any{"metadata": md}), true
}

// releaseBinding removes the claim from the template's binding, when it
// has one: the binding and what it propagated stay, as Karmada leaves them,
// but no longer name a policy that does not select the template.
func (d *Detector) releaseBinding(ctx context.Context, obj *unstructured.Unstructured) error {
	b := anybinding.KindFor(obj.GetNamespace()).New().Object
	err := d.Client.Get(ctx, client.ObjectKey{Namespace: obj.GetNamespace(), Name: names.BindingName(obj.GetKind(), obj.GetName())}, b)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	body, ok := claimPatch(b, nil)
	if !ok {
		return nil
	}
	if err := d.Client.Patch(ctx, b, client.RawPatch(types.MergePatchType, []byte(body))); err != nil {
		return client.IgnoreNotFound(fmt.Errorf("releasing binding %s: %w", b.GetName(), err))
	}
	return nil
}

// ensurePermanentID gives the chosen policy its permanent-id label when it
// has none yet (Karmada's webhook would have added it at creation).
func (d *Detector) ensurePermanentID(ctx context.Context, c *policymatch.Candidate) error {
	if c.PermanentID != "" {
		return nil
	}
	// Workers reconciling templates of the same new policy at once must
	// agree on one id: the first gives it, the others reuse it (the cache
	// may not show the label yet). A second id would re-label every
	// template and binding of the policy.
	d.idMu.Lock()
	defer d.idMu.Unlock()
	if id, ok := d.givenIDs[c.UID]; ok && c.UID != "" {
		c.PermanentID = id
		return nil
	}
	id := string(uuid.NewUUID())
	var obj client.Object
	label := policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel
	if c.Namespaced {
		obj = &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, Name: c.Name}}
		label = policyv1alpha1.PropagationPolicyPermanentIDLabel
	} else {
		obj = &policyv1alpha1.ClusterPropagationPolicy{ObjectMeta: metav1.ObjectMeta{Name: c.Name}}
	}
	body := mustJSON(map[string]any{"metadata": map[string]any{"labels": map[string]string{label: id}}})
	if err := d.Client.Patch(ctx, obj, client.RawPatch(types.MergePatchType, []byte(body))); err != nil {
		return fmt.Errorf("labelling policy %s with its permanent id: %w", c.Key(), err)
	}
	c.PermanentID = id
	if c.UID != "" {
		if d.givenIDs == nil {
			d.givenIDs = map[types.UID]string{}
		}
		d.givenIDs[c.UID] = id
	}
	return nil
}

// touchAttached brings an attached binding (the template is a dependency of
// workloads with propagateDeps, and no policy of its own propagates it) to
// the template's current version, so that its copies follow the change.
func (d *Detector) touchAttached(ctx context.Context, obj *unstructured.Unstructured) error {
	if obj.GetNamespace() == "" {
		return nil
	}
	b := &workv1alpha2.ResourceBinding{}
	err := d.Client.Get(ctx, client.ObjectKey{Namespace: obj.GetNamespace(), Name: names.BindingName(obj.GetKind(), obj.GetName())}, b)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	ref := &b.Spec.Resource
	if b.Labels[workv1alpha2.AttachedBindingLabel] != "true" || b.Spec.Placement != nil || ref.Kind != obj.GetKind() || ref.Name != obj.GetName() ||
		(ref.ResourceVersion == obj.GetResourceVersion() && ref.UID == obj.GetUID()) {
		return nil
	}
	patch := client.MergeFrom(b.DeepCopy())
	ref.ResourceVersion, ref.UID = obj.GetResourceVersion(), obj.GetUID()
	return client.IgnoreNotFound(d.Client.Patch(ctx, b, patch))
}
