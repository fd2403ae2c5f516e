#!/usr/bin/env bash
# Regenerates deepcopy functions and CRDs from the types in api/, and the
# chart's copy of the monitoring files (deploy/monitoring).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bin/controller-gen object paths=./api/...
# Only generated YAML lives in config/crd; remove old ones so renames do not linger.
find config/crd -name '*.yaml' -delete
bin/controller-gen crd:crdVersions=v1 paths=./api/... output:crd:artifacts:config=config/crd
# The OpenAPI karmada-aggregated-apiserver serves (checked against the types by
# internal/aggregatedapiserver/openapi's test, not by verify: it takes a while).
if [ -z "${SKIP_OPENAPI:-}" ]; then
  hack/update-openapi.sh
fi
# Helm reads only files inside the chart: it ships a copy.
mkdir -p charts/karmada/files/monitoring
cp deploy/monitoring/karmada-alerts.yaml deploy/monitoring/karmada-dashboard.json charts/karmada/files/monitoring/
