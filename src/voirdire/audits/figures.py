"""Figures of the label audits: confusion heatmaps, the leave-one-judge-out chart, length by decile.

Every figure is readable at scale: a per-judge figure draws at most :data:`MAX_PANELS` judges
(those with the largest effect, and says how many of how many it shows; its table has every
judge) or, where no effect ranks them, one summary of all judges. Long system names are drawn
as short labels with a key (:func:`voirdire.output.short_labels`), and a figure grows until
nothing it draws is cut (:func:`voirdire.output.fit_to_contents`). Each returns its figure
(saved and closed).
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Hashable, Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from ..output import add_key, per_dataset, pyplot, save_fitted, short_labels

MAX_PANELS = 12
"""The most judges a per-judge figure draws (panels, or lines in one panel)."""


def _largest(effects: Mapping[Hashable, float], cap: int = MAX_PANELS) -> list:
    """Every key, in order, when there are at most ``cap``; else the ``cap`` keys of largest
    effect, largest first (a missing effect counts as the smallest; ties keep their order)."""
    keys = list(effects)
    if len(keys) <= cap:
        return keys
    return sorted(keys, key=lambda k: -effects[k] if math.isfinite(effects[k]) else math.inf)[:cap]


def _shown(shown: int, total: int, which: str) -> str:
    """The note of a capped figure: how many judges of how many, and which; '' when all are shown."""
    return "" if shown >= total else f"{shown} of {total} judges shown: {which}"


def _title(*parts: str, width: int = 34) -> str:
    """A panel title, wrapped so a long judge name does not run into the next panel."""
    return textwrap.fill(": ".join(p for p in parts if p), width) or " "


def _panels(count: int, width: float, height: float, cols: int = 4, **shared):
    """A constrained-layout figure of ``count`` panels (at least one), ``cols`` a row; the
    unused grid cells removed, so the figure has exactly its panels."""
    plt = pyplot()
    count = max(1, count)
    cols = min(cols, count)
    rows = (count + cols - 1) // cols
    fig, axes = plt.subplots(
        rows, cols, figsize=(width * cols, height * rows), squeeze=False, layout="constrained", **shared
    )
    for ax in axes.flat[count:]:
        fig.delaxes(ax)
    return fig, list(axes.flat[:count])


def _style(index: int) -> dict:
    """The line style of the ``index``-th judge of a panel: ten colours, then again with square markers."""
    return {"color": f"C{index % 10}", "marker": "os^D"[index // 10 % 4]}


def _constrained(fig):
    """``fig`` with a constrained layout (room for every label, legend and key)."""
    fig.set_layout_engine("constrained")
    return fig


def _finish(fig, png: str | Path):
    """Grow the figure to its contents, write it (PNG and PDF) and return it."""
    save_fitted(fig, png)
    return fig


def _off_diagonal(counts: pd.DataFrame) -> float:
    """The share of pairs whose judge grade differs from the human grade."""
    total = counts.to_numpy().sum()
    same = sum(counts.loc[g, g] for g in counts.index if g in counts.columns)
    return 1 - same / total if total else math.nan


def confusion_heatmaps(tables: Mapping[tuple[str, str], pd.DataFrame], png: str | Path):
    """One heatmap per (dataset, judge): human grade (rows) x judge grade (columns), row shares.
    More than :data:`MAX_PANELS` judges: those whose grades differ from the humans' most often."""
    keys = _largest({key: _off_diagonal(counts) for key, counts in tables.items()})
    fig, axes = _panels(len(keys), 3.2, 3.0)
    if not keys:
        axes[0].axis("off")
    for ax, (dataset, judge) in zip(axes, keys, strict=False):
        counts = tables[dataset, judge]
        shares = counts.div(counts.sum(axis=1).where(lambda s: s > 0, 1), axis=0)
        ax.imshow(shares.to_numpy(), cmap="Blues", vmin=0, vmax=1)
        for (i, j), value in pd.DataFrame(counts.to_numpy()).stack().items():
            ax.text(j, i, str(value), ha="center", va="center", fontsize=7)
        ax.set_xticks(range(len(counts.columns)), counts.columns)
        ax.set_yticks(range(len(counts.index)), counts.index)
        ax.set_xlabel("judge grade")
        ax.set_ylabel("human grade")
        ax.set_title(_title(dataset, judge), fontsize=9)
    note = _shown(len(keys), len(tables), "those whose grade differs from the human grade most often")
    if note:
        fig.suptitle(textwrap.fill(note, 90), fontsize=10)
    return _finish(fig, png)


def circularity_heatmap(table: pd.DataFrame, png: str | Path):
    """Mean nDCG@10 of each judge's ranking (rows) under each judge (columns), per dataset; the
    cells carry their values while the matrix is at most :data:`MAX_PANELS` judges a side."""
    rankers = table.groupby("dataset")["ranker"].nunique().max() if len(table) else 0
    side = max(4.8, 0.16 * rankers + 2.5)
    fig, panels = per_dataset(table, side, side * 0.875)
    _constrained(fig)
    for ax, dataset, rows in panels:
        if rows.empty or "ranker" not in rows:
            ax.text(0.5, 0.5, "no judge ranked the base run", ha="center")
            ax.axis("off")
            continue
        block = rows.set_index("ranker")
        matrix = block[[c for c in block.columns if c.startswith("under_")]]
        ax.imshow(matrix.to_numpy(dtype=float), cmap="viridis", vmin=0, vmax=1)
        if max(matrix.shape) <= MAX_PANELS:
            for (i, j), value in pd.DataFrame(matrix.to_numpy(dtype=float)).stack().items():
                ax.text(
                    j,
                    i,
                    f"{value:.2f}",
                    ha="center",
                    va="center",
                    fontsize=7,
                    color="white" if value < 0.6 else "black",
                )
        small = {"fontsize": 6} if max(matrix.shape) > MAX_PANELS else {}
        ax.set_xticks(
            range(matrix.shape[1]), [c.removeprefix("under_") for c in matrix.columns], rotation=45, ha="right", **small
        )
        ax.set_yticks(range(matrix.shape[0]), matrix.index, **small)
        ax.set_xlabel("scored under")
        ax.set_ylabel("ranking by")
        ax.set_title(dataset)
    return _finish(fig, png)


def leniency_chart(label_test: pd.DataFrame, png: str | Path):
    """Mean judge grade per human grade, one line per judge (the diagonal: a judge that agrees).
    More than :data:`MAX_PANELS` judges in a dataset: the farthest from the diagonal, over a grey
    band of the range of all judges."""
    fig, panels = per_dataset(label_test, 5.5, 4.0)
    _constrained(fig)
    for ax, dataset, block in panels:
        columns = [c for c in block.columns if c.startswith("mean_judge_grade_at_human_")]
        grades = [int(c.rsplit("_", 1)[1]) for c in columns]
        curves = pd.DataFrame(block[columns].to_numpy(dtype=float), index=block["judge"].astype(str), columns=grades)
        distance = (curves - np.array(grades, dtype=float)).abs().mean(axis=1, skipna=True)
        shown = _largest(dict(zip(curves.index, distance, strict=True)))
        if len(shown) < len(curves):
            ax.fill_between(
                grades, curves.min(), curves.max(), color="0.85", label=f"range of all {len(curves)} judges"
            )
        for index, judge in enumerate(shown):
            ax.plot(grades, curves.loc[judge].to_numpy(), label=judge, **_style(index))
        if grades:
            ax.plot(grades, grades, color="black", lw=0.8, ls="--", label="agrees with the humans")
        ax.set_xlabel("human grade")
        ax.set_ylabel("mean judge grade")
        note = _shown(len(shown), len(curves), "the farthest from the diagonal")
        ax.set_title(dataset + (f"\n{note}" if note else ""), fontsize=10)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1), borderaxespad=0)
    return _finish(fig, png)


def drift_chart(shifts: pd.DataFrame, drifted: pd.DataFrame, png: str | Path):
    """Per judge: each later label set against the first on the same pairs -- the mean grade
    difference with its 95% bootstrap CI (left axis) and the share of labels that flip with its
    Wilson interval (right axis). More than :data:`MAX_PANELS` judges: the highest flip rates."""
    judges = list(dict.fromkeys(zip(drifted["dataset"], drifted["judge"], strict=True))) if len(drifted) else []
    flip_rate = drifted.groupby(["dataset", "judge"], sort=False)["flip_rate"].max() if len(drifted) else {}
    keys = _largest({key: float(flip_rate[key]) for key in judges})
    fig, axes = _panels(len(keys), 4.6, 3.6, cols=3)
    if not keys:
        axes[0].text(0.5, 0.5, "no judge has two label sets or more", ha="center")
        axes[0].axis("off")
    for ax, (dataset, judge) in zip(axes, keys, strict=False):
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
        flip_err = (
            [flips["flip_rate"] - flips["flip_rate_ci_low"], flips["flip_rate_ci_high"] - flips["flip_rate"]]
            if "flip_rate_ci_low" in flips
            else None
        )
        twin.errorbar(
            [i + 0.1 for i in x],
            flips["flip_rate"],
            yerr=flip_err,
            color="C1",
            marker="s",
            ls="none",
            capsize=3,
            label="flip rate",
        )
        twin.set_ylabel("share of labels that flip", color="C1")
        ax.set_xticks(x, flips["run"])
        ax.set_xlim(-0.5, len(x) - 0.5 + 0.1)
        ax.set_title(_title(dataset, judge), fontsize=9)
        ax.tick_params(axis="x", rotation=30)
    note = _shown(len(keys), len(judges), "the highest flip rates")
    if note:
        fig.suptitle(note, fontsize=10)
    return _finish(fig, png)


def lojo_chart(lojo: pd.DataFrame, png: str | Path):
    """Each adjacent pair of the panel ranking: its margin (upper system's mean score minus the
    lower's) with all judges (black, 95% bootstrap CI) and without each judge in turn (bars with
    their CIs; grey dots when there are too many bars to read). Left of 0: the order flips.

    Margins, not their ratio: a share of a margin near 0 runs to any size."""
    frame = lojo if len(lojo) else pd.DataFrame(columns=["dataset"])
    fig, panels = per_dataset(frame, 6.5, 4.0)
    _constrained(fig)
    systems = [s for u, v in zip(frame.get("upper", []), frame.get("lower", []), strict=True) for s in (u, v)]
    labels = short_labels([str(s) for s in systems])
    tallest = 3.2
    for ax, dataset, block in panels:
        if block.empty:
            ax.text(0.5, 0.5, "fewer than two judges", ha="center")
            ax.axis("off")
            continue
        pairs = list(dict.fromkeys(zip(block["upper"], block["lower"], strict=True)))
        judges = list(dict.fromkeys(block["left_out"]))
        row = {pair: i for i, pair in enumerate(pairs)}
        y = np.array([row[u, v] for u, v in zip(block["upper"], block["lower"], strict=True)], dtype=float)
        bars = len(judges) <= MAX_PANELS and len(pairs) * len(judges) <= 60
        if bars:
            height = 0.8 / len(judges)
            for index, judge in enumerate(judges):
                rows = block[block["left_out"] == judge]
                at = y[(block["left_out"] == judge).to_numpy()] + (index - (len(judges) - 1) / 2) * height
                ax.barh(
                    at,
                    rows["margin_reduced"],
                    height=height,
                    color=f"C{index % 10}",
                    xerr=_errors(rows, "margin_reduced"),
                    error_kw={"lw": 0.8, "capsize": 1.5},
                    label=f"without {judge}",
                )
        else:
            ax.scatter(
                block["margin_reduced"],
                y,
                s=9,
                color="0.55",
                zorder=2,
                label=f"without one judge ({len(judges)} judges in turn)",
            )
        full = block.drop_duplicates(["upper", "lower"])
        ax.errorbar(
            full["margin_full"],
            [row[u, v] for u, v in zip(full["upper"], full["lower"], strict=True)],
            xerr=_errors(full, "margin_full"),
            fmt="D",
            color="black",
            markersize=4,
            capsize=3,
            zorder=3,
            label="all judges",
        )
        ax.axvline(0, color="black", lw=0.8)
        ax.set_yticks(range(len(pairs)), [f"{labels[str(u)]} > {labels[str(v)]}" for u, v in pairs])
        ax.set_ylim(len(pairs) - 0.5, -0.5)
        ax.set_xlabel("margin: upper minus lower mean score (< 0: the order flips)")
        ax.set_title(_title(dataset, "adjacent pairs with and without each judge (95% CI)", width=60), fontsize=10)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1), borderaxespad=0)
        tallest = max(tallest, 0.3 * len(pairs) * (1 + (len(judges) / 4 if bars else 0)) + 1.5)
    fig.set_size_inches(fig.get_size_inches()[0], tallest)
    add_key(fig, labels)
    return _finish(fig, png)


def _errors(rows: pd.DataFrame, column: str):
    """``column``'s interval as error-bar lengths (below, above), None without its CI columns."""
    low, high = f"{column}_ci_low", f"{column}_ci_high"
    if low not in rows or high not in rows:
        return None
    below = (rows[column] - rows[low]).clip(lower=0).fillna(0)
    above = (rows[high] - rows[column]).clip(lower=0).fillna(0)
    return np.vstack([below.to_numpy(dtype=float), above.to_numpy(dtype=float)])


def calibration_chart(curve: pd.DataFrame, png: str | Path):
    """Kendall's tau against the humans over k labelled queries: PPI-corrected, judge alone, humans alone.
    More than :data:`MAX_PANELS` judges in a dataset: the median and range over the judges."""
    fig, panels = per_dataset(curve, 6.0, 4.0)
    _constrained(fig)
    for ax, dataset, block in panels:
        judges = list(dict.fromkeys(block["judge"])) if len(block) else []
        if len(judges) <= MAX_PANELS:
            for index, (judge, rows) in enumerate(block.groupby("judge", sort=False)):
                style = _style(index)
                ax.plot(rows["k"], rows["tau_corrected"], **style, label=f"{judge}: PPI-corrected")
                ax.plot(rows["k"], rows["tau_judge"], **(style | {"ls": "--"}), label=f"{judge}: judge alone")
            title = dataset
        else:
            for color, column, style, what in (
                ("C0", "tau_corrected", "-", "PPI-corrected"),
                ("C1", "tau_judge", "--", "judge alone"),
            ):
                by_k = block.groupby("k")[column]
                ax.fill_between(by_k.min().index, by_k.min(), by_k.max(), color=color, alpha=0.2)
                ax.plot(
                    by_k.median().index,
                    by_k.median(),
                    ls=style,
                    marker="o",
                    color=color,
                    label=f"{what}: median, band: range",
                )
            title = f"{dataset}\nall {len(judges)} judges: median and range"
        if len(block):
            human = block.groupby("k")["tau_human_only"].mean()
            ax.plot(human.index, human.values, ls=":", color="black", label="humans alone (k queries)")
        ax.set_xlabel("human-labelled queries k")
        ax.set_ylabel("Kendall's tau vs the humans (all queries)")
        ax.set_title(title, fontsize=10)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.02, 1), borderaxespad=0)
    return _finish(fig, png)


def _length_effect(block: pd.DataFrame) -> float:
    """The largest change of mean judge grade from the shortest to the longest decile within a human grade."""
    block = block.sort_values("decile")
    changes = []
    for column in (c for c in block.columns if c.startswith("human_")):
        values = block[column].dropna()
        if len(values) >= 2:
            changes.append(abs(float(values.iloc[-1] - values.iloc[0])))
    return max(changes, default=math.nan)


def length_chart(deciles: pd.DataFrame, png: str | Path):
    """Mean judge grade by length decile within each human grade, one panel per (dataset, judge).
    More than :data:`MAX_PANELS` judges: those whose grade changes most from the shortest decile
    to the longest (the length table has every judge)."""
    groups = dict(list(deciles.groupby(["dataset", "judge"], sort=False))) if len(deciles) else {}
    keys = _largest({key: _length_effect(block) for key, block in groups.items()})
    fig, axes = _panels(len(keys), 3.4, 2.8, sharey=True)
    grades = [c for c in deciles.columns if c.startswith("human_")]
    for ax, key in zip(axes, keys, strict=False):
        block = groups[key].sort_values("decile")
        for column in grades:
            ax.plot(block["decile"], block[column], marker=".", label=column.replace("_", " "))
        ax.set_title(_title(*key), fontsize=9)
        ax.set_xlabel("length decile (within the human grade)")
    axes[0].set_ylabel("mean judge grade")
    if not keys:
        axes[0].axis("off")
    handles, names = axes[0].get_legend_handles_labels()
    if handles:
        fig.legend(handles, names, loc="outside lower center", ncol=len(handles), fontsize=7)
    note = _shown(len(keys), len(groups), "the largest change from the shortest decile to the longest")
    if note:
        fig.suptitle(textwrap.fill(note, 90), fontsize=10)
    return _finish(fig, png)


TOPIC_LABELS = 60
"""The most topics a topic-agreement panel names on its axis (more: drawn unnamed, in the same order; the
table names them)."""


def topic_agreement_chart(topics: pd.DataFrame, png: str | Path):
    """Per dataset, a heatmap of each judge's disagreement with the humans topic by topic
    (:func:`voirdire.audits.labels.topic_agreement`: 0 agrees on every pair, 1 is chance): judges
    as rows, the topics as columns, the most disagreeing (mean over the judges shown) first; a
    dot marks a topic where the judge disagrees more than over all its pairs (``disagrees_most``).
    More than :data:`MAX_PANELS` judges in a dataset: those that disagree most over all pairs."""
    counts = topics.groupby("dataset")["query_id"].nunique() if len(topics) else pd.Series(dtype=int)
    widest = int(counts.max()) if len(counts) else 0
    fig, panels = per_dataset(topics, max(6.0, 0.16 * min(widest, TOPIC_LABELS) + 2.5), 3.6)
    _constrained(fig)
    image = marked = None
    for ax, dataset, block in panels:
        if block.empty:
            ax.text(0.5, 0.5, "no judge besides the human labels", ha="center")
            ax.axis("off")
            continue
        whole = block.groupby("judge", sort=False)["disagreement_all"].first()
        shown = _largest(dict(zip(whole.index, whole.to_numpy(dtype=float), strict=True)))
        block = block[block["judge"].isin(shown)]
        matrix = block.pivot(index="judge", columns="query_id", values="disagreement").loc[shown]
        flags = block.pivot(index="judge", columns="query_id", values="disagrees_most").loc[shown]
        order = matrix.mean(axis=0).sort_values(ascending=False, kind="stable").index
        matrix, flags = matrix[order], flags[order].eq(True)
        values = matrix.to_numpy(dtype=float)
        image = ax.imshow(values, cmap="Reds", vmin=0, vmax=2, aspect="auto", interpolation="nearest")
        rows, cols = np.nonzero(flags.to_numpy())
        marked = ax.scatter(cols, rows, s=8, color="black", label="the judge disagrees more here than over all pairs")
        ax.set_yticks(range(len(shown)), [str(j) for j in shown], fontsize=8)
        named = list(order) if len(order) <= TOPIC_LABELS else []
        ax.set_xticks(range(len(named)), [str(q) for q in named], rotation=90, fontsize=6)
        ax.set_xlabel(f"topic ({len(order)}, the most disagreeing first)")
        note = _shown(len(shown), len(whole), "those that disagree most over all pairs")
        ax.set_title(dataset + (f"\n{note}" if note else ""), fontsize=10)
    if marked is not None:
        fig.legend(handles=[marked], loc="outside lower center", fontsize=7)
    if image is not None:
        fig.colorbar(image, ax=[ax for ax, _, _ in panels], label="disagreement (0 agrees, 1 chance)", shrink=0.9)
    return _finish(fig, png)


def judge_ranking_chart(ranking: pd.DataFrame, png: str | Path):
    """The judges' leaderboard (:func:`voirdire.audits.ranking.judge_leaderboard`): a panel per
    dataset and measure, the judges down the side in their rank (the best on top), each measure
    with its 95% interval over queries. Where a judge and the next one down differ (``p_holm`` <
    alpha: ``distinguishable``) a red line cuts the column between them and a star marks the
    pair; judges between two lines are one tier. Every judge is drawn (one summary panel a
    measure, however many judges: names longer than a label get a short one and a key)."""
    frame = ranking if len(ranking) else pd.DataFrame(columns=["dataset", "measure", "judge"])
    panels = list(dict.fromkeys(zip(frame["dataset"], frame["measure"], strict=True))) or [("", "")]
    most = int(frame.groupby(["dataset", "measure"]).size().max()) if len(frame) else 1
    fig, axes = _panels(len(panels), 4.2, max(2.4, 0.24 * most + 1.4), cols=3)
    labels = short_labels([str(j) for j in frame["judge"]], limit=24, prefix="J")
    marked = None
    for ax, (dataset, measure) in zip(axes, panels, strict=True):
        block = frame[(frame["dataset"] == dataset) & (frame["measure"] == measure)]
        if block.empty or "rank" not in block:  # an empty table may come without its columns
            ax.text(0.5, 0.5, "no judge besides the human labels", ha="center")
            ax.axis("off")
            continue
        block = block.sort_values("rank")
        y = np.arange(len(block))
        ax.errorbar(block["value"], y, xerr=_errors(block, "value"), fmt="o", color="black", markersize=4, capsize=2.5)
        split = block["distinguishable"].fillna(False).astype(bool).to_numpy()
        for at in np.flatnonzero(split):
            marked = ax.axhline(at + 0.5, color="C3", lw=1, ls="--")
            where = {"xycoords": ("axes fraction", "data"), "ha": "left", "va": "center", "annotation_clip": False}
            ax.annotate("*", (1.0, at + 0.5), color="C3", fontsize=11, **where)
        ax.set_yticks(y, [labels[str(j)] for j in block["judge"]], fontsize=7 if len(block) > 20 else 8)
        ax.set_ylim(len(block) - 0.5, -0.5)
        ax.set_xlabel(f"{measure} (95% interval over queries)")
        tiers = int(block["tier"].max()) if block["tier"].notna().any() else 0
        ax.set_title(_title(dataset, f"{measure}: {tiers} tier(s) among {len(block)} judges", width=44), fontsize=9)
        ax.grid(axis="x", lw=0.3, color="0.85")
    if marked is not None:
        marked.set_label("the judges either side differ (adjacent pair, Holm-adjusted p < alpha)")
        fig.legend(handles=[marked], loc="outside upper center", fontsize=7)
    add_key(fig, labels, title="judges")
    return _finish(fig, png)


def reranked_chart(table: pd.DataFrame, png: str | Path):
    """Judge-reranked systems (:func:`voirdire.audits.reranked.reranked_table`): a panel per
    dataset and judge (at most :data:`MAX_PANELS`, those that over-rate most), each of your systems
    down the side, its gain from the judge's reranking under the judge and under ``human@pool``
    side by side with their 95% intervals over queries; the gap between the two is the
    over-rating (the noise-matched null's mean in the title)."""
    frame = table if len(table) and "gain_judge" in table else pd.DataFrame(columns=["dataset", "judge", "system"])
    totals = frame[frame["system"] == "all"]
    keys = list(dict.fromkeys(zip(frame["dataset"], frame["judge"], strict=True)))
    effects = {
        key: float(totals[(totals["dataset"] == key[0]) & (totals["judge"] == key[1])]["excess"].max())
        if len(totals)
        else math.nan
        for key in keys
    }
    shown = _largest(effects) or [("", "")]
    most = int(frame[frame["system"] != "all"].groupby(["dataset", "judge"]).size().max()) if len(frame) else 1
    fig, axes = _panels(len(shown), 3.6, max(2.2, 0.42 * most + 1.2), cols=3)
    labels = short_labels([str(s) for s in frame["system"]], limit=20, prefix="S")
    for ax, (dataset, judge) in zip(axes, shown, strict=True):
        block = frame[(frame["dataset"] == dataset) & (frame["judge"] == judge) & (frame["system"] != "all")]
        if block.empty:
            ax.text(0.5, 0.5, "no systems of your own to rerank", ha="center")
            ax.axis("off")
            continue
        y = np.arange(len(block))
        for offset, column, colour, name in (
            (-0.15, "gain_judge", "C3", "under the judge"),
            (0.15, "gain_human", "C0", "under human@pool"),
        ):
            ax.errorbar(
                block[column],
                y + offset,
                xerr=_errors(block, column),
                fmt="o",
                color=colour,
                markersize=4,
                capsize=2.5,
                label=name,
            )
        ax.axvline(0, color="0.5", lw=0.6)
        ax.set_yticks(y, [labels[str(s)] for s in block["system"]], fontsize=8)
        ax.set_ylim(len(block) - 0.5, -0.5)
        ax.set_xlabel("gain of the judge's reranking (95% CI)", fontsize=8)
        total = totals[(totals["dataset"] == dataset) & (totals["judge"] == judge)]
        note = ""
        if len(total):
            row = total.iloc[0]
            note = f"over-rating {row['over_rating']:+.3f}, its noise {row['null_mean']:+.3f}, p {row['p']:.2g}"
        ax.set_title(_title(dataset, judge, note, width=48), fontsize=8)
        ax.grid(axis="x", lw=0.3, color="0.85")
    handles, names = axes[0].get_legend_handles_labels()
    if handles:
        fig.legend(handles, names, loc="outside upper center", ncols=2, fontsize=7)
    note = _shown(len(shown), len(keys), "the largest excess over the noise") if keys else ""
    if note:
        fig.suptitle(note, fontsize=8)
    add_key(fig, labels, title="systems")
    return _finish(fig, png)
