"""Bandwidth and delay on the lab's compute<->storage data link (tc tbf, NFQUEUE delayer or
netem), measured with iperf3 and ping; everything removed afterwards."""

from __future__ import annotations

import json
import re
import time

import pytest

from workbench.emulation import LinkEnd, NetworkSpec, network_applied
from workbench.remote import CommandTimeout

pytestmark = pytest.mark.lab


def _ends(lab, compute, storage):
    c, s = lab.host("compute1"), lab.host("storage1")
    return [LinkEnd(compute, c.data_iface, s.data_address),
            LinkEnd(storage, s.data_iface, c.data_address)]


def _iperf(compute, storage, server_addr: str, port: int, reverse: bool) -> float:
    """Mbit/s received over 3 s of TCP from compute (-> storage, or <- with reverse)."""
    server = storage.start(["iperf3", "-s", "-1", "-B", server_addr, "-p", str(port)])
    try:
        for _ in range(100):
            if f":{port} " in storage.run(["ss", "-ltn"]).stdout:
                break
            time.sleep(0.02)
        argv = ["iperf3", "-c", server_addr, "-p", str(port), "-t", "3", "-J"]
        out = compute.run(argv + (["-R"] if reverse else []), timeout=30).stdout
    finally:
        server.stop(2)
    return json.loads(out)["end"]["sum_received"]["bits_per_second"] / 1e6


def _rtt_ms(conn, addr: str, count: int = 10) -> float:
    # -U: user-to-user latency. Plain ping uses the kernel's receive timestamp, taken before
    # netfilter, so it cannot see the delay added on this host's own ingress.
    out = conn.run(["ping", "-U", "-n", "-c", str(count), "-i", "0.1", addr], timeout=30).stdout
    return float(re.search(r"= [\d.]+/([\d.]+)/", out).group(1))


TCP_CONNECT_MS = (
    "import socket, sys, time\n"
    "ts = []\n"
    "for _ in range(10):\n"
    "    t = time.perf_counter()\n"
    "    socket.create_connection((sys.argv[1], 22), timeout=5).close()\n"
    "    ts.append(time.perf_counter() - t)\n"
    "print(sorted(ts)[len(ts) // 2] * 1000)\n"
)


def _tcp_connect_ms(conn, addr: str) -> float:
    """Median TCP handshake time (SYN -> SYN/ACK = one round trip) as an application sees it."""
    return float(conn.run(["python3", "-c", TCP_CONNECT_MS, addr], timeout=30).stdout)


def test_rate_limit_20_mbit_both_directions(lab, compute, storage, assert_clean):
    addr = lab.host("storage1").data_address
    with network_applied(_ends(lab, compute, storage), NetworkSpec(rate_mbit=20),
                         run_id="rate") as rec:
        up = _iperf(compute, storage, addr, 5301, reverse=False)
        down = _iperf(compute, storage, addr, 5302, reverse=True)
    print(f"tbf 20 Mbit/s: compute->storage {up:.1f}, storage->compute {down:.1f} Mbit/s; "
          f"apply {rec.apply_s:.3f} s, teardown {rec.teardown_s:.3f} s")
    assert 15 <= up <= 20 and 15 <= down <= 20
    assert_clean(compute)
    assert_clean(storage, lab.host("storage1").data_iface)


def test_unshaped_link_is_much_faster(lab, compute, storage):
    mbit = _iperf(compute, storage, lab.host("storage1").data_address, 5303, reverse=True)
    assert mbit > 200


def test_delay_20ms_shows_as_rtt(lab, compute, storage, assert_clean):
    addr = lab.host("storage1").data_address
    base = _rtt_ms(compute, addr)
    with network_applied(_ends(lab, compute, storage), NetworkSpec(delay_ms=20),
                         run_id="delay") as rec:
        rtt = _rtt_ms(compute, addr, count=20)
        tcp = _tcp_connect_ms(compute, addr)
    methods = {e.delay_method for e in rec.ends}
    print(f"delay 20 ms: RTT {base:.2f} -> {rtt:.2f} ms (TCP connect {tcp:.2f} ms) via {methods}; "
          f"apply {rec.apply_s:.3f} s, teardown {rec.teardown_s:.3f} s")
    assert 18 <= rtt <= 25
    assert 18 <= tcp <= 25
    assert methods <= {"netem", "nfqueue"} and all(e.delay_ms == 10 for e in rec.ends)
    assert _rtt_ms(compute, addr) < 5
    assert_clean(compute)
    assert_clean(storage, lab.host("storage1").data_iface)


def test_delay_and_rate_together(lab, compute, storage, assert_clean):
    addr = lab.host("storage1").data_address
    with network_applied(_ends(lab, compute, storage), NetworkSpec(delay_ms=10, rate_mbit=50),
                         run_id="both"):
        rtt = _rtt_ms(compute, addr)
        mbit = _iperf(compute, storage, addr, 5304, reverse=True)
    print(f"10 ms + 50 Mbit/s: RTT {rtt:.2f} ms, {mbit:.1f} Mbit/s")
    assert 8 <= rtt <= 15
    assert 30 <= mbit <= 51
    assert_clean(compute)


def test_command_timeout_inside_emulation_leaves_nothing(lab, compute, storage, assert_clean):
    with pytest.raises(CommandTimeout), network_applied(
        _ends(lab, compute, storage), NetworkSpec(delay_ms=4, rate_mbit=30), run_id="tmo"
    ):
        compute.run(["sleep", "10"], timeout=0.5)
    assert_clean(compute)
    assert_clean(storage, lab.host("storage1").data_iface)


def test_links_of_two_compute_hosts_are_shaped_independently(lab, storage, assert_clean):
    s = lab.host("storage1")
    c2 = lab.host("compute2")
    with lab.connect("compute2") as compute2, lab.connect("compute1") as compute1:
        # the inventory names storage's data0 (its link to compute1); the route decides
        ends = [LinkEnd(compute2, c2.data_iface, s.data_address),
                LinkEnd(storage, s.data_iface, c2.data_address)]
        with network_applied(ends, NetworkSpec(rate_mbit=20), run_id="c2") as rec:
            shaped = _iperf(compute2, storage, s.data_address, 5305, reverse=True)
            other = _iperf(compute1, storage, s.data_address, 5306, reverse=True)
        assert rec.ends[1].iface != "data0"
        print(f"compute2 link shaped: {shaped:.1f} Mbit/s; compute1 link meanwhile {other:.1f}")
        assert 15 <= shaped <= 20 and other > 100
        assert_clean(compute2)
    assert_clean(storage, rec.ends[1].iface)
