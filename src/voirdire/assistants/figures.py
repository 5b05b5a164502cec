"""Figures 4 and 5 of the Assistants experiment (Balog, Metzler & Qin, SIGIR 2025, §4.3): the
judges' label counts on original and rewritten passages, and the rankers' score differences."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from ..output import grid, save_figure
from .experiments import label_shift, score_shift


def _panels(shifts: pd.DataFrame, height: float, empty: str):
    """A grid with one panel per row of stratum "all" (a single panel saying ``empty`` if none)."""
    overall = shifts[shifts["stratum"] == "all"] if len(shifts) else shifts
    fig, axes = grid(len(overall), 4.2, height)
    if overall.empty:
        axes[0].text(0.5, 0.5, empty, ha="center", va="center")
        axes[0].axis("off")
    return fig, axes, overall


def figure4(
    labels: pd.DataFrame,
    per_grade: int,
    png: str | Path,
    pdf: str | Path,
    *,
    grades: Sequence[int] = (0, 1, 2, 3),
) -> None:
    """Figure 4: label counts per grade, original vs rewritten passages, one panel per
    (dataset, assistant, judge); the dashed line is ``per_grade``, what a perfectly
    calibrated judge gives on the balanced sample."""
    fig, axes, overall = _panels(label_shift(labels, grades=grades), 3.4, "no labels")
    x = np.arange(len(grades))
    for ax, (_, row) in zip(axes, overall.iterrows(), strict=False):
        before = [row[f"original_{g}"] for g in grades]
        after = [row[f"rewritten_{g}"] for g in grades]
        ax.bar(x - 0.2, before, width=0.4, label="original passage", color="C0")
        ax.bar(x + 0.2, after, width=0.4, label="rewritten passage", color="C1")
        ax.axhline(per_grade, color="black", ls="--", lw=0.8, label="calibrated judge")
        ax.set_xticks(x, [str(g) for g in grades])
        ax.set_xlabel("judge grade")
        ax.set_ylabel("pairs")
        ax.set_title(f"{row['judge']} · {row['dataset']} · {row['assistant']}", fontsize=9)
        p = row["shift_p"]
        note = f"shift {row['mean_shift']:+.2f}, p = {p:.2g} (over {row['queries']} queries)" if row["n"] else "n = 0"
        ax.text(0.02, 0.97, note, transform=ax.transAxes, va="top", fontsize=7)
        ax.legend(fontsize=7, loc="upper right")
    save_figure(fig, png, pdf)


def figure5(scores: pd.DataFrame, png: str | Path, pdf: str | Path, *, tolerance: float = 0.01) -> None:
    """Figure 5: histograms of rewritten - original ranker scores, one panel per (dataset,
    assistant, ranker), with the mean, median, share within ±tolerance and the p of the sign
    test over queries (``shift_p``)."""
    fig, axes, overall = _panels(score_shift(scores, tolerance=tolerance), 3.2, "no scores")
    for ax, (_, row) in zip(axes, overall.iterrows(), strict=False):
        block = scores[
            (scores["dataset"] == row["dataset"])
            & (scores["assistant"] == row["assistant"])
            & (scores["ranker"] == row["ranker"])
        ].dropna(subset=["original", "rewritten"])
        diff = (block["rewritten"] - block["original"]).to_numpy(dtype=float)
        if len(diff):
            ax.hist(diff, bins=min(30, max(5, len(diff) // 5)), color="C0", alpha=0.8)
        ax.axvline(0, color="black", lw=0.8)
        ax.set_xlabel("score of rewrite − score of original")
        ax.set_ylabel("pairs")
        ax.set_title(f"{row['ranker']} · {row['dataset']} · {row['assistant']}", fontsize=9)
        note = (
            f"mean {row['mean_diff']:+.3g}\nmedian {row['median_diff']:+.3g}\n"
            f"within ±{tolerance:g}: {row['within_tolerance']:.0%}\n"
            f"sign test over {row['queries']} queries: p = {row['shift_p']:.2g}"
        )
        ax.text(
            0.97,
            0.97,
            note,
            transform=ax.transAxes,
            ha="right",
            va="top",
            fontsize=7,
            bbox={"boxstyle": "round", "facecolor": "white", "alpha": 0.8},
        )
    save_figure(fig, png, pdf)
