"""Sample-selection sequences (pure): Algorithm 5's binary-search order over levels."""

from __future__ import annotations

from collections.abc import Iterator, Sequence


def bisection_fractions() -> Iterator[float]:
    """0, 1, 1/2, 1/4, 3/4, 1/8, 3/8, 5/8, 7/8, 1/16, ...: the paper's lo, hi, (lo+hi)/2,
    (3lo+hi)/4, (lo+3hi)/4, (7lo+hi)/8, (5lo+3hi)/8, ... as fractions of hi - lo."""
    yield 0.0
    yield 1.0
    denom = 2
    while True:
        for num in range(1, denom, 2):
            yield num / denom
        denom *= 2


def lmax_level_order(levels: Sequence[float]) -> list[float]:
    """Distinct levels in the order the binary-search sequence first reaches them, each
    wished-for value snapped to the nearest not-yet-chosen level."""
    levels = sorted(set(float(v) for v in levels))
    if len(levels) <= 1:
        return list(levels)
    lo, hi = levels[0], levels[-1]
    chosen: list[float] = []
    remaining = list(levels)
    for frac in bisection_fractions():
        target = lo + frac * (hi - lo)
        best = min(remaining, key=lambda v: (abs(v - target), v))
        # Only take a level when it is the nearest level overall, so depth grows evenly.
        nearest_any = min(levels, key=lambda v: (abs(v - target), v))
        if best == nearest_any:
            chosen.append(best)
            remaining.remove(best)
            if not remaining:
                return chosen
        if frac != 0.0 and frac != 1.0 and (hi - lo) * _step(frac) < _min_gap(levels) / 4:
            # Finer than any gap between levels: snap whatever is left in sequence order.
            chosen.extend(remaining)
            return chosen
    return chosen  # pragma: no cover


def _step(frac: float) -> float:
    denom = 2
    while (frac * denom) % 1:
        denom *= 2
    return 1.0 / denom


def _min_gap(levels: Sequence[float]) -> float:
    return min(b - a for a, b in zip(levels, levels[1:], strict=False))
