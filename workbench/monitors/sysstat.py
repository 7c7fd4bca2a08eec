"""sysstat on a host during a run: ``sadc -S XALL INTERVAL FILE`` then ``sadf -j``."""

from __future__ import annotations

from workbench.collector.sar import SarSummary, parse_sadf_json
from workbench.monitors.capture import discard
from workbench.remote import Connection, RemoteProcess

SADC_CANDIDATES = ("/usr/lib/sysstat/sadc", "/usr/lib64/sa/sadc", "/usr/lib/sa/sadc")
_FIND = 'for p; do [ -x "$p" ] && { echo "$p"; exit 0; }; done; exit 1'
SADF_ARGS = ("--", "-u", "-n", "DEV", "-d", "-r")


def find_sadc(conn: Connection) -> str | None:
    """Path of sadc on the host, or None when sysstat is not installed."""
    r = conn.run(["sh", "-c", _FIND, "nimo-find", *SADC_CANDIDATES], check=False, timeout=10)
    return r.stdout.strip() or None if r.ok else None


class SarMonitor:
    """sadc writing one record per ``interval_s`` to ``path`` until stopped."""

    def __init__(self, conn: Connection, sadc: str, path: str, interval_s: int = 1,
                 max_s: float = 3600.0) -> None:
        self.conn = conn
        self.sadc = sadc
        self.path = path
        self.interval_s = interval_s
        self.count = max(2, int(max_s / interval_s) + 1)  # sadc stops by itself after max_s
        self._proc: RemoteProcess | None = None

    def start(self) -> None:
        self._proc = self.conn.start([self.sadc, "-S", "XALL", str(self.interval_s),
                                      str(self.count), self.path])

    def halt(self) -> None:
        """Stop sadc (its file stays for :meth:`stop`)."""
        if self._proc is not None:
            self._proc.stop(timeout=2.0)
            self._proc = None

    def stop(self) -> SarSummary | None:
        """Stop sadc and summarise its file (None when it recorded nothing)."""
        self.halt()
        r = self.conn.run(["sadf", "-j", self.path, *SADF_ARGS], check=False, timeout=30)
        if not r.ok or not r.stdout.strip():
            return None
        return parse_sadf_json(r.stdout, f"{self.conn.name}:{self.path}")

    def cleanup(self) -> None:
        """Kill sadc (by PID, also when its SSH channel is gone) and remove its file."""
        discard(self.conn, self._proc, "sadc", self.path)
        self._proc = None
