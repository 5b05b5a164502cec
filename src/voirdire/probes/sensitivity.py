"""Persona-conditioned judging and prompt sensitivity (after Mohtadi et al., CIKM 2026, §3.5).

Label sets that differ only in the prompt (*conditions*: persona roles, or prompt variants)
are compared with a baseline label set (the plain UMBRELA prompt) and with the human labels,
at three levels:

* **Judgment level** (:func:`agreement`): quadratic-weighted Cohen's kappa against the
  baseline's labels and against the human labels, on the pairs both sides labelled. An
  unparsed label (NaN) is counted, never read as grade 0.
* **System ranking** (:func:`agreement`): Kendall's tau-b and RBO(0.9) between the system
  ordering by mean nDCG@10 under the condition and the ordering under the human labels.
* **Rank displacement** (:func:`displacement`, :func:`sensitivity`,
  :func:`direction_consistency`): ``delta_r(s, p) = rank_p(s) - rank_baseline(s)`` (negative:
  the system moves up), ``Sensitivity(s) = mean_p |delta_r(s, p)|`` over the non-baseline
  conditions, the mean |delta_r| per condition with a 95% percentile bootstrap CI over
  systems (1,000 resamples with replacement, seed 42), the largest |delta_r|, the number of
  systems that move, the signed nDCG shift, and whether judge models move a system the same
  way.

Every table is long and has a ``dataset`` and a ``group`` column. For personas a group is
one judge model (its conditions are the roles); for prompt variants it is the variants
group. Each group names one baseline condition (``baselines``: group -> condition). Rankings
break ties of equal mean nDCG by system name (:func:`voirdire.stats.ordering`).

Scores under the human labels come as a separate table, ``human_scores`` (dataset, system,
query_id, ndcg): they do not depend on the group, so they are given once per dataset rather
than repeated as a pseudo-condition in every group.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.metrics import cohen_kappa_score

from ..output import pyplot, save_figure
from ..stats import kendall_tau, ordering, paired_shift, rbo

ALL = "all"  # the condition name of the per-(dataset, group) summary row

AGREEMENT_COLUMNS = [
    "dataset", "group", "condition", "baseline", "pairs", "unlabelled", "pairs_vs_baseline", "kappa_qw_baseline",
    "shift_vs_baseline", "shift_vs_baseline_ci_low", "shift_vs_baseline_ci_high", "up_vs_baseline",
    "down_vs_baseline", "sign_p_vs_baseline", "stuart_maxwell_p_vs_baseline", "pairs_vs_human", "kappa_qw_human",
    "shift_vs_human", "systems_vs_human", "tau_human", "rbo_human",
]  # fmt: skip
DISPLACEMENT_COLUMNS = [
    "dataset", "group", "condition", "system", "ndcg_baseline", "ndcg", "ndcg_shift", "rank_baseline", "rank", "delta_r",
]  # fmt: skip
BY_SYSTEM_COLUMNS = ["dataset", "group", "system", "conditions", "sensitivity", "max_abs_delta_r", "mean_ndcg_shift"]
BY_CONDITION_COLUMNS = [
    "dataset", "group", "condition", "conditions", "systems", "mean_abs_delta_r", "ci_low", "ci_high",
    "max_abs_delta_r", "affected_systems", "mean_ndcg_shift",
]  # fmt: skip
CONSISTENCY_COLUMNS = [
    "dataset", "condition", "system", "groups", "moved", "up", "down", "mean_delta_r", "consistency", "direction",
]  # fmt: skip

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


def _grades(values: pd.Series, low: int, high: int, what: str) -> np.ndarray:
    """Labelled values as integers, refusing any off the scale (scikit-learn would drop them)."""
    array = values.to_numpy(dtype=float)
    off = (array != np.round(array)) | (array < low) | (array > high)
    if off.any():
        raise ValueError(f"{what}: {int(off.sum())} label(s) off the {low}..{high} scale, e.g. {array[off][0]}")
    return array.astype(int)


def _kappa_qw(a: pd.Series, b: pd.Series, low: int, high: int, what: str) -> tuple[int, float, float]:
    """(pairs used, quadratic-weighted kappa, mean of a - b) on the pairs both sides labelled."""
    both = a.notna().to_numpy() & b.notna().to_numpy()
    if not both.any():
        return 0, math.nan, math.nan
    x, y = _grades(a[both], low, high, what), _grades(b[both], low, high, what)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # one grade on both sides: 0/0, NaN
        value = cohen_kappa_score(x, y, labels=list(range(low, high + 1)), weights="quadratic")
    return int(both.sum()), float(value), float(np.mean(x - y))


def _shift_test(a: pd.Series, b: pd.Series) -> dict:
    """The paired label shift from ``b`` (the baseline) to ``a`` on the pairs both labelled
    (:func:`voirdire.stats.paired_shift`): its interval, counts, sign test and Stuart-Maxwell p."""
    both = a.notna().to_numpy() & b.notna().to_numpy()
    found = paired_shift(b.to_numpy(dtype=float)[both], a.to_numpy(dtype=float)[both])
    return {"shift_vs_baseline_ci_low": found["mean_shift_ci_low"], "shift_vs_baseline_ci_high": found["mean_shift_ci_high"],
            "up_vs_baseline": found["up"], "down_vs_baseline": found["down"], "sign_p_vs_baseline": found["sign_p"],
            "stuart_maxwell_p_vs_baseline": found["stuart_maxwell_p"]}  # fmt: skip


def _system_means(frame: pd.DataFrame) -> pd.Series:
    """Mean nDCG over queries per system."""
    return frame.groupby("system")["ndcg"].mean()


def _ranking_agreement(condition: pd.Series, human: pd.Series, p: float) -> tuple[int, float, float]:
    """(systems, Kendall tau-b, RBO(p)) between two system-mean series, on the systems both score."""
    common = sorted(set(condition.dropna().index) & set(human.dropna().index))
    if len(common) < 2:
        return len(common), math.nan, math.nan
    a, b = condition[common], human[common]
    return len(common), kendall_tau(a.to_numpy(), b.to_numpy()), rbo(ordering(a), ordering(b), p=p)


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
) -> pd.DataFrame:
    """Label and system-ranking agreement of every condition, the baseline included.

    ``labels``: dataset, group, condition, query_id, doc_id, relevance (NaN: unparsed).
    ``human``: dataset, query_id, doc_id, relevance. Kappas are quadratic-weighted on the
    ``low..high`` grades, over the pairs both sides labelled (``pairs_vs_*``); the baseline's
    kappa against itself is 1 by definition. ``shift_vs_*`` is the mean grade difference
    (condition minus the other side) on those pairs: negative, a stricter condition; against
    the baseline it comes with the paired test every label shift uses
    (:func:`voirdire.stats.paired_shift`: t interval, pairs up and down, the exact sign test,
    Stuart-Maxwell). With ``per_query`` (dataset, group, condition,
    system, query_id, ndcg) and ``human_scores`` (dataset, system, query_id, ndcg), ``tau_human``
    and ``rbo_human`` compare the system orderings by mean nDCG under the condition and under
    the human labels (on the systems both score); without them they are NaN.

    One row per (dataset, group, condition): see ``AGREEMENT_COLUMNS``.
    """
    _check_baselines(labels, baselines)
    human_labels = human.drop_duplicates(["dataset", *_PAIR]).set_index(["dataset", *_PAIR])["relevance"]
    rank_human = per_query is not None and human_scores is not None
    rows = []
    for (dataset, group), frame in labels.groupby(["dataset", "group"], sort=False):
        baseline = baselines[group]
        base = frame[frame["condition"] == baseline].drop_duplicates(_PAIR).set_index(_PAIR)["relevance"]
        human_means = _system_means(human_scores[human_scores["dataset"] == dataset]) if rank_human else None
        for condition, rows_c in frame.groupby("condition", sort=False):
            values = rows_c.drop_duplicates(_PAIR).set_index(_PAIR)["relevance"]
            what = f"{dataset}/{group}/{condition}"
            if condition == baseline:
                pairs_b, kappa_b, shift_b = int(values.notna().sum()), 1.0, 0.0
            else:
                pairs_b, kappa_b, shift_b = _kappa_qw(values, base.reindex(values.index), low, high, what)
            shift_test = _shift_test(values, base.reindex(values.index))
            keys = pd.MultiIndex.from_arrays(
                [[dataset] * len(values), values.index.get_level_values(0), values.index.get_level_values(1)]
            )
            pairs_h, kappa_h, shift_h = _kappa_qw(
                values, human_labels.reindex(keys).set_axis(values.index), low, high, what
            )
            systems, tau, overlap = 0, math.nan, math.nan
            if rank_human:
                scores = per_query[
                    (per_query["dataset"] == dataset)
                    & (per_query["group"] == group)
                    & (per_query["condition"] == condition)
                ]
                systems, tau, overlap = _ranking_agreement(_system_means(scores), human_means, rbo_p)
            rows.append(
                {
                    "dataset": dataset, "group": group, "condition": condition, "baseline": condition == baseline,
                    "pairs": len(values), "unlabelled": int(values.isna().sum()), "pairs_vs_baseline": pairs_b,
                    "kappa_qw_baseline": kappa_b, "shift_vs_baseline": shift_b, **shift_test, "pairs_vs_human": pairs_h,
                    "kappa_qw_human": kappa_h, "shift_vs_human": shift_h, "systems_vs_human": systems, "tau_human": tau, "rbo_human": overlap,
                }
            )  # fmt: skip
    return pd.DataFrame(rows, columns=AGREEMENT_COLUMNS)


def _ranks(means: pd.Series) -> pd.Series:
    """Rank of each system, 1 = best, ties by name (:func:`voirdire.stats.ordering`)."""
    order = ordering(means)
    return pd.Series(range(1, len(order) + 1), index=order)


def displacement(per_query: pd.DataFrame, baselines: Mapping[str, str]) -> pd.DataFrame:
    """Rank displacement of every system under every non-baseline condition.

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
                        "dataset": dataset, "group": group, "condition": condition, "system": system,
                        "ndcg_baseline": float(base[system]), "ndcg": float(scores[system]),
                        "ndcg_shift": float(scores[system] - base[system]), "rank_baseline": int(rank_b[system]),
                        "rank": int(rank_c[system]), "delta_r": int(rank_c[system] - rank_b[system]),
                    }
                )  # fmt: skip
    return pd.DataFrame(rows, columns=DISPLACEMENT_COLUMNS)


def bootstrap_mean_ci(
    values: np.ndarray, seed: int = 42, resamples: int = 1000, level: float = 0.95
) -> tuple[float, float]:
    """Percentile bootstrap CI of the mean: ``resamples`` draws with replacement (numpy ``default_rng(seed)``).

    No spread (one value, or all equal) gives the point as both ends; no values gives NaN.
    """
    values = np.asarray(values, dtype=float)
    if len(values) == 0:
        return math.nan, math.nan
    if np.all(values == values[0]):
        return float(values[0]), float(values[0])
    rng = np.random.default_rng(seed)
    means = values[rng.integers(0, len(values), size=(resamples, len(values)))].mean(axis=1)
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return float(low), float(high)


def sensitivity(
    displacement: pd.DataFrame, seed: int = 42, resamples: int = 1000, level: float = 0.95
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Sensitivity per system, and mean |delta_r| per condition with a bootstrap CI over systems.

    Returns ``(by_system, by_condition)``.

    * ``by_system``, one row per (dataset, group, system): ``sensitivity`` =
      ``Sensitivity(s)``, the mean |delta_r| over the conditions; the largest |delta_r|; the
      mean signed nDCG shift. See ``BY_SYSTEM_COLUMNS``.
    * ``by_condition``, one row per (dataset, group, condition): ``mean_abs_delta_r`` over
      systems with a percentile bootstrap CI (systems resampled with replacement), the largest
      |delta_r|, ``affected_systems`` (delta_r != 0), the mean signed nDCG shift; and one row
      per (dataset, group) with condition ``"all"`` (the paper's dataset-level figure): the
      mean over systems of ``Sensitivity(s)`` (the average of the conditions' means when every
      condition ranks the same systems) with its CI over systems, ``affected_systems`` the
      systems that move under some condition. See ``BY_CONDITION_COLUMNS``.

    Each CI draws from its own ``default_rng(seed)``, so a row does not depend on the others.
    """
    by_system: list[dict] = []
    by_condition: list[dict] = []
    frame = displacement.assign(abs_delta_r=displacement["delta_r"].abs())
    for (dataset, group), rows in frame.groupby(["dataset", "group"], sort=False):
        for condition, rows_c in rows.groupby("condition", sort=False):
            values = rows_c["abs_delta_r"].to_numpy(dtype=float)
            low, high = bootstrap_mean_ci(values, seed, resamples, level)
            by_condition.append(
                {
                    "dataset": dataset, "group": group, "condition": condition, "conditions": 1,
                    "systems": len(rows_c), "mean_abs_delta_r": float(values.mean()), "ci_low": low, "ci_high": high,
                    "max_abs_delta_r": int(values.max()), "affected_systems": int((rows_c["delta_r"] != 0).sum()),
                    "mean_ndcg_shift": float(rows_c["ndcg_shift"].mean()),
                }
            )  # fmt: skip
        per_system = rows.groupby("system", sort=False).agg(
            conditions=("condition", "nunique"),
            sensitivity=("abs_delta_r", "mean"),
            max_abs_delta_r=("abs_delta_r", "max"),
            mean_ndcg_shift=("ndcg_shift", "mean"),
        )
        for system, row in per_system.iterrows():
            by_system.append(
                {
                    "dataset": dataset, "group": group, "system": system, "conditions": int(row["conditions"]),
                    "sensitivity": float(row["sensitivity"]), "max_abs_delta_r": int(row["max_abs_delta_r"]),
                    "mean_ndcg_shift": float(row["mean_ndcg_shift"]),
                }
            )  # fmt: skip
        values = per_system["sensitivity"].to_numpy(dtype=float)
        low, high = bootstrap_mean_ci(values, seed, resamples, level)
        by_condition.append(
            {
                "dataset": dataset, "group": group, "condition": ALL, "conditions": int(rows["condition"].nunique()),
                "systems": len(per_system), "mean_abs_delta_r": float(values.mean()), "ci_low": low, "ci_high": high,
                "max_abs_delta_r": int(per_system["max_abs_delta_r"].max()),
                "affected_systems": int((per_system["max_abs_delta_r"] > 0).sum()),
                "mean_ndcg_shift": float(rows["ndcg_shift"].mean()),
            }
        )  # fmt: skip
    return pd.DataFrame(by_system, columns=BY_SYSTEM_COLUMNS), pd.DataFrame(by_condition, columns=BY_CONDITION_COLUMNS)


def direction_consistency(displacement: pd.DataFrame) -> pd.DataFrame:
    """Whether the groups (judge models) move a system the same way under a condition.

    One row per (dataset, condition, system) that at least two groups rank: ``groups``;
    ``moved`` (delta_r != 0), ``up`` (delta_r < 0), ``down`` (delta_r > 0); ``consistency`` =
    |sum of the movers' signs| / moved (1: all moved the same way, 0: as many up as down; NaN
    when fewer than two groups moved); ``direction`` "up", "down", "mixed" or "none" (no group
    moved it). Without two groups sharing a condition name the frame is empty. See
    ``CONSISTENCY_COLUMNS``.
    """
    rows = []
    for (dataset, condition, system), frame in displacement.groupby(["dataset", "condition", "system"], sort=False):
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
                "dataset": dataset, "condition": condition, "system": system, "groups": groups, "moved": moved,
                "up": up, "down": down, "mean_delta_r": float(delta.mean()), "consistency": consistency,
                "direction": direction,
            }
        )  # fmt: skip
    return pd.DataFrame(rows, columns=CONSISTENCY_COLUMNS)


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
    """Mean |delta_r| per condition with its bootstrap CI, one panel per (dataset, group).

    ``summary_by_condition`` is the second frame of :func:`sensitivity`; the ``"all"`` row is
    drawn last, in grey.
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
        rows = pd.concat([rows[rows["condition"] != ALL], rows[rows["condition"] == ALL]])
        mean = rows["mean_abs_delta_r"].to_numpy(dtype=float)
        errors = np.vstack(
            [np.clip(mean - rows["ci_low"].to_numpy(dtype=float), 0, None), np.clip(rows["ci_high"] - mean, 0, None)]
        )
        colours = ["grey" if c == ALL else "tab:blue" for c in rows["condition"]]
        positions = np.arange(len(rows))
        ax.bar(positions, mean, yerr=np.nan_to_num(errors), color=colours, capsize=3)
        ax.set_xticks(positions, rows["condition"], rotation=45, ha="right", fontsize=7)
        ax.set_title(f"{dataset} / {group}", fontsize=9)
    axes[0][0].set_ylabel("mean |delta rank| (95% CI)")
    save_figure(fig, png)
