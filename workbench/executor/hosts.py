"""The runner's hosts: their connections, and what each host needs once per runner.

The pool also holds the inventory's resource space (the assignments its knobs span).

Preparing a host (once, by the first run that uses it): the shipped app scripts uploaded
(atomically) to a private app dir made for this runner (``mktemp -d``, mode 0700, named after
the campaign and recorded in the host's marker, see ``workbench.emulation.hostobjects``), sadc
looked up, and on a storage host the dataset generated (or checked).
"""

from __future__ import annotations

import contextlib
import secrets
import sys
import threading
from collections.abc import Callable, Mapping

from nimo.errors import one_line
from workbench import apps as shipped
from workbench.clean import clean, remove_empty_parents
from workbench.emulation.hostobjects import (
    campaign_token,
    check_parent,
    forget,
    forget_campaign_on,
    private_dir,
    put_atomic,
)
from workbench.emulation.network import route_iface
from workbench.errors import HostError, WorkbenchError
from workbench.exitstatus import interrupts_deferred
from workbench.inventory import Host, Inventory, render_argv
from workbench.monitors import find_sadc
from workbench.remote import Connection
from workbench.retry import until_done
from workbench.workload import WorkloadData

Connect = Callable[[Host], Connection]
PREPARE_WAIT_S = 600


class HostPool:
    """Lazily opened connections to an inventory's hosts, and their one-time preparation."""

    def __init__(self, inventory: Inventory, connect: Connect) -> None:
        self.inventory = inventory
        self.campaign = ""  # names every object a run makes (set by SSHRunner.attach)
        self.app_dirs: dict[str, str] = {}  # host -> its private app dir
        self.parents: dict[str, list[str]] = {}  # host -> work dir parents made (rmdir'd at close)
        self._apps_id = f"apps-{secrets.token_hex(2)}"
        self.space = inventory.space()
        self.sadc: dict[str, str | None] = {}
        self._connect = connect
        self._conns: dict[str, Connection] = {}
        self._lock = threading.RLock()
        self._prepared: dict[str, threading.Event] = {}
        self._peer_iface: dict[str, str] = {}
        self.workload = WorkloadData(inventory, self.app_dirs)  # per-level datasets (dataset_mb)
        self.left_behind = False  # a run's teardown was cut short: sweep at close

    def conn(self, name: str, lane: str | None = None) -> Connection:
        """The persistent connection to a host (opened lazily). ``lane`` (a compute host's
        name) gives a shared storage host one connection per concurrent run, so runs never
        share an SSH/SFTP session across threads."""
        key = name if lane is None or lane == name else f"{name}@{lane}"
        with self._lock:
            if key not in self._conns:
                self._conns[key] = self._connect(self.inventory.host(name))
            return self._conns[key]

    def reset(self, compute: Host) -> None:
        """Close a lane's connections (after a transient failure); they reopen when used."""
        with contextlib.suppress(Exception):
            self.conn(compute.name).close()
            self.conn(self.inventory.storage_for(compute).name, compute.name).close()

    def run_id(self, run: int, attempt: int) -> str:
        """A new attempt's id: ``<campaign token>-r<run>-<attempt>-<hex>``."""
        return f"{campaign_token(self.campaign)}-r{run}-{attempt}-{secrets.token_hex(2)}"

    def close(self) -> None:
        """Remove the app dirs and close every connection (idempotent). An interrupt (a
        second Ctrl-C or SIGTERM) does not cut it short: it is raised once all is removed.
        A broken connection is reopened for the removal; a dir that still cannot be removed
        is named on stderr (its host's marker keeps it for ``nimo clean``)."""
        with interrupts_deferred(), self._lock:
            named: set[str] = set()  # hosts already named on stderr
            for name, app_dir in list(self.app_dirs.items()):
                if not self._remove_app_dir(name, app_dir):
                    named.add(name)
                del self.app_dirs[name]
            if self.left_behind and self.campaign:
                self._sweep(skip=named)
            for conn in self._conns.values():
                with contextlib.suppress(Exception):
                    conn.close()
            self._conns.clear()

    def _sweep(self, skip: set[str]) -> None:
        """Remove what this campaign's runs left on the hosts used (a teardown a host cut
        short, ``workbench.clean``); a host where that fails is named on stderr. Hosts in
        ``skip`` just failed the app dir's removal and were named already."""
        for name in sorted({key.split("@")[0] for key in self._conns} - skip):
            try:
                clean(self.conn(name), campaign=self.campaign)
                forget_campaign_on(name, self.campaign)
            except Exception as e:  # noqa: BLE001 - every host gets its chance
                print(f"nimo: {name}: could not remove what runs of campaign {self.campaign} "
                      f"left there ({one_line(e)}); {self._clean_hint()} removes it",
                      file=sys.stderr)
        self.left_behind = False

    def _clean_hint(self) -> str:
        """The command that removes what this campaign left on its hosts."""
        which = f"--campaign {self.campaign} " if self.campaign else ""
        return f"`nimo clean {which}{self.inventory.path}`"

    def _remove_app_dir(self, name: str, app_dir: str, attempts: int = 3) -> bool:
        """Remove a host's app dir (False, and the host named on stderr, if it fails)."""
        def remove() -> None:
            conn = self.conn(name)
            conn.run(["rm", "-rf", "--", app_dir], timeout=60, check=True)
            remove_empty_parents(conn, self.parents.get(name, []))
            forget(conn, self._apps_run_id())

        def reopen() -> None:  # a connection cut by the interrupt
            with contextlib.suppress(Exception):
                self._conns.pop(name).close()

        error = until_done(remove, attempts, pause_s=0, after_failure=reopen)
        if error is None:
            return True
        more = " and what its runs left there" if self.left_behind and self.campaign else ""
        print(f"nimo: {name}: could not remove {app_dir}{more} ({error}); "
              f"{self._clean_hint()} removes it", file=sys.stderr)
        return False

    def prepare(self, compute: Host, storage: Host) -> None:
        """Prepare both hosts of a lane once; later runs wait for the first one's result."""
        for host in (storage, compute):
            with self._lock:
                event = self._prepared.get(host.name)
                first = event is None
                if event is None:
                    event = self._prepared[host.name] = threading.Event()
            if first:
                self._prepare_once(host, event)
            else:
                event.wait(PREPARE_WAIT_S)
                if host.name not in self._prepared:
                    raise HostError(f"{host.name}: preparation failed in another run")

    def _prepare_once(self, host: Host, done: threading.Event) -> None:
        try:
            self._prepare_host(host)
        except BaseException:
            with self._lock:
                del self._prepared[host.name]
            raise
        finally:
            done.set()

    def _prepare_host(self, host: Host) -> None:
        conn = self.conn(host.name)
        with self._lock:  # a preparation that failed before made it: reuse it
            app_dir = self.app_dirs.get(host.name)
        if app_dir is None:
            app_dir = private_dir(conn, self._apps_run_id(), "apps")
            with self._lock:
                self.app_dirs[host.name] = app_dir
        workdir = self.inventory.application.workdir
        if host.role == "compute" and workdir != "/tmp" and host.name not in self.parents:
            # made now (or made by another campaign still running), recorded with the app
            # dir: removed (if empty) when the campaign ends
            self.parents[host.name] = check_parent(conn, workdir, self._apps_run_id(),
                                                   adopt=True)
        for f in shipped.script_files():
            put_atomic(conn, f, f"{app_dir}/{f.name}", mode=0o755)
        self.sadc[host.name] = find_sadc(conn) if self.inventory.monitors.sar else None
        if host.role == "storage" and not self.workload.active:
            self._ensure_dataset(host, conn)

    def _ensure_dataset(self, host: Host, conn: Connection) -> None:
        app, st = self.inventory.application, self.inventory.storage
        path = f"{st.export}/{app.dataset.path}"
        conn.run(["mkdir", "-p", st.export], timeout=30)
        if app.dataset.generate:
            argv = render_argv(app.dataset.generate, self.values(host.name, path, "/tmp", 0, {}))
            conn.run(argv, timeout=max(600.0, app.timeout_s))
        elif not conn.run(["test", "-e", path], check=False, timeout=10).ok:
            raise WorkbenchError(f"{host.name}: dataset {path} is missing and "
                                 "application.dataset.generate is not set")

    def storage_iface(self, compute: Host, storage: Host) -> str:
        """The storage host's interface facing ``compute`` (its ``peer_iface``, else routed)."""
        if compute.peer_iface:
            return compute.peer_iface
        with self._lock:
            if compute.name in self._peer_iface:
                return self._peer_iface[compute.name]
        conn = self.conn(storage.name, compute.name)
        iface = route_iface(conn, compute.data_address) or storage.data_iface
        with self._lock:
            self._peer_iface[compute.name] = iface
        return iface

    def _apps_run_id(self) -> str:
        return f"{campaign_token(self.campaign)}-{self._apps_id}"

    def values(self, host: str, dataset: str, workdir: str, run: int,
               assignment: Mapping[str, float]) -> dict[str, object]:
        """The placeholders of the application's argv templates on ``host``."""
        app = self.inventory.application
        return {"dataset": dataset, "workdir": workdir, "threads": app.threads,
                "app_dir": self.app_dirs[host], "size_mb": app.dataset.size_mb or 0, "run": run,
                **assignment}
