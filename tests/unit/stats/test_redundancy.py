"""The members' error correlation and Kish's n_eff (voirdire.stats.redundancy) against their
definitions computed another way: each grade's means removed with pandas, the correlation of the
residuals by scipy, a resample by repeating the drawn queries' rows."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import pearsonr

from voirdire.stats import error_correlations, kish_n_eff, query_resamples


def panel(seed: int, queries: int = 12, per_query: int = 15, members: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    n = queries * per_query
    frame = pd.DataFrame({"query_id": np.repeat([f"q{i}" for i in range(queries)], per_query)})
    frame["human"] = rng.integers(0, 4, n).astype(float)
    shared = rng.normal(size=n)
    for m in range(members):
        frame[f"m{m}"] = np.clip(np.round(frame["human"] + 0.6 * shared + rng.normal(size=n)), 0, 3)
    frame.loc[rng.random(n) < 0.1, "m1"] = np.nan  # a member that leaves some pairs unanswered
    return frame


def by_definition(frame: pd.DataFrame, a: str, b: str) -> float:
    both = frame.dropna(subset=[a, b, "human"])
    residuals = both[[a, b]] - both.groupby("human")[[a, b]].transform("mean")
    return pearsonr(residuals[a], residuals[b]).statistic


@pytest.mark.parametrize("seed", range(5))
def test_the_correlation_is_the_correlation_of_within_grade_residuals(seed):
    frame = panel(seed)
    members = ["m0", "m1", "m2"]
    found = error_correlations(frame[members].to_numpy(), frame["human"], frame["query_id"], resamples=50, seed=seed)
    assert found.pairs == ((0, 1), (0, 2), (1, 2))
    for (i, j), r, used in zip(found.pairs, found.point, found.used):
        assert r == pytest.approx(by_definition(frame, members[i], members[j]), abs=1e-12)
        assert used == len(frame.dropna(subset=[members[i], members[j]]))
    assert found.mean == pytest.approx(np.mean(found.point))


def test_each_draw_is_the_statistic_of_the_resampled_queries():
    """A resample repeats each drawn query's rows: the draw equals the definition on those rows
    (each grade's means taken afresh in the resample)."""
    frame = panel(7)
    members = ["m0", "m1", "m2"]
    found = error_correlations(frame[members].to_numpy(), frame["human"], frame["query_id"], resamples=20, seed=3)
    queries = list(dict.fromkeys(frame["query_id"]))
    times = query_resamples(len(queries), 20, 3)
    for draw in (0, 7, 19):
        parts = [frame[frame["query_id"] == q] for q, k in zip(queries, times[draw]) for _ in range(int(k))]
        resampled = pd.concat(parts, ignore_index=True)
        for (i, j), r in zip(found.pairs, found.draws[draw]):
            assert r == pytest.approx(by_definition(resampled, members[i], members[j]), abs=1e-10)


def test_kish_n_eff():
    assert kish_n_eff(3, 0.0) == pytest.approx(3)
    assert kish_n_eff(3, 1.0) == pytest.approx(1)
    assert kish_n_eff(5, 0.25) == pytest.approx(5 / 2)
    assert kish_n_eff(3, -0.25) == pytest.approx(6)  # anti-correlated errors: worth more than 3
    assert math.isnan(kish_n_eff(3, -0.5)) and math.isnan(kish_n_eff(3, math.nan))
    assert np.allclose(kish_n_eff(4, np.array([0.0, 1.0])), [4.0, 1.0])


def test_a_member_without_spread_within_its_grades_has_no_correlation():
    """A member that copies the human grade has no residual: its correlation is undefined (NaN),
    never 0."""
    frame = panel(1)
    frame["m2"] = frame["human"]
    found = error_correlations(frame[["m0", "m2"]].to_numpy(), frame["human"], frame["query_id"], resamples=20)
    assert math.isnan(found.point[0]) and np.isnan(found.draws).all()
