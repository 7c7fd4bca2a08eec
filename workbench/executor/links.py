"""Why a compute host could not mount its storage host's export over sshfs.

sshfs hides the ssh client's stderr ("read: Connection reset by peer" whatever happened), so
after a failed sshfs mount the compute host logs in to the storage host with plain ``ssh``
and the same options, and its answer decides:

* refused for good (host key changed or unknown, known_hosts missing, key rejected or
  missing): ``HostRefused``, which stops the campaign at once (``executor.stops``);
* anything else (no route, timeout: a data link down): ``HostError``, a transient failure
  of this compute host, which leaves the rotation for a while (``executor.rotation``).
"""

from __future__ import annotations

from workbench.errors import HostError, HostRefused, RemoteCommandFailed
from workbench.executor.reasons import raised_from
from workbench.inventory import Host, Inventory
from workbench.remote import Connection

# ssh client messages that no retry can change
REFUSALS = ("Host key verification failed", "Permission denied", "not accessible",
            "REMOTE HOST IDENTIFICATION HAS CHANGED", "No such file or directory")


def login_argv(inv: Inventory, storage: Host) -> list[str]:
    """Pure: ``ssh`` with sshfs's options, to run ``true`` on the storage host's data
    address from a compute host."""
    st = inv.storage
    argv = ["ssh", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes",
            "-o", "PasswordAuthentication=no", "-o", "ConnectTimeout=5",
            "-p", str(int(storage.port))]
    key = st.identity_file or storage.key_file
    known = st.known_hosts or storage.known_hosts
    if key:
        argv += ["-i", str(key), "-o", "IdentitiesOnly=yes"]
    if known:
        argv += ["-o", f"UserKnownHostsFile={known}"]
    return [*argv, f"{storage.user}@{storage.data_address}", "true"]


def is_sshfs_failure(error: BaseException) -> bool:
    """Whether ``error`` (or an error it was raised from) is a failed ``sshfs`` command."""
    seen: set[int] = set()
    e: BaseException | None = error
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if isinstance(e, RemoteCommandFailed) and e.result.argv[:1] == ("sshfs",):
            return True
        e = raised_from(e)
    return False


def diagnose_sshfs(cconn: Connection, inv: Inventory, compute: Host, storage: Host,
                   error: BaseException) -> BaseException:
    """The error to raise for a failed sshfs mount of ``storage`` on ``compute``: a
    ``HostRefused`` or ``HostError`` naming ssh's own last line, else ``error`` itself."""
    try:
        probe = cconn.run(login_argv(inv, storage), check=False, timeout=20)
    except HostError:
        return error  # the compute host itself went away: the mount's error says so
    lines = [" ".join(ln.split()) for ln in probe.stderr.splitlines() if ln.strip()]
    cause = lines[-1] if lines else f"ssh exited {probe.exit_code}"
    where = (f"{compute.name}: cannot log in to {storage.name} ({storage.user}@"
             f"{storage.data_address}) to mount its export over sshfs")
    if probe.ok:
        return error
    if any(r in probe.stderr for r in REFUSALS):
        known = inv.storage.known_hosts or storage.known_hosts or "~/.ssh/known_hosts"
        key = inv.storage.identity_file or storage.key_file or "the default key"
        return HostRefused(f"{cause} ({where}; known_hosts {known}, key {key}: paths on "
                           f"{compute.name}, storage.known_hosts / storage.identity_file)")
    return HostError(f"{cause} ({where})")
