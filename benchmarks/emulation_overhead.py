"""Per-step overhead of resource emulation on the namespace lab: apply + verify + teardown.

    python benchmarks/emulation_overhead.py [--repeats 5] [--dir DIR]

Without ``--dir`` a temporary lab is built (and removed); with ``--dir`` an existing lab made
by ``nimo lab up --dir DIR`` is used. Prints median and max seconds per step, and the whole
set (network rate+delay, cgroup, sshfs mount) applied sequentially and in parallel.
Target: a whole set-up + teardown under 1 s.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from workbench.emulation import (
    CgroupSpec,
    LinkEnd,
    NetworkSpec,
    cgroup_applied,
    network_applied,
)
from workbench.lab import Lab
from workbench.remote.connection import Connection
from workbench.storage import dataset_mounted


def timed(fn: Callable[[], None], repeats: int) -> list[float]:
    out = []
    for _ in range(repeats):
        t0 = time.monotonic()
        fn()
        out.append(time.monotonic() - t0)
    return out


class Steps:
    """The emulation steps timed, on one compute and one storage host of a lab."""

    def __init__(self, lab: Lab, compute: Connection, storage: Connection) -> None:
        c_host, s_host = lab.host("compute1"), lab.host("storage1")
        self.compute, self.storage, self.export = compute, storage, str(lab.export_dir)
        self.ends = [LinkEnd(compute, c_host.data_iface, s_host.data_address),
                     LinkEnd(storage, s_host.data_iface, c_host.data_address)]
        self.mount_kw = dict(storage_address=s_host.data_address,
                             identity_file=str(lab.key_file), known_hosts=str(lab.known_hosts))
        self.counter = iter(range(10**6))
        self.full = NetworkSpec(delay_ms=10, rate_mbit=50)

    def _id(self, prefix: str = "b") -> str:
        return f"{prefix}{next(self.counter)}"

    def net(self, spec: NetworkSpec) -> Callable[[], None]:
        def step() -> None:
            with network_applied(self.ends, spec, run_id=self._id()):
                pass
        return step

    def _cgroup(self, prefix: str = "b") -> contextlib.AbstractContextManager[object]:
        return cgroup_applied(self.compute, CgroupSpec(cpus=0.5, memory_mb=256),
                              run_id=self._id(prefix))

    def _mount(self, prefix: str = "b") -> contextlib.AbstractContextManager[object]:
        return dataset_mounted(self.compute, self.storage, self.export,
                               run_id=self._id(prefix), **self.mount_kw)

    def cgroup(self) -> None:
        with self._cgroup():
            pass

    def mount(self) -> None:
        with self._mount():
            pass

    def whole_sequential(self) -> None:
        # Algorithm 2's order: storage first (so the mount's SSH handshake is not slowed by
        # the emulated delay), then the network, then the compute limits
        with contextlib.ExitStack() as s:
            s.enter_context(self._mount())
            s.enter_context(network_applied(self.ends, self.full, run_id=self._id()))
            s.enter_context(self._cgroup())

    def whole_parallel(self) -> None:
        # the three kinds are independent: set up and tear down concurrently
        stacks = [contextlib.ExitStack() for _ in range(3)]
        makers: list[Callable[[], contextlib.AbstractContextManager[object]]] = [
            lambda: network_applied(self.ends, self.full, run_id=self._id("p")),
            lambda: self._cgroup("p"), lambda: self._mount("p")]
        with ThreadPoolExecutor(3) as pool:
            list(pool.map(lambda i: stacks[i].enter_context(makers[i]()), range(3)))
            list(pool.map(lambda st: st.close(), stacks))

    def all(self) -> dict[str, Callable[[], None]]:
        return {
            "cgroup cpu+memory": self.cgroup,
            "network rate (tbf, 2 ends)": self.net(NetworkSpec(rate_mbit=50)),
            "network delay (2 ends)": self.net(NetworkSpec(delay_ms=10)),
            "network rate+delay": self.net(self.full),
            "sshfs mount": self.mount,
            "WHOLE SET sequential": self.whole_sequential,
            "WHOLE SET parallel": self.whole_parallel,
        }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--dir", help="use an existing lab (nimo lab up --dir DIR)")
    args = ap.parse_args()
    with contextlib.ExitStack() as stack:
        if args.dir:
            lab = Lab(args.dir)
        else:
            tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="nimo-bench-"))
            lab = Lab(Path(tmp) / "lab", hosts=2, prefix="nbe-", subnet_base="10.198")
            t0 = time.monotonic()
            lab.up()
            print(f"lab up (2 hosts): {time.monotonic() - t0:.3f} s")
            stack.callback(lambda: print(f"lab down: {lab.down()['down_s']:.3f} s"))
        compute = stack.enter_context(lab.connect("compute1"))
        storage = stack.enter_context(lab.connect("storage1"))
        compute.run(["true"])
        storage.run(["true"])
        lab.export_dir.mkdir(exist_ok=True)
        head = f"{'step (apply+verify+teardown)':32} {'median s':>9} {'max s':>7}"
        print(f"{head}  (n={args.repeats})")
        for name, fn in Steps(lab, compute, storage).all().items():
            ts = timed(fn, args.repeats)
            print(f"{name:32} {statistics.median(ts):9.3f} {max(ts):7.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
