"""The leaderboard and decisions questions over the systems the user brought (docs/definitions.md).

Both rest on the user's systems only (recorded runs, BM25, rankers): constructed systems
(Perfect, Swap[...], built from the human labels) answer the separate oracles question, and
one of them far above the rest can decide either rule alone (a judge that ranks Perfect low
reverses every pair of Perfect with a real system). :func:`user_agreement` gives, for one judge
against one reference (two aligned query x system tables):

* ``tau_user``: Kendall's tau of the user systems' means, its bootstrap interval over queries,
  and a *calibrated* reference for it (:func:`tau_null`): the tau an unbiased judge with this
  judge's own per-query noise reaches (``tau_user_null``, the median of its draws) and the
  one-sided p of the observed tau under it (``tau_user_p``). A fixed bar (interval below 0.9)
  flags a judge with the humans' population ranking whenever its noise, or a close leaderboard,
  keeps tau under the bar;
* ``reversed_user``: pairs of user systems the judge orders the other way round with a
  significant difference in differences (:func:`voirdire.stats.difference_in_differences`, no
  correction), and the p of that count under a sign-flip null over whole queries
  (:func:`reversal_null`): pairs share systems, so one system's noise reverses many pairs at
  once and the count is far more spread than a binomial of independent pairs.

With fewer than :data:`MIN_USER_SYSTEMS` user systems neither rule is computed (NaN, counts 0).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .agreement import MIN_QUERIES, kendall_tau, kendall_tau_rows
from .paired import difference_in_differences
from .resample import LEVEL, RESAMPLES, SEED, interval, query_resamples

MIN_USER_SYSTEMS = 3
"""The fewest user systems the leaderboard and decisions rules rest on: tau over two systems is
+1 or -1 and nothing between, and two systems make one pair."""

NULL_DRAWS = 1999
"""Draws of each null: the reversal count's sign-flip patterns (every pattern when 2^queries is
fewer) and tau's bootstrap draws. The smallest p is 1 / 2000, so a p survives Holm's step-down
over a judge's questions (0.05 / 15 = 0.0033); tau's interval keeps the table's ``resamples``
(the first draws of the same seeded stream)."""

USER_COLUMNS = (
    "systems_user",
    "tau_user",
    "tau_user_ci_low",
    "tau_user_ci_high",
    "tau_user_null",
    "tau_user_p",
    "pairs_user",
    "reversed_user",
    "reversed_user_p",
    "reversed_user_expected",
)
"""The columns :func:`user_agreement` gives, in Table 2's order."""

_CHUNK = 2**18
"""Cells (patterns x pairs) of one step of the vectorised null: a few MB at a time."""


def user_systems(systems: Sequence[str], constructed: Sequence[str]) -> list[str]:
    """``systems`` less the constructed ones (oracles and swaps), in their order."""
    drop = {str(s) for s in constructed}
    return [s for s in systems if str(s) not in drop]


def sign_patterns(queries: int, flips: int = NULL_DRAWS, seed: int = SEED) -> tuple[np.ndarray, bool]:
    """(patterns, queries) signs +-1 and whether they are every pattern: all 2^queries when that
    is at most ``flips`` + 1 (the identity among them), else ``flips`` seeded random ones (the
    patterns :func:`voirdire.stats.sign_flip_p` draws)."""
    if 2**queries <= flips + 1:
        return (((np.arange(2**queries)[:, None] >> np.arange(queries)) & 1) * 2 - 1).astype(float), True
    return np.random.default_rng(seed).choice([-1.0, 1.0], size=(flips, queries)), False


def reversal_counts(reference: np.ndarray, judge: np.ndarray, alpha: float, signs: np.ndarray) -> np.ndarray:
    """For each row s of ``signs`` (patterns, queries): how many pairs of systems the judge
    ``reference + s_q (judge - reference)`` reverses, as
    :func:`voirdire.stats.difference_in_differences` (no correction) counts them: the paired
    t-test of d_q = (judge gap - reference gap) has p < alpha and the judge's mean gap has the
    other sign than the reference's.

    Vectorised over patterns and pairs: under a flip d becomes s_q d_q, whose sum of squares
    does not change, so each pattern's t needs only its mean (``signs @ d``). A pair whose d is
    0 on every query is never reversed (p 1, as there); d constant and nonzero has no spread
    (p 0, as there) only under the identity."""
    ref, mine = np.asarray(reference, dtype=float), np.asarray(judge, dtype=float)
    signs = np.atleast_2d(np.asarray(signs, dtype=float))
    queries, systems = ref.shape
    if systems < 2 or queries < 2:
        return np.zeros(len(signs), dtype=np.int64)
    left, right = (np.array(side) for side in zip(*itertools.combinations(range(systems), 2), strict=True))
    residual = mine - ref
    d = residual[:, left] - residual[:, right]  # (queries, pairs)
    gap = (ref[:, left] - ref[:, right]).mean(axis=0)
    squares = (d**2).sum(axis=0)
    live = ~np.isclose(d, 0).all(axis=0)
    from scipy import stats

    critical = float(stats.t.ppf(1 - alpha / 2, queries - 1))
    counts = np.zeros(len(signs), dtype=np.int64)
    step = max(1, _CHUNK // max(1, d.shape[1]))
    for start in range(0, len(signs), step):
        mean = signs[start : start + step] @ d / queries  # (patterns, pairs)
        spread = np.maximum(squares - queries * mean**2, 0.0) / (queries - 1)  # the sample variance of s*d
        # |t| > critical, written without dividing: a pair without spread and a nonzero mean is significant
        significant = live & (mean != 0) & (mean**2 * queries > critical**2 * spread)
        reversed_ = significant & (np.sign(gap) * np.sign(gap + mean) < 0)
        counts[start : start + step] = np.count_nonzero(reversed_, axis=1)
    return counts


@dataclass(frozen=True)
class ReversalNull:
    """The reversal count of a judge and its sign-flip null (:func:`reversal_null`)."""

    observed: int
    pairs: int
    p: float
    expected: float
    exact: bool


def reversal_null(
    reference: pd.DataFrame, judge: pd.DataFrame, alpha: float, *, flips: int = NULL_DRAWS, seed: int = SEED
) -> ReversalNull:
    """The pairs of systems the judge reverses (:func:`voirdire.stats.difference_in_differences`,
    no correction) and the count's null: every query's residual vector (judge - reference, over
    all systems at once) keeps or flips its sign, ``judge*_q = ref_q + s_q (judge_q - ref_q)``,
    and the count is taken again. Flipping a query's whole vector keeps what its systems share
    (the per-query offset, one system's noise that reverses many pairs together), so the null
    count has the spread of the real one; the binomial of independent pairs has a fraction of
    it. p = (1 + #{count* >= observed}) / (1 + flips), or the exact share over every pattern
    when 2^queries <= flips + 1; ``expected``: the mean count under the flips.

    The null is the judge = the reference + an error of its own, symmetric whatever the
    reference's scores. A judge that only compresses or widens the humans' gaps (a systematic
    error that reverses nothing) reverses more pairs under the flips than it does: conservative
    for it. A judge better than the human grade (the humans' per-query scores carry noise the
    judge does not share) breaks the null the other way: its residual is correlated with the
    reference's scores, the flips undo that, and on a near-tied leaderboard the test runs
    liberal: measured at alpha 5% on 20 systems within 0.05 nDCG and 43 queries, 5.2% where the
    humans' grades only add noise to a truth the judge shares, 18% where the judge shares none of
    the humans' per-query variation (4-5% over 0.3 nDCG). Judge = humans + its own error
    (per-query offsets, heteroscedastic, a per-query factor across systems, compressed): 2-5%.
    NaN with fewer than two queries or two systems."""
    columns = list(reference.columns)
    ref, mine = reference[columns].to_numpy(float), judge[columns].to_numpy(float)
    pairs = len(columns) * (len(columns) - 1) // 2
    if len(columns) < 2 or len(reference) < MIN_QUERIES:
        return ReversalNull(0, pairs, math.nan, math.nan, False)
    observed = int(difference_in_differences(reference[columns], judge[columns], alpha)["reversed"].sum())
    signs, exact = sign_patterns(len(reference), flips, seed)
    counts = reversal_counts(ref, mine, alpha, signs)
    above = int(np.count_nonzero(counts >= observed))
    # exact: the identity is among the patterns (counted once, whatever rounding says of it)
    p = max(above, 1) / len(counts) if exact else (above + 1) / (len(counts) + 1)
    return ReversalNull(observed, pairs, float(min(1.0, p)), float(counts.mean()), exact)


@dataclass(frozen=True)
class TauNull:
    """Kendall's tau of two system orderings, its bootstrap interval, and its calibrated null
    (:func:`tau_null`)."""

    tau: float
    low: float
    high: float
    null: float
    p: float
    degenerate: int


def _truth_spread(scores: np.ndarray) -> tuple[np.ndarray, float]:
    """The systems' means and the variance across systems their population means have: the
    means' variance less what the query sample adds to it in expectation (the per-query
    covariance of the systems, centred across systems so a query's shared offset drops out,
    traced, over queries x (systems - 1)), at least 0."""
    queries, systems = scores.shape
    means = scores.mean(axis=0)
    centred = scores - scores.mean(axis=1, keepdims=True)  # per-query offsets shared by every system drop out
    noise = centred.var(axis=0, ddof=1).sum() / ((systems - 1) * queries)
    return means, max(0.0, float(means.var(ddof=1)) - noise)


def tau_null(
    reference: np.ndarray,
    judge: np.ndarray,
    *,
    resamples: int = RESAMPLES,
    draws: int = NULL_DRAWS,
    seed: int = SEED,
    level: float = LEVEL,
) -> TauNull:
    """Kendall's tau between the systems' means of two aligned (queries, systems) arrays, its
    percentile bootstrap interval over queries from ``resamples`` draws (the draws of
    :func:`voirdire.stats.system_agreement_intervals` with the same seed: the same interval as
    its ``tau_all`` over these columns), and the tau a judge reaches that has the reference's
    population ordering and this judge's own per-query noise (``draws`` bootstrap draws, the
    first ``resamples`` of them the interval's).

    The null world: both sides' population means on one line, the reference's at
    ``m = mean + c (means - mean)`` (its means shrunk so that their spread is the one the
    population means have: the sampling variance of the means subtracted, :func:`_truth_spread`),
    the judge's at ``b m``, b >= 0 giving the judge its own population spread the same way (tau
    is blind to scale, but a judge whose scores are compressed has less signal over its noise
    than the reference). Each draw adds both sides' deviations of the resampled queries from
    their means, jointly (whole queries: the per-query offsets stay shared across systems, the
    judge's errors keep their correlation with the reference's scores), scaled by sqrt(Q / (Q -
    1)) to the unbiased variance, and tau* is taken between the two. ``null``: the median of
    tau*; ``p``: (1 + #{tau* <= tau}) / (1 + draws), one-sided: a judge is flagged for ordering
    the systems *less* like the reference than its noise explains.

    Why the reference's own sampling noise enters: the humans' means are estimates from the same
    queries. Holding them fixed as the truth and resampling only the centred residual (judge -
    reference) is right when the judge is the humans plus an error of its own, independent of
    the humans' scores; where the residual carries the humans' noise (humans noisier than the
    judge, a judge that compresses the humans' gaps) it takes that noise for an ordering the
    judge should reproduce and is liberal: on simulated 20-system, 43-query leaderboards it
    flagged 13% (humans noisier than the judge), 23% (compressing judge, near-tied) and 50%
    (judge sharing none of the humans' per-query variation) of unbiased judges at alpha 5%.
    Resampling the raw reference means as the truth counts their noise twice and errs the same
    way on near-tied leaderboards. The shrunk truth with both sides' noise drawn jointly held
    every one of those nulls at 1.5-4% (400 simulations each, near-tied and spread).

    NaN (null and p) with fewer than two queries; tau (and p) NaN where either side ties every
    system."""
    ref, mine = np.asarray(reference, dtype=float), np.asarray(judge, dtype=float)
    queries, systems = ref.shape
    means_r, means_j = ref.mean(axis=0), mine.mean(axis=0)
    tau = kendall_tau(means_r, means_j)
    if queries < MIN_QUERIES or systems < 2:
        return TauNull(tau, math.nan, math.nan, math.nan, math.nan, 0)
    times = query_resamples(queries, max(resamples, draws), seed)  # the interval's draws first
    draws_r, draws_j = times @ ref / queries, times @ mine / queries
    found = interval(kendall_tau_rows(draws_r[:resamples], draws_j[:resamples]), level)
    (_, spread_r), (_, spread_j) = _truth_spread(ref), _truth_spread(mine)
    scatter = float(means_r.var(ddof=1))
    centre = means_r - means_r.mean()
    truth = centre * math.sqrt(spread_r / scatter) if scatter > 0 else np.zeros(systems)
    slope = math.sqrt(spread_j / spread_r) if spread_r > 0 else 0.0
    inflate = math.sqrt(queries / (queries - 1))
    null = kendall_tau_rows(truth + inflate * (draws_r - means_r), slope * truth + inflate * (draws_j - means_j))
    finite = null[np.isfinite(null)]
    if not len(finite) or math.isnan(tau):
        return TauNull(tau, found.low, found.high, math.nan, math.nan, found.degenerate)
    p = (1 + np.count_nonzero(finite <= tau + 1e-12)) / (1 + len(finite))
    return TauNull(tau, found.low, found.high, float(np.median(finite)), float(p), found.degenerate)


def user_agreement(
    reference: pd.DataFrame,
    judge: pd.DataFrame,
    constructed: Sequence[str],
    alpha: float,
    *,
    resamples: int = RESAMPLES,
    draws: int = NULL_DRAWS,
    seed: int = SEED,
    level: float = LEVEL,
) -> dict[str, float]:
    """:data:`USER_COLUMNS` of one judge against one reference (aligned query x system tables):
    the leaderboard (tau) and decisions (reversed pairs) rules over the user systems, the
    columns less ``constructed``. ``systems_user`` counts them; with fewer than
    :data:`MIN_USER_SYSTEMS` every statistic is NaN and the counts 0."""
    user = user_systems(list(reference.columns), constructed)
    row: dict[str, float] = {column: math.nan for column in USER_COLUMNS}
    row.update(systems_user=len(user), pairs_user=0, reversed_user=0)
    if len(user) < MIN_USER_SYSTEMS:
        return row
    ref, mine = reference[user], judge[user]
    found = tau_null(
        ref.to_numpy(float), mine.to_numpy(float), resamples=resamples, draws=draws, seed=seed, level=level
    )
    row.update(
        tau_user=found.tau,
        tau_user_ci_low=found.low,
        tau_user_ci_high=found.high,
        tau_user_null=found.null,
        tau_user_p=found.p,
    )
    counted = reversal_null(ref, mine, alpha, flips=draws, seed=seed)
    row.update(
        pairs_user=counted.pairs,
        reversed_user=counted.observed,
        reversed_user_p=counted.p,
        reversed_user_expected=counted.expected,
    )
    return row
