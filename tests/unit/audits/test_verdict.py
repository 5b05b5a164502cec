"""The verdict reads each audit's own table: a flag there is a flag here with its effect and
interval, a clean row passes, a missing table or a reason is n/a with that reason, and every
question declares its rule."""

import math

import pandas as pd
import pytest

from voirdire.output import write_csv
from voirdire.verdict import (
    FLAG,
    NA,
    PASS,
    QUESTIONS,
    Cell,
    DatasetTables,
    after_run,
    markdown,
    sentence,
    sentences,
    verdict,
    wide,
)


def tables(**overrides):
    base = {
        "table2": pd.DataFrame([
            {"dataset": "d", "judge": "good", "measure": "m", "kappa_binary": 0.62, "kappa_binary_ci_low": 0.55,
             "kappa_binary_ci_high": 0.69, "tau_all": 0.9, "tau_all_vs_pool": 1.0, "tau_all_ci_low_vs_pool": 0.95,
             "tau_all_ci_high_vs_pool": 1.0, "pairs_of_systems": 36, "disagreements_vs_pool": 1,
             "disagreements_reversed_vs_pool": 0, "disagreements_expected_vs_pool": 1.8, "missed": 2, "spurious": 1, "flipped": 0, "correction": "none",
             "coverage": 1.0, "pairs_labelled": 100, "pairs_needed": 100},
            {"dataset": "d", "judge": "bad", "measure": "m", "kappa_binary": 0.1, "kappa_binary_ci_low": 0.02,
             "kappa_binary_ci_high": 0.2, "tau_all": 0.2, "tau_all_vs_pool": 0.3, "tau_all_ci_low_vs_pool": 0.1,
             "tau_all_ci_high_vs_pool": 0.5, "pairs_of_systems": 36, "disagreements_vs_pool": 12,
             "disagreements_reversed_vs_pool": 5, "disagreements_expected_vs_pool": 1.8, "missed": 9, "spurious": 4, "flipped": 6, "correction": "none",
             "coverage": 0.8, "pairs_labelled": 80, "pairs_needed": 100},
        ]),
        "self_preference": pd.DataFrame([
            {"dataset": "d", "judge": "good", "within_grade": 0.01, "within_grade_ci_low": -0.03,
             "within_grade_ci_high": 0.05, "self_preferring": False, "reason": None},
            {"dataset": "d", "judge": "bad", "within_grade": 0.21, "within_grade_ci_low": 0.15,
             "within_grade_ci_high": 0.27, "self_preferring": True, "reason": None},
        ]),
        "length": pd.DataFrame(columns=["dataset", "judge", "rho_within", "p_within", "length_biased"]),
    }  # fmt: skip
    return base | overrides


def answer(frames, judge, question):
    long = verdict({"d": DatasetTables(judges=["good", "bad"], tables=frames)})
    return long[(long["judge"] == judge) & (long["question"] == question)].iloc[0]


def test_an_audits_flag_is_the_verdicts_flag_with_its_interval():
    row = answer(tables(), "bad", "own_family")
    assert row["status"] == FLAG and row["effect"] == pytest.approx(0.21)
    assert (row["ci_low"], row["ci_high"]) == (pytest.approx(0.15), pytest.approx(0.27))
    assert row["text"].startswith("+0.210 [+0.150, +0.270] flag")
    assert answer(tables(), "good", "own_family")["status"] == PASS


def test_labels_leaderboard_and_decisions_flag_only_the_bad_judge():
    for question in ("labels", "leaderboard", "decisions"):
        assert answer(tables(), "bad", question)["status"] == FLAG, question
        assert answer(tables(), "good", question)["status"] == PASS, question
    decisions = answer(tables(), "bad", "decisions")
    assert decisions["tests"] == 36 and decisions["chance"] == pytest.approx(0.9)  # alpha / 2 per pair
    assert "5 of 36 pairs reversed, 12 seen differently" in decisions["text"]


def test_a_question_whose_table_is_absent_or_empty_is_na_with_the_reason():
    row = answer(tables(), "good", "length")
    assert row["status"] == NA and "no passage texts" in row["reason"]
    row = answer(tables(), "good", "padding")  # no pad table: the probe is not configured
    assert row["status"] == NA and row["reason"]
    frames = tables()
    frames["self_preference"] = pd.DataFrame([{"dataset": "d", "judge": "good", "within_grade": math.nan,
                                              "self_preferring": False, "reason": "the judge declares no family"}])  # fmt: skip
    assert answer(frames, "good", "own_family")["reason"] == "the judge declares no family"


def test_the_oracle_question_names_who_passes_it():
    table1 = pd.DataFrame({"dataset": "d", "measure": "m", "system": ["Perfect", "llm", "bm25"],
                           "human": [0.9, 0.7, 0.5], "bad": [0.6, 0.95, 0.4], "good": [0.88, 0.7, 0.5]})  # fmt: skip
    significance = pd.DataFrame({"dataset": "d", "judge": "bad", "measure": "m", "system_a": ["Perfect"],
                                 "system_b": ["llm"], "p_judge_adjusted": [0.001]})  # fmt: skip
    frames = tables(table1=table1, significance=significance)
    long = verdict({"d": DatasetTables(judges=["good", "bad"], tables=frames, oracles=["Perfect"])})
    bad = long[(long["judge"] == "bad") & (long["question"] == "oracles")].iloc[0]
    assert bad["status"] == FLAG and "Perfect is 2nd of 3; passed by llm (1 significantly)" in bad["detail"]
    good = long[(long["judge"] == "good") & (long["question"] == "oracles")].iloc[0]
    assert good["status"] == PASS and "1st of 3" in good["detail"]


def test_the_page_is_readable_a_sentence_per_judge_and_a_column_per_question():
    long = verdict({"d": DatasetTables(judges=["good", "bad"], tables=tables())})
    assert len(wide(long).columns) == 2 + len(QUESTIONS) <= 15
    text = sentence(long, "d", "bad")
    assert text.startswith("bad on d: flagged on labels") and "own family (+0.210" in text
    assert sentence(long, "d", "good").startswith("good on d: no audit flags it")
    page = markdown(long, notes=["bad labelled 80 of 100"])
    assert "| good" in page and "bad labelled 80 of 100" in page
    assert all(q.rule and q.asks for q in QUESTIONS.values())


def test_a_run_that_made_the_verdict_ends_with_its_sentences_and_one_that_did_not_says_nothing(tmp_path):
    long = verdict({"d": DatasetTables(judges=["good", "bad"], tables=tables())})
    csv = tmp_path / "verdict.csv"
    assert after_run(csv, since=0.0, results="res") is None  # no verdict (a run that stopped before it)
    with csv.open("w") as fh:
        write_csv(long, fh)  # as the verdict job writes it
    made = csv.stat().st_mtime
    lines = after_run(csv, since=made - 1, results="res").splitlines()
    assert (
        lines[0]
        == f"voirdire: the verdict ({tmp_path / 'verdict.md'}; every question: voirdire verdict --results res):"
    )
    assert lines[1:-1] == [f"  {line}" for line in sentences(long)] == [
        f"  {sentence(long, 'd', 'good')}", f"  {sentence(long, 'd', 'bad')}"]  # fmt: skip
    assert lines[-1] == "voirdire: every table and figure with its caption: snakemake --report res/report.html"
    assert after_run(csv, since=made + 1, results="res") is None  # older than the run: a warm rerun
    many = pd.concat([long.assign(judge=long["judge"] + str(i)) for i in range(15)])  # 30 judges
    with csv.open("w") as fh:
        write_csv(many, fh)
    lines = after_run(csv, since=made - 1, results="res").splitlines()
    assert lines[1:21] == [f"  {line}" for line in sentences(many)[:20]]
    assert lines[21] == "  ... and 10 more judges and datasets: see the page" and len(lines) == 23


def test_circular_use_is_reported_not_flagged():
    circularity = pd.DataFrame([{"dataset": "d", "ranker": "good", "self_score": 1.0, "human_pool_score": 0.8,
                                 "inflation": 0.2, "inflation_ci_low": 0.15, "inflation_ci_high": 0.25}])  # fmt: skip
    row = answer(tables(circularity=circularity), "good", "circular_use")
    assert row["status"] == "info" and row["effect"] == pytest.approx(0.2)
    long = verdict({"d": DatasetTables(judges=["good"], tables=tables(circularity=circularity))})
    assert "reports circular use (+0.200" in sentence(long, "d", "good")


def test_a_cell_reads_as_text():
    assert Cell(NA, reason="no reruns").text() == "n/a: no reruns"
    assert Cell(FLAG, 0.2, 0.1, 0.3, tests=4, chance=0.2).text() == "+0.200 [+0.100, +0.300] flag (4 tests; chance 0.2)"


def test_figure3_is_inlined_under_the_table_of_the_first_page(tmp_path):
    from voirdire.verdict import fragment, html

    png = tmp_path / "figure3.png"
    png.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)))
    long = verdict({"d": DatasetTables(judges=["good", "bad"], tables=tables())})
    page = fragment(long, figure=png)
    image = page.split("<img", 1)[1]
    assert page.index("</table>") < page.index("<figure>") < page.index("Flag rules")
    assert "data:image/png;base64,iVBORw0KGgo" in image and "Figure 3:" in page
    assert "<figure>" not in fragment(long) and "<figure>" in html(long, figure=png)
