#!/usr/bin/env bash
# Installs the Debian packages the host cluster of `karmada-local host` needs:
# containerd (with ctr) and runc run the pods' containers, the CNI plugins
# give them a network, iptables carries kube-proxy's Service rules. Nothing
# else is downloaded: every image is built by `make images`.
set -euo pipefail
pkgs=(containerd runc containernetworking-plugins iptables)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "host packages are installed: ${pkgs[*]}"
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "installing ${missing[*]} needs root: run as root (sudo $0)" >&2
  exit 1
fi
echo "installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq || true
apt-get install -y -qq --no-install-recommends "${missing[@]}"
# The packaged containerd service is not used (karmada-local runs its own,
# with its own state); stop it where a service manager started it.
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet containerd 2>/dev/null; then
  systemctl disable --now containerd || true
fi
