"""One sshd per lab host: its config, starting it inside the namespace, collecting host keys."""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import socket
import sys
from functools import partial
from pathlib import Path

from workbench.errors import LabError
from workbench.lab.netns import cgroup_mounts, sh, wait_until
from workbench.lab.network import LabHost

START_TIMEOUT_S = 5.0


def private_dir(path: Path) -> Path:
    """``path`` (and missing parents) as a directory only its owner can enter (0700): the
    lab's keys, known_hosts and host keys live there."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    path.chmod(0o700)
    return path


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` readable by its owner only (0600, also when it existed)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        os.fchmod(fd, 0o600)
        fh.write(text)


def sshd_config(h: LabHost, hdir: Path, authorized_keys: Path, prefix: str) -> str:
    """The sshd_config of host ``h`` (its files live in ``hdir``)."""
    path_env = os.pathsep.join(dict.fromkeys([
        str(Path(sys.executable).parent), "/usr/local/sbin", "/usr/local/bin", "/usr/sbin",
        "/usr/bin", "/sbin", "/bin"]))
    return "\n".join([
        f"# {prefix}lab host {h.name}",
        "Port 22",
        f"ListenAddress {h.address}",
        f"ListenAddress {h.data_address}",
        f"HostKey {hdir / 'ssh_host_ed25519_key'}",
        f"PidFile {hdir / 'sshd.pid'}",
        f"AuthorizedKeysFile {authorized_keys}",
        "PermitRootLogin prohibit-password",
        "PasswordAuthentication no",
        "KbdInteractiveAuthentication no",
        "UsePAM no",
        "StrictModes no",
        "UseDNS no",
        "Subsystem sftp internal-sftp",
        "MaxStartups 50:30:100",
        "MaxSessions 50",
        # SHLVL=1: bash skips ~/.bashrc for sshd-run commands (it cost ~90 ms per command)
        f"SetEnv PATH={path_env} SHLVL=1",
        "",
    ])


def start_sshd(h: LabHost, hdir: Path, authorized_keys: Path, prefix: str) -> int:
    """Start host ``h``'s sshd in its namespace (own UTS name, cgroups visible); its PID."""
    Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
    cfg = hdir / "sshd_config"
    write_private(cfg, sshd_config(h, hdir, authorized_keys, prefix))
    pidfile, log = hdir / "sshd.pid", hdir / "sshd.log"
    with contextlib.suppress(FileNotFoundError):
        pidfile.unlink()
    # `ip netns exec` mounts a fresh /sys that hides the cgroup hierarchies: re-mount them
    remount = [f"mkdir -p {shlex.quote(mp)} && mount -t {fstype} -o {shlex.quote(opts)} "
               f"{fstype} {shlex.quote(mp)}" for fstype, mp, opts in cgroup_mounts()]
    script = "set -e; hostname \"$1\"; " + "; ".join(remount) + '; exec "$2" -f "$3" -E "$4"'
    sh(["ip", "netns", "exec", h.netns, "unshare", "--uts", "sh", "-c", script,
        f"{prefix}sshd", h.hostname, shutil.which("sshd") or "/usr/sbin/sshd", str(cfg),
        str(log)])
    if not wait_until(lambda: pidfile.exists() and bool(pidfile.read_text().strip()),
                      START_TIMEOUT_S, interval_s=0.01):
        tail = log.read_text().strip()[-300:] if log.exists() else ""
        raise LabError(f"sshd of {h.name} did not start: {tail}")
    return int(pidfile.read_text().strip())


def known_hosts_lines(hosts: list[LabHost], hosts_dir: Path) -> list[str]:
    """known_hosts lines for every host's management and data-path address (scanned once
    every sshd accepts connections)."""
    for h in hosts:
        if not wait_until(partial(_accepts, h), START_TIMEOUT_S):
            raise LabError(f"sshd of {h.name} not reachable at {h.address}")
    out = sh(["ssh-keyscan", "-T", "3", "-t", "ed25519", *[h.address for h in hosts]])
    lines = [ln for ln in out.splitlines() if ln and not ln.startswith("#")]
    if len(lines) != len(hosts):
        raise LabError(f"ssh-keyscan found {len(lines)} of {len(hosts)} host keys")
    # data-path addresses (only reachable from inside the lab) carry the same host keys
    for h in hosts:
        pub = (hosts_dir / h.name / "ssh_host_ed25519_key.pub").read_text().split()
        lines.append(f"{h.data_address} {pub[0]} {pub[1]}")
    return lines


def _accepts(h: LabHost) -> bool:
    try:
        with socket.create_connection((h.address, h.port), timeout=0.5):
            return True
    except OSError:
        return False
