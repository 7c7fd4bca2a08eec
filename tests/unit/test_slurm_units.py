"""The Slurm runner's pure parts: an assignment as sbatch options and batch script, the
parsers of scontrol/squeue output, a finished job as a Sample or a failed run with Slurm's
reason, the run directories that let a resumed campaign adopt its jobs, and the inventory's
``executor: slurm`` rules. The runner on a real cluster: tests/integration/test_slurm_*.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from nimo.records import RunRequest
from workbench.errors import InventoryError
from workbench.inventory import load_inventory
from workbench.slurm import jobs as rundirs
from workbench.slurm.commands import parse_job
from workbench.slurm.job import batch_script, cpu_quota_us, sbatch_options, time_limit_min
from workbench.slurm.outcome import JobEnd, build_sample, cpu_seconds, failure_reason

ROOT = Path(__file__).resolve().parents[2]
JOB_LINE = ("JobId=7 JobName=nimo-lab-ab12cd-r3 UserId=root(0) JobState=NODE_FAIL "
            "Reason=NodeDown Dependency=(null) ExitCode=0:0 RunTime=00:00:03 "
            "NodeList=nt1-compute[1-2] BatchHost=nt1-compute1 NumNodes=2 "
            "Comment=nimo campaign=lab-ab12cd run=3")


def test_assignment_becomes_slurm_resources(tmp_path):
    kinds = {"nodes": 3.0, "tasks_per_node": 2.0, "cpu_share": 0.25, "memory_mb": 512.0}
    opts = sbatch_options(kinds, name="nimo-t-r1", comment="nimo campaign=t run=1",
                          run_dir=tmp_path, threads=1, timeout_s=90, partition="lab",
                          constraint="fast")
    for want in ("--nodes=3", "--ntasks-per-node=2", "--cpus-per-task=1", "--mem=512M",
                 "--time=2", "--partition=lab", "--constraint=fast", "--no-requeue",
                 "--job-name=nimo-t-r1"):
        assert want in opts
    assert cpu_quota_us(kinds) == 25_000 and cpu_quota_us({}) == 0
    assert time_limit_min(1) == 1 and time_limit_min(61) == 2
    default = sbatch_options({}, name="n", comment="c", run_dir=tmp_path, threads=2,
                             timeout_s=30, mem_mb=200)
    assert "--nodes=1" in default and "--mem=200M" in default and "--cpus-per-task=2" in default


def test_batch_script_quotes_every_argument(tmp_path):
    text = batch_script(["python3", "/a b/app.py", "x; rm -rf /"], run_dir=tmp_path,
                        wrapper="/w/task.sh", quota_us=5000, header="nimo run 1")
    assert "srun --kill-on-bad-exit=1 sh /w/task.sh 5000 python3 '/a b/app.py' " \
           "'x; rm -rf /'" in text
    assert "result.json" in text and "started" in text


def test_scontrol_line_parses_with_spaced_fields():
    info = parse_job(JOB_LINE)
    assert (info.job_id, info.state, info.reason, info.node_list) == (
        "7", "NODE_FAIL", "NodeDown", "nt1-compute[1-2]")
    assert info.finished
    node = parse_job("NodeName=c1 State=DOWN Reason=nimo test: drained [root@2026-11-23] "
                     "Comment=(null)")
    assert node.reason == "nimo test: drained [root@2026-11-23]"


def end(state: str, rc: int | None, **kw) -> JobEnd:
    line = JOB_LINE.replace("NODE_FAIL", state)
    result = None if rc is None else {"rc": rc, "t0": 100.0, "t1": 103.5, "node_list": "c1"}
    return JobEnd("7", parse_job(line), result, kw.get("stdout", ""), kw.get("stderr", ""),
                  ["nt1-compute1", "nt1-compute2"], kw.get("reasons", {}))


def test_failed_jobs_carry_slurms_state_reason_and_node_reasons():
    down = failure_reason(end("NODE_FAIL", None, reasons={"nt1-compute2": "DOWN: drained"}))
    assert down is not None
    assert "Slurm job 7 NODE_FAIL" in down and "Reason=NodeDown" in down
    assert "node nt1-compute2 DOWN: drained" in down
    failed = failure_reason(end("FAILED", 127, stderr="srun: error: execve(): no such file\n"
                                "nimo-cpu c1 123\n"))
    assert failed is not None and "G exited 127" in failed and "execve" in failed
    assert "nimo-cpu" not in failed
    assert failure_reason(end("COMPLETED", 0)) is None
    assert "COMPLETED" in (failure_reason(end("COMPLETED", 3)) or "")


def test_sample_of_a_completed_job_records_its_nodes_and_cpu():
    stderr = "nimo-cpu c1 1000000000\nnimo-cpu c1 1500000000\nnimo-cpu c2 500000000\n"
    e = end("COMPLETED", 0, stderr=stderr, stdout=json.dumps({"app": "pwork"}) + "\n")
    assert cpu_seconds(stderr) == (2.0, {"c1": 1.5, "c2": 0.5})
    s = build_sample(e, {"nodes": 2.0}, {"nodes": 2.0, "cpu_share": 0.5}, "pwork", "lab")
    assert s.T == pytest.approx(3.5)
    assert s.meta["nodes"] == ["nt1-compute1", "nt1-compute2"]
    assert s.meta["slurm"]["job_id"] == "7" and s.meta["cpu_s"] == 2.0
    assert s.meta["app_output"] == {"app": "pwork"}


def test_run_directory_says_adopt_or_submit_again(tmp_path):
    rd = rundirs.run_dir(tmp_path, 4)
    assert rundirs.previous_job(rd) == (None, False)  # never submitted
    rundirs.prepare_dir(rd, "#!/bin/sh\n")
    rundirs.write_atomic(rd / rundirs.JOB_ID, "42\n")
    assert rundirs.previous_job(rd) == ("42", False)  # a previous life's job: adopt it
    rundirs.mark(rd, rundirs.COLLECTED)
    assert rundirs.previous_job(rd) == (None, True)  # over: moved aside, submit again
    assert not rd.exists() and (tmp_path / "run-4.1" / rundirs.JOB_ID).exists()


def slurm_doc(**changes) -> dict:
    doc = {"version": 1, "executor": "slurm", "slurm": {"partition": "lab"},
           "storage": {"export": "/srv/shared"},
           "knobs": [{"name": "nodes", "kind": "nodes", "levels": [1, 2, 4]},
                     {"name": "cpu_share", "kind": "cpu_share", "levels": [0.5, 1.0]}],
           "application": {"name": "pwork", "command": ["app", "{dataset}", "{nodes}"],
                           "dataset": {"path": "d"}}}
    doc.update(changes)
    return doc


def load(tmp_path: Path, doc: dict):
    p = tmp_path / "inv.yaml"
    p.write_text(yaml.safe_dump(doc))
    return load_inventory(p)


def test_slurm_inventory_needs_no_hosts_and_validates_its_knobs(tmp_path):
    inv = load(tmp_path, slurm_doc())
    assert inv.executor == "slurm" and inv.hosts == () and inv.slurm.partition == "lab"
    assert inv.space().attributes[0].levels == (1.0, 2.0, 4.0)
    bad = slurm_doc(knobs=[{"kind": "nodes", "levels": [1, 1.5]}])
    with pytest.raises(InventoryError, match=r"knobs\[0\]\.levels: nodes levels must be whole"):
        load(tmp_path, bad)
    ssh = slurm_doc(executor="ssh")
    with pytest.raises(InventoryError, match="nodes needs executor: slurm"):
        load(tmp_path, ssh)
    with pytest.raises(InventoryError, match="executor"):
        load(tmp_path, slurm_doc(executor="pbs"))


def test_runner_plans_a_job_per_request(tmp_path):
    from workbench.slurm import SlurmRunner

    inv = load(tmp_path, slurm_doc(slurm={"partition": "lab", "work_dir": str(tmp_path)}))
    runner = SlurmRunner(inv, tag="t-1")
    assert runner.kind == "direct" and runner.hosts == ("slurm:lab",)
    assert runner.spec()["slurm_tag"] == "t-1"
    plan = runner.plan(RunRequest(5, {"nodes": 2, "cpu_share": 0.5}, "train"), tmp_path / "r")
    assert plan.name == "nimo-t-1-r5" and "--nodes=2" in plan.options
    assert "app /srv/shared/d 2" in plan.script and " 50000 " in plan.script


def test_docs_describe_the_slurm_keys():
    from nimo.config import option_names
    from workbench.inventory.model import Slurm

    doc = (ROOT / "docs" / "slurm.md").read_text()
    for name in option_names(Slurm):
        assert f"| `{name}` |" in doc, name


def test_a_submitted_slurm_campaign_gets_its_job_tag_at_once(tmp_path):
    from workbench.runners import live_spec

    inv = tmp_path / "inv.yaml"
    inv.write_text(yaml.safe_dump(slurm_doc(slurm={"partition": "lab", "max_jobs": 3})))
    spec, hosts, concurrency = live_spec(str(inv))
    assert spec["inventory"] == str(inv) and spec["slurm_tag"].startswith("inv-")
    assert hosts == ["slurm:lab"] and concurrency == 3  # the batch a campaign asks for
    assert live_spec(str(inv))[0]["slurm_tag"] != spec["slurm_tag"]  # one per campaign


def test_resume_cleaning_of_a_hostless_slurm_inventory_has_nothing_to_sweep(tmp_path):
    from workbench import clean

    inv = tmp_path / "inv.yaml"
    inv.write_text(yaml.safe_dump(slurm_doc()))
    assert clean.clean_inventory(str(inv)) == {}
