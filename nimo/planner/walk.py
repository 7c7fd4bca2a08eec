"""Step 2.2 of Algorithm 1: which attribute a predictor explores next.

Each predictor walks its attribute order (set by the attribute-order strategy). It keeps
its current attribute until two runs on it improved its error by less than the threshold,
then adds the next one of its order (cycling, as the paper does once all are in).
"""

from __future__ import annotations

from collections.abc import Sequence


class AttributeWalk:
    """Per predictor: its attribute order, the attribute being explored and its progress."""

    def __init__(self, orders: dict[str, list[str]], threshold_pct: float) -> None:
        self.orders = orders
        self.threshold_pct = threshold_pct
        self.current: dict[str, str | None] = {p: None for p in orders}
        self.cursor = {p: 0 for p in orders}
        self.on_current = {p: 0 for p in orders}
        self.errors_of: dict[str, list[float]] = {p: [] for p in orders}
        self.exhausted: set[str] = set()  # predictors with nothing left to explore
        self.done: set[str] = set()  # attributes with no level left to explore

    def restart(self) -> None:
        """Training (re)starts from a reference: every predictor and attribute is open."""
        self.exhausted = set()
        self.done = set()

    def start_at(self, predictor: str, attribute: str) -> None:
        """Explore ``attribute`` first; the order continues after it."""
        self.current[predictor] = attribute
        self.cursor[predictor] = self.orders[predictor].index(attribute) + 1

    def attribute_for(self, f: str, active: list[str]) -> str | None:
        """Keep f's current attribute, or add the next of its order to ``active``."""
        cur = self.current[f]
        if cur is not None and cur not in self.done and not self._stalled(f):
            return cur
        return self._add_next(f, active)

    def _stalled(self, f: str) -> bool:
        errs = self.errors_of[f]
        return (self.on_current[f] >= 2 and len(errs) >= 2
                and errs[-2] - errs[-1] < self.threshold_pct)

    def _add_next(self, f: str, active: list[str]) -> str | None:
        """An attribute whose levels around the reference are all measured already joins
        f at no cost, and the next one is tried."""
        order = self.orders[f]
        open_attrs = [a for a in order if a not in self.done]
        for step in range(len(order)):
            attr = order[(self.cursor[f] + step) % len(order)]
            if attr not in active:
                active.append(attr)
            if attr in self.done or (attr == self.current[f] and len(open_attrs) > 1):
                continue
            self.cursor[f] = (self.cursor[f] + step + 1) % len(order)
            self.current[f] = attr
            self.on_current[f] = 0
            return attr
        return None

    def exhaust(self, f: str, active: list[str]) -> None:
        """f has nothing left to explore: every attribute of its order joins it (measured
        already, at no cost)."""
        self.exhausted.add(f)
        _join(self.orders[f], active)

    def join_all(self, active: dict[str, list[str]]) -> None:
        """Every predictor may use every attribute of its order."""
        for p, order in self.orders.items():
            _join(order, active[p])

    def open_predictors(self, order: Sequence[str]) -> list[str]:
        return [p for p in order if p not in self.exhausted]

    def ran(self, f: str) -> None:
        """A training run for f finished (successfully or not)."""
        if f in self.on_current:
            self.on_current[f] += 1


def _join(order: Sequence[str], active: list[str]) -> None:
    for a in order:
        if a not in active:
            active.append(a)
