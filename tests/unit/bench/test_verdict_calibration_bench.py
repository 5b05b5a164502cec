"""bench/verdict_calibration.py in its quick mode on the real DL19 labels (its resamples and
permutations lowered further): the table's shape and arithmetic, and a planted bias flagged by the
verdict (skips without ../shared). No timing is asserted."""

from __future__ import annotations

import math

import pytest
from conftest import SHARED_DL19, load_bench


@pytest.fixture(scope="module")
def bench():
    return load_bench("verdict_calibration")


# Fewer resamples and permutations than even --quick's (a p stays valid, only coarser): the
# table's shape and arithmetic do not depend on them, and the planted drift is still flagged.
LOWERED = {"sign_flips": 1999, "resamples": 50, "permutations": 199, "length_permutations": 200, "reranked_draws": 100}


@pytest.fixture(scope="module")
def prepared(bench):
    if not (SHARED_DL19 / "qrels.nist.txt").is_file():
        pytest.skip(f"real TREC DL 2019 data not found at {SHARED_DL19} (../shared absent)")
    engine = bench.ac.set_permutations(None)
    yield bench.prepare(SHARED_DL19, probe_samples=bench.QUICK["probe_samples"], **LOWERED)
    bench.ac.set_permutations(engine)  # the engine's sign-flip draws back for the tests after these


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
    kinds = {words: kind for kind, words in bench.NULLS.items()}
    for simulated, rows in nulls.groupby("simulated"):
        carried = bench.CARRIED.get(kinds[simulated], ())
        assert list(rows["question"]) == [*(q for q in QUESTIONS if q not in carried), bench.FAMILY], simulated
        assert (rows["draws"] == bench.QUICK["draws"]).all()
    # a bias a null judge carries (consensus leniency, where reranking acts) is counted as planted
    carried = table[table["part"] == bench.CARRIED_PART]
    assert set(zip(carried["simulated"], carried["question"], strict=True)) == {
        (bench.NULLS[kind], q) for kind, questions in bench.CARRIED.items() for q in questions
    }
    assert "reranking" in set(table.loc[table["part"] == bench.CARRIED_PART, "question"])
    assert carried["target"].str.contains("power").all()
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


def test_only_selects_the_settings_and_rows_of_the_questions_asked(bench):
    """``--only reranking``: every null judge (the whole budget still built), the reranking plant,
    no synthetic leaderboard or gamed system."""
    chosen = bench.settings(2, 2, 1, 2, only=["reranking"])
    assert [s.key for s in chosen] == [*(f"null/{kind}" for kind in bench.NULLS), "planted/reranking"]
    consensus = next(s for s in chosen if s.key == "null/consensus")
    answers = [
        {"reranking": ("flag", 0.01), "labels": ("flag", 0.5)},
        {"reranking": ("flag", 0.02), "labels": ("pass", 0.8)},
        {"reranking": ("pass", 0.0), "labels": ("pass", 0.8)},
    ]
    rows = bench.rows_of(consensus, answers, 1.0, only=["reranking"])
    assert [(r["part"], r["question"]) for r in rows] == [
        (bench.CARRIED_PART, "reranking"),
        ("null judge", bench.FAMILY),
    ]
    assert rows[0]["flagged"] == 2 and rows[0]["target"].endswith("(power)")
    assert rows[1]["flagged"] == 1  # the family-wise rate leaves the carried question out, not the others
    noise = next(s for s in chosen if s.key == "null/noise")
    assert bench.rows_of(noise, answers, 1.0)[-1]["flagged"] == 2  # a null that carries nothing counts it
