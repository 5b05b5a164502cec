"""Figures of the label audits: confusion heatmaps, the leave-one-judge-out chart, length by decile."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from ..output import per_dataset, pyplot, save_figure


def confusion_heatmaps(tables: Mapping[tuple[str, str], pd.DataFrame], png: str | Path) -> None:
    """One heatmap per (dataset, judge): human grade (rows) x judge grade (columns), row shares."""
    plt = pyplot()
    keys = list(tables) or [("", "")]
    cols = min(4, len(keys))
    rows = (len(keys) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 2.9 * rows), squeeze=False)
    for ax in axes.flat[len(tables) :]:
        ax.axis("off")
    for ax, (dataset, judge) in zip(axes.flat, tables, strict=False):
        counts = tables[dataset, judge]
        shares = counts.div(counts.sum(axis=1).where(lambda s: s > 0, 1), axis=0)
        ax.imshow(shares.to_numpy(), cmap="Blues", vmin=0, vmax=1)
        for (i, j), value in pd.DataFrame(counts.to_numpy()).stack().items():
            ax.text(j, i, str(value), ha="center", va="center", fontsize=7)
        ax.set_xticks(range(len(counts.columns)), counts.columns)
        ax.set_yticks(range(len(counts.index)), counts.index)
        ax.set_xlabel(f"{judge} grade")
        ax.set_ylabel("human grade")
        ax.set_title(f"{dataset}: {judge}", fontsize=9)
    save_figure(fig, png)


def circularity_heatmap(table: pd.DataFrame, png: str | Path) -> None:
    """Mean nDCG@10 of each judge's ranking (rows) under each judge (columns), per dataset."""
    fig, panels = per_dataset(table, 4.8, 4.2)
    for ax, dataset, rows in panels:
        block = rows.set_index("ranker")
        matrix = block[[c for c in block.columns if c.startswith("under_")]]
        ax.imshow(matrix.to_numpy(dtype=float), cmap="viridis", vmin=0, vmax=1)
        for (i, j), value in pd.DataFrame(matrix.to_numpy(dtype=float)).stack().items():
            ax.text(
                j, i, f"{value:.2f}", ha="center", va="center", fontsize=7, color="white" if value < 0.6 else "black"
            )
        ax.set_xticks(
            range(matrix.shape[1]), [c.removeprefix("under_") for c in matrix.columns], rotation=45, ha="right"
        )
        ax.set_yticks(range(matrix.shape[0]), matrix.index)
        ax.set_xlabel("scored under")
        ax.set_ylabel("ranking by")
        ax.set_title(dataset)
    save_figure(fig, png)


def leniency_chart(label_test: pd.DataFrame, png: str | Path) -> None:
    """Mean judge grade per human grade, one line per judge (the diagonal: a judge that agrees)."""
    fig, panels = per_dataset(label_test, 5, 3.8)
    for ax, dataset, block in panels:
        columns = [c for c in block.columns if c.startswith("mean_judge_grade_at_human_")]
        grades = [int(c.rsplit("_", 1)[1]) for c in columns]
        for _, row in block.iterrows():
            ax.plot(grades, row[columns].to_numpy(dtype=float), marker="o", label=row["judge"])
        if grades:
            ax.plot(grades, grades, color="black", lw=0.8, ls="--", label="agrees with the humans")
        ax.set_xlabel("human grade")
        ax.set_ylabel("mean judge grade")
        ax.set_title(dataset)
        ax.legend(fontsize=7)
    save_figure(fig, png)


def drift_chart(shifts: pd.DataFrame, drifted: pd.DataFrame, png: str | Path) -> None:
    """Per judge: each later label set against the first on the same pairs -- the mean grade
    difference with its 95% bootstrap CI (left axis) and the share of labels that flip with its
    Wilson interval (right axis)."""
    plt = pyplot()
    judges = list(dict.fromkeys(zip(drifted["dataset"], drifted["judge"], strict=True))) if len(drifted) else []
    fig, axes = plt.subplots(1, max(1, len(judges)), figsize=(4.5 * max(1, len(judges)), 3.6), squeeze=False)
    if not judges:
        axes[0][0].text(0.5, 0.5, "no judge has two label sets or more", ha="center")
        axes[0][0].axis("off")
    for ax, (dataset, judge) in zip(axes[0], judges, strict=False):
        flips = drifted[(drifted["dataset"] == dataset) & (drifted["judge"] == judge)]
        rows = shifts[(shifts["dataset"] == dataset) & (shifts["judge"] == judge)] if len(shifts) else shifts
        x = list(range(len(flips)))
        if len(rows):
            rows = rows.set_index("run").loc[flips["run"]]
            err = [
                rows["mean_difference"] - rows["difference_ci_low"],
                rows["difference_ci_high"] - rows["mean_difference"],
            ]
            ax.errorbar(x, rows["mean_difference"], yerr=err, marker="o", capsize=3, label="mean grade difference")
            ax.axhline(0, color="grey", lw=0.8)
            ax.set_ylabel("mean grade vs the first set")
        twin = ax.twinx()
        flip_err = [flips["flip_rate"] - flips["flip_rate_ci_low"], flips["flip_rate_ci_high"] - flips["flip_rate"]] \
            if "flip_rate_ci_low" in flips else None  # fmt: skip
        twin.errorbar([i + 0.1 for i in x], flips["flip_rate"], yerr=flip_err, color="C1", marker="s", ls="none",
                      capsize=3, label="flip rate")  # fmt: skip
        twin.set_ylabel("share of labels that flip", color="C1")
        ax.set_xticks(x, flips["run"])
        ax.set_xlim(-0.5, len(x) - 0.5 + 0.1)
        ax.set_title(f"{dataset}: {judge}", fontsize=9)
        ax.tick_params(axis="x", rotation=30)
    save_figure(fig, png)


def lojo_chart(lojo: pd.DataFrame, png: str | Path) -> None:
    """Share of each adjacent margin that survives without each judge (1 = untouched, < 0 = flipped)."""
    fig, panels = per_dataset(lojo, 6, 4)
    for ax, dataset, block in panels:
        if block.empty:
            ax.text(0.5, 0.5, "fewer than two judges", ha="center")
            continue
        block = block.assign(pair=block["upper"] + " > " + block["lower"])
        wide = block.pivot(index="pair", columns="left_out", values="margin_share")
        wide = wide.reindex(list(dict.fromkeys(block["pair"])))
        wide.plot.barh(ax=ax, width=0.8)
        ax.axvline(0, color="black", lw=0.8)
        ax.axvline(1, color="grey", lw=0.8, ls="--")
        ax.set_xlabel("share of the panel margin kept without the judge")
        ax.set_title(dataset)
        ax.invert_yaxis()
    save_figure(fig, png)


def calibration_chart(curve: pd.DataFrame, png: str | Path) -> None:
    """Kendall's tau against the humans over k labelled queries: PPI-corrected, judge alone, humans alone."""
    fig, panels = per_dataset(curve, 5.5, 3.8)
    for ax, dataset, block in panels:
        for index, (judge, rows) in enumerate(block.groupby("judge", sort=False)):
            color = f"C{index}"
            ax.plot(rows["k"], rows["tau_corrected"], marker="o", color=color, label=f"{judge}: PPI-corrected")
            ax.plot(rows["k"], rows["tau_judge"], ls="--", color=color, label=f"{judge}: judge alone")
        if len(block):
            human = block.groupby("k")["tau_human_only"].mean()
            ax.plot(human.index, human.values, ls=":", color="black", label="humans alone (k queries)")
        ax.set_xlabel("human-labelled queries k")
        ax.set_ylabel("Kendall's tau vs the humans (all queries)")
        ax.set_title(dataset)
        ax.legend(fontsize=6)
    save_figure(fig, png)


def length_chart(deciles: pd.DataFrame, png: str | Path) -> None:
    """Mean judge grade by length decile within each human grade, one panel per (dataset, judge)."""
    plt = pyplot()
    keys = list(dict.fromkeys(zip(deciles["dataset"], deciles["judge"], strict=True))) or [("", "")]
    cols = min(4, len(keys))
    rows = (len(keys) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(3.4 * cols, 2.8 * rows), squeeze=False, sharey=True)
    for ax in axes.flat[len(keys) :]:
        ax.axis("off")
    for ax, (dataset, judge) in zip(axes.flat, keys, strict=False):
        block = deciles[(deciles["dataset"] == dataset) & (deciles["judge"] == judge)]
        for column in [c for c in block.columns if c.startswith("human_")]:
            ax.plot(block["decile"], block[column], marker=".", label=column.replace("_", " "))
        ax.set_title(f"{dataset}: {judge}", fontsize=9)
        ax.set_xlabel("length decile (within the human grade)")
    axes.flat[0].set_ylabel("mean judge grade")
    axes.flat[0].legend(fontsize=7)
    save_figure(fig, png)
