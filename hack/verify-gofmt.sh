#!/usr/bin/env bash
# Fails when any Go file is not gofmt-formatted.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# Tracked and untracked files, less those deleted but not yet committed.
files=$(cd "$root" && git ls-files -co --exclude-standard '*.go' | while read -r f; do if [ -e "$f" ]; then echo "$f"; fi; done)
bad=$(cd "$root" && gofmt -l $files)
if [ -n "$bad" ]; then
  echo "gofmt would change these files (run gofmt -w):" >&2
  echo "$bad" >&2
  exit 1
fi
echo "gofmt: clean"
