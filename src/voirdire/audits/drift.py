"""Drift: is a judge the same judge when asked again?

Two or more label sets of one judge -- re-runs (a recorded judge's ``reruns:``), or the
samples of a live judge with ``samples: k`` (temperature > 0 on a hosted API is not
deterministic either: FastChat#3018) -- are compared with the first one, on the pairs both
labelled. Pairs of one query share a topic and a prompt, so every interval and test here has
the query as its unit (:mod:`voirdire.stats`):

* the flip rate (share of pairs whose label differs) with its cluster-bootstrap interval over
  queries (:func:`voirdire.stats.clustered_rate`); the Wilson interval over pairs stays as a
  descriptive column (``flip_rate_ci_low_wilson``, ``flip_rate_ci_high_wilson``);
* Cohen's kappa between the runs (graded, binary, quadratic-weighted) with the engine's
  cluster-bootstrap intervals (:func:`voirdire.stats.kappa_intervals`), and Kendall's tau
  between the system orderings they give, with a bootstrap interval over queries;
* a paired shift (:func:`voirdire.stats.paired_shift`): the mean grade difference (later -
  first) on the same pairs with its cluster-bootstrap interval, and ``shift_p``, the sign-flip
  test over queries of each query's summed difference. A run is ``shifted`` when that test
  rejects at alpha; ``direction`` is the sign of the mean difference it tests. The exact sign
  test of pairs up against pairs down stays as ``sign_p_pairs``: it counts every pair as
  independent, so reruns that move each query's labels together, up or down at random,
  would make it reject far more often than alpha; it is descriptive, never the flag.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd

from ..judges import Scale
from ..output import IntervalCell
from ..questions import NA, PASS, Cell, bonferroni_min, judge_rows, number, question, standard_error
from ..stats import (
    clustered_rate,
    direction,
    interval,
    kappa_intervals,
    kappas,
    kendall_tau,
    kendall_tau_rows,
    query_resamples,
    wilson,
)
from ..stats import paired_shift as stats_paired_shift
from .registry import Context, Figure, Table, audit, chance


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


def kappa_cis(
    both: pd.DataFrame, scale: Scale, *, resamples: int = 1000, seed: int = 42, level: float = 0.95
) -> dict[str, float]:
    """Bootstrap CIs over queries of the graded, binary and quadratic kappas of relevance_a vs
    _b, and ``kappa_degenerate`` (the engine's :func:`voirdire.stats.kappa_intervals`)."""
    return kappa_intervals(
        both, scale, scale, a="relevance_a", b="relevance_b", resamples=resamples, seed=seed, level=level
    )


def tau_ci(
    first: pd.DataFrame, later: pd.DataFrame, *, resamples: int = 1000, seed: int = 42, level: float = 0.95
) -> tuple[float, float, float, int]:
    """Kendall's tau between the system orderings of two query x system tables of per-query
    nDCG@10 (their means over queries), its bootstrap interval over the shared queries (the
    engine's query resamples and percentile interval; a system's mean leaves out the queries
    it has no score on) and the number of undefined draws: (tau, low, high, degenerate)."""
    queries = first.index.intersection(later.index)
    systems = list(first.columns)
    a, b = first.loc[queries, systems].to_numpy(float), later.loc[queries, systems].to_numpy(float)
    point = kendall_tau(np.nanmean(a, axis=0), np.nanmean(b, axis=0))
    if len(queries) < 2:
        return point, math.nan, math.nan, 0
    times = query_resamples(len(queries), resamples, seed)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_a = (times @ np.nan_to_num(a)) / (times @ ~np.isnan(a))
        mean_b = (times @ np.nan_to_num(b)) / (times @ ~np.isnan(b))
    found = interval(kendall_tau_rows(mean_a, mean_b), level)
    return point, found.low, found.high, found.degenerate


def drift(
    label_sets: Mapping[str, pd.DataFrame],
    scale: Scale,
    per_query: Mapping[str, pd.DataFrame] | None = None,
    *,
    resamples: int = 1000,
    seed: int = 42,
    level: float = 0.95,
) -> pd.DataFrame:
    """One row per later run against the first: flips on the pairs both labelled, kappa and
    tau, each with a bootstrap interval over queries (the flip rate's Wilson interval over
    pairs kept as ``flip_rate_ci_low_wilson`` / ``_high_wilson``, descriptive).

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
        flipped = (both["relevance_a"] != both["relevance_b"]).to_numpy()
        rate, found = clustered_rate(flipped, both["query_id"].tolist(), resamples=resamples, seed=seed, level=level)
        row = {
            "run": name,
            "against": names[0],
            "pairs": len(both),
            "queries": int(both["query_id"].nunique()),
            "flips": int(flipped.sum()),
            "flip_rate": rate,
            "flip_rate_ci_low": found.low,
            "flip_rate_ci_high": found.high,
            "flip_rate_degenerate": found.degenerate,
        }
        row["flip_rate_ci_low_wilson"], row["flip_rate_ci_high_wilson"] = wilson(row["flips"], len(both), level=level)
        row.update(kappas(both["relevance_a"], both["relevance_b"], scale, scale))
        row.update(kappa_cis(both, scale, resamples=resamples, seed=seed, level=level))
        if per_query is not None:
            tau, low, high, undefined = tau_ci(
                per_query[names[0]], per_query[name], resamples=resamples, seed=seed, level=level
            )
            row |= {
                "tau_systems": tau,
                "tau_systems_ci_low": low,
                "tau_systems_ci_high": high,
                "tau_systems_degenerate": undefined,
            }
        rows.append(row)
    return pd.DataFrame(rows)


CONTROL_COLUMNS = [
    "run",
    "against",
    "pairs",
    "queries",
    "mean_grade_first",
    "mean_grade",
    "mean_difference",
    "difference_ci_low",
    "difference_ci_high",
    "up",
    "down",
    "same",
    "shift_p",
    "homogeneity_p",
    "sign_p_pairs",
    "degenerate",
    "shifted",
    "direction",
]
"""The columns of :func:`paired_shift`, in order."""


def paired_shift(
    label_sets: Mapping[str, pd.DataFrame],
    *,
    alpha: float = 0.05,
    resamples: int = 1000,
    seed: int = 42,
) -> pd.DataFrame:
    """One row per later run: its grades against the first run's on the same pairs, by the
    engine's :func:`voirdire.stats.paired_shift` with the pairs clustered by query.

    Columns: pairs and their queries, mean_grade_first and mean_grade (on the shared pairs),
    mean_difference (later - first) with its (1 - alpha) cluster-bootstrap interval over
    queries (``difference_ci_low``, ``difference_ci_high``; ``degenerate``: undefined draws),
    up / down / same (pairs graded higher, lower, equal), ``shift_p`` (the two-sided sign-flip
    test over queries of each query's summed difference), ``homogeneity_p`` (the clustered test
    that the grade distribution did not move), ``sign_p_pairs`` (the exact sign test over
    pairs, descriptive only), ``shifted`` (shift_p < alpha) and ``direction`` (``up`` /
    ``down``: the sign of the tested mean difference when shifted; ``none`` otherwise).
    """
    names = list(label_sets)
    if len(names) < 2:
        return pd.DataFrame()
    first = label_sets[names[0]]
    rows = []
    for name in names[1:]:
        both = first.merge(label_sets[name], on=["query_id", "doc_id"], suffixes=("_a", "_b"))
        found = stats_paired_shift(
            both["relevance_a"].to_numpy(dtype=float),
            both["relevance_b"].to_numpy(dtype=float),
            both["query_id"].tolist(),
            confidence=1 - alpha,
            resamples=resamples,
            seed=seed,
        )
        shifted = bool(found["shift_p"] < alpha)  # False for NaN (no pair)
        rows.append(
            {
                "run": name,
                "against": names[0],
                "pairs": found["n"],
                "queries": found["queries"],
                "mean_grade_first": found["mean_before"],
                "mean_grade": found["mean_after"],
                "mean_difference": found["mean_shift"],
                "difference_ci_low": found["mean_shift_ci_low"],
                "difference_ci_high": found["mean_shift_ci_high"],
                "up": found["up"],
                "down": found["down"],
                "same": found["same"],
                "shift_p": found["shift_p"],
                "homogeneity_p": found["homogeneity_p"],
                "sign_p_pairs": found["sign_p_pairs"],
                "degenerate": found["degenerate"],
                "shifted": shifted,
                "direction": direction(shifted, found["mean_shift"]),
            }
        )
    return pd.DataFrame(rows, columns=CONTROL_COLUMNS)


# ----------------------------------------------------------------------------- the audit, declared


def _chart(shifts: pd.DataFrame, drifted: pd.DataFrame, png: str) -> None:
    from .figures import drift_chart  # matplotlib: only where the figure is drawn

    drift_chart(shifts, drifted, png)


EMPTY = "no judge has two label sets or more (reruns: of a recorded judge, samples: k of a live one)"
COUNTS = ("pairs", "queries", "flips", "up", "down", "same")


@audit(
    "drift",
    tables=[
        Table(
            "drift",
            "Drift: each later label set of a judge against its first (re-runs, samples): flip rate, kappa and tau "
            "(95% cluster-bootstrap CIs over queries)",
            ["dataset", "judge"],
            view=[
                "judge",
                "run",
                "against",
                "pairs",
                "queries",
                "flips",
                "flip_rate",
                "kappa_binary",
                "kappa_graded",
                "tau_systems",
            ],
            empty=EMPTY,
            counts=COUNTS,
            report="drift",  # the question reads the control chart; this table and its figure show it too
        ),
        Table(
            "control_chart",
            lambda frame, alpha: (
                "Paired shift: each later run's grades against the first run's on the same pairs "
                "(mean difference with a 95% bootstrap CI over queries; sign-flip test over queries, "
                f"shifted when p < alpha; {chance(len(frame), alpha)})"
            ),
            ["dataset", "judge"],
            view=[
                "judge",
                "run",
                "against",
                "pairs",
                "queries",
                "mean_grade_first",
                "mean_grade",
                IntervalCell("mean_difference", "mean_difference", "difference_ci_low", "difference_ci_high"),
                "up",
                "down",
                "shift_p",
                "shifted",
            ],
            empty=EMPTY,
            counts=COUNTS,
        ),
    ],
    figures=[Figure("drift", ("control_chart", "drift"), _chart)],
    systems=False,  # tau between the runs needs systems; the rest, labels alone
)
def audit_drift(context: Context) -> dict[str, list]:
    """One dataset's ``drift`` and ``control_chart`` rows: every judge but the humans with two
    label sets or more, each later set against its first (tau between the systems' orderings
    under each, where there are systems, scored as Table 2 scores them)."""
    data = context.data
    found = {"drift": [], "control_chart": []}
    for judge in context.judges:
        sets = data.label_sets.get(judge, {})
        if len(sets) < 2:
            continue
        scale = context.scale(judge)
        # each label set's query x system scores, for tau between the runs and its CI
        tables = (
            {
                name: frame.pivot_table(index="query_id", columns="system", values="ndcg")
                for name, frame in context.score(data.runs, sets, dict.fromkeys(sets, scale.binary_threshold)).items()
            }
            if context.systems
            else None
        )
        found["drift"].append(_judge_first(drift(sets, scale, tables, seed=context.seed), judge))
        found["control_chart"].append(_judge_first(paired_shift(sets, alpha=context.alpha, seed=context.seed), judge))
    return found


def _judge_first(frame: pd.DataFrame, judge: str) -> pd.DataFrame:
    frame = frame.assign(judge=judge)
    return frame[["judge", *(c for c in frame.columns if c != "judge")]]


@question(
    "drift",
    asks="Is it the same judge when asked again?",
    table="control_chart",
    needs=("reruns",),
    rule="flag when a rerun's mean grade moves, sign-flip p over queries (Bonferroni over the reruns)",
    absent="no reruns (reruns: of a recorded judge, samples: k of a live one)",
    effect=0.2,
    effect_words="a shift of 0.2 grade",
    sided="two-sided",
)
def _drift(rows, judge, context):
    found = judge_rows(rows, judge)
    if not len(found):
        return Cell(NA, reason="no reruns (reruns: of a recorded judge, samples: k of a live one)")
    worst = found.loc[found["mean_difference"].abs().idxmax()].to_dict()
    p, tests = bonferroni_min(found["shift_p"].astype(float).tolist())
    low, high = number(worst, "difference_ci_low"), number(worst, "difference_ci_high")
    return Cell(
        PASS,
        number(worst, "mean_difference"),
        low,
        high,
        p=p,
        signal=True,
        se=standard_error(low, high),
        tests=len(found),
        detail=f"the largest of {len(found)} rerun(s)",
    )
