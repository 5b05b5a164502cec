"""PPI calibration against ppi_py, the implementation by the method's authors: the same inputs go
to our functions and to theirs. And the coverage columns count what they say they count, of the
mean over the N queries at hand (a finite population: k of N labelled, drawn without
replacement), so both intervals carry the finite-population correction sqrt(1 - k/N)."""

import numpy as np
import pandas as pd
import pytest
from ppi_py import classical_mean_ci, ppi_mean_ci, ppi_mean_pointestimate

from voirdire.audits.calibration import calibration_curve, estimates, fpc, human_mean, ppi_mean
from voirdire.stats import kendall_tau


def data(queries=30, systems=4, bias=0.2, seed=5):
    """Human per-query scores and a judge's: correlated with the humans, off by a planted bias."""
    rng = np.random.default_rng(seed)
    human = pd.DataFrame(
        rng.uniform(0.2, 0.9, (queries, systems)),
        index=[f"q{i:02d}" for i in range(queries)],
        columns=[f"s{j}" for j in range(systems)],
    )
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
    # the target is the mean over these 30 queries: the half-width shrinks by sqrt(1 - k/30), about theta
    factor = np.sqrt(1 - k / 30)
    assert ppi_mean(y[:k], f[:k], f[k:], population=30) == pytest.approx(
        (theta, theta - factor * (theta - low), theta + factor * (high - theta))
    )


def test_the_humans_alone_get_the_same_interval_family():
    human, _ = data()
    y = human["s1"].to_numpy()[:5]
    mean, low, high = human_mean(y)
    expected = classical_mean_ci(y, alpha=0.05)
    assert mean == pytest.approx(y.mean()) and (low, high) == pytest.approx(tuple(map(float, expected)))
    # the same family as PPI: with lambda = 0, ppi_py's PPI interval is the classical one
    lam0 = ppi_mean_ci(y, y, np.ones(20), alpha=0.05, lam=0)
    assert (low, high) == pytest.approx((float(lam0[0][0]), float(lam0[1][0])))
    half = (high - low) / 2 * np.sqrt(1 - 5 / 12)
    assert human_mean(y, population=12) == pytest.approx((mean, mean - half, mean + half))
    assert fpc(5, None) == 1 and fpc(12, 12) == 0
    with pytest.raises(ValueError, match="population"):
        fpc(13, 12)


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
    # replay the draws with ppi_py directly: what share of intervals, their half-widths times
    # sqrt(1 - 5/30), contain the all-query human mean?
    rng, truth, factor = np.random.default_rng(3), human.mean(), np.sqrt(1 - 5 / len(human))
    assert curve["queries"] == len(human) and curve["fpc"] == pytest.approx(factor)
    hits, human_hits, taus = [], [], []
    for _ in range(15):
        mask = np.zeros(len(human), dtype=bool)
        mask[rng.choice(len(human), size=5, replace=False)] = True
        thetas = {}
        for system in human.columns:
            y, f = human[system].to_numpy(), judge[system].to_numpy()
            theta = float(ppi_mean_pointestimate(y[mask], f[mask], f[~mask], lam=None)[0])
            low, high = ppi_mean_ci(y[mask], f[mask], f[~mask], alpha=0.05, lam=None)
            half = (float(high[0]) - float(low[0])) / 2 * factor
            hits.append(theta - half <= truth[system] <= theta + half)
            low, high = classical_mean_ci(y[mask], alpha=0.05)
            half = (high - low) / 2 * factor
            human_hits.append(y[mask].mean() - half <= truth[system] <= y[mask].mean() + half)
            thetas[system] = theta
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
    for finite, population in ((True, 30), (False, None)):
        found = estimates(human, judge, mask, finite=finite)
        for system in human.columns:
            y, f = human[system].to_numpy(), judge[system].to_numpy()
            theta, low, high = ppi_mean(y[mask], f[mask], f[~mask], population=population)
            assert found.loc[system, ["corrected", "corrected_low", "corrected_high"]].tolist() == pytest.approx(
                [theta, low, high]
            )
            assert found.loc[system, ["human_only", "human_only_low", "human_only_high"]].tolist() == pytest.approx(
                list(human_mean(y[mask], population=population))
            )


@pytest.mark.parametrize("systems", [1, 5, 101])
def test_lambda_tuned_once_gives_ppi_pys_own_numbers_to_the_bit(systems):
    """tuned_lambda is the lambda ppi_py tunes inside each of its calls: passing it gives the point
    estimate and interval ppi_py gives with lam=None, bit for bit, per system ("element") and for
    one lambda over all ("overall")."""
    from voirdire.audits.calibration import tuned_lambda

    rng = np.random.default_rng(systems)
    y = rng.random((7, systems))
    f, u = y + rng.normal(0, 0.2, y.shape), rng.random((36, systems))
    for mode in ("element", "overall"):
        lam = tuned_lambda(y, f, u, mode)
        assert np.all((0 <= np.asarray(lam)) & (np.asarray(lam) <= 1)) and np.ptp(np.atleast_1d(lam)) >= 0
        np.testing.assert_array_equal(
            ppi_mean_pointestimate(y, f, u, lam=lam), ppi_mean_pointestimate(y, f, u, lam=None, lam_optim_mode=mode)
        )
        for ours, theirs in zip(
            ppi_mean_ci(y, f, u, alpha=0.05, lam=lam),
            ppi_mean_ci(y, f, u, alpha=0.05, lam=None, lam_optim_mode=mode),
            strict=True,
        ):
            np.testing.assert_array_equal(ours, theirs)
    one = tuned_lambda(y[:, 0], f[:, 0], u[:, 0], "overall")  # one system given as 1-D arrays, as ppi_mean does
    assert one == ppi_py_lambda(y[:, 0], f[:, 0], u[:, 0])


def ppi_py_lambda(y, f, u):
    """The lambda ppi_py's untuned point estimate used, read back from it: theta = lam * (mean(u) -
    mean(f)) + mean(y) (for a test only: exact up to rounding)."""
    theta = float(np.squeeze(ppi_mean_pointestimate(y, f, u, lam=None)))
    return pytest.approx((theta - y.mean()) / (u.mean() - f.mean()), abs=1e-9)


def population(queries=43, systems=4, seed=43):
    """A population of N queries with per-query human scores (a query effect shared by the systems,
    system means apart, noise) and a judge's: the humans' scores plus a bias plus noise."""
    rng = np.random.default_rng(seed)
    effect = rng.normal(0, 0.12, (queries, 1))
    human = pd.DataFrame(
        np.clip(np.linspace(0.4, 0.7, systems) + effect + rng.normal(0, 0.1, (queries, systems)), 0, 1),
        index=[f"q{i:02d}" for i in range(queries)],
        columns=[f"s{j}" for j in range(systems)],
    )
    return human, human + 0.1 + rng.normal(0, 0.08, human.shape)


def test_the_corrected_interval_covers_the_mean_of_the_n_queries_at_its_level_the_uncorrected_one_over_covers():
    """N = 43 queries, k = 20 labelled, drawn without replacement 2000 times. The target, the mean over
    the 43, varies less than an infinite population's mean would: var = (1 - k/N) S^2 / k. The
    corrected z interval's coverage is the z interval's own (scipy reference: ppi_py's z interval
    with the std over k (ddof 0) covers P(|t_{k-1}| <= z sqrt((k-1)/k)) of the time, 0.929 at k =
    20); ppi_py's interval as it is covers about 98% (the same reference, z / sqrt(1 - k/N)), so a
    coverage column measured with it could never show under-coverage."""
    from scipy import stats

    human, judge = population()
    n, k, draws, seed = len(human), 20, 2000, 11
    curve = calibration_curve(human, judge, ks=(k,), draws=draws, seed=seed).iloc[0]
    # replay the draws with ppi_py's classical interval, with and without the correction
    rng, truth, factor = np.random.default_rng(seed), human.mean(), np.sqrt(1 - k / n)
    corrected, uncorrected, widths = [], [], []
    for _ in range(draws):
        mask = np.zeros(n, dtype=bool)
        mask[rng.choice(n, size=k, replace=False)] = True
        for system in human.columns:
            y = human[system].to_numpy()[mask]
            low, high = classical_mean_ci(y, alpha=0.05)
            half = (high - low) / 2
            uncorrected.append(abs(y.mean() - truth[system]) <= half)
            corrected.append(abs(y.mean() - truth[system]) <= factor * half)
            widths.append(2 * factor * half)
    assert curve["coverage_human_only"] == pytest.approx(np.mean(corrected))
    assert curve["ci_width_human_only"] == pytest.approx(np.mean(widths))

    z = stats.norm.ppf(0.975)
    reference = 2 * stats.t.cdf(z * np.sqrt((k - 1) / k), k - 1) - 1
    reference_uncorrected = 2 * stats.t.cdf(z * np.sqrt((k - 1) / k) / factor, k - 1) - 1
    assert curve["coverage_human_only"] == pytest.approx(reference, abs=0.015)
    assert 0.91 <= curve["coverage_human_only"] <= 0.97  # near the level: under-coverage can now show
    assert np.mean(uncorrected) == pytest.approx(reference_uncorrected, abs=0.015)
    assert np.mean(uncorrected) > 0.975  # the uncorrected interval over-covers this target
    # PPI's corrected interval is exact to first order or conservative (the module docstring)
    assert curve["coverage_corrected"] >= 0.93
    assert curve["ci_width_corrected"] < curve["ci_width_human_only"]
