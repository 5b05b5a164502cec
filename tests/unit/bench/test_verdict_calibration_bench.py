"""bench/verdict_calibration.py in its quick mode on the real DL19 labels: the table's shape and
arithmetic, and a planted bias flagged by the verdict (skips without ../shared). No timing is
asserted."""

from __future__ import annotations

import math

import pytest
from conftest import SHARED_DL19, load_bench


@pytest.fixture(scope="module")
def bench():
    return load_bench("verdict_calibration")


@pytest.fixture(scope="module")
def prepared(bench):
    if not (SHARED_DL19 / "qrels.nist.txt").is_file():
        pytest.skip(f"real TREC DL 2019 data not found at {SHARED_DL19} (../shared absent)")
    return bench.prepare(SHARED_DL19, probe_samples=bench.QUICK["probe_samples"])


@pytest.fixture(scope="module")
def table(bench, prepared):
    quick = {k: v for k, v in bench.QUICK.items() if k != "probe_samples"}
    return bench.calibrate(prepared[0], **quick, seed=5, progress=False)


def test_the_bench_scores_as_the_project_does(prepared):
    _, gap = prepared
    assert gap < 1e-9


def test_a_row_per_question_per_null(bench, table):
    from voirdire.verdict import QUESTIONS

    assert set(bench.COLUMNS) <= set(table.columns)
    nulls = table[table["part"] == "null judge"]
    assert set(nulls["simulated"]) == set(bench.NULLS.values())
    for simulated, rows in nulls.groupby("simulated"):
        assert list(rows["question"]) == [*QUESTIONS, bench.FAMILY], simulated
        assert (rows["draws"] == bench.QUICK["draws"]).all()
    # every planted bias has its question's row; the gamed system and the synthetic leaderboards theirs
    planted = table[table["part"] == "planted bias"]
    assert list(planted["question"]) == [p.question for p in bench.plants().values()]
    assert (planted["draws"] == bench.QUICK["power_draws"]).all()
    assert set(table.loc[table["part"] == "gaming null", "question"]) == {"gameable"}
    synthetic = table[table["part"] == "synthetic null"]
    assert set(synthetic["question"]) == {"leaderboard", "decisions", bench.FAMILY}


def test_the_arithmetic(bench, table):
    assert ((table["ci_low"] <= table["rate"]) & (table["rate"] <= table["ci_high"])).all()
    assert (table["rate"] == table["flagged"] / table["draws"]).all()
    assert (table["flagged"] + table["inconclusive"] + table["na"] <= table["draws"]).all()
    null = ~table["part"].str.contains("planted")
    family = table["question"] == bench.FAMILY
    size = null & ~family
    bound = 0.05 + 2 * (0.05 * 0.95 / table["draws"]).map(math.sqrt)
    assert (table.loc[size, "within_target"] == (table.loc[size, "rate"] <= bound[size])).all()
    assert (table.loc[family, "within_target"] == (table.loc[family, "rate"] <= bench.FAMILY_TARGET)).all()
    assert (table.loc[~null, "within_target"] == (table.loc[~null, "rate"] >= bench.POWER)).all()
    # a draw flagged on a question is flagged somewhere: the family-wise rate is at least each question's
    for simulated, rows in table[table["part"] == "null judge"].groupby("simulated"):
        assert rows.loc[rows["question"] == bench.FAMILY, "flagged"].iloc[0] >= rows["flagged"].max(), simulated


def test_a_planted_bias_is_flagged_on_its_question(table):
    planted = table[table["part"] == "planted bias"].set_index("question")
    # the rerun +1 on 20% of the needed pairs: the verdict's drift cell flags it
    assert planted.loc["drift", "flagged"] >= 1
    assert planted.loc["drift", "mean_effect"] > 0.1
