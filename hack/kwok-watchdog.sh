#!/usr/bin/env bash
# kwok-watchdog.sh restarts a member's kwok when it has fallen behind: when a
# pod has been bound to a node for longer than STALL seconds (default 120)
# and is still Pending. kwok marks a bound pod Running within a second when it
# keeps up; at 8,000 to 9,000 pods in one member on a 2-core machine it can
# stop keeping up for many minutes, and a restart (which lists the pods
# afresh) clears it. Used for the K = 10,000 runs of docs/performance.md,
# which say how often it acted; every restart is logged with the time, the
# member and the oldest stuck pod. A member is not checked again for 2 * STALL
# after a restart of its kwok, which lists every pod afresh.
#
#   hack/kwok-watchdog.sh [member ...]      # default: member1 member2 member3
#
# Environment: KUBECONFIG (default ~/.kube/karmada.config), KARMADA_LOCAL
# (default bin/karmada-local), STALL (seconds, default 120), EVERY (seconds
# between checks, default 20). Stop it with Ctrl-C.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
export KUBECONFIG=${KUBECONFIG:-$HOME/.kube/karmada.config}
kubectl=${KUBECTL:-$root/bin/kubectl}
karmada_local=${KARMADA_LOCAL:-$root/bin/karmada-local}
stall=${STALL:-120}
every=${EVERY:-20}
members=("$@")
[ ${#members[@]} -gt 0 ] || members=(member1 member2 member3)

declare -A quiet_until
while true; do
	now=$(date +%s)
	for m in "${members[@]}"; do
		[ "${quiet_until[$m]:-0}" -le "$now" ] || continue
		# The oldest PodScheduled time among bound pods still Pending.
		oldest=$("$kubectl" --context "$m" get pods -A \
			--field-selector=status.phase=Pending,spec.nodeName!= \
			-o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="PodScheduled")].lastTransitionTime} {.metadata.namespace}/{.metadata.name}{"\n"}{end}' \
			2>/dev/null | sort | sed -n 1p) || continue
		[ -n "$oldest" ] || continue
		since=$(date -d "${oldest%% *}" +%s 2>/dev/null) || continue
		if [ $((now - since)) -gt "$stall" ]; then
			echo "$(date -u +%H:%M:%S) $m: ${oldest#* } bound ${oldest%% *}, Pending for $((now - since))s; restarting $m/kwok"
			"$karmada_local" component restart "$m/kwok" || echo "$(date -u +%H:%M:%S) $m: restart failed"
			# kwok lists every pod afresh after a restart: give it time.
			quiet_until[$m]=$((now + 2 * stall))
		fi
	done
	sleep "$every"
done
