"""The leaderboard and decisions rules over the user's systems (:mod:`voirdire.stats.leaderboard`).
Inject -> recover: unbiased judges with per-query noise (an offset shared by every system of a
query, and errors of their own) on near-tied and well-spread leaderboards are flagged at about
alpha at most; a planted lift of one system is found by the reversal count, a judge that inverts
the humans' ordering by tau; constructed systems (Perfect) are left out of both."""

import math

import numpy as np
import pandas as pd
import pytest

from voirdire.judges import HUMAN, Scale
from voirdire.paper import agreement_tables
from voirdire.stats import (
    MIN_USER_SYSTEMS,
    USER_COLUMNS,
    difference_in_differences,
    kendall_tau,
    reversal_counts,
    reversal_null,
    system_agreement_intervals,
    tau_null,
    user_agreement,
    user_systems,
)
from voirdire.stats.leaderboard import sign_patterns

ALPHA = 0.05
SIMULATIONS = 200
DRAWS = 199  # per simulation: p resolves 0.005, enough to read p < 0.05
# a rate that is really alpha stays below this bound (two Monte Carlo standard errors) 97.5% of the time
BOUND = ALPHA + 2 * math.sqrt(ALPHA * (1 - ALPHA) / SIMULATIONS)
SYSTEMS, QUERIES = 20, 43


def leaderboard(rng, spread, *, noise=0.08, human_noise=0.12):
    """(humans, judge) query x system scores of an unbiased judge: the systems' population means
    evenly over ``spread`` nDCG, a query difficulty shared by every system, the humans' system x
    query variation, and the judge = the humans + a per-query offset shared by every system of
    the query + an error of its own per (query, system)."""
    means = np.linspace(0.5 - spread / 2, 0.5 + spread / 2, SYSTEMS)
    humans = means + rng.normal(0, 0.15, (QUERIES, 1)) + rng.normal(0, human_noise, (QUERIES, SYSTEMS))
    judge = humans + rng.normal(0, 0.1, (QUERIES, 1)) + rng.normal(0, noise, (QUERIES, SYSTEMS))
    return humans, judge


def frames(*arrays):
    columns = [f"s{i}" for i in range(arrays[0].shape[1])]
    return [pd.DataFrame(a, columns=columns) for a in arrays]


def rates(make, simulations=SIMULATIONS):
    """The share of simulations each rule flags at alpha: (tau_user_p, reversed_user_p)."""
    tau_flags = reversal_flags = 0
    for draw in range(simulations):
        humans, judge = make(np.random.default_rng(draw))
        tau_flags += tau_null(humans, judge, resamples=DRAWS, draws=DRAWS, seed=draw).p < ALPHA
        reference, other = frames(humans, judge)
        reversal_flags += reversal_null(reference, other, ALPHA, flips=DRAWS, seed=draw).p < ALPHA
    return tau_flags / simulations, reversal_flags / simulations


@pytest.mark.parametrize("spread", [0.05, 0.3], ids=["near-tied", "spread"])
def test_unbiased_judges_with_per_query_noise_are_flagged_at_alpha_at_most(spread):
    tau_rate, reversal_rate = rates(lambda rng: leaderboard(rng, spread))
    assert tau_rate <= BOUND and reversal_rate <= BOUND


@pytest.mark.parametrize("spread", [0.05, 0.3], ids=["near-tied", "spread"])
def test_tau_is_calibrated_where_the_humans_are_noisier_than_the_judge_or_it_compresses_their_gaps(spread):
    """The residual (judge - humans) carries the humans' noise here: holding the humans' means
    fixed as the truth would expect the judge to recover that noise (and flag it)."""

    def compressing(rng):
        humans, judge = leaderboard(rng, spread, noise=0.05)
        return humans, 0.5 + 0.5 * (judge - 0.5)

    def better(rng):  # the truth, the humans = truth + grading noise, the judge = truth + less noise
        truth, _ = leaderboard(rng, spread, human_noise=0.1)
        humans = truth + rng.normal(0, 0.08, truth.shape)
        return humans, truth + rng.normal(0, 0.1, (QUERIES, 1)) + rng.normal(0, 0.03, truth.shape)

    for make in (compressing, better):
        tau_rate = np.mean(
            [
                tau_null(*make(np.random.default_rng(d)), resamples=DRAWS, draws=DRAWS, seed=d).p < ALPHA
                for d in range(SIMULATIONS)
            ]
        )
        assert tau_rate <= BOUND, make.__name__


def test_a_lifted_system_is_found_by_the_reversal_count():
    """One system lifted by 0.05 on every query under the judge, above the neighbours within 0.05
    of it (20 systems over 0.1 nDCG; the judge's own error 0.02 a query and system)."""

    def lifted(rng):
        humans, judge = leaderboard(rng, 0.1, noise=0.02, human_noise=0.1)
        judge[:, SYSTEMS // 2] += 0.05
        return humans, judge

    power = np.mean(
        [
            reversal_null(*frames(*lifted(np.random.default_rng(d))), ALPHA, flips=DRAWS, seed=d).p < ALPHA
            for d in range(100)
        ]
    )
    assert power >= 0.8


def test_a_judge_that_inverts_the_ranking_is_found_by_tau():
    def inverted(rng):
        humans, judge = leaderboard(rng, 0.3)
        return humans, 1 - judge

    power = np.mean(
        [
            tau_null(*inverted(np.random.default_rng(d)), resamples=DRAWS, draws=DRAWS, seed=d).p < ALPHA
            for d in range(100)
        ]
    )
    assert power >= 0.8


def test_the_identity_pattern_counts_what_difference_in_differences_reverses():
    rng = np.random.default_rng(3)
    for queries, systems in ((43, 12), (6, 5), (2, 3)):
        humans = rng.random((queries, systems))
        judge = humans + rng.normal(0, 0.2, (queries, systems))
        judge[:, 0] = humans[:, 0]  # a system the judge scores as the humans do
        reference, other = frames(humans, judge)
        expected = int(difference_in_differences(reference, other, ALPHA)["reversed"].sum())
        assert reversal_counts(humans, judge, ALPHA, np.ones((1, queries)))[0] == expected
        # flipping a query of the judge's residual is the judge built that way
        signs = np.ones(queries)
        signs[0] = -1
        flipped = humans + signs[:, None] * (judge - humans)
        again = int(difference_in_differences(reference, frames(flipped)[0], ALPHA)["reversed"].sum())
        assert reversal_counts(humans, judge, ALPHA, signs[None, :])[0] == again


def test_few_queries_enumerate_every_sign_pattern():
    patterns, exact = sign_patterns(4, flips=99)
    assert exact and len(patterns) == 16 and len({tuple(p) for p in patterns}) == 16
    humans, judge = frames(*leaderboard(np.random.default_rng(1), 0.3))
    found = reversal_null(humans.iloc[:4], judge.iloc[:4], ALPHA, flips=99)
    assert found.exact and 1 / 16 <= found.p <= 1


def test_the_tau_interval_is_the_engines_over_the_user_systems():
    humans, judge = frames(*leaderboard(np.random.default_rng(2), 0.3))
    found = tau_null(humans.to_numpy(), judge.to_numpy(), resamples=300, draws=999, seed=5)
    engine = system_agreement_intervals(humans, judge, [], resamples=300, seed=5)
    assert (found.low, found.high) == (engine["tau_all_ci_low"], engine["tau_all_ci_high"])
    assert found.tau == kendall_tau(humans.mean(), judge.mean())
    same = tau_null(humans.to_numpy(), humans.to_numpy() + 0.1, resamples=100, draws=199)
    assert same.tau == 1 and same.null == 1 and same.p == 1  # the humans shifted: nothing to flag


def perfect_case(rng):
    """Nine user systems the judge orders as the humans do (its error is small), and Perfect far
    above them under the humans, last under the judge."""
    humans, judge = leaderboard(rng, 0.3, noise=0.005)
    humans, judge = humans[:, :9], judge[:, :9]
    humans = np.column_stack([humans, humans.max(axis=1) + 0.3])
    judge = np.column_stack([judge, judge.min(axis=1) - 0.3])
    columns = [f"run{i}" for i in range(9)] + ["Perfect"]
    return pd.DataFrame(humans, columns=columns), pd.DataFrame(judge, columns=columns)


def test_constructed_systems_are_left_out_of_both_rules():
    humans, judge = perfect_case(np.random.default_rng(4))
    row = user_agreement(humans, judge, ["Perfect", "Swap[1]"], ALPHA, resamples=200, draws=199)
    assert list(row) == list(USER_COLUMNS)
    assert row["systems_user"] == 9 and row["pairs_user"] == 36
    assert row["tau_user"] > 0.9 and row["reversed_user"] == 0 and row["reversed_user_p"] == 1
    assert row["tau_user_p"] > ALPHA
    everything = user_agreement(humans, judge, [], ALPHA, resamples=200, draws=199)
    assert everything["tau_user"] < row["tau_user"] - 0.3 and everything["reversed_user"] >= 9  # Perfect vs each


def test_table2_gives_the_user_columns_against_both_references():
    humans, judge = perfect_case(np.random.default_rng(4))
    long = [
        w.reset_index(names="query_id")
        .melt(id_vars="query_id", var_name="system", value_name="value")
        .assign(judge=j, measure="m")
        for j, w in ((HUMAN, humans), ("j", judge))
    ]
    scores = pd.concat(long, ignore_index=True)
    qrels = pd.DataFrame({"query_id": ["0"], "doc_id": ["d"], "relevance": [1]})
    pairs = qrels[["query_id", "doc_id"]].assign(in_pool=True)
    common = dict(
        dataset="d",
        labels={HUMAN: qrels, "j": qrels},
        scales={HUMAN: Scale(), "j": Scale()},
        pairs=pairs,
        scores=scores,
        measures=["m"],
        alpha=ALPHA,
        rbo_p=0.9,
        pool_scores=scores[scores["judge"] == HUMAN],
        resamples=100,
        null_draws=199,
    )
    table, _ = agreement_tables(oracles=["Perfect"], **common)  # constructed: the oracles by default
    row = table.set_index("judge").loc["j"]
    wanted = [c + suffix for suffix in ("", "_vs_pool") for c in USER_COLUMNS]
    assert list(table.columns[-len(wanted) :]) == wanted  # appended after every column there was
    for suffix in ("", "_vs_pool"):
        assert row[f"systems_user{suffix}"] == 9 and row[f"reversed_user{suffix}"] == 0
        assert row[f"tau_user{suffix}"] > 0.9 > row[f"tau_all{suffix}"]
        assert row[f"disagreements_reversed{suffix}"] >= 9  # over every system: Perfect reversed against each
    unmarked, _ = agreement_tables(oracles=["Perfect"], constructed=[], **common)
    assert unmarked.set_index("judge").loc["j", "systems_user"] == 10


def test_below_three_user_systems_nothing_is_computed():
    humans, judge = perfect_case(np.random.default_rng(4))
    keep = ["run0", "run1", "Perfect"]
    row = user_agreement(humans[keep], judge[keep], ["Perfect"], ALPHA)
    assert MIN_USER_SYSTEMS == 3 and row["systems_user"] == 2
    assert row["pairs_user"] == 0 and row["reversed_user"] == 0
    assert all(math.isnan(row[c]) for c in USER_COLUMNS if c not in ("systems_user", "pairs_user", "reversed_user"))
    assert user_systems(["BM25", "Perfect", "Swap[1]", "run"], ["Perfect", "Swap[1]"]) == ["BM25", "run"]
