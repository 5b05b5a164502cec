"""Krippendorff's alpha (voirdire.stats.reliability) and kappa at each binarisation cut: the point
estimate is the ``krippendorff`` package's; the bootstrap draws, computed from confusion counts,
equal the package run on the resampled pairs themselves; the cut at the binary threshold is
kappa_binary, interval and all."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

krippendorff = pytest.importorskip("krippendorff")

from voirdire.judges import Scale
from voirdire.stats import kappa_intervals, kappas, per_query_confusion, query_resamples
from voirdire.stats.agreement import cuts, kappa_cuts
from voirdire.stats.reliability import (
    alpha_draws,
    alpha_from_counts,
    alpha_interval,
    krippendorff_alpha,
)

GRADES = [0, 1, 2, 3]


def graded(seed: int, queries: int = 15, per_query: int = 20) -> pd.DataFrame:
    """Human grades skewed to 0 (as TREC's), a judge within a grade of them, query by query."""
    rng = np.random.default_rng(seed)
    query = np.repeat([f"q{i}" for i in range(queries)], per_query)
    human = rng.choice(4, len(query), p=[0.5, 0.25, 0.15, 0.1])
    judge = np.clip(human + rng.integers(-1, 2, len(query)), 0, 3)
    return pd.DataFrame({"query_id": query, "relevance_human": human, "relevance_judge": judge})


def package(human, judge, level: str) -> float:
    return float(
        krippendorff.alpha(reliability_data=np.vstack([human, judge]).astype(float), level_of_measurement=level)
    )


@pytest.mark.parametrize("level", ["ordinal", "interval", "nominal"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_alpha_from_confusion_counts_equals_the_package(level, seed):
    pairs = graded(seed)
    human, judge = pairs["relevance_human"].to_numpy(), pairs["relevance_judge"].to_numpy()
    counts = per_query_confusion(["all"] * len(pairs), human.tolist(), judge.tolist(), GRADES, GRADES)[0]
    expected = package(human, judge, level)
    assert float(alpha_from_counts(counts, GRADES, level)) == pytest.approx(expected, abs=1e-12)
    assert krippendorff_alpha(human, judge, level) == pytest.approx(expected, abs=1e-12)
    # a grade neither side used (no 3 here) changes nothing: the package sees only the values present
    low = np.minimum(human, 2), np.minimum(judge, 2)
    counts = per_query_confusion(["all"] * len(pairs), low[0].tolist(), low[1].tolist(), GRADES, GRADES)[0]
    assert float(alpha_from_counts(counts, GRADES, level)) == pytest.approx(package(*low, level), abs=1e-12)


@pytest.mark.parametrize("level", ["ordinal", "interval"])
def test_every_bootstrap_draw_equals_the_package_on_the_resampled_pairs(level):
    """The draws come from summed per-query confusion counts; the package, given the pairs of the
    resampled queries themselves (each query repeated as often as it was drawn), agrees."""
    pairs = graded(4)
    queries = pairs["query_id"].to_numpy()
    order = list(dict.fromkeys(queries))
    times = query_resamples(len(order), 6, 11)
    draws = alpha_draws(
        queries.tolist(), pairs["relevance_human"].tolist(), pairs["relevance_judge"].tolist(), GRADES, level, times
    )
    for draw, weights in zip(draws, times, strict=True):
        picked = np.concatenate(
            [np.flatnonzero(queries == q).repeat(int(w)) for q, w in zip(order, weights, strict=True)]
        )
        expected = package(
            pairs["relevance_human"].to_numpy()[picked], pairs["relevance_judge"].to_numpy()[picked], level
        )
        assert draw == pytest.approx(expected, abs=1e-12)


def test_the_interval_is_the_percentile_interval_of_those_draws_and_holds_the_point():
    pairs = graded(5)
    found = alpha_interval(pairs, GRADES, "ordinal", resamples=300, seed=7)
    times = query_resamples(pairs["query_id"].nunique(), 300, 7)
    draws = alpha_draws(
        pairs["query_id"].tolist(),
        pairs["relevance_human"].tolist(),
        pairs["relevance_judge"].tolist(),
        GRADES,
        "ordinal",
        times,
    )
    assert (found["ci_low"], found["ci_high"]) == pytest.approx(tuple(np.percentile(draws, [2.5, 97.5])))
    assert found["ci_low"] < found["alpha"] < found["ci_high"] and found["degenerate"] == 0
    assert found["alpha"] == pytest.approx(package(pairs["relevance_human"], pairs["relevance_judge"], "ordinal"))


def test_alpha_is_undefined_where_no_disagreement_is_expected():
    """One value on both sides: the package refuses it; here it is NaN, and a draw of only such
    queries is counted as degenerate, not dropped silently."""
    with pytest.raises(ValueError):
        krippendorff.alpha(reliability_data=[[1.0, 1.0], [1.0, 1.0]], level_of_measurement="ordinal")
    assert math.isnan(krippendorff_alpha([1, 1], [1, 1], "ordinal"))
    assert math.isnan(krippendorff_alpha([], [], "interval"))
    assert math.isnan(float(alpha_from_counts(np.zeros((4, 4)), GRADES, "interval")))
    # two queries: one all 0 on both sides, one mixed; the draws of the first alone are undefined
    pairs = pd.DataFrame(
        {
            "query_id": ["a"] * 4 + ["b"] * 4,
            "relevance_human": [0, 0, 0, 0, 0, 1, 2, 3],
            "relevance_judge": [0, 0, 0, 0, 0, 1, 3, 3],
        }
    )
    found = alpha_interval(pairs, GRADES, "interval", resamples=400, seed=1)
    assert 0 < found["degenerate"] < 400 and not math.isnan(found["ci_low"])
    with pytest.raises(ValueError, match="level of measurement"):
        krippendorff_alpha([0, 1], [1, 0], "ratio-ish")


def test_kappa_at_each_cut_binarises_both_sides_there_and_the_threshold_cut_is_kappa_binary():
    pairs = graded(6)
    scale = Scale(0, 3, 2)
    row = kappa_cuts(pairs, scale, scale, resamples=300, seed=5)
    assert cuts(scale) == [1, 2, 3]
    for cut in cuts(scale):
        human, judge = (pairs["relevance_human"] >= cut).astype(int), (pairs["relevance_judge"] >= cut).astype(int)
        assert row[f"kappa_cut_{cut}"] == pytest.approx(cohen_kappa_score(human, judge))
        assert row[f"kappa_cut_{cut}_ci_low"] < row[f"kappa_cut_{cut}"] < row[f"kappa_cut_{cut}_ci_high"]
    # the same resamples as kappa_intervals': the threshold's cut is kappa_binary, interval included
    binary = kappa_intervals(pairs, scale, scale, resamples=300, seed=5)
    assert row["kappa_cut_2"] == pytest.approx(
        kappas(pairs["relevance_human"], pairs["relevance_judge"], scale, scale)["kappa_binary"]
    )
    assert (row["kappa_cut_2_ci_low"], row["kappa_cut_2_ci_high"]) == (
        binary["kappa_binary_ci_low"],
        binary["kappa_binary_ci_high"],
    )
    assert row["kappa_cut_degenerate"] == 0


def test_a_binary_judge_keeps_its_labels_at_every_cut_of_the_human_scale():
    """A 0/1 judge against 0-3 humans: each cut asks which human cut its "relevant" matches."""
    pairs = graded(7)
    judge = (pairs["relevance_human"] >= 1).astype(int)  # relevant means "at least related"
    pairs = pairs.assign(relevance_judge=judge)
    row = kappa_cuts(pairs, Scale(0, 3, 2), Scale(0, 1, 1), resamples=200, seed=2)
    assert row["kappa_cut_1"] == 1 and row["kappa_cut_1_ci_low"] == 1
    assert row["kappa_cut_2"] < 1 and row["kappa_cut_3"] < row["kappa_cut_2"]
    assert row["kappa_cut_3"] == pytest.approx(cohen_kappa_score((pairs["relevance_human"] >= 3).astype(int), judge))
