"""IR's significance practice: the randomization test against scipy's permutation test, the
randomized Tukey HSD against an exact enumeration and its family-wise error under a null,
tau_AP on a worked example, max drop, discriminative power."""

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from voirdire.stats.agreement import max_drop, tau_ap
from voirdire.stats.significance import (
    asl_curve,
    discriminative_power,
    randomization_tests,
    significance_tests,
    tukey_tests,
)


def table(queries=12, systems=("a", "b", "c"), seed=0, shift=(0.0, 0.05, 0.2)):
    rng = np.random.default_rng(seed)
    base = rng.random(queries)[:, None]
    return pd.DataFrame(base + np.array(shift) + rng.normal(0, 0.1, (queries, len(systems))), columns=list(systems))


def test_the_randomization_test_is_scipys_paired_permutation_test():
    frame = table()
    ours = randomization_tests(frame).set_index(["system_a", "system_b"])
    for a, b in itertools.combinations(frame.columns, 2):
        d = (frame[a] - frame[b]).to_numpy()
        reference = stats.permutation_test(
            (d,),
            lambda x, axis=-1: np.mean(x, axis=axis),
            permutation_type="samples",
            vectorized=True,
            n_resamples=9999,
            alternative="two-sided",
        ).pvalue  # 2^12 patterns: exact on both sides
        assert ours.loc[(a, b), "p"] == pytest.approx(reference, rel=1e-9)
        assert ours.loc[(a, b), "mean_diff"] == pytest.approx(d.mean())


def test_randomized_tukey_hsd_is_the_exact_enumeration_with_few_queries():
    frame = table(queries=3, seed=1)
    values = frame.to_numpy()
    observed = {(a, b): abs(frame[a].mean() - frame[b].mean()) for a, b in itertools.combinations(frame.columns, 2)}
    spreads = []
    for perm in itertools.product(itertools.permutations(range(3)), repeat=3):  # (3!)^3 shuffles
        shuffled = np.array([values[q, list(p)] for q, p in enumerate(perm)])
        means = shuffled.mean(axis=0)
        spreads.append(means.max() - means.min())
    spreads = np.array(spreads)
    ours = tukey_tests(frame, permutations=20000, seed=3).set_index(["system_a", "system_b"])
    for pair, gap in observed.items():
        exact = np.mean(spreads >= gap - 1e-12)
        assert ours.loc[pair, "p"] == pytest.approx(exact, abs=0.015)


def test_randomized_tukey_hsd_holds_the_family_wise_error_over_every_pair():
    rng = np.random.default_rng(2)
    sims, any_flag = 150, 0
    for _ in range(sims):
        frame = pd.DataFrame(rng.random((25, 1)) + rng.normal(0, 0.1, (25, 5)), columns=list("abcde"))
        any_flag += (tukey_tests(frame, permutations=400, seed=int(rng.integers(1 << 30)))["p"] < 0.05).any()
    assert any_flag / sims <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / sims)
    # the pairwise tests, uncorrected, flag some pair of the ten far more often: that is what Tukey is for


def test_a_planted_difference_is_found_by_every_test():
    frame = table(queries=30, seed=4, shift=(0.0, 0.0, 0.15))
    for test in ("t", "randomization", "tukey"):
        found = significance_tests(frame, test).set_index(["system_a", "system_b"])
        assert found.loc[("a", "c"), "p"] < 0.01 and found.loc[("a", "b"), "p"] > 0.05, test


def test_tau_ap_on_a_worked_example():
    truth = np.array([4.0, 3.0, 2.0, 1.0])  # a > b > c > d
    swapped_top = np.array([3.0, 4.0, 2.0, 1.0])  # the judge puts b first
    swapped_bottom = np.array([4.0, 3.0, 1.0, 2.0])  # ... or d above c
    # walking the judge's order b, a, c, d: a has b above it (wrong: 0/1), c has both right (2/2),
    # d all three (3/3): 2/3 * (0 + 1 + 1) - 1 = 1/3
    assert tau_ap(truth, swapped_top) == pytest.approx(1 / 3)
    assert tau_ap(truth, swapped_bottom) == pytest.approx(2 / 3 * (1 + 1 + 2 / 3) - 1)
    assert tau_ap(truth, swapped_top) < tau_ap(truth, swapped_bottom)  # the top weighs more
    tau = stats.kendalltau(truth, swapped_top).statistic
    assert tau == pytest.approx(stats.kendalltau(truth, swapped_bottom).statistic)  # tau does not see it
    assert tau_ap(truth, truth) == 1.0 and tau_ap(truth, -truth) == pytest.approx(-1.0)
    assert math.isnan(tau_ap(truth, np.array([1.0, 1.0, 0.5, 0.2])))


def test_max_drop_is_the_largest_fall_in_rank():
    truth = np.array([5.0, 4.0, 3.0, 2.0, 1.0])
    judge = np.array([1.0, 4.0, 3.0, 2.0, 5.0])  # the first falls to last: four places
    assert max_drop(truth, judge) == 4 and max_drop(truth, truth) == 0


def test_discriminative_power_and_the_asl_curve():
    assert discriminative_power([0.01, 0.2, 0.04, 0.5]) == 0.5
    assert list(asl_curve([0.3, 0.01, 0.2])) == [0.01, 0.2, 0.3]
    assert math.isnan(discriminative_power([]))


def test_table2_counts_decisions_by_the_chosen_test_and_gives_the_new_rank_statistics():
    from voirdire.judges import HUMAN, Scale
    from voirdire.paper import agreement_tables

    rng = np.random.default_rng(6)
    systems = [f"s{i}" for i in range(6)]
    base = rng.random((30, 1))
    human = pd.DataFrame(base + np.linspace(0.3, 0, 6) + rng.normal(0, 0.05, (30, 6)), columns=systems)
    judge = human.copy()
    judge["s5"] += 0.5  # the judge lifts the worst system to the top
    frames = [
        w.reset_index(names="query_id")
        .melt(id_vars="query_id", var_name="system", value_name="value")
        .assign(judge=j, measure="m")
        for j, w in ((HUMAN, human), ("j", judge))
    ]
    scores = pd.concat(frames, ignore_index=True)
    qrels = pd.DataFrame({"query_id": ["0"], "doc_id": ["d"], "relevance": [1]})
    pairs = qrels[["query_id", "doc_id"]].assign(in_pool=True)
    rows = {}
    for test in ("t", "randomization", "tukey"):
        table, sig = agreement_tables(
            dataset="d",
            labels={HUMAN: qrels, "j": qrels},
            scales={HUMAN: Scale(), "j": Scale()},
            pairs=pairs,
            scores=scores,
            measures=["m"],
            oracles=[],
            alpha=0.05,
            rbo_p=0.9,
            test=test,
            resamples=100,
        )
        rows[test] = table.iloc[0]
        assert rows[test]["test"] == test
    for row in rows.values():
        assert row["max_drop"] == 1 and row["tau_ap"] < row["tau_all"]  # s5 rose to the top: the top weighs more
        assert row["tau_ap_ci_low"] <= row["tau_ap"] <= row["tau_ap_ci_high"]
        assert row["flipped"] >= 5  # s5 against every other
    # Tukey holds the family-wise error over every pair: it finds no more differences than the pairwise tests
    assert rows["tukey"]["discriminative_power"] <= rows["randomization"]["discriminative_power"]
    assert 0 < rows["t"]["discriminative_power_human"] <= 1


def test_the_asl_figure_draws_each_judges_sorted_p_values_beside_the_humans_twelve_a_panel(tmp_path):
    """15 judges on 6 system pairs: two panels (12 + 3 judges), each with the humans' curve
    (the pairs' human p-values once, sorted) and every judge's own sorted p-values, floored at
    ASL_FLOOR; the legend counts the pairs below alpha."""
    from voirdire.paper import ASL_FLOOR, ASL_JUDGES, asl_figure

    rng = np.random.default_rng(3)
    pairs = list(itertools.combinations("abcd", 2))
    human = rng.random(len(pairs)) ** 3
    judges = [f"j{i:02d}" for i in range(15)]
    rows = [
        {
            "dataset": "dl",
            "judge": judge,
            "measure": "m",
            "system_a": a,
            "system_b": b,
            "p_human_adjusted": human[k],
            "p_judge_adjusted": rng.random() ** (1 + i % 5) * (0 if k == 0 else 1),
        }
        for i, judge in enumerate(judges)
        for k, (a, b) in enumerate(pairs)
    ]
    frame = pd.DataFrame(rows)
    other = frame.assign(measure="other", p_judge_adjusted=0.5)  # another measure: not drawn
    fig = asl_figure(pd.concat([frame, other]), "m", 0.05, tmp_path / "asl.png", tmp_path / "asl.pdf")
    assert (tmp_path / "asl.png").stat().st_size > 5_000 and (tmp_path / "asl.pdf").is_file()
    panels = [ax for ax in fig.axes if ax.lines]
    assert len(panels) == 2 and [len(ax.lines) - 2 for ax in panels] == [ASL_JUDGES, 15 - ASL_JUDGES]  # - human, alpha
    drawn = 0
    for ax in panels:
        curves = {line.get_label(): line for line in ax.lines if not line.get_label().startswith("_")}
        labels = list(curves)
        assert labels[0] == f"human ({(human < 0.05).sum()})"
        np.testing.assert_allclose(curves[labels[0]].get_ydata(), np.sort(human).clip(ASL_FLOOR, 1))
        for label in labels[1:]:
            judge = label.split(" ")[0]
            p = frame.loc[frame["judge"] == judge, "p_judge_adjusted"].to_numpy()
            assert label == f"{judge} ({(p < 0.05).sum()})"
            np.testing.assert_allclose(curves[label].get_ydata(), np.sort(p).clip(ASL_FLOOR, 1))
            assert curves[label].get_ydata()[0] == ASL_FLOOR  # a p-value of 0 is drawn at the floor
            drawn += 1
    assert drawn == len(judges)


def test_the_asl_figure_says_so_when_no_pair_was_tested(tmp_path):
    from voirdire.paper import asl_figure

    fig = asl_figure(pd.DataFrame(), "m", 0.05, tmp_path / "asl.png", tmp_path / "asl.pdf")
    assert (tmp_path / "asl.png").is_file() and not [ax for ax in fig.axes if ax.lines]
    assert any("no pair of systems" in text.get_text() for text in fig.axes[0].texts)
