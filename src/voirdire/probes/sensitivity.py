"""Persona-conditioned judging and prompt sensitivity (after Mohtadi et al., CIKM 2026, §3.5).

Label sets that differ only in the prompt (*conditions*: persona roles, or prompt variants)
are compared with a baseline label set (the plain UMBRELA prompt) and with the human labels,
at three levels:

* **Judgment level** (:func:`agreement`): quadratic-weighted Cohen's kappa
  (:func:`voirdire.stats.kappas`) against the baseline's labels and against the human labels,
  on the pairs both sides labelled, and the paired label shift against the baseline
  (:func:`voirdire.stats.paired_shift`, pairs clustered by query). An unparsed label (NaN) is
  counted, never read as grade 0.
* **System ranking** (:func:`agreement`): Kendall's tau-b and RBO(0.9) between the system
  ordering by mean nDCG@10 under the condition and the ordering under the human labels, each
  with a 95% bootstrap interval over queries (:func:`voirdire.stats.system_agreement_intervals`).
  RBO is NaN where either ordering ties two systems (:func:`voirdire.stats.rbo_scores`: no
  tie-break by name).
* **Rank displacement** (:func:`displacement`, :func:`sensitivity`,
  :func:`direction_consistency`): ``delta_r(s, p) = rank_p(s) - rank_baseline(s)`` (negative:
  the system moves up), ``Sensitivity(s) = mean_p |delta_r(s, p)|`` over the non-baseline
  conditions, the mean |delta_r| per condition with two 95% percentile intervals: over
  *queries* (the queries resampled, each system's mean recomputed under the baseline and the
  condition, both re-ranked, mean |delta_r| recomputed: the variation that comes from the
  queries judged), and over *systems* (the per-system |delta_r| resampled, as in the persona
  paper; it holds the ranks fixed, so it says nothing of how they would move on other
  queries), both 1,000 seeded resamples (:mod:`voirdire.stats.resample`); the largest
  |delta_r|, the number of systems that move, the signed nDCG shift, and whether judge models
  move a system the same way.

**Noise floor.** A prompt that changes nothing of substance still moves labels and ranks when
the judge is asked again (sampling, a nondeterministic server) and, for a judge whose answer is
any function of its prompt (temperature 0, a prompt-hashing stand-in), as soon as one character
of the prompt changes. The condition named ``RERUN`` (``(placebo persona)``) in a group, where
there is one, is that null: the baseline prompt with a neutral change that asks nothing different
(the persona probe asks the judge's prompt under a placebo persona,
:data:`voirdire.probes.personas.PLACEBO_PERSONA`; a plain rerun of the identical request would
be a cache hit, or identical at temperature 0, and so no null for a prompt-sensitive judge). It
is compared with the baseline like any condition (its rows in every table are the noise floor),
stays out of the ``all`` summary, Sensitivity(s) and direction consistency, and its kappa
against the baseline and its mean |delta_r| are repeated on every row of its group
(``noise_floor_kappa_qw``, ``noise_floor_abs_delta_r``). Without one those are NaN, and
``noise_floor`` says why.

**Against the rerun.** Mean |delta_r| is never negative, so its interval lies above 0 for any
judge that moves one label among near-tied systems, and a noise floor read as one rerun's
point value is no test either. Where a group has a ``RERUN`` (below "the rerun": the placebo
persona, or any label set of the baseline asked again), each condition is compared with it on
the same queries (:func:`rerun_excess`): the excess of its mean |delta_r| over the rerun's, a
paired bootstrap interval over queries, and a permutation test that swaps the condition's and
the rerun's scores within queries (null: the condition is just another draw of the judge's
answers, as the rerun is). Without a rerun these are NaN and ``reason`` says so: the verdict
then has no test to read, never a flag.

Every table is long and has a ``dataset`` and a ``group`` column. For personas a group is
one judge model (its conditions are the roles); for prompt variants it is the variants
group. Each group names one baseline condition (``baselines``: group -> condition). Ranks
(``delta_r``) break ties of equal mean nDCG by system name (:func:`voirdire.stats.ordering`),
in the point and in every resample alike; RBO does not break them.

Scores under the human labels come as a separate table, ``human_scores`` (dataset, system,
query_id, ndcg): they do not depend on the group, so they are given once per dataset rather
than repeated as a pseudo-condition in every group.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from ..judges import Scale
from ..output import IntervalCell, pyplot, save_figure
from ..stats import (
    Interval,
    block_permutations,
    interval,
    kappas,
    kendall_tau,
    mean_interval,
    ordering,
    paired_shift,
    query_resamples,
    rbo_scores,
    system_agreement_intervals,
)
from ..stats.resample import LEVEL, RESAMPLES, SEED

ALL = "all"  # the condition name of the per-(dataset, group) summary row
RERUN = "(placebo persona)"
"""The null condition of a group, the noise floor every other condition is tested against: the
baseline prompt asked again with a neutral change that asks nothing different (the persona
probe's placebo persona, :data:`voirdire.probes.personas.PLACEBO_PERSONA`, asked by
:func:`voirdire.probes.job.probe_calls`). No judge or role can be named so: judge names have
neither spaces nor brackets."""
NO_RERUN = (
    "n/a: no rerun of the baseline prompt in this group (one label set per condition, a judge's samples "
    "aggregated by majority into it; the baseline prompt asked again under a neutral persona, condition "
    f"'{RERUN}', gives it)"
)
"""The default reason the noise floor is n/a."""
RERUN_NOTE = "the baseline prompt against itself under a neutral (placebo) persona"
NO_NULL = "no placebo or rerun of the base prompt: the absolute Δ rank has no null"
"""Why a group's excess over the rerun is NaN: without a rerun, mean |delta_r| has nothing to be
compared with (it is never negative, so an interval above 0 says nothing). No ``|`` in it: it is
a cell of Markdown tables (this table's view, the verdict's reason)."""
THE_NULL = "the placebo itself: the null every condition of its group is compared with"
NO_PER_QUERY = "no per-query scores: the excess over the rerun needs the queries to resample and permute"
PERMUTATIONS = 1999
"""Draws of the permutation test of :func:`rerun_excess` (add-one p: the smallest is 1/2000)."""
EXCESS_COLUMNS = ["excess_abs_delta_r", "excess_ci_low", "excess_ci_high", "excess_p", "rerun", "reason"]
"""The columns :func:`sensitivity` appends to ``by_condition``: the condition against a rerun."""

AGREEMENT_COLUMNS = [
    "dataset",
    "group",
    "condition",
    "baseline",
    "pairs",
    "unlabelled",
    "pairs_vs_baseline",
    "kappa_qw_baseline",
    "shift_vs_baseline",
    "shift_vs_baseline_ci_low",
    "shift_vs_baseline_ci_high",
    "up_vs_baseline",
    "down_vs_baseline",
    "queries_vs_baseline",
    "shift_p_vs_baseline",
    "homogeneity_p_vs_baseline",
    "pairs_vs_human",
    "kappa_qw_human",
    "shift_vs_human",
    "systems_vs_human",
    "tau_human",
    "tau_human_ci_low",
    "tau_human_ci_high",
    "rbo_human",
    "rbo_human_ci_low",
    "rbo_human_ci_high",
    "ranking_degenerate",
    "noise_floor_kappa_qw",
    "noise_floor",
]
DISPLACEMENT_COLUMNS = [
    "dataset",
    "group",
    "condition",
    "system",
    "ndcg_baseline",
    "ndcg",
    "ndcg_shift",
    "rank_baseline",
    "rank",
    "delta_r",
]
BY_SYSTEM_COLUMNS = ["dataset", "group", "system", "conditions", "sensitivity", "max_abs_delta_r", "mean_ndcg_shift"]
BY_CONDITION_COLUMNS = [
    "dataset",
    "group",
    "condition",
    "conditions",
    "systems",
    "queries",
    "mean_abs_delta_r",
    "ci_low_queries",
    "ci_high_queries",
    "degenerate_queries",
    "ci_low_systems",
    "ci_high_systems",
    "max_abs_delta_r",
    "affected_systems",
    "mean_ndcg_shift",
    "noise_floor_abs_delta_r",
    "noise_floor",
    *EXCESS_COLUMNS,
]
CONSISTENCY_COLUMNS = [
    "dataset",
    "condition",
    "system",
    "groups",
    "moved",
    "up",
    "down",
    "mean_delta_r",
    "consistency",
    "direction",
]

AGREEMENT_VIEW = [
    "group",
    "condition",
    "baseline",
    "pairs",
    "unlabelled",
    "kappa_qw_baseline",
    "shift_vs_baseline",
    "shift_p_vs_baseline",
    "kappa_qw_human",
    "tau_human",
    "rbo_human",
    "noise_floor",
]
"""The columns of :func:`agreement` a person reads in the Markdown (shift, tau and RBO with
their intervals in one cell; the noise floor's kappa is the rerun row's ``kappa_qw_baseline``);
the CSV keeps every one."""
BY_CONDITION_VIEW = [
    "group",
    "condition",
    "systems",
    "queries",
    IntervalCell("mean_abs_delta_r", "mean_abs_delta_r", "ci_low_queries", "ci_high_queries"),
    IntervalCell("ci_systems", None, "ci_low_systems", "ci_high_systems"),
    "max_abs_delta_r",
    "affected_systems",
    "noise_floor_abs_delta_r",
    IntervalCell("excess_abs_delta_r", "excess_abs_delta_r", "excess_ci_low", "excess_ci_high"),
    "excess_p",
    "reason",
]
"""The columns of :func:`sensitivity`'s ``by_condition`` a person reads in the Markdown:
``mean_abs_delta_r`` with its interval over queries in one cell, ``ci_systems`` the interval
over systems, the excess over the rerun with its paired interval and its test; the CSV keeps
every one (``mean_ndcg_shift``, and ``noise_floor``, whose n/a ``reason`` repeats)."""

_PAIR = ["query_id", "doc_id"]


def _check_baselines(frame: pd.DataFrame, baselines: Mapping[str, str]) -> None:
    """Every group of ``frame`` names a baseline condition that it has."""
    for (dataset, group), rows in frame.groupby(["dataset", "group"], sort=False):
        if group not in baselines:
            raise ValueError(f"group {group!r} names no baseline condition")
        if baselines[group] not in set(rows["condition"]):
            raise ValueError(
                f"group {group!r} on {dataset!r} has no labels or scores for its baseline {baselines[group]!r}"
            )
        if baselines[group] == RERUN:
            raise ValueError(f"group {group!r}: {RERUN!r} is the null condition (the baseline's rerun), not a baseline")


def _grades(values: pd.Series, low: int, high: int, what: str) -> np.ndarray:
    """Labelled values as integers, refusing any off the scale (scikit-learn would drop them)."""
    array = values.to_numpy(dtype=float)
    off = (array != np.round(array)) | (array < low) | (array > high)
    if off.any():
        raise ValueError(f"{what}: {int(off.sum())} label(s) off the {low}..{high} scale, e.g. {array[off][0]}")
    return array.astype(int)


def _kappa_qw(a: pd.Series, b: pd.Series, low: int, high: int, what: str) -> tuple[int, float, float]:
    """(pairs used, quadratic-weighted kappa, mean of a - b) on the pairs both sides labelled; the
    kappa is the engine's (:func:`voirdire.stats.kappas`, scikit-learn)."""
    both = a.notna().to_numpy() & b.notna().to_numpy()
    if not both.any():
        return 0, math.nan, math.nan
    x, y = _grades(a[both], low, high, what), _grades(b[both], low, high, what)
    scale = Scale(low, high, high)  # the threshold only serves the binary kappa, not read here
    value = kappas(pd.Series(x), pd.Series(y), scale, scale)["kappa_quadratic"]
    return int(both.sum()), float(value), float(np.mean(x - y))


def _shift_test(a: pd.Series, b: pd.Series, *, seed: int = SEED, resamples: int = RESAMPLES) -> dict:
    """The paired label shift from ``b`` (the baseline) to ``a`` on the pairs both labelled
    (:func:`voirdire.stats.paired_shift`, pairs clustered by their query, the index's first
    level): its interval over queries, pairs up and down, the queries, the sign-flip test over
    queries (``shift_p``) and the clustered test of marginal homogeneity (``homogeneity_p``)."""
    both = a.notna().to_numpy() & b.notna().to_numpy()
    queries = a.index.get_level_values(0)[both]
    found = paired_shift(
        b.to_numpy(dtype=float)[both], a.to_numpy(dtype=float)[both], list(queries), seed=seed, resamples=resamples
    )
    return {
        "shift_vs_baseline_ci_low": found["mean_shift_ci_low"],
        "shift_vs_baseline_ci_high": found["mean_shift_ci_high"],
        "up_vs_baseline": found["up"],
        "down_vs_baseline": found["down"],
        "queries_vs_baseline": found["queries"],
        "shift_p_vs_baseline": found["shift_p"],
        "homogeneity_p_vs_baseline": found["homogeneity_p"],
    }


def _system_means(frame: pd.DataFrame) -> pd.Series:
    """Mean nDCG over queries per system."""
    return frame.groupby("system")["ndcg"].mean()


def _table(frame: pd.DataFrame, systems: list[str]) -> pd.DataFrame:
    """Query x system nDCG of the given systems."""
    return frame.pivot_table(index="query_id", columns="system", values="ndcg", aggfunc="mean").reindex(columns=systems)


_NO_RANKING = {
    "systems_vs_human": 0,
    "tau_human": math.nan,
    "tau_human_ci_low": math.nan,
    "tau_human_ci_high": math.nan,
    "rbo_human": math.nan,
    "rbo_human_ci_low": math.nan,
    "rbo_human_ci_high": math.nan,
    "ranking_degenerate": 0,
}


def _ranking_agreement(
    condition: pd.DataFrame, human: pd.DataFrame, p: float, *, seed: int, resamples: int, level: float
) -> dict[str, float]:
    """Systems ranked, Kendall tau-b and RBO(p) between the system orderings by mean nDCG of two
    per-query tables (system, query_id, ndcg), on the systems both score, each with a bootstrap
    interval over the queries both score (:func:`voirdire.stats.system_agreement_intervals`)."""
    row = dict(_NO_RANKING)
    a, b = _system_means(condition), _system_means(human)
    common = sorted(set(a.dropna().index) & set(b.dropna().index))
    row["systems_vs_human"] = len(common)
    if len(common) < 2:
        return row
    row["tau_human"] = kendall_tau(a[common].to_numpy(), b[common].to_numpy())
    row["rbo_human"] = rbo_scores(a[common].to_numpy(), b[common].to_numpy(), p=p)
    table_a, table_b = _table(condition, common), _table(human, common)
    queries = table_a.dropna().index.intersection(table_b.dropna().index)
    found = system_agreement_intervals(
        table_b.loc[queries], table_a.loc[queries], [], rbo_p=p, resamples=resamples, seed=seed, level=level
    )
    for name, column in (("tau_all", "tau_human"), ("rbo_all", "rbo_human")):
        row[f"{column}_ci_low"], row[f"{column}_ci_high"] = found[f"{name}_ci_low"], found[f"{name}_ci_high"]
    row["ranking_degenerate"] = found["system_degenerate"]
    return row


def agreement(
    labels: pd.DataFrame,
    human: pd.DataFrame,
    baselines: Mapping[str, str],
    low: int = 0,
    high: int = 3,
    *,
    per_query: pd.DataFrame | None = None,
    human_scores: pd.DataFrame | None = None,
    rbo_p: float = 0.9,
    seed: int = SEED,
    resamples: int = RESAMPLES,
    level: float = LEVEL,
    no_rerun: str = NO_RERUN,
) -> pd.DataFrame:
    """Label and system-ranking agreement of every condition, the baseline (and its rerun) included.

    ``labels``: dataset, group, condition, query_id, doc_id, relevance (NaN: unparsed).
    ``human``: dataset, query_id, doc_id, relevance. Kappas are quadratic-weighted on the
    ``low..high`` grades, over the pairs both sides labelled (``pairs_vs_*``); the baseline's
    kappa against itself is 1 by definition. ``shift_vs_*`` is the mean grade difference
    (condition minus the other side) on those pairs: negative, a stricter condition; against
    the baseline it comes with the paired test every label shift uses
    (:func:`voirdire.stats.paired_shift`, the query as the unit: the interval over queries,
    pairs up and down, ``queries_vs_baseline``, ``shift_p_vs_baseline`` the sign-flip test over
    queries, ``homogeneity_p_vs_baseline`` the clustered test of marginal homogeneity). With
    ``per_query`` (dataset, group, condition, system, query_id, ndcg) and ``human_scores``
    (dataset, system, query_id, ndcg), ``tau_human`` and ``rbo_human`` compare the system
    orderings by mean nDCG under the condition and under the human labels (on the systems both
    score), with bootstrap intervals over queries and ``ranking_degenerate`` (draws with an
    undefined tau or RBO, e.g. tied systems); without them they are NaN.
    ``noise_floor_kappa_qw``: the ``RERUN`` condition's kappa against the baseline in the
    group (NaN, and ``noise_floor`` says why, without one).

    One row per (dataset, group, condition): see ``AGREEMENT_COLUMNS``.
    """
    _check_baselines(labels, baselines)
    human_labels = human.drop_duplicates(["dataset", *_PAIR]).set_index(["dataset", *_PAIR])["relevance"]
    rank_human = per_query is not None and human_scores is not None
    rows = []
    for (dataset, group), frame in labels.groupby(["dataset", "group"], sort=False):
        baseline = baselines[group]
        base = frame[frame["condition"] == baseline].drop_duplicates(_PAIR).set_index(_PAIR)["relevance"]
        human_rows = human_scores[human_scores["dataset"] == dataset] if rank_human else None
        group_rows = []
        for condition, rows_c in frame.groupby("condition", sort=False):
            values = rows_c.drop_duplicates(_PAIR).set_index(_PAIR)["relevance"]
            what = f"{dataset}/{group}/{condition}"
            if condition == baseline:
                pairs_b, kappa_b, shift_b = int(values.notna().sum()), 1.0, 0.0
            else:
                pairs_b, kappa_b, shift_b = _kappa_qw(values, base.reindex(values.index), low, high, what)
            shift_test = _shift_test(values, base.reindex(values.index), seed=seed, resamples=resamples)
            keys = pd.MultiIndex.from_arrays(
                [[dataset] * len(values), values.index.get_level_values(0), values.index.get_level_values(1)]
            )
            pairs_h, kappa_h, shift_h = _kappa_qw(
                values, human_labels.reindex(keys).set_axis(values.index), low, high, what
            )
            ranking = dict(_NO_RANKING)
            if rank_human:
                scores = per_query[
                    (per_query["dataset"] == dataset)
                    & (per_query["group"] == group)
                    & (per_query["condition"] == condition)
                ]
                ranking = _ranking_agreement(scores, human_rows, rbo_p, seed=seed, resamples=resamples, level=level)
            group_rows.append(
                {
                    "dataset": dataset,
                    "group": group,
                    "condition": condition,
                    "baseline": condition == baseline,
                    "pairs": len(values),
                    "unlabelled": int(values.isna().sum()),
                    "pairs_vs_baseline": pairs_b,
                    "kappa_qw_baseline": kappa_b,
                    "shift_vs_baseline": shift_b,
                    **shift_test,
                    "pairs_vs_human": pairs_h,
                    "kappa_qw_human": kappa_h,
                    "shift_vs_human": shift_h,
                    **ranking,
                }
            )
        rerun = [r for r in group_rows if r["condition"] == RERUN]
        floor = rerun[0]["kappa_qw_baseline"] if rerun else math.nan
        for row in group_rows:
            row |= {"noise_floor_kappa_qw": floor, "noise_floor": RERUN_NOTE if rerun else no_rerun}
        rows.extend(group_rows)
    return pd.DataFrame(rows, columns=AGREEMENT_COLUMNS)


def _ranks(means: pd.Series) -> pd.Series:
    """Rank of each system, 1 = best, ties by name (:func:`voirdire.stats.ordering`)."""
    order = ordering(means)
    return pd.Series(range(1, len(order) + 1), index=order)


def displacement(per_query: pd.DataFrame, baselines: Mapping[str, str]) -> pd.DataFrame:
    """Rank displacement of every system under every non-baseline condition (``RERUN`` included:
    its rows are the noise floor).

    ``per_query``: dataset, group, condition, system, query_id, ndcg. Systems are ranked by
    mean nDCG over queries, within the systems that both the condition and the baseline
    score. ``delta_r = rank - rank_baseline`` (negative: the system moves up);
    ``ndcg_shift = ndcg - ndcg_baseline`` (signed). One row per (dataset, group, condition,
    system): see ``DISPLACEMENT_COLUMNS``.
    """
    _check_baselines(per_query, baselines)
    rows = []
    for (dataset, group), frame in per_query.groupby(["dataset", "group"], sort=False):
        baseline = baselines[group]
        means = frame.groupby(["condition", "system"], sort=False)["ndcg"].mean()
        base = means.loc[baseline].dropna()
        for condition in dict.fromkeys(frame["condition"]):
            if condition == baseline:
                continue
            scores = means.loc[condition].dropna()
            common = sorted(set(scores.index) & set(base.index))
            rank_b, rank_c = _ranks(base[common]), _ranks(scores[common])
            for system in rank_b.index:
                rows.append(
                    {
                        "dataset": dataset,
                        "group": group,
                        "condition": condition,
                        "system": system,
                        "ndcg_baseline": float(base[system]),
                        "ndcg": float(scores[system]),
                        "ndcg_shift": float(scores[system] - base[system]),
                        "rank_baseline": int(rank_b[system]),
                        "rank": int(rank_c[system]),
                        "delta_r": int(rank_c[system] - rank_b[system]),
                    }
                )
    return pd.DataFrame(rows, columns=DISPLACEMENT_COLUMNS)


def _resampled_ranks(means: np.ndarray) -> np.ndarray:
    """(draws, systems) ranks, 1 = best, of (draws, systems) means whose columns are in name
    order: a stable sort, so ties go by name as in :func:`_ranks`; NaN in a draw with a NaN mean."""
    order = np.argsort(-means, axis=1, kind="stable")
    ranks = np.empty(means.shape)
    np.put_along_axis(ranks, order, np.arange(1, means.shape[1] + 1, dtype=float)[None, :], axis=1)
    return np.where(np.isnan(means).any(axis=1, keepdims=True), math.nan, ranks)


def _cube(per_query: pd.DataFrame) -> tuple[list[str], list[str], list[str], np.ndarray]:
    """(conditions, queries, systems in name order, (conditions, queries, systems) nDCG with NaN
    where a condition does not score a system on a query) of one group's per-query scores."""
    systems = sorted(set(per_query["system"]))
    queries = sorted(set(per_query["query_id"]))
    conditions = list(dict.fromkeys(per_query["condition"]))
    cube = per_query.pivot_table(
        index=["condition", "query_id"], columns="system", values="ndcg", aggfunc="mean"
    ).reindex(index=pd.MultiIndex.from_product([conditions, queries]), columns=systems)
    return conditions, queries, systems, cube.to_numpy(dtype=float).reshape(len(conditions), len(queries), len(systems))


def _weighted_means(times: np.ndarray, values: np.ndarray) -> np.ndarray:
    """(draws, sets, systems) means over the drawn queries of (sets, queries, systems) scores,
    ``times`` (draws, queries) the multiplicities; NaN scores left out, NaN where none is left."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.einsum("bq,cqs->bcs", times, np.nan_to_num(values)) / np.einsum(
            "bq,cqs->bcs", times, np.isfinite(values).astype(float)
        )


def _query_draws(
    cube: tuple[list[str], list[str], list[str], np.ndarray],
    baseline: str,
    moved: pd.DataFrame,
    *,
    seed: int,
    resamples: int,
) -> tuple[int, dict[str, np.ndarray], list[str]]:
    """The bootstrap over queries of one group (``cube``: :func:`_cube`): (queries, condition ->
    (draws, systems) |delta_r| with NaN for a system the condition does not rank, systems in
    name order).

    The queries are resampled (the same draws for every condition, seeded); in each draw every
    system's mean nDCG is recomputed under the baseline and under the condition over the drawn
    queries, both are ranked within the systems :func:`displacement` ranks for the condition,
    and |delta_r| follows."""
    conditions, queries, systems, values = cube
    times = query_resamples(len(queries), resamples, seed)
    means = _weighted_means(times, values)
    index = {c: i for i, c in enumerate(conditions)}
    draws = {}
    for condition, rows in moved.groupby("condition", sort=False):
        ranked = [systems.index(s) for s in sorted(rows["system"])]
        rank_b = _resampled_ranks(means[:, index[baseline], ranked])
        rank_c = _resampled_ranks(means[:, index[condition], ranked])
        full = np.full((resamples, len(systems)), math.nan)
        full[:, ranked] = np.abs(rank_c - rank_b)
        draws[condition] = full
    return len(queries), draws, systems


def _displaced(means: np.ndarray, base: np.ndarray) -> np.ndarray:
    """(draws, sets) mean |delta_r| over systems of (draws, sets, systems) means against the
    (draws, systems) baseline means: every set and the baseline ranked within the systems
    (ties by column order, that is by name); NaN in a draw where a mean is NaN."""
    draws, sets, systems = means.shape
    ranks = _resampled_ranks(means.reshape(draws * sets, systems)).reshape(draws, sets, systems)
    return np.abs(ranks - _resampled_ranks(base)[:, None, :]).mean(axis=2)


def _excess(moved: np.ndarray) -> np.ndarray:
    """Per draw: the conditions' mean |delta_r| (the mean over the conditions, the last set being
    the rerun) minus the rerun's."""
    return moved[:, :-1].mean(axis=1) - moved[:, -1]


def rerun_excess(
    baseline: np.ndarray,
    conditions: np.ndarray,
    rerun: np.ndarray,
    *,
    seed: int = SEED,
    resamples: int = RESAMPLES,
    permutations: int = PERMUTATIONS,
    level: float = LEVEL,
) -> dict[str, float]:
    """How much more a condition moves the system ranking than a rerun of the baseline does.

    ``baseline`` and ``rerun``: (queries, systems) per-query scores of the baseline prompt and of
    the baseline prompt asked again (the persona probe: under its placebo persona, ``RERUN``);
    ``conditions``: (queries, systems) of one condition, or (conditions, queries, systems) of
    several (the ``all`` row: their mean |delta_r|); the same
    queries and systems everywhere, systems in name order (rank ties go by name, as in
    :func:`displacement`); NaN where a label set does not score a system on a query (left out of
    its mean). S(X) is the mean over systems of |rank under X - rank under the baseline|, ranks by
    mean score over queries. Returns:

    * ``excess_abs_delta_r``: S(condition) - S(rerun) (mean over the conditions for several);
    * ``excess_ci_low``, ``excess_ci_high``: a paired percentile bootstrap over queries: in each
      draw of queries (:func:`voirdire.stats.query_resamples`, the draws of the interval over
      queries with the same ``seed``) the baseline, the condition and the rerun are re-ranked on
      the *same* drawn queries and the difference taken, so the query mix the two share cancels;
    * ``excess_p``: the one-sided permutation test that the condition moves the ranking more than
      the rerun does. Null: per query, the condition's and the rerun's scores are exchangeable
      (a condition that only draws fresh answers, as a rerun of a sampling or prompt-hashing
      judge does, is such a draw; queries independent). Within each query the label sets
      (condition(s) and rerun) swap at random (:func:`voirdire.stats.block_permutations`,
      blocks = queries), S is recomputed for each against the fixed baseline, and
      p = (1 + #{T* >= T}) / (1 + ``permutations``) (Phipson & Smyth 2010), T the excess. Exact
      under that null whatever the systems' correlation within a query, unlike the bootstrap,
      whose draws are not centred on the null and whose |delta_r| is biased upward in each draw
      (rank noise over drawn queries), nor a test of per-query differences, which |delta_r| does
      not have (ranks exist only over a set of queries). Ties of the discrete statistic count
      against the condition (T* = T is a hit), so the test is conservative; a NaN permuted
      statistic counts as a hit too.

    NaN everywhere with fewer than two systems or no query. A deterministic judge's rerun equals
    its baseline (S = 0): then any move the condition makes is beyond the rerun's.
    """
    base = np.asarray(baseline, dtype=float)
    tried = np.asarray(conditions, dtype=float)
    tried = tried[None] if tried.ndim == 2 else tried
    again = np.asarray(rerun, dtype=float)
    nan = {"excess_abs_delta_r": math.nan, "excess_ci_low": math.nan, "excess_ci_high": math.nan, "excess_p": math.nan}
    if base.ndim != 2 or tried.shape[1:] != base.shape or again.shape != base.shape:
        raise ValueError("baseline, rerun and every condition must be (queries, systems) arrays of one shape")
    queries, systems = base.shape
    if queries == 0 or systems < 2:
        return nan
    sets = np.concatenate([tried, again[None]])  # (conditions + 1, queries, systems): the exchangeable sets
    whole = np.ones((1, queries))
    observed = float(_excess(_displaced(_weighted_means(whole, sets), _weighted_means(whole, base[None])[:, 0]))[0])
    if math.isnan(observed):
        return nan
    times = query_resamples(queries, resamples, seed)
    boot = _excess(_displaced(_weighted_means(times, sets), _weighted_means(times, base[None])[:, 0]))
    found = interval(boot, level)

    k = len(sets)
    flat = sets.transpose(1, 0, 2).reshape(queries * k, systems)  # unit q * k + j: set j on query q
    base_means = _weighted_means(whole, base[None])[:, 0]  # the baseline is not permuted
    hits = 0
    for order, drawn in block_permutations(np.repeat(np.arange(queries), k), permutations, seed):
        permuted = np.empty((len(drawn), queries * k, systems))
        permuted[:, order] = flat[drawn]
        shuffled = permuted.reshape(len(drawn), queries, k, systems)
        with np.errstate(invalid="ignore", divide="ignore"):
            means = np.nansum(shuffled, axis=1) / np.isfinite(shuffled).sum(axis=1)
        null = _excess(_displaced(means, np.repeat(base_means, len(drawn), axis=0)))
        hits += int(np.sum(~(null < observed - 1e-9)))  # NaN counts as a hit
    p = (1 + hits) / (1 + permutations)
    return {"excess_abs_delta_r": observed, "excess_ci_low": found.low, "excess_ci_high": found.high, "excess_p": p}


def sensitivity(
    displacement: pd.DataFrame,
    seed: int = SEED,
    resamples: int = RESAMPLES,
    level: float = LEVEL,
    *,
    per_query: pd.DataFrame | None = None,
    baselines: Mapping[str, str] | None = None,
    no_rerun: str = NO_RERUN,
    permutations: int = PERMUTATIONS,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Sensitivity per system, and mean |delta_r| per condition with its intervals over queries
    and over systems.

    Returns ``(by_system, by_condition)``.

    * ``by_system``, one row per (dataset, group, system): ``sensitivity`` =
      ``Sensitivity(s)``, the mean |delta_r| over the conditions (``RERUN`` left out); the
      largest |delta_r|; the mean signed nDCG shift. See ``BY_SYSTEM_COLUMNS``.
    * ``by_condition``, one row per (dataset, group, condition), ``RERUN`` included:
      ``mean_abs_delta_r`` over systems with a percentile interval over queries
      (``ci_low_queries``, ``ci_high_queries``: the queries resampled, the systems' means
      recomputed under the baseline and the condition and re-ranked; ``degenerate_queries``
      draws where a system had no drawn query; needs ``per_query`` (dataset, group, condition,
      system, query_id, ndcg) and ``baselines``, NaN without them) and one over systems
      (``ci_low_systems``, ``ci_high_systems``: :func:`voirdire.stats.mean_interval` of the
      per-system |delta_r|, the persona paper's figure), the largest |delta_r|,
      ``affected_systems`` (delta_r != 0), the mean signed nDCG shift; and one row per
      (dataset, group) with condition ``"all"`` (the paper's dataset-level figure): the mean
      over systems of ``Sensitivity(s)`` (the average of the conditions' means when every
      condition ranks the same systems) with both intervals (over queries: Sensitivity(s)
      recomputed in each draw), ``affected_systems`` the systems that move under some
      condition. ``noise_floor_abs_delta_r``: the ``RERUN`` condition's mean |delta_r| in the
      group (NaN without one, and ``noise_floor`` says why).
    * ``by_condition``'s last columns (``EXCESS_COLUMNS``), the null mean |delta_r| lacks (it is
      never negative, so an interval above 0 is no test; a rerun moves ranks too): where the
      group has a ``RERUN`` (``rerun`` True), each condition (the ``all`` row: the conditions'
      mean) against the rerun on the same queries (:func:`rerun_excess`):
      ``excess_abs_delta_r`` = its mean |delta_r| minus the rerun's, ``excess_ci_low`` /
      ``excess_ci_high`` its paired bootstrap interval over queries, ``excess_p`` the one-sided
      permutation test (condition and rerun swapped within queries) that the condition moves
      the ranking more than a rerun does, ``permutations`` draws; ``reason`` ''. NaN with a
      ``reason`` otherwise: no rerun (``rerun`` False, :data:`NO_NULL`), the rerun's own row
      (:data:`THE_NULL`), or no ``per_query`` (:data:`NO_PER_QUERY`). See ``BY_CONDITION_COLUMNS``.

    Every interval draws from ``seed``, so a row does not depend on the others.
    """
    if (per_query is None) != (baselines is None):
        raise ValueError("the bootstrap over queries needs both per_query and baselines")
    by_system: list[dict] = []
    by_condition: list[dict] = []
    frame = displacement.assign(abs_delta_r=displacement["delta_r"].abs())
    for (dataset, group), rows in frame.groupby(["dataset", "group"], sort=False):
        queries, draws, systems, cube = 0, {}, [], None
        if per_query is not None:
            cube = _cube(per_query[(per_query["dataset"] == dataset) & (per_query["group"] == group)])
            queries, draws, systems = _query_draws(cube, baselines[group], rows, seed=seed, resamples=resamples)
        group_rows = []
        for condition, rows_c in rows.groupby("condition", sort=False):
            values = rows_c["abs_delta_r"].to_numpy(dtype=float)
            over_systems = mean_interval(values, resamples=resamples, seed=seed, level=level)
            over_queries = _draws_interval(draws.get(condition), level)
            group_rows.append(
                {
                    "dataset": dataset,
                    "group": group,
                    "condition": condition,
                    "conditions": 1,
                    "systems": len(rows_c),
                    "queries": queries,
                    "mean_abs_delta_r": float(values.mean()),
                    "ci_low_queries": over_queries.low,
                    "ci_high_queries": over_queries.high,
                    "degenerate_queries": over_queries.degenerate,
                    "ci_low_systems": over_systems.low,
                    "ci_high_systems": over_systems.high,
                    "max_abs_delta_r": int(values.max()),
                    "affected_systems": int((rows_c["delta_r"] != 0).sum()),
                    "mean_ndcg_shift": float(rows_c["ndcg_shift"].mean()),
                }
            )
        kept = rows[rows["condition"] != RERUN]
        if len(kept):
            per_system = kept.groupby("system", sort=False).agg(
                conditions=("condition", "nunique"),
                sensitivity=("abs_delta_r", "mean"),
                max_abs_delta_r=("abs_delta_r", "max"),
                mean_ndcg_shift=("ndcg_shift", "mean"),
            )
            for system, row in per_system.iterrows():
                by_system.append(
                    {
                        "dataset": dataset,
                        "group": group,
                        "system": system,
                        "conditions": int(row["conditions"]),
                        "sensitivity": float(row["sensitivity"]),
                        "max_abs_delta_r": int(row["max_abs_delta_r"]),
                        "mean_ndcg_shift": float(row["mean_ndcg_shift"]),
                    }
                )
            values = per_system["sensitivity"].to_numpy(dtype=float)
            over_systems = mean_interval(values, resamples=resamples, seed=seed, level=level)
            over_queries = _draws_interval(None, level)
            if draws:  # Sensitivity(s) in each draw: the mean |delta_r| over the conditions that rank s
                stacked = np.stack([d for c, d in draws.items() if c != RERUN])  # (conditions, draws, systems)
                ranks = ~np.isnan(stacked).all(axis=1, keepdims=True)  # the condition ranks the system
                undefined = (np.isnan(stacked) & ranks).any(axis=(0, 2))  # a draw some condition could not rank
                with np.errstate(invalid="ignore", divide="ignore"):
                    sensitivities = np.where(ranks, stacked, 0).sum(axis=0) / ranks.sum(axis=0)
                picked = [systems.index(s) for s in per_system.index]
                sensitivities = np.where(undefined[:, None], math.nan, sensitivities[:, picked])
                over_queries = _draws_interval(sensitivities, level)
            group_rows.append(
                {
                    "dataset": dataset,
                    "group": group,
                    "condition": ALL,
                    "conditions": int(kept["condition"].nunique()),
                    "systems": len(per_system),
                    "queries": queries,
                    "mean_abs_delta_r": float(values.mean()),
                    "ci_low_queries": over_queries.low,
                    "ci_high_queries": over_queries.high,
                    "degenerate_queries": over_queries.degenerate,
                    "ci_low_systems": over_systems.low,
                    "ci_high_systems": over_systems.high,
                    "max_abs_delta_r": int(per_system["max_abs_delta_r"].max()),
                    "affected_systems": int((per_system["max_abs_delta_r"] > 0).sum()),
                    "mean_ndcg_shift": float(kept["ndcg_shift"].mean()),
                }
            )
        rerun = [r for r in group_rows if r["condition"] == RERUN]
        floor = rerun[0]["mean_abs_delta_r"] if rerun else math.nan
        for row in group_rows:
            row |= {"noise_floor_abs_delta_r": floor, "noise_floor": RERUN_NOTE if rerun else no_rerun}
            baseline = baselines[group] if baselines is not None else None
            row |= _against_rerun(
                row["condition"],
                rows,
                cube,
                baseline,
                seed=seed,
                resamples=resamples,
                permutations=permutations,
                level=level,
            )
        by_condition.extend(group_rows)
    return pd.DataFrame(by_system, columns=BY_SYSTEM_COLUMNS), pd.DataFrame(by_condition, columns=BY_CONDITION_COLUMNS)


def _against_rerun(
    condition: str,
    moved: pd.DataFrame,
    cube: tuple[list[str], list[str], list[str], np.ndarray] | None,
    baseline: str | None,
    **test,
) -> dict:
    """The ``EXCESS_COLUMNS`` of one ``by_condition`` row of a group (``moved``: its displacement
    rows; ``cube``: :func:`_cube` of its per-query scores, None without them): the condition (the
    ``all`` row: every condition but the rerun) against the group's ``RERUN``, on the systems the
    baseline, the rerun and each of those conditions rank (:func:`rerun_excess`, ``test`` its
    keywords)."""
    nan = dict.fromkeys(EXCESS_COLUMNS[:4], math.nan)
    if RERUN not in set(moved["condition"]):
        return nan | {"rerun": False, "reason": NO_NULL}
    if condition == RERUN:
        return nan | {"rerun": True, "reason": THE_NULL}
    if cube is None or baseline is None:
        return nan | {"rerun": True, "reason": NO_PER_QUERY}
    tried = [condition] if condition != ALL else [c for c in dict.fromkeys(moved["condition"]) if c != RERUN]
    ranked = [set(moved.loc[moved["condition"] == c, "system"]) for c in (*tried, RERUN)]
    conditions, _, systems, values = cube
    columns = [i for i, s in enumerate(systems) if all(s in r for r in ranked)]
    index = {c: i for i, c in enumerate(conditions)}
    found = rerun_excess(
        values[index[baseline]][:, columns],
        values[[index[c] for c in tried]][:, :, columns],
        values[index[RERUN]][:, columns],
        **test,
    )
    return found | {"rerun": True, "reason": ""}


def _draws_interval(draws: np.ndarray | None, level: float) -> Interval:
    """The percentile interval of the per-draw mean over systems of (draws, systems) |delta_r|,
    over the systems ranked (the columns not NaN in every draw); a draw with an undefined rank
    is counted in ``degenerate``, not dropped (:func:`voirdire.stats.interval`)."""
    if draws is None:
        return Interval(math.nan, math.nan, 0)
    ranked = ~np.isnan(draws).all(axis=0)
    return interval(draws[:, ranked].mean(axis=1), level)


def direction_consistency(displacement: pd.DataFrame) -> pd.DataFrame:
    """Whether the groups (judge models) move a system the same way under a condition.

    One row per (dataset, condition, system) that at least two groups rank: ``groups``;
    ``moved`` (delta_r != 0), ``up`` (delta_r < 0), ``down`` (delta_r > 0); ``consistency`` =
    |sum of the movers' signs| / moved (1: all moved the same way, 0: as many up as down; NaN
    when fewer than two groups moved); ``direction`` "up", "down", "mixed" or "none" (no group
    moved it). The ``RERUN`` condition (noise, not a prompt) is left out. Without two groups
    sharing a condition name the frame is empty. See ``CONSISTENCY_COLUMNS``.
    """
    rows = []
    kept = displacement[displacement["condition"] != RERUN]
    for (dataset, condition, system), frame in kept.groupby(["dataset", "condition", "system"], sort=False):
        groups = frame["group"].nunique()
        if groups < 2:
            continue
        delta = frame.drop_duplicates("group")["delta_r"].to_numpy()
        up, down = int((delta < 0).sum()), int((delta > 0).sum())
        moved = up + down
        consistency = abs(up - down) / moved if moved >= 2 else math.nan
        direction = "none" if moved == 0 else "up" if down == 0 else "down" if up == 0 else "mixed"
        rows.append(
            {
                "dataset": dataset,
                "condition": condition,
                "system": system,
                "groups": groups,
                "moved": moved,
                "up": up,
                "down": down,
                "mean_delta_r": float(delta.mean()),
                "consistency": consistency,
                "direction": direction,
            }
        )
    return pd.DataFrame(rows, columns=CONSISTENCY_COLUMNS)


def why_no_consistency(displacement: pd.DataFrame, groups: str = "groups", condition: str = "condition") -> str:
    """Why :func:`direction_consistency` of ``displacement`` has no rows ('' when it has some):
    no condition besides the baseline, only the baseline's rerun, a single group, or no two
    groups ranking a system under the same condition on the same dataset. ``groups`` and
    ``condition`` name them for the reader (personas: the probed judges and their roles)."""
    kept = displacement[displacement["condition"] != RERUN]
    if kept.empty:
        if displacement.empty:
            return f"no {condition} besides the baseline ranks a system"
        return f"the only {condition} besides the baseline is its rerun (the noise floor), which this table leaves out"
    shared = kept.groupby(["dataset", "condition", "system"], sort=False)["group"].nunique()
    if (shared >= 2).any():
        return ""
    names = list(dict.fromkeys(kept["group"]))
    if len(names) < 2:
        return (
            f"direction consistency compares {groups} and needs at least two that rank a system under the same "
            f"{condition}; there is one ({names[0]})"
        )
    return f"no two of the {groups} ({', '.join(names)}) rank a system under the same {condition} on one dataset"


def _no_data(png: str | Path, title: str) -> None:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5, 3))
    ax.text(0.5, 0.5, "no data", ha="center", va="center", fontsize=14)
    ax.set_title(title)
    ax.set_axis_off()
    save_figure(fig, png)


def _panels(frame: pd.DataFrame) -> list[tuple[str, str]]:
    return list(dict.fromkeys(zip(frame["dataset"], frame["group"], strict=True)))


def displacement_heatmap(displacement: pd.DataFrame, png: str | Path) -> None:
    """One heatmap per (dataset, group): systems (rows, baseline order) x conditions, cell = delta_r.

    Diverging colours centred at 0 (blue: the system moves up, red: down), each cell annotated.
    """
    if displacement.empty:
        _no_data(png, "rank displacement")
        return
    plt = pyplot()
    panels = _panels(displacement)
    limit = max(1, int(displacement["delta_r"].abs().max()))
    n_systems = max(displacement.groupby(["dataset", "group"])["system"].nunique())
    n_conditions = max(displacement.groupby(["dataset", "group"])["condition"].nunique())
    width, height = 1.5 + 0.9 * n_conditions, 1.2 + 0.3 * n_systems
    fig, axes = plt.subplots(1, len(panels), figsize=(width * len(panels), height), squeeze=False, layout="constrained")
    image = None
    for ax, (dataset, group) in zip(axes[0], panels, strict=True):
        rows = displacement[(displacement["dataset"] == dataset) & (displacement["group"] == group)]
        order = rows.groupby("system")["rank_baseline"].min().sort_values().index
        table = rows.pivot_table(index="system", columns="condition", values="delta_r", aggfunc="first")
        table = table.reindex(index=order, columns=list(dict.fromkeys(rows["condition"])))
        image = ax.imshow(table.to_numpy(dtype=float), cmap="RdBu_r", vmin=-limit, vmax=limit, aspect="auto")
        for i in range(table.shape[0]):
            for j in range(table.shape[1]):
                value = table.iat[i, j]
                if pd.notna(value):
                    strong = abs(value) > limit / 2
                    text = f"{int(value):+d}" if value else "0"
                    colour = "white" if strong else "black"
                    ax.text(j, i, text, ha="center", va="center", fontsize=7, color=colour)
        ax.set_xticks(range(table.shape[1]), table.columns, rotation=45, ha="right", fontsize=7)
        ax.set_yticks(range(table.shape[0]), table.index, fontsize=7)
        ax.set_title(f"{dataset} / {group}", fontsize=9)
    fig.colorbar(image, ax=axes[0].tolist(), label="delta rank (negative: moves up)", shrink=0.8)
    save_figure(fig, png)


def sensitivity_chart(summary_by_condition: pd.DataFrame, png: str | Path) -> None:
    """Mean |delta_r| per condition with its bootstrap CI over queries, one panel per (dataset,
    group); the noise floor (the ``RERUN`` condition's mean |delta_r|) as a dashed line where
    the group has one.

    ``summary_by_condition`` is the second frame of :func:`sensitivity`; the ``"all"`` row is
    drawn last, in grey, the ``RERUN`` row in light grey. Without an interval over queries
    (no per-query scores) the bars have no error bar.
    """
    if summary_by_condition.empty:
        _no_data(png, "rank sensitivity")
        return
    plt = pyplot()
    panels = _panels(summary_by_condition)
    n_conditions = max(summary_by_condition.groupby(["dataset", "group"])["condition"].nunique())
    fig, axes = plt.subplots(
        1, len(panels), figsize=((1.5 + 0.6 * n_conditions) * len(panels), 3.2), squeeze=False, sharey=True
    )
    for ax, (dataset, group) in zip(axes[0], panels, strict=True):
        rows = summary_by_condition[
            (summary_by_condition["dataset"] == dataset) & (summary_by_condition["group"] == group)
        ]
        rows = pd.concat(
            [
                rows[~rows["condition"].isin([ALL, RERUN])],
                rows[rows["condition"] == RERUN],
                rows[rows["condition"] == ALL],
            ]
        )
        mean = rows["mean_abs_delta_r"].to_numpy(dtype=float)
        low, high = rows["ci_low_queries"].to_numpy(dtype=float), rows["ci_high_queries"].to_numpy(dtype=float)
        errors = np.vstack([np.clip(mean - low, 0, None), np.clip(high - mean, 0, None)])
        colours = ["grey" if c == ALL else "lightgrey" if c == RERUN else "tab:blue" for c in rows["condition"]]
        positions = np.arange(len(rows))
        ax.bar(positions, mean, yerr=np.nan_to_num(errors), color=colours, capsize=3)
        floor = rows["noise_floor_abs_delta_r"].to_numpy(dtype=float)
        if len(floor) and np.isfinite(floor[0]):
            ax.axhline(floor[0], color="black", ls="--", lw=0.8, label=f"noise floor {RERUN}")
            ax.legend(fontsize=6)
        ax.set_xticks(positions, rows["condition"], rotation=45, ha="right", fontsize=7)
        ax.set_title(f"{dataset} / {group}", fontsize=9)
    axes[0][0].set_ylabel("mean |delta rank|\n(95% CI over queries)")
    save_figure(fig, png)
