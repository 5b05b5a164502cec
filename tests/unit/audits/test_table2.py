"""Table 2's statistics: intervals over queries, the human@pool reference, many-test corrections."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps
from sklearn.metrics import cohen_kappa_score

from voirdire.evaluation import evaluate_measures
from voirdire.judges import HUMAN, Scale, needed_pairs, restrict
from voirdire.paper import agreement_tables
from voirdire.stats import (
    adjust,
    compare_significance,
    kappa_intervals,
    kendall_tau_rows,
    paired_tests,
    query_resamples,
    reference_draws,
    system_agreement_intervals,
)
from voirdire.stats.agreement import ranked

NDCG = "nDCG(judged_only=True)@10"


def frame(rows, columns):
    return pd.DataFrame(rows, columns=columns)


def test_kendall_tau_rows_equal_scipy_row_by_row():
    rng = np.random.default_rng(1)
    a, b = rng.integers(0, 4, (30, 7)).astype(float), rng.integers(0, 4, (30, 7)).astype(float)  # with ties
    ours = kendall_tau_rows(a, b)
    for row in range(30):
        assert ours[row] == pytest.approx(sps.kendalltau(a[row], b[row]).statistic, nan_ok=True)


@pytest.mark.parametrize("items", [1, 2, 7, 102])
def test_kendall_tau_rows_equal_the_sum_of_sign_products_to_the_bit(items):
    """The comparison-matrix counts give the same bits as the sign products they replaced, ties,
    all-tied rows, NaN and infinite values included."""
    from voirdire.stats.agreement import _kendall_tau_rows_by_pairs

    rng = np.random.default_rng(items)
    a = rng.normal(size=(700, items))
    b = a + rng.normal(scale=0.7, size=a.shape)
    a[::5] = np.round(a[::5])  # ties
    b[3] = 1.0  # a row all tied
    a[7, 0], b[9, -1], a[11, :] = np.nan, np.inf, np.inf
    expected = _kendall_tau_rows_by_pairs(a, b)
    np.testing.assert_array_equal(kendall_tau_rows(a, b), expected)
    np.testing.assert_array_equal(kendall_tau_rows(ranked(a), b), expected)  # its order sorted once, reused
    assert items < 3 or (~np.isnan(expected)).sum() > 600


def test_a_reference_drawn_once_gives_every_judge_the_same_intervals():
    """Table 2 sorts each reference's bootstrap draws once for all judges (``reference=``): the
    same numbers, to the bit, as drawing and sorting them for each judge; a reference drawn for
    other systems or another seed is refused, never silently reused."""
    rng = np.random.default_rng(5)
    systems = [f"s{i}" for i in range(30)] + ["perfect", "swap-1"]
    human = pd.DataFrame(rng.random((25, len(systems))), columns=systems)
    human.iloc[:, 3] = human.iloc[:, 4]  # two systems tied under the reference in every draw
    drawn = reference_draws(human, ["perfect", "swap-1"], resamples=300, seed=9)
    for scale in (0.02, 0.3, 3.0):
        judge = human + rng.normal(scale=scale, size=human.shape)
        judge.iloc[::4, 7] = judge.iloc[::4, 8]
        alone = system_agreement_intervals(human, judge, ["perfect", "swap-1"], resamples=300, seed=9)
        shared = system_agreement_intervals(human, judge, ["perfect", "swap-1"], resamples=300, seed=9, reference=drawn)
        assert shared.keys() == alone.keys()
        for name, value in alone.items():
            assert shared[name] == value or (np.isnan(shared[name]) and np.isnan(value)), name
        assert not np.isnan(alone["tau_all_ci_low"]) and not np.isnan(alone["tau_oracles_ci_low"])
    for mismatch in ({"seed": 10, "resamples": 300}, {"seed": 9, "resamples": 200}):
        with pytest.raises(ValueError, match="reference="):
            system_agreement_intervals(human, human, ["perfect"], reference=drawn, **mismatch)
    with pytest.raises(ValueError, match="reference="):
        system_agreement_intervals(human[systems[::-1]], human, [], resamples=300, seed=9, reference=drawn)
    with pytest.raises(ValueError, match="reference="):  # drawn with two oracles, asked with one
        system_agreement_intervals(human, human, ["perfect"], resamples=300, seed=9, reference=drawn)
    with pytest.raises(ValueError, match="two queries"):  # one query: no interval to draw (NaN, as before)
        reference_draws(human.iloc[:1], [])
    assert np.isnan(system_agreement_intervals(human.iloc[:1], human.iloc[:1], [])["tau_all_ci_low"])


@pytest.mark.parametrize("items", [1, 2, 3, 7, 102])
def test_kendall_tau_each_is_scipys_kendall_tau_to_the_bit(items):
    from voirdire.stats.agreement import kendall_tau, kendall_tau_each

    rng = np.random.default_rng(items)
    truth = rng.normal(size=items)
    rows = truth + rng.normal(scale=0.5, size=(300, items))
    rows[::4] = np.round(rows[::4])  # ties
    rows[5] = 2.0  # a row all tied
    rows[6, 0], rows[8, -1] = np.nan, np.inf
    expected = np.array([kendall_tau(truth, row) for row in rows])
    np.testing.assert_array_equal(kendall_tau_each(truth, rows), expected)
    np.testing.assert_array_equal(
        kendall_tau_each(np.round(truth), rows), [kendall_tau(np.round(truth), r) for r in rows]
    )


def test_kappa_intervals_are_a_cluster_bootstrap_of_sklearns_kappa():
    rng = np.random.default_rng(2)
    queries = np.repeat([f"q{i}" for i in range(12)], 15)
    human = rng.integers(0, 4, len(queries))
    judge = np.clip(human + rng.integers(-1, 2, len(queries)), 0, 3)
    aligned = pd.DataFrame({"query_id": queries, "relevance_human": human, "relevance_judge": judge})
    row = kappa_intervals(aligned, Scale(), Scale(), resamples=200, seed=3)
    # the same resamples, kappa by scikit-learn on the resampled pairs
    times = query_resamples(12, 200, 3)
    order = list(dict.fromkeys(queries))
    boot = []
    for weights in times:
        picked = np.concatenate(
            [np.flatnonzero(queries == q).repeat(int(w)) for q, w in zip(order, weights, strict=True)]
        )
        boot.append(cohen_kappa_score(human[picked], judge[picked], weights="quadratic", labels=[0, 1, 2, 3]))
    assert (row["kappa_quadratic_ci_low"], row["kappa_quadratic_ci_high"]) == pytest.approx(
        tuple(np.percentile(boot, [2.5, 97.5]))
    )
    point = cohen_kappa_score(human, judge)
    assert row["kappa_graded_ci_low"] < point < row["kappa_graded_ci_high"]


def copying_case():
    """Query A has five relevant passages no system retrieves (they lift the humans' ideal DCG),
    query B none: the humans and a label-copying judge normalise A differently (the issue's
    example: X best on A, Y on B)."""
    qrels = frame(
        [
            ("A", "a1", 3),
            ("A", "nA", 0),
            ("A", "nA2", 0),
            *[("A", f"e{i}", 3) for i in range(5)],
            ("B", "b1", 3),
            ("B", "nB", 0),
        ],
        ["query_id", "doc_id", "relevance"],
    )
    x = frame(
        [("A", "a1", 1, 3.0), ("A", "nA", 2, 2.0), ("B", "nB", 1, 3.0), ("B", "b1", 2, 2.0)],
        ["query_id", "doc_id", "rank", "score"],
    )
    y = frame(
        [("A", "nA", 1, 3.0), ("A", "nA2", 2, 2.0), ("A", "a1", 3, 1.0), ("B", "b1", 1, 3.0)],
        ["query_id", "doc_id", "rank", "score"],
    )
    return qrels, {"X": [x], "Y": [y]}


def test_a_label_copying_judge_matches_human_at_pool_exactly():
    qrels, runs = copying_case()
    pairs = needed_pairs(qrels, runs=[r[0] for r in runs.values()], depth=10)
    copied = restrict(qrels, pairs)  # the judge: the human grades of exactly the pairs it is asked
    scores = pd.concat(
        [
            evaluate_measures(runs, qrels, ["A", "B"], [NDCG]).assign(judge=HUMAN),
            evaluate_measures(runs, copied, ["A", "B"], [NDCG]).assign(judge="copier"),
        ]
    )
    pool = evaluate_measures(runs, restrict(qrels, pairs), ["A", "B"], [NDCG]).assign(judge="human@pool")
    means = scores.groupby(["judge", "system"])["value"].mean()
    assert means[HUMAN, "Y"] > means[HUMAN, "X"] and means["copier", "X"] > means["copier", "Y"]  # the trap
    table, _ = agreement_tables(
        dataset="d",
        labels={HUMAN: qrels, "copier": copied},
        scales={HUMAN: Scale(), "copier": Scale()},
        pairs=pairs,
        scores=scores,
        measures=[NDCG],
        oracles=[],
        alpha=0.05,
        rbo_p=0.9,
        pool_scores=pool,
        resamples=200,
    )
    row = table.iloc[0]
    assert row["tau_all"] == -1 and row["flipped"] == 1  # against the paper's reference: reordered
    assert row["tau_all_vs_pool"] == 1 and row["flipped_vs_pool"] == 0  # against human@pool: none
    assert row["kappa_graded"] == 1 and row["kappa_graded_ci_low"] == 1


def test_corrections_flag_no_more_than_uncorrected_and_count_their_tests():
    rng = np.random.default_rng(4)
    base = rng.random((30, 1))
    wide = pd.DataFrame(base + rng.normal(0, 0.05, (30, 8)), columns=[f"s{i}" for i in range(8)])
    wide["s0"] += 0.2  # one real difference
    human, judge = paired_tests(wide), paired_tests(wide + rng.normal(0, 0.05, wide.shape))
    counts = {}
    for correction in ("none", "holm", "bh"):
        sig = compare_significance(human, judge, 0.05, correction=correction)
        counts[correction] = int((sig["p_human_adjusted"] < 0.05).sum())
        assert (sig["p_human_adjusted"] >= sig["p_human"] - 1e-15).all()
    assert counts["holm"] <= counts["bh"] <= counts["none"] and counts["holm"] >= 7  # s0 vs every other
    # Holm by hand: the i-th smallest p times (m - i), running maximum, capped at 1
    p = human["p"].to_numpy()
    order = np.argsort(p)
    by_hand = np.minimum(1, np.maximum.accumulate(p[order] * (len(p) - np.arange(len(p)))))
    assert adjust(p, "holm")[order] == pytest.approx(by_hand)


def test_table1_means_carry_their_bootstrap_interval_over_queries():
    """Each mean's interval is the engine's over that system's per-query scores under that judge
    (queries in id order); it holds the mean, is wider for the noisier judge, and is absent
    without resamples."""
    from voirdire.paper import table1
    from voirdire.stats import mean_interval

    rng = np.random.default_rng(4)
    rows = []
    for judge, noise in (("human", 0.0), ("steady", 0.02), ("noisy", 0.3)):
        for system, level in (("a", 0.6), ("b", 0.4)):
            for q in range(25):
                base = level + 0.1 * np.sin(q)
                rows.append(("dl19", judge, NDCG, system, f"q{q:02d}", base + rng.normal(scale=noise)))
    scores = frame(rows, ["dataset", "judge", "measure", "system", "query_id", "value"])
    table = table1(scores, ["b", "a"], ["human", "steady", "noisy"], resamples=500, seed=3)
    assert table.columns.tolist() == [
        "dataset",
        "system",
        "measure",
        "human",
        "steady",
        "noisy",
        "human_ci_low",
        "human_ci_high",
        "steady_ci_low",
        "steady_ci_high",
        "noisy_ci_low",
        "noisy_ci_high",
    ]
    assert table["system"].tolist() == ["b", "a"]
    for _, row in table.iterrows():
        for judge in ("human", "steady", "noisy"):
            mine = scores[(scores["judge"] == judge) & (scores["system"] == row["system"])].sort_values("query_id")
            expected = mean_interval(mine["value"].to_numpy(), resamples=500, seed=3)
            assert (row[f"{judge}_ci_low"], row[f"{judge}_ci_high"]) == pytest.approx(tuple(expected), rel=1e-12)
            assert row[f"{judge}_ci_low"] <= row[judge] <= row[f"{judge}_ci_high"]
        assert (row["noisy_ci_high"] - row["noisy_ci_low"]) > (row["steady_ci_high"] - row["steady_ci_low"])
    bare = table1(scores, ["b", "a"], ["human", "steady", "noisy"])
    assert bare.columns.tolist() == ["dataset", "system", "measure", "human", "steady", "noisy"]
    assert np.allclose(bare[["human", "steady", "noisy"]], table[["human", "steady", "noisy"]])
