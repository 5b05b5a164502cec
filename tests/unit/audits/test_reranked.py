"""Judge-reranked systems (voirdire.audits.reranked): inject -> recover on small frames and on the
real TREC DL 2019 runs and labels."""

import numpy as np
import pandas as pd
import pytest

from voirdire.audits.reranked import (
    ALL,
    FastNull,
    fast_measure,
    own_order,
    prepare,
    rerank,
    reranked_table,
    resolve_k,
)
from voirdire.config.sections_systems import check_measures
from voirdire.errors import ConfigError
from voirdire.evaluation import cut, evaluate_systems_under
from voirdire.formats import read_qrels, read_rankgpt, read_run, read_topics
from voirdire.judges import needed_pairs, restrict


def toy(seed: int = 0, queries: int = 12, depth: int = 10, systems: int = 3):
    """Human grades 0-3 on a pool of 4 x ``depth`` documents a query (every one a needed pair, as
    the BM25 pool's are) and ``systems`` runs of it, each a noisy ordering by the human grade (the
    systems have signal, so their top k differ)."""
    rng = np.random.default_rng(seed)
    qids = [f"q{i:02d}" for i in range(queries)]
    pool = pd.DataFrame([(q, f"{q}-d{j:02d}") for q in qids for j in range(4 * depth)], columns=["query_id", "doc_id"])
    human = pool.assign(relevance=rng.choice(4, len(pool), p=[0.45, 0.25, 0.2, 0.1]))
    runs = {}
    for s in range(systems):
        score = human["relevance"] + rng.normal(0, 1.2, len(human))
        runs[f"S{s}"] = [human[["query_id", "doc_id"]].assign(rank=0, score=score.to_numpy())]
    pairs = needed_pairs(human, pool=pool, runs=[r[0] for r in runs.values()], depth=depth)
    return qids, restrict(human, pairs), runs, pairs


def table(runs, judges, human, pairs, qids, *, k=10, depth=10, draws=39, seed=42):
    return reranked_table(
        runs, judges, human, pairs, dict.fromkeys(judges, 2), 2, qids, k=k, depth=depth, draws=draws, seed=seed
    )


def noisy(human: pd.DataFrame, rng: np.random.Generator, share: float = 0.3) -> pd.DataFrame:
    """The human grade +-1 on a share of pairs, independent of the documents (clipped to 0-3)."""
    g = human["relevance"].to_numpy()
    return human.assign(relevance=np.clip(g + (rng.random(len(g)) < share) * rng.choice([-1, 1], len(g)), 0, 3))


def test_a_judge_that_copies_the_humans_over_rates_nothing():
    qids, human, runs, pairs = toy()
    found = table(runs, {"copy": human.copy()}, human, pairs, qids, draws=19)
    assert (found["over_rating"] == 0).all() and (found["gain_judge"] == found["gain_human"]).all()
    # its reranking is the humans' own ideal order of the top k: it gains under both
    assert (found.loc[found["system"] != ALL, "gain_human"] > 0).all()
    assert set(found["system"]) == {"S0", "S1", "S2", ALL} and set(found["variant"]) >= {"S0>copy"}


def test_equal_grades_give_the_system_back_in_its_own_order():
    qids, human, runs, pairs = toy(seed=1)
    flat = human.assign(relevance=1)
    keys = pd.MultiIndex.from_frame(flat[["query_id", "doc_id"]].astype(str))
    needed = pd.MultiIndex.from_frame(pairs[["query_id", "doc_id"]].astype(str))
    for system, (run,) in runs.items():
        prepared = prepare(run, 10, keys, needed, 10, "trec_eval")
        variant = rerank(prepared, flat["relevance"].to_numpy(float))
        assert list(variant["doc_id"]) == list(own_order(run, 10)["doc_id"]), system
    found = table(runs, {"flat": flat}, human, pairs, qids, draws=19)
    assert (found["queries_reordered"] == 0).all() and (found["gain_judge"] == 0).all()


def test_a_noisy_judge_independent_of_the_documents_is_not_flagged():
    """Errors exchangeable within query x human grade: the null is exact, so over seeds the flag
    rate is about alpha; a raw over-rating above 0 is what such a judge shows (the winner's curse)."""
    qids, human, runs, pairs = toy(seed=2)
    judges = {f"noise{i}": noisy(human, np.random.default_rng(100 + i)) for i in range(6)}
    found = table(runs, judges, human, pairs, qids, draws=39)
    total = found[found["system"] == ALL]
    assert (total["null_mean"] > 0).all()  # the noise alone over-rates its rerankings
    assert (total["over_rating"] > 0).sum() >= 4
    assert (total["p"] < 0.05).sum() <= 1  # Binomial(6, 0.05): P(>= 2) is 0.03


def test_a_leniency_on_what_the_systems_put_in_their_top_k_is_flagged():
    qids, human, runs, pairs = toy(seed=3)
    rng = np.random.default_rng(5)
    tops = pd.concat([cut(r[0], 10)[["query_id", "doc_id"]] for r in runs.values()]).drop_duplicates()
    in_top = pd.MultiIndex.from_frame(human[["query_id", "doc_id"]]).isin(pd.MultiIndex.from_frame(tops))
    g = human["relevance"].to_numpy()
    fooled = human.assign(relevance=np.where(in_top & (g == 0) & (rng.random(len(g)) < 0.5), 3, g))
    found = table(runs, {"fooled": fooled}, human, pairs, qids, draws=39)
    total = found[found["system"] == ALL].iloc[0]
    assert total["over_rating"] > 0 and total["excess"] > 0 and total["over_rating_ci_low"] > 0
    assert total["p"] < 0.05
    # the humans see the non-relevant documents it pulls up: its rerankings gain less under them
    assert total["gain_human"] < total["gain_judge"]


def test_k_beyond_the_depth_is_a_config_error_naming_the_key():
    with pytest.raises(ConfigError) as error:
        resolve_k(20, "nDCG@10", 10)
    assert error.value.key == "audits.reranked.k"
    assert resolve_k(None, "nDCG(judged_only=True)@10", 100) == 10 and resolve_k(None, "AP", 50) == 50
    assert resolve_k(None, "nDCG@20", 10) == 10
    config = {
        "evaluation": {"measures": ["nDCG@10"], "test": "t", "correction": "none", "depth": None},
        "bm25": {"depth": 10},
        "audits": {"reranked": {"k": 11}},
    }
    with pytest.raises(ConfigError) as error:
        check_measures(config)
    assert "audits.reranked.k" in str(error.value)


def test_a_recorded_judge_missing_top_k_labels_is_counted_and_keeps_them_in_place():
    qids, human, runs, pairs = toy(seed=4)
    run = runs["S0"][0]
    top = own_order(run, 10)
    top = top[top["position"] < 10]
    dropped = top.groupby("query_id").head(2)  # each query's first two documents unlabelled
    keys = pd.MultiIndex.from_frame(dropped[["query_id", "doc_id"]])
    partial = human[~pd.MultiIndex.from_frame(human[["query_id", "doc_id"]]).isin(keys)].reset_index(drop=True)
    found = table({"S0": runs["S0"]}, {"partial": partial}, human, pairs, qids, draws=19).set_index("system")
    assert found.loc["S0", "unlabelled"] == len(dropped) == 2 * len(qids)
    assert found.loc["S0", "top_k_pairs"] == len(top)
    label_keys = pd.MultiIndex.from_frame(partial[["query_id", "doc_id"]].astype(str))
    needed = pd.MultiIndex.from_frame(pairs[["query_id", "doc_id"]].astype(str))
    variant = rerank(prepare(run, 10, label_keys, needed, 10, "trec_eval"), partial["relevance"].to_numpy(float))
    first_two = variant.groupby("query_id").head(2)
    assert list(first_two["doc_id"]) == list(dropped["doc_id"])  # never guessed: kept where they were


# ----------------------------------------------------------------------------- real DL19


@pytest.fixture
def dl19_setting(dl19):
    qrels = read_qrels(dl19 / "qrels.nist.txt")
    _, bm25, _ = read_rankgpt(dl19 / "bm25-top100.rankgpt.json")
    runs = {
        "BM25": [bm25],
        "monot5": [read_run(dl19 / "run.monot5-3b.txt")],
        "rank1": [read_run(dl19 / "run.rank1-7b.txt")],
    }
    pairs = needed_pairs(qrels, pool=bm25, runs=[r[0] for r in runs.values()], depth=100)
    return list(read_topics(dl19 / "topics.tsv")), restrict(qrels, pairs), runs, pairs


def test_dl19_equal_grades_and_a_copy_score_as_evaluate_does(dl19_setting):
    """Rank1-7B's run has scores that tie at single precision: its variant under equal grades is
    scored exactly as the run itself (its own order is trec_eval's); a copy over-rates nothing."""
    qids, human, runs, pairs = dl19_setting
    found = reranked_table(
        runs,
        {"flat": human.assign(relevance=1), "copy": human.copy()},
        human,
        pairs,
        {"flat": 1, "copy": 2},
        2,
        qids,
        k=10,
        depth=100,
        draws=0,
    ).set_index(["judge", "system"])
    direct = evaluate_systems_under(runs, {"h": human}, {"h": 2}, qids, depth=100)["h"].groupby("system")["ndcg"].mean()
    for system in runs:
        assert found.loc[("flat", system), "variant_human"] == found.loc[("flat", system), "system_human"]
        assert found.loc[("flat", system), "system_human"] == pytest.approx(direct[system], abs=1e-12)
        assert found.loc[("copy", system), "over_rating"] == 0
    assert found.loc[("flat", ALL), "queries_reordered"] == 0
    assert (found.loc["copy", "unjudged"] >= 0).all() and found.loc[("copy", "rank1"), "unjudged"] > 0


def test_dl19_a_judge_fooled_by_the_systems_non_relevant_top_documents_is_flagged(dl19_setting):
    qids, human, runs, pairs = dl19_setting
    rng = np.random.default_rng(7)
    tops = pd.concat([cut(r[0], 10)[["query_id", "doc_id"]] for r in runs.values()]).drop_duplicates()
    in_top = pd.MultiIndex.from_frame(human[["query_id", "doc_id"]]).isin(pd.MultiIndex.from_frame(tops))
    g = human["relevance"].to_numpy()
    fooled = human.assign(relevance=np.where(in_top & (g == 0) & (rng.random(len(g)) < 0.5), 3, g))
    found = reranked_table(
        runs, {"fooled": fooled}, human, pairs, {"fooled": 2}, 2, qids, k=10, depth=100, draws=19
    ).set_index("system")
    # the Monte Carlo p sits at its floor 1 / (draws + 1); the normal approximation's passes Holm
    # over a judge's 14 questions at alpha 0.05 (0.05 / 14), which that floor never could
    assert found.loc[ALL, "p_permutation"] == pytest.approx(1 / 20) and found.loc[ALL, "excess"] > 0
    assert found.loc[ALL, "p"] < 0.05 / 14 < 1 / 20
    assert (found.loc[list(runs), "over_rating"] > 0).all()


def test_the_verdict_flags_an_excess_over_the_noise_not_the_raw_over_rating(tmp_path):
    from voirdire.audits.figures import reranked_chart
    from voirdire.verdict import FLAG, NA, PASS, DatasetTables, verdict

    qids, human, runs, pairs = toy(seed=3)
    rng = np.random.default_rng(5)
    g = human["relevance"].to_numpy()
    tops = pd.concat([cut(r[0], 10)[["query_id", "doc_id"]] for r in runs.values()]).drop_duplicates()
    in_top = pd.MultiIndex.from_frame(human[["query_id", "doc_id"]]).isin(pd.MultiIndex.from_frame(tops))
    judges = {
        "noisy": noisy(human, np.random.default_rng(9)),
        "fooled": human.assign(relevance=np.where(in_top & (g == 0) & (rng.random(len(g)) < 0.5), 3, g)),
    }
    found = table(runs, judges, human, pairs, qids, draws=99).assign(dataset="d")
    long = verdict({"d": DatasetTables(judges=[*judges, "nobody"], tables={"reranked": found})})
    cells = long[long["question"] == "reranking"].set_index("judge")
    assert cells.loc["fooled", "status"] == FLAG and cells.loc["noisy", "status"] == PASS
    assert cells.loc["noisy", "effect"] > 0  # over-rated by its noise, and not flagged for it
    assert cells.loc["nobody", "status"] == NA
    figure = reranked_chart(found, tmp_path / "reranked.png")
    assert (tmp_path / "reranked.png").is_file() and len(figure.axes) >= 2


# ----------------------------------------------------------------------------- the null in numpy, and its p


def _observed(runs, judge, human, qids, *, k=10, depth=100, measure="nDCG(judged_only=True)@10", ties="trec_eval"):
    """The systems, their variants and FastNull of one judge, as reranked_table prepares them."""
    labels = judge.astype({"query_id": str, "doc_id": str}).reset_index(drop=True)
    keys = pd.MultiIndex.from_frame(labels[["query_id", "doc_id"]])
    grades = labels["relevance"].to_numpy(float)
    needed = pd.MultiIndex.from_frame(human[["query_id", "doc_id"]].astype(str))
    prepared = {s: [prepare(r, k, keys, needed, depth, ties) for r in rs] for s, rs in runs.items()}
    variants = {f"{s}>j": [rerank(p, grades) for p in prepared[s]] for s in runs}
    cutoff, judged_only = fast_measure(measure)
    fast = FastNull(prepared, list(runs), labels, grades, human, list(qids), cutoff, judged_only)
    evaluated = evaluate_systems_under(
        {**runs, **variants}, {"j": labels, "h": human}, {"j": 2, "h": 2}, qids, measure=measure, depth=depth, ties=ties
    )
    wide = {n: f.pivot(index="query_id", columns="system", values="ndcg").loc[list(qids)] for n, f in evaluated.items()}
    return fast, wide


def test_dl19_the_numpy_null_scores_every_system_and_variant_as_the_evaluation_path(dl19_setting):
    """The fast null's statistic is the evaluated one: on DL19 (Rank1's single-precision ties
    included) its scores of each system and its variant under a noisy judge and the humans equal
    evaluate_systems_under's (ir_measures), and so does the table's over-rating; drawn with the
    same seed both ways, the nulls agree draw by draw."""
    qids, human, runs, pairs = dl19_setting
    judge = noisy(human, np.random.default_rng(11))
    fast, wide = _observed(runs, judge, human, qids)
    found = fast.observed()
    over = []
    for s in runs:
        expected = np.column_stack([wide["j"][s], wide["j"][f"{s}>j"], wide["h"][s], wide["h"][f"{s}>j"]])
        np.testing.assert_allclose(found[s], expected, rtol=0, atol=1e-12)
        over.append(((found[s][:, 1] - found[s][:, 0]) - (found[s][:, 3] - found[s][:, 2])).mean())
    options = {"k": 10, "depth": 100, "draws": 3, "resamples": 50}
    both = [
        reranked_table(runs, {"j": judge}, human, pairs, {"j": 2}, 2, qids, fast=fast_, **options).set_index("system")
        for fast_ in (True, False)
    ]
    assert both[0].loc[ALL, "over_rating"] == pytest.approx(np.mean(over), abs=1e-12)
    for column in ("null_mean", "null_sd", "p", "p_permutation"):
        np.testing.assert_allclose(both[0][column].to_numpy(), both[1][column].to_numpy(), rtol=0, atol=1e-12)


@pytest.mark.parametrize(
    ("measure", "ties", "depth"),
    [("nDCG@5", "exact", 10), ("nDCG", "trec_eval", None), ("nDCG(judged_only=True)@3", "exact", None)],
)
def test_the_numpy_null_follows_the_measure_the_ties_and_the_depth(measure, ties, depth):
    qids, human, runs, pairs = toy(seed=6)
    judge = noisy(human, np.random.default_rng(3))
    fast, wide = _observed(runs, judge, human, qids, depth=depth, measure=measure, ties=ties)
    for s, found in fast.observed().items():
        expected = np.column_stack([wide["j"][s], wide["j"][f"{s}>j"], wide["h"][s], wide["h"][f"{s}>j"]])
        np.testing.assert_allclose(found, expected, rtol=0, atol=1e-12)
    options = {"k": 5, "depth": depth, "measure": measure, "ties": ties, "draws": 4, "resamples": 50}
    one, other = (
        reranked_table(runs, {"j": judge}, human, pairs, {"j": 2}, 2, qids, fast=f, **options) for f in (True, False)
    )
    np.testing.assert_allclose(one["null_mean"], other["null_mean"], rtol=0, atol=1e-12)


def test_a_measure_the_numpy_null_does_not_compute_is_drawn_through_the_evaluation_path():
    assert fast_measure("P@10") is None and fast_measure("nDCG(gains={0:0,1:1,2:3,3:7})@10") is None
    assert fast_measure("nDCG(judged_only=True)@10") == (10, True) and fast_measure("nDCG")[0] == np.inf
    qids, human, runs, pairs = toy(seed=7)
    judge = noisy(human, np.random.default_rng(4))
    found = table(runs, {"j": judge}, human, pairs, qids, draws=5)
    other = reranked_table(
        runs, {"j": judge}, human, pairs, {"j": 2}, 2, qids, k=10, depth=10, draws=5, seed=42, measure="P@5"
    )
    assert other["draws"].eq(5).all() and other["null_sd"].gt(0).any()  # P@5 of a re-sorted top 10 moves
    assert not np.allclose(found["null_mean"], other["null_mean"])  # another measure, another null


def test_p_is_the_normal_approximation_of_the_null_and_the_monte_carlo_p_stays_beside_it():
    from scipy.stats import norm

    qids, human, runs, pairs = toy(seed=8)
    judge = noisy(human, np.random.default_rng(5))
    found = table(runs, {"j": judge}, human, pairs, qids, draws=59).set_index("system")
    for _, row in found.iterrows():
        z = (row["over_rating"] - row["null_mean"]) / row["null_sd"]
        assert row["p"] == pytest.approx(norm.sf(z), rel=1e-9, abs=1e-15)
        assert 1 / 60 <= row["p_permutation"] <= 1 and row["p_permutation"] * 60 == pytest.approx(
            round(row["p_permutation"] * 60)
        )
    # a copy of the humans: every draw over-rates nothing, a null without spread; the Monte Carlo p
    copy = table(runs, {"copy": human.copy()}, human, pairs, qids, draws=19)
    assert (copy["null_sd"] == 0).all() and (copy["p"] == 1).all() and (copy["p_permutation"] == 1).all()
    assert copy["null_skew"].isna().all()
    null = found.loc[ALL]
    assert np.isfinite(null["null_skew"]) and abs(null["null_skew"]) < 2  # near normal, as the p assumes


def test_clean_judges_of_the_null_kinds_are_not_flagged():
    """Strict, lenient, a leniency per topic, an offset per query shared by every system: each a
    function of the query and the human grade alone, so permuting its grades within query x human
    grade changes nothing and its excess over its own noise is exactly 0. Per-query noise (some
    topics noisier than others) is exchangeable within those blocks: not flagged either. (A judge
    lenient on documents many systems retrieve is a bias this question is meant to find.)"""
    qids, human, runs, pairs = toy(seed=4)
    g, q = human["relevance"].to_numpy(), human["query_id"].to_numpy()
    rng = np.random.default_rng(8)
    offset = dict(zip(qids, rng.choice([-1, 0, 1], len(qids)), strict=True))
    lenient_topics = set(rng.choice(qids, len(qids) // 3, replace=False))
    share = dict(zip(qids, rng.uniform(0.05, 0.6, len(qids)), strict=True))
    noise = (rng.random(len(g)) < np.array([share[x] for x in q])) * rng.choice([-1, 1], len(g))
    judges = {
        "strict": human.assign(relevance=np.clip(g - 1, 0, 3)),
        "lenient": human.assign(relevance=np.clip(g + 1, 0, 3)),
        "topic_lenient": human.assign(relevance=np.where([x in lenient_topics for x in q], np.clip(g + 1, 0, 3), g)),
        "query_offset": human.assign(relevance=np.clip(g + np.array([offset[x] for x in q]), 0, 3)),
        "query_noise": human.assign(relevance=np.clip(g + noise, 0, 3)),
    }
    total = table(runs, judges, human, pairs, qids, draws=39).set_index("system").loc[ALL].set_index("judge")
    for judge in ("strict", "lenient", "topic_lenient", "query_offset"):
        assert total.loc[judge, "excess"] == pytest.approx(0, abs=1e-12), judge
        assert total.loc[judge, "p"] >= 0.05, judge
    assert total.loc["query_noise", "p"] >= 0.05 and total.loc["query_noise", "null_mean"] > 0
