#!/usr/bin/env bash
# Install everything the workbench needs on a fresh Debian 12 machine (root): the Debian
# tools the live workbench and the lab use, PostgreSQL for the store tests, and the Python
# package with its dependencies (editable, with the dev and lab extras).
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(
  openssh-server openssh-client iproute2 iptables sysstat iperf3 iputils-ping procps psmisc
  tshark nfstrace sshfs fuse3 libnfs-utils nfs-ganesha nfs-ganesha-vfs rpcbind cpulimit
  libnetfilter-queue-dev gcc libc6-dev python3-dev postgresql sqlite3 xz-utils
)

if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
  missing=()
  for p in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if ((${#missing[@]})); then
    echo "bootstrap: apt-get install ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
else
  echo "bootstrap: not root or no apt-get; skipping Debian packages (the live lab needs them)" >&2
fi

python3 -m pip install -q --disable-pip-version-check -e ".[dev,lab]"
echo "bootstrap: ready ($(python3 -c 'import nimo; print("nimo", nimo.__version__)'))"
