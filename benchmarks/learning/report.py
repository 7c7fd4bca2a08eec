"""Summaries of the learning benchmark's campaign records and the printed report."""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from typing import Any

from benchmarks.learning.metrics import (
    BUDGET_FRACTION,
    CONFIG_FRACTIONS,
    COVERAGE_ROWS,
    GBR,
    RANDOM,
    SMALL_APP,
    TARGET_PCT,
    TIME_FRACTIONS,
    median_inf,
    share,
)


def _fmt(v: float | None, spec: str = ".1f") -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    if math.isinf(v):
        return "inf"
    return format(v, spec)


def _by_design(records: Sequence[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    order = {RANDOM: 1, GBR: 2}
    for r in sorted(records, key=lambda r: (order.get(r["design"], 0), r["design"])):
        out.setdefault(r["design"], []).append(r)
    return out


Records = Sequence[dict[str, Any]]
Pairs = dict[tuple[str, int], dict[str, Any]]  # (case, seed) -> the random baseline's record


def _common(rs: Records, ok: Records) -> dict[str, Any]:
    """Final figures, honesty, coverage and time of one design's campaigns."""
    s: dict[str, Any] = {
        "final_mape_median": median_inf(r.get("final_mape") for r in rs),
        "runs_median": median_inf(r.get("runs") for r in ok),
        "stop_pct_time_median": median_inf(r.get("stop_pct_time") for r in ok)}
    s.update(honesty_figures([r.get("honesty") for r in ok], "honesty"))
    inside = sum(r.get("judge_inside", 0) for r in ok)
    runs = sum(r.get("judge_runs", 0) for r in ok)
    s["coverage_pooled"] = inside / runs if runs else math.nan
    cov = [r["coverage"] for r in ok if r.get("coverage") is not None]
    s["coverage_median"] = statistics.median(cov) if cov else math.nan
    inside_x = sum(r.get("judge_inside_extcal", 0) for r in ok)
    s["coverage_extcal_pooled"] = inside_x / runs if runs else math.nan
    ext = [r["external_coverage"] for r in ok if r.get("external_coverage") is not None]
    s["external_coverage_median"] = statistics.median(ext) if ext else math.nan
    s["nan_intervals"] = sum(r.get("judge_nan_intervals", 0) for r in ok)
    s["judge_mape_median"] = median_inf(r.get("judge_mape") for r in ok)
    s["judge_width_median"] = median_inf(  # (hi - lo) / predicted T; NaN in older records
        r["judge_width"] for r in ok if r.get("judge_width") is not None)
    s["nonpositive_predictions"] = sum(r.get("judge_nonpositive", 0) for r in ok)
    walls = [r["wall_s"] for r in rs]
    s["wall_mean_s"], s["wall_max_s"] = statistics.mean(walls), max(walls)
    s.update(_space(rs, ok))
    return s


def honesty_figures(ratios: Sequence[float | None], key: str) -> dict[str, Any]:
    """Median of the campaigns' ext/int ratios, their shares above 2 and below 1/2, and
    their spread: the sd of log(ext/int) (a shift of the estimate moves the median, only a
    smaller spread lets the median into 0.8-1.25 with few campaigns above 2)."""
    hon = [float(h) for h in ratios if h is not None]
    logs = [math.log(h) for h in hon if h > 0]
    return {f"{key}_median": statistics.median(hon) if hon else math.nan,
            f"{key}_over_2": share([h > 2 for h in hon]),
            f"{key}_under_half": share([h < 0.5 for h in hon]),
            f"{key}_sd_log": statistics.pstdev(logs) if len(logs) > 1 else math.nan,
            f"{key}_n": len(hon)}


def _space(rs: Records, ok: Records) -> dict[str, Any]:
    """The same figures judged on every assignment a campaign did not run
    (benchmarks/learning/space.py)."""
    runs = sum(r.get("space_runs", 0) for r in ok)
    return {"space_final_median": median_inf(r.get("space_final") for r in rs),
            "space_coverage_pooled": (sum(r.get("space_inside", 0) for r in ok) / runs
                                      if runs else math.nan),
            **honesty_figures([r.get("space_honesty") for r in ok], "space_honesty"),
            "space_reached_within_share": share([bool(r.get("space_reached_within"))
                                                 for r in rs]),
            "space_reach_runs_median": median_inf(r.get("space_reach_run") for r in rs)}


def _reach(design: str, rs: Records, ok: Records, rand: Pairs) -> dict[str, Any]:
    """Generated suites: reach and keep, the learning curve, runs against random."""
    s: dict[str, Any] = {
        "reached_within_share": share([bool(r.get("reached_within")) for r in rs]),
        "reached_ever_share": share([r.get("reach_run") is not None for r in rs]),
        "reached_within_by_size": {
            label: [share([bool(r.get("reached_within")) for r in part]), len(part)]
            for label, part in (
                (f"<{SMALL_APP}", [r for r in rs if r["configurations"] < SMALL_APP]),
                (f">={SMALL_APP}", [r for r in rs if r["configurations"] >= SMALL_APP]))},
        "reach_runs_median": median_inf(r.get("reach_run") for r in rs),
        "curve": {f: median_inf((r.get("curve") or {}).get(str(f)) for r in rs)
                  for f in TIME_FRACTIONS},
        "stopped_by": {f: share([r.get("exit") != 0 or r["stop_pct_time"] <= 100 * f
                                 for r in rs]) for f in TIME_FRACTIONS}}
    if design != RANDOM and rand:
        pairs = [(r.get("reach_run"), rand[(r["case"], r["seed"])].get("reach_run"))
                 for r in ok if (r["case"], r["seed"]) in rand]
        both = [a / b for a, b in pairs if a is not None and b is not None]
        s["reach_runs_ratio_paired_median"] = statistics.median(both) if both else None
        s["reach_pairs_both"] = len(both)
    return s


def _marks(design: str, rs: Records, rand: Pairs) -> dict[float, dict[str, Any]]:
    """Real and small suites: MAPE after 10/20/30% of the configurations."""
    marks: dict[float, dict[str, Any]] = {}
    for f in CONFIG_FRACTIONS:
        vals = [(r.get("marks") or {}).get(str(f), {}) for r in rs]
        marks[f] = {"mape_median": median_inf(v.get("mape") for v in vals),
                    "stopped_before": sum(bool(v.get("stopped_before")) for v in vals)}
        if design != RANDOM and rand:
            wins = [v.get("mape") is not None and rand[(r["case"], r["seed"])]
                    .get("marks", {}).get(str(f), {}).get("mape", math.inf)
                    >= v["mape"] for r, v in zip(rs, vals, strict=True)
                    if (r["case"], r["seed"]) in rand]
            marks[f]["at_or_below_random"] = share(wins)
    return marks


def summarize(records: Records, generated: bool) -> dict[str, Any]:
    by = _by_design(records)
    summary: dict[str, Any] = {}
    rand = {(r["case"], r["seed"]): r for r in by.get(RANDOM, []) if r.get("exit") == 0}
    for design, rs in by.items():
        ok = [r for r in rs if r.get("exit") == 0]
        s: dict[str, Any] = {"campaigns": len(rs), "failed": len(rs) - len(ok)}
        if design != GBR:
            s.update(_common(rs, ok))
        if generated and design != GBR:
            s.update(_reach(design, rs, ok, rand))
        if not generated:
            s["marks"] = _marks(design, rs, rand)
        summary[design] = s
    if generated and RANDOM in summary:
        base = summary[RANDOM]["reach_runs_median"]
        for design, s in summary.items():
            if design not in (RANDOM, GBR):
                s["reach_runs_ratio"] = (s["reach_runs_median"] / base
                                         if math.isfinite(base) and base > 0 else math.nan)
    return summary


def _report_reach(pr: Callable[[str], None], summary: dict[str, Any], w: int) -> None:
    """[1] and the learning curve (generated suites)."""
    designs = [d for d in summary if d != GBR]
    pr(f"\n[1] reach AND keep external MAPE <= {TARGET_PCT:g}% within "
       f"{100 * BUDGET_FRACTION:g}% of all-samples time")
    pr(f"{'design':<{w}}{'share':>8}{'runs to reach':>15}{'x random':>10}"
       f"{'paired x':>10}{'final MAPE':>12}{'runs':>7}{'stop %time':>12}")
    for d in designs:
        s = summary[d]
        pr(f"{d:<{w}}{_fmt(100 * s['reached_within_share'], '.0f') + '%':>8}"
           f"{_fmt(s['reach_runs_median']):>15}{_fmt(s.get('reach_runs_ratio'), '.2f'):>10}"
           f"{_fmt(s.get('reach_runs_ratio_paired_median'), '.2f'):>10}"
           f"{_fmt(s['final_mape_median']):>12}{_fmt(s['runs_median'], '.0f'):>7}"
           f"{_fmt(s['stop_pct_time_median'], '.2f'):>12}")
    pr("by application size (assignments), and reached at any cost:")
    for d in designs:
        s = summary[d]
        pr(f"  {d:<{w}}" + ", ".join(
            f"{k}: {_fmt(100 * v[0], '.0f')}% of {v[1]}"
            for k, v in s["reached_within_by_size"].items())
           + f"; at any cost {_fmt(100 * s['reached_ever_share'], '.0f')}%")
    pr("\n[curve] median external MAPE % at a fraction of the all-samples time "
       "(in brackets: share of campaigns already stopped)")
    pr(f"{'design':<{w}}" + "".join(f"{f'{100 * f:g}%':>14}" for f in TIME_FRACTIONS))
    for d in designs:
        s = summary[d]
        pr(f"{d:<{w}}" + "".join(
            f"{_fmt(s['curve'][f]) + ' [' + _fmt(100 * s['stopped_by'][f], '.0f') + ']':>14}"
            for f in TIME_FRACTIONS))


def _report_marks(pr: Callable[[str], None], summary: dict[str, Any], w: int,
                  records: Records) -> None:
    """[2]: MAPE after 10/20/30% of the configurations, per design and per case."""
    designs = [d for d in summary if d != GBR]
    pr("\n[2] median external MAPE % after 10/20/30% of the configurations were measured "
       "(in brackets: campaigns stopped before the mark; share at or below random)")
    pr(f"{'design':<{w}}" + "".join(f"{f'{100 * f:g}%':>22}" for f in CONFIG_FRACTIONS))
    for d in summary:
        m = summary[d]["marks"]
        cells = []
        for f in CONFIG_FRACTIONS:
            extra = f" [{m[f]['stopped_before']}"
            if "at_or_below_random" in m[f]:
                extra += f"; {_fmt(100 * m[f]['at_or_below_random'], '.0f')}%"
            cells.append(f"{_fmt(m[f]['mape_median']) + extra + ']':>22}")
        pr(f"{d:<{w}}" + "".join(cells))
    cases = sorted({r["case"] for r in records})
    pr("\nper case: median over seeds of external MAPE % at 10/20% of the configurations")
    pr(f"{'case':<32}{'n':>4}" + "".join(f"{d[:16]:>18}" for d in summary))
    for c in cases:
        rs = [r for r in records if r["case"] == c]
        cells = []
        for d in summary:
            v = [median_inf((r.get("marks") or {}).get(str(f), {}).get("mape")
                            for r in rs if r["design"] == d) for f in CONFIG_FRACTIONS[:2]]
            cells.append(f"{_fmt(v[0], '.0f') + ' / ' + _fmt(v[1], '.0f'):>18}")
        pr(f"{c[:31]:<32}{rs[0]['configurations']:>4}" + "".join(cells))
    pr(f"\n{'design':<{w}}{'final MAPE':>12}{'runs':>7}")
    for d in designs:
        s = summary[d]
        pr(f"{d:<{w}}{_fmt(s['final_mape_median']):>12}{_fmt(s['runs_median'], '.0f'):>7}")


def _report_honesty(pr: Callable[[str], None], summary: dict[str, Any], w: int) -> None:
    """[3] honesty, [4] coverage."""
    designs = [d for d in summary if d != GBR]
    pr("\n[3] honesty at stop: external MAPE / last internal error; [4] coverage of the 90% "
       "interval on judge runs (never seen by the campaign; width: the median of (hi - lo) / "
       "predicted T)")
    pr(f"{'design':<{w}}{'ext/int med':>12}{'> 2':>7}{'< 1/2':>7}{'sd log':>8}{'n':>5}"
       f"{'cover pooled':>14}{'cover med':>11}{'width':>7}{'NaN int':>9}{'judge MAPE':>12}"
       f"{'T<=0':>6}")
    for d in designs:
        s = summary[d]
        pr(f"{d:<{w}}{_fmt(s['honesty_median'], '.2f'):>12}{_spread(s, 'honesty')}"
           f"{s['honesty_n']:>5}"
           f"{_fmt(100 * s['coverage_pooled'], '.1f') + '%':>14}"
           f"{_fmt(100 * s['coverage_median'], '.0f') + '%':>11}"
           f"{_fmt(s.get('judge_width_median', math.nan), '.2f'):>7}{s['nan_intervals']:>9}"
           f"{_fmt(s['judge_mape_median']):>12}{s['nonpositive_predictions']:>6}")
    pr("[4b] 90% coverage before / after recalibrating on the external test set (replay did "
       "until issue 9 item 5; the model delivered now keeps its own calibration or the "
       "--calibration split): judge runs pooled; the replay's own external coverage (median)")
    pr(f"{'design':<{w}}{'judge before':>14}{'judge after':>13}{'ext cover med':>15}")
    for d in designs:
        s = summary[d]
        pr(f"{d:<{w}}{_fmt(100 * s['coverage_pooled'], '.1f') + '%':>14}"
           f"{_fmt(100 * s['coverage_extcal_pooled'], '.1f') + '%':>13}"
           f"{_fmt(100 * s['external_coverage_median'], '.0f') + '%':>15}")


def _report_space(pr: Callable[[str], None], summary: dict[str, Any], w: int,
                  generated: bool) -> None:
    """[space]: reach & keep, final and honesty judged on every assignment not run."""
    designs = [d for d in summary if d != GBR]
    pr("\n[space] judged on every assignment the campaign did not run (mean T of its "
       "repeats), not on the external test set only; cover: the 90% interval on every "
       f"repeat of up to {COVERAGE_ROWS} of them")
    pr(f"{'design':<{w}}" + (f"{'reach&keep':>12}{'runs':>7}{'x random':>10}"
                             if generated else "") + f"{'final MAPE':>12}{'ext/int med':>13}"
       f"{'> 2':>7}{'< 1/2':>7}{'sd log':>8}{'n':>5}{'cover pooled':>14}")
    base = summary.get(RANDOM, {}).get("space_reach_runs_median", math.nan)
    for d in designs:
        s = summary[d]
        ratio = (s["space_reach_runs_median"] / base
                 if math.isfinite(base) and base > 0 and d != RANDOM else None)
        reach = (f"{_fmt(100 * s['space_reached_within_share'], '.0f') + '%':>12}"
                 f"{_fmt(s['space_reach_runs_median']):>7}{_fmt(ratio, '.2f'):>10}"
                 if generated else "")
        pr(f"{d:<{w}}{reach}{_fmt(s['space_final_median']):>12}"
           f"{_fmt(s['space_honesty_median'], '.2f'):>13}"
           f"{_spread(s, 'space_honesty')}{s['space_honesty_n']:>5}"
           f"{_fmt(100 * s.get('space_coverage_pooled', math.nan), '.1f') + '%':>14}")


def _spread(s: dict[str, Any], key: str) -> str:
    """The columns '> 2', '< 1/2' and 'sd log' of one design's ext/int ratios."""
    return (f"{_fmt(100 * s[f'{key}_over_2'], '.0f') + '%':>7}"
            f"{_fmt(100 * s[f'{key}_under_half'], '.0f') + '%':>7}"
            f"{_fmt(s[f'{key}_sd_log'], '.2f'):>8}")


def report(summary: dict[str, Any], generated: bool, n_cases: int, seeds: Sequence[int],
           wall: float, records: Records) -> str:
    w = max([len(d) for d in summary] + [18]) + 2
    out: list[str] = []
    pr = out.append
    pr(f"\n{n_cases} cases x seeds {','.join(map(str, seeds))}; medians over (case, seed) "
       "campaigns")
    if generated:
        _report_reach(pr, summary, w)
    else:
        _report_marks(pr, summary, w, records)
    _report_honesty(pr, summary, w)
    _report_space(pr, summary, w, generated)
    pr("\n[time] wall per campaign (in a worker)")
    for d in summary:
        s = summary[d]
        if "wall_mean_s" in s:
            pr(f"{d:<{w}}mean {s['wall_mean_s']:.1f} s, max {s['wall_max_s']:.1f} s, "
               f"{s['campaigns']} campaigns, {s['failed']} failed")
        else:
            pr(f"{d:<{w}}{s['campaigns']} fits, {s['failed']} failed")
    pr(f"total wall {wall:.0f} s")
    fails = [r for r in records if r.get("exit") != 0]
    for r in fails[:5]:
        pr(f"FAILED {r['case']} {r['design']} seed {r['seed']}: exit {r.get('exit')}: "
           f"{(r.get('error') or '').splitlines()[-1:]}")
    return "\n".join(out)


def progress_line(r: dict[str, Any], i: int, n: int, elapsed: float) -> str:
    """One finished job of ``n`` (the ``i``-th), as the evaluation prints it while it runs."""
    if r.get("exit") != 0:
        outcome = f"FAILED exit {r.get('exit')}"
    elif r["design"] == GBR:
        outcome = "MAPE at marks " + "/".join(_fmt(v["mape"]) for v in r["marks"].values())
    else:
        outcome = f"runs {r.get('runs', '-')}, final MAPE {_fmt(r.get('final_mape'))}"
    return (f"[{i}/{n}] {r['case']} {r['design']} seed {r['seed']}: {outcome}, "
            f"{r.get('wall_s', 0):.1f} s; elapsed {elapsed:.0f} s, "
            f"eta {elapsed / i * (n - i):.0f} s")
