"""How many independent judges a panel is worth: the correlation of its members' errors against
the human labels, and Kish's effective number of members (docs/juries.md, docs/definitions.md).

A member's *residual* on a pair is its grade minus the mean grade it gives, on the same pairs,
to the pairs of the pair's human grade: what the human grade does not explain, its leniency at
that grade taken out. For two members ``a`` and ``b`` the residuals are taken over the pairs both
answered (and the humans graded), and their correlation is the pooled within-grade correlation

    r_ab = sum_h C_ab(h) / sqrt(sum_h C_aa(h) * sum_h C_bb(h)),
    C_ab(h) = sum over the pairs of human grade h of (a - mean_h(a)) * (b - mean_h(b)),

the correlation of ``a`` and ``b`` once each human grade's means are removed (an analysis of
covariance with the human grade as the factor). Members whose errors are independent have r near
0; members that share their errors (one model family, one prompt, one copy of the labels) near 1.

Kish's design effect for a mean of ``m`` equally correlated units gives the panel's worth in
independent members: ``n_eff = m / (1 + (m - 1) * r_mean)``, ``r_mean`` the mean of the
``m (m - 1) / 2`` pairwise correlations: ``m`` for independent errors, 1 for one shared error;
above ``m`` when the errors are anti-correlated (they cancel better than independent ones), and
undefined (NaN) when ``1 + (m - 1) * r_mean <= 0``.

The intervals are the cluster bootstrap over queries (:mod:`.resample`): every resample
recomputes each grade's means, each correlation and from them n_eff, so the correlations and
n_eff share their draws. A draw where a member's residuals have no spread (every resampled pair
of a grade graded alike) leaves its correlation, and n_eff, undefined: counted, never dropped
silently (:func:`.resample.interval`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .resample import RESAMPLES, SEED, _factorize, query_resamples

_SUMS = 6  # per query and human grade: n, sum a, sum b, sum a*b, sum a*a, sum b*b


@dataclass(frozen=True)
class ErrorCorrelations:
    """The members' pairwise residual correlations and their bootstrap draws.

    ``pairs``: the member index pairs (i < j, row-major); ``point``: each pair's correlation;
    ``draws``: (resamples, pairs) correlations over resampled queries (NaN: undefined);
    ``used``: pairs of passages both members answered (with a human grade); ``queries``: their
    queries."""

    members: int
    pairs: tuple[tuple[int, int], ...]
    point: np.ndarray
    draws: np.ndarray
    used: np.ndarray
    queries: np.ndarray

    @property
    def mean(self) -> float:
        """The mean pairwise correlation (NaN when any is undefined)."""
        return float(np.mean(self.point)) if len(self.point) else math.nan

    @property
    def mean_draws(self) -> np.ndarray:
        """The mean pairwise correlation of every draw."""
        return self.draws.mean(axis=1) if self.draws.shape[1] else np.full(len(self.draws), math.nan)


def kish_n_eff(members: int, mean_correlation: float | np.ndarray) -> float | np.ndarray:
    """Kish's effective number of ``members`` whose errors correlate ``mean_correlation`` on
    average: ``m / (1 + (m - 1) * r)``; NaN where ``r`` is undefined or ``1 + (m - 1) r <= 0``."""
    r = np.asarray(mean_correlation, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        denominator = 1 + (members - 1) * r
        value = np.where(denominator > 0, members / np.where(denominator > 0, denominator, 1.0), math.nan)
    return float(value) if value.ndim == 0 else value


def _pair_sums(a: np.ndarray, b: np.ndarray, strata: np.ndarray, clusters: np.ndarray, shape: tuple[int, int]):
    """(queries, grades, 6) sums of one member pair over the passages both answered."""
    both = np.isfinite(a) & np.isfinite(b) & (strata >= 0)
    a, b = a[both], b[both]
    cells = clusters[both] * shape[1] + strata[both]
    size = shape[0] * shape[1]
    columns = (np.ones_like(a), a, b, a * b, a * a, b * b)
    sums = np.stack([np.bincount(cells, weights=w, minlength=size) for w in columns], axis=-1)
    return sums.reshape(shape[0], shape[1], _SUMS), int(both.sum()), len(set(clusters[both].tolist()))


def _correlation(sums: np.ndarray) -> np.ndarray:
    """The pooled within-grade correlation from (..., grades, 6) sums (NaN: no spread)."""
    n, sa, sb, sab, saa, sbb = np.moveaxis(sums, -1, 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        some = n > 0
        safe = np.where(some, n, 1.0)
        cab = np.where(some, sab - sa * sb / safe, 0.0).sum(axis=-1)
        caa = np.where(some, saa - sa * sa / safe, 0.0).sum(axis=-1)
        cbb = np.where(some, sbb - sb * sb / safe, 0.0).sum(axis=-1)
        spread = (caa > 1e-9) & (cbb > 1e-9)
        r = np.where(spread, cab / np.sqrt(np.where(spread, caa * cbb, 1.0)), math.nan)
    return np.clip(r, -1.0, 1.0)


def error_correlations(
    grades: np.ndarray,
    human: Sequence[float] | np.ndarray,
    clusters: Sequence,
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> ErrorCorrelations:
    """Every pair of members' within-grade residual correlation (module docstring) and its
    bootstrap draws over queries.

    ``grades``: (passages, members) grades, NaN where a member gave no answer; ``human``: each
    passage's human grade (NaN: none; the passage is left out); ``clusters``: each passage's
    query (the unit of the resamples)."""
    grades = np.asarray(grades, dtype=float)
    if grades.ndim != 2:
        raise ValueError(f"error_correlations needs a (passages, members) array, not shape {grades.shape}")
    human = np.asarray(human, dtype=float)
    if len(human) != len(grades) or len(clusters) != len(grades):
        raise ValueError("grades, human and clusters must have one entry per passage")
    members = grades.shape[1]
    known = np.isfinite(human)
    levels = np.unique(human[known])
    strata = np.full(len(human), -1)
    strata[known] = np.searchsorted(levels, human[known])
    codes, order = _factorize(clusters)
    codes = np.asarray(codes, dtype=int)
    shape = (len(order), max(len(levels), 1))
    pairs = tuple((i, j) for i in range(members) for j in range(i + 1, members))
    sums, used, queries = [], [], []
    for i, j in pairs:
        found, n, q = _pair_sums(grades[:, i], grades[:, j], strata, codes, shape)
        sums.append(found)
        used.append(n)
        queries.append(q)
    stacked = np.stack(sums) if sums else np.zeros((0, *shape, _SUMS))  # (pairs, queries, grades, 6)
    point = _correlation(stacked.sum(axis=1)) if len(pairs) else np.zeros(0)
    if len(order) < 2 or not len(pairs):
        draws = np.full((resamples, len(pairs)), math.nan)
    else:
        times = query_resamples(len(order), resamples, seed)  # (resamples, queries)
        drawn = np.einsum("bq,pqhk->bphk", times, stacked)
        draws = _correlation(drawn)
    return ErrorCorrelations(members, pairs, point, draws, np.array(used), np.array(queries))
