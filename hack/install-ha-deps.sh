#!/usr/bin/env bash
# Installs the Debian package `karmada-local up --ha` needs: haproxy, the
# load balancer in front of the two karmada-apiservers and karmada-webhooks.
# karmada-local runs its own haproxy process; the packaged service is not
# used.
set -euo pipefail
if dpkg-query -W -f='${Status}' haproxy 2>/dev/null | grep -q "install ok installed"; then
  echo "haproxy is installed"
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "installing haproxy needs root: run as root (sudo $0)" >&2
  exit 1
fi
echo "installing haproxy"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq || true
apt-get install -y -qq --no-install-recommends haproxy
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet haproxy 2>/dev/null; then
  systemctl disable --now haproxy || true
fi
# Where no service manager runs, the package's init script may have started
# one on port 80 and the stats socket: stop it.
if [ -x /etc/init.d/haproxy ]; then /etc/init.d/haproxy stop >/dev/null 2>&1 || true; fi
