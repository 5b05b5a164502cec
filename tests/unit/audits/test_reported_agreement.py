"""Agreement as the field reports it, inject -> recover: Krippendorff's alpha (ordinal, interval,
binary) and kappa at each cut in Table 2's label columns, and agreement topic by topic.

Planted judges: one that copies the human labels, one a grade more lenient everywhere, one that
labels at random, and one that reverses the humans' grades on three chosen topics."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

pytest.importorskip("krippendorff")

from voirdire.audits.figures import topic_agreement_chart
from voirdire.audits.labels import (
    ALPHAS,
    TOPIC_COLUMNS,
    aligned,
    label_agreement,
    topic_agreement,
)
from voirdire.audits.run import DatasetInputs, audit_tables
from voirdire.evaluation import evaluate_measures
from voirdire.judges import HUMAN, Scale, needed_pairs
from voirdire.paper import agreement_tables
from voirdire.stats.reliability import krippendorff_alpha

SCALE = Scale(0, 3, 2)
BINARY = Scale(0, 1, 1)
QUERIES = [f"q{i:02d}" for i in range(40)]


def humans(seed: int = 3, per_query: int = 30) -> pd.DataFrame:
    """Human qrels skewed to 0 (as TREC DL's), every topic with some of each grade likely."""
    rng = np.random.default_rng(seed)
    rows = [
        (q, f"{q}-d{j}", int(g))
        for q in QUERIES
        for j, g in enumerate(rng.choice(4, per_query, p=[0.5, 0.2, 0.2, 0.1]))
    ]
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "relevance"])


def planted(human: pd.DataFrame, seed: int = 4) -> dict[str, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    grades = human["relevance"].to_numpy()
    return {
        "copy": human.copy(),
        "lenient": human.assign(relevance=np.minimum(3, grades + 1)),
        # the humans' own grades dealt out at random: no agreement beyond chance, the same grade frequencies
        "random": human.assign(relevance=rng.permutation(grades)),
    }


def rows_of(labels: dict[str, pd.DataFrame], scales: dict[str, Scale] | None = None, resamples: int = 400) -> dict:
    human = labels[HUMAN]
    scales = scales or dict.fromkeys(labels, SCALE)
    return label_agreement(labels, scales, human[["query_id", "doc_id"]], resamples=resamples, seed=42)


def test_a_copying_judge_has_alpha_1_and_kappa_1_at_every_cut():
    human = humans()
    row = rows_of({HUMAN: human, "copy": planted(human)["copy"]})["copy"]
    for name in [*ALPHAS, "kappa_cut_1", "kappa_cut_2", "kappa_cut_3"]:
        assert row[name] == pytest.approx(1.0) and row[f"{name}_ci_low"] == pytest.approx(1.0), name
    assert row["alpha_degenerate"] == 0 and row["kappa_cut_degenerate"] == 0


def test_a_lenient_judge_keeps_its_rank_correlation_but_loses_alpha_and_kappa_at_the_lowest_cut():
    """+1 everywhere (3 stays 3): the order of the grades barely changes (Spearman's rho stays
    high), but alpha measures agreement, not order: both alphas fall, the interval alpha's whole
    interval well below rho. At the lowest cut the judge calls every pair relevant (each grade
    is at least 1), so kappa there is 0, below the other cuts'."""
    human = humans()
    lenient = planted(human)["lenient"]
    row = rows_of({HUMAN: human, "lenient": lenient})["lenient"]
    rho = stats.spearmanr(human["relevance"], lenient["relevance"]).statistic
    assert rho > 0.9
    for name in ("alpha_interval", "alpha_ordinal"):
        assert row[f"{name}_ci_high"] < rho - 0.2, name
        assert row[f"{name}_ci_low"] <= row[name] <= row[f"{name}_ci_high"]
    assert row["kappa_cut_1"] == pytest.approx(0.0, abs=1e-12)
    assert row["kappa_cut_1_ci_high"] < min(row["kappa_cut_2_ci_low"], row["kappa_cut_3_ci_low"])
    # the point is the package's, on the same pairs
    assert row["alpha_interval"] == pytest.approx(
        krippendorff_alpha(human["relevance"], lenient["relevance"], "interval"), abs=1e-12
    )


def test_a_random_judge_has_alpha_near_0_with_an_interval_that_covers_it():
    human = humans()
    row = rows_of({HUMAN: human, "random": planted(human)["random"]})["random"]
    for name in [*ALPHAS, "kappa_cut_1", "kappa_cut_2", "kappa_cut_3"]:
        assert row[f"{name}_ci_low"] < 0 < row[f"{name}_ci_high"], name
        assert abs(row[name]) < 0.1, name


def test_a_binary_judge_has_a_binary_alpha_and_no_graded_one():
    """0/1 against 0-3: ordinal and interval alpha need one scale (n/a, as graded kappa); the
    binary alpha compares each side at its own threshold."""
    human = humans()
    judge = human.assign(relevance=(human["relevance"] >= 2).astype(int))
    row = rows_of({HUMAN: human, "binary": judge}, {HUMAN: SCALE, "binary": BINARY})["binary"]
    assert math.isnan(row["alpha_ordinal"]) and math.isnan(row["alpha_interval_ci_low"])
    assert row["alpha_binary"] == pytest.approx(1.0) and row["kappa_cut_2"] == pytest.approx(1.0)
    assert row["kappa_cut_1"] < 1 and row["kappa_cut_3"] < 1


def test_topics_reversed_by_a_judge_are_exactly_the_most_disagreeing():
    """A judge that copies the humans but reverses their grades (3 - g) on three chosen topics:
    those three, and no other, disagree more than over all its pairs, and rank 1 to 3."""
    human = humans()
    chosen = ["q05", "q17", "q33"]
    judge = human.assign(relevance=np.where(human["query_id"].isin(chosen), 3 - human["relevance"], human["relevance"]))
    table = topic_agreement(aligned(human, judge), SCALE, SCALE, resamples=300, seed=1)
    assert list(table.columns) == TOPIC_COLUMNS and len(table) == len(QUERIES)
    assert set(table.loc[table["disagrees_most"], "query_id"]) == set(chosen)
    assert set(table.loc[table["rank"] <= 3, "query_id"]) == set(chosen)
    copied = table[~table["query_id"].isin(chosen)]
    assert (copied["disagreement"] == 0).all() and (copied["alpha"] == 1).all()
    reversed_ = table[table["query_id"].isin(chosen)]
    assert (reversed_["alpha"] < 0).all() and (reversed_["alpha_ci_high_pairs"] < 0).all()
    assert (reversed_["kappa_binary_ci_high_pairs"] < 0).all()


@pytest.mark.parametrize("judge_scale", [SCALE, BINARY])
def test_the_topics_disagreement_averages_to_1_minus_alpha(judge_scale):
    """One yardstick for every topic: each topic's observed disagreement over the expected
    disagreement of all the judge's pairs; weighted by pairs, their mean is 1 - alpha (the package's)."""
    human = humans(seed=8)
    rng = np.random.default_rng(9)
    grades = np.clip(human["relevance"] + rng.integers(-1, 2, len(human)), 0, 3)
    judge = human.assign(relevance=grades if judge_scale == SCALE else (grades >= 2).astype(int))
    table = topic_agreement(aligned(human, judge), SCALE, judge_scale, resamples=200, seed=2)
    mean = float(np.average(table["disagreement"], weights=table["pairs"]))
    if judge_scale == SCALE:
        expected = krippendorff_alpha(human["relevance"], judge["relevance"], "ordinal")
    else:
        expected = krippendorff_alpha((human["relevance"] >= 2).astype(int), judge["relevance"], "nominal")
    assert mean == pytest.approx(1 - expected, abs=1e-12)
    assert table["disagreement_all"].iloc[0] == pytest.approx(1 - expected, abs=1e-12)
    assert (table["rank"] == np.arange(1, len(table) + 1)).all() and table["disagreement"].is_monotonic_decreasing
    inside = table[["disagreement_ci_low_pairs", "disagreement", "disagreement_ci_high_pairs"]].to_numpy()
    assert (inside[:, 0] <= inside[:, 1]).all() and (inside[:, 1] <= inside[:, 2]).all()
    assert set(table["alpha_level"]) == {"ordinal" if judge_scale == SCALE else "binary"}


def test_the_new_label_columns_reach_table_2_rows():
    """paper.agreement_tables puts every label_agreement key in Table 2's row, with systems too."""
    human = humans()[lambda f: f["query_id"].isin(QUERIES[:6])]
    ranked = human.assign(rank=human.groupby("query_id").cumcount() + 1)[["query_id", "doc_id", "rank"]]
    reverse = ranked.assign(rank=ranked.groupby("query_id")["rank"].transform("max") + 1 - ranked["rank"])
    runs = {name: [run.assign(score=-run["rank"].astype(float))] for name, run in (("a", ranked), ("b", reverse))}
    labels = {HUMAN: human, "lenient": planted(human)["lenient"]}
    measure = "nDCG(judged_only=True)@10"
    scores = pd.concat(
        [evaluate_measures(runs, qrels, QUERIES[:6], [measure]).assign(judge=j) for j, qrels in labels.items()]
    )
    table, _ = agreement_tables(
        dataset="d",
        labels=labels,
        scales=dict.fromkeys(labels, SCALE),
        pairs=needed_pairs(human, pool=runs["a"][0]),
        scores=scores,
        measures=[measure],
        oracles=[],
        alpha=0.05,
        rbo_p=0.9,
        resamples=100,
    )
    wanted = {
        f"{name}{end}"
        for name in [*ALPHAS, "kappa_cut_1", "kappa_cut_2", "kappa_cut_3"]
        for end in ("", "_ci_low", "_ci_high")
    } | {"alpha_degenerate", "kappa_cut_degenerate"}
    assert wanted <= set(table.columns)
    assert table.loc[0, "kappa_cut_1"] == pytest.approx(0.0, abs=1e-12)


def test_the_topic_figure_draws_every_judge_and_marks_the_disagreeing_topics(tmp_path):
    human = humans()
    chosen = ["q05", "q17", "q33"]
    frames = []
    for name, judge in planted(human).items():
        if name == "copy":
            judge = judge.assign(
                relevance=np.where(judge["query_id"].isin(chosen), 3 - judge["relevance"], judge["relevance"])
            )
        frames.append(
            topic_agreement(aligned(human, judge), SCALE, SCALE, resamples=100).assign(dataset="toy", judge=name)
        )
    table = pd.concat(frames, ignore_index=True)
    fig = topic_agreement_chart(table, tmp_path / "topics.png")
    assert (tmp_path / "topics.png").stat().st_size > 0 and (tmp_path / "topics.pdf").stat().st_size > 0
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == list(planted(human))
    assert len(ax.get_xticklabels()) == len(QUERIES)
    marks = ax.collections[0].get_offsets()
    assert len(marks) == int(table["disagrees_most"].sum()) >= 3
    empty = topic_agreement_chart(pd.DataFrame(columns=["dataset", "judge", *TOPIC_COLUMNS]), tmp_path / "none.png")
    assert (tmp_path / "none.png").exists() and empty.axes


def test_the_audits_job_writes_a_topic_table_for_every_judge():
    human = humans()
    labels = {HUMAN: human, **planted(human)}
    meta = {
        j: {"min": 0, "max": 3, "binary_threshold": 2, "kind": "human" if j == HUMAN else "recorded", "family": None}
        for j in labels
    }
    data = DatasetInputs(
        judges=meta,
        pairs=human[["query_id", "doc_id"]],
        labels=labels,
        runs={},
        base=None,
        topics=dict.fromkeys(QUERIES, "query"),
        per_query=pd.DataFrame(),
    )
    tables = audit_tables({"toy": data}, system_families={})
    topics = tables["topic_agreement"]
    assert list(topics.columns[:1]) == ["dataset"] and set(TOPIC_COLUMNS) < set(topics.columns)
    assert topics.groupby("judge").size().to_dict() == dict.fromkeys(planted(human), len(QUERIES))
    assert (topics.loc[topics["judge"] == "copy", "disagreement"] == 0).all()


def test_the_captions_explain_every_new_column():
    """Table 2's caption names every label column (the DL19 runs' caption test reads the real
    table), and the topic table's caption every column of it."""
    from support.captions import legend

    human = humans()
    rows = rows_of({HUMAN: human, "lenient": planted(human)["lenient"]}, resamples=50)
    for caption, columns in (("table2", list(rows["lenient"])), ("audit_topic_agreement", ["judge", *TOPIC_COLUMNS])):
        patterns = legend(caption)
        assert [c for c in columns if not any(p.match(c) for p in patterns)] == [], caption
