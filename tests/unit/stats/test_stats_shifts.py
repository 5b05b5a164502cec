"""The one paired label-shift test (:func:`voirdire.stats.paired_shift`), with the query as the
unit: pairs of one query move together, so the flag is a sign-flip test over queries and the
label distribution's move a clustered test of marginal homogeneity. Inject -> recover: a clean
null whose queries move at random is flagged at about alpha over many seeded simulations (the
pair-level sign test and Stuart-Maxwell are not), a planted shift is found with its sign, and
with one pair per query the clustered tests are the classical ones (scipy, statsmodels)."""

import math

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import SquareTable

from voirdire.stats import SHIFT_COLUMNS, clustered_homogeneity, paired_shift, sign_test_p, stuart_maxwell

ALPHA = 0.05
SIMULATIONS = 200
# a rate that is really alpha stays below this bound (two Monte Carlo standard errors) 97.5% of the time
BOUND = ALPHA + 2 * math.sqrt(ALPHA * (1 - ALPHA) / SIMULATIONS)


def moved(up: int, down: int, same: int, grade: int = 1) -> tuple[np.ndarray, np.ndarray]:
    before = np.full(up + down + same, grade)
    after = before.copy()
    after[:up] += 1
    after[up : up + down] -= 1
    return before, after


def crosstab(before: np.ndarray, after: np.ndarray, grades) -> np.ndarray:
    table = np.zeros((len(grades), len(grades)))
    for b, a in zip(before, after, strict=True):
        table[grades.index(b), grades.index(a)] += 1
    return table


def query_noise(rng, queries=20, per_query=10):
    """A rerun with no drift on average: each query's labels move one grade in a direction drawn
    per query (each pair of it moves with probability 1/2). Pairs of one query move together."""
    before = rng.integers(1, 3, queries * per_query)
    step = np.repeat(rng.choice([-1, 1], queries), per_query) * (rng.random(queries * per_query) < 0.5)
    return before, before + step, np.repeat([f"q{i}" for i in range(queries)], per_query)


def exchangeable(rng, queries=20, per_query=10):
    """Marginal homogeneity holds, pairs cluster: half the queries' labels rise by one grade on
    some pairs; a coin per query says which side is 'before'. Each query's margins move
    together, in a direction that is a coin flip."""
    x = rng.integers(0, 3, queries * per_query)
    y = x + np.repeat(rng.integers(0, 2, queries), per_query) * (rng.random(queries * per_query) < 0.6)
    swap = np.repeat(rng.random(queries) < 0.5, per_query)
    return np.where(swap, y, x), np.where(swap, x, y), np.repeat(np.arange(queries), per_query)


def test_every_pair_its_own_query_gives_the_exact_sign_test():
    before, after = moved(8, 2, 0)  # 10 pairs: the sign flips are enumerated exactly
    row = paired_shift(before, after, None)
    assert list(row) == SHIFT_COLUMNS
    assert (row["n"], row["queries"], row["up"], row["down"], row["same"]) == (10, 10, 8, 2, 0)
    reference = stats.binomtest(8, 10, 0.5).pvalue
    assert row["shift_p"] == pytest.approx(reference) and row["sign_p_pairs"] == pytest.approx(reference)
    assert row["sign_p_pairs"] == pytest.approx(0.109, abs=5e-4)  # 2 * P(X <= 2), X ~ Bin(10, 1/2) = 112/1024


def test_clustered_homogeneity_is_statsmodels_stuart_maxwell_with_one_pair_per_query():
    rng = np.random.default_rng(2)
    before = rng.integers(0, 4, 200)
    after = np.clip(before + rng.choice([-1, 0, 1, 1], 200), 0, 3)
    reference = SquareTable(crosstab(before, after, [0, 1, 2, 3]), shift_zeros=False).homogeneity()
    statistic, df, p = clustered_homogeneity(before, after, np.arange(200))
    assert statistic == pytest.approx(reference.statistic) and df == reference.df == 3
    assert p == pytest.approx(reference.pvalue)
    row = paired_shift(before, after, None)
    assert (row["homogeneity"], row["homogeneity_df"], row["homogeneity_p"]) == pytest.approx((statistic, df, p))
    assert stuart_maxwell(before, after) == pytest.approx((statistic, df, p))
    # a grade no pair left or entered is left out; 2 x 2 is McNemar's chi-squared, (b - c)^2 / (b + c)
    before = np.array([0] * 10 + [1] * 10 + [3] * 5)
    after = np.array([1] * 6 + [0] * 4 + [1] * 8 + [0] * 2 + [3] * 5)
    statistic, df, p = clustered_homogeneity(before, after, np.arange(25))
    assert statistic == pytest.approx((6 - 2) ** 2 / (6 + 2)) and df == 1
    assert clustered_homogeneity(np.array([2, 2]), np.array([2, 2]), [0, 1]) == (0.0, 0, 1.0)


def test_queries_that_move_at_random_are_not_a_shift():
    rng = np.random.default_rng(11)
    flagged = pair_level = 0
    for _ in range(SIMULATIONS):
        before, after, queries = query_noise(rng)
        row = paired_shift(before, after, queries, resamples=200)
        flagged += row["shift_p"] < ALPHA
        pair_level += row["sign_p_pairs"] < ALPHA
    assert flagged / SIMULATIONS <= BOUND
    assert pair_level / SIMULATIONS > 0.25  # why the pair-level sign test is descriptive only (about 40%)


def test_margins_that_move_together_by_query_are_not_a_moved_distribution():
    rng = np.random.default_rng(12)
    clustered = pair_level = 0
    for _ in range(SIMULATIONS):
        before, after, queries = exchangeable(rng)
        clustered += clustered_homogeneity(before, after, queries)[2] < ALPHA
        pair_level += stuart_maxwell(before, after)[2] < ALPHA
    assert clustered / SIMULATIONS <= BOUND
    assert pair_level / SIMULATIONS > 0.25  # Stuart-Maxwell counts every pair as independent


@pytest.mark.parametrize("sign", [1, -1])
def test_a_planted_shift_is_found_with_its_sign_and_size(sign):
    rng = np.random.default_rng(3)
    queries = np.repeat(np.arange(20), 8)
    before = rng.integers(1, 3, len(queries))
    after = before + sign * (rng.random(len(queries)) < 0.3)  # 30% of the pairs move, on every query
    row = paired_shift(before, after, queries)
    planted = float((after - before).mean())
    assert row["mean_shift"] == pytest.approx(planted) and abs(planted) > 0.2
    assert row["shift_p"] < 0.001 and row["homogeneity_p"] < 0.01
    assert row["mean_shift_ci_low"] <= planted <= row["mean_shift_ci_high"]
    assert (row["mean_shift_ci_low"] > 0) if sign > 0 else (row["mean_shift_ci_high"] < 0)
    same = paired_shift(before, before, queries)
    assert same["shift_p"] == 1 and same["mean_shift_ci_low"] == same["mean_shift_ci_high"] == 0
    assert same["homogeneity_p"] == 1


def test_the_direction_is_the_sign_of_the_tested_statistic():
    """20 pairs up by one, 7 down by three: the pairs' signs say 'up' (sign p about 0.02), the
    grades fell on average. The tested statistic is the mean shift: it is about 0 here, so no
    direction is claimed."""
    before = np.array([1] * 20 + [3] * 7)
    after = np.array([2] * 20 + [0] * 7)
    row = paired_shift(before, after, None)
    assert row["sign_p_pairs"] == pytest.approx(stats.binomtest(20, 27, 0.5).pvalue) and row["sign_p_pairs"] < 0.05
    assert row["mean_shift"] == pytest.approx(-1 / 27) and row["shift_p"] > 0.5


def test_empty_misaligned_and_unparsed_inputs():
    empty = paired_shift([], [], [])
    assert empty["n"] == 0 and math.isnan(empty["shift_p"]) and math.isnan(empty["mean_shift"])
    assert list(empty) == SHIFT_COLUMNS
    with pytest.raises(ValueError, match="aligned"):
        paired_shift([1, 2], [1], None)
    with pytest.raises(ValueError, match="whole grades"):
        paired_shift([1.0, np.nan], [1, 2], None)
    with pytest.raises(ValueError, match="query of every pair"):
        paired_shift([1, 2], [1, 2], ["q"])
    assert sign_test_p(0, 0) == 1.0
