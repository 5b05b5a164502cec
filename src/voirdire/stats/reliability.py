"""Krippendorff's alpha between two labelers (docs/definitions.md, Agreement): the agreement
measure the field reports beside Cohen's kappa (the LLMJudge challenge ranks its submissions by
both, arXiv 2502.13908, and the two orders differ).

alpha = 1 - D_o / D_e: the observed disagreement of the pairs over the disagreement expected
of values drawn at random from everything either side said (Krippendorff 2011, "Computing
Krippendorff's alpha-reliability"). Unlike kappa its chance term pools both sides' grades, so a
judge's own leniency counts against it; the level of measurement sets the distance of two grades:

* ``ordinal``: how many values lie between them (the counts of the grades from one to the
  other, less half of each end's), so a step across a common grade counts more than a step
  across a rare one;
* ``interval``: the squared difference of the grades (a shift by one grade costs 1 a pair);
* ``nominal``: 0 for the same value, 1 otherwise (on two values, 0/1 labels, all three levels
  give the same alpha).

The point estimate is the maintained ``krippendorff`` package's (:func:`krippendorff_alpha`,
imported where it is called). Its bootstrap draws are not: one call builds the (pairs x values)
count array and its coincidences afresh, about 10 ms for DL19's 9,260 pairs on a 2-core AVX2
machine (measured), so 1,000 draws at two levels is some 20 s a judge. Two labelers' coincidence
matrix is their confusion matrix plus its transpose, and a resample of whole queries is a sum of
the queries' confusion matrices (:func:`voirdire.stats.per_query_confusion`), so
:func:`alpha_from_counts` computes every draw at once from (draws, values, values) counts in a
few milliseconds; a test holds that it equals the package on the full data and on resampled
draws (to 1e-12).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from .agreement import per_query_confusion
from .resample import LEVEL, RESAMPLES, SEED, interval, query_resamples

LEVELS = ("ordinal", "interval", "nominal")
"""The levels of measurement :func:`alpha_from_counts` knows (the package's names)."""


def _check(level: str) -> None:
    if level not in LEVELS:
        raise ValueError(f"level of measurement {level!r}: one of {', '.join(LEVELS)}")


def krippendorff_alpha(a: Sequence[float], b: Sequence[float], level: str) -> float:
    """Krippendorff's alpha of two aligned label vectors (one pair a unit, both labelled) at
    ``level``, computed by the ``krippendorff`` package on the values present; NaN where it is
    undefined (no pair, or one value on both sides: no expected disagreement)."""
    _check(level)
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape:
        raise ValueError("label vectors must be aligned")
    if len(a) == 0 or len(np.unique(np.concatenate([a, b]))) < 2:
        return math.nan
    import krippendorff  # here: the science core imports its optional packages where used

    return float(krippendorff.alpha(reliability_data=np.vstack([a, b]), level_of_measurement=level))


def alpha_distances(totals: np.ndarray, values: Sequence[float], level: str) -> np.ndarray:
    """The squared distances (..., V, V) of the values at ``level``; ``totals`` (..., V) are the
    pairable values' counts (the coincidence matrix's margins), which the ordinal distance reads."""
    _check(level)
    totals = np.asarray(totals, dtype=float)
    size = len(values)
    if level == "nominal":
        return np.broadcast_to(1.0 - np.eye(size), (*totals.shape[:-1], size, size))
    if level == "interval":
        grades = np.asarray(values, dtype=float)
        return np.broadcast_to(np.subtract.outer(grades, grades) ** 2, (*totals.shape[:-1], size, size))
    index = np.arange(size)
    low, high = np.minimum.outer(index, index), np.maximum.outer(index, index)
    running = np.cumsum(totals, axis=-1)
    between = (
        running[..., high] - running[..., low] + totals[..., low]
    )  # the counts of the values from one to the other
    return (between - (totals[..., :, None] + totals[..., None, :]) / 2) ** 2


def alpha_from_counts(counts: np.ndarray, values: Sequence[float], level: str) -> np.ndarray:
    """Krippendorff's alpha of two labelers from their (..., V, V) confusion counts over the
    values ``values`` (in order; a value neither side used adds nothing): the coincidence
    matrix is the counts plus their transpose, its margins the values' pairable counts n_v, and
    alpha = 1 - (n - 1) * sum(o * d) / sum(n_v n_v' * d). NaN where no disagreement is
    expected (one value on both sides, or fewer than two pairs)."""
    counts = np.asarray(counts, dtype=float)
    if counts.shape[-2:] != (len(values), len(values)):
        raise ValueError(f"counts of shape {counts.shape} for {len(values)} values")
    coincidences = counts + np.swapaxes(counts, -1, -2)
    totals = coincidences.sum(axis=-1)
    n = totals.sum(axis=-1)
    distance = alpha_distances(totals, values, level)
    observed = (coincidences * distance).sum(axis=(-2, -1))
    expected = (totals[..., :, None] * totals[..., None, :] * distance).sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where((expected > 0) & (n > 1), 1 - (n - 1) * observed / expected, math.nan)


def alpha_draws(
    query_ids: Sequence[str],
    a: Sequence[int],
    b: Sequence[int],
    values: Sequence[float],
    level: str,
    times: np.ndarray,
) -> np.ndarray:
    """Alpha of every resample of whole queries: ``times`` (draws, queries) says how often each
    query (in first-seen order of ``query_ids``) is drawn (:func:`voirdire.stats.query_resamples`)."""
    counts = per_query_confusion(query_ids, a, b, values, values)
    return alpha_from_counts(np.einsum("bq,qij->bij", times, counts), values, level)


def alpha_interval(
    aligned: pd.DataFrame,
    values: Sequence[float],
    level: str,
    *,
    a: str = "relevance_human",
    b: str = "relevance_judge",
    resamples: int = RESAMPLES,
    seed: int = SEED,
    level_ci: float = LEVEL,
) -> dict[str, float]:
    """Krippendorff's alpha of the columns ``a`` and ``b`` of ``aligned`` (with query_id) at
    ``level`` over the value domain ``values``: ``alpha`` (the package's), its cluster-bootstrap
    interval over queries (``ci_low``, ``ci_high``; the draws of :func:`query_resamples` with
    ``seed``, the same as the kappas') and ``degenerate``, the draws left undefined."""
    x, y = aligned[a].to_numpy(dtype=float), aligned[b].to_numpy(dtype=float)
    found = {"alpha": krippendorff_alpha(x, y, level), "ci_low": math.nan, "ci_high": math.nan, "degenerate": 0}
    queries = aligned["query_id"].tolist()
    if len(dict.fromkeys(queries)) < 2:
        return found
    times = query_resamples(len(dict.fromkeys(queries)), resamples, seed)
    drawn = interval(alpha_draws(queries, x.tolist(), y.tolist(), values, level, times), level_ci)
    return found | {"ci_low": drawn.low, "ci_high": drawn.high, "degenerate": drawn.degenerate}
