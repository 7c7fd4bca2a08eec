"""Run the checks on every host of an inventory, in parallel over hosts.

Each host is first reached over SSH exactly as the runner reaches it (its key, host keys
verified against its known_hosts, no retries: a refusal is not transient). A host that
cannot be reached gets one ``ssh`` blocker and no further checks.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

from nimo.errors import one_line
from workbench.doctor.checks import BLOCKER, CHECKS, OK, WARN, Check, Context
from workbench.errors import HostError, HostRefused, WorkbenchError
from workbench.inventory import Host, Inventory, load_inventory
from workbench.remote import Connection
from workbench.remote.group import run_parallel

Connect = Callable[[Host], Connection]
CONNECT_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Finding:
    """The result of one check on one host."""

    host: str
    check: str
    level: str
    detail: str

    def to_dict(self) -> dict[str, str]:
        return {"host": self.host, "check": self.check, "level": self.level,
                "detail": self.detail}


class PreflightError(WorkbenchError):
    """A blocker found by ``nimo doctor`` before a campaign: it would fail every run."""


def ssh_connect(host: Host) -> Connection:
    """The runner's connection to ``host`` (its key and known_hosts), without retries."""
    return Connection.for_host(host, connect_timeout=CONNECT_TIMEOUT_S, retries=0)


def check_host(host: Host, inventory: Inventory, connect: Connect,
               checks: Sequence[Check] = CHECKS) -> list[Finding]:
    """Every check that applies to ``host``, in order (``ssh`` first)."""
    conn = connect(host)
    try:
        t0 = time.time()
        try:
            conn.open()
        except HostRefused as e:
            return [Finding(host.name, "ssh", BLOCKER, one_line(e))]
        except HostError as e:
            return [Finding(host.name, "ssh", BLOCKER, one_line(e))]
        found = [Finding(host.name, "ssh", OK,
                         f"{host.user}@{host.address}:{host.port}, key and host key accepted "
                         f"({time.time() - t0:.2f} s)")]
        for check in checks:
            ctx = Context(host, inventory)
            if check.applies(ctx):
                found.append(_run_check(conn, check, ctx))
        return found
    finally:
        conn.close()


def _run_check(conn: Connection, check: Check, ctx: Context) -> Finding:
    name = ctx.host.name
    try:
        t0 = time.time()
        result = conn.run(list(check.argv(ctx)), check=False, timeout=check.timeout_s)
        ctx = Context(ctx.host, ctx.inventory, local_time=(t0 + time.time()) / 2)
        level, detail = check.parse(result, ctx)
    except WorkbenchError as e:
        level, detail = BLOCKER, f"could not run the check: {one_line(e)}"
    return Finding(name, check.name, level, detail)


def diagnose(inventory: Inventory, connect: Connect | None = None,
             checks: Sequence[Check] = CHECKS) -> list[Finding]:
    """Findings for every host of ``inventory`` (hosts checked concurrently), host by host
    in inventory order; ``connect`` defaults to ``ssh_connect``. With ``executor: slurm``
    the cluster's checks instead (``workbench.doctor.slurm``)."""
    if inventory.executor == "slurm":  # the cluster is checked, not SSH hosts
        from workbench.doctor.slurm import diagnose_slurm

        return [Finding(*f) for f in diagnose_slurm(inventory)]
    connect = connect or ssh_connect
    got = run_parallel({h.name: partial(check_host, h, inventory, connect, checks)
                        for h in inventory.hosts})
    out: list[Finding] = []
    for h in inventory.hosts:
        value = got[h.name]
        if isinstance(value, BaseException):
            out.append(Finding(h.name, "doctor", BLOCKER, f"check crashed: {one_line(value)}"))
        else:
            out.extend(value)
    return out


def blockers(findings: Sequence[Finding]) -> list[Finding]:
    return [f for f in findings if f.level == BLOCKER]


def warnings(findings: Sequence[Finding]) -> list[Finding]:
    return [f for f in findings if f.level == WARN]


def preflight(inventory_path: str, connect: Connect | None = None) -> list[Finding]:
    """``diagnose`` before a campaign: the first blocker raises ``PreflightError`` (one line
    naming the host and the check); returns the findings otherwise."""
    findings = diagnose(load_inventory(inventory_path), connect)
    bad = blockers(findings)
    if bad:
        first = bad[0]
        more = f" (and {len(bad) - 1} more blocker(s))" if len(bad) > 1 else ""
        raise PreflightError(
            f"{inventory_path}: host {first.host}, check {first.check}: {first.detail}{more}",
            hint=f"`nimo doctor {inventory_path}` shows every check; --skip-doctor bypasses")
    return findings
