"""Paired tests, with the query as the unit (docs/definitions.md, Paired tests).

* Systems: paired t-tests over queries for every pair of systems (scipy), which significant
  differences a judge misses, invents or flips, and the test of each pair's *difference in
  differences* (judge - human, paired over queries).
* Labels of the same pairs under two conditions (pad, injection, personas, rewrites, reruns):
  :func:`paired_shift`. Pairs of one query share a topic, an assessor and a prompt, so they
  are not independent: the mean shift is tested by a sign-flip permutation test over whole
  queries (``scipy.stats.permutation_test``; Fisher 1935, Good 2005), its interval is a
  cluster bootstrap over queries, and the label distribution's move is a clustered test of
  marginal homogeneity (Durkalski et al. 2003, generalised from 2 to g grades; with one pair
  per query it is Stuart-Maxwell's statistic exactly). The pair-level sign test stays, as a
  descriptive column named ``sign_p_pairs``.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

from .multiplicity import adjust
from .resample import LEVEL, RESAMPLES, SEED, _factorize, cluster_sums, ratio_interval

PERMUTATIONS = 9999
"""Sign-flip draws of the permutation test (exact enumeration when 2^queries is smaller)."""


def paired_tests(per_query: pd.DataFrame) -> pd.DataFrame:
    """Paired t-test for every pair of systems.

    ``per_query`` is wide: one row per query, one column per system. Returns one row per
    pair (a, b) with the mean difference a - b, t and the two-sided p-value; a pair whose
    per-query scores are identical has p = 1 (no difference to detect). One vectorised
    ``scipy.stats.ttest_rel`` call covers every pair (40 systems: 780 pairs).
    """
    columns = list(per_query.columns)
    pairs = list(itertools.combinations(range(len(columns)), 2))
    if not pairs:
        return pd.DataFrame(columns=["system_a", "system_b", "mean_diff", "t", "p"])
    values = per_query.to_numpy(dtype=float)
    left, right = (np.array(side) for side in zip(*pairs, strict=True))
    diff = values[:, left] - values[:, right]
    same = np.isclose(diff, 0).all(axis=0)
    from scipy import stats  # here: a job that imports the engine and tests nothing pays no scipy.stats

    with np.errstate(divide="ignore", invalid="ignore"):
        result = stats.ttest_rel(values[:, left], values[:, right], axis=0)
    t = np.where(same, 0.0, result.statistic)
    p = np.where(same, 1.0, result.pvalue)
    return pd.DataFrame(
        {
            "system_a": [columns[i] for i in left],
            "system_b": [columns[j] for j in right],
            "mean_diff": diff.mean(axis=0),
            "t": t.astype(float),
            "p": p.astype(float),
        }
    )


def compare_significance(
    human: pd.DataFrame, judge: pd.DataFrame, alpha: float = 0.05, *, correction: str = "none"
) -> pd.DataFrame:
    """Join two :func:`paired_tests` tables and classify each pair.

    missed: significant under humans, not under the judge. spurious: the reverse.
    flipped: the judge orders the pair the other way round than humans (mean difference of
    opposite sign). flipped_significant: flipped and significant under both. ``correction``
    (none, holm, bh) adjusts each side's p-values within its family before comparing to alpha.
    """
    merged = human.merge(judge, on=["system_a", "system_b"], suffixes=("_human", "_judge"))
    merged["p_human_adjusted"] = adjust(merged["p_human"], correction)
    merged["p_judge_adjusted"] = adjust(merged["p_judge"], correction)
    sig_h = merged["p_human_adjusted"] < alpha
    sig_j = merged["p_judge_adjusted"] < alpha
    opposite = np.sign(merged["mean_diff_human"]) * np.sign(merged["mean_diff_judge"]) < 0
    merged["missed"] = sig_h & ~sig_j
    merged["spurious"] = sig_j & ~sig_h
    merged["flipped"] = opposite
    merged["flipped_significant"] = opposite & sig_h & sig_j
    return merged


DISAGREEMENTS = ("missed", "spurious", "flipped")
"""How the judge's paired test of a pair can part ways with the humans' (:func:`compare_significance`)."""


def disagreeing(compared: pd.DataFrame) -> pd.Series:
    """The rows of :func:`compare_significance` where the judge's test and the humans' part ways:
    missed, spurious or flipped."""
    return compared[list(DISAGREEMENTS)].astype(bool).any(axis=1)


def difference_in_differences(
    human: pd.DataFrame, judge: pd.DataFrame, alpha: float = 0.05, *, correction: str = "none"
) -> pd.DataFrame:
    """For every pair of systems (a, b): does the judge see a different gap than the humans?
    d_q = (judge_a - judge_b) - (human_a - human_b) per query, a paired t-test of d against 0
    over queries, p adjusted across the pairs (one family). Two aligned query x system tables
    in; one row per pair out (system_a, system_b, dd, t, p, p_adjusted, disagrees, reversed).

    ``reversed``: the judge sees the gap significantly differently *and* orders the pair the
    other way round (its mean gap has the other sign than the humans'). A judge with unbiased
    label noise compresses wide gaps (its ``disagrees`` fire there: a real difference, of
    resolution), but does not reverse them."""
    columns = list(human.columns)
    pairs = list(itertools.combinations(range(len(columns)), 2))
    out = pd.DataFrame(columns=["system_a", "system_b", "dd", "t", "p", "p_adjusted", "disagrees", "reversed"])
    if not pairs or len(human) < 2:
        return out
    h, j = human[columns].to_numpy(float), judge[columns].to_numpy(float)
    left, right = (np.array(side) for side in zip(*pairs, strict=True))
    gaps_h, gaps_j = h[:, left] - h[:, right], j[:, left] - j[:, right]  # per query, each pair's gap
    d = gaps_j - gaps_h
    same = np.isclose(d, 0).all(axis=0)
    constant = np.isclose(np.ptp(d, axis=0), 0)
    from scipy import stats

    with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        result = stats.ttest_1samp(d, 0.0, axis=0)
    # no spread: no difference at all (p 1), or the same nonzero difference on every query (p 0)
    p = np.where(same, 1.0, np.where(constant, 0.0, result.pvalue))
    with np.errstate(invalid="ignore"):  # 0 * inf where the mean is 0: a cell `same` answers
        t = np.where(same, 0.0, np.where(constant, np.sign(d.mean(axis=0)) * np.inf, result.statistic))
    adjusted = adjust(p, correction)
    gap_h, gap_j = gaps_h.mean(axis=0), gaps_j.mean(axis=0)
    return pd.DataFrame(
        {
            "system_a": [columns[i] for i in left],
            "system_b": [columns[k] for k in right],
            "dd": d.mean(axis=0),
            "t": t.astype(float),
            "p": p.astype(float),
            "p_adjusted": adjusted,
            "disagrees": adjusted < alpha,
            "reversed": (adjusted < alpha) & (np.sign(gap_h) * np.sign(gap_j) < 0),
        }
    )


def sign_test_p(up: int, down: int) -> float:
    """Exact two-sided sign test of ``up`` rises against ``down`` falls (scipy ``binomtest``,
    success probability 1/2; ties left out, Dixon & Mood 1946). 1 when nothing moved. It
    treats every pair as independent: descriptive only where pairs cluster by query."""
    if up + down == 0:
        return 1.0
    from scipy import stats

    return float(stats.binomtest(int(up), int(up + down), 0.5).pvalue)


def sign_flip_p(cluster_totals: np.ndarray, *, permutations: int = PERMUTATIONS, seed: int = SEED) -> float:
    """Two-sided sign-flip permutation test that the per-query totals are centred on 0: each
    query's total keeps or flips its sign (Fisher 1935). Exact over all 2^queries patterns when
    that is at most ``permutations`` + 1, else ``permutations`` seeded random patterns with
    the add-one estimate. The same p as ``scipy.stats.permutation_test`` with one-sample
    ``samples`` permutations and the sum as statistic (a test holds them equal), vectorised
    here because the audits call it for every judge x condition x stratum. 1 when every total
    is 0 or there is a single query (its total and its flip are equally extreme); NaN with no
    query."""
    totals = np.asarray(cluster_totals, dtype=float)
    if len(totals) == 0:
        return math.nan
    if not np.any(totals != 0) or len(totals) == 1:
        return 1.0
    observed = totals.sum()
    exact = 2 ** len(totals) <= permutations + 1
    if exact:
        patterns = ((np.arange(2 ** len(totals))[:, None] >> np.arange(len(totals))) & 1) * 2 - 1
    else:
        patterns = np.random.default_rng(seed).choice([-1.0, 1.0], size=(permutations, len(totals)))
    null = patterns @ totals
    tolerance = 1e-12 * max(1.0, float(np.abs(totals).sum()))
    greater, less = np.sum(null >= observed - tolerance), np.sum(null <= observed + tolerance)
    if exact:
        p_greater, p_less = greater / len(null), less / len(null)
    else:
        p_greater, p_less = (greater + 1) / (len(null) + 1), (less + 1) / (len(null) + 1)
    return float(min(1.0, 2 * min(p_greater, p_less)))


def stuart_maxwell(before: np.ndarray, after: np.ndarray) -> tuple[float, int, float]:
    """Stuart-Maxwell test of marginal homogeneity of paired labels (Stuart 1955, Maxwell 1970),
    by statsmodels ``SquareTable(table, shift_zeros=False).homogeneity()``: (statistic, df, p).
    Every pair independent: the reference :func:`clustered_homogeneity` is tested against.

    Grades no pair left or entered are dropped first (they would make the covariance singular
    and add nothing). Nothing moved: (0, 0, 1); a singular table: NaN.
    """
    from statsmodels.stats.contingency_tables import SquareTable

    before, after = np.asarray(before), np.asarray(after)
    moved = before != after
    grades = np.union1d(before[moved], after[moved])
    if len(grades) < 2:
        return 0.0, 0, 1.0
    index = {g: i for i, g in enumerate(grades)}
    keep = np.isin(before, grades) & np.isin(after, grades)
    table = np.zeros((len(grades), len(grades)), dtype=float)
    for b, a in zip(before[keep], after[keep], strict=True):
        table[index[b], index[a]] += 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        test = SquareTable(table, shift_zeros=False).homogeneity()
    return float(test.statistic), int(test.df), float(test.pvalue)


def clustered_homogeneity(before: np.ndarray, after: np.ndarray, clusters: Sequence) -> tuple[float, int, float]:
    """Clustered test of marginal homogeneity of paired grades: (statistic, df, p).

    Per query q, d_q[g] = (pairs graded g before) - (pairs graded g after), for the grades that
    moved but one; W = D' V^+ D with D = sum_q d_q and V = sum_q d_q d_q' (the variance of D
    under the null, estimated from whole queries), chi-squared with rank(V) degrees of freedom.
    For two grades this is Durkalski et al.'s (2003) clustered McNemar test; with one pair per
    query it equals Stuart-Maxwell's statistic (:func:`stuart_maxwell`). Nothing moved: (0, 0, 1).
    """
    before, after = np.asarray(before), np.asarray(after)
    moved = before != after
    grades = np.union1d(before[moved], after[moved])
    if len(grades) < 2:
        return 0.0, 0, 1.0
    codes, _ = _factorize(clusters)
    q = int(codes.max()) + 1
    d = np.zeros((q, len(grades) - 1))
    for i, g in enumerate(grades[:-1]):
        np.add.at(d[:, i], codes, (before == g).astype(float) - (after == g).astype(float))
    total, v = d.sum(axis=0), d.T @ d
    rank = int(np.linalg.matrix_rank(v))
    if rank == 0:
        return 0.0, 0, 1.0
    statistic = float(total @ np.linalg.pinv(v) @ total)
    from scipy import stats

    return statistic, rank, float(stats.chi2.sf(statistic, rank))


def query_mean_test(
    values: np.ndarray | Sequence[float],
    clusters: Sequence | None = None,
    *,
    weights: np.ndarray | Sequence[float] | None = None,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    level: float = LEVEL,
) -> dict[str, float]:
    """The one test of a mean whose units cluster by query: ``mean`` over units (weighted by
    ``weights`` when given), its cluster bootstrap interval (``ci_low``, ``ci_high``,
    ``degenerate`` draws), ``p`` of the sign-flip test of the per-query (weighted) totals, and
    ``queries``. ``clusters`` None: every value is its own query (one value per query already)."""
    values = np.asarray(values, dtype=float)
    w = np.ones(len(values)) if weights is None else np.asarray(weights, dtype=float)
    clusters = range(len(values)) if clusters is None else clusters
    sums, _ = cluster_sums(values * w, clusters)
    counts, _ = cluster_sums(w, clusters)
    row = {
        "mean": math.nan,
        "ci_low": math.nan,
        "ci_high": math.nan,
        "degenerate": 0,
        "p": math.nan,
        "queries": len(sums),
    }
    if not len(values) or not w.sum():
        return row
    row["mean"] = float((values * w).sum() / w.sum())
    if np.ptp(values) == 0:
        row["ci_low"] = row["ci_high"] = row["mean"]
    else:
        found = ratio_interval(sums, counts, resamples=resamples, seed=seed, level=level)
        row |= {"ci_low": found.low, "ci_high": found.high, "degenerate": found.degenerate}
    row["p"] = sign_flip_p(sums, seed=seed)
    return row


SHIFT_COLUMNS = [
    "n",
    "queries",
    "up",
    "down",
    "same",
    "up_share",
    "down_share",
    "same_share",
    "mean_before",
    "mean_after",
    "mean_shift",
    "mean_shift_ci_low",
    "mean_shift_ci_high",
    "shift_p",
    "homogeneity",
    "homogeneity_df",
    "homogeneity_p",
    "sign_p_pairs",
    "degenerate",
]
"""The columns of :func:`paired_shift`, in order: one vocabulary for every paired label shift."""


def _whole(values: Sequence[float] | np.ndarray, what: str) -> np.ndarray:
    array = np.asarray(values, dtype=float)
    if array.ndim != 1:
        raise ValueError(f"{what} labels must be one-dimensional")
    if np.isnan(array).any() or np.any(array != np.round(array)):
        raise ValueError(f"{what} labels must be whole grades (leave unparsed labels out first)")
    return array.astype(int)


def paired_shift(
    before: Sequence[float] | np.ndarray,
    after: Sequence[float] | np.ndarray,
    queries: Sequence | None,
    *,
    confidence: float = LEVEL,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> dict[str, float | int]:
    """How a judge's labels of the same pairs moved from ``before`` to ``after`` (aligned whole
    grades, unparsed labels already left out), pairs clustered by ``queries`` (the query of
    each pair; None only where every pair is its own query). Keys are ``SHIFT_COLUMNS``:

    * ``n`` pairs over ``queries``; ``up`` / ``down`` / ``same`` and their shares;
    * ``mean_shift`` (after - before, over pairs) with a cluster-bootstrap interval over
      queries, and ``shift_p``: the sign-flip test over queries of the per-query summed shift
      (the tested statistic is the mean shift, so its sign is the direction);
    * ``homogeneity`` (statistic, df, p): the clustered test of marginal homogeneity
      (:func:`clustered_homogeneity`): did the label distribution move as a whole;
    * ``sign_p_pairs``: the exact sign test of pairs up against down, every pair counted as
      independent (descriptive, not a flag);
    * ``degenerate``: bootstrap draws with no defined mean.
    """
    x, y = _whole(before, "before"), _whole(after, "after")
    if len(x) != len(y):
        raise ValueError("before and after must be aligned (the same pairs, in the same order)")
    clusters = list(range(len(x))) if queries is None else list(queries)
    if len(clusters) != len(x):
        raise ValueError("queries must give the query of every pair")
    n = len(x)
    diff = (y - x).astype(float)
    up, down = int(np.sum(diff > 0)), int(np.sum(diff < 0))
    row: dict[str, float | int] = {"n": n, "queries": len(set(clusters)), "up": up, "down": down, "same": n - up - down}
    for name in ("up", "down", "same"):
        row[f"{name}_share"] = row[name] / n if n else math.nan
    if n == 0:
        nan = math.nan
        return row | {
            "mean_before": nan,
            "mean_after": nan,
            "mean_shift": nan,
            "mean_shift_ci_low": nan,
            "mean_shift_ci_high": nan,
            "shift_p": nan,
            "homogeneity": nan,
            "homogeneity_df": 0,
            "homogeneity_p": nan,
            "sign_p_pairs": nan,
            "degenerate": 0,
        }
    test = query_mean_test(diff, clusters, resamples=resamples, seed=seed, level=confidence)
    statistic, df, p = clustered_homogeneity(x, y, clusters)
    row |= {
        "mean_before": float(x.mean()),
        "mean_after": float(y.mean()),
        "mean_shift": test["mean"],
        "mean_shift_ci_low": test["ci_low"],
        "mean_shift_ci_high": test["ci_high"],
        "shift_p": test["p"],
        "homogeneity": statistic,
        "homogeneity_df": df,
        "homogeneity_p": p,
        "sign_p_pairs": sign_test_p(up, down),
        "degenerate": test["degenerate"],
    }
    return row


def direction(significant: bool, effect: float) -> str:
    """ "up" / "down" from the sign of the tested effect when its test is significant, else "none"."""
    if not significant or effect is None or math.isnan(effect) or effect == 0:
        return "none"
    return "up" if effect > 0 else "down"
