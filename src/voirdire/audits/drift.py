"""Drift: is a judge the same judge when asked again?

Two or more label sets of one judge -- re-runs (a recorded judge's ``reruns:``), or the
samples of a live judge with ``samples: k`` (temperature > 0 on a hosted API is not
deterministic either: FastChat#3018) -- are compared with the first one, on the pairs both
labelled:

* the flip rate (share of pairs whose label differs), with its 95% Wilson interval
  (statsmodels ``proportion_confint``) over pairs;
* Cohen's kappa between the runs (graded, binary, quadratic-weighted) and Kendall's tau
  between the system orderings they give, each with a 95% percentile bootstrap CI over
  queries (a cluster bootstrap: a query's pairs, or its per-query nDCG@10, move together;
  seeded);
* a paired shift: the mean grade difference (later - first) on the same pairs with a
  bootstrap CI over queries, and the exact sign test of the pairs graded up against those
  graded down (``scipy.stats.binomtest``, null p = 1/2; ties left out, as in Dixon & Mood
  1946). A run is ``shifted`` when the sign test rejects at alpha. It replaces a control
  chart whose limits came from the first run's bootstrap: that compares each run with the
  first run's sampling spread, not with the first run on the same pairs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from ..judges import Scale
from ..stats import kappa_from_counts, kappas, kendall_tau, kendall_tau_rows, query_resamples


def label_sets_from_answers(answers: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """A live judge's label sets from its raw answers (the judging job's parquet): one per
    sample when it asked each pair several times, else one per model version the provider
    reported (a model silently updated between runs); parsed answers only."""
    ok = answers[answers["status"] == "ok"].rename(columns={"label": "relevance"})
    by = "sample" if ok["sample"].nunique() >= 2 else "model_version"
    return {
        f"{by}={key}": block[["query_id", "doc_id", "relevance"]].astype({"relevance": int}).reset_index(drop=True)
        for key, block in ok.groupby(by, sort=True)
    }


def _per_query_confusion(both: pd.DataFrame, a: str, b: str, grades: list[int]) -> tuple[list, np.ndarray]:
    """query ids and their (query, g, g) confusion counts of columns a and b."""
    index = {g: i for i, g in enumerate(grades)}
    queries = list(dict.fromkeys(both["query_id"]))
    where = {q: i for i, q in enumerate(queries)}
    counts = np.zeros((len(queries), len(grades), len(grades)))
    np.add.at(counts, (both["query_id"].map(where).to_numpy(), both[a].map(index).to_numpy(),
                       both[b].map(index).to_numpy()), 1)  # fmt: skip
    return queries, counts


def kappa_cis(
    both: pd.DataFrame, scale: Scale, *, resamples: int = 1000, seed: int = 42, level: float = 0.95
) -> dict[str, float]:
    """Bootstrap CIs over queries of the graded, binary and quadratic kappas of relevance_a vs _b."""
    tail = 100 * (1 - level) / 2
    grades = list(range(scale.low, scale.high + 1))
    frame = both.assign(bin_a=scale.binary(both["relevance_a"]), bin_b=scale.binary(both["relevance_b"]))
    graded_w = 1.0 - np.eye(len(grades))
    quadratic_w = np.subtract.outer(np.arange(len(grades)), np.arange(len(grades))) ** 2.0
    plans = {
        "kappa_graded": ("relevance_a", "relevance_b", grades, graded_w),
        "kappa_quadratic": ("relevance_a", "relevance_b", grades, quadratic_w),
        "kappa_binary": ("bin_a", "bin_b", [0, 1], 1.0 - np.eye(2)),
    }
    row = {}
    for name, (a, b, labels, weights) in plans.items():
        queries, counts = _per_query_confusion(frame, a, b, labels)
        if len(queries) < 2:
            row[f"{name}_ci_low"] = row[f"{name}_ci_high"] = math.nan
            continue
        times = query_resamples(len(queries), resamples, seed)
        boot = kappa_from_counts(np.einsum("bq,qij->bij", times, counts), weights)
        low, high = np.nanpercentile(boot, [tail, 100 - tail]) if np.isfinite(boot).any() else (math.nan, math.nan)
        row[f"{name}_ci_low"], row[f"{name}_ci_high"] = float(low), float(high)
    return row


def tau_ci(
    first: pd.DataFrame, later: pd.DataFrame, *, resamples: int = 1000, seed: int = 42, level: float = 0.95
) -> tuple[float, float, float]:
    """Kendall's tau between the system orderings of two query x system tables of per-query
    nDCG@10 (their means over queries), and its bootstrap CI over the shared queries."""
    queries = first.index.intersection(later.index)
    systems = list(first.columns)
    a, b = first.loc[queries, systems].to_numpy(float), later.loc[queries, systems].to_numpy(float)
    point = kendall_tau(np.nanmean(a, axis=0), np.nanmean(b, axis=0))
    if len(queries) < 2:
        return point, math.nan, math.nan
    times = query_resamples(len(queries), resamples, seed)
    with np.errstate(invalid="ignore"):
        mean_a = (times @ np.nan_to_num(a)) / (times @ ~np.isnan(a))
        mean_b = (times @ np.nan_to_num(b)) / (times @ ~np.isnan(b))
    boot = kendall_tau_rows(mean_a, mean_b)
    if not np.isfinite(boot).any():
        return point, math.nan, math.nan
    tail = 100 * (1 - level) / 2
    low, high = np.nanpercentile(boot, [tail, 100 - tail])
    return point, float(low), float(high)


def drift(
    label_sets: Mapping[str, pd.DataFrame],
    scale: Scale,
    per_query: Mapping[str, pd.DataFrame] | None = None,
    *,
    resamples: int = 1000,
    seed: int = 42,
    level: float = 0.95,
) -> pd.DataFrame:
    """One row per later run against the first: flips on the pairs both labelled (Wilson CI),
    kappa and tau (bootstrap CIs over queries).

    ``per_query`` (optional) maps each label set's name to a query x system table of the
    per-query nDCG@10 the systems get under it, for tau.
    """
    names = list(label_sets)
    if len(names) < 2:
        return pd.DataFrame()
    first = label_sets[names[0]]
    rows = []
    for name in names[1:]:
        both = first.merge(label_sets[name], on=["query_id", "doc_id"], suffixes=("_a", "_b"))
        flips = int((both["relevance_a"] != both["relevance_b"]).sum())
        row = {
            "run": name, "against": names[0], "pairs": len(both), "queries": int(both["query_id"].nunique()),
            "flips": flips, "flip_rate": flips / len(both) if len(both) else math.nan,
        }  # fmt: skip
        low, high = (
            proportion_confint(flips, len(both), alpha=1 - level, method="wilson") if len(both) else (math.nan,) * 2
        )
        row["flip_rate_ci_low"], row["flip_rate_ci_high"] = float(low), float(high)
        row.update(kappas(both["relevance_a"], both["relevance_b"], scale, scale))
        row.update(kappa_cis(both, scale, resamples=resamples, seed=seed, level=level))
        if per_query is not None:
            tau, low, high = tau_ci(per_query[names[0]], per_query[name], resamples=resamples, seed=seed, level=level)
            row |= {"tau_systems": tau, "tau_systems_ci_low": low, "tau_systems_ci_high": high}
        rows.append(row)
    return pd.DataFrame(rows)


def paired_shift(
    label_sets: Mapping[str, pd.DataFrame],
    *,
    alpha: float = 0.05,
    resamples: int = 1000,
    seed: int = 42,
) -> pd.DataFrame:
    """One row per later run: its grades against the first run's on the same pairs.

    Columns: pairs, mean_grade_first and mean_grade (on the shared pairs), mean_difference
    (later - first) with its (1 - alpha) bootstrap CI over queries, up / down / same (pairs
    graded higher, lower, equal), sign_test_p (exact, two-sided) and ``shifted`` (p < alpha).
    """
    names = list(label_sets)
    if len(names) < 2:
        return pd.DataFrame()
    first = label_sets[names[0]]
    tail = 100 * alpha / 2
    rows = []
    for name in names[1:]:
        both = first.merge(label_sets[name], on=["query_id", "doc_id"], suffixes=("_a", "_b"))
        diff = (both["relevance_b"] - both["relevance_a"]).to_numpy(dtype=float)
        up, down = int((diff > 0).sum()), int((diff < 0).sum())
        row = {
            "run": name, "against": names[0], "pairs": len(both),
            "mean_grade_first": float(both["relevance_a"].mean()) if len(both) else math.nan,
            "mean_grade": float(both["relevance_b"].mean()) if len(both) else math.nan,
            "mean_difference": float(diff.mean()) if len(both) else math.nan,
            "up": up, "down": down, "same": len(both) - up - down,
            "sign_test_p": float(stats.binomtest(up, up + down, 0.5).pvalue) if up + down else 1.0,
        }  # fmt: skip
        sums = both.assign(d=diff).groupby("query_id", sort=False)["d"].agg(["sum", "count"])
        if len(sums) >= 2:
            times = query_resamples(len(sums), resamples, seed)
            boot = (times @ sums["sum"].to_numpy()) / (times @ sums["count"].to_numpy())
            low, high = np.percentile(boot, [tail, 100 - tail])
        else:
            low = high = row["mean_difference"]
        row |= {"difference_ci_low": float(low), "difference_ci_high": float(high),
                "shifted": bool(row["sign_test_p"] < alpha)}  # fmt: skip
        rows.append(row)
    return pd.DataFrame(rows)
