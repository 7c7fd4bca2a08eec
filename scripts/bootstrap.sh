#!/usr/bin/env bash
# Install everything the workbench needs on a fresh Debian 12 machine (root): the Debian
# tools the live workbench and the lab use, PostgreSQL for the store tests, and the Python
# package with its dependencies (editable, with the dev and lab extras) in its own virtual
# environment, $NIMO_VENV (default: .venv in the repository). Debian 12's python3 refuses
# `pip install` into the system (externally-managed-environment, PEP 668), so nothing is
# installed there. Use the environment afterwards with `source .venv/bin/activate` (or
# `.venv/bin/nimo`); scripts/test.sh and scripts/quickstart.sh find it themselves.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=${NIMO_VENV:-$(pwd)/.venv}
PYTHON=${NIMO_PYTHON:-python3}
APT_PACKAGES=(
  openssh-server openssh-client iproute2 iptables sysstat iperf3 iputils-ping procps psmisc
  tshark nfstrace sshfs fuse3 libnfs-utils nfs-ganesha nfs-ganesha-vfs rpcbind cpulimit
  libnetfilter-queue-dev gcc libc6-dev python3-dev python3-venv postgresql sqlite3 xz-utils
  slurmctld slurmd slurm-client munge
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

if [[ ! -x "$VENV/bin/python" ]]; then
  "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
    || { echo "bootstrap: $PYTHON is older than Python 3.11" >&2; exit 1; }
  echo "bootstrap: creating the virtual environment $VENV"
  "$PYTHON" -m venv "$VENV" \
    || { echo "bootstrap: '$PYTHON -m venv' failed (Debian: apt-get install python3-venv)" >&2
         exit 1; }
fi
"$VENV/bin/python" -m pip install -q --disable-pip-version-check -e ".[dev,lab]"
echo "bootstrap: ready in $VENV ($("$VENV/bin/nimo" --version)); activate with: source $VENV/bin/activate"
