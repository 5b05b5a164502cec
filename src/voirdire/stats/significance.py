"""IR's own significance practice over queries (docs/definitions.md, Significance):

* the paired randomization test of every pair of systems (Smucker, Allan & Carterette 2007):
  each query's difference keeps or flips its sign;
* randomized Tukey HSD across all systems at once (Carterette 2012; Sakai 2014): each query's
  scores are shuffled across the systems, and a pair's p is the share of shuffles whose
  largest gap between any two system means reaches the pair's gap, so the family-wise error
  over every pair is held at alpha;
* discriminative power: the share of pairs a test calls significant, and the achieved
  significance level (ASL) curve, the p-values sorted (Sakai 2006).

The rank statistics beside Kendall's tau (tau_AP, tau on the top systems, max drop) are in
:mod:`voirdire.stats.agreement`.

Every test returns the columns of :func:`voirdire.stats.paired.paired_tests` (system_a,
system_b, mean_diff, t, p), so Table 2's missed / spurious / flipped read any of them.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from .paired import PERMUTATIONS, paired_tests
from .resample import SEED

TESTS = ("t", "randomization", "tukey")
"""The tests ``evaluation.test`` chooses among: paired t (the paper's), randomization, Tukey HSD."""


def _pairs(columns: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    pairs = list(itertools.combinations(range(len(columns)), 2))
    left, right = (
        (np.array(side, dtype=int) for side in zip(*pairs, strict=True)) if pairs else (np.array([], int),) * 2
    )
    return left, right


def _frame(columns, left, right, diff, p) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "system_a": [columns[i] for i in left],
            "system_b": [columns[j] for j in right],
            "mean_diff": diff,
            "t": np.full(len(left), math.nan),
            "p": p,
        }
    )


def randomization_tests(per_query: pd.DataFrame, *, permutations: int = PERMUTATIONS, seed: int = SEED) -> pd.DataFrame:
    """Paired randomization test of every pair of systems (one query x system table in): the
    per-query differences keep or flip their signs together within a query; p two-sided, exact
    when 2^queries <= permutations + 1, else the add-one estimate over seeded draws. The same
    draws serve every pair."""
    columns = list(per_query.columns)
    left, right = _pairs(columns)
    if not len(left):
        return _frame(columns, left, right, np.array([]), np.array([]))
    values = per_query.to_numpy(dtype=float)
    diffs = values[:, left] - values[:, right]  # queries x pairs
    queries = len(values)
    exact = 2**queries <= permutations + 1
    if exact:
        signs = ((np.arange(2**queries)[:, None] >> np.arange(queries)) & 1) * 2.0 - 1
    else:
        signs = np.random.default_rng(seed).choice([-1.0, 1.0], size=(permutations, queries))
    observed = np.abs(diffs.sum(axis=0))
    tolerance = 1e-12 * np.maximum(1.0, np.abs(diffs).sum(axis=0))
    hits = np.zeros(len(left))
    for start in range(0, len(signs), 2000):
        hits += (np.abs(signs[start : start + 2000] @ diffs) >= observed - tolerance).sum(axis=0)
    p = hits / len(signs) if exact else (hits + 1) / (len(signs) + 1)
    p = np.where(np.isclose(diffs, 0).all(axis=0), 1.0, np.minimum(p, 1.0))
    return _frame(columns, left, right, diffs.mean(axis=0), p)


def tukey_tests(
    per_query: pd.DataFrame, *, permutations: int = PERMUTATIONS, seed: int = SEED, chunk: int = 500
) -> pd.DataFrame:
    """Randomized Tukey HSD of every pair of systems at once: in each of ``permutations`` seeded
    shuffles every query's scores are permuted across the systems, and the largest difference
    between two system means is recorded; a pair's p is the add-one share of shuffles whose
    largest difference reaches the pair's |mean difference| (family-wise over every pair)."""
    columns = list(per_query.columns)
    left, right = _pairs(columns)
    if not len(left):
        return _frame(columns, left, right, np.array([]), np.array([]))
    values = per_query.to_numpy(dtype=float)
    queries, systems = values.shape
    rng = np.random.default_rng(seed)
    observed = np.abs(values[:, left].mean(axis=0) - values[:, right].mean(axis=0))
    hits = np.zeros(len(left))
    for start in range(0, permutations, chunk):
        size = min(chunk, permutations - start)
        order = np.argsort(rng.random((size, queries, systems)), axis=2)
        shuffled = np.take_along_axis(np.broadcast_to(values, (size, queries, systems)), order, axis=2)
        means = shuffled.mean(axis=1)  # size x systems
        spread = means.max(axis=1) - means.min(axis=1)
        hits += (spread[:, None] >= observed[None, :] - 1e-12).sum(axis=0)
    p = (hits + 1) / (permutations + 1)
    same = np.isclose(values[:, left] - values[:, right], 0).all(axis=0)
    return _frame(
        columns, left, right, values[:, left].mean(axis=0) - values[:, right].mean(axis=0), np.where(same, 1.0, p)
    )


def significance_tests(per_query: pd.DataFrame, test: str = "t", **options) -> pd.DataFrame:
    """Every pair of systems by ``test`` (one of :data:`TESTS`)."""
    if test == "t":
        return paired_tests(per_query)
    if test == "randomization":
        return randomization_tests(per_query, **options)
    if test == "tukey":
        return tukey_tests(per_query, **options)
    raise ValueError(f"unknown test {test!r} (one of {', '.join(TESTS)})")


def discriminative_power(p_values: Sequence[float], alpha: float = 0.05) -> float:
    """The share of system pairs a test calls significant at ``alpha`` (Sakai 2006); NaN with no pair."""
    p = np.asarray(p_values, dtype=float)
    return float(np.mean(p < alpha)) if len(p) else math.nan


def asl_curve(p_values: Sequence[float]) -> np.ndarray:
    """The achieved significance levels sorted ascending: the ASL curve (Sakai 2006) is this
    against the pair's rank."""
    return np.sort(np.asarray(p_values, dtype=float))
