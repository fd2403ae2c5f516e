// Package hpamarker is the hpaScaleTargetMarker controller (off by
// default, as Karmada's): the target of a HorizontalPodAutoscaler that a
// policy propagates gets the label resourcetemplate.karmada.io/
// retain-replicas: "true", so that the members' copies keep the replicas
// their own HPA sets; the label goes when the HPA goes or targets another
// object.
package hpamarker

import (
	"context"
	"fmt"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	"github.com/karmada-go/karmada/internal/queues"
)

// ControllerName is the controller's name in --controllers (Karmada's).
const ControllerName = "hpaScaleTargetMarker"

// Key is one change to make: mark (or unmark) one HPA's target.
type Key struct {
	Mark                   bool
	Namespace              string
	APIVersion, Kind, Name string
}

func (k Key) String() string {
	op := "unmark"
	if k.Mark {
		op = "mark"
	}
	return fmt.Sprintf("%s %s %s/%s", op, k.Kind, k.Namespace, k.Name)
}

// Reconciler marks the targets of propagated HPAs.
type Reconciler struct {
	Client client.Client
	// Reader reads the targets (the manager's API reader when nil: an
	// HPA's target is read when the HPA changes, which is rare, and no
	// informer is kept on every kind an HPA may target).
	Reader client.Reader
}

func keyOf(hpa *autoscalingv2.HorizontalPodAutoscaler, mark bool) Key {
	ref := hpa.Spec.ScaleTargetRef
	return Key{Mark: mark, Namespace: hpa.Namespace, APIVersion: ref.APIVersion, Kind: ref.Kind, Name: ref.Name}
}

// propagated reports whether a policy propagates the HPA (its claim).
func propagated(hpa *autoscalingv2.HorizontalPodAutoscaler) bool {
	_, ok := hpa.Labels[policyv1alpha1.PropagationPolicyPermanentIDLabel]
	_, cluster := hpa.Labels[policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel]
	return ok || cluster
}

// SetupWithManager watches the control plane's HPAs: a propagated one
// marks its target; a deleted one, or one that moved to another target,
// unmarks the old target.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Reader == nil {
		r.Reader = mgr.GetAPIReader()
	}
	opts := queues.TypedOptions[Key](1)
	opts.Reconciler = r
	c, err := controller.NewTyped[Key](ControllerName, mgr, opts)
	if err != nil {
		return err
	}
	type q = workqueue.TypedRateLimitingInterface[Key]
	return c.Watch(source.TypedKind[*autoscalingv2.HorizontalPodAutoscaler, Key](mgr.GetCache(), &autoscalingv2.HorizontalPodAutoscaler{},
		handler.TypedFuncs[*autoscalingv2.HorizontalPodAutoscaler, Key]{
			CreateFunc: func(_ context.Context, e event.TypedCreateEvent[*autoscalingv2.HorizontalPodAutoscaler], w q) {
				if propagated(e.Object) {
					w.Add(keyOf(e.Object, true))
				}
			},
			UpdateFunc: func(_ context.Context, e event.TypedUpdateEvent[*autoscalingv2.HorizontalPodAutoscaler], w q) {
				if e.ObjectOld.Spec.ScaleTargetRef != e.ObjectNew.Spec.ScaleTargetRef {
					w.Add(keyOf(e.ObjectOld, false))
				}
				if propagated(e.ObjectNew) {
					w.Add(keyOf(e.ObjectNew, true))
				}
			},
			DeleteFunc: func(_ context.Context, e event.TypedDeleteEvent[*autoscalingv2.HorizontalPodAutoscaler], w q) {
				w.Add(keyOf(e.Object, false))
			},
		}))
}

// Reconcile adds or removes the label on the target (a target that does
// not exist is left alone).
func (r *Reconciler) Reconcile(ctx context.Context, k Key) (reconcile.Result, error) {
	gv, err := schema.ParseGroupVersion(k.APIVersion)
	if err != nil || k.Kind == "" || k.Name == "" {
		ctrl.LoggerFrom(ctx).Info("Ignoring an HPA's unusable scaleTargetRef", "key", k.String())
		return reconcile.Result{}, nil
	}
	target := &unstructured.Unstructured{}
	target.SetGroupVersionKind(gv.WithKind(k.Kind))
	err = r.Reader.Get(ctx, client.ObjectKey{Namespace: k.Namespace, Name: k.Name}, target)
	if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
		return reconcile.Result{}, nil
	}
	if err != nil {
		return reconcile.Result{}, err
	}
	has := target.GetLabels()[policyv1alpha1.RetainReplicasLabel] == policyv1alpha1.RetainReplicasValue
	if has == k.Mark {
		return reconcile.Result{}, nil
	}
	patch := client.MergeFrom(target.DeepCopy())
	labels := target.GetLabels()
	if k.Mark {
		if labels == nil {
			labels = map[string]string{}
		}
		labels[policyv1alpha1.RetainReplicasLabel] = policyv1alpha1.RetainReplicasValue
	} else {
		delete(labels, policyv1alpha1.RetainReplicasLabel)
	}
	target.SetLabels(labels)
	return reconcile.Result{}, client.IgnoreNotFound(r.Client.Patch(ctx, target, patch))
}
