package detector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/anybinding"
	"github.com/karmada-go/karmada/internal/events"
	"github.com/karmada-go/karmada/internal/features"
	"github.com/karmada-go/karmada/internal/interpreter"
	"github.com/karmada-go/karmada/internal/metrics"
	"github.com/karmada-go/karmada/internal/names"
	"github.com/karmada-go/karmada/internal/propagation/policymatch"
)

// ensureBinding creates or updates the template's binding from the policy,
// and says on the template what changed.
func (d *Detector) ensureBinding(ctx context.Context, obj *unstructured.Unstructured, c policymatch.Candidate) error {
	var (
		replicas     int32
		requirements *workv1alpha2.ReplicaRequirements
		components   []workv1alpha2.Component
		err          error
	)
	if features.Gate.Enabled(features.MultiplePodTemplatesScheduling) && d.Interpreter.HasComponents(obj.GroupVersionKind().GroupKind()) {
		// A workload of several pod templates is described by its
		// components, each with its replicas and needs; it is placed
		// whole (with --feature-gates=MultiplePodTemplatesScheduling=true,
		// as Karmada; off, by its replicas and their one requirement).
		if components, err = d.Interpreter.Components(obj); err != nil {
			metrics.InterpreterErrors.WithLabelValues("InterpretComponent").Inc()
			events.Warning(d.Recorder, obj, events.GetComponentsFailed, "Failed to get the components of the template: %v", err)
			d.interpretFailed(ctx, obj, err)
			return fmt.Errorf("reading components of %s: %w", obj.GetName(), err)
		}
	} else if replicas, requirements, err = d.Interpreter.Replicas(obj); err != nil {
		metrics.InterpreterErrors.WithLabelValues("InterpretReplica").Inc()
		events.Warning(d.Recorder, obj, events.GetReplicasFailed, "Failed to get the replicas of the template: %v", err)
		d.interpretFailed(ctx, obj, err)
		return fmt.Errorf("reading replicas of %s: %w", obj.GetName(), err)
	}
	priority, err := d.schedulePriority(ctx, obj, c)
	if err != nil {
		return err
	}
	op, err := d.writeBinding(ctx, obj, c, replicas, requirements, components, priority)
	if err != nil {
		events.Warning(d.Recorder, obj, events.ApplyPolicyFailed, "Apply %s failed: %v", policyWords(c), err)
		return err
	}
	if op == controllerutil.OperationResultNone {
		return nil
	}
	klog.FromContext(ctx).V(2).Info("Synced binding", "binding", klog.KRef(obj.GetNamespace(), names.BindingName(obj.GetKind(), obj.GetName())), "policy", c.Key(), "operation", op)
	events.Normal(d.Recorder, obj, events.ApplyPolicySucceed, "Apply %s succeed", policyWords(c))
	if len(components) > 0 {
		events.Normal(d.Recorder, obj, events.GetComponentsSucceed, "Got %d components of the template", len(components))
	} else if d.Interpreter.HasReplicas(obj.GroupVersionKind().GroupKind()) {
		events.Normal(d.Recorder, obj, events.GetReplicasSucceed, "Got %d replicas of the template", replicas)
	}
	return nil
}

// writeBinding creates or patches the binding.
func (d *Detector) writeBinding(ctx context.Context, obj *unstructured.Unstructured, c policymatch.Candidate, replicas int32, requirements *workv1alpha2.ReplicaRequirements, components []workv1alpha2.Component, priority *workv1alpha2.SchedulePriority) (controllerutil.OperationResult, error) {
	owner := metav1.OwnerReference{APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(), Name: obj.GetName(), UID: obj.GetUID(),
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
	wantA, wantL := policymatch.ClaimChanges(&c)
	idLabel := workv1alpha2.ResourceBindingPermanentIDLabel
	if obj.GetNamespace() == "" {
		idLabel = workv1alpha2.ClusterResourceBindingPermanentIDLabel
	}
	hash, err := anybinding.TemplateHash(obj)
	if err != nil {
		return controllerutil.OperationResultNone, err
	}
	fill := func(om *metav1.ObjectMeta, spec *workv1alpha2.ResourceBindingSpec) {
		if om.CreationTimestamp.IsZero() {
			// The binding controller's finalizer from the start saves it a
			// write per binding.
			om.Finalizers = append(om.Finalizers, workv1alpha2.BindingControllerFinalizer)
		}
		if om.Labels[idLabel] == "" {
			om.Labels = applyChanges(om.Labels, map[string]*string{idLabel: ptr.To(string(uuid.NewUUID()))})
		}
		om.OwnerReferences = []metav1.OwnerReference{owner}
		om.Annotations = applyChanges(om.Annotations, wantA)
		// The policy's availability budget and narrowing mode go with its
		// bindings.
		copied := map[string]*string{}
		for _, k := range policyv1alpha1.CopiedAnnotations {
			copied[k] = nil
			if v, ok := c.Annotations[k]; ok {
				copied[k] = ptr.To(v)
			}
		}
		om.Annotations = applyChanges(om.Annotations, copied)
		om.Labels = applyChanges(om.Labels, wantL)
		ref := workv1alpha2.ObjectReference{APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(), Namespace: obj.GetNamespace(),
			Name: obj.GetName(), UID: obj.GetUID(), ResourceVersion: obj.GetResourceVersion()}
		if om.Annotations[workv1alpha2.TemplateHashAnnotation] == hash {
			// Only the template's status (or nothing) changed since the
			// binding was written: its resourceVersion is not news.
			kept := spec.Resource
			kept.ResourceVersion = ref.ResourceVersion
			if kept == ref {
				ref.ResourceVersion = spec.Resource.ResourceVersion
			}
		}
		spec.Resource = ref
		om.Annotations = applyChanges(om.Annotations, map[string]*string{workv1alpha2.TemplateHashAnnotation: &hash})
		spec.Replicas = replicas
		spec.ReplicaRequirements = requirements
		spec.Components = components
		policymatch.ApplyToBinding(spec, c.Spec)
		spec.SchedulePriority = priority
		spec.WorkloadAffinityGroups = affinityGroups(obj, c.Spec)
	}
	name := names.BindingName(obj.GetKind(), obj.GetName())
	var written client.Object
	var op controllerutil.OperationResult
	if obj.GetNamespace() == "" {
		crb := &workv1alpha2.ClusterResourceBinding{ObjectMeta: metav1.ObjectMeta{Name: name}}
		op, err = controllerutil.CreateOrPatch(ctx, d.Client, crb, func() error { fill(&crb.ObjectMeta, &crb.Spec); return nil })
		written = crb
	} else {
		rb := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: obj.GetNamespace(), Name: name}}
		op, err = controllerutil.CreateOrPatch(ctx, d.Client, rb, func() error { fill(&rb.ObjectMeta, &rb.Spec); return nil })
		written = rb
	}
	if err != nil {
		return op, err
	}
	// Interpreted again after a failure: the binding's condition says so.
	if b, berr := anybinding.Of(written); berr == nil {
		if err := anybinding.SetInterpreted(ctx, d.Client, b, replicaOps, nil); err != nil {
			return op, err
		}
	}
	return op, nil
}

// replicaOps are the interpreter operations the detector runs.
var replicaOps = []string{string(interpreter.OpInterpretReplica), string(interpreter.OpInterpretComponent)}

// interpretFailed says on the template's binding, when it has one, that a
// customization or webhook failed to interpret the template; the binding
// keeps what it had.
func (d *Detector) interpretFailed(ctx context.Context, obj *unstructured.Unstructured, err error) {
	var ierr *interpreter.Error
	if !errors.As(err, &ierr) {
		return
	}
	bo := anybinding.KindFor(obj.GetNamespace()).New().Object
	if d.Client.Get(ctx, client.ObjectKey{Namespace: obj.GetNamespace(), Name: names.BindingName(obj.GetKind(), obj.GetName())}, bo) != nil {
		return
	}
	if b, berr := anybinding.Of(bo); berr == nil {
		if err := anybinding.SetInterpreted(ctx, d.Client, b, replicaOps, ierr); err != nil {
			klog.FromContext(ctx).V(2).Info("Could not set the binding's ResourceInterpreted condition", "err", err)
		}
	}
}

// applyChanges sets or (for nil values) removes keys of m.
func applyChanges(m map[string]string, changes map[string]*string) map[string]string {
	for k, v := range changes {
		if v == nil {
			delete(m, k)
			continue
		}
		if m == nil {
			m = map[string]string{}
		}
		m[k] = *v
	}
	return m
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// policyWords names a policy as Karmada's ApplyPolicy events do:
// "policy(ns/name)" or "cluster policy(name)".
func policyWords(c policymatch.Candidate) string {
	if c.Namespaced {
		return "policy(" + c.Key() + ")"
	}
	return "cluster policy(" + c.Key() + ")"
}

// schedulePriority is the binding's place in the scheduler's queue: the
// value of the PriorityClass the policy's schedulePriority names (with
// --feature-gates=PriorityBasedScheduling=true, on by default, as Karmada);
// nil without one. A class that does not exist fails the binding's write,
// with the reason on the template, until it does.
func (d *Detector) schedulePriority(ctx context.Context, obj *unstructured.Unstructured, c policymatch.Candidate) (*workv1alpha2.SchedulePriority, error) {
	sp := c.Spec.SchedulePriority
	if sp == nil || !features.Gate.Enabled(features.PriorityBasedScheduling) {
		return nil, nil
	}
	pc := &schedulingv1.PriorityClass{}
	if err := d.Client.Get(ctx, client.ObjectKey{Name: sp.PriorityClassName}, pc); err != nil {
		err = fmt.Errorf("schedulePriority of %s: PriorityClass %q: %w", policyWords(c), sp.PriorityClassName, err)
		events.Warning(d.Recorder, obj, events.ApplyPolicyFailed, "Apply %s failed: %v", policyWords(c), err)
		return nil, err
	}
	return &workv1alpha2.SchedulePriority{Priority: pc.Value}, nil
}

// affinityGroups are the template's workload affinity groups: the values of
// its labels that the policy's placement.workloadAffinity groups by (with
// --feature-gates=WorkloadAffinity=true, as Karmada); nil without any.
func affinityGroups(obj *unstructured.Unstructured, spec *policyv1alpha1.PropagationSpec) *workv1alpha2.WorkloadAffinityGroups {
	wa := spec.Placement.WorkloadAffinity
	if wa == nil || !features.Gate.Enabled(features.WorkloadAffinity) {
		return nil
	}
	g := &workv1alpha2.WorkloadAffinityGroups{}
	if wa.Affinity != nil {
		g.AffinityGroup = obj.GetLabels()[wa.Affinity.GroupByLabelKey]
	}
	if wa.AntiAffinity != nil {
		g.AntiAffinityGroup = obj.GetLabels()[wa.AntiAffinity.GroupByLabelKey]
	}
	if g.AffinityGroup == "" && g.AntiAffinityGroup == "" {
		return nil
	}
	return g
}
