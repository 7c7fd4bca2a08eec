"""Resource profiles (Section 2.5): what an assignment actually delivers, measured on it.

* ``cpu_speed``: the fraction of one CPU the run's cgroup delivers to a CPU-bound Python loop
  run for ~0.4 s inside it (CPU seconds / wall seconds; ~= cpu_share on an idle host, less when
  the host is contended), plus ``cpu_ops_s``, the loop's iterations per wall second;
* ``rtt_ms``: ``ping`` over the data path (with the emulation applied);
* ``bandwidth_mbit``: a timed TCP transfer from the storage host to the compute host over the
  data path (a tiny Python sender/receiver pair, ~0.3 s at the expected rate);
* ``memory_mb``: the memory limit given.

Parts are cached by :class:`ProfileCache` per compute host and the knob values they depend
on, so they are measured once per setting, not at every run.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from workbench.errors import ProfileError
from workbench.remote import Connection

CPU_BENCH = (
    "import json,sys,time\n"
    "d=float(sys.argv[1]);n=0;c0=time.process_time();t0=time.perf_counter();e=t0+d\n"
    "while True:\n"
    "    x=0\n"
    "    for i in range(2000): x+=i*i\n"
    "    n+=1\n"
    "    t=time.perf_counter()\n"
    "    if t>=e: break\n"
    "print(json.dumps({'loops':n,'seconds':t-t0,'cpu_s':time.process_time()-c0}))\n"
)
SENDER = (
    "import socket,sys\n"
    "s=socket.socket();s.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)\n"
    "s.bind((sys.argv[1],int(sys.argv[2])));s.listen(1);s.settimeout(float(sys.argv[4]))\n"
    "print('ready',flush=True)\n"
    "c,_=s.accept();n=int(sys.argv[3]);b=b'\\0'*65536\n"
    "while n>0:\n"
    "    k=c.send(b[:min(n,65536)]);n-=k\n"
    "c.shutdown(socket.SHUT_WR);c.recv(1);c.close()\n"
)
RECEIVER = (
    "import json,socket,sys,time\n"
    "a=(sys.argv[1],int(sys.argv[2]));e=time.time()+float(sys.argv[3])\n"
    "while True:\n"
    "    try:\n"
    "        t0=time.perf_counter();c=socket.create_connection(a,timeout=5);break\n"
    "    except OSError:\n"
    "        if time.time()>e: raise\n"
    "        time.sleep(0.01)\n"
    "t1=time.perf_counter();n=0;first=None\n"
    "while True:\n"
    "    d=c.recv(262144)\n"
    "    if not d: break\n"
    "    if first is None: first=time.perf_counter()\n"
    "    n+=len(d)\n"
    "t2=time.perf_counter();c.close()\n"
    "print(json.dumps({'bytes':n,'connect_s':t1-t0,'transfer_s':t2-(first or t1)}))\n"
)
_PING_RTT = re.compile(r"= ([\d.]+)/([\d.]+)/([\d.]+)/([\d.]+) ms")
PROBE_PORT_BASE = 47000



def parse_ping(text: str, source: str = "<ping>") -> dict[str, float]:
    """``ping -q`` summary -> rtt min/avg/max/mdev (ms)."""
    m = _PING_RTT.search(text)
    if not m:
        raise ProfileError(f"{source}: no 'rtt min/avg/max/mdev' line in ping output")
    return dict(zip(("min", "avg", "max", "mdev"), map(float, m.groups()), strict=True))


def parse_json_line(text: str, keys: Sequence[str], source: str) -> dict[str, float]:
    """The last line of a benchmark's output as JSON with the given numeric keys."""
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    try:
        doc = json.loads(lines[-1])
        return {k: float(doc[k]) for k in keys}
    except (IndexError, ValueError, KeyError, TypeError):
        raise ProfileError(f"{source}: expected a JSON line with {', '.join(keys)}, "
                           f"got {text.strip()[-120:]!r}") from None


def cpu_bench(conn: Connection, prefix: Sequence[str] = (), seconds: float = 0.4,
              ) -> tuple[float, float]:
    """(fraction of one CPU delivered, loops per wall second) of the calibrated Python loop
    run inside ``prefix`` (e.g. a cgroup's argv prefix)."""
    r = conn.run([*prefix, "python3", "-c", CPU_BENCH, str(seconds)], timeout=30)
    d = parse_json_line(r.stdout, ("loops", "seconds", "cpu_s"), f"{conn.name}: cpu benchmark")
    return d["cpu_s"] / d["seconds"], d["loops"] / d["seconds"]


def ping_rtt_ms(conn: Connection, address: str, count: int = 5) -> float:
    """Average RTT (ms) from the host to ``address`` over the data path."""
    r = conn.run(["ping", "-n", "-q", "-c", str(count), "-i", "0.02", "-W", "2", address],
                 timeout=30)
    return parse_ping(r.stdout, f"{conn.name}: ping {address}")["avg"]


def transfer_mbit(receiver: Connection, sender: Connection, sender_address: str, port: int,
                  nbytes: int) -> float:
    """Achieved Mbit/s of a TCP transfer sender -> receiver over the data path."""
    proc = sender.start(["python3", "-c", SENDER, sender_address, str(port), str(nbytes), "20"])
    try:
        r = receiver.run(["python3", "-c", RECEIVER, sender_address, str(port), "5"], timeout=60)
        d = parse_json_line(r.stdout, ("bytes", "transfer_s"), f"{receiver.name}: transfer")
    finally:
        proc.stop(timeout=2.0)
    if d["bytes"] < nbytes or d["transfer_s"] <= 0:
        raise ProfileError(f"{receiver.name}: transfer got {d['bytes']:.0f} of {nbytes} bytes")
    return d["bytes"] * 8 / d["transfer_s"] / 1e6


@dataclass(frozen=True)
class ProfileTargets:
    """What to measure for one assignment."""

    compute: Connection
    storage: Connection
    storage_address: str
    port: int
    expected_mbit: float | None


def measure_cpu(t: ProfileTargets, prefix: Sequence[str]) -> dict[str, float]:
    """CPU part, inside the run's cgroup (``prefix``)."""
    share, ops = cpu_bench(t.compute, prefix)
    return {"cpu_speed": round(share, 4), "cpu_ops_s": round(ops, 1)}


def measure_network(t: ProfileTargets) -> dict[str, float]:
    """Network part, over the data path with the emulation applied."""
    rtt = ping_rtt_ms(t.compute, t.storage_address)
    rate = t.expected_mbit or 1000.0
    nbytes = int(min(64e6, max(1e6, rate * 1e6 / 8 * 0.3)))
    bw = transfer_mbit(t.compute, t.storage, t.storage_address, t.port, nbytes)
    return {"rtt_ms": round(rtt, 3), "bandwidth_mbit": round(bw, 2)}


class ProfileCache:
    """Thread-safe cache of profile parts, keyed by the host, the part and the knob values
    that determine it (the CPU part by cpu_share, the network part by delay and rate), so a
    campaign measures each part once per distinct setting, not once per run."""

    def __init__(self) -> None:
        self._data: dict[tuple[object, ...], dict[str, float]] = {}
        self._lock = threading.Lock()

    def get(self, key: tuple[object, ...]) -> dict[str, float] | None:
        """A copy of the cached part, or None."""
        with self._lock:
            got = self._data.get(key)
            return dict(got) if got is not None else None

    def put(self, key: tuple[object, ...], part: Mapping[str, float]) -> None:
        """Cache a measured part."""
        with self._lock:
            self._data[key] = dict(part)


def measure_profile(cache: ProfileCache, host: str, kinds: Mapping[str, float],
                    targets: ProfileTargets, cpu_prefix: Sequence[str]) -> dict[str, float]:
    """The resource profile of an assignment (``kinds``: knob kind -> value) on ``host``;
    each part is measured once per setting and then taken from ``cache``."""
    parts: tuple[tuple[tuple[object, ...], Callable[[], dict[str, float]]], ...] = (
        (("cpu", kinds.get("cpu_share")), lambda: measure_cpu(targets, cpu_prefix)),
        (("net", kinds.get("delay_ms"), kinds.get("rate_mbit")),
         lambda: measure_network(targets)),
    )
    profile: dict[str, float] = {}
    for key, measure in parts:
        full = (host, *key)
        part = cache.get(full)
        if part is None:
            part = measure()
            cache.put(full, part)
        profile.update(part)
    if "memory_mb" in kinds:
        profile["memory_mb"] = float(kinds["memory_mb"])
    return profile
