"""Agreement between a judge and the human labels (docs/definitions.md, Agreement).

* Label agreement: Cohen's kappa on graded labels, on binary labels, and quadratic-weighted
  (scikit-learn).
* System agreement: Kendall's tau-b between system orderings (scipy) and rank-biased
  overlap (RBO, Webber, Moffat & Zobel, TOIS 2010, extrapolated form, phi 0.9).
* Significance: paired t-tests over queries for every pair of systems (scipy), and which
  significant differences a judge misses, invents or flips.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections import Counter
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats
from sklearn.metrics import cohen_kappa_score

from .judges import Scale


def kappas(human: pd.Series, judge: pd.Series, human_scale: Scale, judge_scale: Scale) -> dict[str, float]:
    """Cohen's kappa between aligned label series.

    Graded and quadratic-weighted kappa compare grades directly and are only defined when
    both use the same scale (NaN otherwise, e.g. a binary judge against 0-3 assessors);
    binary kappa maps each side with its own threshold.
    """
    if len(human) != len(judge):
        raise ValueError("label series must be aligned")
    if len(human) == 0:
        return {"kappa_graded": math.nan, "kappa_binary": math.nan, "kappa_quadratic": math.nan}
    same_scale = (human_scale.low, human_scale.high) == (judge_scale.low, judge_scale.high)
    grades = list(range(human_scale.low, human_scale.high + 1))
    result = {
        "kappa_binary": _kappa(human_scale.binary(human), judge_scale.binary(judge), [0, 1]),
        "kappa_graded": _kappa(human, judge, grades) if same_scale else math.nan,
        "kappa_quadratic": (_kappa(human, judge, grades, weights="quadratic") if same_scale else math.nan),
    }
    return result


def _kappa(a: pd.Series, b: pd.Series, labels: list[int], weights: str | None = None) -> float:
    value = cohen_kappa_score(np.asarray(a), np.asarray(b), labels=labels, weights=weights)
    return float(value)


def majority(labels: Sequence[int]) -> int | None:
    """One label from a judge's k samples: the most frequent, ties by the lower median; None
    when no sample parsed (never 0)."""
    if not labels:
        return None
    counts = Counter(labels).most_common()
    top = [label for label, n in counts if n == counts[0][1]]
    return top[0] if len(top) == 1 else statistics.median_low(labels)


def kendall_tau(a: Sequence[float], b: Sequence[float]) -> float:
    """Kendall's tau-b between two score vectors over the same systems."""
    if len(a) < 2:
        return math.nan
    return float(stats.kendalltau(a, b).statistic)


def ordering(scores: pd.Series) -> list[str]:
    """Systems best first; equal scores fall back to name order, for determinism."""
    frame = pd.DataFrame({"system": scores.index, "score": scores.values})
    return list(frame.sort_values(["score", "system"], ascending=[False, True])["system"])


def rbo(a: Sequence[str], b: Sequence[str], p: float = 0.9) -> float:
    """Extrapolated rank-biased overlap of two rankings of the same k items (Webber 2010, eq. 32).

    ``RBO_ext = X_k/k * p^k + (1-p)/p * sum_{d=1..k} X_d/d * p^d`` with X_d the overlap of
    the two depth-d prefixes. Identical rankings give 1.
    """
    if len(a) != len(b) or set(a) != set(b):
        raise ValueError("rbo here compares two complete rankings of the same items")
    if not 0 < p < 1:
        raise ValueError("p must lie in (0, 1)")
    k = len(a)
    if k == 0:
        return math.nan
    seen_a: set[str] = set()
    seen_b: set[str] = set()
    overlap = 0
    total = 0.0
    for depth in range(1, k + 1):
        x, y = a[depth - 1], b[depth - 1]
        if x == y:
            overlap += 1
        else:
            overlap += (x in seen_b) + (y in seen_a)
        seen_a.add(x)
        seen_b.add(y)
        total += overlap / depth * p**depth
    return overlap / k * p**k + (1 - p) / p * total


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
    with np.errstate(divide="ignore", invalid="ignore"):
        result = stats.ttest_rel(values[:, left], values[:, right], axis=0)
    t = np.where(same, 0.0, result.statistic)
    p = np.where(same, 1.0, result.pvalue)
    return pd.DataFrame(
        {"system_a": [columns[i] for i in left], "system_b": [columns[j] for j in right],
         "mean_diff": diff.mean(axis=0), "t": t.astype(float), "p": p.astype(float)}
    )  # fmt: skip


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
    # each side's tests are one family (every pair of systems under one judge, one measure)
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


# ----------------------------------------------------------------------------- paired label shift

SHIFT_COLUMNS = [
    "n", "up", "down", "same", "up_share", "down_share", "same_share", "mean_before", "mean_after", "mean_shift",
    "mean_shift_ci_low", "mean_shift_ci_high", "sign_p", "stuart_maxwell", "stuart_maxwell_df", "stuart_maxwell_p",
]  # fmt: skip
"""The columns of :func:`paired_shift`, in order: one vocabulary for every paired label shift."""


def _whole(values: Sequence[float] | np.ndarray, what: str) -> np.ndarray:
    array = np.asarray(values, dtype=float)
    if array.ndim != 1:
        raise ValueError(f"{what} labels must be one-dimensional")
    if np.isnan(array).any() or np.any(array != np.round(array)):
        raise ValueError(f"{what} labels must be whole grades (leave unparsed labels out first)")
    return array.astype(int)


def sign_test_p(up: int, down: int) -> float:
    """Exact two-sided sign test of ``up`` rises against ``down`` falls (scipy ``binomtest``,
    success probability 1/2; pairs that stayed carry no sign and are left out, Dixon & Mood
    1946). 1 when nothing moved."""
    if up + down == 0:
        return 1.0
    return float(stats.binomtest(int(up), int(up + down), 0.5).pvalue)


def stuart_maxwell(before: np.ndarray, after: np.ndarray) -> tuple[float, int, float]:
    """Stuart-Maxwell test of marginal homogeneity of paired labels (Stuart 1955, Maxwell 1970),
    by statsmodels ``SquareTable(table, shift_zeros=False).homogeneity()``: (statistic, df, p).

    The statistic depends only on the discordant pairs, so a grade that no pair left or
    entered (only on the diagonal, or absent) is dropped from the table first: it would make
    the covariance singular and adds nothing (the generalised-inverse form, df = the grades
    that moved, minus one). Nothing moved: (0, 0, 1). A table whose moving grades fall apart
    into unconnected sets stays singular: NaN.
    """
    import warnings

    from statsmodels.stats.contingency_tables import SquareTable

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
        warnings.simplefilter("ignore")  # a singular table: statsmodels warns and answers NaN
        test = SquareTable(table, shift_zeros=False).homogeneity()
    return float(test.statistic), int(test.df), float(test.pvalue)


def paired_shift(
    before: Sequence[float] | np.ndarray, after: Sequence[float] | np.ndarray, confidence: float = 0.95
) -> dict[str, float | int]:
    """How a judge's labels of the same pairs moved from ``before`` to ``after`` (aligned whole
    grades, unparsed labels already left out): the one paired label-shift test of the pad,
    injection, persona and rewriting experiments. Keys are ``SHIFT_COLUMNS``:

    * ``n`` pairs; ``up`` / ``down`` / ``same``: how many rose, fell, stayed (and the shares);
    * ``mean_shift`` (after - before) with a ``confidence`` t interval over pairs (scipy
      ``ttest_1samp``; a single point when every shift is equal);
    * ``sign_p``: the exact two-sided sign test of up against down (:func:`sign_test_p`): an
      ordinal shift has a direction but no unit, so only the sign of each pair is used;
    * ``stuart_maxwell`` (statistic, df, p): whether the label distribution moved as a whole
      (:func:`stuart_maxwell`), the paired counterpart of a chi-squared test of two margins.
    """
    x, y = _whole(before, "before"), _whole(after, "after")
    if len(x) != len(y):
        raise ValueError("before and after must be aligned (the same pairs, in the same order)")
    n = len(x)
    diff = (y - x).astype(float)
    up, down = int(np.sum(diff > 0)), int(np.sum(diff < 0))
    row: dict[str, float | int] = {"n": n, "up": up, "down": down, "same": n - up - down}
    for name in ("up", "down", "same"):
        row[f"{name}_share"] = row[name] / n if n else math.nan
    if n == 0:
        nan = math.nan
        return row | {"mean_before": nan, "mean_after": nan, "mean_shift": nan, "mean_shift_ci_low": nan,
                      "mean_shift_ci_high": nan, "sign_p": nan, "stuart_maxwell": nan, "stuart_maxwell_df": 0,
                      "stuart_maxwell_p": nan}  # fmt: skip
    mean = float(diff.mean())
    if np.ptp(diff) > 0:
        low, high = stats.ttest_1samp(diff, 0.0).confidence_interval(confidence)
    else:
        low, high = mean, mean
    statistic, df, p = stuart_maxwell(x, y)
    row |= {"mean_before": float(x.mean()), "mean_after": float(y.mean()), "mean_shift": mean,
            "mean_shift_ci_low": float(low), "mean_shift_ci_high": float(high), "sign_p": sign_test_p(up, down),
            "stuart_maxwell": statistic, "stuart_maxwell_df": df, "stuart_maxwell_p": p}  # fmt: skip
    return row


# ----------------------------------------------------------------------------- intervals over queries
# Everything computed per query is resampled by query (a cluster bootstrap: a query's pairs and
# scores travel together), with a fixed seed so a rerun gives the same interval.


def query_resamples(queries: int, resamples: int, seed: int) -> np.ndarray:
    """resample x query multiplicities of a bootstrap over queries (seeded)."""
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, queries, size=(resamples, queries))
    times = np.zeros((resamples, queries))
    np.add.at(times, (np.arange(resamples)[:, None], picks), 1)
    return times


def percentile_interval(values: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """The percentile interval of bootstrap values (NaN where none is defined)."""
    values = np.asarray(values, dtype=float)
    if not np.isfinite(values).any():
        return math.nan, math.nan
    tail = 100 * (1 - level) / 2
    low, high = np.nanpercentile(values, [tail, 100 - tail])
    return float(low), float(high)


def kappa_from_counts(counts: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Cohen's kappa of (..., g, h) confusion counts with disagreement weights (g, h):
    1 - sum(w * observed) / sum(w * expected); NaN where expected disagreement is 0."""
    total = counts.sum(axis=(-2, -1), keepdims=True)
    observed = counts / np.where(total > 0, total, 1)
    expected = observed.sum(axis=-1, keepdims=True) * observed.sum(axis=-2, keepdims=True)
    num, den = (weights * observed).sum(axis=(-2, -1)), (weights * expected).sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, 1 - num / den, math.nan)


def per_query_confusion(
    query_ids: Sequence[str], a: Sequence[int], b: Sequence[int], labels_a: Sequence[int], labels_b: Sequence[int]
) -> np.ndarray:
    """(query, |labels_a|, |labels_b|) confusion counts of aligned label vectors, queries in
    first-seen order."""
    queries = {q: i for i, q in enumerate(dict.fromkeys(query_ids))}
    index_a = {g: i for i, g in enumerate(labels_a)}
    index_b = {g: i for i, g in enumerate(labels_b)}
    counts = np.zeros((len(queries), len(labels_a), len(labels_b)))
    np.add.at(counts, ([queries[q] for q in query_ids], [index_a[g] for g in a], [index_b[g] for g in b]), 1)
    return counts


def kappa_intervals(
    aligned: pd.DataFrame,
    human_scale: Scale,
    judge_scale: Scale,
    *,
    resamples: int = 1000,
    seed: int = 42,
    level: float = 0.95,
) -> dict[str, float]:
    """Bootstrap CIs over queries (cluster bootstrap, seeded) of the kappas of :func:`kappas`.

    ``aligned`` has query_id, relevance_human, relevance_judge. Graded and quadratic kappa
    need one scale on both sides (NaN otherwise, as their point values)."""
    same_scale = (human_scale.low, human_scale.high) == (judge_scale.low, judge_scale.high)
    grades = list(range(human_scale.low, human_scale.high + 1))
    qids = aligned["query_id"].tolist()
    plans = {"kappa_binary": (human_scale.binary(aligned["relevance_human"]), judge_scale.binary(aligned["relevance_judge"]),
                              [0, 1], 1.0 - np.eye(2))}  # fmt: skip
    if same_scale:
        quadratic = np.subtract.outer(np.arange(len(grades)), np.arange(len(grades))) ** 2.0
        for name, weights in (("kappa_graded", 1.0 - np.eye(len(grades))), ("kappa_quadratic", quadratic)):
            plans[name] = (aligned["relevance_human"], aligned["relevance_judge"], grades, weights)
    row = {
        f"{name}_ci_{end}": math.nan
        for name in ("kappa_graded", "kappa_binary", "kappa_quadratic")
        for end in ("low", "high")
    }
    if aligned["query_id"].nunique() < 2:
        return row
    times = None
    for name, (a, b, labels, weights) in plans.items():
        counts = per_query_confusion(qids, a.tolist(), b.tolist(), labels, labels)
        times = query_resamples(len(counts), resamples, seed) if times is None else times
        boot = kappa_from_counts(np.einsum("bq,qij->bij", times, counts), weights)
        row[f"{name}_ci_low"], row[f"{name}_ci_high"] = percentile_interval(boot, level)
    return row


def kendall_tau_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Kendall's tau-b between rows of two (rows, items) score arrays, vectorised (the same
    statistic as ``scipy.stats.kendalltau``, ties included); NaN where a row is all ties."""
    a, b = np.atleast_2d(a), np.atleast_2d(b)
    i, j = np.triu_indices(a.shape[1], k=1)
    sign_a, sign_b = np.sign(a[:, i] - a[:, j]), np.sign(b[:, i] - b[:, j])
    untied_a, untied_b = (sign_a != 0).sum(axis=1), (sign_b != 0).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where((untied_a > 0) & (untied_b > 0), (sign_a * sign_b).sum(axis=1) / np.sqrt(untied_a * untied_b),
                        math.nan)  # fmt: skip


def system_agreement_intervals(
    human: pd.DataFrame,
    judge: pd.DataFrame,
    oracles: Sequence[str],
    *,
    rbo_p: float = 0.9,
    resamples: int = 1000,
    seed: int = 42,
    level: float = 0.95,
) -> dict[str, float]:
    """Bootstrap CIs over queries of tau (all systems, oracles only) and RBO between the system
    orderings of two aligned query x system tables (their means over the resampled queries)."""
    row = {f"{name}_ci_{end}": math.nan for name in ("tau_all", "tau_oracles", "rbo_all") for end in ("low", "high")}
    if len(human) < 2:
        return row
    times = query_resamples(len(human), resamples, seed)
    systems = list(human.columns)
    mean_h = times @ human[systems].to_numpy(float) / len(human)
    mean_j = times @ judge[systems].to_numpy(float) / len(human)
    row["tau_all_ci_low"], row["tau_all_ci_high"] = percentile_interval(kendall_tau_rows(mean_h, mean_j), level)
    picked = [systems.index(s) for s in oracles if s in systems]
    if len(picked) >= 2:
        taus = kendall_tau_rows(mean_h[:, picked], mean_j[:, picked])
        row["tau_oracles_ci_low"], row["tau_oracles_ci_high"] = percentile_interval(taus, level)
    names = np.array(systems)
    rbos = [rbo(list(names[np.lexsort((names, -x))]), list(names[np.lexsort((names, -y))]), p=rbo_p)
            for x, y in zip(mean_h, mean_j, strict=True)]  # fmt: skip
    row["rbo_all_ci_low"], row["rbo_all_ci_high"] = percentile_interval(np.array(rbos), level)
    return row


CORRECTIONS = {"none": None, "holm": "holm", "bh": "fdr_bh"}


def adjust(p_values: Sequence[float], correction: str = "none") -> np.ndarray:
    """p-values adjusted for many tests within one family (statsmodels ``multipletests``):
    ``none`` (the paper's uncorrected tests), ``holm`` (family-wise error) or ``bh``
    (Benjamini-Hochberg false discovery rate)."""
    p = np.asarray(p_values, dtype=float)
    method = CORRECTIONS[correction]
    if method is None or len(p) == 0:
        return p
    from statsmodels.stats.multitest import multipletests

    return multipletests(p, method=method)[1]


def expected_false_flags(tests: int, alpha: float, correction: str = "none", flagged: int = 0) -> float:
    """How many flags chance alone would give: alpha x tests uncorrected; at most alpha
    (family-wise) under Holm; at most alpha x flagged (false discoveries) under BH."""
    if correction == "holm":
        return alpha
    if correction == "bh":
        return alpha * flagged
    return alpha * tests
