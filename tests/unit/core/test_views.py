"""The Markdown views a person reads: at most ``MAX_COLUMNS`` columns, a value and its interval
in one cell, counts as integers, a long n/a reason shortened; the CSV keeps every column.

Each wide table is built from a small synthetic input by the function the workflow calls, and
written with the view its script passes to :func:`voirdire.output.write_table`. The CSV headers
are those of a demo run, copied here: a view must not change what the CSV (and the verdict,
and the tests that read it) see.
"""

import math
import re
from collections.abc import Sequence

import numpy as np
import pandas as pd
import pytest

from voirdire.assistants.experiments import (
    LABEL_SHIFT_VIEW,
    SCORE_SHIFT_VIEW,
    SUBSTITUTION_VIEW,
    label_shift,
    score_shift,
    substitution,
)
from voirdire.assistants.preference import VIEW as REWRITE_PREFERENCE_VIEW
from voirdire.assistants.preference import rewrite_self_preference
from voirdire.output import MAX_CELL, MAX_COLUMNS, IntervalCell, write_table
from voirdire.probes.sensitivity import AGREEMENT_VIEW, BY_CONDITION_VIEW, NO_RERUN
from voirdire.probes.swap import swap_counts
from voirdire.probes.tables import common_pairs, sensitivity_tables
from voirdire.rankers.rerank import POSITION_BIAS_COUNTS, POSITION_BIAS_VIEW, total_bias

# the CSV headers of a demo run (results/tables/rewritten-*/..., results/audits/original/...)
LABEL_SHIFT_CSV = [
    "dataset",
    "assistant",
    "judge",
    "stratum",
    "pairs",
    "unlabelled",
    "original_0",
    "original_1",
    "original_2",
    "original_3",
    "rewritten_0",
    "rewritten_1",
    "rewritten_2",
    "rewritten_3",
    "n",
    "queries",
    "up",
    "down",
    "same",
    "up_share",
    "down_share",
    "same_share",
    "mean_before",
    "mean_after",
    "mean_shift",
    "mean_shift_ci_low",
    "mean_shift_ci_high",
    "shift_p",
    "homogeneity",
    "homogeneity_df",
    "homogeneity_p",
    "sign_p_pairs",
    "degenerate",
    "significant",
    "direction",
    "tests",
    "expected_false_flags",
]
SCORE_SHIFT_CSV = [
    "dataset",
    "assistant",
    "ranker",
    "stratum",
    "pairs",
    "unscored",
    "n",
    "queries",
    "mean_diff",
    "median_diff",
    "within_tolerance",
    "higher",
    "lower",
    "shift_p",
    "sign_p_pairs",
    "significant",
    "direction",
    "tests",
    "expected_false_flags",
]
SUBSTITUTION_CSV = [
    "dataset",
    "assistant",
    "judge",
    "system",
    "queries",
    "queries_dropped",
    "ndcg_original",
    "ndcg_rewritten",
    "delta",
    "t",
    "p",
    "significant",
    "tests",
    "expected_false_flags",
    "substituted_passages",
    "in_pool_passages",
]
POSITION_BIAS_CSV = [
    "dataset",
    "ranker",
    "variant",
    "model",
    "pairs",
    "prompts",
    "answered",
    "unparsed",
    "answered_both",
    "surviving",
    "order_dependent",
    "first_position_wins",
    "position_consistency",
    "first_position_win_rate",
    "tie_rate",
    "order_dependent_rate",
]
REWRITE_PREFERENCE_CSV = [
    "dataset",
    "assistant",
    "assistant_family",
    "judge",
    "family",
    "same_family",
    "panel",
    "pairs",
    "queries",
    "raw_shift",
    "panel_shift",
    "excess",
    "excess_ci_low",
    "excess_ci_high",
    "degenerate",
    "self_preferring",
    "reason",
]
AGREEMENT_CSV = [
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
PERSONA_AGREEMENT_CSV = [*AGREEMENT_CSV, "pairs_drawn", "left_out_unjudged", "left_out_unparsed", "pairs_common"]
SENSITIVITY_CSV = [
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
    "excess_abs_delta_r",
    "excess_ci_low",
    "excess_ci_high",
    "excess_p",
    "rerun",
    "reason",
]

INTEGER = re.compile(r"^-?\d+$")


def number(floatfmt: str) -> str:
    digits = int(floatfmt.strip(".f"))
    return rf"-?\d+\.\d{{{digits}}}"


def with_interval(floatfmt: str) -> re.Pattern:
    """``value [low, high]``: the value and its interval in one cell."""
    x = number(floatfmt)
    return re.compile(rf"^{x} \[{x}, {x}\]$")


def bare_interval(floatfmt: str) -> re.Pattern:
    x = number(floatfmt)
    return re.compile(rf"^\[{x}, {x}\]$")


def rendered(
    frame: pd.DataFrame, view, tmp_path, floatfmt: str, declared: tuple[str, ...] = ()
) -> tuple[list[str], list[dict[str, str]], str]:
    """Write ``frame`` with ``view`` (and the writer's ``declared`` counts); (the Markdown header,
    its rows as dicts, the Markdown)."""
    write_table(frame, tmp_path / "t", title="t", floatfmt=floatfmt, view=view, counts=declared)
    markdown = (tmp_path / "t.md").read_text(encoding="utf-8")
    lines = [line for line in markdown.splitlines() if line.startswith("|")]
    rows = [[cell.strip() for cell in line.strip()[1:-1].split("|")] for line in lines]
    header = rows[0]
    body = [dict(zip(header, r, strict=True)) for r in rows if r != header and not set("".join(r)) <= set(":-")]
    assert pd.read_csv(tmp_path / "t.csv").columns.tolist() == frame.columns.tolist()  # the CSV keeps every column
    assert f"{len(frame.columns)} columns in all" in markdown
    return header, body, markdown


def check_view(
    frame: pd.DataFrame,
    view,
    tmp_path,
    *,
    csv: list[str],
    floatfmt: str,
    intervals: tuple[str, ...] = (),
    bare: tuple[str, ...] = (),
    counts: tuple[str, ...] = (),
    declared: Sequence[str] = (),
) -> list[dict[str, str]]:
    """The view of ``frame`` has the view's columns (at most MAX_COLUMNS), ``intervals`` print as
    ``value [low, high]`` (or n/a, or the value alone without bounds) and at least one has its
    bounds, ``bare`` as ``[low, high]``, ``counts`` as integers (``declared``: the counts its writer
    names to write_table); the CSV has the demo's header."""
    assert frame.columns.tolist() == csv
    header, body, _ = rendered(frame, view, tmp_path, floatfmt, tuple(declared))
    assert len(header) <= MAX_COLUMNS
    assert header == [c.name if isinstance(c, IntervalCell) else c for c in view]
    assert body
    full, value = with_interval(floatfmt), re.compile(rf"^{number(floatfmt)}$")
    for column in intervals:
        cells = [row[column] for row in body]
        assert all(full.match(c) or value.match(c) or c == "n/a" for c in cells), (column, cells)
        assert any(full.match(c) for c in cells), (column, cells)
    for column in bare:
        cells = [row[column] for row in body]
        assert all(bare_interval(floatfmt).match(c) or c == "n/a" for c in cells), (column, cells)
        assert any(bare_interval(floatfmt).match(c) for c in cells), (column, cells)
    for column in counts:
        cells = [row[column] for row in body]
        assert all(INTEGER.match(c) or c == "n/a" for c in cells), (column, cells)
    return body


# ----------------------------------------------------------------------------- assistants


def sample_labels() -> pd.DataFrame:
    """24 sample pairs (6 queries x the human grades 0-3) labelled by two judges: ``inflating``
    grades every rewrite one up; ``unparsed`` fails on every rewrite of a grade-3 passage."""
    rows = []
    for q in range(6):
        for grade in range(4):
            original = float(min(max(grade + (q % 3) - 1, 0), 3))
            for judge in ("inflating", "unparsed"):
                if judge == "inflating":
                    rewritten = min(original + 1, 3.0) if q % 2 == 0 or grade < 2 else original
                else:
                    rewritten = math.nan if grade == 3 else max(original - (q % 2), 0.0)
                rows.append(("dl19", "llama", judge, f"q{q}", f"d{q}_{grade}", grade, original, rewritten))
    columns = ["dataset", "assistant", "judge", "query_id", "doc_id", "human", "original", "rewritten"]
    return pd.DataFrame(rows, columns=columns)


def test_label_shift_view(tmp_path):
    table = label_shift(sample_labels())
    body = check_view(
        table,
        LABEL_SHIFT_VIEW,
        tmp_path,
        csv=LABEL_SHIFT_CSV,
        floatfmt=".4f",
        intervals=("mean_shift",),
        counts=("pairs", "unlabelled", "queries", "up", "down", "tests"),
    )
    lost = next(r for r in body if r["judge"] == "unparsed" and r["stratum"] == "human=3")
    assert (lost["unlabelled"], lost["queries"], lost["mean_shift"], lost["shift_p"]) == ("6", "0", "n/a", "n/a")


def test_score_shift_view(tmp_path):
    rng = np.random.default_rng(2)
    rows = []
    for ranker in ("rg", "monot5"):
        for i in range(32):
            original = float(rng.normal())
            rewritten = math.nan if i == 5 else original + float(rng.normal(0.2, 0.3))
            rows.append(("dl19", "llama", ranker, f"q{i % 8}", f"d{i}", i % 4, original, rewritten))
    scores = pd.DataFrame(
        rows, columns=["dataset", "assistant", "ranker", "query_id", "doc_id", "human", "original", "rewritten"]
    )
    body = check_view(
        score_shift(scores),
        SCORE_SHIFT_VIEW,
        tmp_path,
        csv=SCORE_SHIFT_CSV,
        floatfmt=".4f",
        counts=("pairs", "unscored", "queries", "higher", "lower", "tests"),
    )
    assert {r["unscored"] for r in body if r["stratum"] == "all"} == {"1"}


def test_substitution_view(tmp_path):
    rng = np.random.default_rng(4)
    rows = [
        ("dl19", judge, system, f"q{i}", float(rng.uniform(0.2, 0.8)))
        for judge in ("human", "gem")
        for system in ("bm25", "monot5")
        for i in range(10)
    ]
    original = pd.DataFrame(rows, columns=["dataset", "judge", "system", "query_id", "ndcg"])
    rewritten = original.assign(assistant="llama", ndcg=original["ndcg"] + rng.normal(0.02, 0.01, len(original)))
    rewritten = rewritten.drop(index=3)  # a query scored on one side only
    table = substitution(original, rewritten).assign(substituted_passages=8, in_pool_passages=7)
    body = check_view(
        table,
        SUBSTITUTION_VIEW,
        tmp_path,
        csv=SUBSTITUTION_CSV,
        floatfmt=".4f",
        counts=("queries", "queries_dropped", "tests"),
    )
    assert [r["queries_dropped"] for r in body] == ["1", "0", "0", "0"]


def test_rewrite_self_preference_view(tmp_path):
    families = {"gem": "gemini", "gpt": "gpt", "emb": "minilm", "solo": None}
    labels = sample_labels()
    labels = pd.concat(
        [labels[labels["judge"] == "inflating"].assign(judge=j) for j in ("gem", "gpt", "emb", "solo")],
        ignore_index=True,
    )
    labels.loc[labels["judge"] == "gpt", "rewritten"] = labels.loc[labels["judge"] == "gpt", "original"]
    table = rewrite_self_preference(labels, families, "gemini", panel=["gem", "gpt", "emb", "solo"], seed=1)
    body = check_view(
        table,
        REWRITE_PREFERENCE_VIEW,
        tmp_path,
        csv=REWRITE_PREFERENCE_CSV,
        floatfmt=".4f",
        intervals=("excess",),
        counts=("pairs", "queries"),
    )
    reasons = {r["judge"]: r["reason"] for r in body}
    assert reasons["solo"] == "the judge declares no family" and reasons["gem"] == ""  # no reason: an empty cell


# ----------------------------------------------------------------------------- position bias


def test_position_bias_view(tmp_path):
    answers = [("A", "B"), ("A", "A"), ("B", "A"), (None, "A"), ("A", "A")]  # two survive, three depend on the order
    records = [{"query_id": f"q{i}", "bias": swap_counts(answers) | {"prompts": 10}} for i in range(3)]
    rows = [
        {"dataset": "dl19", "ranker": "prp", "variant": "sliding", "model": "local/smollm2", **total_bias(records)},
        {"dataset": "dl19", "ranker": "prp-none", "variant": "allpairs", "model": "local/smollm2"},  # no bias figures
    ]
    frame = pd.DataFrame(rows).reindex(columns=POSITION_BIAS_CSV)
    body = check_view(
        frame,
        POSITION_BIAS_VIEW,
        tmp_path,
        csv=POSITION_BIAS_CSV,
        floatfmt=".3f",
        counts=("pairs", "answered_both", "unparsed", "surviving", "order_dependent"),
        declared=POSITION_BIAS_COUNTS,  # what workflow/scripts/position_bias.py declares
    )
    assert (body[0]["pairs"], body[0]["surviving"], body[0]["order_dependent"]) == ("15", "6", "9")
    assert body[0]["position_consistency"] == "0.500" and body[1]["position_consistency"] == "n/a"


# ----------------------------------------------------------------------------- persona and prompt sensitivity

SYSTEMS = [f"s{i}" for i in range(6)]
QUERIES = [f"q{i}" for i in range(8)]


def sensitivity_inputs():
    """Two conditions besides the baseline of one group: ``swap`` exchanges two systems' scores
    and grades one lower on odd queries; ``same`` is the baseline. No rerun: the noise floor is n/a."""
    rng = np.random.default_rng(1)
    base = {s: 0.85 - 0.1 * i + rng.normal(0, 0.03, len(QUERIES)) for i, s in enumerate(SYSTEMS)}
    swapped = dict(base) | {"s1": base["s2"], "s2": base["s1"]}
    rows = [
        ("dl20", "judgeA", c, s, q, float(v))
        for c, scores in (("umbrela", base), ("same", base), ("swap", swapped))
        for s, values in scores.items()
        for q, v in zip(QUERIES, values, strict=True)
    ]
    per_query = pd.DataFrame(rows, columns=["dataset", "group", "condition", "system", "query_id", "ndcg"])
    human_scores = per_query[per_query["condition"] == "umbrela"].drop(columns=["group", "condition"])
    human = pd.DataFrame(
        [("dl20", q, f"{q}_d{d}", float(d % 4)) for q in QUERIES for d in range(8)],
        columns=["dataset", "query_id", "doc_id", "relevance"],
    )
    labels = []
    for condition in ("umbrela", "same", "swap"):
        for i, q in enumerate(QUERIES):
            for d in range(8):
                grade = float(min(3, (d + i) % 4))
                grade = max(grade - 1, 0.0) if condition == "swap" and i % 2 else grade
                labels.append(("dl20", "judgeA", condition, q, f"{q}_d{d}", grade))
    labels = pd.DataFrame(labels, columns=["dataset", "group", "condition", "query_id", "doc_id", "relevance"])
    return labels, human, per_query, human_scores


@pytest.fixture(scope="module")
def sensitivity_views():
    labels, human, per_query, human_scores = sensitivity_inputs()
    labels, left_out = common_pairs(labels, human)
    return {
        persona: sensitivity_tables(
            labels,
            human,
            {"judgeA": "umbrela"},
            per_query,
            human_scores,
            low=0,
            high=3,
            seed=42,
            rbo_p=0.9,
            left_out=left_out if persona else None,
        )
        for persona in (False, True)
    }


@pytest.mark.parametrize("persona", [False, True], ids=["prompt_sensitivity", "persona"])
def test_sensitivity_agreement_view(tmp_path, sensitivity_views, persona):
    table = sensitivity_views[persona]["agreement"]
    body = check_view(
        table,
        AGREEMENT_VIEW,
        tmp_path,
        csv=PERSONA_AGREEMENT_CSV if persona else AGREEMENT_CSV,
        floatfmt=".3f",
        intervals=("shift_vs_baseline", "tau_human"),
        counts=("pairs", "unlabelled"),
    )
    assert (table["noise_floor"] == NO_RERUN).all()  # the CSV keeps the full reason...
    assert {r["noise_floor"] for r in body} == {
        "n/a: no rerun of the baseline prompt in this group"
    }  # ...the view its gist
    assert [r["baseline"] for r in body] == ["True", "False", "False"]


@pytest.mark.parametrize("persona", [False, True], ids=["prompt_sensitivity", "persona"])
def test_sensitivity_by_condition_view(tmp_path, sensitivity_views, persona):
    table = sensitivity_views[persona]["sensitivity"]
    body = check_view(
        table,
        BY_CONDITION_VIEW,
        tmp_path,
        csv=SENSITIVITY_CSV,
        floatfmt=".3f",
        intervals=("mean_abs_delta_r",),
        bare=("ci_systems",),
        counts=("systems", "queries", "max_abs_delta_r", "affected_systems"),
    )
    swap = next(r for r in body if r["condition"] == "swap")
    row = table[table["condition"] == "swap"].iloc[0]
    assert swap["mean_abs_delta_r"] == (
        f"{row['mean_abs_delta_r']:.3f} [{row['ci_low_queries']:.3f}, {row['ci_high_queries']:.3f}]"
    )
    assert swap["ci_systems"] == f"[{row['ci_low_systems']:.3f}, {row['ci_high_systems']:.3f}]"
    assert swap["affected_systems"] == "2" and swap["noise_floor_abs_delta_r"] == "n/a"


# ----------------------------------------------------------------------------- the view machinery


def test_interval_cells_and_short_reasons(tmp_path):
    long = "n/a: the first clause (an explanation (nested) that runs on and on, well past the cell's limit)"
    assert len(long) > MAX_CELL
    frame = pd.DataFrame(
        {
            "dataset": ["d", "d", "d"],
            "name": ["a", "b", "c"],
            "x": [0.5, 0.25, math.nan],
            "lo_x": [0.25, math.nan, 0.1],
            "hi_x": [0.75, math.nan, 0.2],
            "y": [0.4, 0.5, 0.6],
            "y_ci_low": [0.3, 0.4, math.nan],
            "y_ci_high": [0.5, 0.6, math.nan],
            "n_pairs": pd.array([3, None, 1], dtype="Int64"),  # a count beside a missing value
            "note": [long, "short (kept whole)", None],
        }
    )
    view = [
        "name",
        IntervalCell("x", "x", "lo_x", "hi_x"),
        IntervalCell("x_bounds", None, "lo_x", "hi_x"),
        "y",
        "n_pairs",
        "note",
    ]
    header, body, markdown = rendered(frame, view, tmp_path, ".2f")
    assert header == ["name", "x", "x_bounds", "y", "n_pairs", "note"]
    assert [r["x"] for r in body] == ["0.50 [0.25, 0.75]", "0.25", "n/a"]  # no value: n/a, not its bounds
    assert [r["x_bounds"] for r in body] == ["[0.25, 0.75]", "n/a", "[0.10, 0.20]"]
    assert [r["y"] for r in body] == ["0.40 [0.30, 0.50]", "0.50 [0.40, 0.60]", "0.60"]
    assert [r["n_pairs"] for r in body] == ["3", "n/a", "1"]
    assert [r["note"] for r in body] == ["n/a: the first clause", "short (kept whole)", ""]  # no note: empty
    assert long in (tmp_path / "t.csv").read_text(encoding="utf-8")  # the CSV keeps the full text
    # without a view every column is shown and no text is cut
    write_table(frame, tmp_path / "all", title="all", floatfmt=".2f")
    assert long in (tmp_path / "all.md").read_text(encoding="utf-8")


def test_a_long_table_shows_its_disagreements_first_and_the_csv_keeps_every_row(tmp_path):
    """The paired tests of every pair of many systems: the Markdown shows max_rows rows per
    dataset, the pairs where the judge's test and the humans' part ways first (in order), says
    so, and the CSV has every row."""
    from voirdire.stats import compare_significance, disagreeing, paired_tests

    rng = np.random.default_rng(5)
    human = pd.DataFrame(rng.normal(size=(30, 12)) + np.linspace(0, 1, 12), columns=[f"s{i:02d}" for i in range(12)])
    judge = human + rng.normal(scale=0.6, size=human.shape)
    rows = compare_significance(paired_tests(human), paired_tests(judge)).assign(dataset="dl19")
    rows = pd.concat([rows, rows.assign(dataset="dl20")], ignore_index=True)
    picked = disagreeing(rows)
    per_dataset = len(rows) // 2
    assert 0 < picked.sum() / 2 < 20 < per_dataset  # some disagreements, fewer than shown; more rows than shown
    view = [c for c in rows.columns if c != "dataset"][:MAX_COLUMNS]
    write_table(
        rows, tmp_path / "significance", title="t", first=("the disagreements", disagreeing), max_rows=20, view=view
    )
    csv = pd.read_csv(tmp_path / "significance.csv")
    assert len(csv) == len(rows)
    text = (tmp_path / "significance.md").read_text()
    for dataset in ("dl19", "dl20"):
        section = text.split(f"## {dataset}")[1].split("## ")[0]
        body = [line for line in section.splitlines() if line.startswith("|")][2:]  # header and rule
        block = rows[rows["dataset"] == dataset]
        wanted = pd.concat([block[disagreeing(block)], block[~disagreeing(block)]]).head(20)
        cells = [[cell.strip() for cell in line.split("|")[1:3]] for line in body]
        assert cells == [[a, b] for a, b in zip(wanted["system_a"], wanted["system_b"], strict=True)]
        disagreements = int(disagreeing(block).sum())
        assert (
            f"20 of {per_dataset:,} rows shown: the disagreements first ({disagreements} of {disagreements} shown)"
            in section
        )


def test_table1_with_many_judges_is_paged_by_judge_each_page_beside_the_humans(tmp_path):
    """20 judges: every Markdown table has at most MAX_COLUMNS columns, every page repeats the
    system, the measure, the humans and human@pool, every judge is shown once with its interval,
    and the CSV keeps every judge and bound."""
    from voirdire.paper import TABLE1_KEEP, table1

    rng = np.random.default_rng(2)
    judges = ["human", "human@pool", *(f"judge{j}" for j in range(20))]
    rows = [
        ("dl19", judge, measure, f"s{s}", f"q{q}", rng.random())
        for judge in judges
        for measure in ("m1", "m2")
        for s in range(3)
        for q in range(8)
    ]
    scores = pd.DataFrame(rows, columns=["dataset", "judge", "measure", "system", "query_id", "value"])
    table = table1(scores, ["s0", "s1", "s2"], judges, resamples=200)
    write_table(table, tmp_path / "table1", title="t", keep=TABLE1_KEEP)
    csv = pd.read_csv(tmp_path / "table1.csv")
    assert len(csv.columns) == 3 + 3 * len(judges)
    markdown = (tmp_path / "table1.md").read_text(encoding="utf-8")
    pages = markdown.split("### ")[1:]
    assert len(pages) == math.ceil(20 / (MAX_COLUMNS - len(TABLE1_KEEP)))
    shown = []
    for number_, page in enumerate(pages, 1):
        lines = [line for line in page.splitlines() if line.startswith("|")]
        header = [cell.strip() for cell in lines[0].strip()[1:-1].split("|")]
        assert len(header) <= MAX_COLUMNS
        assert header[: len(TABLE1_KEEP)] == list(TABLE1_KEEP)
        others = header[len(TABLE1_KEEP) :]
        assert page.startswith(f"{others[0]} to {others[-1]} (columns, page {number_} of {len(pages)})")
        shown += others
        body = [[cell.strip() for cell in line.strip()[1:-1].split("|")] for line in lines[2:]]
        assert len(body) == 6  # 3 systems x 2 measures
        assert all(with_interval(".4f").match(cell) for row in body for cell in row[2:])
    assert shown == judges[2:]
    assert f"{len(table.columns)} columns in all" in markdown
    # a last page of one judge names it alone
    write_table(table[table.columns[: 3 + 2 + 9]], tmp_path / "one", title="t", keep=TABLE1_KEEP)
    assert "### judge8 (columns, page 2 of 2)" in (tmp_path / "one.md").read_text(encoding="utf-8")
    # a table that fits is not paged
    write_table(table[table.columns[:12]], tmp_path / "narrow", title="t", keep=TABLE1_KEEP)
    assert "###" not in (tmp_path / "narrow.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("seed", range(3))
def test_the_csv_is_pandas_to_csv_to_the_byte(seed):
    """write_csv's own writer gives pandas' text on frames of floats (NaN, infinities, -0.0,
    tiny and huge), integers, booleans and text (quotes, commas, line breaks, missing values,
    pandas' string dtype), and hands pandas every frame it does not write itself."""
    import io

    from voirdire.output import CSV_FLOAT, _csv_text, write_csv

    rng = np.random.default_rng(seed)
    n = 200
    floats = rng.normal(size=n) * 10.0 ** rng.integers(-300, 300, n)
    floats[rng.choice(n, 20)] = rng.choice([np.nan, np.inf, -np.inf, -0.0, 0.1, 1 / 3], 20)
    words = np.array(["plain", "a,b", 'say "hi"', "two\nlines", "", " spaced ", "é ü", "p=0.05"], dtype=object)
    text = words[rng.integers(0, len(words), n)]
    text[rng.choice(n, 10)] = None
    frame = pd.DataFrame(
        {
            "x": floats,
            "text": text,
            "n": rng.integers(-5, 10**12, n),
            "flag": rng.random(n) < 0.5,
            "s": pd.array(text, dtype="string"),
            'odd, "name"': rng.random(n),
        }
    )
    mine = _csv_text(frame)
    assert mine is not None  # written here, not by pandas
    assert mine == frame.to_csv(index=False, float_format=CSV_FLOAT)
    # not written here, so by pandas: a lone column, a column of mixed objects, a carriage
    # return, a nullable integer column
    for other in (
        frame[["x"]],
        frame.assign(text=[1.5, "a"] * (n // 2)),
        frame.assign(text="cr\rx"),
        frame.assign(n=pd.array([1, None] * (n // 2), dtype="Int64")),
    ):
        assert _csv_text(other) is None
        out = io.StringIO()
        write_csv(other, out)
        assert out.getvalue() == other.to_csv(index=False, float_format=CSV_FLOAT)
