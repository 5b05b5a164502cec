"""Inject -> recover: the swap probe's position test, with the query as the unit.

A judge's pairwise answers are simulated per query: with probability ``bias`` a prompt is
answered by position (the first shown, or a side drawn per query), otherwise by content
(``consistent`` of the time) or at random. A first-position preference spread over queries is
found; a clean judge, and a judge whose position preference changes sign from query to query
(none on average), are flagged at most alpha of the time; order-dependent answers piled into
one query are not a position preference of the judge.
"""

import numpy as np
import pandas as pd
import pytest

from voirdire.probes.swap import swap_intervals
from voirdire.probes.tables import swap_results

ALPHA = 0.05
QUERIES, PER_QUERY = 16, 6


def judge(rng, *, bias: float = 0.0, side: str | None = None, consistent: float = 0.7, queries: int = QUERIES):
    """(answers, their queries) of one simulated judge: each prompt goes to ``side`` (``"A"``: the
    first shown; None: a side drawn per query) with probability ``bias``, else to the better
    passage with probability ``consistent``, else to a random letter."""
    answers, labels = [], []
    for q in range(queries):
        favoured = side or str(rng.choice(["A", "B"]))
        for _ in range(PER_QUERY):
            x_better = rng.random() < 0.5
            pair = []
            for x_first in (True, False):
                if rng.random() < bias:
                    pair.append(favoured)
                elif rng.random() < consistent:
                    pair.append("A" if x_first == x_better else "B")
                else:
                    pair.append(str(rng.choice(["A", "B"])))
            answers.append(tuple(pair))
            labels.append(f"q{q}")
    return answers, labels


def flag_rates(draws: int, seed: int, **kind) -> tuple[float, float]:
    """(share of draws the position test flags, share the pair-level binomial flags)."""
    rng = np.random.default_rng(seed)
    flagged = pair_level = 0
    for _ in range(draws):
        answers, queries = judge(rng, **kind)
        found = swap_intervals(answers, queries=queries, resamples=100)
        flagged += found["position_p"] < ALPHA
        pair_level += found["position_p_pairs"] < ALPHA
    return flagged / draws, pair_level / draws


def bound(draws: int) -> float:
    """alpha plus two Monte Carlo standard errors of a rate over ``draws``."""
    return ALPHA + 2 * np.sqrt(ALPHA * (1 - ALPHA) / draws)


def test_a_first_position_preference_spread_over_queries_is_found():
    """Planted: a quarter of the prompts answered "first shown", in every query (16 queries x 6
    pairs). Found in one draw with its sign, and in at least 80% of 60 draws (power)."""
    rng = np.random.default_rng(11)
    answers, queries = judge(rng, bias=0.25, side="A")
    found = swap_intervals(answers, queries=queries)
    assert found["position_p"] < ALPHA and found["order_dependent_first"] > found["order_dependent_second"]
    assert found["first_position_win_rate_ci_low"] > 0.5 and found["position_note"] == ""
    assert found["queries"] >= 10
    power, _ = flag_rates(60, seed=12, bias=0.25, side="A")
    assert power >= 0.8
    # the other position is found as well (the test is two-sided)
    second, _ = flag_rates(30, seed=13, bias=0.25, side="B")
    assert second >= 0.8


@pytest.mark.parametrize(
    ("kind", "pair_level_above"),
    [({"bias": 0.0}, None), ({"bias": 0.4, "side": None}, 0.12)],
    ids=["random-order-dependent-answers", "a-side-drawn-per-query"],
)
def test_a_judge_without_a_position_preference_is_flagged_at_most_alpha(kind, pair_level_above):
    """Null judges over 400 draws: order-dependent answers at random, and a position bias whose
    side is drawn per query (no preference on average, but clustered: the pair-level binomial
    flags it far more often than alpha, the test over queries does not)."""
    draws = 400
    flagged, pair_level = flag_rates(draws, seed=21, **kind)
    assert flagged <= bound(draws)
    if pair_level_above is not None:
        assert pair_level > pair_level_above > bound(draws)


def test_order_dependent_answers_in_one_query_are_not_a_position_preference():
    """Planted: 12 pairs of one query answered "first shown" in both orders; the judge answers
    the other 9 queries' pairs consistently. The pair-level binomial flags it (12 of 12); the
    test over queries cannot (one query's vote), and the interval is wide enough to agree."""
    answers = [("A", "A")] * 12 + [("A", "B"), ("B", "A")] * 9
    queries = ["q0"] * 12 + [f"q{1 + i // 2}" for i in range(18)]
    found = swap_intervals(answers, queries=queries)
    assert found["position_p_pairs"] < ALPHA
    assert found["position_p"] >= ALPHA and found["queries"] == 1
    assert found["first_position_win_rate_ci_low"] <= 0.5 and found["position_note"] == ""


def test_few_queries_are_named_when_the_interval_and_the_test_disagree():
    """Every order-dependent pair picks the first shown, in 3 queries: the interval is clear of 0.5
    but no sign-flip test over 3 queries can reach p < 0.05 (its smallest p is 2/2^3)."""
    answers = [("A", "A")] * 6 + [("A", "B")] * 3
    queries = ["q0", "q0", "q1", "q1", "q2", "q2", "q0", "q1", "q2"]
    found = swap_intervals(answers, queries=queries)
    assert found["first_position_win_rate_ci_low"] > 0.5 and found["position_p"] == pytest.approx(0.25)
    assert found["position_note"].startswith("few queries") and "3 queries" in found["position_note"]
    assert "0.25" in found["position_note"]
    # with 8 such queries the test reaches it, and the two agree again
    many = swap_intervals([("A", "A")] * 8, queries=[f"q{i}" for i in range(8)])
    assert many["position_p"] == pytest.approx(2 / 2**8) and many["position_note"] == ""


def test_the_swap_table_clusters_by_the_pairs_query():
    """Through the table: the same answers, spread over 8 queries or piled into 1, give the same
    pair-level binomial but not the same position test."""
    human = pd.DataFrame({"dataset": "d", "query_id": [f"q{i}" for i in range(8)], "doc_id": "x", "relevance": 1})
    columns = [
        "dataset",
        "judge",
        "probe",
        "condition",
        "query_id",
        "doc_id",
        "first",
        "second",
        "order",
        "sample",
        "label",
        "choice",
    ]

    def table(query_of):
        rows = [
            ("d", "j", "swap", "passages", query_of(i), None, f"a{i}", f"b{i}", order, 0, None, "A")
            for i in range(8)
            for order in ("ab", "ba")
        ]
        scores = pd.DataFrame(columns=["dataset", "query_id", "system", "ndcg"])
        return swap_results(pd.DataFrame(rows, columns=columns), human, scores).frame.iloc[0]

    spread, piled = table(lambda i: f"q{i}"), table(lambda i: "q0")
    assert spread["position_p_pairs"] == piled["position_p_pairs"] < ALPHA
    assert (spread["queries"], piled["queries"]) == (8, 1)
    assert spread["position_p"] < ALPHA <= piled["position_p"]
    assert piled["position_note"].startswith("few queries")
