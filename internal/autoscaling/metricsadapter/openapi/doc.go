// Package openapi holds the OpenAPI definitions karmada-metrics-adapter
// serves, generated from metrics.k8s.io/v1beta1's types and the
// apimachinery types they use (hack/update-openapi.sh).
package openapi
