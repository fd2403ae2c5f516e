#!/usr/bin/env bash
# Builds the pinned upstream binaries (kube-apiserver, kube-controller-manager,
# kube-scheduler, kubectl, etcd, kwok) into bin/. A stamp file records the pins
# they were built from; when go.mod/go.sum of kube/ are unchanged and every
# binary exists, nothing is rebuilt.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin="$root/bin"
mkdir -p "$bin"

kube_bins=(kube-apiserver kube-controller-manager kube-scheduler kubectl etcd)
stamp="$bin/.upstream-stamp"
want=$(cat "$root/kube/go.mod" "$root/kube/go.sum" "$root/kube/kwok/go.mod" "$root/kube/kwok/go.sum" "$0" | sha256sum | cut -d' ' -f1)

missing=0
for b in "${kube_bins[@]}" kwok; do [ -x "$bin/$b" ] || missing=1; done
if [ "$missing" = 0 ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  echo "upstream binaries are up to date (pins unchanged)"
  exit 0
fi

# The Kubernetes version comes from the pin itself, so /version tells the truth.
kver=$(cd "$root/kube" && go list -m -f '{{.Version}}' k8s.io/kubernetes)
major=$(echo "${kver#v}" | cut -d. -f1)
minor=$(echo "${kver#v}" | cut -d. -f2)
date=$(date -u +%Y-%m-%dT%H:%M:%SZ)
ld="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ld="$ld -X $pkg.gitVersion=$kver -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor"
  ld="$ld -X $pkg.gitTreeState=clean -X $pkg.buildDate=$date"
done

echo "building ${kube_bins[*]} from k8s.io/kubernetes $kver (cold: several minutes)"
start=$(date +%s)
(cd "$root/kube" && go build -trimpath -ldflags "$ld" -o "$bin/" $(printf './%s ' "${kube_bins[@]}"))
echo "built in $(( $(date +%s) - start ))s"

kwokver=$(cd "$root/kube/kwok" && go list -m -f '{{.Version}}' sigs.k8s.io/kwok)
echo "building kwok $kwokver"
start=$(date +%s)
(cd "$root/kube/kwok" && go build -trimpath -ldflags "-s -w" -o "$bin/kwok" sigs.k8s.io/kwok/cmd/kwok)
echo "built in $(( $(date +%s) - start ))s"
echo "$want" > "$stamp"
