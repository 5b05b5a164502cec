"""Juries (voirdire.jury, docs/juries.md): inject -> recover.

Independent member errors make a jury closer to the humans than any member, and its members worth
about three; one shared error makes them worth one and the jury no better than a member. A strict
majority is never broken by the members' order, and no order of the members changes a label.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

from voirdire.judges import JuryJudge, Scale
from voirdire.jury import LABELLED, NO_VERDICT, SHORT, aggregate_votes, jury_tables, jury_verdicts

MEMBERS = ("a", "b", "c")
SCALE = Scale(0, 3, 2)
DRAWS = 20


def collection(rng, queries: int = 30, per_query: int = 20) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Needed pairs and their human grades (0-3, uniform)."""
    pairs = pd.DataFrame(
        {
            "query_id": np.repeat([f"q{i}" for i in range(queries)], per_query),
            "doc_id": [f"d{i}" for i in range(queries * per_query)],
        }
    )
    return pairs, pairs.assign(relevance=rng.integers(0, 4, len(pairs)))


def noise(rng, n: int) -> np.ndarray:
    """Each grade moved by one, up or down, with probability 0.3."""
    return rng.choice([-1, 0, 1], size=n, p=[0.15, 0.7, 0.15])


def member(human: pd.DataFrame, error: np.ndarray) -> pd.DataFrame:
    return human.assign(relevance=np.clip(human["relevance"].to_numpy() + error, SCALE.low, SCALE.high))


def jury(aggregate: str, members=MEMBERS, quorum: int | None = None) -> JuryJudge:
    return JuryJudge("jury", tuple(members), aggregate, quorum or len(members) // 2 + 1, SCALE)


def distance(labels: pd.DataFrame, human: pd.DataFrame) -> tuple[float, float]:
    """Mean absolute error and binary kappa against the humans, on the pairs labelled."""
    both = labels.merge(human, on=["query_id", "doc_id"], suffixes=("", "_human"))
    mae = float((both["relevance"] - both["relevance_human"]).abs().mean())
    kappa = cohen_kappa_score(both["relevance"] >= 2, both["relevance_human"] >= 2)
    return mae, kappa


def run(aggregate: str, labels: dict, pairs, human, resamples: int = 300, seed: int = 0):
    judge = jury(aggregate)
    verdicts = jury_verdicts(judge, pairs, labels, dict.fromkeys(MEMBERS, SCALE))
    row, correlation = jury_tables("d", judge, verdicts, human, resamples=resamples, seed=seed)
    return verdicts, row.iloc[0], correlation


@pytest.mark.parametrize("aggregate", ["mean", "median", "majority"])
def test_independent_errors_make_the_jury_closer_than_any_member(aggregate):
    closer_mae, closer_kappa, covers_three = 0, 0, 0
    for draw in range(DRAWS):
        rng = np.random.default_rng(draw)
        pairs, human = collection(rng)
        labels = {m: member(human, noise(rng, len(human))) for m in MEMBERS}
        verdicts, row, _ = run(aggregate, labels, pairs, human, seed=draw)
        jury_mae, jury_kappa = distance(verdicts.labels, human)
        members = [distance(labels[m], human) for m in MEMBERS]
        closer_mae += jury_mae < min(mae for mae, _ in members)
        closer_kappa += jury_kappa > max(kappa for _, kappa in members)
        covers_three += row["n_eff_ci_low"] <= 3 <= row["n_eff_ci_high"]
        assert row["n_eff"] > 2  # three independent members are worth about three, not one
    assert closer_mae >= 0.9 * DRAWS and closer_kappa >= 0.9 * DRAWS, (closer_mae, closer_kappa)
    assert covers_three >= 0.75 * DRAWS, covers_three


@pytest.mark.parametrize("aggregate", ["mean", "median", "majority"])
def test_one_shared_error_makes_the_members_worth_one(aggregate):
    for draw in range(5):
        rng = np.random.default_rng(100 + draw)
        pairs, human = collection(rng)
        shared = noise(rng, len(human))
        labels = {m: member(human, shared) for m in MEMBERS}
        verdicts, row, correlation = run(aggregate, labels, pairs, human, seed=draw)
        assert row["n_eff"] == pytest.approx(1)
        assert row["n_eff_ci_low"] <= 1 + 1e-9 and row["n_eff_ci_high"] >= 1 - 1e-9
        assert (correlation["correlation"] > 0.999).all()
        jury_mae, jury_kappa = distance(verdicts.labels, human)
        members = [distance(labels[m], human) for m in MEMBERS]
        assert jury_mae >= min(mae for mae, _ in members) - 1e-12
        assert jury_kappa <= max(kappa for _, kappa in members) + 1e-12


def test_the_more_the_members_share_their_errors_the_less_they_are_worth():
    rng = np.random.default_rng(5)
    pairs, human = collection(rng, queries=40)
    worth = []
    for share in (0.0, 0.5, 0.9):
        shared = noise(rng, len(human))
        own = {m: noise(rng, len(human)) for m in MEMBERS}
        pick = {m: rng.random(len(human)) < share for m in MEMBERS}
        labels = {m: member(human, np.where(pick[m], shared, own[m])) for m in MEMBERS}
        worth.append(run("mean", labels, pairs, human)[1]["n_eff"])
    assert worth[0] > worth[1] > worth[2] > 1, worth


# ----------------------------------------------------------------------------- the rules


def votes(*rows) -> np.ndarray:
    return np.array([[math.nan if v is None else v for v in row] for row in rows], dtype=float)


def test_a_split_with_an_unparsed_member_is_no_verdict_never_the_first_members_grade():
    """Three members, one unparsed: a 1-1 split among the two that answered has no strict
    majority (two answers reach the quorum of two): no verdict, in either order."""
    for row in ([2, 1, None], [1, 2, None], [None, 1, 2], [2, None, 1]):
        grade, outcome, answering = aggregate_votes(votes(row), "majority", 2, SCALE)
        assert outcome[0] == NO_VERDICT and math.isnan(grade[0]) and answering[0] == 2
    grade, outcome, _ = aggregate_votes(votes([2, 2, None], [0, 3, 3], [1, 2, 3]), "majority", 2, SCALE)
    assert list(outcome) == [LABELLED, LABELLED, NO_VERDICT] and list(grade[:2]) == [2, 3]


def test_mean_and_median_round_half_up():
    rows = votes(
        [1, 2, None, None],
        [0, 1, 1, None],
        [0, 0, 1, None],
        [0, 3, None, None],
        [3, 3, 2, None],
        [0, 1, 2, 3],
        [0, 0, 1, 3],
    )
    mean, _, _ = aggregate_votes(rows, "mean", 2, SCALE)
    median, _, _ = aggregate_votes(rows, "median", 2, SCALE)
    assert list(mean) == [2, 1, 0, 2, 3, 2, 1]  # 1.5, 2/3, 1/3, 1.5, 8/3, 1.5, 1
    assert list(median) == [2, 1, 0, 2, 3, 2, 1]  # 1.5, 1, 0, 1.5, 3, 1.5, 0.5


def test_a_pair_short_of_a_quorum_gets_no_label():
    rows = votes([2, None, None], [None, None, None], [1, 1, None])
    for aggregate in ("mean", "median", "majority"):
        grade, outcome, answering = aggregate_votes(rows, aggregate, 2, SCALE)
        assert list(outcome) == [SHORT, SHORT, LABELLED] and list(answering) == [1, 0, 2]
        assert np.isnan(grade[:2]).all() and grade[2] == 1


def test_unparsed_answers_are_counted_not_read_as_grades():
    rng = np.random.default_rng(3)
    pairs, human = collection(rng, queries=5, per_query=6)
    labels = {m: member(human, noise(rng, len(human))) for m in MEMBERS}
    labels["b"] = labels["b"].iloc[5:]  # five pairs b could not grade (unparsed: not in its qrels)
    labels["c"] = labels["c"].iloc[:-2]
    verdicts, row, _ = run("mean", labels, pairs, human, resamples=100)
    assert verdicts.missing() == {"a": 0, "b": 5, "c": 2}
    assert row["fewer_members"] == 7 and row["short_of_quorum"] == 0 and row["labelled"] == len(pairs)
    assert row["missing"] == "a: 0, b: 5, c: 2"
    # each such pair is the mean of the two that answered, never of a 0 in the unparsed one's place
    frame = verdicts.pairs.iloc[:5]
    expected = np.floor((frame["a"] + frame["c"]) / 2 + 0.5)
    assert (frame["relevance"] == expected).all()


@pytest.mark.parametrize("aggregate", ["mean", "median", "majority"])
def test_member_order_changes_no_label(aggregate):
    rng = np.random.default_rng(11)
    pairs, human = collection(rng, queries=10, per_query=30)
    names = ("a", "b", "c", "d")
    labels = {}
    for m in names:
        graded = member(human, rng.integers(-2, 3, len(human)))
        labels[m] = graded[rng.random(len(graded)) > 0.2]  # a fifth unanswered, differently per member
    found = []
    for order in itertools.permutations(names):
        judge = JuryJudge("jury", order, aggregate, 2, SCALE)
        verdicts = jury_verdicts(judge, pairs, labels, dict.fromkeys(names, SCALE))
        row, _ = jury_tables("d", judge, verdicts, human, resamples=50)
        found.append((verdicts.labels.sort_values(["query_id", "doc_id"]).reset_index(drop=True), row.iloc[0]))
    first, row = found[0]
    assert set(verdicts.pairs["outcome"]) >= {LABELLED}
    for labels_of_order, row_of_order in found[1:]:
        pd.testing.assert_frame_equal(labels_of_order, first)
        for column in ("labelled", "no_verdict", "short_of_quorum", "fewer_members"):
            assert row_of_order[column] == row[column]
        assert row_of_order["n_eff"] == pytest.approx(row["n_eff"])


def test_binarized_members_vote_their_binary_labels():
    """Members on different scales, binarize: each votes grade >= its own threshold."""
    rng = np.random.default_rng(2)
    pairs, human = collection(rng, queries=4, per_query=5)
    binary = Scale(0, 1, 1)
    labels = {
        "a": human.assign(relevance=(human["relevance"] >= 2).astype(int)),  # a 0/1 judge
        "b": human.assign(relevance=(human["relevance"] >= 2).astype(int)),
        "c": human.assign(relevance=3 - human["relevance"]),  # a 0-3 judge, inverted
    }
    judge = JuryJudge("jury", MEMBERS, "majority", 2, binary, binarize=True)
    verdicts = jury_verdicts(judge, pairs, labels, {"a": binary, "b": binary, "c": SCALE})
    assert set(verdicts.pairs["c"]) <= {0.0, 1.0}
    merged = verdicts.labels.merge(human, on=["query_id", "doc_id"], suffixes=("", "_human"))
    assert len(merged) == len(pairs) and (merged["relevance"] == (merged["relevance_human"] >= 2)).all()
