#!/usr/bin/env bash
# Builds our binaries as they were at an earlier commit (the build a fleet is
# upgraded from in the e2e lane's TestUpgradeInPlace) into their own bin
# directory, beside the upstream binaries of bin/ (symlinked: the pins are
# the same). Idempotent: a directory already built from that commit is kept.
#
#   hack/build-upgrade-from.sh COMMIT OUT_DIR BIN_DIR
set -euo pipefail
commit=${1:?the commit to build}
out=${2:?the directory to build into}
bin=${3:?bin/, holding the upstream binaries}
root=$(cd "$(dirname "$0")/.." && pwd)
if ! git -C "$root" cat-file -e "${commit}^{commit}" 2>/dev/null; then
  echo "commit $commit is not in this clone's history: TestUpgradeInPlace upgrades a fleet started from it (a full clone has it)" >&2
  exit 1
fi
full=$(git -C "$root" rev-parse "${commit}^{commit}")
if [ -f "$out/.commit" ] && [ "$(cat "$out/.commit")" = "$full" ] && [ -x "$out/karmada-local" ]; then
  echo "$out holds the build of ${full:0:12}"
  exit 0
fi
src=$(mktemp -d)
trap 'git -C "$root" worktree remove --force "$src" >/dev/null 2>&1 || rm -rf "$src"' EXIT
git -C "$root" worktree add --detach "$src" "$full" >/dev/null
mkdir -p "$out"
echo "building our binaries at ${full:0:12} into $out"
(cd "$src" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$out/" \
  ./cmd/karmada-local ./cmd/karmadactl ./cmd/karmada-controller-manager ./cmd/karmada-scheduler ./cmd/karmada-webhook ./cmd/karmada-agent)
for b in etcd kube-apiserver kube-controller-manager kube-scheduler kwok kubectl; do
  ln -sf "$bin/$b" "$out/$b"
done
echo "$full" > "$out/.commit"
