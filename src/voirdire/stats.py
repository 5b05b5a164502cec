"""Agreement between a judge and the human labels (SPEC section 4).

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


def kappas(
    human: pd.Series, judge: pd.Series, human_scale: Scale, judge_scale: Scale
) -> dict[str, float]:
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
        "kappa_quadratic": (
            _kappa(human, judge, grades, weights="quadratic") if same_scale else math.nan
        ),
    }
    return result


def _kappa(a: pd.Series, b: pd.Series, labels: list[int], weights: str | None = None) -> float:
    value = cohen_kappa_score(
        np.asarray(a), np.asarray(b), labels=labels, weights=weights
    )
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
    per-query scores are identical has p = 1 (no difference to detect).
    """
    rows = []
    for a, b in itertools.combinations(per_query.columns, 2):
        diff = per_query[a] - per_query[b]
        if np.allclose(diff, 0):
            t, p = 0.0, 1.0
        else:
            result = stats.ttest_rel(per_query[a], per_query[b])
            t, p = float(result.statistic), float(result.pvalue)
        rows.append({"system_a": a, "system_b": b, "mean_diff": float(diff.mean()), "t": t, "p": p})
    return pd.DataFrame(rows, columns=["system_a", "system_b", "mean_diff", "t", "p"])


def compare_significance(
    human: pd.DataFrame, judge: pd.DataFrame, alpha: float = 0.05
) -> pd.DataFrame:
    """Join two :func:`paired_tests` tables and classify each pair.

    missed: significant under humans, not under the judge. spurious: the reverse.
    flipped: the judge orders the pair the other way round than humans (mean difference of
    opposite sign). flipped_significant: flipped and significant under both.
    """
    merged = human.merge(judge, on=["system_a", "system_b"], suffixes=("_human", "_judge"))
    sig_h = merged["p_human"] < alpha
    sig_j = merged["p_judge"] < alpha
    opposite = np.sign(merged["mean_diff_human"]) * np.sign(merged["mean_diff_judge"]) < 0
    merged["missed"] = sig_h & ~sig_j
    merged["spurious"] = sig_j & ~sig_h
    merged["flipped"] = opposite
    merged["flipped_significant"] = opposite & sig_h & sig_j
    return merged
