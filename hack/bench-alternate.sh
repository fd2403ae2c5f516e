#!/usr/bin/env bash
# W1 on fresh fleets, two builds in turn: the way docs/performance.md compares
# a change with the build before it.
#
#   hack/bench-alternate.sh BEFORE_BIN_DIR AFTER_BIN_DIR [ROUNDS] [OUT_DIR]
#
# Each bin dir holds a whole build (make build's bin/, upstream binaries
# included). Each round brings up a fresh fleet (down --purge, up
# --nodes-per-member 11) for each build and runs
# `karmada-bench propagate --templates 1000 --floor --measure-fleet` on it.
set -u
before=${1:?the bin dir of the build before}
after=${2:?the bin dir of the build after}
rounds=${3:-2}
out=${4:-$(mktemp -d /tmp/bench-alternate.XXXX)}
mkdir -p "$out"
for round in $(seq 1 "$rounds"); do
  for which in before after; do
    if [ "$which" = before ]; then b=$before; else b=$after; fi
    s=$out/state-$which k=$out/kubeconfig-$which
    echo "=== round $round $which $(date +%T)"
    "$b/karmada-local" --state-dir "$s" down --purge >/dev/null 2>&1
    if ! "$b/karmada-local" up --state-dir "$s" --bin-dir "$b" --kubeconfig "$k" --nodes-per-member 11 >"$out/up-$which-$round.log" 2>&1; then
      echo "up failed:"; tail -5 "$out/up-$which-$round.log"; continue
    fi
    "$b/karmada-bench" propagate --templates 1000 --floor --measure-fleet --kubeconfig "$k" \
      --karmada-local-state-dir "$s" --out "$out/result-$which-$round.json" >"$out/bench-$which-$round.log" 2>&1
    echo "rc=$? $(grep 'wall / floor wall' "$out/bench-$which-$round.log")"
    "$b/karmada-local" --state-dir "$s" down --purge >/dev/null 2>&1
  done
done
echo "logs in $out"
