"""Resampling by query: the one bootstrap every audit calls (docs/definitions.md, Intervals).

Pairs, labels and per-query scores of one query are not independent (one topic, one assessor,
one prompt), so the unit of every resample is the query: a cluster bootstrap (Davison &
Hinkley 1997, section 3.8; Field & Welsh 2007). Draws are seeded, so a rerun gives the same
interval; a draw whose statistic is undefined (a resample where every system ties, a grade
no resampled query has) is *counted* and reported beside the interval, never dropped
silently.

No audit module draws its own resamples or calls ``scipy.stats.bootstrap``; a test in the
suite reads their source to hold that.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

RESAMPLES = 1000
SEED = 42
LEVEL = 0.95


def query_resamples(queries: int, resamples: int = RESAMPLES, seed: int = SEED) -> np.ndarray:
    """(resamples, queries) multiplicities of a bootstrap over queries (seeded): row b says how
    many times each query is drawn in resample b."""
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, queries, size=(resamples, queries))
    # the counts of each row's picks (np.add.at's, a tenth of the time): cell b * queries + q
    cells = (np.arange(resamples)[:, None] * queries + picks).ravel()
    return np.bincount(cells, minlength=resamples * queries).reshape(resamples, queries).astype(float)


def query_picks(queries: int, resamples: int = RESAMPLES, seed: int = SEED) -> np.ndarray:
    """(resamples, queries) indices of the queries drawn (the same draws as
    :func:`query_resamples` with the same seed), for statistics that are not sums."""
    rng = np.random.default_rng(seed)
    return rng.integers(0, queries, size=(resamples, queries))


@dataclass(frozen=True)
class Interval:
    """A percentile bootstrap interval and how many of its draws were undefined."""

    low: float
    high: float
    degenerate: int = 0

    def __iter__(self):  # low, high = interval
        return iter((self.low, self.high))


def interval(values: np.ndarray | Sequence[float], level: float = LEVEL) -> Interval:
    """The percentile interval of bootstrap values; undefined (non-finite) draws are left out
    and counted in ``degenerate``; NaN when no draw is defined."""
    values = np.asarray(values, dtype=float)
    finite = np.isfinite(values)
    degenerate = int((~finite).sum())
    if not finite.any():
        return Interval(math.nan, math.nan, degenerate)
    low, high = percentile_bounds(values[finite], level)
    return Interval(float(low), float(high), degenerate)


def percentile_bounds(draws: np.ndarray, level: float = LEVEL, axis: int | None = None) -> np.ndarray:
    """The ``level`` percentile interval's two bounds of ``draws`` (along ``axis``: a column of
    draws per estimate gives a (2, estimates) array); the one place the tails are set."""
    tail = 100 * (1 - level) / 2
    return np.percentile(draws, [tail, 100 - tail], axis=axis)


def percentile_interval(values: np.ndarray, level: float = LEVEL) -> tuple[float, float]:
    """(low, high) of :func:`interval`."""
    found = interval(values, level)
    return found.low, found.high


def cluster_sums(values: np.ndarray | Sequence[float], clusters: Sequence) -> tuple[np.ndarray, np.ndarray]:
    """Per-cluster sums and counts of ``values`` (clusters in first-seen order)."""
    values = np.asarray(values, dtype=float)
    codes, _ = _factorize(clusters)
    k = int(codes.max()) + 1 if len(codes) else 0
    return np.bincount(codes, weights=values, minlength=k), np.bincount(codes, minlength=k).astype(float)


def _factorize(clusters: Sequence) -> tuple[np.ndarray, list]:
    """Each cluster's code (0, 1, ... in first-seen order) and the clusters in that order."""
    values = clusters if hasattr(clusters, "__array__") else pd.Series(list(clusters), dtype=object)
    if not np.asarray(pd.isna(values)).any():  # pandas' hash table: the walk below, in C
        codes, uniques = pd.factorize(values, sort=False)
        return codes.astype(int), list(uniques)
    seen: dict = {}
    codes = np.array([seen.setdefault(c, len(seen)) for c in values], dtype=int)
    return codes, list(seen)


def ratio_interval(
    sums: np.ndarray, counts: np.ndarray, *, resamples: int = RESAMPLES, seed: int = SEED, level: float = LEVEL
) -> Interval:
    """Cluster-bootstrap interval of sum(sums) / sum(counts) (a mean over pairs, or a rate,
    whose pairs cluster by query): the queries are resampled, the ratio recomputed."""
    sums, counts = np.asarray(sums, dtype=float), np.asarray(counts, dtype=float)
    if len(sums) < 2:
        return Interval(math.nan, math.nan, 0)
    times = query_resamples(len(sums), resamples, seed)
    with np.errstate(invalid="ignore", divide="ignore"):
        boot = (times @ sums) / (times @ counts)
    return interval(boot, level)


def clustered_mean(
    values: np.ndarray | Sequence[float],
    clusters: Sequence,
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    level: float = LEVEL,
) -> tuple[float, Interval]:
    """The mean of ``values`` (over pairs) and its cluster-bootstrap interval (over queries)."""
    sums, counts = cluster_sums(values, clusters)
    if not counts.sum():
        return math.nan, Interval(math.nan, math.nan, 0)
    point = float(sums.sum() / counts.sum())
    if np.ptp(np.asarray(values, dtype=float)) == 0:
        return point, Interval(point, point, 0)
    return point, ratio_interval(sums, counts, resamples=resamples, seed=seed, level=level)


def mean_interval(
    values: np.ndarray | Sequence[float], *, resamples: int = RESAMPLES, seed: int = SEED, level: float = LEVEL
) -> Interval:
    """Percentile bootstrap interval of the mean of independent units (one value per query, or
    per system where the unit is the system); the point when every value is equal."""
    values = np.asarray(values, dtype=float)
    if len(values) == 0:
        return Interval(math.nan, math.nan, 0)
    if np.ptp(values) == 0:
        return Interval(float(values[0]), float(values[0]), 0)
    times = query_resamples(len(values), resamples, seed)
    return interval(times @ values / len(values), level)


def column_mean_intervals(
    values: np.ndarray, *, resamples: int = RESAMPLES, seed: int = SEED, level: float = LEVEL
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`mean_interval` of every column of a (queries, k) array at once (one system's score
    per query, a column per system): the same draws for every column, so each bound equals
    ``mean_interval(column)``'s. A column with missing values is bootstrapped over its finite
    ones alone, as its mean is taken over them; a column with none has NaN bounds."""
    values = np.asarray(values, dtype=float)
    if values.ndim != 2:
        raise ValueError(f"column_mean_intervals needs a (queries, columns) array, not shape {values.shape}")
    low, high = np.full(values.shape[1], math.nan), np.full(values.shape[1], math.nan)
    whole = np.isfinite(values).all(axis=0)
    if len(values) and whole.any():
        block = values[:, whole]
        times = query_resamples(len(values), resamples, seed)
        bounds = percentile_bounds(times @ block / len(values), level, axis=0)
        constant = np.ptp(block, axis=0) == 0  # the point itself, as mean_interval gives it
        bounds[:, constant] = block[0, constant]
        low[whole], high[whole] = bounds
    for column in np.flatnonzero(~whole):
        finite = values[:, column][np.isfinite(values[:, column])]
        low[column], high[column] = mean_interval(finite, resamples=resamples, seed=seed, level=level)
    return low, high
