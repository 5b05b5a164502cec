"""Judges ranked against each other, with paired comparisons of neighbours (docs/audits.md, "The
judges' leaderboard").

A judging challenge's first question is which label sets agree best with the humans, and whether
the top ones differ. Each judge's measure here is a function of *sums over queries* of per-query
arrays: the confusion counts of its labels against the humans' (Cohen's kappa, Krippendorff's
alpha: :func:`voirdire.stats.kappa_from_counts`, :func:`voirdire.stats.reliability.alpha_from_counts`),
or the systems' per-query scores beside the reference's (Kendall's tau of the systems' means). So
a resample of whole queries is one matrix product (``times @ per_query``), every judge on the same
(resamples, queries) multiplicities (:func:`voirdire.stats.query_resamples`), and 84 label sets
rank in seconds.

* each judge's measure with its cluster-bootstrap interval over queries;
* the judges ranked by it (best first; an undefined measure last);
* each judge against the next one down: the difference of the measure with its *paired* interval
  (both judges on the same query resamples: what the two share, a hard topic, an assessor's
  habits, cancels in the difference) and a two-sided p of the swap test (:func:`swap_p`): each
  query's arrays of the two judges swapped or not, every pattern at once;
* the p-values adjusted by Holm over the adjacent comparisons (:func:`voirdire.stats.adjust`),
  and the judges cut into tiers where a comparison is significant.

The swap test's null is that the two judges' labels are exchangeable query by query (two judges
of the same quality drawing their errors independently are); it is exact over every pattern where
2^queries is few enough, else seeded random patterns with the add-one estimate, and enough of them
(:func:`swap_draws`) that Holm over many neighbours can still reject. The comparisons are chosen by
the observed order, so each compares the two judges the data put closest: conservative, never
liberal, when the judges are alike.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from .leaderboard import NULL_DRAWS, sign_patterns
from .multiplicity import adjust
from .resample import LEVEL, RESAMPLES, SEED, Interval, interval, query_resamples

Statistic = Callable[[np.ndarray], np.ndarray]
"""A measure of a judge from its per-query arrays summed over (resampled) queries: (n, *shape) ->
(n,), NaN where it is undefined."""

RANK_COLUMNS = [
    "rank",
    "judge",
    "queries",
    "value",
    "value_ci_low",
    "value_ci_high",
    "degenerate",
    "next_judge",
    "difference",
    "difference_ci_low",
    "difference_ci_high",
    "difference_degenerate",
    "p",
    "p_holm",
    "comparisons",
    "patterns",
    "distinguishable",
    "tier",
]
"""The columns of :func:`rank_judges`, in order."""
COMPARED = ("difference", "difference_ci_low", "difference_ci_high", "p")


def per_query_counts(
    query_ids: Sequence, a: Sequence, b: Sequence, values_a: Sequence, values_b: Sequence, queries: Sequence
) -> np.ndarray:
    """(queries, |values_a|, |values_b|) confusion counts of aligned labels on a fixed query axis
    (``queries``, in that order; a query without a pair has zero counts), so every judge's
    counts line up with every other's."""
    query_index = pd.Index(list(queries))
    codes = query_index.get_indexer(pd.Index(query_ids))
    if (codes < 0).any():
        raise ValueError("a pair's query is not on the query axis")
    index_a = pd.Index(list(values_a)).get_indexer(pd.Index(a))
    index_b = pd.Index(list(values_b)).get_indexer(pd.Index(b))
    if (index_a < 0).any() or (index_b < 0).any():
        raise ValueError("a label outside its values")
    counts = np.zeros((len(query_index), len(values_a), len(values_b)))
    np.add.at(counts, (codes, index_a, index_b), 1)
    return counts


def measure_draws(per_query: np.ndarray, statistic: Statistic, times: np.ndarray) -> np.ndarray:
    """The statistic of every resample: ``times`` (draws, queries) multiplicities of the queries
    (:func:`voirdire.stats.query_resamples`), ``per_query`` (queries, ...) the judge's arrays."""
    per_query = np.asarray(per_query, dtype=float)
    flat = per_query.reshape(len(per_query), -1)
    return np.asarray(statistic((times @ flat).reshape(len(times), *per_query.shape[1:])), dtype=float)


def point(per_query: np.ndarray, statistic: Statistic) -> float:
    """The statistic over every query once."""
    per_query = np.asarray(per_query, dtype=float)
    return float(np.asarray(statistic(per_query.sum(axis=0)[None]), dtype=float)[0])


def swap_draws(comparisons: int, alpha: float) -> int:
    """Random swap patterns for ``comparisons`` tests Holm-adjusted at ``alpha``: at least
    :data:`voirdire.stats.NULL_DRAWS`, and enough that the smallest p (1 / (patterns + 1)) is a
    tenth of Holm's first threshold, alpha / comparisons (16,599 for 83 neighbours at 0.05)."""
    return max(NULL_DRAWS, math.ceil(10 * max(1, comparisons) / alpha) - 1)


def swap_p(
    a: np.ndarray,
    b: np.ndarray,
    statistic: Statistic,
    signs: np.ndarray,
    exact: bool,
    *,
    swaps: np.ndarray | None = None,
) -> float:
    """Two-sided p that two judges' measures differ only by chance: under the null their
    per-query arrays (``a``, ``b``: queries, ...) are exchangeable query by query, so each row of
    ``signs`` (patterns, queries; -1 swaps the query's arrays, :func:`voirdire.stats.leaderboard.
    sign_patterns`) gives a difference the two could as well have shown. p is the share of
    patterns at least as far from 0 as the observed difference: exact when ``signs`` is every
    pattern (the identity among them), else (1 + count) / (1 + patterns). Patterns whose
    statistic is undefined are left out; NaN when the observed difference is. ``swaps``: the
    patterns as 0/1 (1 swaps), when the caller has them at hand for many pairs."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    shape = a.shape[1:]
    total_a, total_b = a.sum(axis=0).ravel(), b.sum(axis=0).ravel()
    observed = point(a, statistic) - point(b, statistic)
    if not math.isfinite(observed):
        return math.nan
    swaps = (1 - np.asarray(signs, dtype=float)) / 2 if swaps is None else swaps
    moved = swaps @ (b - a).reshape(len(a), -1)  # what each pattern swaps
    null = statistic((total_a + moved).reshape(-1, *shape)) - statistic((total_b - moved).reshape(-1, *shape))
    null = np.asarray(null, dtype=float)
    null = null[np.isfinite(null)]
    if not len(null):
        return math.nan
    tolerance = 1e-9 * max(1.0, abs(observed))
    extreme = int(np.count_nonzero(np.abs(null) >= abs(observed) - tolerance))
    p = max(extreme, 1) / len(null) if exact else (extreme + 1) / (len(null) + 1)
    return float(min(1.0, p))


def difference_interval(
    a: np.ndarray,
    b: np.ndarray,
    statistic: Statistic,
    *,
    paired: bool = True,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    level: float = LEVEL,
) -> Interval:
    """The bootstrap interval of statistic(a) - statistic(b) over queries: ``paired``, both
    judges on the same query resamples (as :func:`rank_judges` compares them); else each on its
    own (``seed`` and ``seed + 1``), as two intervals read side by side would treat them."""
    queries = len(a)
    times = query_resamples(queries, resamples, seed)
    other = times if paired else query_resamples(queries, resamples, seed + 1)
    return interval(measure_draws(a, statistic, times) - measure_draws(b, statistic, other), level)


def rank_judges(
    per_query: Mapping[str, np.ndarray],
    statistic: Statistic,
    *,
    alpha: float = 0.05,
    correction: str = "holm",
    resamples: int = RESAMPLES,
    seed: int = SEED,
    level: float = LEVEL,
    draws: int | None = None,
) -> pd.DataFrame:
    """The judges of ``per_query`` (judge -> its (queries, ...) arrays, every judge on one query
    axis) ranked by ``statistic``, best first, with :data:`RANK_COLUMNS`:

    * ``value`` and its percentile interval over query resamples (``degenerate``: undefined draws);
    * ``next_judge``: the judge ranked next; ``difference`` = value - its value, its interval
      with both judges on the same resamples, ``p`` the swap test's (:func:`swap_p`) and
      ``p_holm`` adjusted by ``correction`` over the ``comparisons`` adjacent pairs;
      ``patterns``: the swap patterns each p rests on (:func:`swap_draws` random ones, or every
      pattern where 2^queries is fewer);
    * ``distinguishable``: ``p_holm`` < alpha (NA without a comparison); ``tier``: 1 for the leader and every judge down to
      the first distinguishable comparison, then 2, ... (judges two apart in one tier may still
      differ: only neighbours are compared).

    A judge whose measure is undefined ranks last, with no comparison and no tier."""
    names = list(per_query)
    arrays = {j: np.asarray(per_query[j], dtype=float) for j in names}
    queries = len(arrays[names[0]]) if names else 0
    if any(len(x) != queries for x in arrays.values()):
        raise ValueError("every judge's arrays need the same query axis")
    values = {j: point(arrays[j], statistic) for j in names}
    times = query_resamples(queries, resamples, seed) if queries >= 2 else None
    boot = {j: measure_draws(arrays[j], statistic, times) if times is not None else None for j in names}
    defined = [j for j in names if math.isfinite(values[j])]
    order = sorted(defined, key=lambda j: -values[j]) + [j for j in names if j not in defined]  # stable: ties in order
    comparisons = max(0, len(defined) - 1) if times is not None else 0
    signs, exact = sign_patterns(queries, draws if draws is not None else swap_draws(comparisons, alpha), seed)
    swaps = (1 - signs) / 2
    rows = []
    for rank, judge in enumerate(order, start=1):
        found = interval(boot[judge], level) if boot[judge] is not None else Interval(math.nan, math.nan, 0)
        row = dict.fromkeys(COMPARED, math.nan) | {"next_judge": None, "difference_degenerate": 0}
        row |= {
            "rank": rank,
            "judge": judge,
            "queries": queries,
            "value": values[judge],
            "value_ci_low": found.low,
            "value_ci_high": found.high,
            "degenerate": found.degenerate,
        }
        below = order[rank] if rank < len(order) else None
        if comparisons and judge in defined and below in defined:
            gap = interval(boot[judge] - boot[below], level)
            p = swap_p(arrays[judge], arrays[below], statistic, signs, exact, swaps=swaps)
            row |= {
                "next_judge": below,
                "difference": values[judge] - values[below],
                "difference_ci_low": gap.low,
                "difference_ci_high": gap.high,
                "difference_degenerate": gap.degenerate,
                "p": p,
            }
        rows.append(row)
    table = pd.DataFrame(rows, columns=RANK_COLUMNS[: RANK_COLUMNS.index("p") + 1])
    p = table["p"].to_numpy(dtype=float)
    table["p_holm"] = adjust(p, correction) if comparisons > 1 else p  # one test: its own p
    table["comparisons"] = comparisons
    table["patterns"] = len(signs) if comparisons else 0
    compared = table["p_holm"].notna()
    table["distinguishable"] = pd.array(np.where(compared, table["p_holm"] < alpha, None), dtype="boolean")
    tiers, tier = [], 1
    for judge, split in zip(table["judge"], table["distinguishable"].fillna(False), strict=True):
        tiers.append(tier if judge in defined else math.nan)
        tier += bool(split)
    table["tier"] = pd.array(tiers, dtype="Int64") if len(table) else pd.array([], dtype="Int64")
    return table[RANK_COLUMNS]
