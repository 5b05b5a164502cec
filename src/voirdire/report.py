"""The paper's tables and figure (SPEC section 4; paper Tables 1-2 and Figure 3).

Inputs are long tables: per-query scores with columns (dataset, judge, system, query_id,
ndcg), and per-judge agreement rows. Outputs are CSV + Markdown tables and a PNG + PDF
figure.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from .audits.figures import savefig
from .evaluation import DEFAULT_MEASURES
from .formats import atomic_write
from .judges import HUMAN, Scale
from .stats import (
    compare_significance,
    kappas,
    kendall_tau,
    ordering,
    paired_tests,
    rbo,
)


def system_means(per_query: pd.DataFrame) -> pd.DataFrame:
    """Mean nDCG@10 per (dataset, judge, system)."""
    return per_query.groupby(["dataset", "judge", "system"], sort=False, as_index=False)[
        "ndcg"
    ].mean()


def table1(
    scores: pd.DataFrame, systems: Sequence[str], judges: Sequence[str], measures: Sequence[str] | None = None
) -> pd.DataFrame:
    """Mean score per (dataset, system, measure), one column per judge (paper Table 1, long
    over measures). ``scores`` is long: dataset, judge, measure, system, query_id, value (a
    frame without ``measure`` holds the paper's measure in column ``ndcg``)."""
    if "measure" not in scores.columns:
        scores = scores.rename(columns={"ndcg": "value"}).assign(measure=DEFAULT_MEASURES[0])
    measures = list(measures or dict.fromkeys(scores["measure"]))
    means = scores.groupby(["dataset", "system", "measure", "judge"], sort=False)["value"].mean()
    wide = means.unstack("judge")
    wide = wide[[j for j in judges if j in wide.columns]].reset_index()
    wide["dataset"] = pd.Categorical(wide["dataset"], categories=list(dict.fromkeys(scores["dataset"])), ordered=True)
    wide["system"] = pd.Categorical(wide["system"], categories=list(systems), ordered=True)
    wide["measure"] = pd.Categorical(wide["measure"], categories=measures, ordered=True)
    wide = wide.sort_values(["dataset", "measure", "system"])
    for column in ("dataset", "system", "measure"):
        wide[column] = wide[column].astype(str)
    wide.columns.name = None
    return wide.reset_index(drop=True)


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
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Table 2 (one row per judge and measure) and the significance comparison of one dataset.

    ``labels`` maps every judge (humans first) to its qrels of the needed ``pairs``; ``scores``
    is long (judge, measure, system, query_id, value). Label agreement (kappa) is per pair, so
    the same for every measure; system agreement and significance are per measure.
    """
    human_pool = labels[HUMAN].merge(pairs[["query_id", "doc_id"]], on=["query_id", "doc_id"])
    outside = int((~pairs["in_pool"].astype(str).isin(["True", "true", "1"])).sum()) if "in_pool" in pairs else None
    rows, significance = [], []
    for measure in measures:
        block = scores[scores["measure"] == measure].rename(columns={"value": "ndcg"})
        for judge in labels:
            if judge == HUMAN:
                continue
            row, sig = judge_agreement(
                dataset=dataset, judge=judge, human_labels=human_pool, judge_labels=labels[judge],
                needed=len(pairs), human_scale=scales[HUMAN], judge_scale=scales[judge],
                per_query=block[block["judge"].isin([HUMAN, judge])], oracles=oracles, alpha=alpha, rbo_p=rbo_p,
            )  # fmt: skip
            row = {"dataset": dataset, "judge": judge, "measure": measure, "pairs_outside_pool": outside,
                   **{k: v for k, v in row.items() if k not in ("dataset", "judge")}}  # fmt: skip
            sig.insert(2, "measure", measure)
            rows.append(row)
            significance.append(sig)
    agreement = pd.DataFrame(rows)
    return agreement, (pd.concat(significance, ignore_index=True) if significance else pd.DataFrame())


def judge_agreement(
    *,
    dataset: str,
    judge: str,
    human_labels: pd.DataFrame,
    judge_labels: pd.DataFrame,
    needed: int,
    human_scale: Scale,
    judge_scale: Scale,
    per_query: pd.DataFrame,
    oracles: Sequence[str],
    alpha: float,
    rbo_p: float,
) -> tuple[dict, pd.DataFrame]:
    """One Table 2 row for a judge, and its significance comparison against humans.

    ``per_query`` holds both the human and this judge's per-query scores for one dataset.
    """
    aligned = judge_labels.merge(
        human_labels, on=["query_id", "doc_id"], suffixes=("_judge", "_human")
    )
    row: dict = {
        "dataset": dataset,
        "judge": judge,
        "pairs_needed": needed,
        "pairs_labelled": len(judge_labels),
        "coverage": len(judge_labels) / needed if needed else math.nan,
    }
    row.update(
        kappas(aligned["relevance_human"], aligned["relevance_judge"], human_scale, judge_scale)
    )
    wide = {
        name: frame.pivot(index="query_id", columns="system", values="ndcg")
        for name, frame in per_query.groupby("judge")
    }
    human, other = wide[HUMAN], wide[judge][wide[HUMAN].columns]
    means_h, means_j = human.mean(), other.mean()
    oracle_cols = [s for s in human.columns if s in set(oracles)]
    row["tau_all"] = kendall_tau(means_h.values, means_j.values)
    row["tau_oracles"] = kendall_tau(means_h[oracle_cols].values, means_j[oracle_cols].values)
    row["rbo_all"] = rbo(ordering(means_h), ordering(means_j), p=rbo_p)
    significance = compare_significance(paired_tests(human), paired_tests(other), alpha)
    significance.insert(0, "judge", judge)
    significance.insert(0, "dataset", dataset)
    row["pairs_of_systems"] = len(significance)
    for column in ("missed", "spurious", "flipped", "flipped_significant"):
        row[column] = int(significance[column].sum())
    return row, significance


def write_table(
    frame: pd.DataFrame, stem: str | Path, *, title: str, floatfmt: str = ".4f", manifest: str | None = None,
    empty: str = "no judge besides the human labels is configured",
) -> None:
    """Write ``stem``.csv and ``stem``.md (one Markdown section per dataset).

    ``manifest`` (the manifest's SHA-256) is printed under the Markdown title, so a table
    says which systems, judges and settings it was made from.
    """
    stem = Path(stem)
    with atomic_write(stem.with_suffix(".csv")) as fh:
        frame.to_csv(fh, index=False, float_format="%.12g")
    lines = [f"# {title}", ""]
    if manifest:
        lines += [f"manifest sha256: `{manifest}` (see fingerprint.json)", ""]
    if frame.empty:
        lines.append(f"(no rows: {empty})")
    for dataset, block in frame.groupby("dataset", sort=False) if not frame.empty else []:
        shown = _counts_as_integers(block.drop(columns="dataset")).astype(object)
        shown = shown.where(shown.notna(), None)
        lines += [f"## {dataset}", "", shown.to_markdown(
            index=False, floatfmt=floatfmt, missingval="n/a"), ""]
    with atomic_write(stem.with_suffix(".md")) as fh:
        fh.write("\n".join(lines))


def _counts_as_integers(frame: pd.DataFrame) -> pd.DataFrame:
    """Float columns that hold whole numbers (counts beside a missing value) print as integers;
    columns of 0s and 1s only stay as they are (they may be rates)."""
    frame = frame.copy()
    for column in frame.columns:
        values = frame[column]
        if values.dtype.kind != "f" or values.isna().all():
            continue
        present = values.dropna()
        if (present % 1 == 0).all() and not present.isin([0, 1]).all():
            frame[column] = values.astype("Int64")
    return frame


def figure3(table: pd.DataFrame, judges: Sequence[str], png: str | Path, pdf: str | Path) -> None:
    """nDCG@10 per system under human and each judge, systems in human order (Figure 3)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    datasets = list(dict.fromkeys(table["dataset"]))
    fig, axes = plt.subplots(
        1, len(datasets), figsize=(max(6.0, 4.5 * len(datasets)), 4.2), squeeze=False
    )
    markers = "osD^vP*Xh"
    for ax, dataset in zip(axes[0], datasets, strict=True):
        block = table[table["dataset"] == dataset].sort_values(HUMAN, ascending=False)
        x = range(len(block))
        for index, judge in enumerate(j for j in judges if j in block.columns):
            ax.plot(
                x, block[judge], marker=markers[index % len(markers)], label=judge,
                linewidth=2.2 if judge == HUMAN else 1.2,
                color="black" if judge == HUMAN else None,
            )  # fmt: skip
        ax.set_xticks(list(x), block["system"], rotation=45, ha="right")
        ax.set_ylabel("nDCG@10 (judged only)")
        ax.set_title(dataset)
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize="small")
    fig.tight_layout()
    for path in (png, pdf):
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        with atomic_write(path, "wb") as fh:
            savefig(fig, fh, Path(path).suffix.lstrip("."), 150)
    plt.close(fig)
