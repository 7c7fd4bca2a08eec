"""The command line the probes share: ``run SUITE`` (campaigns with the probe, in two
processes, written to ``--out`` and scored) and ``score FILE`` (a written run, scored); and
``observed_campaign``, one ``recommended`` replay reported to a whole-space observer."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import tempfile
from collections.abc import Callable, Sequence
from multiprocessing import Pool
from pathlib import Path
from typing import Any, TypeVar

from benchmarks.learning.evaluate import Job, load_case, replay_argv, sizes, split_case
from benchmarks.learning.space import SpaceError, observing, whole_space
from benchmarks.learning.suites import load_suite

Record = dict[str, Any]
Observed = TypeVar("Observed", bound=SpaceError)


def observed_campaign(case: Any, seed: int, observer_of: Callable[..., Observed],
                      design: str = "recommended") -> tuple[Observed, Record]:
    """One campaign of ``design`` on ``case`` through the CLI (its judge set left out, as
    ``evaluate`` does), reported to ``observer_of(X, T, attributes, repeats)`` made over
    the case's whole space; (the observer, the replay's JSON document)."""
    from workbench.cli import main

    judge, external = sizes(case, None, None)
    job = Job(case, design, seed, judge, external)
    with tempfile.TemporaryDirectory(prefix="nimo-probe-") as d:
        train, judge_rows = split_case(job, Path(d))
        X, T, repeats = whole_space(load_case(train, job), judge_rows, case.attributes)
        observer = observer_of(X, T, case.attributes, repeats)
        out = Path(d) / "run.json"
        with observing(observer), contextlib.redirect_stdout(io.StringIO()), \
                contextlib.redirect_stderr(io.StringIO()):
            main(replay_argv(job, train, out))
        return observer, json.loads(out.read_text())


def probe_main(prog: str, probe: Callable[[tuple[Any, ...]], Record],
               score: Callable[[Sequence[Record]], list[str]],
               argv: Sequence[str] | None = None, design: bool = False) -> int:
    """Parse ``argv``; ``probe`` gets (case, seed) or, with ``design``, (case, seed,
    ``--design``) per campaign."""
    ap = argparse.ArgumentParser(prog=prog)
    sub = ap.add_subparsers(dest="cmd", required=True)
    run = sub.add_parser("run")
    run.add_argument("suite")
    run.add_argument("--size", type=int, default=60)
    run.add_argument("--skip", type=int, default=0)
    run.add_argument("--seeds", default="1")
    if design:
        run.add_argument("--design", default="recommended")
    run.add_argument("--cache", type=Path, help="suite CSVs (default as evaluate's)")
    run.add_argument("--out", type=Path, required=True)
    sc = sub.add_parser("score")
    sc.add_argument("file", type=Path)
    args = ap.parse_args(argv)
    if args.cmd == "score":
        print("\n".join(score(json.loads(args.file.read_text()))))
        return 0
    cases = load_suite(args.suite, args.cache, args.size)[args.skip:]
    extra = (args.design,) if design else ()
    jobs = [(c, int(s), *extra) for c in cases for s in args.seeds.split(",") if s]
    with Pool(2) as pool:
        records = pool.map(probe, jobs, chunksize=1)
    args.out.write_text(json.dumps(records))
    print("\n".join(score(records)))
    return 0
