"""Inject -> recover: persona-conditioned judging and prompt sensitivity (docs/probes.md).

Every test plants a known effect in synthetic tables (a condition identical to the baseline,
two adjacent systems swapped, every grade one lower, labels lost) and checks that the
analysis finds exactly that effect and nothing else.
"""

import math

import numpy as np
import pandas as pd
import pytest

from voirdire.probes.sensitivity import (
    ALL,
    BY_CONDITION_COLUMNS,
    CONSISTENCY_COLUMNS,
    NO_RERUN,
    RERUN,
    agreement,
    direction_consistency,
    displacement,
    displacement_heatmap,
    sensitivity,
    sensitivity_chart,
    why_no_consistency,
)
from voirdire.stats import mean_interval, query_picks, rbo

SYSTEMS = [f"s{i}" for i in range(8)]
QUERIES = [f"q{i}" for i in range(12)]
DOCS = 20  # judged passages per query
BASELINES = {"judgeA": "umbrela", "judgeB": "umbrela"}


def base_scores(seed: int = 1) -> dict[str, np.ndarray]:
    """Per-query nDCG of each system: system i has mean 0.85 - 0.08 i, per-query noise sd 0.03,
    so the systems' order by mean is s0 > s1 > ... > s7."""
    rng = np.random.default_rng(seed)
    return {s: 0.85 - 0.08 * i + rng.normal(0, 0.03, len(QUERIES)) for i, s in enumerate(SYSTEMS)}


def swapped(scores: dict[str, np.ndarray], a: str, b: str) -> dict[str, np.ndarray]:
    """The same scores with systems a and b exchanged, query by query."""
    out = dict(scores)
    out[a], out[b] = scores[b], scores[a]
    return out


def per_query(conditions: dict[str, dict[str, np.ndarray]], group: str = "judgeA", dataset: str = "dl20"):
    rows = [
        (dataset, group, condition, system, q, float(v))
        for condition, scores in conditions.items()
        for system, values in scores.items()
        for q, v in zip(QUERIES, values, strict=True)
    ]
    return pd.DataFrame(rows, columns=["dataset", "group", "condition", "system", "query_id", "ndcg"])


def human_scores(scores: dict[str, np.ndarray], dataset: str = "dl20") -> pd.DataFrame:
    frame = per_query({"human": scores}, dataset=dataset)
    return frame.drop(columns=["group", "condition"])


def grades(seed: int = 5) -> tuple[pd.DataFrame, np.ndarray]:
    """(human labels, a baseline judge's grades near them: the human grade +-1, clipped to 0..3)."""
    rng = np.random.default_rng(seed)
    human = rng.integers(0, 4, size=(len(QUERIES), DOCS))
    judged = np.clip(human + rng.integers(-1, 2, size=human.shape), 0, 3).astype(float)
    rows = [("dl20", q, f"{q}_d{d}", float(human[i, d])) for i, q in enumerate(QUERIES) for d in range(DOCS)]
    return pd.DataFrame(rows, columns=["dataset", "query_id", "doc_id", "relevance"]), judged


def labels(conditions: dict[str, np.ndarray], group: str = "judgeA") -> pd.DataFrame:
    rows = [
        ("dl20", group, condition, q, f"{q}_d{d}", float(grid[i, d]))
        for condition, grid in conditions.items()
        for i, q in enumerate(QUERIES)
        for d in range(DOCS)
    ]
    return pd.DataFrame(rows, columns=["dataset", "group", "condition", "query_id", "doc_id", "relevance"])


def dcg_scores(grid: np.ndarray, reference: np.ndarray, seed: int = 9) -> dict[str, np.ndarray]:
    """Per-query DCG@10 of each system's ranking under the grades ``grid``, normalised by the
    ideal DCG@10 of the ``reference`` grades (fixed, so a label set that grades lower can only
    score lower). System i ranks the passages by ``reference grade * (1 - i/8)`` plus noise."""
    rng = np.random.default_rng(seed)
    discounts = 1 / np.log2(np.arange(2, 12))
    out = {}
    for i, system in enumerate(SYSTEMS):
        values = []
        for q in range(len(QUERIES)):
            ideal = np.sum(np.sort(reference[q])[::-1][:10] * discounts)
            order = np.argsort(-(reference[q] * (1 - i / 8) + rng.normal(0, 0.5, DOCS)))[:10]
            values.append(float(np.sum(grid[q, order] * discounts) / ideal))
        out[system] = np.array(values)
    return out


def by_system(frame: pd.DataFrame, condition: str) -> pd.DataFrame:
    return frame[frame["condition"] == condition].set_index("system")


def one(frame: pd.DataFrame, **keys) -> pd.Series:
    mask = np.logical_and.reduce([frame[k] == v for k, v in keys.items()])
    rows = frame[mask]
    assert len(rows) == 1, rows
    return rows.iloc[0]


def test_a_condition_identical_to_the_baseline_moves_nothing():
    base = base_scores()
    human, judged = grades()
    shown = agreement(labels({"umbrela": judged, "same": judged.copy()}), human, BASELINES)
    same = one(shown, condition="same")
    assert same["kappa_qw_baseline"] == pytest.approx(1.0)  # computed, not the baseline's own 1 by definition
    assert same["shift_vs_baseline"] == 0
    assert same["kappa_qw_human"] == pytest.approx(one(shown, condition="umbrela")["kappa_qw_human"])

    moves = displacement(per_query({"umbrela": base, "same": {s: v.copy() for s, v in base.items()}}), BASELINES)
    assert set(moves["condition"]) == {"same"}  # the baseline is no condition of its own
    assert len(moves) == len(SYSTEMS)
    assert (moves["delta_r"] == 0).all() and (moves["ndcg_shift"] == 0).all()
    assert list(moves.sort_values("rank")["system"]) == SYSTEMS  # the planted order

    systems, conditions = sensitivity(moves)
    row = one(conditions, condition="same")
    assert row["affected_systems"] == 0 and row["max_abs_delta_r"] == 0 and row["mean_abs_delta_r"] == 0
    assert (row["ci_low_systems"], row["ci_high_systems"]) == (0, 0)
    assert (systems["sensitivity"] == 0).all()
    _, conditions = sensitivity(moves, per_query=per_query({"umbrela": base, "same": base}), baselines=BASELINES)
    row = one(conditions, condition="same")
    assert (row["ci_low_queries"], row["ci_high_queries"], row["degenerate_queries"]) == (0, 0, 0)


def test_swapping_two_adjacent_systems_is_found_and_nothing_else_moves():
    base = base_scores()
    moves = displacement(per_query({"umbrela": base, "swap": swapped(base, "s3", "s4")}), BASELINES)
    swap = by_system(moves, "swap")
    assert swap.loc["s3", "delta_r"] == 1  # s3 drops one place
    assert swap.loc["s4", "delta_r"] == -1  # s4 climbs one place
    assert (swap.drop(index=["s3", "s4"])["delta_r"] == 0).all()
    assert swap.loc["s3", "ndcg_shift"] < 0 < swap.loc["s4", "ndcg_shift"]
    assert (swap.drop(index=["s3", "s4"])["ndcg_shift"] == 0).all()
    assert swap.loc["s3", "ndcg_shift"] == pytest.approx(-swap.loc["s4", "ndcg_shift"])

    systems, conditions = sensitivity(moves)
    row = one(conditions, condition="swap")
    assert row["affected_systems"] == 2 and row["max_abs_delta_r"] == 1 and row["systems"] == len(SYSTEMS)
    assert row["mean_abs_delta_r"] == pytest.approx(2 / len(SYSTEMS))
    sens = systems.set_index("system")["sensitivity"]
    assert sens["s3"] == sens["s4"] == 1 and (sens.drop(["s3", "s4"]) == 0).all()


def test_sensitivity_averages_over_conditions_and_the_all_row_summarises_them():
    base = base_scores()
    moves = displacement(
        per_query({"umbrela": base, "swap34": swapped(base, "s3", "s4"), "swap01": swapped(base, "s0", "s1")}),
        BASELINES,
    )
    systems, conditions = sensitivity(moves)
    sens = systems.set_index("system")
    # each of s0, s1, s3, s4 moves one place under one of the two conditions
    assert sens.loc[["s0", "s1", "s3", "s4"], "sensitivity"].tolist() == [0.5] * 4
    assert (sens.loc[["s2", "s5", "s6", "s7"], "sensitivity"] == 0).all()
    assert (sens["conditions"] == 2).all()
    overall = one(conditions, condition=ALL)
    assert overall["conditions"] == 2 and overall["affected_systems"] == 4 and overall["max_abs_delta_r"] == 1
    per_condition = conditions[conditions["condition"] != ALL]["mean_abs_delta_r"]
    assert overall["mean_abs_delta_r"] == pytest.approx(per_condition.mean())


def test_labels_one_grade_lower_disagree_with_the_baseline_and_lower_every_score():
    human, judged = grades()
    lower = np.maximum(judged - 1, 0)
    shown = agreement(labels({"umbrela": judged, "lower": lower}), human, BASELINES).set_index("condition")
    assert shown.loc["lower", "kappa_qw_baseline"] < 1
    assert shown.loc["umbrela", "kappa_qw_baseline"] == 1
    assert shown.loc["lower", "shift_vs_baseline"] < 0  # stricter than the baseline
    assert shown.loc["lower", "shift_vs_human"] < shown.loc["umbrela", "shift_vs_human"]

    scores = per_query({"umbrela": dcg_scores(judged, judged), "lower": dcg_scores(lower, judged)})
    moves = displacement(scores, BASELINES)
    assert (moves["ndcg_shift"] < 0).all()
    _, conditions = sensitivity(moves)
    assert one(conditions, condition="lower")["mean_ndcg_shift"] < 0


def test_unlabelled_pairs_are_counted_and_left_out_of_kappa_never_read_as_zero():
    human, judged = grades()
    rng = np.random.default_rng(11)
    lost = rng.random(judged.shape) < 0.25
    holes = np.where(lost, np.nan, judged)
    zeros = np.where(lost, 0.0, judged)
    frame = labels({"umbrela": judged, "holes": holes, "zeros": zeros})
    shown = agreement(frame, human, BASELINES).set_index("condition")
    assert shown.loc["holes", "unlabelled"] == lost.sum()
    assert shown.loc["holes", "pairs"] == judged.size
    assert shown.loc["holes", "pairs_vs_baseline"] == judged.size - lost.sum()
    assert shown.loc["holes", "kappa_qw_baseline"] == pytest.approx(1.0)  # the labels left agree exactly
    assert shown.loc["zeros", "unlabelled"] == 0
    assert shown.loc["zeros", "kappa_qw_baseline"] < 1  # read as 0 they would disagree

    # a lost label is the same as a pair never asked about
    dropped = frame[~((frame["condition"] == "holes") & frame["relevance"].isna())]
    again = agreement(dropped, human, BASELINES).set_index("condition")
    assert again.loc["holes", "unlabelled"] == 0
    assert again.loc["holes", "kappa_qw_human"] == pytest.approx(shown.loc["holes", "kappa_qw_human"])
    assert again.loc["holes", "pairs_vs_human"] == shown.loc["holes", "pairs_vs_human"]


def test_the_interval_over_systems_is_the_engines_mean_interval_seeded_and_has_width_when_systems_differ():
    base = base_scores()
    shuffled = {s: base[t] for s, t in zip(SYSTEMS, ["s2", "s0", "s1", "s3", "s7", "s5", "s4", "s6"], strict=True)}
    moves = displacement(
        per_query({"umbrela": base, "swap": swapped(base, "s3", "s4"), "shuffle": shuffled}), BASELINES
    )
    systems, conditions = sensitivity(moves, seed=42)
    for _, row in conditions.iterrows():
        assert row["ci_low_systems"] <= row["mean_abs_delta_r"] <= row["ci_high_systems"]
    for condition in ["swap", "shuffle", ALL]:
        row = one(conditions, condition=condition)
        assert row["ci_high_systems"] - row["ci_low_systems"] > 0
    # the engine's interval of the mean over independent units (here: systems), with the same seed
    values = by_system(moves, "shuffle")["delta_r"].abs().to_numpy(dtype=float)
    found = mean_interval(values, seed=42)
    row = one(conditions, condition="shuffle")
    assert (row["ci_low_systems"], row["ci_high_systems"]) == (found.low, found.high)
    overall = mean_interval(systems["sensitivity"].to_numpy(dtype=float), seed=42)
    assert (one(conditions, condition=ALL)["ci_low_systems"], one(conditions, condition=ALL)["ci_high_systems"]) == (
        overall.low,
        overall.high,
    )
    again_systems, again = sensitivity(moves, seed=42)
    pd.testing.assert_frame_equal(conditions, again)
    pd.testing.assert_frame_equal(systems, again_systems)
    _, other = sensitivity(moves, seed=7)
    assert not other[["ci_low_systems", "ci_high_systems"]].equals(conditions[["ci_low_systems", "ci_high_systems"]])
    # without per-query scores there is no interval over queries, and no noise floor without a rerun
    assert conditions[["ci_low_queries", "ci_high_queries"]].isna().all().all()
    assert conditions["noise_floor_abs_delta_r"].isna().all() and (conditions["noise_floor"] == NO_RERUN).all()
    assert list(conditions.columns) == BY_CONDITION_COLUMNS


def near_tie(seed: int = 3) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Baseline scores where s3 and s4 are 0.004 apart on average with per-query noise sd 0.05
    (which one is ahead depends on the queries judged), and a condition that rescores them
    with fresh per-query noise of the same size: nothing but the queries' noise."""
    rng = np.random.default_rng(seed)
    base = {s: 0.85 - 0.08 * i + rng.normal(0, 0.005, len(QUERIES)) for i, s in enumerate(SYSTEMS)}
    base["s4"] = base["s3"] - 0.004 + rng.normal(0, 0.05, len(QUERIES))
    base["s4"] += (base["s3"].mean() - 0.004) - base["s4"].mean()  # s3 ahead by 0.004 on these queries
    condition = {s: v.copy() for s, v in base.items()}
    condition["s3"] = base["s3"] + rng.normal(0, 0.05, len(QUERIES))
    condition["s3"] += base["s3"].mean() - condition["s3"].mean()  # the same mean: nobody moves here
    return base, condition


def test_the_interval_over_queries_shows_the_ranks_the_queries_could_have_given_the_one_over_systems_cannot():
    """Injected: two systems 0.004 apart with per-query noise 0.05, the condition rescoring one
    with fresh noise of the same mean. On these queries no system moves (mean |delta_r| 0), and
    resampling systems gives the interval (0, 0); resampling queries, the two swap in many draws."""
    base, condition = near_tie()
    scores = per_query({"umbrela": base, "noisy": condition})
    moves = displacement(scores, BASELINES)
    assert (moves["delta_r"] == 0).all()
    _, conditions = sensitivity(moves, per_query=scores, baselines=BASELINES)
    row = one(conditions, condition="noisy")
    assert row["mean_abs_delta_r"] == 0 and (row["ci_low_systems"], row["ci_high_systems"]) == (0, 0)
    assert row["ci_high_queries"] > 0 and row["queries"] == len(QUERIES) and row["degenerate_queries"] == 0

    # the reference: the same draws (query_picks, seed 42) rescored with pandas, ranked by ordering
    picks = query_picks(len(QUERIES), 1000, 42)
    table = {c: pd.DataFrame(v, index=QUERIES) for c, v in {"umbrela": base, "noisy": condition}.items()}
    means = []
    for draw in picks:
        ranks = {c: t.iloc[draw].mean().rank(method="first", ascending=False) for c, t in table.items()}
        # method first on name-ordered columns: ties by name, as ordering() breaks them
        means.append(float((ranks["noisy"] - ranks["umbrela"]).abs().mean()))
    low, high = np.percentile(means, [2.5, 97.5])
    assert (row["ci_low_queries"], row["ci_high_queries"]) == pytest.approx((low, high))
    overall = one(conditions, condition=ALL)  # one condition: Sensitivity(s) is its |delta_r|
    assert (overall["ci_low_queries"], overall["ci_high_queries"]) == pytest.approx((low, high))


def test_the_all_row_over_queries_recomputes_sensitivity_in_each_draw():
    base, condition = near_tie()
    scores = per_query({"umbrela": base, "noisy": condition, "swap": swapped(base, "s0", "s1")})
    moves = displacement(scores, BASELINES)
    _, conditions = sensitivity(moves, per_query=scores, baselines=BASELINES)
    picks = query_picks(len(QUERIES), 1000, 42)
    table = {
        c: pd.DataFrame(v, index=QUERIES)
        for c, v in {"umbrela": base, "noisy": condition, "swap": swapped(base, "s0", "s1")}.items()
    }
    values = []
    for draw in picks:
        ranks = {c: t.iloc[draw].mean().rank(method="first", ascending=False) for c, t in table.items()}
        per_system = ((ranks["noisy"] - ranks["umbrela"]).abs() + (ranks["swap"] - ranks["umbrela"]).abs()) / 2
        values.append(per_system.mean())
    overall = one(conditions, condition=ALL)
    assert (overall["ci_low_queries"], overall["ci_high_queries"]) == pytest.approx(
        tuple(np.percentile(values, [2.5, 97.5]))
    )
    swap = one(conditions, condition="swap")  # an exact swap, query by query: the same in every draw
    assert swap["ci_low_queries"] == swap["ci_high_queries"] == swap["mean_abs_delta_r"] == pytest.approx(0.25)


def test_a_rerun_of_the_baseline_is_the_noise_floor_and_no_condition_of_its_own():
    """Injected: a rerun of the baseline prompt that differs from it by the queries' noise only,
    and a real condition (two systems swapped). The rerun's rows are the noise floor, repeated on
    every row of the group; it does not enter Sensitivity(s), the all row or direction consistency."""
    base, rerun = near_tie()
    human, judged = grades()
    rng = np.random.default_rng(4)
    again = np.where(rng.random(judged.shape) < 0.1, np.clip(judged + 1, 0, 3), judged)
    conditions_scores = {"umbrela": base, RERUN: rerun, "swap": swapped(base, "s0", "s1")}
    scores = per_query(conditions_scores)
    moves = displacement(scores, BASELINES)
    assert set(moves["condition"]) == {RERUN, "swap"}
    systems, conditions = sensitivity(moves, per_query=scores, baselines=BASELINES)
    floor = one(conditions, condition=RERUN)
    assert floor["ci_high_queries"] > 0  # the rerun moves s3 and s4 in many draws
    assert (conditions["noise_floor_abs_delta_r"] == floor["mean_abs_delta_r"]).all()
    assert (conditions["noise_floor"] != NO_RERUN).all()
    overall = one(conditions, condition=ALL)
    assert overall["conditions"] == 1 and overall["mean_abs_delta_r"] == pytest.approx(2 / len(SYSTEMS))
    assert (systems["conditions"] == 1).all()
    b = per_query(conditions_scores, group="judgeB")
    assert RERUN not in set(direction_consistency(displacement(pd.concat([scores, b]), BASELINES))["condition"])

    frame = labels({"umbrela": judged, RERUN: again, "lower": np.maximum(judged - 1, 0)})
    shown = agreement(frame, human, BASELINES).set_index("condition")
    assert shown.loc[RERUN, "kappa_qw_baseline"] < 1
    assert (shown["noise_floor_kappa_qw"] == shown.loc[RERUN, "kappa_qw_baseline"]).all()
    alone = agreement(labels({"umbrela": judged, "lower": judged}), human, BASELINES, no_rerun="asked once")
    assert alone["noise_floor_kappa_qw"].isna().all() and (alone["noise_floor"] == "asked once").all()
    with pytest.raises(ValueError, match="rerun"):
        agreement(frame, human, {"judgeA": RERUN})


def test_rbo_against_the_humans_is_undefined_where_systems_tie_never_broken_by_name():
    """Injected: a condition that gives s0 and s1 the same per-query scores. Broken by name, RBO
    would depend on how the two names sort; it is NaN, and Kendall's tau-b counts the tie."""
    base = base_scores()
    human, judged = grades()
    tied = dict(base)
    tied["s1"] = base["s0"].copy()
    scores = per_query({"umbrela": base, "tied": tied})
    shown = agreement(
        labels({"umbrela": judged, "tied": judged}), human, BASELINES, per_query=scores, human_scores=human_scores(base)
    ).set_index("condition")
    assert math.isnan(shown.loc["tied", "rbo_human"]) and shown.loc["tied", "tau_human"] < 1
    assert shown.loc["umbrela", "rbo_human"] == pytest.approx(1.0)
    # every draw ties s0 and s1 too: no defined RBO, each draw counted
    assert math.isnan(shown.loc["tied", "rbo_human_ci_low"]) and shown.loc["tied", "ranking_degenerate"] == 1000


def test_tau_and_rbo_against_the_humans_come_with_their_intervals_over_queries():
    """Reference: the same draws of queries (query_picks, seed 42), the systems' means under the
    condition and the humans recomputed, scipy's tau-b and RBO of the two orderings."""
    from scipy import stats

    base, condition = near_tie()
    human, judged = grades()
    scores = per_query({"umbrela": base, "noisy": condition})
    shown = agreement(
        labels({"umbrela": judged, "noisy": judged}),
        human,
        BASELINES,
        per_query=scores,
        human_scores=human_scores(base),
    ).set_index("condition")
    row = shown.loc["noisy"]
    assert row["tau_human"] == pytest.approx(1.0) and row["rbo_human"] == pytest.approx(1.0)  # on these queries
    a, h = pd.DataFrame(condition, index=QUERIES), pd.DataFrame(base, index=QUERIES)
    taus, rbos = [], []
    for draw in query_picks(len(QUERIES), 1000, 42):
        x, y = a.iloc[draw].mean(), h.iloc[draw].mean()
        taus.append(stats.kendalltau(x, y).statistic)
        rbos.append(rbo(list(x.sort_values(ascending=False).index), list(y.sort_values(ascending=False).index)))
    assert (row["tau_human_ci_low"], row["tau_human_ci_high"]) == pytest.approx(tuple(np.percentile(taus, [2.5, 97.5])))
    assert (row["rbo_human_ci_low"], row["rbo_human_ci_high"]) == pytest.approx(tuple(np.percentile(rbos, [2.5, 97.5])))
    assert row["tau_human_ci_low"] < 1 and row["ranking_degenerate"] == 0


def test_direction_consistency_across_judge_models():
    base = base_scores()
    a = per_query(
        {"umbrela": base, "same_way": swapped(base, "s3", "s4"), "opposite": swapped(base, "s3", "s4")}, "judgeA"
    )
    b = per_query(
        {"umbrela": base, "same_way": swapped(base, "s3", "s4"), "opposite": swapped(base, "s4", "s5")}, "judgeB"
    )
    moves = displacement(pd.concat([a, b]), BASELINES)
    table = direction_consistency(moves)
    assert list(table.columns) == CONSISTENCY_COLUMNS
    same_way = by_system(table, "same_way")
    assert (same_way["groups"] == 2).all()
    assert same_way.loc["s4", "consistency"] == 1 and same_way.loc["s4", "direction"] == "up"
    assert same_way.loc["s3", "consistency"] == 1 and same_way.loc["s3", "direction"] == "down"
    assert same_way.loc["s0", "direction"] == "none" and math.isnan(same_way.loc["s0", "consistency"])
    opposite = by_system(table, "opposite")
    assert opposite.loc["s4", "moved"] == 2  # up under judgeA, down under judgeB
    assert opposite.loc["s4", "consistency"] == 0 and opposite.loc["s4", "direction"] == "mixed"
    assert opposite.loc["s3", "moved"] == 1 and math.isnan(opposite.loc["s3", "consistency"])

    single = direction_consistency(displacement(a, BASELINES))
    assert single.empty and list(single.columns) == CONSISTENCY_COLUMNS


def test_an_empty_direction_consistency_says_which_of_its_requirements_failed():
    """Each way the table can come out empty gives its own reason; a table with rows gives none."""
    base = base_scores()
    moved = {"umbrela": base, "swap": swapped(base, "s0", "s1")}
    one_judge = displacement(per_query(moved), BASELINES)
    assert direction_consistency(one_judge).empty
    reason = why_no_consistency(one_judge, "probed judges", "role")
    assert reason.startswith("direction consistency compares probed judges and needs at least two")
    assert reason.endswith("there is one (judgeA)")
    # two judges, but no role in common: the same number of groups, another reason
    other = displacement(per_query({"umbrela": base, "terse": base}, group="judgeB"), BASELINES)
    apart = pd.concat([one_judge, other])
    assert direction_consistency(apart).empty
    assert why_no_consistency(apart, "probed judges", "role") == (
        "no two of the probed judges (judgeA, judgeB) rank a system under the same role on one dataset"
    )
    # the same role on two datasets is not shared either
    elsewhere = displacement(per_query(moved, group="judgeB", dataset="dl19"), BASELINES)
    assert direction_consistency(pd.concat([one_judge, elsewhere])).empty
    assert "on one dataset" in why_no_consistency(pd.concat([one_judge, elsewhere]))
    # only the baseline's rerun, or nothing besides the baseline
    rerun = displacement(per_query({"umbrela": base, RERUN: base}), BASELINES)
    assert "its rerun (the noise floor)" in why_no_consistency(rerun, condition="variant")
    assert why_no_consistency(one_judge.iloc[:0], condition="role") == "no role besides the baseline ranks a system"
    # two judges sharing the role: rows, and no reason
    shared = pd.concat([one_judge, displacement(per_query(moved, group="judgeB"), BASELINES)])
    assert len(direction_consistency(shared)) and why_no_consistency(shared) == ""


def test_system_ranking_agreement_with_humans():
    base = base_scores()
    human, judged = grades()
    scores = per_query(
        {
            "umbrela": base,
            "scaled": {s: 0.5 * v for s, v in base.items()},  # other values, the human order
            "swap": swapped(base, "s0", "s1"),
            "swap_low": swapped(base, "s6", "s7"),
            "reversed": {s: base[t] for s, t in zip(SYSTEMS, SYSTEMS[::-1], strict=True)},
        }
    )
    frame = labels({c: judged for c in ["umbrela", "scaled", "swap", "swap_low", "reversed"]})
    shown = agreement(frame, human, BASELINES, per_query=scores, human_scores=human_scores(base))
    shown = shown.set_index("condition")
    for condition in ["umbrela", "scaled"]:
        assert shown.loc[condition, "tau_human"] == pytest.approx(1.0)
        assert shown.loc[condition, "rbo_human"] == pytest.approx(1.0)
        assert shown.loc[condition, "systems_vs_human"] == len(SYSTEMS)
    assert shown.loc["swap", "tau_human"] < 1 and shown.loc["swap", "rbo_human"] < 1
    assert shown.loc["reversed", "tau_human"] == pytest.approx(-1.0)
    assert shown.loc["reversed", "rbo_human"] < shown.loc["swap", "rbo_human"]
    # tau counts one discordant pair wherever it is; RBO weights the top, so a swap there costs more
    assert shown.loc["swap_low", "tau_human"] == pytest.approx(shown.loc["swap", "tau_human"])
    assert shown.loc["swap", "rbo_human"] < shown.loc["swap_low", "rbo_human"] < 1

    without = agreement(frame, human, BASELINES)
    assert without["tau_human"].isna().all() and without["rbo_human"].isna().all()


def test_bad_input_is_refused():
    human, judged = grades()
    with pytest.raises(ValueError, match="baseline"):
        agreement(labels({"same": judged}), human, BASELINES)
    with pytest.raises(ValueError, match="no baseline"):
        displacement(per_query({"umbrela": base_scores()}, group="judgeC"), BASELINES)
    off = judged.copy()
    off[0, 0] = 5
    with pytest.raises(ValueError, match="scale"):
        agreement(labels({"umbrela": judged, "off": off}), human, BASELINES)


def test_figures_are_written_as_png_and_pdf_also_without_data(tmp_path):
    base = base_scores()
    moves = pd.concat(
        [
            displacement(per_query({"umbrela": base, "swap": swapped(base, "s3", "s4")}, group), BASELINES)
            for group in ["judgeA", "judgeB"]
        ]
    )
    _, conditions = sensitivity(moves)
    empty_moves = moves.iloc[0:0]
    _, empty_conditions = sensitivity(empty_moves)
    assert empty_conditions.empty
    for name, draw, frame in [
        ("heatmap", displacement_heatmap, moves),
        ("chart", sensitivity_chart, conditions),
        ("heatmap_empty", displacement_heatmap, empty_moves),
        ("chart_empty", sensitivity_chart, empty_conditions),
    ]:
        png = tmp_path / "figures" / f"{name}.png"
        draw(frame, png)
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert png.with_suffix(".pdf").read_bytes()[:5] == b"%PDF-"


def test_a_stricter_condition_has_the_paired_tests_over_queries_against_the_baseline():
    """The shift is tested with the query as the unit: the reference is scipy's sign-flip
    permutation test of the per-query summed shifts (exact: 2^12 sign patterns), and
    statsmodels' Stuart-Maxwell test where each query has one pair."""
    from scipy import stats
    from statsmodels.stats.contingency_tables import SquareTable

    human, judged = grades()
    stricter = np.where(judged > 0, judged - 1, judged)  # every grade above 0 one lower
    rng = np.random.default_rng(2)
    mixed = np.clip(judged + rng.integers(-1, 2, judged.shape) * (rng.random(judged.shape) < 0.3), 0, 3)
    frame = labels({"umbrela": judged, "strict": stricter, "same": judged.copy(), "mixed": mixed})
    shown = agreement(frame, human, BASELINES).set_index("condition")
    strict = shown.loc["strict"]
    moved = int((judged > 0).sum())
    assert strict["down_vs_baseline"] == moved and strict["up_vs_baseline"] == 0
    assert strict["queries_vs_baseline"] == len(QUERIES)
    for name, grid in (("strict", stricter), ("mixed", mixed)):
        totals = (grid - judged).sum(axis=1)  # per query
        reference = stats.permutation_test(
            (totals,), np.sum, permutation_type="samples", n_resamples=9999, alternative="two-sided"
        ).pvalue
        assert shown.loc[name, "shift_p_vs_baseline"] == pytest.approx(reference)
    # every query lowered: the smallest p 12 queries can give (2 of 4096 sign patterns), not a p over 240 pairs
    assert strict["shift_p_vs_baseline"] == pytest.approx(2 / 2 ** len(QUERIES))
    assert strict["shift_vs_baseline_ci_high"] < 0 and strict["homogeneity_p_vs_baseline"] < 0.01
    assert strict["shift_vs_baseline_ci_low"] <= strict["shift_vs_baseline"] <= strict["shift_vs_baseline_ci_high"]
    for clean in ("same", "umbrela"):
        assert shown.loc[clean, "shift_p_vs_baseline"] == 1 and shown.loc[clean, "up_vs_baseline"] == 0
        assert shown.loc[clean, "homogeneity_p_vs_baseline"] == 1

    # one pair per query: the clustered homogeneity test is Stuart-Maxwell's (statsmodels)
    one_each = labels({"umbrela": judged, "mixed": mixed})
    one_each = one_each[one_each["doc_id"].str.endswith("_d0") | one_each["doc_id"].str.endswith("_d1")]
    one_each = one_each.assign(query_id=one_each["doc_id"])  # every pair its own query
    found = agreement(one_each, human.assign(query_id=human["doc_id"]), BASELINES).set_index("condition")
    before, after = judged[:, :2].ravel().astype(int), mixed[:, :2].ravel().astype(int)
    grades_moved = np.union1d(before[before != after], after[before != after])
    table = np.zeros((len(grades_moved), len(grades_moved)))
    keep = np.isin(before, grades_moved) & np.isin(after, grades_moved)
    for b, a in zip(before[keep], after[keep], strict=True):
        table[np.searchsorted(grades_moved, b), np.searchsorted(grades_moved, a)] += 1
    assert found.loc["mixed", "homogeneity_p_vs_baseline"] == pytest.approx(
        SquareTable(table, shift_zeros=False).homogeneity().pvalue
    )


def test_the_quadratic_kappa_is_scikit_learns_on_the_pairs_both_labelled():
    from sklearn.metrics import cohen_kappa_score

    human, judged = grades()
    lower = np.maximum(judged - 1, 0)
    shown = agreement(labels({"umbrela": judged, "lower": lower}), human, BASELINES).set_index("condition")
    expected = cohen_kappa_score(
        lower.ravel().astype(int), judged.ravel().astype(int), weights="quadratic", labels=[0, 1, 2, 3]
    )
    assert shown.loc["lower", "kappa_qw_baseline"] == pytest.approx(expected)
    h = human.sort_values(["query_id", "doc_id"])
    expected_h = cohen_kappa_score(
        labels({"lower": lower}).sort_values(["query_id", "doc_id"])["relevance"].astype(int),
        h["relevance"].astype(int),
        weights="quadratic",
        labels=[0, 1, 2, 3],
    )
    assert shown.loc["lower", "kappa_qw_human"] == pytest.approx(expected_h)
