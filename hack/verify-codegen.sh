#!/usr/bin/env bash
# Fails when the generated files differ from what `make generate` produces.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Generate into a copy of the tree so the working tree is never modified.
tar -C "$root" --exclude=./bin --exclude=./.git --exclude=./_state -cf - . | tar -C "$tmp" -xf -
mkdir -p "$tmp/bin" && ln -s "$root/bin/controller-gen" "$tmp/bin/controller-gen"
(cd "$tmp" && hack/update-codegen.sh)
if ! diff -r -q "$root/api" "$tmp/api" >/dev/null || ! diff -r -q "$root/config/crd" "$tmp/config/crd" >/dev/null; then
  diff -r -u "$root/api" "$tmp/api" || true
  diff -r -u "$root/config/crd" "$tmp/config/crd" || true
  echo "generated files are out of date: run 'make generate' and commit the result" >&2
  exit 1
fi
echo "generated files are up to date"
