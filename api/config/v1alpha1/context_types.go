package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
)

// ResourceInterpreterContext is the body of a call to an interpreter
// webhook (Request) and of its answer (Response). It is never stored.
type ResourceInterpreterContext struct {
	metav1.TypeMeta `json:",inline"`

	// Request is the question.
	// +optional
	Request *ResourceInterpreterRequest `json:"request,omitempty"`

	// Response is the answer.
	// +optional
	Response *ResourceInterpreterResponse `json:"response,omitempty"`
}

// ResourceInterpreterRequest asks one operation of one object.
type ResourceInterpreterRequest struct {
	// UID identifies the call; the response repeats it.
	// +required
	UID types.UID `json:"uid"`

	// Kind of the object.
	// +required
	Kind metav1.GroupVersionKind `json:"kind"`

	// Name of the object.
	// +required
	Name string `json:"name"`

	// Namespace of the object.
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// Operation asked.
	// +required
	Operation InterpreterOperation `json:"operation"`

	// Object is the template (or, for InterpretStatus and InterpretHealth,
	// the member's copy).
	// +optional
	Object runtime.RawExtension `json:"object,omitempty"`

	// ObservedObject is the member's copy, for Retain.
	// +optional
	ObservedObject *runtime.RawExtension `json:"observedObject,omitempty"`

	// DesiredReplicas is the replica count, for ReviseReplica.
	// +optional
	DesiredReplicas *int32 `json:"replicas,omitempty"`

	// AggregatedStatus is every cluster's status, for AggregateStatus.
	// +optional
	AggregatedStatus []workv1alpha2.AggregatedStatusItem `json:"aggregatedStatus,omitempty"`
}

// ResourceInterpreterResponse answers a request.
type ResourceInterpreterResponse struct {
	// UID is the request's.
	// +required
	UID types.UID `json:"uid"`

	// Successful says whether the webhook answered.
	// +required
	Successful bool `json:"successful"`

	// Status says why not.
	// +optional
	Status *RequestStatus `json:"status,omitempty"`

	// Patch is an RFC 6902 JSON patch to the request's object (Retain,
	// ReviseReplica, AggregateStatus).
	// +optional
	Patch []byte `json:"patch,omitempty"`

	// PatchType is JSONPatch.
	// +optional
	PatchType *PatchType `json:"patchType,omitempty"`

	// ReplicaRequirements is what one replica needs (InterpretReplica).
	// +optional
	ReplicaRequirements *workv1alpha2.ReplicaRequirements `json:"replicaRequirements,omitempty"`

	// Replicas is the replica count (InterpretReplica).
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// Components are the workload's components (InterpretComponent).
	// +optional
	Components []workv1alpha2.Component `json:"components,omitempty"`

	// Dependencies are what the workload needs (InterpretDependency).
	// +optional
	Dependencies []DependentObjectReference `json:"dependencies,omitempty"`

	// RawStatus is the status collected (InterpretStatus).
	// +optional
	RawStatus *runtime.RawExtension `json:"rawStatus,omitempty"`

	// Healthy is the health (InterpretHealth).
	// +optional
	Healthy *bool `json:"healthy,omitempty"`
}

// RequestStatus says why a call did not succeed.
type RequestStatus struct {
	// Message for people.
	// +optional
	Message string `json:"message,omitempty"`

	// Code is an HTTP status code.
	// +optional
	Code int32 `json:"code,omitempty"`
}

// PatchType is the kind of a response's patch.
type PatchType string

// PatchTypeJSONPatch is RFC 6902, the only one.
const PatchTypeJSONPatch PatchType = "JSONPatch"

// DependentObjectReference names an object a workload needs: by name, or
// by a label selector when name is empty.
type DependentObjectReference struct {
	// APIVersion of the object.
	// +required
	APIVersion string `json:"apiVersion"`

	// Kind of the object.
	// +required
	Kind string `json:"kind"`

	// Namespace of the object; empty for a cluster-scoped one.
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// Name of the object.
	// +optional
	Name string `json:"name,omitempty"`

	// LabelSelector selects objects when Name is empty.
	// +optional
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`
}

// DeepCopyObject implements runtime.Object. (Written here: marked as a
// root type, controller-gen would also make the context a CRD, and it is
// never stored.)
func (in *ResourceInterpreterContext) DeepCopyObject() runtime.Object {
	return in.DeepCopy()
}
