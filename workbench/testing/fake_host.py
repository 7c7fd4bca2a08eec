"""``FakeHost``: a ``FakeConnection`` that behaves like the Linux host a run needs.

It keeps a little state and answers the commands the executor issues: ``hostname``, cgroup
v2 detection, limit writes and ``grep -H`` read-backs (from ``files``), a mount table that
sshfs and fusermount change, data-interface byte counters, and G itself (in its cgroup,
stamped by the timer) as described by a :class:`FakeApp`, the marker dir, ``mktemp -d``
(``private_dirs``) and the SSH connection on ``eth0``. Anything else exits 0 silently.
"""

from __future__ import annotations

from dataclasses import dataclass

from workbench.emulation.cgroups import ENTER_SCRIPT
from workbench.emulation.hostobjects import MARK_DIR
from workbench.testing.fake_connection import Answer, Argv, FakeConnection

CGROUP_ROOT = "/sys/fs/cgroup"
_V2_LAYOUT = f"--- cgroup\n0::/\n--- v2\n{CGROUP_ROOT} cpu memory\n"


@dataclass
class FakeApp:
    """What G does when it runs: its wall time T, CPU seconds, bytes moved over the data
    interface, exit code and output. ``oom_kills`` are counted in the cgroup."""

    T: float = 2.0
    cpu_s: float = 1.0
    data_bytes: int = 10_000_000
    exit_code: int = 0
    stdout: str = '{"app": "fake", "bytes_in": 10000000}\n'
    stderr: str = ""
    oom_kills: int = 0


class FakeHost(FakeConnection):
    """A pretend Linux host with cgroup v2, a mount table and a data interface."""

    def __init__(self, name: str, app: FakeApp | None = None) -> None:
        super().__init__(name)
        self.app = app or FakeApp()
        self.mounts: dict[str, str] = {}  # mount point -> fs type
        self.rx_bytes = self.tx_bytes = 0
        self.on(["hostname"], f"{name}\n")
        self.on(lambda argv: argv[:2] == ("sh", "-c") and "cgroup.controllers" in argv[2],
                _V2_LAYOUT)
        self.on(lambda argv: argv[3:4] == ("nimo-cgset",),
                call=self._write_limits)
        self.on(lambda argv: argv[:2] == ("grep", "-H"), call=self._grep)
        self.on(["cat", "/proc/mounts"], call=self._proc_mounts)
        self.on(lambda argv: argv[0] == "sshfs", call=self._mount)
        self.on(lambda argv: argv[0] in ("fusermount3", "fusermount", "umount"),
                call=self._unmount)
        self.on(lambda argv: argv[0] == "cat" and "/statistics/" in argv[1], call=self._counters)
        self.private_dirs: list[str] = []
        self.on(lambda argv: argv[3:4] == ("nimo-markdir",), f"/root/{MARK_DIR}\n")
        self.on(lambda argv: argv[3:4] == ("nimo-mktemp",), call=self._mktemp)
        self.on(lambda argv: argv[:2] == ("sh", "-c") and "SSH_CONNECTION" in argv[2],
                "10.0.0.1 dev eth0 src 10.0.0.2\n#\n2: eth0    inet 10.0.0.2/24\n")
        # G last: tests take it as ``rules[-1]``
        self.on(lambda argv: argv[:3] == ("sh", "-c", ENTER_SCRIPT), call=self._run_in_cgroup)

    def _mktemp(self, argv: Argv) -> str:
        """``sh -c _MKTEMP nimo-mktemp MARKER TEMPLATE PARENT SUFFIX``: a new dir name."""
        path = f"{argv[6]}/{argv[5].replace('XXXXXX', f'{len(self.private_dirs):06d}')}{argv[7]}"
        self.private_dirs.append(path)
        return path + "\n"

    def _write_limits(self, argv: Argv) -> str:
        n = int(argv[4])
        rest = argv[5 + n:]
        for path, value in zip(rest[0::2], rest[1::2], strict=True):
            self.files[path] = f"{value}\n"
        for d in argv[5:5 + n]:
            self.files.setdefault(f"{d}/cpu.stat", "usage_usec 0\nnr_periods 0\n"
                                  "nr_throttled 0\nthrottled_usec 0\n")
            self.files.setdefault(f"{d}/memory.events", "oom_kill 0\n")
        return ""

    def _grep(self, argv: Argv) -> str:
        return "".join(f"{p}:{line}\n" for p in argv[3:] if p in self.files
                       for line in self.files[p].splitlines())

    def _proc_mounts(self, argv: Argv) -> str:
        return "".join(f"src {mnt} {fs} ro 0 0\n" for mnt, fs in self.mounts.items())

    def _mount(self, argv: Argv) -> str:
        self.mounts[argv[-1]] = "fuse.sshfs"
        return ""

    def _unmount(self, argv: Argv) -> str:
        self.mounts.pop(argv[-1], None)
        return ""

    def _counters(self, argv: Argv) -> str:
        return f"{self.rx_bytes}\n{self.tx_bytes}\n{self.rx_bytes // 1000}\n" \
               f"{self.tx_bytes // 1000}\n"

    def _run_in_cgroup(self, argv: Argv) -> Answer:
        """G (or a benchmark) entered into a cgroup: account its CPU time and data."""
        app = self.app
        procs = argv[5:5 + int(argv[4])]
        for path in procs:
            cgroup = path.rsplit("/", 1)[0]
            self.files[f"{cgroup}/cpu.stat"] = (
                f"usage_usec {int(app.cpu_s * 1e6)}\nnr_periods 10\nnr_throttled 2\n"
                "throttled_usec 50000\n")
            self.files[f"{cgroup}/memory.events"] = f"oom_kill {app.oom_kills}\n"
        self.rx_bytes += app.data_bytes
        stamp = f"nimo-T 100.000000000 {100 + app.T:.9f} {app.exit_code}\n"
        return Answer(app.stdout, app.stderr + stamp, app.exit_code, app.T)
