"""Inject -> recover: label-level self-preference on passages rewritten by the judge's own family."""

import numpy as np
import pandas as pd
import pytest

from voirdire.assistants.preference import rewrite_self_preference

FAMILIES = {"gem": "gemini", "gpt": "gpt", "emb": "minilm", "length": None}
PANEL = ["gem", "gpt", "emb"]


def labels(rewrite):
    """40 sample pairs (10 per human grade); each judge's original grade is a seeded draw near
    the human's, and ``rewrite(judge, grade)`` gives its grade of the rewritten passage."""
    rng = np.random.default_rng(3)
    rows = []
    for i in range(40):
        human = i % 4
        for judge in [*PANEL, "length"]:
            original = int(np.clip(human + rng.integers(-1, 2), 0, 3))
            rows.append(
                ("dl19", "flash", judge, f"q{i % 7}", f"d{i}", human, float(original), float(rewrite(judge, original)))
            )
    return pd.DataFrame(
        rows, columns=["dataset", "assistant", "judge", "query_id", "doc_id", "human", "original", "rewritten"]
    )


def audit(frame, assistant_family="gemini", panel=PANEL):
    return rewrite_self_preference(frame, FAMILIES, assistant_family, panel=panel, seed=42).set_index("judge")


def test_a_judge_inflating_its_own_familys_rewrites_is_found_with_the_exact_excess():
    frame = labels(lambda judge, grade: min(grade + 1, 3) if judge == "gem" else grade)
    table = audit(frame)
    gem = frame[frame["judge"] == "gem"]
    expected = (gem["rewritten"] - gem["original"]).mean()  # the others do not move: all excess
    assert table.loc["gem", "excess"] == pytest.approx(expected) and expected > 0.5
    assert table.loc["gem", "same_family"] and table.loc["gem", "self_preferring"]
    assert table.loc["gem", "excess_ci_low"] > 0
    for other in ("gpt", "emb"):  # clean judges: not flagged (they even look stricter than gem)
        assert not table.loc[other, "self_preferring"] and table.loc[other, "excess"] < 0
    assert "length" not in table.index  # baselines are not in the panel
    assert (table["pairs"] == 40).all()


def test_a_shift_every_judge_shares_is_corrected_away():
    frame = labels(lambda judge, grade: max(grade - 1, 0))  # rewrites lose content: all judges lower
    table = audit(frame)
    assert (table["raw_shift"] < 0).all()
    assert table["excess"].abs().max() < 0.15 and not table["self_preferring"].any()


def test_the_same_inflation_by_a_judge_of_another_family_is_not_self_preference():
    frame = labels(lambda judge, grade: min(grade + 1, 3) if judge == "gem" else grade)
    table = audit(frame, assistant_family="llama")
    assert table.loc["gem", "excess"] > 0.5 and not table.loc["gem", "same_family"]
    assert not table["self_preferring"].any()


def test_missing_families_and_a_lone_judge_get_a_reason_not_a_flag():
    frame = labels(lambda judge, grade: min(grade + 1, 3))
    assert (audit(frame, assistant_family=None)["reason"] == "the assistant declares no family").all()
    lone = audit(frame, panel=["gem"])
    assert lone.loc["gem", "reason"].startswith("no other judge") and not lone.loc["gem", "self_preferring"]


def test_unlabelled_pairs_are_left_out_pair_by_pair():
    frame = labels(lambda judge, grade: min(grade + 1, 3) if judge == "gem" else grade)
    frame.loc[(frame["judge"] == "gem") & (frame["doc_id"].isin(["d0", "d1", "d2"])), "rewritten"] = np.nan
    table = audit(frame)
    assert table.loc["gem", "pairs"] == 37 and table.loc["gpt", "pairs"] == 40
    assert table.loc["gem", "self_preferring"]


def by_query(rng, bonus, queries=30, per_query=8):
    """gem's shift on each query's rewrites is the query's own draw (one grade up or down, a coin
    per query, on half its pairs) plus ``bonus`` on a share of the pairs; gpt and emb do not move."""
    n = queries * per_query
    query = np.arange(n) // per_query
    shift = rng.choice([-1, 1], queries)[query] * (rng.random(n) < 0.5) + (rng.random(n) < bonus)
    rows = []
    for judge in PANEL:
        moved = shift if judge == "gem" else np.zeros(n)
        rows += [("dl19", "flash", judge, f"q{query[i]}", f"d{i}", 1, 1.0, 1.0 + moved[i]) for i in range(n)]
    return pd.DataFrame(
        rows, columns=["dataset", "assistant", "judge", "query_id", "doc_id", "human", "original", "rewritten"]
    )


def test_a_judge_whose_queries_move_at_random_is_not_self_preferring():
    """No excess on average: a same-family judge moves each query's rewrites together, up or
    down by a coin flip. A bootstrap over pairs flags such a judge often; over queries at most
    the one-sided 2.5% (plus the percentile bootstrap's small excess over 30 queries)."""
    rng = np.random.default_rng(14)
    simulations, alpha = 200, 0.025
    flagged = 0
    for _ in range(simulations):
        table = rewrite_self_preference(by_query(rng, 0.0), FAMILIES, "gemini", panel=PANEL, resamples=400)
        flagged += table.set_index("judge").loc["gem", "self_preferring"]
    assert flagged / simulations <= alpha + 2 * np.sqrt(alpha * (1 - alpha) / simulations)
    found = rewrite_self_preference(by_query(rng, 0.8), FAMILIES, "gemini", panel=PANEL).set_index("judge")
    gem = found.loc["gem"]
    assert gem["self_preferring"] and gem["queries"] == 30 and gem["excess_ci_low"] > 0
    assert gem["excess_ci_low"] <= 0.8 <= gem["excess_ci_high"]  # the planted bonus, within the interval
