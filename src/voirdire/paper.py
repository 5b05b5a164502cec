"""The paper's tables and figure (Balog, Metzler & Qin, SIGIR 2025: Tables 1-2 and Figure 3).

Inputs are long tables: per-query scores with columns (dataset, judge, measure, system,
query_id, value), and per-judge agreement rows. The tables are written by
:func:`voirdire.output.write_table`, the figure by :func:`voirdire.output.save_figure`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from .audits.labels import label_agreement
from .judges import HUMAN, POOL, Scale
from .output import add_key, grid, pyplot, save_figure, save_fitted, short_labels
from .stats import (
    asl_curve,
    column_mean_intervals,
    compare_significance,
    difference_in_differences,
    discriminative_power,
    expected_false_flags,
    kendall_tau,
    max_drop,
    rbo_floor,
    rbo_scores,
    reference_draws,
    significance_tests,
    system_agreement_intervals,
    tau_ap,
    top_k,
    user_agreement,
)
from .stats.agreement import MIN_QUERIES
from .stats.leaderboard import NULL_DRAWS
from .stats.resample import SEED

TABLE1_KEEP = ("system", "measure", HUMAN, POOL)
"""The columns every page of Table 1's Markdown repeats when its judges do not fit on one
(:func:`voirdire.output.write_table`'s ``keep``): a judge's mean is read beside the humans'."""


def table1(
    scores: pd.DataFrame,
    systems: Sequence[str],
    judges: Sequence[str],
    measures: Sequence[str] | None = None,
    *,
    resamples: int = 0,
    seed: int = SEED,
) -> pd.DataFrame:
    """Mean score per (dataset, system, measure), one column per judge (paper Table 1, long
    over measures). ``scores`` is long: dataset, judge, measure, system, query_id, value.

    With ``resamples``, every mean carries its 95% percentile bootstrap interval over queries
    (seeded; :func:`voirdire.stats.column_mean_intervals`) in ``<judge>_ci_low`` and
    ``<judge>_ci_high``, after the judges' columns."""
    measures = list(measures or scores["measure"].unique())
    keys = ["dataset", "system", "measure", "judge"]
    means = scores.groupby(keys, sort=False)["value"].mean()
    if resamples:
        means = pd.concat([means, _mean_intervals(scores, resamples, seed)], axis=1)
    wide = means.unstack("judge")
    present = [j for j in judges if j in wide.columns.get_level_values(-1)]
    if resamples:
        wide.columns = [j if what == "value" else f"{j}_{what}" for what, j in wide.columns]
        bounds = [f"{j}_{side}" for j in present for side in ("ci_low", "ci_high")]
        wide = wide[present + bounds].reset_index()
    else:
        wide = wide[present].reset_index()
    wide["dataset"] = pd.Categorical(wide["dataset"], categories=list(scores["dataset"].unique()), ordered=True)
    wide["system"] = pd.Categorical(wide["system"], categories=list(systems), ordered=True)
    wide["measure"] = pd.Categorical(wide["measure"], categories=measures, ordered=True)
    wide = wide.sort_values(["dataset", "measure", "system"])
    for column in ("dataset", "system", "measure"):
        wide[column] = wide[column].astype(str)
    wide.columns.name = None
    return wide.reset_index(drop=True)


def _mean_intervals(scores: pd.DataFrame, resamples: int, seed: int) -> pd.DataFrame:
    """The bootstrap interval over queries of every (dataset, system, measure, judge) mean: one
    query-by-system matrix per dataset, measure and judge, every system's column at once."""
    frames = []
    for (dataset, measure, judge), block in scores.groupby(["dataset", "measure", "judge"], sort=False):
        matrix = block.pivot(index="query_id", columns="system", values="value")
        low, high = column_mean_intervals(matrix.to_numpy(dtype=float), resamples=resamples, seed=seed)
        frames.append(
            pd.DataFrame(
                {
                    "dataset": dataset,
                    "system": matrix.columns,
                    "measure": measure,
                    "judge": judge,
                    "ci_low": low,
                    "ci_high": high,
                }
            )
        )
    return pd.concat(frames, ignore_index=True).set_index(["dataset", "system", "measure", "judge"])


def agreement_tables(
    *,
    dataset: str,
    labels: dict[str, pd.DataFrame],
    scales: dict[str, Scale],
    pairs: pd.DataFrame,
    scores: pd.DataFrame,
    measures: Sequence[str],
    oracles: Sequence[str],
    alpha: float,
    rbo_p: float,
    pool_scores: pd.DataFrame | None = None,
    correction: str = "none",
    test: str = "t",
    resamples: int = 1000,
    seed: int = 42,
    constructed: Sequence[str] | None = None,
    null_draws: int = NULL_DRAWS,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Table 2 (one row per judge and measure) and the significance comparison of one dataset.

    ``labels`` maps every judge (humans first) to its qrels of the needed ``pairs``; ``scores``
    is long (judge, measure, system, query_id, value). Label agreement (kappa) is per pair, so
    the same for every measure; system agreement and significance are per measure. Every
    kappa, tau and RBO carries a 95% cluster-bootstrap interval over queries (seeded).

    ``pool_scores`` (same shape) are the systems under the human labels restricted to the
    pairs a judge is asked (``human@pool``): judged-only nDCG's ideal DCG uses every qrel of a
    query under the humans but only the labelled pairs under a judge, so a judge that copies
    the human labels can still reorder systems against the humans. Against ``human@pool`` it
    cannot; tau and the significance counts are reported against both (suffix ``_vs_pool``).

    The leaderboard and decisions rules rest on the systems the user brought, ``constructed``
    (the systems built from the human labels: Perfect and the swaps; default: ``oracles``) left
    out; their columns come last, against each reference (:func:`voirdire.stats.user_agreement`):
    ``systems_user``; ``tau_user`` with its interval, ``tau_user_null`` (the tau an unbiased
    judge with this judge's per-query noise reaches) and ``tau_user_p`` (one-sided);
    ``pairs_user``, ``reversed_user`` (reversed pairs at ``alpha``, no correction),
    ``reversed_user_p`` (the count's sign-flip null over whole queries) and
    ``reversed_user_expected``. NaN, counts 0, with fewer than
    :data:`voirdire.stats.MIN_USER_SYSTEMS` user systems; ``null_draws`` draws per null.
    """
    constructed = list(oracles if constructed is None else constructed)
    outside = int((~pairs["in_pool"].astype(str).isin(["True", "true", "1"])).sum()) if "in_pool" in pairs else None
    label_rows = label_agreement(labels, scales, pairs, resamples=resamples, seed=seed)
    rows, significance = [], []
    for measure in measures:
        block = scores[scores["measure"] == measure]
        wide = {j: f.pivot(index="query_id", columns="system", values="value") for j, f in block.groupby("judge")}
        human = wide[HUMAN]
        reference = {"human": human}
        if pool_scores is not None:
            at_pool = pool_scores[pool_scores["measure"] == measure]
            at_pool = at_pool.pivot(index="query_id", columns="system", values="value")
            reference["pool"] = at_pool.loc[human.index, human.columns]
        tests = {name: significance_tests(ref, test, **_seeded(test, seed)) for name, ref in reference.items()}
        # each reference's bootstrap draws, sorted once for every judge compared with it (none
        # under MIN_QUERIES: no interval is drawn there)
        drawn = {
            name: reference_draws(ref, oracles, resamples=resamples, seed=seed) if len(ref) >= MIN_QUERIES else None
            for name, ref in reference.items()
        }
        for judge in label_rows:
            other = wide[judge].loc[human.index, human.columns]
            row = {
                "dataset": dataset,
                "judge": judge,
                "measure": measure,
                "queries": len(human),
                "pairs_outside_pool": outside,
                **label_rows[judge],
            }
            judge_tests = significance_tests(other, test, **_seeded(test, seed))
            user = {}  # the rules over the user's systems, after every other column
            for name, ref in reference.items():
                suffix = "" if name == "human" else "_vs_pool"
                row.update(
                    _system_agreement(
                        ref, other, oracles, rbo_p, suffix, resamples=resamples, seed=seed, reference=drawn[name]
                    )
                )
                sig = compare_significance(tests[name], judge_tests, alpha, correction=correction)
                for column in ("missed", "spurious", "flipped", "flipped_significant"):
                    row[column + suffix] = int(sig[column].sum())
                # does the judge see a different gap than the reference, pair by pair (judge - reference,
                # paired over queries, corrected across the pairs): the count chance alone bounds
                dd = difference_in_differences(ref, other, alpha, correction=correction)
                row["disagreements" + suffix] = int(dd["disagrees"].sum())
                row["disagreements_reversed" + suffix] = int(dd["reversed"].sum())
                row["disagreements_expected" + suffix] = expected_false_flags(
                    len(dd), alpha, correction, discoveries=row["disagreements" + suffix]
                )
                found = user_agreement(ref, other, constructed, alpha, resamples=resamples, draws=null_draws, seed=seed)
                user.update({column + suffix: value for column, value in found.items()})
                if name == "human":
                    row["test"] = test
                    row["discriminative_power"] = discriminative_power(sig["p_judge_adjusted"], alpha)
                    row["discriminative_power_human"] = discriminative_power(sig["p_human_adjusted"], alpha)
                    row["pairs_of_systems"] = len(sig)
                    row["tests"] = 2 * len(sig)  # a test per pair under the humans and under the judge
                    discoveries = int((sig["p_human_adjusted"] < alpha).sum() + (sig["p_judge_adjusted"] < alpha).sum())
                    # two families (humans', judge's), each corrected within itself
                    row["expected_false_flags"] = expected_false_flags(
                        row["tests"], alpha, correction, discoveries=discoveries, families=2
                    )
                    row["correction"] = correction
                    for column, value in (("measure", measure), ("judge", judge), ("dataset", dataset)):
                        sig.insert(0, column, value)
                    significance.append(sig)
            rows.append(row | user)
    agreement = pd.DataFrame(rows)
    return agreement, (pd.concat(significance, ignore_index=True) if significance else pd.DataFrame())


def _seeded(test: str, seed: int) -> dict:
    """The seed of a permutation test (the t-test takes none)."""
    return {} if test == "t" else {"seed": seed}


def _system_agreement(
    human: pd.DataFrame, judge: pd.DataFrame, oracles: Sequence[str], rbo_p: float, suffix: str, **boot
) -> dict:
    """tau (all systems, oracles only) and RBO of the judge's system ordering against a
    reference's, each with its bootstrap interval over queries."""
    means_h, means_j = human.mean(), judge.mean()
    oracle_cols = [s for s in human.columns if s in set(oracles)]
    row = {
        "tau_all": kendall_tau(means_h.values, means_j.values),
        "tau_oracles": kendall_tau(means_h[oracle_cols].values, means_j[oracle_cols].values),
        "rbo_all": rbo_scores(means_h.values, means_j[means_h.index].values, p=rbo_p),
        "rbo_floor": rbo_floor(len(means_h), p=rbo_p),
        "tau_ap": tau_ap(means_h.values, means_j[means_h.index].values),
        "tau_top": _tau_top(means_h, means_j),
        "max_drop": max_drop(means_h.values, means_j[means_h.index].values),
        **system_agreement_intervals(human, judge, oracles, rbo_p=rbo_p, **boot),
    }
    order = [
        "tau_all",
        "tau_all_ci_low",
        "tau_all_ci_high",
        "tau_oracles",
        "tau_oracles_ci_low",
        "tau_oracles_ci_high",
        "rbo_all",
        "rbo_all_ci_low",
        "rbo_all_ci_high",
        "rbo_floor",
        "tau_ap",
        "tau_ap_ci_low",
        "tau_ap_ci_high",
        "tau_top",
        "tau_top_ci_low",
        "tau_top_ci_high",
        "max_drop",
        "max_drop_ci_low",
        "max_drop_ci_high",
        "system_degenerate",
    ]
    return {f"{name}{suffix}": row[name] for name in order}


def _tau_top(human: pd.Series, judge: pd.Series) -> float:
    """Kendall's tau on the reference's better half of the systems (:func:`voirdire.stats.top_k`)."""
    top = list(human.sort_values(ascending=False, kind="stable").index[: top_k(list(human.index))])
    return kendall_tau(human[top].values, judge[top].values)


def figure3(table: pd.DataFrame, judges: Sequence[str], png: str | Path, pdf: str | Path):
    """nDCG@10 per system under human and each judge, systems in human order (Figure 3).

    A system name longer than :data:`SHORT_NAME` is drawn as ``S1``, ``S2``, ... (numbered in
    the first panel's order) with a key of the full names below the panels; the judges'
    legend sits beside them, so a long name is never cut. Returns the figure (saved, closed)."""
    plt = pyplot()
    datasets = list(dict.fromkeys(table["dataset"]))
    blocks = {d: table[table["dataset"] == d].sort_values(HUMAN, ascending=False) for d in datasets}
    labels = short_labels([s for block in blocks.values() for s in block["system"].astype(str)])
    systems = max((len(block) for block in blocks.values()), default=0)
    fig, axes = plt.subplots(
        1,
        max(1, len(datasets)),
        figsize=(max(6.0, max(4.5, 0.35 * systems) * len(datasets)), 4.2),
        squeeze=False,
        layout="constrained",
    )
    markers = "osD^vP*Xh"
    shortened = any(short != full for full, short in labels.items())
    for ax, dataset in zip(axes[0], datasets, strict=False):
        block = blocks[dataset]
        x = range(len(block))
        for index, judge in enumerate(j for j in judges if j in block.columns):
            ax.plot(
                x,
                block[judge],
                marker=markers[index % len(markers)],
                label=judge,
                linewidth=2.2 if judge == HUMAN else 1.2,
                color="black" if judge == HUMAN else None,
            )
        ticks = [labels[s] for s in block["system"].astype(str)]
        upright = len(ticks) <= 20 and max(map(len, ticks), default=0) <= 3  # S1, S2, ... while they fit
        ax.set_xticks(list(x), ticks, rotation=0 if upright else 45, ha="center" if upright else "right")
        ax.set_ylabel("nDCG@10 (judged only)")
        ax.set_xlabel("system" + (" (key below)" if shortened else ""))
        ax.set_title(dataset)
        ax.grid(axis="y", alpha=0.3)
    handles, names = axes[0][0].get_legend_handles_labels()
    if handles:
        fig.legend(
            handles,
            names,
            loc="outside right upper",
            fontsize="small",
            title="judge",
            ncol=max(1, -(-len(handles) // 25)),
        )
    add_key(fig, labels)
    save_fitted(fig, png, pdf)
    return fig


ASL_JUDGES = 12
"""Judges drawn in one panel of the ASL figure beside the humans' curve; more make more panels."""

ASL_FLOOR = 1e-4
"""The ASL figure's lowest level: smaller p-values are drawn at it (the axis says so)."""


def asl_figure(significance: pd.DataFrame, measure: str, alpha: float, png: str | Path, pdf: str | Path):
    """The achieved significance level curves (Sakai 2006) of the primary measure: for each
    judge, the p-values of every system pair's test (as adjusted for Table 2's counts) sorted
    ascending against the pair's rank, beside the humans' curve (black). A judge whose curve
    falls below α for many more pairs than the humans' "finds" differences the humans do not:
    suspicious, not more discriminative. One panel per dataset and group of at most
    :data:`ASL_JUDGES` judges. Returns the figure (saved, closed)."""
    plt = pyplot()
    if significance.empty:
        fig, ax = plt.subplots(figsize=(6.2, 1.6))
        ax.axis("off")
        ax.text(0.5, 0.5, "no pair of systems was tested: no ASL curve", ha="center", va="center")
        save_figure(fig, png, pdf)
        return fig
    rows = significance[significance["measure"] == measure] if "measure" in significance else significance
    panels = []
    for dataset in dict.fromkeys(rows["dataset"]):
        block = rows[rows["dataset"] == dataset]
        judges = list(dict.fromkeys(block["judge"]))
        for start in range(0, max(1, len(judges)), ASL_JUDGES):
            panels.append((dataset, block, judges[start : start + ASL_JUDGES], start, len(judges)))
    fig, axes = grid(len(panels), 6.2, 3.6, cols=2)
    for ax, (dataset, block, judges, start, total) in zip(axes, panels, strict=True):
        pairs = block.drop_duplicates(["system_a", "system_b"])
        human = asl_curve(pairs["p_human_adjusted"].to_numpy(dtype=float))
        x = range(1, len(human) + 1)
        ax.plot(x, human.clip(ASL_FLOOR, 1), color="black", linewidth=2.4, label=f"{HUMAN} ({(human < alpha).sum()})")
        for judge in judges:
            curve = asl_curve(block.loc[block["judge"] == judge, "p_judge_adjusted"].to_numpy(dtype=float))
            ax.plot(
                range(1, len(curve) + 1),
                curve.clip(ASL_FLOOR, 1),
                linewidth=1.2,
                label=f"{judge} ({(curve < alpha).sum()})",
            )
        ax.axhline(alpha, color="grey", linestyle="--", linewidth=1)
        ax.set_yscale("log")
        ax.set_ylim(ASL_FLOOR * 0.8, 1.2)
        ax.set_xlabel(f"system pair, by p-value ({len(human)} pairs)")
        ax.set_ylabel(f"achieved significance level (≤ {ASL_FLOOR:g} drawn at it)")
        part = f", judges {start + 1}-{start + len(judges)} of {total}" if total > ASL_JUDGES else ""
        ax.set_title(f"{dataset}{part}: α = {alpha:g} dashed", fontsize="medium")
        ax.legend(fontsize="x-small", title="judge (pairs below α)", title_fontsize="x-small", loc="lower right")
        ax.grid(alpha=0.3)
    save_fitted(fig, png, pdf)
    return fig
