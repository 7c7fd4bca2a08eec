"""Plackett-Burman designs with foldover (PBDF) for any number of factors.

A PB design for N factors has n runs, n the smallest multiple of 4 above N; unused columns are
dummy factors. Designs come from Hadamard matrices: Paley I (cyclic, n-1 prime = 3 mod 4; for
n = 8, 12, 20, 24 this is exactly Plackett and Burman's generator, shifted right one place per
row, plus a row of all -1), Paley II (n/2-1 prime = 1 mod 4), or doubling. Foldover appends the
negated rows, which makes every main effect orthogonal to every two-factor interaction.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from nimo.errors import ConfigError

MAX_RUNS = 200


def _is_prime(q: int) -> bool:
    return q >= 2 and all(q % d for d in range(2, int(q**0.5) + 1))


def _chi(q: int) -> np.ndarray:
    """Quadratic character mod prime q: chi[0]=0, +1 for residues, -1 otherwise."""
    chi = -np.ones(q, dtype=int)
    chi[0] = 0
    chi[[(i * i) % q for i in range(1, q)]] = 1
    return chi


def _cyclic_generator(q: int) -> np.ndarray:
    """PB's first row for n = q+1 runs: +1 at 0 and at the quadratic residues mod q."""
    g = _chi(q)
    g[0] = 1
    return g


@cache
def hadamard(n: int) -> np.ndarray:
    """A Hadamard matrix of order n (H @ H.T == n I) whose first column is all +1."""
    if n == 1:
        h = np.ones((1, 1), dtype=int)
    elif n == 2:
        h = np.array([[1, 1], [1, -1]])
    elif n % 4 or n > MAX_RUNS:
        raise ConfigError(f"no Hadamard matrix of order {n}", hint="orders are 1, 2 or 4k <= 200")
    elif _is_prime(n - 1) and (n - 1) % 4 == 3:
        q = n - 1
        g = _cyclic_generator(q)
        rows = np.array([np.roll(g, i) for i in range(q)] + [-np.ones(q, dtype=int)])
        h = np.hstack([np.ones((n, 1), dtype=int), rows])
    elif n % 8 == 4 and _is_prime(n // 2 - 1) and (n // 2 - 1) % 4 == 1:
        q = n // 2 - 1
        chi = _chi(q)
        jac = np.array([[chi[(j - i) % q] for j in range(q)] for i in range(q)])
        conf = np.zeros((q + 1, q + 1), dtype=int)
        conf[0, 1:] = 1
        conf[1:, 0] = 1
        conf[1:, 1:] = jac
        h = np.kron(conf, np.array([[1, -1], [-1, -1]])) + np.kron(
            np.eye(q + 1, dtype=int), np.array([[1, 1], [1, -1]])
        )
    elif n % 2 == 0:
        half = hadamard(n // 2)
        h = np.block([[half, half], [half, -half]])
    else:  # pragma: no cover - n % 4 == 0 always reaches a branch above for n <= 200
        raise ConfigError(f"no construction for a Hadamard matrix of order {n}")
    return h * h[:, :1]  # normalise: first column all +1


def runs_for(factors: int) -> int:
    """Smallest supported PB run count for ``factors`` factors (a multiple of 4 > factors)."""
    if factors < 1:
        raise ConfigError(f"a Plackett-Burman design needs at least 1 factor (got {factors})")
    n = 4 * (factors // 4 + 1)
    while n <= MAX_RUNS:
        try:
            hadamard(n)
            return n
        except ConfigError:
            n += 4
    raise ConfigError(f"too many factors for a Plackett-Burman design: {factors}", hint="max 199")


def pb_design(factors: int) -> np.ndarray:
    """The PB design matrix (runs x factors) in {-1, +1}; columns beyond ``factors`` dropped."""
    n = runs_for(factors)
    return hadamard(n)[:, 1 : factors + 1].copy()


def foldover(design: np.ndarray) -> np.ndarray:
    """Append the negated rows (2x runs)."""
    return np.vstack([design, -design])


def pbdf_design(factors: int) -> np.ndarray:
    """PB design with foldover: 2n runs x factors."""
    return foldover(pb_design(factors))


def effects(design: np.ndarray, y: np.ndarray) -> np.ndarray:
    """|sum_i x_ij y_i| for each factor j (Appendix A)."""
    design = np.asarray(design, float)
    y = np.asarray(y, float)
    if design.shape[0] != y.shape[0]:
        raise ConfigError(f"{design.shape[0]} design rows but {y.shape[0]} responses")
    return np.abs(design.T @ y)


def rank(design: np.ndarray, y: np.ndarray) -> list[int]:
    """Factor indices in decreasing order of effect (ties keep factor order)."""
    e = effects(design, y)
    return [int(i) for i in np.argsort(-e, kind="stable")]
