#!/usr/bin/env bash
# Fails when the generated files differ from what `make generate` produces.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Generate into a copy of the tree so the working tree is never modified.
tar -C "$root" --exclude=./bin --exclude=./.git --exclude=./_state --exclude=./_output -cf - . | tar -C "$tmp" -xf -
mkdir -p "$tmp/bin" && ln -s "$root/bin/controller-gen" "$tmp/bin/controller-gen"
(cd "$tmp" && SKIP_OPENAPI=1 hack/update-codegen.sh)
gen=(api config/crd charts/karmada/files)
stale=0
for d in "${gen[@]}"; do
  diff -r -q "$root/$d" "$tmp/$d" >/dev/null || stale=1
done
if [ "$stale" = 1 ]; then
  for d in "${gen[@]}"; do diff -r -u "$root/$d" "$tmp/$d" || true; done
  echo "generated files are out of date: run 'make generate' and commit the result" >&2
  exit 1
fi
echo "generated files are up to date"
