"""The statistics engine (voirdire.stats): each piece against the maintained implementation it
wraps or against what was planted; the interval and test of a mean whose pairs cluster by query
holds its size where a pair-level test does not."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from voirdire.stats import (
    clustered_homogeneity,
    difference_in_differences,
    expected_false_flags,
    interval,
    query_mean_test,
    rbo,
    rbo_floor,
    rbo_scores,
    sign_flip_p,
    stuart_maxwell,
)


def test_rbo_refuses_ties_instead_of_breaking_them_by_name():
    """A judge that gives every system the same score: before, RBO was 1.0 or 0.444 depending
    on how the names sorted; now it is undefined."""
    same = np.full(9, 0.5)
    assert math.isnan(rbo_scores(np.linspace(1, 0, 9), same))
    assert math.isnan(rbo_scores(np.array([0.3, 0.3, 0.1]), np.array([0.3, 0.2, 0.1])))  # a partial tie too
    assert rbo_scores(np.array([0.3, 0.2, 0.1]), np.array([0.9, 0.5, 0.0])) == pytest.approx(1.0)


def test_the_rbo_floor_is_a_reversed_ranking():
    items = [str(i) for i in range(9)]
    assert rbo_floor(9) == pytest.approx(rbo(items, items[::-1]))
    assert 0.5 < rbo_floor(9) < 0.6  # far above 0: the number a reader compares RBO with


def test_undefined_draws_are_counted_not_dropped_silently():
    found = interval(np.array([0.1, np.nan, 0.2, 0.3, np.inf]))
    assert found.degenerate == 2 and found.low <= found.high
    assert interval(np.array([np.nan, np.nan])).degenerate == 2 and math.isnan(interval([np.nan]).low)


def test_the_sign_flip_test_is_scipys_permutation_test_and_exact_for_few_queries():
    totals = np.array([3.0, -1.0, 2.0, 4.0, 1.0, -2.0, 5.0])
    # exact: all 2^7 sign patterns
    signs = np.array(np.meshgrid(*[[-1, 1]] * len(totals))).reshape(len(totals), -1).T
    null = signs @ totals
    observed = totals.sum()
    greater, less = np.mean(null >= observed), np.mean(null <= observed)
    assert sign_flip_p(totals) == pytest.approx(min(1.0, 2 * min(greater, less)))
    assert sign_flip_p(np.zeros(5)) == 1.0 and math.isnan(sign_flip_p(np.array([])))


def test_the_clustered_homogeneity_test_is_stuart_maxwell_when_every_pair_is_its_own_query():
    rng = np.random.default_rng(4)
    before = rng.integers(0, 4, 300)
    after = np.clip(before + rng.choice([-1, 0, 0, 1, 1], 300), 0, 3)
    clustered = clustered_homogeneity(before, after, np.arange(300))
    reference = stuart_maxwell(before, after)  # statsmodels' SquareTable.homogeneity
    assert clustered[0] == pytest.approx(reference[0]) and clustered[1] == reference[1]
    assert clustered[2] == pytest.approx(reference[2])


def test_the_clustered_homogeneity_test_is_durkalskis_mcnemar_for_two_grades():
    rng = np.random.default_rng(5)
    queries = np.repeat(np.arange(20), 10)
    before = rng.integers(0, 2, 200)
    after = np.where(rng.random(200) < 0.3, 1 - before, before)
    statistic, df, p = clustered_homogeneity(before, after, queries)
    b = np.bincount(queries, weights=(before == 0) & (after == 1), minlength=20)  # 0 -> 1 per query
    c = np.bincount(queries, weights=(before == 1) & (after == 0), minlength=20)
    durkalski = (b.sum() - c.sum()) ** 2 / ((b - c) ** 2).sum()
    assert df == 1 and statistic == pytest.approx(durkalski) and p == pytest.approx(stats.chi2.sf(durkalski, 1))


def test_a_mean_shift_that_moves_whole_queries_at_random_is_not_flagged_more_than_alpha():
    """Each query's labels move +1 or -1 together, in a random direction: no shift on average.
    A pair-level test flags it often; the test over queries holds its size."""
    rng = np.random.default_rng(0)
    sims, flags, pair_flags = 300, 0, 0
    for _ in range(sims):
        queries = np.repeat(np.arange(20), 15)
        diff = np.repeat(rng.choice([-1.0, 1.0], 20), 15) * (rng.random(300) < 0.6)
        flags += query_mean_test(diff, queries, resamples=50)["p"] < 0.05
        up, down = int((diff > 0).sum()), int((diff < 0).sum())
        pair_flags += stats.binomtest(up, up + down).pvalue < 0.05
    assert flags / sims <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / sims)
    assert pair_flags / sims > 0.2  # what the pair-level sign test did


def test_a_planted_shift_is_found_with_its_sign():
    rng = np.random.default_rng(1)
    queries = np.repeat(np.arange(25), 8)
    diff = (rng.random(200) < 0.3).astype(float) - (rng.random(200) < 0.1)  # +0.2 on average
    found = query_mean_test(diff, queries)
    assert found["p"] < 0.01 and found["ci_low"] <= 0.2 <= found["ci_high"] and found["mean"] > 0


def test_difference_in_differences_is_a_one_sample_t_test_per_pair_of_systems():
    rng = np.random.default_rng(2)
    human = pd.DataFrame(rng.random((30, 3)), columns=["a", "b", "c"])
    judge = human + rng.normal(0, 0.05, (30, 3))
    judge["c"] += 0.2  # the judge sees c 0.2 better than the humans do
    table = difference_in_differences(human, judge).set_index(["system_a", "system_b"])
    d = (judge["a"] - judge["c"]) - (human["a"] - human["c"])
    assert table.loc[("a", "c"), "p"] == pytest.approx(stats.ttest_1samp(d, 0).pvalue)
    assert table.loc[("a", "c"), "disagrees"] and table.loc[("b", "c"), "disagrees"]
    assert not table.loc[("a", "b"), "disagrees"]
    same = difference_in_differences(human, human)
    assert not same["disagrees"].any() and (same["p"] == 1).all()  # a copy disagrees nowhere


def test_expected_false_flags_by_correction():
    assert expected_false_flags(40, 0.05) == pytest.approx(2.0)
    assert expected_false_flags(40, 0.05, "holm", families=2) == pytest.approx(0.10)  # two corrected families
    assert expected_false_flags(40, 0.05, "bh", discoveries=12) == pytest.approx(0.6)  # FDR of the discoveries


@pytest.mark.parametrize("queries", [2, 5, 13, 30])
def test_the_vectorised_sign_flip_is_scipys_permutation_test(queries):
    rng = np.random.default_rng(queries)
    totals = rng.normal(0.3, 1.0, queries).round(1)
    reference = stats.permutation_test(
        (totals,),
        lambda x, axis=-1: np.sum(x, axis=axis),
        permutation_type="samples",
        vectorized=True,
        n_resamples=9999,
        alternative="two-sided",
        random_state=np.random.default_rng(0),
    ).pvalue
    ours = sign_flip_p(totals)
    if 2**queries <= 10000:
        assert ours == pytest.approx(reference, rel=1e-9)  # both exact
    else:
        assert ours == pytest.approx(reference, abs=0.02)  # both Monte Carlo, different draws


def test_a_single_query_is_one_unit_of_evidence():
    assert sign_flip_p(np.array([40.0])) == 1.0


def test_noise_compresses_a_wide_gap_but_does_not_reverse_it():
    rng = np.random.default_rng(3)
    human = pd.DataFrame({"strong": rng.normal(0.8, 0.05, 40), "weak": rng.normal(0.4, 0.05, 40)})
    noisy = human * 0.6 + 0.2 + rng.normal(0, 0.02, (40, 2))  # a judge that sees every gap smaller
    table = difference_in_differences(human, noisy).iloc[0]
    assert table["disagrees"] and not table["reversed"]
    flipped = human[["weak", "strong"]].set_axis(["strong", "weak"], axis=1)  # the judge swaps them
    assert difference_in_differences(human, flipped).iloc[0]["reversed"]


def test_column_mean_intervals_are_the_engines_mean_interval_of_each_column_and_near_scipys():
    """Every column at once gives each column's own interval (the same draws); a constant column
    its point, a column with missing values the interval of its finite ones; and the bounds are
    those of scipy's percentile bootstrap of the mean, up to the draws."""
    from voirdire.stats import column_mean_intervals, mean_interval

    rng = np.random.default_rng(3)
    values = rng.beta(2, 5, size=(43, 6))
    values[:, 2] = 0.3
    values[[4, 17], 5] = np.nan
    low, high = column_mean_intervals(values, resamples=2000, seed=9)
    for column in range(values.shape[1]):
        finite = values[:, column][np.isfinite(values[:, column])]
        expected = mean_interval(finite, resamples=2000, seed=9)
        assert (low[column], high[column]) == pytest.approx((expected.low, expected.high), rel=1e-12)
        assert low[column] - 1e-12 <= finite.mean() <= high[column] + 1e-12
    assert (low[2], high[2]) == (0.3, 0.3)
    reference = stats.bootstrap(
        (values[:, 0],), np.mean, n_resamples=4000, method="percentile", random_state=np.random.default_rng(0)
    ).confidence_interval
    width = reference.high - reference.low
    assert low[0] == pytest.approx(reference.low, abs=0.1 * width)
    assert high[0] == pytest.approx(reference.high, abs=0.1 * width)
    with pytest.raises(ValueError, match="queries, columns"):
        column_mean_intervals(values[:, 0])
