// Package v1alpha1 holds the config.karmada.io/v1alpha1 API: what teaches
// Karmada a kind it does not know natively, as Lua scripts
// (ResourceInterpreterCustomization) or as webhooks
// (ResourceInterpreterWebhookConfiguration), and the wire format of a call
// to such a webhook (ResourceInterpreterContext).
//
// +kubebuilder:object:generate=true
// +groupName=config.karmada.io
package v1alpha1
