"""Judge panels, inject -> recover: the comparison panel of the self-preference audits (judges
of other families only, never the null baselines) and the intervals of leave-one-judge-out.
Synthetic per-query scores, seeded; expected values come from what was planted."""

import numpy as np
import pandas as pd
import pytest

from voirdire.assistants.preference import rewrite_self_preference
from voirdire.audits.panel import comparison_panel, self_preference

SYSTEMS = {"g-ranker": "gemini", "c-ranker": "claude", "t5-ranker": "t5", "bm25": "bm25", "perfect": "oracle"}
BASE = {"g-ranker": 0.62, "c-ranker": 0.60, "t5-ranker": 0.58, "bm25": 0.50, "perfect": 0.90}
FAMILIES = {"g1": "gemini", "g2": "gemini", "length": None, "overlap": None, "c1": "claude", "human": None}
KINDS = {"g1": "llm", "g2": "llm", "length": "baseline", "overlap": "baseline", "c1": "llm", "human": "human"}
BONUS = 0.10


def scores(bias, queries=40, noise=0.03, seed=11):
    """Per-query nDCG: BASE plus a query effect, each judge's planted bias per system and noise."""
    rng = np.random.default_rng(seed)
    effect = rng.normal(0, 0.05, queries)
    rows = [
        {
            "judge": judge,
            "system": system,
            "query_id": f"q{q}",
            "ndcg": BASE[system] + effect[q] + bias(judge, system) + rng.normal(0, noise),
        }
        for judge in FAMILIES
        for system in SYSTEMS
        for q in range(queries)
    ]
    return pd.DataFrame(rows)


def gemini_bonus(judge, system):
    """Both Gemini judges grade the Gemini ranker up by BONUS; nobody else is biased."""
    return BONUS if FAMILIES[judge] == "gemini" and SYSTEMS[system] == "gemini" else 0.0


def test_the_panel_is_the_judges_of_other_families_and_never_a_null_baseline():
    candidates = [j for j in FAMILIES if KINDS[j] not in ("baseline", "human")]
    assert comparison_panel("g1", FAMILIES, candidates) == ["c1"]
    assert comparison_panel("c1", FAMILIES, candidates) == ["g1", "g2"]
    assert comparison_panel("g1", FAMILIES, candidates, humans=["human"]) == ["c1", "human"]


def test_two_same_family_judges_each_keep_the_whole_planted_bonus():
    found = self_preference(scores(gemini_bonus), FAMILIES, SYSTEMS, KINDS, resamples=500).set_index("judge")
    for judge in ("g1", "g2"):
        row = found.loc[judge]
        assert row["panel"] == "c1"  # not the other Gemini judge, not length or overlap
        assert row["corrected_ci_low"] <= BONUS <= row["corrected_ci_high"]
        assert row["corrected"] == pytest.approx(BONUS, abs=0.02)
        # nDCG alone never flags (strictness is not additive in nDCG): the flag reads labels
        assert not row["self_preferring"] and row["reason"].startswith("no labels or top documents given")
    clean = found.loc["c1"]  # the Gemini judges' bonus must not pass for c1's strictness
    assert clean["panel"] == "g1, g2" and clean["strictness_on"] == "systems of no panel family"
    assert clean["corrected_ci_low"] <= 0 <= clean["corrected_ci_high"] and not clean["self_preferring"]
    assert found.loc["length", "reason"] == "a null baseline has no family"
    assert "human" not in found.index


def test_a_judge_with_no_judge_of_another_family_gets_a_reason_not_a_number():
    families = {j: ("gemini" if j == "c1" else f) for j, f in FAMILIES.items()}  # everyone is Gemini
    found = self_preference(scores(gemini_bonus), families, SYSTEMS, KINDS, resamples=200).set_index("judge")
    assert found.loc["g1", "reason"].startswith("no judge of another family")
    assert not found.loc["g1", "self_preferring"] and found.loc["g1", "panel"] == ""
    with_humans = self_preference(
        scores(gemini_bonus), families, SYSTEMS, KINDS, include_humans=True, resamples=200
    ).set_index("judge")
    assert with_humans.loc["g1", "panel"] == "human"
    assert with_humans.loc["g1", "corrected"] == pytest.approx(BONUS, abs=0.02)


def rewrite_labels(rng_seed=3):
    """40 rewritten pairs: both Gemini judges grade a Gemini rewrite one grade up, the others do not."""
    rng = np.random.default_rng(rng_seed)
    rows = []
    for i in range(40):
        human = i % 4
        for judge in ("g1", "g2", "c1", "length"):
            original = int(np.clip(human + rng.integers(-1, 2), 0, 2))
            up = 1 if FAMILIES[judge] == "gemini" else 0
            rows.append(("dl19", "flash", judge, f"q{i % 7}", f"d{i}", human, float(original), float(original + up)))
    columns = ["dataset", "assistant", "judge", "query_id", "doc_id", "human", "original", "rewritten"]
    return pd.DataFrame(rows, columns=columns)


def test_rewrite_preference_keeps_a_same_family_judge_out_of_the_panel():
    table = rewrite_self_preference(rewrite_labels(), FAMILIES, "gemini", panel=["g1", "g2", "c1"], seed=42)
    table = table.set_index("judge")
    for judge in ("g1", "g2"):  # each grades every rewrite +1 and c1 does not: excess 1, not 1/2
        assert table.loc[judge, "panel"] == "c1"
        assert table.loc[judge, "excess"] == pytest.approx(1.0) and table.loc[judge, "self_preferring"]
    assert table.loc["c1", "panel"] == "g1, g2" and not table.loc["c1", "self_preferring"]


# ----------------------------------------------------------------------------- leave-one-judge-out


def lojo_scores(noise, queries=40, seed=2):
    """j1 and j2 put A above B by 0.10; "odd" puts B above A by 0.05, so without it the margin doubles."""
    rng = np.random.default_rng(seed)
    plan = {"j1": {"A": 0.70, "B": 0.60}, "j2": {"A": 0.70, "B": 0.60}, "odd": {"A": 0.60, "B": 0.65}}
    rows = [
        {"judge": judge, "system": system, "query_id": f"q{q}", "ndcg": mean + rng.normal(0, noise)}
        for judge, means in plan.items()
        for system, mean in means.items()
        for q in range(queries)
    ]
    return pd.DataFrame(rows)


def test_leave_one_judge_out_margins_have_bootstrap_cis_over_queries_that_cover_what_was_planted():
    from scipy import stats

    from voirdire.audits.panel import leave_one_judge_out

    frame = lojo_scores(noise=0.05)
    table = leave_one_judge_out(frame, ["j1", "j2", "odd"], resamples=2000, seed=1).set_index("left_out")
    odd = table.loc["odd"]  # the full panel: A - B = (0.10 + 0.10 - 0.05) / 3 = 0.05
    assert (odd["upper"], odd["lower"]) == ("A", "B")
    assert odd["margin_full_ci_low"] <= 0.05 <= odd["margin_full_ci_high"]
    assert odd["margin_reduced_ci_low"] <= 0.10 <= odd["margin_reduced_ci_high"]  # j1 and j2 alone: A - B = 0.10
    assert odd["margin_reduced_ci_low"] > 0
    # the same interval, by scipy's bootstrap of the per-query margins (the panel is complete)
    wide = frame.pivot_table(index="query_id", columns=["judge", "system"], values="ndcg")
    diffs = sum(wide[(j, odd["upper"])] - wide[(j, odd["lower"])] for j in ("j1", "j2", "odd")) / 3
    reference = stats.bootstrap(
        (diffs.to_numpy(),), np.mean, n_resamples=2000, method="percentile", random_state=np.random.default_rng(0)
    ).confidence_interval
    width = reference.high - reference.low
    assert odd["margin_full_ci_low"] == pytest.approx(reference.low, abs=0.1 * width)
    assert odd["margin_full_ci_high"] == pytest.approx(reference.high, abs=0.1 * width)
    assert odd["margin_full_ci_low"] <= odd["margin_full"] <= odd["margin_full_ci_high"]


def test_without_noise_the_margin_intervals_shrink_to_the_margins():
    from voirdire.audits.panel import leave_one_judge_out

    table = leave_one_judge_out(lojo_scores(noise=0.0), ["j1", "j2", "odd"], resamples=200)
    assert np.allclose(table["margin_full_ci_low"], table["margin_full"])
    assert np.allclose(table["margin_reduced_ci_high"], table["margin_reduced"])
