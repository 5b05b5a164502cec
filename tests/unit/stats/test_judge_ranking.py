"""The judges' leaderboard (:mod:`voirdire.stats.ranking`, :mod:`voirdire.audits.ranking`),
inject -> recover: judges of known quality come out ranked in that order, neighbours of different
quality are told apart and neighbours of the same quality are not (at about alpha over many
draws), pairing the resamples narrows the interval of a difference when the judges share their
errors, and 84 label sets rank in seconds with enough swap patterns for Holm over 83 pairs."""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from voirdire.audits.labels import label_agreement
from voirdire.audits.ranking import RANKING_COLUMNS, judge_leaderboard
from voirdire.judges import HUMAN, Scale
from voirdire.stats import kappa_from_counts, query_resamples
from voirdire.stats.ranking import (
    RANK_COLUMNS,
    difference_interval,
    per_query_counts,
    rank_judges,
    swap_draws,
    swap_p,
)
from voirdire.stats.reliability import alpha_from_counts

ALPHA = 0.05
SCALE = Scale(0, 3, 2)


def humans(rng, queries: int, pairs: int) -> pd.DataFrame:
    """Human grades 0-3 of ``pairs`` documents for each of ``queries`` queries."""
    rows = [(f"q{q:03d}", f"q{q:03d}-d{d}") for q in range(queries) for d in range(pairs)]
    frame = pd.DataFrame(rows, columns=["query_id", "doc_id"])
    return frame.assign(relevance=rng.choice(4, len(frame), p=[0.45, 0.25, 0.18, 0.12]))


def noisy(rng, human: pd.DataFrame, noise: float | np.ndarray) -> pd.DataFrame:
    """A judge that gives the human grade, or with probability ``noise`` (per pair) a grade drawn at random."""
    replaced = rng.random(len(human)) < noise
    return human.assign(relevance=np.where(replaced, rng.integers(0, 4, len(human)), human["relevance"]))


def hardness(rng, human: pd.DataFrame, low: float, high: float) -> np.ndarray:
    """Each pair's noise: its query's, drawn between ``low`` and ``high`` (some topics are hard)."""
    queries = human["query_id"].unique()
    level = dict(zip(queries, rng.uniform(low, high, len(queries)), strict=True))
    return human["query_id"].map(level).to_numpy()


def kappa(counts):
    return kappa_from_counts(counts, 1.0 - np.eye(2))


def binary_counts(human: pd.DataFrame, judge: pd.DataFrame) -> np.ndarray:
    queries = sorted(human["query_id"].unique())
    both = human.merge(judge, on=["query_id", "doc_id"], suffixes=("_h", "_j"))
    return per_query_counts(
        both["query_id"],
        SCALE.binary(both["relevance_h"]),
        SCALE.binary(both["relevance_j"]),
        [0, 1],
        [0, 1],
        queries,
    )


def test_judges_at_noise_01_03_05_rank_in_that_order_and_every_step_is_distinguishable():
    rng = np.random.default_rng(7)
    human = humans(rng, 60, 40)
    noise = {"clean": 0.1, "middling": 0.3, "noisy": 0.5}
    labels = {HUMAN: human} | {j: noisy(rng, human, n) for j, n in reversed(noise.items())}
    scales = dict.fromkeys(labels, SCALE)
    table = judge_leaderboard(labels, scales, dict.fromkeys(noise, "recorded"), alpha=ALPHA)
    assert list(table.columns) == RANKING_COLUMNS[1:]
    assert set(table["measure"]) == {"kappa_binary", "alpha_ordinal"}  # every judge on the humans' scale
    for measure, block in table.groupby("measure"):
        block = block.sort_values("rank")
        assert list(block["judge"]) == list(noise), measure
        steps = block.iloc[:-1]
        assert steps["distinguishable"].eq(True).all(), steps[["judge", "difference", "p", "p_holm"]]
        assert (steps["difference_ci_low"] > 0).all()
        assert list(block["tier"]) == [1, 2, 3]
        assert block["distinguishable"].iloc[-1] is pd.NA and pd.isna(block["next_judge"].iloc[-1])
        # every value inside its own interval, every judge resampled over the same queries
        assert ((block["value_ci_low"] <= block["value"]) & (block["value"] <= block["value_ci_high"])).all()
        assert (block["comparisons"] == 2).all() and (block["queries"] == 60).all()


def test_the_points_are_table_2s():
    """kappa and alpha of each judge equal :func:`label_agreement`'s (Table 2), here where the
    judges grade 0/1 against 0-3 humans: alpha is the binary one."""
    rng = np.random.default_rng(3)
    human = humans(rng, 20, 15)
    binary = Scale(0, 1, 1)
    labels = {HUMAN: human}
    for name, n in (("a", 0.2), ("b", 0.4)):
        labels[name] = noisy(rng, human, n).assign(relevance=lambda f: (f["relevance"] >= 2).astype(int))
    scales = {HUMAN: SCALE, "a": binary, "b": binary}
    table = judge_leaderboard(labels, scales, {"a": "recorded", "b": "recorded"}).set_index(["measure", "judge"])
    assert set(table.index.get_level_values(0)) == {"kappa_binary", "alpha_binary"}
    reported = label_agreement(labels, scales, human[["query_id", "doc_id"]])
    for judge, row in reported.items():
        assert table.loc[("kappa_binary", judge), "value"] == pytest.approx(row["kappa_binary"], abs=1e-12)
        assert table.loc[("alpha_binary", judge), "value"] == pytest.approx(row["alpha_binary"], abs=1e-12)


def test_two_judges_of_the_same_quality_are_told_apart_in_about_alpha_of_draws():
    """Two judges with the same (per-topic) noise, drawn independently: the swap test's p of
    the pair is below alpha in about alpha of the draws, not more (a binomial bound)."""
    rng = np.random.default_rng(2025)
    draws, flagged, queries, pairs = 400, 0, 25, 20
    query = np.repeat(np.arange(queries), pairs)
    for _ in range(draws):
        human = (rng.random(len(query)) < rng.uniform(0.1, 0.6, queries)[query]).astype(int)
        level = rng.uniform(0.1, 0.5, queries)[query]  # some topics are hard, for both judges alike
        arrays = {}
        for judge in ("one", "other"):
            label = np.where(rng.random(len(query)) < level, rng.integers(0, 2, len(query)), human)
            arrays[judge] = np.zeros((queries, 2, 2))
            np.add.at(arrays[judge], (query, human, label), 1)
        table = rank_judges(arrays, kappa, alpha=ALPHA, resamples=100, seed=int(rng.integers(1 << 30)), draws=499)
        flagged += bool(table["p"].iloc[0] < ALPHA)
    # more flags than a binomial(draws, alpha) gives once in a thousand: the test is liberal
    assert stats.binomtest(flagged, draws, ALPHA, alternative="greater").pvalue > 1e-3, flagged


def test_the_paired_interval_is_narrower_than_the_unpaired_when_judges_share_their_errors():
    """Two judges that share most errors (the second is the first with 3% more noise) on topics of
    very different difficulty: the first's kappa and the second's rise and fall together across
    resamples, so the interval of their difference on the same resamples is far narrower than on
    resamples of their own; and it is the one rank_judges reports."""
    rng = np.random.default_rng(5)
    human = humans(rng, 40, 30)
    first = noisy(rng, human, hardness(rng, human, 0.02, 0.7))
    second = noisy(rng, first, 0.03)
    a, b = binary_counts(human, first), binary_counts(human, second)
    paired = difference_interval(a, b, kappa)
    unpaired = difference_interval(a, b, kappa, paired=False)
    assert paired.high - paired.low < 0.5 * (unpaired.high - unpaired.low), (paired, unpaired)
    table = rank_judges({"first": a, "second": b}, kappa)
    top = table.iloc[0]
    assert top["judge"] == "first" and top["next_judge"] == "second"
    assert (top["difference_ci_low"], top["difference_ci_high"]) == pytest.approx((paired.low, paired.high))


def test_the_swap_test_is_exact_over_every_pattern_and_one_for_identical_judges():
    rng = np.random.default_rng(1)
    human = humans(rng, 6, 20)
    a = binary_counts(human, noisy(rng, human, 0.1))
    b = binary_counts(human, noisy(rng, human, 0.6))
    table = rank_judges({"a": a, "b": b}, kappa)
    assert table["patterns"].iloc[0] == 2**6  # every pattern: 2^6 <= the draws
    assert table["p"].iloc[0] >= 2 / 2**6  # the identity and the full swap are equally extreme
    same = rank_judges({"a": a, "copy": a.copy()}, kappa)
    assert same["difference"].iloc[0] == 0 and same["p"].iloc[0] == 1.0
    assert (same["difference_ci_low"].iloc[0], same["difference_ci_high"].iloc[0]) == (0.0, 0.0)
    # the vectorised swaps are the statistic of each pattern's swapped counts, one by one
    signs = np.where(rng.random((30, 6)) < 0.5, -1.0, 1.0)
    by_hand = []
    for row in signs:
        swapped = row[:, None, None] < 0
        mixed_a, mixed_b = np.where(swapped, b, a).sum(axis=0), np.where(swapped, a, b).sum(axis=0)
        by_hand.append(abs(kappa(mixed_a[None])[0] - kappa(mixed_b[None])[0]))
    observed = abs(kappa(a.sum(axis=0)[None])[0] - kappa(b.sum(axis=0)[None])[0])
    expected = (1 + sum(d >= observed - 1e-9 for d in by_hand)) / (1 + len(by_hand))
    assert swap_p(a, b, kappa, signs, exact=False) == pytest.approx(expected)


def test_84_label_sets_rank_in_seconds_and_holm_over_83_pairs_can_still_separate_them():
    """A challenge's size: 84 label sets in four groups of 21 of one quality each. Enough swap
    patterns that Holm over 83 adjacent pairs separates the groups (p down to 1 / 16,600), and
    no pair within a group is called different."""
    rng = np.random.default_rng(84)
    human = humans(rng, 50, 40)
    groups = (0.05, 0.3, 0.55, 0.8)
    labels = {HUMAN: human}
    for g, n in enumerate(groups):
        labels |= {f"g{g}-{i:02d}": noisy(rng, human, n) for i in range(21)}
    scales = dict.fromkeys(labels, SCALE)
    started = time.perf_counter()
    table = judge_leaderboard(labels, scales, dict.fromkeys(labels, "recorded"), alpha=ALPHA)
    took = time.perf_counter() - started
    assert took < 60, f"{took:.1f} s"  # some 5 s on two busy cores
    assert swap_draws(83, ALPHA) >= 10 * 83 / ALPHA - 1
    for measure, block in table.groupby("measure"):
        block = block.sort_values("rank")
        group = block["judge"].str[1].astype(int).to_numpy()
        assert (np.diff(group) >= 0).all(), measure  # the groups in order of their noise
        boundary = np.r_[np.diff(group) > 0, False]
        split = block["distinguishable"].fillna(False).to_numpy(dtype=bool)
        assert split[boundary].all(), measure
        assert not split[~boundary].any(), block.loc[split & ~boundary, ["judge", "p", "p_holm"]]
        assert block["tier"].max() == len(groups) and (block["patterns"] == swap_draws(83, ALPHA)).all()


def test_tau_over_the_users_systems_ranks_the_judge_closer_to_the_reference_first():
    """tau_user: judges whose per-query scores of 8 systems carry more noise order the systems
    less like the reference; the oracles (constructed) are left out of the systems."""
    rng = np.random.default_rng(9)
    queries = [f"q{i}" for i in range(40)]
    systems = [f"s{i}" for i in range(8)]
    truth = np.linspace(0.3, 0.65, len(systems))
    spread = rng.normal(0, 0.15, (len(queries), 1))  # per-query difficulty, shared
    reference = pd.DataFrame(truth + spread + rng.normal(0, 0.05, (len(queries), len(systems))), queries, systems)
    rows = []
    for judge, noise in (("close", 0.02), ("far", 0.4)):
        scores = reference + rng.normal(0, noise, reference.shape)
        rows += [(judge, s, q, scores.loc[q, s]) for q in queries for s in systems]
    scores = pd.DataFrame(rows, columns=["judge", "system", "query_id", "ndcg"])
    human = humans(rng, 40, 10).assign(query_id=lambda f: f["query_id"].str.replace("q0*", "q", regex=True))
    labels = {HUMAN: human, "close": human, "far": human}
    table = judge_leaderboard(
        labels,
        dict.fromkeys(labels, SCALE),
        {"close": "llm", "far": "llm"},
        scores=scores,
        reference=reference,
        user=systems,
    )
    tau = table[table["measure"] == "tau_user"].sort_values("rank")
    assert list(tau["judge"]) == ["close", "far"] and (tau["systems"] == len(systems)).all()
    # the paired interval lies above 0; the swap test's p is reported (it is conservative where one
    # judge's tau sits at 1: the swapped judges both carry noise, docs/audits.md)
    assert tau["difference_ci_low"].iloc[0] > 0 and 0 < tau["p"].iloc[0] <= 1
    # fewer than three systems of the user's: no tau rows
    few = judge_leaderboard(
        labels,
        dict.fromkeys(labels, SCALE),
        {"close": "llm", "far": "llm"},
        scores=scores,
        reference=reference,
        user=systems[:2],
    )
    assert "tau_user" not in set(few["measure"])


def test_an_undefined_measure_ranks_last_without_a_comparison():
    rng = np.random.default_rng(4)
    human = humans(rng, 10, 10)
    good = binary_counts(human, noisy(rng, human, 0.2))
    nothing = np.zeros_like(good)  # a judge that labelled none of the pairs: kappa undefined
    table = rank_judges({"nothing": nothing, "good": good}, kappa)
    assert list(table["judge"]) == ["good", "nothing"] and list(table.columns) == RANK_COLUMNS
    assert np.isnan(table["p"]).all() and table["tier"].iloc[1] is pd.NA and table["comparisons"].iloc[0] == 0


def test_every_draw_is_the_statistic_of_the_resampled_counts():
    """The bootstrap of a judge is its counts summed with the engine's query multiplicities."""
    rng = np.random.default_rng(6)
    human = humans(rng, 12, 10)
    counts = per_query_counts(
        human["query_id"],
        human["relevance"],
        noisy(rng, human, 0.3)["relevance"],
        range(4),
        range(4),
        sorted(human["query_id"].unique()),
    )
    table = rank_judges({"j": counts}, lambda c: alpha_from_counts(c, range(4), "ordinal"), resamples=50, seed=8)
    times = query_resamples(12, 50, 8)
    by_hand = [float(alpha_from_counts((t[:, None, None] * counts).sum(axis=0), range(4), "ordinal")) for t in times]
    assert table["value_ci_low"].iloc[0] == pytest.approx(np.percentile(by_hand, 2.5))
    assert table["value_ci_high"].iloc[0] == pytest.approx(np.percentile(by_hand, 97.5))
