"""Live-campaign proof: build the lab, then learn a cost model of a shipped application with
the NIMO planner running real runs through the SSH executor.

    python benchmarks/live_campaign.py [--app compress] [--design designs/paper-default.yaml]
        [--max-runs 24] [--external 6] [--dir DIR] [--json out.json]

Without ``--dir`` a temporary lab (``--hosts``, default 2; prefix ``nimc-``, subnet 10.80)
is built and removed at the end. The space is a small grid (cpu_share 0.25/0.5/1,
memory_mb 64/256, delay_ms 0/4, rate_mbit 20/100: 24 assignments). ``--external N`` runs N
random assignments first (never shown to the planner) and reports the model's MAPE on them
after each iteration. Prints the per-iteration table, every sample (T, U, D, occupancies,
overhead) and a summary (runs, learning time, overhead, final MAPE).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from nimo.campaign import Campaign
from nimo.planner import make_planner
from nimo.records import RunRequest
from workbench.apps import APPS
from workbench.cli.progress import ProgressTable
from workbench.executor import open_runner
from workbench.lab import Lab

ROOT = Path(__file__).resolve().parents[1]
KNOBS = [
    {"name": "cpu_share", "kind": "cpu_share", "levels": [0.25, 0.5, 1.0]},
    {"name": "memory_mb", "kind": "memory_mb", "levels": [64, 256]},
    {"name": "delay_ms", "kind": "delay_ms", "levels": [0, 4]},
    {"name": "rate_mbit", "kind": "rate_mbit", "levels": [20, 100]},
]
SIZES = {"compress": 6, "checksum": 12, "scan": 12, "sort": 24}


def write_inventory(lab_inventory: Path, out: Path, app: str) -> Path:
    doc = yaml.safe_load(lab_inventory.read_text())
    doc["knobs"] = KNOBS
    doc["application"] = APPS[app].application(SIZES[app], timeout_s=120)
    doc["application"]["dataset"]["path"] = f"{app}-campaign"
    doc["policies"] = {"on_failure": "continue", "max_failures": 8, "retries": 1}
    out.write_text(yaml.safe_dump(doc, sort_keys=False))
    return out


def measure_external(runner: Any, count: int, seed: int) -> list[tuple[dict, float]]:
    """``count`` unused assignments measured once each (failures named, left out)."""
    external = []
    reqs = [RunRequest(-(i + 1), d, "external")
            for i, d in enumerate(runner.holdout(count, seed=seed))]
    for o in runner.run_many(reqs):
        if o.ok:
            external.append((dict(o.request.assignment), o.sample.T))
        else:
            print(f"external run failed: {o.reason}")
    print(f"external test set: {len(external)} assignments measured")
    return external


def print_runs(outcomes: list[Any], external: list[tuple[dict, float]]) -> None:
    """One line per run (its occupancies and overhead), the external set, and medians."""
    print(f"\n{'run':>4} {'T':>6} {'U':>5} {'D':>6} {'o_a':>7} {'o_n':>7} {'o_d':>7} "
          f"{'ovh':>5}  assignment")
    for o in outcomes:
        if o.ok:
            s = o.sample
            print(f"{o.request.run:>4} {s.T:6.2f} {s.U:5.2f} {s.D:6.2f} {s.o_a:7.4f} "
                  f"{s.o_n:7.4f} {s.o_d:7.4f} {o.overhead_s:5.2f}  "
                  + " ".join(f"{k}={v:g}" for k, v in s.assignment.items()))
        else:
            print(f"{o.request.run:>4} FAILED {o.reason}")
    print("external:", [(" ".join(f"{v:g}" for v in e[0].values()), round(e[1], 2))
                        for e in external])
    ok = [o for o in outcomes if o.ok]
    if ok:
        print(f"app time median {statistics.median(o.sample.T for o in ok):.2f} s, overhead "
              f"median {statistics.median(o.overhead_s for o in ok):.2f} s per run")
        print(f"o_s split methods: {sorted({str(o.sample.meta.get('split')) for o in ok})}")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--app", choices=sorted(APPS), default="compress")
    p.add_argument("--design", default=str(ROOT / "designs" / "paper-default.yaml"))
    p.add_argument("--max-runs", type=int, default=24)
    p.add_argument("--external", type=int, default=6)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--dir", help="use the lab built by `nimo lab up --dir DIR`")
    p.add_argument("--hosts", type=int, default=2,
                   help="lab hosts: 1 storage + N-1 compute (all share this machine's CPUs, so "
                        "concurrent runs perturb each other; default 2 = sequential runs)")
    p.add_argument("--json", help="write the campaign result here")
    a = p.parse_args()
    design = yaml.safe_load(Path(a.design).read_text())
    design.setdefault("stop", {})["max_runs"] = a.max_runs
    with contextlib.ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="nimo-campaign-")))
        if a.dir:
            lab_inv = Path(a.dir) / "inventory.yaml"
        else:
            lab = Lab(tmp / "lab", hosts=a.hosts, prefix="nimc-", subnet_base="10.80")
            stack.callback(lab.down)
            t0 = time.monotonic()
            lab.up()
            print(f"lab up in {time.monotonic() - t0:.2f} s: {lab.inventory_path}")
            lab_inv = lab.inventory_path
        runner = open_runner(write_inventory(lab_inv, tmp / "inv.yaml", a.app))
        stack.callback(runner.close)
        space = runner.space
        print(f"app {a.app}: {len(space.candidates)} candidate assignments; design "
              f"{design.get('name')}; budget {a.max_runs} runs")

        external = measure_external(runner, a.external, a.seed + 1000) if a.external else []
        planner = make_planner(space.restricted(
            [c for c in space.candidates if space.as_dict(c) not in [e[0] for e in external]]),
            design, a.seed)
        outcomes = []

        class Keep(ProgressTable):
            def outcome(self, outcome):  # noqa: ANN001 - Observer hook
                outcomes.append(outcome)

        t0 = time.monotonic()
        campaign = Campaign(planner, runner, external=external, observers=[Keep()],
                            name=f"live-{a.app}", design=design)
        result = campaign.run()
        wall = time.monotonic() - t0
        print(f"\n{len(outcomes)} runs ({sum(o.ok for o in outcomes)} ok) in {wall:.1f} s "
              f"wall; stopped: {result.stopped_because}")
        print_runs(outcomes, external)
        print(f"final external MAPE: {result.external_mape_pct}")
        if a.json:
            Path(a.json).write_text(json.dumps(result.to_dict(), indent=1, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
