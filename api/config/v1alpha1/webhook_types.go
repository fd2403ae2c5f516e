package v1alpha1

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories={karmada-io}
// +kubebuilder:storageversion

// ResourceInterpreterWebhookConfiguration registers webhooks that interpret
// kinds: each names the kinds and operations it answers and how to reach
// it.
type ResourceInterpreterWebhookConfiguration struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Webhooks are the webhooks, each with its kinds and operations.
	// +required
	Webhooks []ResourceInterpreterWebhook `json:"webhooks"`
}

// ResourceInterpreterWebhook is one webhook: where it is, and what it
// answers.
type ResourceInterpreterWebhook struct {
	// Name is the webhook's fully-qualified name.
	// +required
	Name string `json:"name"`

	// ClientConfig is how to reach the webhook: a URL, or a Service, and
	// the CA that signs its serving certificate.
	// +required
	ClientConfig admissionregistrationv1.WebhookClientConfig `json:"clientConfig"`

	// Rules are the kinds and operations the webhook answers.
	// +optional
	Rules []RuleWithOperations `json:"rules,omitempty"`

	// TimeoutSeconds is how long a call may take, 1 to 30; default 10.
	// +optional
	TimeoutSeconds *int32 `json:"timeoutSeconds,omitempty"`

	// InterpreterContextVersions are the ResourceInterpreterContext
	// versions the webhook accepts, preferred first; only v1alpha1 exists.
	// +required
	InterpreterContextVersions []string `json:"interpreterContextVersions"`
}

// RuleWithOperations is kinds and the operations asked of them.
type RuleWithOperations struct {
	// Operations are the operations; "*" is all.
	// +required
	Operations []InterpreterOperation `json:"operations"`

	// Rule is the kinds.
	Rule `json:",inline"`
}

// Rule selects kinds by group, version and kind; "*" matches all.
type Rule struct {
	// APIGroups of the kinds; "" is the core group.
	// +required
	APIGroups []string `json:"apiGroups"`

	// APIVersions of the kinds.
	// +required
	APIVersions []string `json:"apiVersions"`

	// Kinds are the kinds.
	// +required
	Kinds []string `json:"kinds"`
}

// InterpreterOperation names an operation of the interpreter.
type InterpreterOperation string

// The operations, as Karmada names them.
const (
	InterpreterOperationAll                 InterpreterOperation = "*"
	InterpreterOperationInterpretReplica    InterpreterOperation = "InterpretReplica"
	InterpreterOperationInterpretComponent  InterpreterOperation = "InterpretComponent"
	InterpreterOperationReviseReplica       InterpreterOperation = "ReviseReplica"
	InterpreterOperationInterpretStatus     InterpreterOperation = "InterpretStatus"
	InterpreterOperationRetain              InterpreterOperation = "Retain"
	InterpreterOperationAggregateStatus     InterpreterOperation = "AggregateStatus"
	InterpreterOperationInterpretHealth     InterpreterOperation = "InterpretHealth"
	InterpreterOperationInterpretDependency InterpreterOperation = "InterpretDependency"
)

// +kubebuilder:object:root=true

// ResourceInterpreterWebhookConfigurationList is a list of webhook
// configurations.
type ResourceInterpreterWebhookConfigurationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the configurations.
	Items []ResourceInterpreterWebhookConfiguration `json:"items"`
}
