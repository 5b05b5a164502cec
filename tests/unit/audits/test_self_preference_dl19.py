"""Self-preference on the real TREC DL 2019 labels and runs, inject -> recover.

The NIST labels (43 queries, 9,260 judged pairs, 0-3) and four systems' top 10 judged
documents: BM25, the Perfect oracle (the BM25 top 100 sorted by NIST label), monoT5-3B (family
t5) and Rank1-7B (family qwen), as the calibration bench sets them up. The judge under audit is
of monoT5's family, its panel one noisy copy of the humans of a family with no system.

Of monoT5's top 10 documents 64% are in at least two systems' top 10, of the documents only the
other systems retrieved 24%: a judge that grades such consensus documents up, with no family
bias at all, read as self-preferring when the strata were query x human grade alone. Each draw
is a fresh judge and panel; a null judge may be flagged in at most alpha + 2 Monte Carlo
standard errors of the draws, a planted family bias must be found in at least 80% of them.

The flag reads labels only, so every judge is given the humans' per-query nDCG@10 (computed
once): the nDCG figures beside the flag are not under test here.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from conftest import SHARED_DL19

from voirdire.audits.panel import self_preference, top_documents
from voirdire.evaluation import evaluate_systems
from voirdire.formats import read_qrels, read_rankgpt, read_run, run_from_rankings
from voirdire.judges import Scale
from voirdire.systems import Perfect, oracle_rankings

ALPHA = 0.05
NULL_DRAWS, POWER_DRAWS = 45, 40
SYSTEM_FAMILIES = {"BM25": None, "Perfect": None, "monoT5": "t5", "Rank1": "qwen"}
JUDGE_FAMILIES = {"human": None, "judge": "t5", "panel": "mistral"}
KINDS = {"human": "human", "judge": "recorded", "panel": "recorded"}
SCALES = dict.fromkeys(JUDGE_FAMILIES, Scale())


class DL19:
    """The NIST labels, the four systems' top 10 judged documents, and per pair: in monoT5's top
    10 (``own``), in at least two systems' top 10 (``several``)."""

    def __init__(self) -> None:
        self.qrels = read_qrels(SHARED_DL19 / "qrels.nist.txt").astype({"query_id": object, "doc_id": object})
        _, bm25, _ = read_rankgpt(SHARED_DL19 / "bm25-top100.rankgpt.json")
        pools = {q: list(g.sort_values("rank")["doc_id"]) for q, g in bm25.groupby("query_id")}
        human = {q: dict(zip(g["doc_id"], g["relevance"], strict=True)) for q, g in self.qrels.groupby("query_id")}
        runs = {
            "BM25": [bm25],
            "Perfect": [run_from_rankings(oracle_rankings(Perfect(), pools, human))],
            "monoT5": [read_run(SHARED_DL19 / "run.monot5-3b.txt")],
            "Rank1": [read_run(SHARED_DL19 / "run.rank1-7b.txt")],
        }
        self.tops = top_documents(runs, self.qrels, depth=10)
        keys = pd.MultiIndex.from_frame(self.qrels[["query_id", "doc_id"]])
        held = {s: keys.isin(pd.MultiIndex.from_frame(top)) for s, top in self.tops.items()}
        self.own = held["monoT5"]
        self.several = sum(h.astype(int) for h in held.values()) >= 2
        self.grades = self.qrels["relevance"].to_numpy(dtype=int)
        self.per_query = evaluate_systems(runs, self.qrels, sorted(self.qrels["query_id"].unique()))

    def noisy(self, rng: np.random.Generator) -> np.ndarray:
        """The humans' grades, each +-1 with probability 0.3 (the sign at random), clipped to 0-3."""
        step = (rng.random(len(self.grades)) < 0.3) * rng.choice([-1, 1], len(self.grades))
        return np.clip(self.grades + step, 0, 3)

    def bumped(self, grades: np.ndarray, where: np.ndarray, probability: float, rng: np.random.Generator):
        """``grades`` +1 (clipped at 3) on each pair of ``where`` with ``probability``."""
        return np.clip(grades + (where & (rng.random(len(grades)) < probability)), 0, 3)

    def audit(self, judge: np.ndarray, rng: np.random.Generator) -> pd.Series:
        """The judge's self-preference row, against a fresh noisy panel."""
        grades = {"human": self.grades, "judge": judge, "panel": self.noisy(rng)}
        labels = {name: self.qrels.assign(relevance=g) for name, g in grades.items()}
        per_query = pd.concat([self.per_query.assign(judge=name) for name in grades], ignore_index=True)
        table = self_preference(
            per_query,
            JUDGE_FAMILIES,
            SYSTEM_FAMILIES,
            KINDS,
            labels=labels,
            scales=SCALES,
            tops=self.tops,
            alpha=ALPHA,
            resamples=20,
            seed=42,
        )
        return table.set_index("judge").loc["judge"]


@pytest.fixture(scope="module")
def dl19() -> DL19:
    if not (SHARED_DL19 / "qrels.nist.txt").is_file():
        pytest.skip(f"real TREC DL 2019 data not found at {SHARED_DL19} (../shared absent)")
    return DL19()


def size_bound(draws: int) -> float:
    """alpha + twice the Monte Carlo standard error of a flag rate of alpha over ``draws``."""
    return ALPHA + 2 * math.sqrt(ALPHA * (1 - ALPHA) / draws)


def test_the_consensus_is_the_confound_the_reviewer_found(dl19):
    """The setting itself: the family's documents are consensus documents far more often."""
    other = np.zeros(len(dl19.grades), bool)
    for system in ("BM25", "Perfect", "Rank1"):
        keys = pd.MultiIndex.from_frame(dl19.tops[system])
        other |= pd.MultiIndex.from_frame(dl19.qrels[["query_id", "doc_id"]]).isin(keys)
    other &= ~dl19.own
    assert dl19.several[dl19.own].mean() > 0.6 and dl19.several[other].mean() < 0.3


def test_a_consensus_lenient_judge_with_no_family_bias_is_not_flagged(dl19):
    """+1 with probability 0.6 on every pair at least two systems put in their top 10, whoever
    they are: flagged in at most alpha + 2 MC-SE of the draws (the query x grade strata flagged
    it in about 45%)."""
    rng = np.random.default_rng(19)
    flags = sum(
        bool(dl19.audit(dl19.bumped(dl19.noisy(rng), dl19.several, 0.6, rng), rng)["self_preferring"])
        for _ in range(NULL_DRAWS)
    )
    assert flags / NULL_DRAWS <= size_bound(NULL_DRAWS), f"{flags} of {NULL_DRAWS} draws flagged"


def test_a_clean_noisy_judge_is_not_flagged(dl19):
    rng = np.random.default_rng(20)
    flags = sum(bool(dl19.audit(dl19.noisy(rng), rng)["self_preferring"]) for _ in range(NULL_DRAWS))
    assert flags / NULL_DRAWS <= size_bound(NULL_DRAWS), f"{flags} of {NULL_DRAWS} draws flagged"


def test_a_planted_family_bias_is_found_at_equal_consensus(dl19):
    """+1 with probability 0.3 on the documents monoT5 puts in its top 10 (consensus or not):
    found in at least 80% of the draws, above every placebo family's estimate."""
    rng = np.random.default_rng(21)
    rows = [dl19.audit(dl19.bumped(dl19.noisy(rng), dl19.own, 0.3, rng), rng) for _ in range(POWER_DRAWS)]
    found = sum(bool(row["self_preferring"]) for row in rows)
    assert found / POWER_DRAWS >= 0.8, f"found in {found} of {POWER_DRAWS} draws"


def test_the_row_counts_the_family_documents_no_stratum_compares(dl19):
    """Strata query x grade x consensus over the four systems: a document all four retrieved has
    no other-systems-only match (those reach three at most), so it is counted, not compared."""
    row = dl19.audit(dl19.noisy(np.random.default_rng(22)), np.random.default_rng(23))
    assert row["consensus_systems"] == 4 and row["placebo_families"] == 3
    assert 0 < row["pairs_own_unmatched"] < row["pairs_own"]
    assert row["beyond_placebo"] == (row["within_grade"] > row["placebo_max"])
    assert 0 <= row["within_grade_p"] <= 1 and (row["within_grade"] > 0 or row["within_grade_p"] >= 0.5)
