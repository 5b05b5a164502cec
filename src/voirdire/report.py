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


def table1(per_query: pd.DataFrame, systems: Sequence[str], judges: Sequence[str]) -> pd.DataFrame:
    """System x judge mean nDCG@10, one block of rows per dataset (paper Table 1)."""
    means = system_means(per_query)
    wide = means.pivot_table(index=["dataset", "system"], columns="judge", values="ndcg")
    columns = [j for j in judges if j in wide.columns]
    wide = wide[columns].reset_index()
    wide["system"] = pd.Categorical(wide["system"], categories=list(systems), ordered=True)
    wide = wide.sort_values(["dataset", "system"])
    wide["system"] = wide["system"].astype(str)
    wide.columns.name = None
    return wide.reset_index(drop=True)


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
        shown = block.drop(columns="dataset").astype(object)
        shown = shown.where(shown.notna(), None)
        lines += [f"## {dataset}", "", shown.to_markdown(
            index=False, floatfmt=floatfmt, missingval="n/a"), ""]
    with atomic_write(stem.with_suffix(".md")) as fh:
        fh.write("\n".join(lines))


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
