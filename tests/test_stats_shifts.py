"""The one paired label-shift test (:func:`voirdire.stats.paired_shift`): the sign test is scipy's
exact binomial test, Stuart-Maxwell is statsmodels', the interval is scipy's t interval, each
called here on the same inputs; a planted shift is found with its sign, a clean one is not."""

import math

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import SquareTable

from voirdire.stats import SHIFT_COLUMNS, paired_shift, sign_test_p, stuart_maxwell


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


def test_eight_up_two_down_is_the_exact_sign_test_not_a_signed_rank_test():
    before, after = moved(8, 2, 90)
    row = paired_shift(before, after)
    assert list(row) == SHIFT_COLUMNS
    assert (row["n"], row["up"], row["down"], row["same"]) == (100, 8, 2, 90)
    assert row["sign_p"] == pytest.approx(stats.binomtest(8, 10, 0.5).pvalue)
    assert row["sign_p"] == pytest.approx(0.109, abs=5e-4)  # 2 * P(X <= 2), X ~ Bin(10, 1/2) = 112/1024
    # the two Wilcoxon rules that disagreed before give other answers on these pairs
    diff = after - before
    assert abs(stats.wilcoxon(diff, zero_method="wilcox").pvalue - row["sign_p"]) > 0.03
    assert abs(stats.wilcoxon(diff, zero_method="zsplit").pvalue - row["sign_p"]) > 0.1


def test_mean_shift_and_its_t_interval_over_pairs():
    rng = np.random.default_rng(1)
    before = rng.integers(0, 4, 60)
    after = np.clip(before + rng.choice([-1, 0, 0, 1, 1], 60), 0, 3)
    row = paired_shift(before, after, confidence=0.9)
    diff = after - before
    reference = stats.ttest_1samp(diff, 0.0).confidence_interval(0.9)
    assert row["mean_shift"] == pytest.approx(diff.mean())
    assert (row["mean_shift_ci_low"], row["mean_shift_ci_high"]) == pytest.approx((reference.low, reference.high))
    assert row["mean_before"] == pytest.approx(before.mean()) and row["mean_after"] == pytest.approx(after.mean())
    assert row["up_share"] + row["down_share"] + row["same_share"] == pytest.approx(1)


def test_stuart_maxwell_is_statsmodels_on_the_same_table():
    rng = np.random.default_rng(2)
    before = rng.integers(0, 4, 200)
    after = np.clip(before + rng.choice([-1, 0, 1, 1], 200), 0, 3)
    grades = [0, 1, 2, 3]
    reference = SquareTable(crosstab(before, after, grades), shift_zeros=False).homogeneity()
    statistic, df, p = stuart_maxwell(before, after)
    assert statistic == pytest.approx(reference.statistic) and df == reference.df == 3
    assert p == pytest.approx(reference.pvalue)
    assert paired_shift(before, after)["stuart_maxwell_p"] == pytest.approx(reference.pvalue)


def test_stuart_maxwell_leaves_out_a_grade_no_pair_moved_from_or_to():
    # grade 3 only on the diagonal: statsmodels' full table is singular; the grades that moved are not
    before = np.array([0] * 10 + [1] * 10 + [3] * 5)
    after = np.array([1] * 6 + [0] * 4 + [1] * 8 + [0] * 2 + [3] * 5)
    statistic, df, p = stuart_maxwell(before, after)
    reference = SquareTable(crosstab(before[:20], after[:20], [0, 1]), shift_zeros=False).homogeneity()
    assert statistic == pytest.approx(reference.statistic) and df == 1 and p == pytest.approx(reference.pvalue)
    # 2 x 2: McNemar's chi-squared without continuity correction, (b - c)^2 / (b + c)
    assert statistic == pytest.approx((6 - 2) ** 2 / (6 + 2))
    assert stuart_maxwell(np.array([2, 2]), np.array([2, 2])) == (0.0, 0, 1.0)


def test_a_planted_rise_is_found_and_a_clean_judge_is_not():
    rng = np.random.default_rng(3)
    before = rng.integers(0, 3, 80)
    planted = paired_shift(before, np.where(rng.random(80) < 0.3, before + 1, before))
    assert planted["sign_p"] < 0.001 and planted["mean_shift"] > 0 and planted["down"] == 0
    assert planted["mean_shift_ci_low"] > 0 and planted["stuart_maxwell_p"] < 0.01
    noise = rng.choice([-1, 0, 0, 1], 80)  # as many up as down, in expectation
    clean = paired_shift(before + 1, before + 1 + noise)
    assert clean["sign_p"] > 0.05 and clean["mean_shift_ci_low"] < 0 < clean["mean_shift_ci_high"]
    same = paired_shift(before, before)
    assert same["sign_p"] == 1 and same["mean_shift_ci_low"] == same["mean_shift_ci_high"] == 0
    assert same["stuart_maxwell_p"] == 1


def test_empty_misaligned_and_unparsed_inputs():
    empty = paired_shift([], [])
    assert empty["n"] == 0 and math.isnan(empty["sign_p"]) and math.isnan(empty["mean_shift"])
    assert list(empty) == SHIFT_COLUMNS
    with pytest.raises(ValueError, match="aligned"):
        paired_shift([1, 2], [1])
    with pytest.raises(ValueError, match="whole grades"):
        paired_shift([1.0, np.nan], [1, 2])
    assert sign_test_p(0, 0) == 1.0
