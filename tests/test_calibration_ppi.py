"""PPI calibration against ppi_py, the implementation by the method's authors: the same inputs go
to our functions and to theirs. And the coverage columns count what they say they count."""

import numpy as np
import pandas as pd
import pytest
from ppi_py import classical_mean_ci, ppi_mean_ci, ppi_mean_pointestimate

from voirdire.audits.calibration import calibration_curve, estimates, human_mean, ppi_mean
from voirdire.stats import kendall_tau


def data(queries=30, systems=4, bias=0.2, seed=5):
    """Human per-query scores and a judge's: correlated with the humans, off by a planted bias."""
    rng = np.random.default_rng(seed)
    human = pd.DataFrame(rng.uniform(0.2, 0.9, (queries, systems)), index=[f"q{i:02d}" for i in range(queries)],
                         columns=[f"s{j}" for j in range(systems)])  # fmt: skip
    judge = human + bias * np.arange(systems) / systems + rng.normal(0, 0.1, human.shape)
    return human, judge


@pytest.mark.parametrize("k", [3, 5, 12])
def test_ppi_mean_is_ppi_pys_power_tuned_estimate_and_95_percent_interval(k):
    human, judge = data()
    y, f = human["s2"].to_numpy(), judge["s2"].to_numpy()
    theta, low, high = ppi_mean(y[:k], f[:k], f[k:])
    assert theta == pytest.approx(float(ppi_mean_pointestimate(y[:k], f[:k], f[k:], lam=None)[0]))
    expected = ppi_mean_ci(y[:k], f[:k], f[k:], alpha=0.05, lam=None)
    assert (low, high) == pytest.approx((float(expected[0][0]), float(expected[1][0])))
    assert low < theta < high


def test_the_humans_alone_get_the_same_interval_family():
    human, _ = data()
    y = human["s1"].to_numpy()[:5]
    mean, low, high = human_mean(y)
    expected = classical_mean_ci(y, alpha=0.05)
    assert mean == pytest.approx(y.mean()) and (low, high) == pytest.approx(tuple(map(float, expected)))
    # the same family as PPI: with lambda = 0, ppi_py's PPI interval is the classical one
    lam0 = ppi_mean_ci(y, y, np.ones(20), alpha=0.05, lam=0)
    assert (low, high) == pytest.approx((float(lam0[0][0]), float(lam0[1][0])))


def test_estimates_send_the_labelled_queries_to_y_and_the_rest_to_the_unlabelled_side():
    human, judge = data()
    mask = np.zeros(len(human), dtype=bool)
    mask[[1, 4, 9, 20]] = True
    found = estimates(human, judge, mask)
    for system in human.columns:
        y, f = human[system].to_numpy(), judge[system].to_numpy()
        theta = float(ppi_mean_pointestimate(y[mask], f[mask], f[~mask], lam=None)[0])
        assert found.loc[system, "corrected"] == pytest.approx(theta)
        assert found.loc[system, "human_only"] == pytest.approx(y[mask].mean())


def test_a_judge_that_never_varies_lends_nothing_and_ppi_falls_back_to_the_humans():
    human, _ = data()
    y = human["s0"].to_numpy()
    assert ppi_mean(y[:5], np.full(5, 0.5), np.full(25, 0.5)) == pytest.approx(human_mean(y[:5]))


def test_coverage_is_of_the_human_mean_over_all_queries_and_tau_comes_with_its_spread():
    human, judge = data(bias=0.3)
    curve = calibration_curve(human, judge, ks=(5,), draws=15, seed=3).iloc[0]
    # replay the draws with ppi_py directly: what share of intervals contain the all-query human mean?
    rng, truth = np.random.default_rng(3), human.mean()
    hits, human_hits, taus = [], [], []
    for _ in range(15):
        mask = np.zeros(len(human), dtype=bool)
        mask[rng.choice(len(human), size=5, replace=False)] = True
        thetas = {}
        for system in human.columns:
            y, f = human[system].to_numpy(), judge[system].to_numpy()
            low, high = ppi_mean_ci(y[mask], f[mask], f[~mask], alpha=0.05, lam=None)
            hits.append(float(low[0]) <= truth[system] <= float(high[0]))
            low, high = classical_mean_ci(y[mask], alpha=0.05)
            human_hits.append(low <= truth[system] <= high)
            thetas[system] = float(ppi_mean_pointestimate(y[mask], f[mask], f[~mask], lam=None)[0])
        taus.append(kendall_tau(truth.values, pd.Series(thetas)[truth.index].values))
    assert curve["coverage_corrected"] == pytest.approx(np.mean(hits))
    assert curve["coverage_human_only"] == pytest.approx(np.mean(human_hits))
    assert curve["tau_corrected"] == pytest.approx(np.mean(taus))
    assert [curve[f"tau_corrected_p{q}"] for q in (10, 50, 90)] == pytest.approx(np.percentile(taus, [10, 50, 90]))
    assert curve["tau_corrected_p10"] < curve["tau_corrected_p90"]  # the draws do disagree


def test_with_a_clean_judge_and_many_queries_both_intervals_cover_near_their_level():
    human, judge = data(queries=200, systems=3, bias=0.0, seed=8)
    curve = calibration_curve(human, judge, ks=(40,), draws=60, seed=1).iloc[0]
    assert curve["coverage_corrected"] >= 0.9 and curve["coverage_human_only"] >= 0.9
    assert curve["ci_width_corrected"] < curve["ci_width_human_only"]  # the judge's scores help


def test_one_ppi_call_for_all_systems_equals_one_call_per_system():
    """estimates() tunes lambda per system in one ppi_py call; it equals ppi_mean per system
    (and the constant judge column falls back to the humans' interval, lambda = 0)."""
    from voirdire.audits.calibration import estimates, human_mean, ppi_mean

    rng = np.random.default_rng(3)
    human = pd.DataFrame(rng.random((30, 5)), columns=list("abcde"))
    judge = human + rng.normal(0, 0.2, human.shape)
    judge["e"] = 0.5  # a judge that does not vary on this system
    mask = np.zeros(30, dtype=bool)
    mask[rng.choice(30, 6, replace=False)] = True
    found = estimates(human, judge, mask)
    for system in human.columns:
        y, f = human[system].to_numpy(), judge[system].to_numpy()
        theta, low, high = ppi_mean(y[mask], f[mask], f[~mask])
        assert found.loc[system, ["corrected", "corrected_low", "corrected_high"]].tolist() == pytest.approx(
            [theta, low, high]
        )
        assert found.loc[system, ["human_only", "human_only_low", "human_only_high"]].tolist() == pytest.approx(
            list(human_mean(y[mask]))
        )
