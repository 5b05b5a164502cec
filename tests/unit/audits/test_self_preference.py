"""Self-preference, inject -> recover (the flag is the within-grade estimate on labels).

Synthetic collection: 40 queries of 30 pooled documents with human grades 0-2 (on a 0-3 scale, so a +1
bonus is never capped); three systems
of three families, one strong (it puts the relevant documents first), two weaker. The judge
under audit is of the strong system's family; its panel judge copies the humans. A judge that
is only strict (grade 1 -> 0) or only lenient (0 -> 1) has no family bias and must not be
flagged, although the paper's nDCG difference (``corrected``) reads as self-preference for
the strict one; a planted +1 grade on its family's documents with probability 0.1 (+0.10 in
expectation) must be recovered within its interval.
"""

import numpy as np
import pandas as pd
import pytest

from voirdire.audits.panel import self_preference, top_documents, within_grade
from voirdire.evaluation import evaluate_systems
from voirdire.judges import Scale
from voirdire.stats import query_mean_test

QUERIES, DOCS = 40, 30
SYSTEM_FAMILIES = {"gpt-run": "gpt", "x-run": "x", "y-run": "y"}
JUDGE_FAMILIES = {"human": None, "judge": "gpt", "panel": "claude"}
KINDS = {"human": "human", "judge": "llm", "panel": "llm"}
SKILL = {"gpt-run": 3.0, "x-run": 1.0, "y-run": 0.4}  # how strongly a system's score follows the grade


def collection(seed=0):
    rng = np.random.default_rng(seed)
    qrels, runs = [], {s: [] for s in SYSTEM_FAMILIES}
    for q in range(QUERIES):
        grades = rng.choice([0, 1, 2], size=DOCS, p=[0.5, 0.3, 0.2])  # grade 3 left free for a bonus
        for d, g in enumerate(grades):
            qrels.append((f"q{q}", f"d{q}-{d}", int(g)))
        for system, skill in SKILL.items():
            scores = skill * grades + rng.normal(0, 1, DOCS)
            for d, score in enumerate(scores):
                runs[system].append((f"q{q}", f"d{q}-{d}", float(score)))
    human = pd.DataFrame(qrels, columns=["query_id", "doc_id", "relevance"])
    runs = {s: [pd.DataFrame(rows, columns=["query_id", "doc_id", "score"]).assign(rank=0)] for s, rows in runs.items()}
    return human, runs


def audit(judge_labels, human, runs, **kwargs):
    labels = {"human": human, "judge": judge_labels, "panel": human.copy()}
    topics = [f"q{q}" for q in range(QUERIES)]
    per_query = pd.concat(
        [evaluate_systems(runs, lab, topics).assign(judge=j) for j, lab in labels.items()], ignore_index=True
    )
    tops = top_documents(runs, human, depth=10)
    scales = dict.fromkeys(labels, Scale(0, 3, 2))
    table = self_preference(
        per_query,
        JUDGE_FAMILIES,
        SYSTEM_FAMILIES,
        KINDS,
        labels=labels,
        scales=scales,
        tops=tops,
        resamples=500,
        **kwargs,
    )
    return table.set_index("judge").loc["judge"], tops


def test_a_strict_judge_with_no_family_bias_is_not_flagged_though_the_paper_figure_reads_positive():
    human, runs = collection()
    strict = human.assign(relevance=human["relevance"].replace({1: 0}))
    row, _ = audit(strict, human, runs)
    assert row["corrected"] > 0 and row["corrected_ci_low"] > 0  # the nDCG difference is fooled by strictness
    assert row["within_grade"] == pytest.approx(0.0, abs=1e-12)  # same grade, same residual: nothing to find
    assert not row["self_preferring"] and pd.isna(row["reason"])


def test_a_lenient_judge_with_no_family_bias_is_not_flagged():
    human, runs = collection(seed=1)
    lenient = human.assign(relevance=human["relevance"].replace({0: 1}))
    row, _ = audit(lenient, human, runs)
    assert row["within_grade"] == pytest.approx(0.0, abs=1e-12) and not row["self_preferring"]


def test_a_planted_family_bonus_of_a_tenth_of_a_grade_is_recovered_within_its_interval():
    human, runs = collection(seed=2)
    tops = top_documents(runs, human, depth=10)
    own = set(zip(tops["gpt-run"]["query_id"], tops["gpt-run"]["doc_id"], strict=True))
    rng = np.random.default_rng(7)
    bonus = np.array([(q, d) in own for q, d, _ in human.itertuples(index=False)])
    bonus &= rng.random(len(human)) < 0.5  # +1 on half of the family's documents: +0.5 grade
    biased = human.assign(relevance=human["relevance"] + bonus.astype(int))
    row, _ = audit(biased, human, runs)
    assert row["within_grade_ci_low"] <= 0.5 <= row["within_grade_ci_high"]
    assert row["self_preferring"] and row["within_grade_p"] < 0.01
    # a planted tenth of a grade, over several collections: covered by the interval as often as promised
    covered = 0
    for seed in range(10):
        human, runs = collection(seed=10 + seed)
        tops = top_documents(runs, human, depth=10)
        own = set(zip(tops["gpt-run"]["query_id"], tops["gpt-run"]["doc_id"], strict=True))
        hit = np.array([(q, d) in own for q, d, _ in human.itertuples(index=False)])
        hit &= np.random.default_rng(seed).random(len(human)) < 0.1
        row, _ = audit(human.assign(relevance=human["relevance"] + hit.astype(int)), human, runs)
        covered += row["within_grade_ci_low"] <= 0.1 <= row["within_grade_ci_high"]
        assert row["within_grade"] > 0
    assert covered >= 8


def test_the_placebo_moves_the_family_to_the_other_systems_and_finds_nothing_on_a_clean_judge():
    human, runs = collection(seed=3)
    noisy = human.assign(
        relevance=np.clip(human["relevance"] + np.random.default_rng(0).integers(-1, 2, len(human)), 0, 3)
    )
    row, _ = audit(noisy, human, runs)
    assert row["placebo_families"] == 2
    assert row["placebo_min"] <= row["placebo_max"] and abs(row["placebo_max"]) < 0.5


def test_within_grade_holds_its_size_under_topic_level_noise():
    """A judge whose residual against its panel varies by topic (a per-query offset) and by
    document, with no family effect: flagged at most alpha + twice the Monte-Carlo error."""
    rng = np.random.default_rng(0)
    flags, sims = 0, 200
    for _ in range(sims):
        rows = []
        for q in range(30):
            offset = rng.normal(0, 0.5)
            for d in range(12):
                rows.append((f"q{q}", f"d{d}", int(rng.integers(0, 4)), offset + rng.normal(0, 0.7)))
        resid = pd.DataFrame(rows, columns=["query_id", "doc_id", "human", "r"])
        own = {(f"q{q}", f"d{d}") for q in range(30) for d in range(6)}
        other = {(f"q{q}", f"d{d}") for q in range(30) for d in range(6, 12)}
        found = within_grade(resid, own, other, resamples=200)
        flags += found["p"] < 0.05
    rate = flags / sims
    assert rate <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / sims)


def test_the_weighted_mean_test_is_the_ratio_of_weighted_sums():
    found = query_mean_test([1.0, 3.0, -1.0], ["a", "a", "b"], weights=[1.0, 3.0, 2.0])
    assert found["mean"] == pytest.approx((1 + 9 - 2) / 6)
    assert found["queries"] == 2


def test_a_clean_judge_beside_a_self_preferring_panel_judge_is_not_flagged():
    """The panel judge (family x) grades its own family's documents up; the audited judge copies
    the humans. The panel's bonus must not pass for the audited judge's self-preference."""
    human, runs = collection(seed=4)
    tops = top_documents(runs, human, depth=10)
    x_docs = set(zip(tops["x-run"]["query_id"], tops["x-run"]["doc_id"], strict=True))
    boosted = np.array([(q, d) in x_docs for q, d, _ in human.itertuples(index=False)])
    panel = human.assign(relevance=human["relevance"] + boosted.astype(int))
    labels = {"human": human, "judge": human.copy(), "panel": panel}
    topics = [f"q{q}" for q in range(QUERIES)]
    per_query = pd.concat(
        [evaluate_systems(runs, lab, topics).assign(judge=j) for j, lab in labels.items()], ignore_index=True
    )
    families = JUDGE_FAMILIES | {"panel": "x"}
    table = self_preference(
        per_query,
        families,
        SYSTEM_FAMILIES,
        KINDS,
        labels=labels,
        scales=dict.fromkeys(labels, Scale(0, 3, 2)),
        tops=tops,
        resamples=300,
    )
    row = table.set_index("judge").loc["judge"]
    assert row["within_grade"] == pytest.approx(0.0, abs=1e-12) and not row["self_preferring"]
    assert row["placebo_families"] == 0  # y alone has no neutral family to be compared with (x is staked)
    panel_row = table.set_index("judge").loc["panel"]  # and the panel judge itself is caught
    assert panel_row["self_preferring"] and panel_row["within_grade"] > 0.5
    assert pd.isna(panel_row["beyond_placebo"])  # no neutral family for a placebo: the flag rests on the test


def test_a_correction_whose_strictness_rests_on_one_system_says_so():
    """With one system outside the judge's family, ``corrected`` reads that system's scores
    alone: the row says so (and the Markdown shows it); with two it says nothing."""
    human, runs = collection(seed=3)
    strict = human.assign(relevance=human["relevance"].replace({1: 0}))
    row, _ = audit(strict, human, runs)
    assert row["strictness_systems"] == 2 and pd.isna(row.get("note"))
    one = {s: r for s, r in runs.items() if s != "y-run"}
    row, _ = audit(strict, human, one)
    assert row["strictness_systems"] == 1
    assert row["note"] == "corrected: its strictness rests on one system (x-run)"


def consensus_counts(tops, human):
    """Per judged pair of ``human``: how many of the systems hold it in their top 10."""
    keys = pd.MultiIndex.from_frame(human[["query_id", "doc_id"]])
    return sum(keys.isin(pd.MultiIndex.from_frame(top)).astype(int) for top in tops.values())


def test_a_consensus_lenient_judge_is_compared_at_equal_consensus_and_not_flagged():
    """+1 on every document at least two systems put in their top 10, whoever they are: no family
    bias. The strong gpt-run's documents are such consensus documents more often than those only
    the weaker systems found, which query x grade strata read as self-preference; at equal
    consensus (how many systems, the family's included, retrieved a document) nothing is left."""
    human, runs = collection(seed=5)
    tops = top_documents(runs, human, depth=10)
    several = consensus_counts(tops, human) >= 2
    row, _ = audit(human.assign(relevance=human["relevance"] + several.astype(int)), human, runs)
    assert row["within_grade"] == pytest.approx(0.0, abs=1e-12) and not row["self_preferring"]
    assert row["consensus_systems"] == 3 and row["pairs_own_unmatched"] > 0  # held by all three: no match


def test_within_grade_strata_count_consensus_over_every_system_and_drop_one_sided_strata():
    """Query x grade x consensus: a document absent from ``agreement`` counts 0; a stratum with
    one side only is dropped and its documents counted."""
    rows = [
        ("q", "own1", 1, 0.5),
        ("q", "oth1", 1, 0.0),
        ("q", "own3", 1, 9.0),
        ("q", "oth2", 1, -9.0),
        ("q", "own0", 2, 1.0),
        ("q", "oth0", 2, 0.0),
    ]
    resid = pd.DataFrame(rows, columns=["query_id", "doc_id", "human", "r"])
    agreement = {("q", "own1"): 1, ("q", "oth1"): 1, ("q", "own3"): 3, ("q", "oth2"): 2}
    own = {("q", "own1"), ("q", "own3"), ("q", "own0")}
    other = {("q", "oth1"), ("q", "oth2"), ("q", "oth0")}
    found = within_grade(resid, own, other, agreement=agreement, resamples=50)
    assert found["strata"] == 2 and found["pairs_own_unmatched"] == 1 and found["pairs_other_unmatched"] == 1
    assert found["mean"] == pytest.approx((0.5 * 0.5 + 0.5 * 1.0) / 1.0)  # equal weights 1/2, 1/2
    pooled = within_grade(resid, own, other, resamples=50)  # without it: query x grade, nothing unmatched
    assert pooled["strata"] == 2 and pooled["pairs_own_unmatched"] == 0


def test_within_grade_p_is_one_sided_for_a_preference_of_the_own_side():
    """H1: the own side is graded up. A judge that grades its own side down has p >= 0.5, and the
    two directions' p add up to 1 (the sign-flip null is symmetric)."""
    rng = np.random.default_rng(3)
    rows = [
        (f"q{q}", f"d{d}", int(rng.integers(0, 4)), rng.normal(0.8 * (d < 6), 1)) for q in range(25) for d in range(12)
    ]
    resid = pd.DataFrame(rows, columns=["query_id", "doc_id", "human", "r"])
    own = {(f"q{q}", f"d{d}") for q in range(25) for d in range(6)}
    other = {(f"q{q}", f"d{d}") for q in range(25) for d in range(6, 12)}
    up = within_grade(resid, own, other, resamples=50)
    down = within_grade(resid.assign(r=-resid["r"]), own, other, resamples=50)
    assert up["mean"] > 0 and up["p"] < 0.05
    assert down["mean"] < 0 and down["p"] >= 0.5 and up["p"] + down["p"] == pytest.approx(1.0)


def test_the_placebo_blocks_a_flag_another_family_reads_as_strongly():
    """A judge lenient on whatever the gpt and x systems retrieve: its own family's documents read
    as preferred, significantly, but the placebo family x reads higher still, so the preference is
    not its family's: not flagged, and the row says the placebo blocked it."""
    human, runs = collection(seed=6)
    tops = top_documents(runs, human, depth=10)
    keys = pd.MultiIndex.from_frame(human[["query_id", "doc_id"]])
    liked = keys.isin(pd.MultiIndex.from_frame(pd.concat([tops["gpt-run"], tops["x-run"]])))
    row, _ = audit(human.assign(relevance=human["relevance"] + liked.astype(int)), human, runs)
    assert row["within_grade"] > 0 and row["within_grade_p"] < 0.05  # the test alone would flag
    assert row["placebo_max_family"] == "x" and row["placebo_max"] > row["within_grade"]
    assert not row["beyond_placebo"] and row["placebo_blocked"] and not row["self_preferring"]
