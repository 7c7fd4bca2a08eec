"""Algorithm 3 from measurements (pure): U, D, occupancies and the o_s split methods."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.collector import RunMeasurements, collect, parse_rpc_srt, split_io_time
from workbench.collector.tshark import SrtRow
from workbench.executor import parse_timer

FX = Path(__file__).resolve().parents[1] / "fixtures" / "collector"
A = {"cpu_share": 0.5, "rate_mbit": 100.0}


def m(**kw) -> RunMeasurements:
    base = dict(T_s=10.0, cpu_s=2.5, cpus=0.5, data_bytes=50_000_000, method="sshfs",
                requests=1000, rtt_s=0.004, bandwidth_mbit=100.0, disk_busy_s=0.5)
    base.update(kw)
    return RunMeasurements(**base)


def test_u_is_busy_fraction_of_the_allotted_cpu_and_t_is_reconstructed():
    s = collect(A, m())
    u, d = s.U, s.D
    assert u == pytest.approx(2.5 / (10.0 * 0.5))
    assert d == pytest.approx(50.0)
    assert s.D * (s.o_a + s.o_n + s.o_d) == pytest.approx(s.T)
    assert s.o_a * s.D == pytest.approx(0.5 * 10.0)  # U x T is compute time


def test_sshfs_split_is_an_estimate_with_its_method():
    net, disk, info = split_io_time(m())
    per_req = 50_000_000 / 1000
    assert net == pytest.approx(0.004 + per_req * 8 / 100e6)
    assert disk == pytest.approx(0.5 / 1000)
    assert info["split"] == "estimate" and "RTT" in info["split_method"]
    s = collect(A, m())
    assert s.meta["split"] == "estimate"
    assert s.o_n / s.o_d == pytest.approx(net / disk)


def test_nfs_split_from_client_and_server_traces():
    client = parse_rpc_srt((FX / "tshark_rpc_srt_nfs3.txt").read_text())
    server = {"READ": SrtRow("READ", 4, 0.0001, 0.0003, 0.0002, 0.0008)}
    net, disk, info = split_io_time(m(method="nfs", nfs_client=client, nfs_server=server))
    assert disk == pytest.approx(0.0002)
    assert net == pytest.approx(0.003810 / 4 - 0.0002)
    assert info["split"] == "trace" and info["nfs_ops"] == 4


def test_nfs_client_trace_only_is_an_estimate():
    client = parse_rpc_srt((FX / "tshark_rpc_srt_nfs3.txt").read_text())
    net, disk, info = split_io_time(m(method="nfs", nfs_client=client, requests=10,
                                      data_bytes=4_000_000, rtt_s=0.0001, bandwidth_mbit=1e5))
    assert info["split"] == "estimate" and "NFS client" in info["split_method"]
    assert net + disk == pytest.approx(0.003810 / 4)  # the client-observed READ time


def test_no_split_information_keeps_o_s_in_o_n():
    s = collect(A, m(rtt_s=None, requests=None))
    assert s.o_d == 0.0 and s.meta["split"] == "none"
    assert s.o_n == pytest.approx((1 - s.U) * s.T / s.D)


def test_u_is_clamped_and_raw_kept():
    s = collect(A, m(cpu_s=5.2))  # CFS lets a quota overshoot slightly
    assert s.U == 1.0 and s.meta["U_raw"] == pytest.approx(1.04)


def test_no_data_flow_is_a_sample_with_zero_io_occupancies():
    s = collect(A, m(data_bytes=0))  # issue 11, defect 10
    assert s.has_occupancies and s.o_n == 0.0 and s.o_d == 0.0 and s.o_a == s.T
    assert s.meta["occupancies"].startswith("no data flow")


def test_no_cpu_time_gives_a_sample_without_occupancies():
    s = collect(A, m(cpu_s=None))
    assert s.U is None and "no CPU time" in s.meta["occupancies"]


def test_parse_timer_reads_the_last_stamp():
    err = "app noise\nnimo-T 100.25 103.75 0\nmore\nnimo-T 200.000000001 201.5 3\n"
    assert parse_timer(err) == (pytest.approx(1.499999999), 3)
    assert parse_timer("no stamp") is None


def test_repeats_keep_the_median_t_and_charge_every_repeat():
    from nimo.records import RunOutcome, RunRequest, RunStatus, Sample
    from workbench.executor.schedule import median_repeat

    req = RunRequest(1, A, "train")

    def done(T: float, start: float) -> RunOutcome:
        return RunOutcome(req, RunStatus.DONE, Sample(A, T=T, cost_s=T + 1), None, 1.0, "c1",
                          start, start + T + 1)

    out = median_repeat([done(5.0, 0.0), done(3.0, 10.0), done(4.0, 20.0)])
    assert out.sample.T == 4.0 and out.sample.meta["repeats_T"] == [5.0, 3.0, 4.0]
    assert out.sample.cost_s == 6.0 + 4.0 + 5.0 and out.overhead_s == 3 * 1.0  # each repeat's
    assert (out.started_at, out.ended_at) == (0.0, 25.0)
    bad = RunOutcome(req, RunStatus.FAILED, None, "G exited 1: x", 0.5, "c1", 30.0, 31.0)
    failed = median_repeat([done(5.0, 0.0), bad])
    assert failed.status is RunStatus.FAILED and failed.reason == "repeat 2: G exited 1: x"
