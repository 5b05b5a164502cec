"""Figures stay readable with long names and many judges: nothing drawn lies outside the figure,
a shortened name has its key, a ratio over a near-zero margin is not what is plotted, and a
per-judge figure draws at most MAX_PANELS judges and says how many of how many."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

from voirdire.audits.figures import (
    MAX_PANELS,
    calibration_chart,
    circularity_heatmap,
    confusion_heatmaps,
    drift_chart,
    length_chart,
    leniency_chart,
    lojo_chart,
)
from voirdire.audits.panel import leave_one_judge_out
from voirdire.judges import HUMAN
from voirdire.output import SHORT_NAME, short_labels
from voirdire.paper import figure3

RNG = np.random.default_rng(11)
# recorded TREC run names: 50 characters, alike but for the end
LONG = [f"run.msmarco-v1-passage.bm25-default+monot5-3b.dl{i:02d}" for i in range(10)]
JUDGES_84 = [
    f"{model}.prompt-variant-{v:02d}" for model in ("gpt-4o", "llama-3.1-70b", "qwen2.5-72b") for v in range(28)
]


def renderer(fig):
    """Draw the (saved, closed) figure as it was written, at its resolution, and return the renderer."""
    canvas = FigureCanvasAgg(fig)  # closing the figure took its canvas
    canvas.draw()
    return canvas.get_renderer()


def assert_inside(fig):
    """Everything the figure draws (labels, titles, legends, keys) lies inside it."""
    r = renderer(fig)
    box = fig.get_tightbbox(r)  # inches
    width, height = fig.get_size_inches()
    tolerance = 1 / fig.dpi  # a pixel
    assert box.x0 >= -tolerance and box.y0 >= -tolerance, (box, width, height)
    assert box.x1 <= width + tolerance and box.y1 <= height + tolerance, (box, width, height)
    for legend in fig.legends:
        for text in legend.get_texts():
            extent = text.get_window_extent(r)
            assert fig.bbox.x0 - 1 <= extent.x0 and extent.x1 <= fig.bbox.x1 + 1, text.get_text()
            assert fig.bbox.y0 - 1 <= extent.y0 and extent.y1 <= fig.bbox.y1 + 1, text.get_text()


def key_of(fig) -> dict[str, str]:
    """The figure's key of shortened names: short label -> full name."""
    keys = [legend for legend in fig.legends if legend.get_title().get_text() == "systems"]
    if not keys:
        return {}
    (key,) = keys
    return dict(text.get_text().split(": ", 1) for text in key.get_texts())


def ticks(ax, axis="x") -> list[str]:
    labels = ax.get_xticklabels() if axis == "x" else ax.get_yticklabels()
    return [label.get_text() for label in labels]


def title_of(ax) -> str:
    return ax.get_title().replace("\n", "")


# ----------------------------------------------------------------------------- figure 3


def table1(systems, judges, datasets=("dl19",)):
    rows = []
    for dataset in datasets:
        for system in systems:
            rows.append({"dataset": dataset, "system": system, **{j: float(RNG.random()) for j in judges}})
    return pd.DataFrame(rows)


def test_short_labels_shorten_only_long_names_and_never_reuse_a_name():
    labels = short_labels(["bm25", LONG[0], "S1", LONG[1], "perfect"])
    assert labels == {"bm25": "bm25", LONG[0]: "S2", "S1": "S1", LONG[1]: "S3", "perfect": "perfect"}
    assert short_labels(["bm25", "swap-1-2"]) == {"bm25": "bm25", "swap-1-2": "swap-1-2"}


def test_figure3_with_50_character_names_draws_short_labels_and_a_key_inside_the_figure(tmp_path):
    systems = [*LONG, "bm25", "perfect"]
    judges = [HUMAN, "gpt-4o", "llama-3.1-70b-instruct.prompt-variant-with-a-long-name"]
    table = table1(systems, judges, datasets=("dl19", "dl20"))
    fig = figure3(table, judges, tmp_path / "f3.png", tmp_path / "f3.pdf")
    assert (tmp_path / "f3.png").read_bytes()[:4] == b"\x89PNG"
    assert (tmp_path / "f3.pdf").read_bytes()[:4] == b"%PDF"
    key = key_of(fig)
    assert sorted(key.values()) == sorted(LONG)  # every long name once, the short ones not keyed
    for ax, dataset in zip(fig.axes, ("dl19", "dl20"), strict=True):
        shown = ticks(ax)
        assert all(len(label) <= SHORT_NAME for label in shown)
        order = table[table["dataset"] == dataset].sort_values(HUMAN, ascending=False)["system"].tolist()
        # each tick is its system's own name or the short label the key spells out
        assert [key.get(label, label) for label in shown] == order
    assert_inside(fig)


def test_figure3_keeps_short_names_and_draws_no_key(tmp_path):
    systems = ["bm25", "perfect", "swap-1-2", "monot5-3b"]
    fig = figure3(table1(systems, [HUMAN, "gpt-4o"]), [HUMAN, "gpt-4o"], tmp_path / "f.png", tmp_path / "f.pdf")
    assert key_of(fig) == {}
    assert sorted(ticks(fig.axes[0])) == sorted(systems)
    assert_inside(fig)


# ----------------------------------------------------------------------------- leave one judge out


def per_query(means: dict[tuple[str, str], float], queries: int = 6) -> pd.DataFrame:
    rows = [
        {"judge": judge, "system": system, "query_id": f"q{q}", "ndcg": value}
        for (judge, system), value in means.items()
        for q in range(queries)
    ]
    return pd.DataFrame(rows)


def test_lojo_chart_plots_margins_on_their_own_scale_when_a_full_margin_is_near_zero(tmp_path):
    a, b, c = LONG[:3]
    means = {
        ("j1", a): 0.6,
        ("j1", b): 0.5,
        ("j1", c): 0.2,
        ("j2", a): 0.4,
        ("j2", b): 0.5,
        ("j2", c): 0.3,
        ("j3", a): 0.5 + 3e-6,
        ("j3", b): 0.5,
        ("j3", c): 0.25,
    }
    lojo = leave_one_judge_out(per_query(means), ["j1", "j2", "j3"], resamples=50).assign(dataset="dl19")
    assert lojo["margin_full"].abs().min() < 1e-5
    assert lojo["margin_share"].abs().max() > 1000  # the ratio the chart used to draw
    fig = lojo_chart(lojo, tmp_path / "lojo.png")
    ax = fig.axes[0]
    low, high = ax.get_xlim()
    assert -1 <= low < 0 < high <= 1  # margins of mean scores in [0, 1], 0 in view
    widths = sorted(round(p.get_width(), 9) for p in ax.patches)
    assert widths == sorted(round(v, 9) for v in lojo["margin_reduced"])  # bars are the margins themselves
    assert "margin" in ax.get_xlabel()
    key = key_of(fig)
    assert sorted(key.values()) == sorted([a, b, c])
    assert all(" > " in label and len(label) < 2 * SHORT_NAME for label in ticks(ax, "y"))
    assert_inside(fig)


def test_lojo_chart_with_84_judges_draws_dots_not_bars(tmp_path):
    pairs = list(zip(LONG[:5], LONG[1:6], strict=True))
    rows = [
        {
            "dataset": "dl19",
            "left_out": j,
            "upper": u,
            "lower": v,
            "margin_full": 0.02,
            "margin_reduced": 0.02 + RNG.normal() * 0.01,
            "margin_share": 1e4,
            "margin_full_ci_low": 0.0,
            "margin_full_ci_high": 0.04,
            "margin_reduced_ci_low": -0.01,
            "margin_reduced_ci_high": 0.05,
        }
        for j in JUDGES_84
        for u, v in pairs
    ]
    fig = lojo_chart(pd.DataFrame(rows), tmp_path / "lojo.png")
    ax = fig.axes[0]
    assert not ax.patches
    assert len(ax.collections[0].get_offsets()) == len(rows)
    low, high = ax.get_xlim()
    assert -1 <= low < 0 < high <= 1
    assert_inside(fig)


# ----------------------------------------------------------------------------- per-judge figures, 84 judges


def deciles(judges, steep=()):
    """by_decile's table: dataset, judge, decile, all, human_<g>; ``steep`` judges grade long passages up."""
    rows = []
    for judge in judges:
        for decile in range(1, 11):
            slope = 0.2 if judge in steep else 0.0
            rows.append(
                {
                    "dataset": "dl19",
                    "judge": judge,
                    "decile": decile,
                    "all": 1.5 + slope * decile,
                    **{f"human_{g}": g + slope * decile + RNG.normal() * 0.01 for g in range(4)},
                }
            )
    return pd.DataFrame(rows)


def test_length_chart_with_84_judges_shows_the_cap_with_the_largest_effects(tmp_path):
    steep = JUDGES_84[40:43]
    fig = length_chart(deciles(JUDGES_84, steep), tmp_path / "length.png")
    assert (tmp_path / "length.png").read_bytes()[:4] == b"\x89PNG"
    assert len(fig.axes) == MAX_PANELS
    assert f"{MAX_PANELS} of {len(JUDGES_84)} judges" in fig.get_suptitle()
    titles = [title_of(ax) for ax in fig.axes]
    assert all(any(judge in title for title in titles[:3]) for judge in steep)  # largest first
    assert_inside(fig)


def test_length_chart_with_few_judges_shows_every_judge_and_no_note(tmp_path):
    fig = length_chart(deciles(["a", "b", "c"]), tmp_path / "length.png")
    assert [title_of(ax) for ax in fig.axes] == ["dl19: a", "dl19: b", "dl19: c"]
    assert fig.get_suptitle() == ""


def test_confusion_heatmaps_with_84_judges_show_those_that_disagree_most(tmp_path):
    agree = pd.DataFrame(np.diag([20, 20, 20, 20]), index=range(4), columns=range(4))
    tables = {("dl19", j): agree + np.eye(4, dtype=int)[::-1] * (j in JUDGES_84[:2]) * 30 for j in JUDGES_84}
    fig = confusion_heatmaps(tables, tmp_path / "confusion.png")
    assert len(fig.axes) == MAX_PANELS
    assert f"{MAX_PANELS} of 84 judges" in fig.get_suptitle()
    assert JUDGES_84[0] in title_of(fig.axes[0]) and JUDGES_84[1] in title_of(fig.axes[1])


def test_leniency_and_calibration_with_84_judges_draw_at_most_the_cap(tmp_path):
    grades = range(4)
    label_test = pd.DataFrame(
        [
            {
                "dataset": "dl19",
                "judge": j,
                **{
                    f"mean_judge_grade_at_human_{g}": g + (2 if j == JUDGES_84[7] else RNG.normal() * 0.1)
                    for g in grades
                },
            }
            for j in JUDGES_84
        ]
    )
    fig = leniency_chart(label_test, tmp_path / "leniency.png")
    ax = fig.axes[0]
    judged = [line.get_label() for line in ax.lines if line.get_label() in JUDGES_84]
    assert len(judged) == MAX_PANELS and judged[0] == JUDGES_84[7]  # the farthest from the diagonal first
    assert f"{MAX_PANELS} of 84 judges" in title_of(ax)
    assert_inside(fig)

    curve = pd.DataFrame(
        [
            {
                "dataset": "dl19",
                "judge": j,
                "k": k,
                "tau_corrected": 0.5 + k / 50,
                "tau_judge": 0.6 + RNG.normal() * 0.05,
                "tau_human_only": 0.3 + k / 30,
            }
            for j in JUDGES_84
            for k in (3, 5, 10, 20)
        ]
    )
    fig = calibration_chart(curve, tmp_path / "calibration.png")
    ax = fig.axes[0]
    assert len(ax.lines) == 3  # corrected and judge-alone medians, humans alone
    assert "84 judges" in title_of(ax)
    assert_inside(fig)


def test_drift_chart_with_84_judges_shows_the_highest_flip_rates(tmp_path):
    rate = {j: 0.01 for j in JUDGES_84} | {JUDGES_84[50]: 0.4}
    drifted = pd.DataFrame(
        [
            {
                "dataset": "dl19",
                "judge": j,
                "run": run,
                "flip_rate": rate[j],
                "flip_rate_ci_low": 0.0,
                "flip_rate_ci_high": 0.5,
            }
            for j in JUDGES_84
            for run in ("rerun-1", "rerun-2")
        ]
    )
    shifts = drifted[["dataset", "judge", "run"]].assign(
        mean_difference=0.1, difference_ci_low=0.0, difference_ci_high=0.2
    )
    fig = drift_chart(shifts, drifted, tmp_path / "drift.png")
    panels = [ax for ax in fig.axes if ax.get_title()]  # a panel and its twin axis: one titled
    assert len(panels) == MAX_PANELS
    assert JUDGES_84[50] in title_of(panels[0])
    assert f"{MAX_PANELS} of 84 judges" in fig.get_suptitle()


def _registered_figures():
    from voirdire.audits.registry import load

    return [(audit, figure) for audit in load().values() for figure in audit.figures]


@pytest.mark.parametrize(("audit", "figure"), _registered_figures(), ids=[f.name for _, f in _registered_figures()])
def test_every_declared_figure_is_drawn_from_the_empty_tables_its_audit_declares(tmp_path, audit, figure):
    """No dataset has a row: the job's tables are the columns each declaration gives (what
    voirdire.audits.run hands the writer), and the figure is still drawn, PNG and PDF."""
    columns = {t.name: list(t.columns) for t in audit.tables}
    png = tmp_path / f"{figure.name}.png"
    figure.draw(*(pd.DataFrame(columns=columns[name]) for name in figure.tables), str(png))
    assert png.read_bytes()[:4] == b"\x89PNG"
    assert re.match(rb"%PDF", png.with_suffix(".pdf").read_bytes())


@pytest.mark.parametrize("figure", ["leniency", "calibration", "length", "lojo", "drift", "confusion", "circularity"])
def test_figures_of_empty_tables_are_written(tmp_path, figure):
    """Empty tables still give a figure."""
    png = tmp_path / f"{figure}.png"
    calls = {
        "leniency": lambda: leniency_chart(pd.DataFrame(columns=["dataset", "judge"]), png),
        "calibration": lambda: calibration_chart(pd.DataFrame(columns=["dataset", "judge", "k"]), png),
        "length": lambda: length_chart(pd.DataFrame(columns=["dataset", "judge", "decile"]), png),
        "lojo": lambda: lojo_chart(pd.DataFrame(), png),
        "drift": lambda: drift_chart(
            pd.DataFrame(columns=["dataset", "judge"]), pd.DataFrame(columns=["dataset", "judge"]), png
        ),
        "confusion": lambda: confusion_heatmaps({}, png),
        "circularity": lambda: circularity_heatmap(pd.DataFrame(columns=["dataset", "judge"]), png),
    }
    calls[figure]()
    assert png.read_bytes()[:4] == b"\x89PNG"
    assert re.match(rb"%PDF", png.with_suffix(".pdf").read_bytes())
