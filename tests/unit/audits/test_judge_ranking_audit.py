"""The judges' leaderboard as the audits job writes it: a row per dataset, measure and judge from
:func:`voirdire.audits.run.audit_tables`, its figure with 84 judges drawn inside the page, and
``voirdire verdict --rank`` printing it from a results folder."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

from voirdire.audits.declared import report_section, tables
from voirdire.audits.figures import judge_ranking_chart
from voirdire.audits.ranking import RANKING_COLUMNS, judge_leaderboard
from voirdire.audits.run import DatasetInputs, audit_tables
from voirdire.cli import main
from voirdire.evaluation import evaluate_systems
from voirdire.judges import HUMAN, Scale, needed_pairs
from voirdire.layout import Layout
from voirdire.output import write_table
from voirdire.verdict import ranking_text, read_ranking

SCALE = Scale(0, 3, 2)


def dataset(seed=3, queries=30, systems=4):
    """Humans, a copy of them, a noisy judge and a null-like one that calls everything relevant,
    over ``systems`` user systems and Perfect."""
    rng = np.random.default_rng(seed)
    ids = [f"q{i}" for i in range(queries)]
    base = pd.DataFrame(
        [(q, f"{q}-d{j}", j + 1, 100.0 - j) for q in ids for j in range(12)],
        columns=["query_id", "doc_id", "rank", "score"],
    )
    human = base.assign(relevance=rng.choice(4, len(base), p=[0.5, 0.25, 0.15, 0.1]))[
        ["query_id", "doc_id", "relevance"]
    ]
    noisy = human.assign(
        relevance=np.where(rng.random(len(human)) < 0.4, rng.integers(0, 4, len(human)), human["relevance"])
    )
    labels = {HUMAN: human, "copy": human.copy(), "noisy": noisy, "lenient": human.assign(relevance=3)}
    runs = {
        f"s{i}": [base.assign(score=rng.random(len(base)) + np.arange(len(base)) % 12 * -0.1 * i)]
        for i in range(systems)
    }
    runs["Perfect"] = [base]
    per_query = pd.concat([evaluate_systems(runs, qrels, ids).assign(judge=j) for j, qrels in labels.items()])
    kinds = {HUMAN: "human", "copy": "recorded", "noisy": "llm", "lenient": "baseline"}
    meta = {j: {"min": 0, "max": 3, "binary_threshold": 2, "kind": kinds[j], "family": None} for j in labels}
    data = DatasetInputs(
        judges=meta,
        pairs=needed_pairs(human, pool=base),
        labels=labels,
        runs=runs,
        base=base,
        topics=dict.fromkeys(ids, "text"),
        per_query=per_query,
    )
    families = {f"s{i}": "f" for i in range(systems)} | {"Perfect": "oracle"}
    return data, families


@pytest.fixture(scope="module")
def audited():
    """The toy dataset and its audit tables, built once for the tests that only read them."""
    data, families = dataset()
    return data, audit_tables({"toy": data}, system_families=families, calibration={"ks": [3], "draws": 2})


def test_the_audits_rank_every_judge_by_kappa_alpha_and_tau_over_the_users_systems(audited):
    data, found = audited
    ranking = found["judge_ranking"]
    assert list(ranking.columns) == RANKING_COLUMNS and set(ranking["dataset"]) == {"toy"}
    assert set(ranking["measure"]) == {"kappa_binary", "alpha_ordinal", "tau_user"}
    for measure, block in ranking.groupby("measure"):
        block = block.sort_values("rank")
        assert block["judge"].iloc[0] == "copy", measure  # the humans' own labels agree best
        assert set(block["judge"]) == {"copy", "noisy", "lenient"}
        assert block["kind"].tolist() == [data.judges[j]["kind"] for j in block["judge"]]
    tau = ranking[ranking["measure"] == "tau_user"]
    assert (tau["systems"] == 4).all() and tau["pairs"].isna().all()  # Perfect (family oracle) left out
    labels = ranking[ranking["measure"] != "tau_user"]
    assert (labels["pairs"] == len(data.pairs)).all() and labels["systems"].isna().all()


def test_without_systems_the_judges_rank_on_labels_alone():
    data, families = dataset()
    data.runs, data.base, data.per_query = {}, None, data.per_query.iloc[:0]
    found = audit_tables({"toy": data}, system_families={}, calibration={"ks": [3], "draws": 2})
    assert set(found["judge_ranking"]["measure"]) == {"kappa_binary", "alpha_ordinal"}


def test_the_table_and_figure_are_declared_and_filed_under_labels():
    assert "judge_ranking" in tables()
    assert report_section("judge_ranking")["category"].endswith("Labels")


def test_the_chart_of_84_judges_draws_every_judge_inside_the_figure(tmp_path):
    rng = np.random.default_rng(0)
    queries = [f"q{i}" for i in range(30)]
    human = pd.DataFrame(
        [(q, f"{q}-{d}", int(rng.integers(0, 4))) for q in queries for d in range(30)],
        columns=["query_id", "doc_id", "relevance"],
    )
    labels = {HUMAN: human}
    for i in range(84):
        noise = 0.05 + 0.9 * (i // 21) / 3
        labels[f"llm-judge-submission-{i:02d}.prompt-variant"] = human.assign(
            relevance=np.where(rng.random(len(human)) < noise, rng.integers(0, 4, len(human)), human["relevance"])
        )
    table = judge_leaderboard(labels, dict.fromkeys(labels, SCALE), dict.fromkeys(labels, "recorded"))
    fig = judge_ranking_chart(table.assign(dataset="challenge"), tmp_path / "judge_ranking.png")
    assert (tmp_path / "judge_ranking.png").stat().st_size and (tmp_path / "judge_ranking.pdf").stat().st_size
    axes = [ax for ax in fig.axes if ax.get_yticklabels()]
    assert len(axes) == 2 and all(len(ax.get_yticklabels()) == 84 for ax in axes)
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    box, (width, height) = fig.get_tightbbox(canvas.get_renderer()), fig.get_size_inches()
    assert box.x0 >= -0.02 and box.y0 >= -0.02 and box.x1 <= width + 0.02 and box.y1 <= height + 0.02
    # a red line between every distinguishable pair
    for ax in axes:
        measure = ax.get_xlabel().split(" ")[0]
        splits = int(table.loc[table["measure"] == measure, "distinguishable"].fillna(False).sum())
        assert len([line for line in ax.get_lines() if line.get_linestyle() == "--"]) == splits > 0


def test_verdict_rank_prints_the_leaderboard_with_every_number_and_its_interval(tmp_path, capsys, audited):
    _, found = audited
    path = Layout(str(tmp_path)).audit("original", "judge_ranking")
    (tmp_path / "audits" / "original").mkdir(parents=True)
    write_table(found["judge_ranking"], path, title="judges")
    assert main(["verdict", "--results", str(tmp_path), "--rank"]) == 0
    printed = capsys.readouterr().out
    assert printed == ranking_text(read_ranking(path)) + "\n"
    assert " nan" not in printed  # an undefined measure (the lenient judge's tau: every system ties) is n/a
    table = read_ranking(path)
    for measure, block in table.groupby("measure"):
        top = block.sort_values("rank").iloc[0]
        head = next(line for line in printed.splitlines() if line.startswith(f"toy, {measure} "))
        assert top["judge"] in head and ("distinguishable from" in head or "not distinguishable" in head)
        lines = [line for line in printed.split(head)[1].split("\n\n")[0].splitlines() if line.strip()]
        assert len(lines) == len(block)
        assert f"{top['value']:.3f} [{top['value_ci_low']:.3f}, {top['value_ci_high']:.3f}]" in lines[0]
        assert f"vs {top['next_judge']}: {top['difference']:+.3f} [" in lines[0]
    empty = tmp_path / "empty"
    assert main(["verdict", "--results", str(empty), "--rank"]) == 2
