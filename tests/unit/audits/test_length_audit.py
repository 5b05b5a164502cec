"""The length audit's statistics: the within-grade rho weighs each human grade by its size (not
by its size cubed), its p-value permutes lengths within query x grade blocks, and the Simpson
check across systems flags a tier only beyond the interval of its r. Inject -> recover: a
planted bias is found with its sign, a clean judge is not flagged."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from voirdire.audits.length import length_bias, system_lengths, tier_correlation

SIZES = {0: 1250, 1: 450, 2: 277, 3: 280}  # about the DL19 pool's 2,257 pairs


def dl19_like(biased: bool, seed: int = 2, flip: float = 0.18) -> pd.DataFrame:
    """A judge with +-1 noise everywhere; when ``biased``, inside human grade 3 only (280 pairs) the
    longer half gets 3 and the shorter 2, ``flip`` of them swapped (Spearman rho about 0.5 there)."""
    rng = np.random.default_rng(seed)
    human = np.concatenate([np.full(n, g) for g, n in SIZES.items()])
    n = len(human)
    query = rng.integers(0, 43, n)
    words = np.maximum(5, 70 + 10 * human + rng.normal(0, 15, 43)[query] + rng.normal(0, 25, n)).astype(int)
    judge = np.clip(human + rng.choice([-1, 0, 1], n), 0, 3)
    if biased:
        top = human == 3
        judge[top] = np.where(words[top] > np.median(words[top]), 3, 2)
        swap = top & (rng.random(n) < flip)
        judge[swap] = 5 - judge[swap]
    return pd.DataFrame(
        {
            "query_id": [f"q{q}" for q in query],
            "doc_id": [f"d{i}" for i in range(n)],
            "human": human,
            "judge": judge,
            "words": words,
        }
    )


def cube_weighted_p(pairs: pd.DataFrame) -> float:
    """The statistic this audit used to report: ranks centred but not scaled within each grade, a
    t-test with n - 2 df (each grade weighs n_g (n_g^2 - 1))."""
    groups = pairs.groupby("human")
    words = groups["words"].rank() - groups["words"].transform(lambda x: x.rank().mean())
    grades = groups["judge"].rank() - groups["judge"].transform(lambda x: x.rank().mean())
    return float(stats.pearsonr(words, grades).pvalue)


def test_a_length_bias_inside_one_grade_is_found_where_cube_weighting_misses_it():
    planted = dl19_like(True)
    found = length_bias(planted)
    assert found["n_human_3"] == 280 and found["n_human_0"] == 1250
    assert 0.4 < found["rho_within_human_3"] < 0.6 and found["p_within_human_3"] < 0.01  # the grade itself
    assert found["rho_within"] > 0.05 and found["p_within"] < 0.05 and found["length_biased"]  # alpha 0.01
    assert cube_weighted_p(planted) > 0.05  # the grade-0 pairs drowned it
    clean = length_bias(dl19_like(False))
    assert not clean["length_biased"] and clean["p_within"] > 0.05
    assert clean["p_within_human_3"] > 0.05  # the grade that was biased above, clean here


def test_within_grade_rhos_are_scipys_spearman_and_the_pool_weighs_grades_by_size():
    pairs = dl19_like(True).assign(query_id="q")  # one query: the blocks are the grades
    found = length_bias(pairs, permutations=0)
    for grade, block in pairs.groupby("human"):
        assert found[f"rho_within_human_{grade}"] == pytest.approx(stats.spearmanr(block["words"], block["judge"])[0])
    # without ties in the judge's grades the pooled rho is the size-weighted mean of the grades' rhos
    rng = np.random.default_rng(0)
    untied = pairs.assign(judge=pairs["judge"] + rng.random(len(pairs)))
    found = length_bias(untied, permutations=0)
    rhos = np.array([found[f"rho_within_human_{g}"] for g in SIZES])
    weights = np.array([n for n in SIZES.values()])
    assert found["rho_within"] == pytest.approx(np.average(rhos, weights=weights), rel=1e-3)
    assert math.isnan(found["p_within"])


def stratified_rho(pairs: pd.DataFrame) -> float:
    """Spearman's rho stratified by query: scipy's average ranks within each query, divided by the
    query's size and centred, correlated over all pairs (without a mean: each is centred)."""
    u, v = [], []
    for _, block in pairs.groupby("query_id"):
        n = len(block)
        u.append((stats.rankdata(block["words"]) - 0.5) / n - 0.5)
        v.append((stats.rankdata(block["judge"]) - 0.5) / n - 0.5)
    u, v = np.concatenate(u), np.concatenate(v)
    return float(u @ v / np.sqrt((u @ u) * (v @ v)))


def test_each_grades_rho_is_ranked_within_its_query_blocks():
    pairs = dl19_like(True)
    found = length_bias(pairs, permutations=0)
    for grade, block in pairs.groupby("human"):
        assert found[f"rho_within_human_{grade}"] == pytest.approx(stratified_rho(block))
    assert found["rho_within"] == pytest.approx(
        stratified_rho(pairs.assign(query_id=pairs["query_id"] + "/" + pairs["human"].astype(str)))
    )


def test_one_block_matches_scipys_permutation_test():
    rng = np.random.default_rng(7)
    words = rng.integers(20, 200, 60)
    judge = (words / 100 + rng.normal(0, 1.2, 60)).round().clip(0, 3)
    pairs = pd.DataFrame(
        {"query_id": "q", "doc_id": [f"d{i}" for i in range(60)], "human": 1, "judge": judge, "words": words}
    )
    found = length_bias(pairs, permutations=2000)
    reference = stats.permutation_test(
        (words, judge),
        lambda x, y: stats.spearmanr(x, y)[0],
        permutation_type="pairings",
        n_resamples=2000,
        random_state=1,
    )
    assert found["rho_within"] == pytest.approx(reference.statistic)
    assert 0.01 < reference.pvalue < 0.5  # a case where the p-value is neither 0 nor 1
    assert found["p_within"] == pytest.approx(reference.pvalue, abs=0.04)  # two Monte Carlo draws of one p
    assert found["p_within_human_1"] == found["p_within"]


def test_lengths_and_grades_that_differ_only_between_queries_are_not_a_length_bias():
    # lenient queries have long passages; within a query, length does not move the grade
    rng = np.random.default_rng(3)
    query = np.repeat(np.arange(30), 40)
    lenient = rng.random(30) < 0.5
    words = rng.integers(30, 90, len(query)) + np.where(lenient[query], 60, 0)
    human = rng.integers(0, 2, len(query))
    judge = human + (lenient[query] & (rng.random(len(query)) < 0.5))
    pairs = pd.DataFrame(
        {"query_id": query, "doc_id": np.arange(len(query)).astype(str), "human": human, "judge": judge, "words": words}
    )
    found = length_bias(pairs)
    assert found["rho_overall"] > 0.15  # pooled across queries, length and grade go together ...
    assert cube_weighted_p(pairs) < 1e-6  # ... so a test of independent pairs flags it
    assert abs(found["rho_within"]) < 0.05  # within queries nothing moves: the effect says so too
    assert found["p_within"] > 0.05 and not found["length_biased"]


def topics(within: float, seed: int = 5, queries: int = 40, per_query: int = 30) -> pd.DataFrame:
    """Topics whose passages are longer the more lenient their judge is (a topic's mean length and
    its leniency both rise with one topic-level draw), and inside every topic the judge's grade
    moves with the passage's length by ``within`` (0: not at all)."""
    rng = np.random.default_rng(seed)
    level = rng.random(queries)  # a topic's leniency, and its passages' length
    query = np.repeat(np.arange(queries), per_query)
    human = rng.integers(0, 4, len(query))
    offset = rng.normal(0, 1, len(query))  # a passage's length inside its topic (standardised)
    words = np.maximum(5, 40 + 200 * level[query] + 30 * offset).astype(int)
    lift = 1.5 * level[query] + within * offset + rng.normal(0, 0.5, len(query))
    judge = np.clip(np.round(human + lift - 0.75), 0, 3).astype(int)
    return pd.DataFrame(
        {
            "query_id": [f"q{q}" for q in query],
            "doc_id": [f"d{i}" for i in range(len(query))],
            "human": human,
            "judge": judge,
            "words": words,
        }
    )


def test_a_judge_lenient_on_long_topics_has_no_within_topic_length_effect():
    pairs = topics(within=0.0)
    found = length_bias(pairs)
    assert found["rho_overall"] > 0.2  # across topics, long passages get higher grades
    assert abs(found["rho_within"]) < 0.05 and found["p_within"] > 0.05 and not found["length_biased"]
    for grade in range(4):  # about 300 pairs each: a rho's standard error is about 0.06
        assert abs(found[f"rho_within_human_{grade}"]) < 0.15 and found[f"p_within_human_{grade}"] > 0.01


@pytest.mark.parametrize("sign", [1, -1])
def test_a_planted_within_topic_length_effect_is_found_with_its_sign(sign):
    found = length_bias(topics(within=0.6 * sign))
    assert sign * found["rho_within"] > 0.2 and found["p_within"] < 0.01 and found["length_biased"]
    for grade in range(4):
        assert sign * found[f"rho_within_human_{grade}"] > 0.1


def test_the_permutation_p_is_seeded():
    pairs = dl19_like(True, seed=3)
    assert length_bias(pairs, seed=1)["p_within"] == length_bias(pairs, seed=1)["p_within"]
    assert length_bias(pairs.iloc[::-1], seed=1)["rho_within"] == pytest.approx(length_bias(pairs)["rho_within"])


def tiers_of(size: int, slope_within: float, seed: int = 0):
    """Two tiers of ``size`` systems: "deep" long and good, "shallow" short and weak; inside each,
    the score moves with length by ``slope_within`` (per 100 words) plus a little noise."""
    rng = np.random.default_rng(seed)
    lengths, scores, tiers = {}, {}, {}
    for tier, base_len, base_score in (("deep", 150, 0.8), ("shallow", 30, 0.4)):
        for i in range(size):
            name = f"{tier}-{i}"
            lengths[name] = base_len + 40 * i / max(size - 1, 1)
            scores[name] = base_score + slope_within * (lengths[name] - base_len) / 100 + rng.normal(0, 0.01)
            tiers[name] = tier
    return pd.Series(lengths), pd.Series(scores), tiers


def test_a_reversal_within_a_tier_beyond_its_interval_is_simpsons_paradox():
    found = tier_correlation(*tiers_of(10, -0.3))
    assert found["r_all"] > 0.8  # across all systems, longer looks better ...
    assert found["r_within_deep"] < -0.8 and found["r_within_deep_ci_high"] < found["r_all"]  # ... not among peers
    assert found["systems_deep"] == 10 and found["simpson_deep"] and found["simpson"]
    low, high = found["r_within_deep_ci_low"], found["r_within_deep_ci_high"]
    z, half = np.arctanh(found["r_within_deep"]), stats.norm.ppf(0.975) / np.sqrt(10 - 3)
    assert (low, high) == pytest.approx((np.tanh(z - half), np.tanh(z + half)))
    clean = tier_correlation(*tiers_of(10, +0.3))
    assert clean["r_within_deep"] > 0.8 and not clean["simpson"]


def test_a_bare_sign_flip_in_a_tier_of_three_is_not_flagged():
    lengths, scores, tiers = tiers_of(3, -0.3)
    found = tier_correlation(lengths, scores, tiers)
    assert found["r_within_deep"] < 0 < found["r_all"]  # the sign flips ...
    assert (found["r_within_deep_ci_low"], found["r_within_deep_ci_high"]) == (-1, 1)  # ... with no interval
    assert not found["simpson"]
    # no effect at all within tiers of three: the old rule (any sign flip) fired about half the time
    rng = np.random.default_rng(1)
    flips = flags = 0
    level = 0.4 + 0.4 * (lengths[scores.index] > 100)  # the deep tier is better, nothing else
    for _ in range(200):
        found = tier_correlation(lengths, level + rng.normal(0, 0.05, len(level)), tiers)
        flips += any(np.sign(found[f"r_within_{t}"]) != np.sign(found["r_all"]) for t in ("deep", "shallow"))
        flags += found["simpson"]
    assert flips > 100 and flags == 0


def test_system_lengths_on_the_judged_top_ten():
    texts = {f"u{i}": "w " * 100 for i in range(5)} | {f"j{i}": "w " * 10 for i in range(10)}
    docs = [f"u{i}" for i in range(5)] + [f"j{i}" for i in range(10)]  # five long unjudged passages on top
    run = pd.DataFrame({"query_id": "q", "doc_id": docs, "rank": range(1, 16), "score": range(15, 0, -1)})
    judged = pd.DataFrame({"query_id": "q", "doc_id": [f"j{i}" for i in range(10)], "relevance": 1})
    runs = {"s": [run]}
    assert system_lengths(runs, texts)["s"] == pytest.approx((5 * 100 + 5 * 10) / 10)  # every passage
    assert system_lengths(runs, texts, judged=judged)["s"] == 10  # the ten the score uses
    assert system_lengths(runs, texts, depth=3, judged=judged.iloc[:2])["s"] == 10


def test_system_lengths_take_the_top_as_the_evaluation_does_ties_and_depth_included():
    # ranks say a0..a5 in order, but the scores tie in pairs: trec_eval reads a1 a0 a3 a2 a5 a4
    words = {f"a{i}": i + 1 for i in range(6)}
    texts = {d: "w " * n for d, n in words.items()}
    run = pd.DataFrame(
        {"query_id": "q", "doc_id": list(words), "rank": range(1, 7), "score": [3.0, 3.0, 2.0, 2.0, 1.0, 1.0]}
    )
    runs = {"s": [run]}
    assert system_lengths(runs, texts, depth=1)["s"] == words["a1"]  # not a0, the top by rank
    assert system_lengths(runs, texts, depth=3)["s"] == pytest.approx((2 + 1 + 4) / 3)
    # the evaluation depth cuts first: at depth 3 the run holds a1 a0 a3, of which a0 and a3 are judged
    judged = pd.DataFrame({"query_id": "q", "doc_id": ["a0", "a3", "a4", "a5"], "relevance": 1})
    assert system_lengths(runs, texts, depth=10, judged=judged)["s"] == pytest.approx((1 + 4 + 5 + 6) / 4)
    assert system_lengths(runs, texts, depth=10, judged=judged, evaluation_depth=3)["s"] == pytest.approx((1 + 4) / 2)
    assert system_lengths(runs, texts, depth=None, evaluation_depth=2)["s"] == pytest.approx((2 + 1) / 2)
