"""Rates of pairs that cluster by query: the cluster-bootstrap interval reads, and Wilson's
interval as a descriptive pair-level figure (it assumes independent pairs, and is too narrow
where leniency varies by topic)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .resample import LEVEL, RESAMPLES, SEED, Interval, cluster_sums, ratio_interval


def wilson(successes: int, n: int, *, level: float = LEVEL) -> tuple[float, float]:
    """Wilson score interval of a proportion (statsmodels), every pair independent; NaN for n = 0."""
    from statsmodels.stats.proportion import proportion_confint

    if n == 0:
        return math.nan, math.nan
    low, high = proportion_confint(successes, n, alpha=1 - level, method="wilson")
    return float(low), float(high)


def clustered_rate(
    hits: Sequence[bool] | np.ndarray,
    queries: Sequence,
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    level: float = LEVEL,
) -> tuple[float, Interval]:
    """The share of ``hits`` and its cluster-bootstrap interval over queries (pairs of a query
    move together). A rate of 0 or 1 gets the exact binomial (Clopper-Pearson) bound on the
    open side, so that no rate reads as certain; NaN with no pair."""
    hits = np.asarray(hits, dtype=float)
    if len(hits) == 0:
        return math.nan, Interval(math.nan, math.nan, 0)
    sums, counts = cluster_sums(hits, queries)
    rate = float(hits.mean())
    if 0 < rate < 1:
        return rate, ratio_interval(sums, counts, resamples=resamples, seed=seed, level=level)
    from statsmodels.stats.proportion import proportion_confint

    low, high = proportion_confint(int(hits.sum()), len(hits), alpha=1 - level, method="beta")
    return rate, Interval(float(low), float(high), 0)
