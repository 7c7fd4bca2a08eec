"""Issue 11 defect 16 on a real lab: the files `nimo lab up` writes that hold keys (its client
key, known_hosts, authorized_keys, each host's sshd_config and host key) are readable by their
owner only and live in owner-only directories, even under a permissive umask; and the lab's
hosts still accept the lab's key (sshd's own checks are satisfied)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

pytestmark = pytest.mark.lab


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_lab_keys_and_known_hosts_are_owner_only(tmp_path_factory) -> None:
    from conftest import running_lab

    old = os.umask(0)  # the worst case: every file the lab writes plainly would be 0666
    try:
        with running_lab(tmp_path_factory, hosts=2) as lab:
            assert mode(lab.dir) == 0o700
            for f in (lab.key_file, lab.known_hosts, lab.authorized_keys):
                assert mode(f) == 0o600, f
            for h in lab.hosts:
                hdir = lab.dir / "hosts" / h.name
                assert mode(hdir) == 0o700
                assert mode(hdir / "ssh_host_ed25519_key") == 0o600
                assert mode(hdir / "sshd_config") == 0o600
            with lab.connect(lab.hosts[-1].name) as conn:
                assert conn.run(["true"]).ok
    finally:
        os.umask(old)
