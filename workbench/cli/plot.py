"""``nimo plot CAMPAIGN... -o FILE.png``: convergence (error vs learning time, as the paper's
Figures 4-8) and predicted vs measured T on the external test set (a live campaign's
holdout runs)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np

from nimo.errors import ConfigError, FileAccessError, one_line
from nimo.store import DEFAULT_URL, open_store

LEVEL = 0.90


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("plot", help="plot campaigns' convergence and accuracy")
    p.add_argument("campaigns", nargs="+", metavar="CAMPAIGN")
    p.add_argument("--store", metavar="URL", default=None,
                   help=f"campaign store (default $NIMO_STORE_URL or {DEFAULT_URL})")
    p.add_argument("-o", "--output", default="nimo-plot.png", metavar="FILE.png")
    p.set_defaults(func=cmd_plot)


def cmd_plot(args: argparse.Namespace) -> int:
    output = output_path(args.output)  # before any work: a bad -o costs nothing
    with open_store(args.store, create=False) as store:
        series = [_series(store, name) for name in args.campaigns]
    path = plot(series, output)
    print(f"wrote {path}")
    return 0


def output_path(raw: str) -> Path:
    """The file ``-o`` names, as written: a name without an extension gets ``.png`` (as
    matplotlib would add it); a directory or a format matplotlib cannot write is refused in
    one line naming the path and the supported formats."""
    from matplotlib.backend_bases import FigureCanvasBase

    path = Path(raw)
    if path.is_dir():
        raise FileAccessError(f"-o {raw}: is a directory",
                              hint=f"give a file, e.g. {path / 'nimo-plot.png'}")
    formats = sorted(FigureCanvasBase.get_supported_filetypes())
    fmt = path.suffix[1:].lower()
    if not fmt:
        return path.with_name(path.name.rstrip(".") + ".png")
    if fmt not in formats:
        raise ConfigError(f"-o {raw}: unsupported plot format {fmt!r}",
                          hint="supported: " + ", ".join(formats))
    return path


def _series(store: Any, name: str) -> dict[str, Any]:
    from nimo.campaign.lifecycle import external_cases
    from nimo.model import CostModel
    from nimo.model.calibration import EXTERNAL, HOLDOUT

    info = store.campaign(name)
    iterations = store.iterations(name)
    models = store.models(name)
    external = external_cases(info)
    source = "external test set"
    if not external:  # a live campaign: its holdout runs are the test set it never learned from
        external = [(dict(r.assignment), r.sample.T) for r in store.runs(name)
                    if r.purpose == "holdout" and r.sample is not None]
        source = "holdout runs"
    predicted: list[tuple[float, float]] = []
    intervals: list[tuple[float, float]] = []
    calibrated_on_them = False
    if models and external:
        model = CostModel.from_dict(models[-1].model)
        bounds = [model.predict_interval(a, LEVEL) for a, _ in external]
        predicted = [(T, p.mean) for (_, T), p in zip(external, bounds, strict=True)]
        intervals = [(p.lo, p.hi) for p in bounds]
        calibrated_on_them = model.calibration.get("method") == (
            EXTERNAL if source == "external test set" else HOLDOUT)
    holdout = (info.spec.get("holdout_result") or {}).get("holdout_mape_pct")
    return {
        "name": name,
        "t": [r.acquisition_s for r in iterations],
        "external": [r.external_mape_pct for r in iterations],
        "internal": [r.internal_error_pct for r in iterations],
        "predicted": predicted,
        "intervals": intervals,
        "source": source,
        "calibrated_on_them": calibrated_on_them,
        "holdout_mape": holdout,
    }


def plot(series: list[dict[str, Any]], path: Path) -> Path:
    """Two panels: error vs learning time per campaign; predicted vs measured T (log-log)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    horizon = max((max(s["t"], default=0.0) for s in series), default=0.0)
    scale, unit = (3600.0, "hours") if horizon > 3 * 3600 else (60.0, "minutes")
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.8))
    for i, s in enumerate(series):
        color = f"C{i % 10}"
        t = np.array(s["t"], float) / scale
        for key, style, label in (("external", "-o", "external MAPE"),
                                  ("internal", "--", "internal error")):
            y = np.array([np.nan if v is None else v for v in s[key]], float)
            if np.isfinite(y).any():
                ax1.plot(t, y, style, color=color, ms=3, label=f"{s['name']}: {label}")
        if s.get("holdout_mape") is not None and len(t):
            ax1.plot([t[-1]], [s["holdout_mape"]], "*", color=color, ms=11,
                     label=f"{s['name']}: holdout MAPE {s['holdout_mape']:.1f}%")
        if s["predicted"]:
            m, p = np.array(s["predicted"]).T
            lo, hi = np.array(s["intervals"], float).reshape(-1, 2).T
            known = np.isfinite(lo) & np.isfinite(hi)
            label = s["name"]
            if known.any():
                inside = int(np.sum((lo <= m) & (m <= hi) & known))
                label += f": {inside}/{len(m)} inside" + (
                    " (calibrated on them)" if s["calibrated_on_them"] else "")
                ax2.errorbar(m[known], p[known], yerr=[p[known] - lo[known],
                                                       hi[known] - p[known]],
                             fmt="none", ecolor=color, alpha=0.35, lw=1)
            ax2.scatter(m, p, s=14, color=color, label=label, zorder=3)
    ax1.set_xlabel(f"learning time ({unit})")
    ax1.set_ylabel("error (%)")
    ax1.set_title("Error vs learning time")
    ax1.set_ylim(bottom=0)
    ax1.grid(alpha=0.3)
    if ax1.lines:
        ax1.legend(fontsize=8)
    sources = sorted({s["source"] for s in series if s["predicted"]})
    _predicted_panel(ax2, [p for s in series for p in s["predicted"]], "; ".join(sources))
    fig.tight_layout()
    try:
        fig.savefig(path, dpi=110, format=path.suffix[1:].lower() or None)
    except OSError as e:
        raise FileAccessError(f"cannot write {path}: {e.strerror or e}") from None
    except (RuntimeError, ValueError) as e:  # a format's tool missing (pgf: LaTeX)
        raise FileAccessError(f"cannot write {path}: {one_line(e)}") from None
    finally:
        plt.close(fig)
    return path


def _predicted_panel(ax: Any, points: list[tuple[float, float]], source: str) -> None:
    ax.set_title(f"Predicted vs measured T, bars: {LEVEL:.0%} prediction interval")
    ax.set_xlabel(f"measured T (s): {source}" if source else "measured T (s)")
    ax.set_ylabel("predicted T (s)")
    if not points:
        ax.text(0.5, 0.5, "no external test set, holdout runs or model", ha="center",
                va="center",
                transform=ax.transAxes)
        return
    values = np.array([v for pair in points for v in pair if v > 0])
    lo, hi = values.min() / 1.5, values.max() * 1.5
    line = np.geomspace(lo, hi, 50)
    ax.plot(line, line, "k-", lw=1, label="y = x")
    ax.fill_between(line, line * 0.9, line * 1.1, color="grey", alpha=0.25, label="±10%")
    ax.set_xscale("log")
    ax.set_yscale("log")
    from matplotlib.ticker import FuncFormatter

    decades = np.log10(hi / lo)
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        axis.set_minor_formatter(FuncFormatter(lambda v, _: _minor_label(v, decades)))
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8, loc="upper left")


def _minor_label(value: float, decades: float) -> str:
    """Minor log ticks: 2 and 5 labelled over a few decades, 2-9 over less than one, none
    beyond (labels would collide)."""
    lead = round(value / 10 ** np.floor(np.log10(value)))
    shown = range(2, 10) if decades < 1 else (2, 5) if decades < 2.5 else ()
    return f"{value:g}" if lead in shown else ""
