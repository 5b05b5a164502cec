"""The verdict reads each audit's own table: a flag there is a flag here with its effect and
interval, a clean row passes, a missing table or a reason is n/a with that reason, and every
question declares its rule."""

import math
from pathlib import Path

import pandas as pd
import pytest

from voirdire.output import write_csv
from voirdire.verdict import (
    FLAG,
    INCONCLUSIVE,
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


def _table2(judge, *, kappa, ci, tau_user, tau_null, tau_p, reversed_, reversed_p, coverage=1.0):
    return {
        "dataset": "d",
        "judge": judge,
        "measure": "m",
        "kappa_binary": kappa,
        "kappa_binary_ci_low": ci[0],
        "kappa_binary_ci_high": ci[1],
        "tau_all": 0.2,
        "tau_all_vs_pool": 0.3,
        "tau_all_ci_low_vs_pool": 0.1,
        "tau_all_ci_high_vs_pool": 0.5,
        "pairs_of_systems": 36,
        "disagreements_vs_pool": 12,
        "disagreements_reversed_vs_pool": 5,
        "systems_user_vs_pool": 8,
        "tau_user_vs_pool": tau_user,
        "tau_user_ci_low_vs_pool": tau_user - 0.1,
        "tau_user_ci_high_vs_pool": min(1.0, tau_user + 0.1),
        "tau_user_null_vs_pool": tau_null,
        "tau_user_p_vs_pool": tau_p,
        "pairs_user_vs_pool": 28,
        "reversed_user_vs_pool": reversed_,
        "reversed_user_p_vs_pool": reversed_p,
        "reversed_user_expected_vs_pool": 0.7,
        "missed": 2,
        "spurious": 1,
        "flipped": 0,
        "correction": "none",
        "coverage": coverage,
        "pairs_labelled": int(100 * coverage),
        "pairs_needed": 100,
    }


def tables(**overrides):
    base = {
        "table2": pd.DataFrame(
            [
                _table2(
                    "good",
                    kappa=0.62,
                    ci=(0.55, 0.69),
                    tau_user=0.86,
                    tau_null=0.84,
                    tau_p=0.6,
                    reversed_=0,
                    reversed_p=1.0,
                ),
                _table2(
                    "bad",
                    kappa=0.1,
                    ci=(0.02, 0.2),
                    tau_user=0.1,
                    tau_null=0.85,
                    tau_p=0.0005,
                    reversed_=9,
                    reversed_p=0.0005,
                    coverage=0.8,
                ),
            ]
        ),
        "self_preference": pd.DataFrame(
            [
                {
                    "dataset": "d",
                    "judge": "good",
                    "within_grade": 0.01,
                    "within_grade_ci_low": -0.03,
                    "within_grade_ci_high": 0.05,
                    "within_grade_p": 0.3,
                    "self_preferring": False,
                    "reason": None,
                },
                {
                    "dataset": "d",
                    "judge": "bad",
                    "within_grade": 0.21,
                    "within_grade_ci_low": 0.15,
                    "within_grade_ci_high": 0.27,
                    "within_grade_p": 0.0002,
                    "self_preferring": True,
                    "reason": None,
                },
            ]
        ),
        "length": pd.DataFrame(columns=["dataset", "judge", "rho_within", "p_within", "length_biased"]),
    }
    return base | overrides


def answer(frames, judge, question, judges=("good", "bad")):
    long = verdict({"d": DatasetTables(judges=list(judges), tables=frames)})
    return long[(long["judge"] == judge) & (long["question"] == question)].iloc[0]


def test_an_audits_flag_is_the_verdicts_flag_with_its_interval():
    row = answer(tables(), "bad", "own_family")
    assert row["status"] == FLAG and row["effect"] == pytest.approx(0.21)
    assert (row["ci_low"], row["ci_high"]) == (pytest.approx(0.15), pytest.approx(0.27))
    assert row["text"].startswith("+0.210 [+0.150, +0.270] flag (p 0.0002, Holm over 4: ")
    assert answer(tables(), "good", "own_family")["status"] == PASS


def test_labels_leaderboard_and_decisions_flag_only_the_bad_judge():
    for question in ("labels", "leaderboard", "decisions"):
        assert answer(tables(), "bad", question)["status"] == FLAG, question
        assert answer(tables(), "good", question)["status"] == PASS, question
    decisions = answer(tables(), "bad", "decisions")
    assert decisions["tests"] == 28
    assert "9 of 28 pairs of your 8 systems reversed (an unbiased judge: 0.7)" in decisions["text"]


def test_leaderboard_and_decisions_read_the_users_systems_not_the_oracles():
    # every system: tau 0.3 and 5 of 36 pairs reversed (the oracles'); the user's 8 systems: in order
    row = answer(tables(), "good", "leaderboard")
    assert row["status"] == PASS and row["effect"] == pytest.approx(0.86)
    assert "8 systems of your own" in row["detail"] and "oracles included: +0.300" in row["detail"]
    assert answer(tables(), "good", "decisions")["status"] == PASS


def test_leaderboard_and_decisions_are_na_below_three_systems_of_ones_own():
    frames = tables()
    frames["table2"] = frames["table2"].assign(systems_user_vs_pool=2)
    for question in ("leaderboard", "decisions"):
        row = answer(frames, "bad", question)
        assert row["status"] == NA and "2 system(s) of your own" in row["reason"], question


def test_one_error_budget_per_judge_holm_over_its_questions():
    # seven questions each at p 0.03: alone each would flag at 0.05, together none survives Holm
    shifted = {
        "dataset": "d",
        "judge": "good",
        "human": "all",
        "mean_shift": 0.1,
        "mean_shift_ci_low": 0.01,
        "mean_shift_ci_high": 0.19,
        "shift_p": 0.06,
    }  # one-sided 0.03
    frames = tables(
        pad=pd.DataFrame([shifted | {"condition": "pad"}]),
        injection=pd.DataFrame([shifted | {"condition": "claim"}]),
        control_chart=pd.DataFrame(
            [
                {
                    "dataset": "d",
                    "judge": "good",
                    "mean_difference": 0.1,
                    "difference_ci_low": 0.01,
                    "difference_ci_high": 0.19,
                    "shift_p": 0.03,
                }
            ]
        ),
    )
    frames["self_preference"].loc[
        0, ["within_grade", "within_grade_ci_low", "within_grade_ci_high", "within_grade_p"]
    ] = [0.1, 0.01, 0.19, 0.03]
    long = verdict({"d": DatasetTables(judges=["good"], tables=frames)})
    good = long.set_index("question")
    for question in ("padding", "injection", "drift", "own_family"):
        assert good.loc[question, "p"] == pytest.approx(0.03), question
        assert good.loc[question, "status"] == INCONCLUSIVE, question
        assert "above the judge's budget" in good.loc[question, "reason"]
        assert good.loc[question, "family"] == 7  # labels, leaderboard, decisions and these four
    assert not (long["status"] == FLAG).any()
    assert "chance of any false flag at most 0.05 over its 7 tested questions (Holm)" in sentence(long, "d", "good")
    # one strong finding still stands out of the same family
    frames["pad"] = pd.DataFrame([shifted | {"condition": "pad", "shift_p": 0.0002}])
    long = verdict({"d": DatasetTables(judges=["good"], tables=frames)})
    assert long.set_index("question").loc["padding", "status"] == FLAG


def test_a_pass_without_power_is_inconclusive():
    # a shift estimated to +-0.25 cannot find a rise of 0.2 grade with 80% power, nor rule it out
    wide_ci = {
        "dataset": "d",
        "judge": "good",
        "human": "all",
        "condition": "pad",
        "mean_shift": 0.0,
        "mean_shift_ci_low": -0.25,
        "mean_shift_ci_high": 0.25,
        "shift_p": 1.0,
    }
    row = answer(tables(pad=pd.DataFrame([wide_ci])), "good", "padding", judges=["good"])
    assert row["status"] == INCONCLUSIVE and row["power"] < 0.8 and row["reason"].startswith("power 0.")
    narrow = wide_ci | {"mean_shift_ci_low": -0.03, "mean_shift_ci_high": 0.03}
    row = answer(tables(pad=pd.DataFrame([narrow])), "good", "padding", judges=["good"])
    assert row["status"] == PASS and row["power"] > 0.99
    # as wide, but the grades fell: the interval rules the rise out, a pass whatever the power
    fell = wide_ci | {"mean_shift": -0.5, "mean_shift_ci_low": -0.75, "mean_shift_ci_high": -0.25}
    row = answer(tables(pad=pd.DataFrame([fell])), "good", "padding", judges=["good"])
    assert row["status"] == PASS and row["power"] < 0.8


def test_labels_whose_interval_straddles_the_floor_are_inconclusive():
    frames = tables()
    frames["table2"].loc[0, ["kappa_binary", "kappa_binary_ci_low", "kappa_binary_ci_high"]] = [0.396, 0.278, 0.5]
    row = answer(frames, "good", "labels")
    assert row["status"] == INCONCLUSIVE and "straddles 0.4" in row["reason"]


def test_length_needs_an_effect_that_matters_not_only_a_small_p():
    # Rank1-7B on TREC DL 2019: rho 0.072 with p 0.0015 over 2,257 pairs (a judge finer than the grade)
    row = {"dataset": "d", "judge": "good", "rho_within": 0.072, "p_within": 0.0015, "pairs": 2257}
    found = answer(tables(length=pd.DataFrame([row])), "good", "length", judges=["good"])
    assert found["status"] != FLAG and "below the 0.1 that matters" in found["detail"]
    # a larger rho alone: inconclusive, since a judge finer than the grade correlates with length too
    biased = row | {"rho_within": 0.134, "p_within": 0.0001}
    found = answer(tables(length=pd.DataFrame([biased])), "good", "length", judges=["good"])
    assert found["status"] == INCONCLUSIVE and "no other judge to compare with" in found["reason"]
    # beyond every other judge of the panel (a null baseline is no panel member): a flag
    panel = pd.DataFrame(
        [biased, row | {"judge": "bad", "rho_within": 0.05}, row | {"judge": "len", "rho_within": 0.9}]
    )
    label_test = pd.DataFrame({"dataset": "d", "judge": ["good", "bad", "len"], "kind": ["llm", "llm", "baseline"]})
    found = answer(tables(length=panel, label_test=label_test), "good", "length", judges=["good", "bad", "len"])
    assert found["status"] == FLAG and "the panel's most extreme +0.050" in found["detail"]
    # a panel that tracks length as much: a finer sense of relevance shared, not this judge's bias
    shared = panel.assign(rho_within=[0.134, 0.14, 0.9])
    found = answer(tables(length=shared, label_test=label_test), "good", "length", judges=["good", "bad", "len"])
    assert found["status"] != FLAG


def test_persona_without_a_rerun_is_never_a_flag():
    row = {
        "dataset": "d",
        "group": "good",
        "condition": "all",
        "mean_abs_delta_r": 1.48,
        "ci_low_queries": 1.2,
        "ci_high_queries": 1.7,
        "noise_floor_abs_delta_r": math.nan,
    }
    found = answer(tables(persona_sensitivity=pd.DataFrame([row])), "good", "persona_prompt", judges=["good"])
    assert found["status"] == INCONCLUSIVE and "no placebo persona" in found["reason"]
    with_rerun = row | {
        "rerun": True,
        "excess_abs_delta_r": 0.9,
        "excess_ci_low": 0.6,
        "excess_ci_high": 1.2,
        "excess_p": 0.0001,
    }
    found = answer(tables(persona_sensitivity=pd.DataFrame([with_rerun])), "good", "persona_prompt", judges=["good"])
    assert found["status"] == FLAG and found["effect"] == pytest.approx(0.9)


def test_position_reads_the_query_level_test_and_says_why_it_disagrees_with_the_interval():
    row = {
        "dataset": "d",
        "judge": "good",
        "first_position_win_rate": 0.875,
        "first_position_win_rate_ci_low": 0.53,
        "first_position_win_rate_ci_high": 0.98,
        "position_p": 0.25,
        "position_consistency": 0.5,
        "position_note": "few queries: 3 cannot reach p < 0.05",
    }
    found = answer(tables(swap=pd.DataFrame([row])), "good", "position", judges=["good"])
    assert found["status"] != FLAG and "few queries" in found["detail"]
    found = answer(tables(swap=pd.DataFrame([row | {"position_p": 0.0001}])), "good", "position", judges=["good"])
    assert found["status"] == FLAG


def test_a_question_whose_table_is_absent_or_empty_is_na_with_the_reason():
    row = answer(tables(), "good", "length")
    assert row["status"] == NA and "no passage texts" in row["reason"]
    row = answer(tables(), "good", "padding")  # no pad table: the probe is not configured
    assert row["status"] == NA and row["reason"]
    frames = tables()
    frames["self_preference"] = pd.DataFrame(
        [
            {
                "dataset": "d",
                "judge": "good",
                "within_grade": math.nan,
                "self_preferring": False,
                "reason": "the judge declares no family",
            }
        ]
    )
    assert answer(frames, "good", "own_family")["reason"] == "the judge declares no family"


def test_the_oracle_question_names_who_passes_it():
    table1 = pd.DataFrame(
        {
            "dataset": "d",
            "measure": "m",
            "system": ["Perfect", "llm", "bm25"],
            "human": [0.9, 0.7, 0.5],
            "bad": [0.6, 0.95, 0.4],
            "good": [0.88, 0.7, 0.5],
        }
    )
    significance = pd.DataFrame(
        {
            "dataset": "d",
            "judge": "bad",
            "measure": "m",
            "system_a": ["Perfect"],
            "system_b": ["llm"],
            "p_judge": [0.001],
            "p_judge_adjusted": [0.001],
        }
    )
    frames = tables(table1=table1, significance=significance)
    long = verdict({"d": DatasetTables(judges=["good", "bad"], tables=frames, oracles=["Perfect"])})
    bad = long[(long["judge"] == "bad") & (long["question"] == "oracles")].iloc[0]
    assert bad["status"] == FLAG and "Perfect is 2nd of 3; passed by llm" in bad["detail"]
    good = long[(long["judge"] == "good") & (long["question"] == "oracles")].iloc[0]
    assert good["status"] == PASS and "1st of 3" in good["detail"]


def test_the_page_is_readable_a_sentence_per_judge_and_a_column_per_question():
    long = verdict({"d": DatasetTables(judges=["good", "bad"], tables=tables())})
    assert len(wide(long).columns) == 2 + len(QUESTIONS) <= 16  # reranking (issue 52) made it 14 questions
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
    assert (
        lines[1:-1]
        == [f"  {line}" for line in sentences(long)]
        == [f"  {sentence(long, 'd', 'good')}", f"  {sentence(long, 'd', 'bad')}"]
    )
    assert lines[-1] == "voirdire: every table and figure with its caption: snakemake --report res/report.html"
    assert after_run(csv, since=made + 1, results="res") is None  # older than the run: a warm rerun
    many = pd.concat([long.assign(judge=long["judge"] + str(i)) for i in range(15)])  # 30 judges
    with csv.open("w") as fh:
        write_csv(many, fh)
    lines = after_run(csv, since=made - 1, results="res").splitlines()
    assert lines[1:21] == [f"  {line}" for line in sentences(many)[:20]]
    assert lines[21] == "  ... and 10 more judges and datasets: see the page" and len(lines) == 23


def test_circular_use_is_reported_not_flagged():
    circularity = pd.DataFrame(
        [
            {
                "dataset": "d",
                "ranker": "good",
                "self_score": 1.0,
                "human_pool_score": 0.8,
                "inflation": 0.2,
                "inflation_ci_low": 0.15,
                "inflation_ci_high": 0.25,
            }
        ]
    )
    row = answer(tables(circularity=circularity), "good", "circular_use")
    assert row["status"] == "info" and row["effect"] == pytest.approx(0.2)
    long = verdict({"d": DatasetTables(judges=["good"], tables=tables(circularity=circularity))})
    assert "reports circular use (+0.200" in sentence(long, "d", "good")


def test_a_cell_reads_as_text():
    assert Cell(NA, reason="no reruns").text() == "n/a: no reruns"
    cell = Cell(FLAG, 0.2, 0.1, 0.3, tests=4, p=0.004, p_holm=0.02, family=5)
    assert cell.text() == "+0.200 [+0.100, +0.300] flag (4 tests, p 0.004, Holm over 5: 0.02)"
    assert Cell(INCONCLUSIVE, 0.1, reason="power 0.39").text() == "+0.100 inconclusive: power 0.39"


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


def test_the_csv_keeps_every_status_as_pandas_reads_it_by_default(tmp_path):
    long = verdict({"d": DatasetTables(judges=["good", "bad"], tables=tables())})
    csv = tmp_path / "verdict.csv"
    with csv.open("w") as fh:
        write_csv(long, fh)
    plain = pd.read_csv(csv)  # a user's first read: no keep_default_na
    assert plain["status"].notna().all() and set(plain["status"]) <= {PASS, FLAG, INCONCLUSIVE, NA, "info"}
    assert (plain["status"] == NA).sum() == (long["status"] == NA).sum() > 0


def test_voirdire_verdict_into_a_reader_that_stops_early_ends_quietly(tmp_path):
    import subprocess
    import sys

    from voirdire.layout import Layout

    long = verdict({"d": DatasetTables(judges=[f"judge{i}" for i in range(400)], tables=tables())})
    path = Path(Layout(str(tmp_path)).verdict("csv"))
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as fh:
        write_csv(long, fh)
    cli = [sys.executable, "-m", "voirdire.cli", "verdict", "--results", str(tmp_path)]
    done = subprocess.run(f"{' '.join(cli)} | head -n 2", shell=True, capture_output=True, text=True, check=True)
    assert len(done.stdout.splitlines()) == 2 and done.stdout.startswith("judge0 on d: ")
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr


def test_labels_say_krippendorffs_alpha_beside_kappa():
    frames = tables()
    frames["table2"] = frames["table2"].assign(
        alpha_ordinal=[0.7, math.nan],
        alpha_ordinal_ci_low=[0.6, math.nan],
        alpha_ordinal_ci_high=[0.8, math.nan],
        alpha_binary=[0.5, 0.05],
        alpha_binary_ci_low=[0.4, 0.0],
        alpha_binary_ci_high=[0.6, 0.1],
    )
    assert answer(frames, "good", "labels")["detail"].startswith("alpha ordinal +0.700 [+0.600, +0.800]")
    assert answer(frames, "bad", "labels")["detail"].startswith("alpha binary +0.050 [+0.000, +0.100]")


def test_a_judge_whose_noise_scrambles_the_systems_is_inconclusive_on_the_leaderboard_not_a_pass():
    frames = tables()
    frames["table2"].loc[0, ["tau_user_vs_pool", "tau_user_null_vs_pool", "tau_user_p_vs_pool"]] = [0.05, 0.1, 0.4]
    row = answer(frames, "good", "leaderboard")
    assert row["status"] == INCONCLUSIVE and "cannot tell them apart" in row["reason"]
