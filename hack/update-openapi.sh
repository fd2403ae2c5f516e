#!/usr/bin/env bash
# Regenerates the OpenAPI definitions karmada-aggregated-apiserver serves,
# from the Cluster API's types and the apimachinery types they use (core/v1's
# Taint is written by hand in internal/aggregatedapiserver/openapi).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
: >"${TMPDIR:-/tmp}/openapi-boilerplate.txt"
bin/openapi-gen \
  --output-dir internal/aggregatedapiserver/openapi \
  --output-pkg github.com/karmada-go/karmada/internal/aggregatedapiserver/openapi \
  --output-file zz_generated.openapi.go \
  --go-header-file "${TMPDIR:-/tmp}/openapi-boilerplate.txt" \
  --report-filename "${TMPDIR:-/tmp}/openapi-api-rules.txt" \
  github.com/karmada-go/karmada/api/cluster/v1alpha1 \
  k8s.io/apimachinery/pkg/apis/meta/v1 \
  k8s.io/apimachinery/pkg/runtime \
  k8s.io/apimachinery/pkg/version \
  k8s.io/apimachinery/pkg/api/resource \
  k8s.io/apimachinery/pkg/util/intstr
# karmada-search's: ResourceRegistry, and the two policy types its target
# uses (tagged one by one); core/v1's NodeSelectorRequirement is written by
# hand in internal/search/openapi.
bin/openapi-gen \
  --output-dir internal/search/openapi \
  --output-pkg github.com/karmada-go/karmada/internal/search/openapi \
  --output-file zz_generated.openapi.go \
  --go-header-file "${TMPDIR:-/tmp}/openapi-boilerplate.txt" \
  --report-filename "${TMPDIR:-/tmp}/openapi-api-rules-search.txt" \
  github.com/karmada-go/karmada/api/search/v1alpha1 \
  github.com/karmada-go/karmada/api/policy/v1alpha1 \
  github.com/karmada-go/karmada/api/cluster/v1alpha1 \
  k8s.io/apimachinery/pkg/apis/meta/v1 \
  k8s.io/apimachinery/pkg/runtime \
  k8s.io/apimachinery/pkg/version
# karmada-metrics-adapter's: metrics.k8s.io/v1beta1's PodMetrics and
# NodeMetrics, and the apimachinery types they use.
bin/openapi-gen \
  --output-dir internal/autoscaling/metricsadapter/openapi \
  --output-pkg github.com/karmada-go/karmada/internal/autoscaling/metricsadapter/openapi \
  --output-file zz_generated.openapi.go \
  --go-header-file "${TMPDIR:-/tmp}/openapi-boilerplate.txt" \
  --report-filename "${TMPDIR:-/tmp}/openapi-api-rules-metrics.txt" \
  k8s.io/metrics/pkg/apis/metrics/v1beta1 \
  k8s.io/apimachinery/pkg/apis/meta/v1 \
  k8s.io/apimachinery/pkg/runtime \
  k8s.io/apimachinery/pkg/version \
  k8s.io/apimachinery/pkg/api/resource
