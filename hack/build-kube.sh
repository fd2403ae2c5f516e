#!/usr/bin/env bash
# Builds the pinned upstream binaries into bin/: by default what the local
# fleet runs (kube-apiserver, kube-controller-manager, kube-scheduler, kubectl,
# etcd, kwok, metrics-server); with the argument `host`, what the host cluster of
# `karmada-local host` and the images add (kubelet, kube-proxy, CoreDNS). A
# stamp file per set records the pins it was built from; when they are
# unchanged and every binary exists, nothing is rebuilt. Every binary is
# static (CGO_ENABLED=0), so that the same file runs on the machine and in an
# image.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin="$root/bin"
mkdir -p "$bin"
export CGO_ENABLED=0

set_name=${1:-fleet}
case "$set_name" in
  fleet)
    kube_bins=(kube-apiserver kube-controller-manager kube-scheduler kubectl etcd)
    others=(kwok metrics-server)
    stamp="$bin/.upstream-stamp"
    inputs=("$root/kube/go.mod" "$root/kube/go.sum" "$root/kube/kwok/go.mod" "$root/kube/kwok/go.sum" "$root/kube/metrics-server/go.mod" "$root/kube/metrics-server/go.sum")
    ;;
  host)
    kube_bins=(kubelet kube-proxy)
    others=(coredns)
    stamp="$bin/.upstream-host-stamp"
    inputs=("$root/kube/go.mod" "$root/kube/go.sum" "$root/kube/coredns/go.mod" "$root/kube/coredns/go.sum" "$root/kube/coredns/main.go")
    ;;
  *)
    echo "usage: $0 [fleet|host]" >&2
    exit 2
    ;;
esac
want=$(cat "${inputs[@]}" "$0" | sha256sum | cut -d' ' -f1)

missing=0
for b in "${kube_bins[@]}" "${others[@]}"; do [ -x "$bin/$b" ] || missing=1; done
if [ "$missing" = 0 ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  echo "upstream binaries ($set_name) are up to date (pins unchanged)"
  exit 0
fi

# The Kubernetes version comes from the pin itself, so /version tells the truth.
kver=$(cd "$root/kube" && go list -m -f '{{.Version}}' k8s.io/kubernetes)
major=$(echo "${kver#v}" | cut -d. -f1)
minor=$(echo "${kver#v}" | cut -d. -f2)
# The build date is the pin's, not the clock's, so that two builds of the same
# pins give the same binaries (and images).
date=$(date -u -d "@$(cd "$root" && git log -1 --format=%ct -- kube/go.mod 2>/dev/null || echo 0)" +%Y-%m-%dT%H:%M:%SZ)
ld="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ld="$ld -X $pkg.gitVersion=$kver -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor"
  ld="$ld -X $pkg.gitTreeState=clean -X $pkg.buildDate=$date"
done

echo "building ${kube_bins[*]} from k8s.io/kubernetes $kver (cold: several minutes)"
start=$(date +%s)
(cd "$root/kube" && go build -trimpath -ldflags "$ld" -o "$bin/" $(printf './%s ' "${kube_bins[@]}"))
echo "built in $(( $(date +%s) - start ))s"

if [ "$set_name" = fleet ]; then
  kwokver=$(cd "$root/kube/kwok" && go list -m -f '{{.Version}}' sigs.k8s.io/kwok)
  echo "building kwok $kwokver"
  start=$(date +%s)
  (cd "$root/kube/kwok" && go build -trimpath -ldflags "-s -w" -o "$bin/kwok" sigs.k8s.io/kwok/cmd/kwok)
  echo "built in $(( $(date +%s) - start ))s"
  msver=$(cd "$root/kube/metrics-server" && go list -m -f '{{.Version}}' sigs.k8s.io/metrics-server)
  echo "building metrics-server $msver"
  start=$(date +%s)
  (cd "$root/kube/metrics-server" && go build -trimpath -ldflags "-s -w -X k8s.io/client-go/pkg/version.gitVersion=$msver" -o "$bin/metrics-server" sigs.k8s.io/metrics-server/cmd/metrics-server)
  echo "built in $(( $(date +%s) - start ))s"
else
  corednsver=$(cd "$root/kube/coredns" && go list -m -f '{{.Version}}' github.com/coredns/coredns)
  echo "building coredns $corednsver"
  start=$(date +%s)
  (cd "$root/kube/coredns" && go build -trimpath -ldflags "-s -w -X github.com/coredns/coredns/coremain.GitCommit=$corednsver" -o "$bin/coredns" .)
  echo "built in $(( $(date +%s) - start ))s"
fi
echo "$want" > "$stamp"
