"""Inject -> recover: persona and prompt sensitivity against a rerun of the baseline prompt.

Systems rank the passages of each query; a judge labels them, and each label set scores the
systems by nDCG@10 (ideal from that label set). A judge that answers by a hash of its prompt
(no relevance signal, no bias: a persona, like a rerun, only draws fresh answers) must not be
flagged; the old rule (mean |delta rank|'s interval over queries above 0 or above the rerun's
point value) flags it most of the time. A planted persona effect (the grades of one system's
passages one higher under the persona) is found.
"""

import math

import numpy as np
import pandas as pd
import pytest

from voirdire.probes.sensitivity import (
    ALL,
    BY_CONDITION_COLUMNS,
    EXCESS_COLUMNS,
    NO_NULL,
    NO_PER_QUERY,
    RERUN,
    THE_NULL,
    displacement,
    rerun_excess,
    sensitivity,
)

ALPHA = 0.05
QUERIES, PASSAGES, SYSTEMS, DEPTH = 30, 30, 6, 10
DISCOUNTS = 1 / np.log2(np.arange(2, DEPTH + 2))
BASELINES = {"j": "baseline"}


def world(rng) -> tuple[np.ndarray, np.ndarray]:
    """(human grades (queries, passages), each system's top 10 (systems, queries, 10)): system i
    ranks by the human grade times a quality falling from 1 to 0.4, plus noise."""
    human = rng.integers(0, 4, size=(QUERIES, PASSAGES))
    quality = np.linspace(1.0, 0.4, SYSTEMS)
    noise = rng.normal(0, 1.0, (SYSTEMS, QUERIES, PASSAGES))
    return human, np.argsort(-(human[None] * quality[:, None, None] + noise), axis=2)[:, :, :DEPTH]


def ndcg(labels: np.ndarray, tops: np.ndarray) -> np.ndarray:
    """(queries, systems) nDCG@10 of every system under ``labels`` (ideal from ``labels``)."""
    gains = np.take_along_axis(np.broadcast_to(labels, (SYSTEMS, *labels.shape)), tops, axis=2)
    ideal = (np.sort(labels, axis=1)[:, ::-1][:, :DEPTH] * DISCOUNTS).sum(axis=1)
    return ((gains * DISCOUNTS).sum(axis=2) / np.where(ideal > 0, ideal, 1)).T


def hashed(rng, human: np.ndarray) -> np.ndarray:
    """A judge that answers by a hash of its prompt: a fresh grade for every new prompt (a persona,
    or a rerun with a new sample index), unrelated to the passage."""
    return rng.integers(0, 4, size=human.shape).astype(float)


def noisy(rng, human: np.ndarray) -> np.ndarray:
    """A judge with signal: the human grade, one up or down for 30% of the passages (fresh noise
    for every label set)."""
    step = rng.choice([-1, 1], size=human.shape) * (rng.random(human.shape) < 0.3)
    return np.clip(human + step, 0, 3).astype(float)


def favouring(rng, human: np.ndarray, tops: np.ndarray, system: int = SYSTEMS - 1) -> np.ndarray:
    """The noisy judge under a persona that grades every passage in ``system``'s top 10 one higher."""
    boosted = np.zeros(human.shape, dtype=bool)
    np.put_along_axis(boosted, tops[system], True, axis=1)
    return np.clip(noisy(rng, human) + boosted, 0, 3)


def per_query(sets: dict[str, np.ndarray]) -> pd.DataFrame:
    rows = [
        ("d", "j", condition, f"s{s}", f"q{q:02d}", float(values[q, s]))
        for condition, values in sets.items()
        for q in range(QUERIES)
        for s in range(SYSTEMS)
    ]
    return pd.DataFrame(rows, columns=["dataset", "group", "condition", "system", "query_id", "ndcg"])


def by_condition(sets: dict[str, np.ndarray], **keywords) -> pd.DataFrame:
    scores = per_query(sets)
    moved = displacement(scores, BASELINES)
    return sensitivity(moved, per_query=scores, baselines=BASELINES, **keywords)[1].set_index("condition")


def bound(draws: int) -> float:
    return ALPHA + 2 * math.sqrt(ALPHA * (1 - ALPHA) / draws)


def test_a_judge_that_answers_by_a_hash_of_its_prompt_is_not_flagged_against_its_rerun():
    """120 draws of the hash judge with two personas and a rerun, through :func:`sensitivity`: the
    persona rows and the ``all`` row the verdict reads are flagged (excess_p < alpha) at most
    alpha + 2 MC-SE of the time, and the excess over the rerun is about 0 on average. The old
    rule (the interval over queries of mean |delta r| above the rerun's point value) flags it in
    most draws."""
    rng = np.random.default_rng(7)
    draws, flags, old, old_floor, excess = 120, {"p1": 0, "p2": 0, ALL: 0}, 0, 0, []
    for _ in range(draws):
        human, tops = world(rng)
        sets = {name: ndcg(hashed(rng, human), tops) for name in ("baseline", RERUN, "p1", "p2")}
        rows = by_condition(sets, resamples=50, permutations=199)
        for name in flags:
            flags[name] += rows.loc[name, "excess_p"] < ALPHA
        everything = rows.loc[ALL]
        old += everything["ci_low_queries"] > 0
        old_floor += everything["ci_low_queries"] > everything["noise_floor_abs_delta_r"]
        excess.append(everything["excess_abs_delta_r"])
        assert everything["rerun"] and everything["reason"] == ""
    assert all(count / draws <= bound(draws) for count in flags.values()), flags
    assert old / draws > 0.5 and old_floor / draws > bound(draws)  # the rule this replaces, without and with a floor
    print(f"hash judge, {draws} draws: flagged {flags}, old rule {old / draws:.3f}, with floor {old_floor / draws:.3f}")
    assert abs(np.mean(excess)) <= 3 * np.std(excess) / math.sqrt(draws)


def test_a_judge_whose_persona_only_adds_noise_is_flagged_at_most_alpha():
    """The judge with signal, whose persona draws fresh noise as its rerun does: 300 draws of
    :func:`rerun_excess`, flagged at most alpha + 2 MC-SE of the time."""
    rng = np.random.default_rng(8)
    draws, flagged = 300, 0
    for _ in range(draws):
        human, tops = world(rng)
        base, again, persona = (ndcg(noisy(rng, human), tops) for _ in range(3))
        flagged += rerun_excess(base, persona, again, resamples=20, permutations=199)["excess_p"] < ALPHA
    assert flagged / draws <= bound(draws)


def test_a_planted_persona_effect_is_found():
    """Planted: under the persona the weakest system's passages are graded one higher (it climbs).
    Found in one draw through :func:`sensitivity`, on its row and on the ``all`` row beside a
    persona that only adds noise, and in at least 80% of 60 draws (power at this effect)."""
    rng = np.random.default_rng(9)
    human, tops = world(rng)
    sets = {
        "baseline": ndcg(noisy(rng, human), tops),
        RERUN: ndcg(noisy(rng, human), tops),
        "favouring": ndcg(favouring(rng, human, tops), tops),
        "plain": ndcg(noisy(rng, human), tops),
    }
    rows = by_condition(sets)
    found = rows.loc["favouring"]
    assert found["excess_p"] < ALPHA and found["excess_abs_delta_r"] > 0 and found["excess_ci_low"] > 0
    assert found["excess_abs_delta_r"] == pytest.approx(found["mean_abs_delta_r"] - found["noise_floor_abs_delta_r"])
    assert rows.loc["plain", "excess_p"] >= ALPHA
    assert rows.loc[ALL, "excess_p"] < ALPHA
    power = 0
    for _ in range(60):
        human, tops = world(rng)
        base, again = ndcg(noisy(rng, human), tops), ndcg(noisy(rng, human), tops)
        persona = ndcg(favouring(rng, human, tops), tops)
        power += rerun_excess(base, persona, again, resamples=20, permutations=199)["excess_p"] < ALPHA
    assert power / 60 >= 0.8


def test_without_a_rerun_mean_abs_delta_r_has_no_null_and_is_not_tested():
    rng = np.random.default_rng(10)
    human, tops = world(rng)
    sets = {"baseline": ndcg(noisy(rng, human), tops), "favouring": ndcg(favouring(rng, human, tops), tops)}
    rows = by_condition(sets)
    assert {rows.index.name, *rows.columns} == set(BY_CONDITION_COLUMNS) and BY_CONDITION_COLUMNS[-6:] == EXCESS_COLUMNS
    assert rows[EXCESS_COLUMNS[:4]].isna().all().all()
    assert (~rows["rerun"].astype(bool)).all() and (rows["reason"] == NO_NULL).all()
    assert rows.loc["favouring", "ci_low_queries"] > 0  # what the old rule flagged on
    # with a rerun: the rerun's own row is the null, not tested
    sets[RERUN] = ndcg(noisy(rng, human), tops)
    rows = by_condition(sets)
    assert rows.loc[RERUN, "reason"] == THE_NULL and math.isnan(rows.loc[RERUN, "excess_p"])
    assert rows.loc[RERUN, "rerun"] and rows.loc["favouring", "reason"] == ""
    # without per-query scores there is nothing to resample or permute
    _, bare = sensitivity(displacement(per_query(sets), BASELINES))
    bare = bare.set_index("condition")
    assert bare.loc["favouring", "reason"] == NO_PER_QUERY and math.isnan(bare.loc["favouring", "excess_p"])


def test_the_excess_is_paired_on_the_same_query_draws():
    """A condition identical to the rerun has excess 0 in every bootstrap draw (the interval is
    [0, 0], not the difference of two independent intervals) and p = 1; a deterministic judge
    whose rerun equals its baseline counts any move of the condition as excess."""
    rng = np.random.default_rng(11)
    human, tops = world(rng)
    base, again = ndcg(noisy(rng, human), tops), ndcg(noisy(rng, human), tops)
    same = rerun_excess(base, again, again, resamples=200, permutations=99)
    assert same["excess_abs_delta_r"] == same["excess_ci_low"] == same["excess_ci_high"] == 0
    assert same["excess_p"] == 1
    fixed = rerun_excess(base, ndcg(favouring(rng, human, tops), tops), base, resamples=200, permutations=99)
    assert fixed["excess_abs_delta_r"] > 0 and fixed["excess_p"] < ALPHA
    several = rerun_excess(base, np.stack([again, again]), again, resamples=50, permutations=99)
    assert several["excess_abs_delta_r"] == 0 and several["excess_p"] == 1
    with pytest.raises(ValueError, match="one shape"):
        rerun_excess(base, again[:, :3], again)
    assert math.isnan(rerun_excess(base[:, :1], again[:, :1], again[:, :1])["excess_p"])
