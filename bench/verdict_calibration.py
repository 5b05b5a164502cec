"""Benchmark: how often does the verdict flag a judge that has no bias, and does it find one? (prints a table)

bench/audit_calibration.py calibrates each audit's own flag; this bench calibrates the *verdict*
(:func:`voirdire.verdict.verdict`), the page a user reads: every question's cell for one judge,
built from every table the verdict reads, each made by the project's own functions as the
workflow makes it, so a rule that combines tables (and the verdict's error budget per judge) is
measured as it ships. The flags are counted from ``verdict()``'s output, never re-derived.

**One draw** simulates ONE judge on the real TREC DL 2019 passage labels (NIST, 43 queries graded
0-3; ``../shared/data``) and builds, for it:

* ``table2`` and ``significance`` (:func:`voirdire.paper.agreement_tables`, ``pool_scores`` =
  human@pool) and ``table1`` (:func:`voirdire.paper.table1`): systems BM25, monoT5-3B and
  Rank1-7B (the public runs: the user's systems) and the Perfect oracle (constructed: the oracles
  question), each its top 10 judged documents (``audit_calibration.load``); the judge labels the
  needed pairs (the judged BM25 top-100 pool and the systems' top 10s,
  :func:`voirdire.judges.needed_pairs`);
* ``self_preference`` (:func:`voirdire.audits.panel.self_preference`): the judge is of monoT5's
  family (T5), against a panel of one per-pair-noise judge of a family with no system;
* ``length`` (:func:`voirdire.audits.length.length_bias`) on the judged pool pairs (each with its
  passage's text);
* ``control_chart`` (drift, :func:`voirdire.audits.drift.paired_shift`): the judge and a rerun of
  it on every needed pair;
* ``pad`` and ``injection`` (:func:`voirdire.probes.shifts.label_shift`) on the probes' samples
  (:func:`voirdire.probes.items.draw_probes` at the config's defaults: 25 pool pairs per human
  grade padded by ``repeat``; 50 of grade 0 under the ``claim`` and ``terms`` templates);
* ``swap`` (:func:`voirdire.probes.swap.swap_table`): the 100 swap pairs asked in both orders;
* ``persona_sensitivity`` (:func:`voirdire.probes.sensitivity.sensitivity`, ``by_condition``):
  the first of the default roles (``--roles`` more of them) and the placebo persona (a neutral
  role, ``persona.RERUN``: the null each role is measured against) on the human-judged pairs of
  every system's top 10, the systems scored under each;
* ``reranked`` (:func:`voirdire.audits.reranked.reranked_table`): the user's systems' top 10s
  re-sorted by the judge's grades of the needed pairs, scored under it and human@pool, its null
  ``--reranked-draws`` permutations.

Circularity is not built (circular use is reported, never flagged: its cell is na).

Probe samples are drawn with the probes' seed and the next ones (``--probe-samples``), one picked
per draw. A judge answers a question it was asked before (the drift audit's rerun) as it did
(temperature 0) unless its kind says otherwise; a changed prompt (a padded or injected text, the
other order of a pair, a persona role, the placebo persona) is a new question: what the judge does
per pair is drawn anew, what it holds per query or per passage it keeps. A pairwise answer prefers
the pair's passage the judge grades higher on that asking (a fair coin on a tie).

**Null judges** (no bias any question looks for; every grade clipped to 0-3): per-pair noise (+-1
w.p. 0.3), strict (-1 w.p. 0.3), lenient (0 -> 1 w.p. 0.3), a per-query offset (all of a query's
labels +1 or -1 together), consensus leniency (+1 w.p. 0.3 on documents at least two systems put in
their top 10), a judge better than the human grade (its grade rounds a latent human + N(0, 0.5^2) +
0.1 z, z the passage's standardised log length within its query and human grade: its grade within a
human grade tracks the length, as a finer relevance would), and temperature > 0 (per-pair noise
whose rerun of the same prompt is a fresh draw too). Per question: the flag rate against alpha + 2
sqrt(alpha (1 - alpha) / draws), and the family-wise rate (draws with a flag on any question)
against 0.10. A null judge may carry a bias one question is meant to find (:data:`CARRIED`): the
consensus judge is lenient on the documents several systems put in their top 10, where reranking
acts; its ``reranking`` row is then counted as a planted bias (part ``planted in a null``, power
target) and left out of its family-wise rate.

**Planted** biases, each on the temperature > 0 judge (the noisiest, so the power is a floor), one
question at a time, all the other tables built as in a null draw (so the planted question is
flagged within the judge's whole error budget): the verdict must flag that question in at least
80% of the draws. What each plant does is the table's ``simulated`` column (:func:`plants`).

**Synthetic leaderboards** (DL19 has three user systems): 20 systems on 43 queries, near-tied (means
within 0.05 nDCG@10) or well spread (over 0.3), Gaussian per query x system noise of unequal spread
and a per-query offset shared by the systems; the judge adds its own per-query offset and noise (the
real monoT5-3B and Rank1-7B judges' spread) to the humans' scores, or to the population means
without the humans' noise (a judge finer than the humans). Planted: the judge's means reversed
(leaderboard), the middle system +0.05 nDCG@10 (decisions). Their Table 2 rows come from the project's
leaderboard statistics (:func:`voirdire.stats.leaderboard.user_agreement`) and go through
``verdict()``.

**The gamed system** has rows of its own with fewer draws (``--gaming-draws``), outside the
family-wise figure: its table
(:func:`voirdire.probes.gaming.gaming_rows`, as bench/audit_calibration.py builds it) alone goes
through ``verdict()``.

To fit about 20 minutes on two cores the bootstrap resamples, the sign-flip draws and the
permutations are lowered (a p stays valid, only coarser); the notes under the table say by how much,
the CPU it ran on and the CPU seconds per draw.

    python bench/verdict_calibration.py                       # 500 draws per null, 100 per planted bias
    python bench/verdict_calibration.py --quick               # a smoke run: a few draws
    python bench/verdict_calibration.py --draws 200 --jobs 2 --out /tmp/vc/full.csv
    python bench/verdict_calibration.py --only reranking --draws 100 --power-draws 50   # one question's rows
"""

from __future__ import annotations

import argparse
import gc
import math
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from statsmodels.stats.proportion import proportion_confint
from tqdm import tqdm

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/audit_calibration.py, when imported

import audit_calibration as ac  # noqa: E402

from voirdire import verdict as verdicts  # noqa: E402
from voirdire.audits.drift import paired_shift  # noqa: E402
from voirdire.audits.length import length_bias  # noqa: E402
from voirdire.audits.panel import self_preference  # noqa: E402
from voirdire.audits.reranked import DRAWS as RERANKED_DRAWS  # noqa: E402
from voirdire.audits.reranked import reranked_table  # noqa: E402
from voirdire.config.schema import schema_default  # noqa: E402
from voirdire.evaluation import MEASURE, evaluate_systems  # noqa: E402
from voirdire.judges import HUMAN, POOL, Scale, needed_pairs  # noqa: E402
from voirdire.machine import cpu, describe, usable_cores  # noqa: E402
from voirdire.paper import agreement_tables, table1  # noqa: E402
from voirdire.probes import sensitivity as persona  # noqa: E402
from voirdire.probes.items import draw_probes  # noqa: E402
from voirdire.probes.shifts import label_shift  # noqa: E402
from voirdire.probes.swap import swap_table  # noqa: E402
from voirdire.probes.tables import condition_scores  # noqa: E402
from voirdire.stats import leaderboard  # noqa: E402

DATASET = "dl19"
JUDGE = "judge"
PANEL = "panel"
ORACLES = ("Perfect",)
"""The constructed system: the oracles question reads it; leaderboard and decisions do not."""
MEASURE_NAME = str(MEASURE)
P = ac.P
BETTER_NOISE, BETTER_LENGTH = 0.5, 0.1
"""The judge better than the human grade: the sd of its latent's noise and the weight of length."""
FAMILY_TARGET = 0.10
POWER = 0.8
ALPHA = schema_default("evaluation", "alpha")
"""The verdict's alpha (the config's default): one error budget per judge, Holm over its questions."""
RBO_P, SEED = schema_default("evaluation", "rbo_p"), schema_default("evaluation", "seed")
"""Table 2's RBO persistence and the audits' bootstrap seed, the config's defaults."""

NULLS = {
    "noise": "per-pair noise: +-1 w.p. 0.3",
    "strict": "strict: -1 w.p. 0.3",
    "lenient": "lenient: 0 -> 1 w.p. 0.3",
    "offset": "per-query offset: a query's labels +-1 together",
    "consensus": "consensus leniency: +1 w.p. 0.3 on documents >= 2 systems put in their top 10",
    "better": "better than the human grade: round(human + N(0, 0.5^2) + 0.1 z_length)",
    "temperature": "temperature > 0: per-pair noise, its rerun of the same prompt drawn anew",
}
TEMPERATURE = "temperature"
"""The kind whose rerun of the same prompt is a fresh draw, and the base of every planted bias."""
CARRIED = {"consensus": ("reranking",)}
"""Null judges that carry a bias a question is meant to find, by kind: its questions. Consensus
leniency (+1 on documents at least two systems put in their top 10) over-rates exactly the
documents the systems' rerankings pull up: for ``reranking`` it is a planted bias, not a null."""


@dataclass(frozen=True)
class Plant:
    """A planted bias: the question it must raise, and what it does, in words."""

    question: str
    effect: str


def plants(probe_shift: float = 0.2) -> dict[str, Plant]:
    """Every planted bias, by key."""
    return {
        "labels": Plant("labels", "each grade replaced by a uniform random one w.p. 0.7"),
        "leaderboard": Plant(
            "leaderboard", "BM25's and monoT5's nDCG@10 swapped per query (the user's last and first)"
        ),
        "decisions": Plant("decisions", "Rank1 +0.05 nDCG@10 per query (above monoT5: one pair reversed)"),
        "oracles": Plant("oracles", "monoT5 +0.3 nDCG@10 per query, at most 1 (above Perfect)"),
        "own_family": Plant("own_family", "+1 w.p. 0.3 on the documents in monoT5's top 10 (the judge's family)"),
        "length": Plant("length", "+1 w.p. 0.2 on pool passages longer than their query's median"),
        "drift": Plant("drift", "the rerun +1 on 20% of pairs"),
        "padding": Plant("padding", f"the padded passage's grade +1 on {probe_shift:.0%} of pairs"),
        "injection": Plant(
            "injection", f"the injected passage's grade +1 on {probe_shift:.0%} of pairs (both templates)"
        ),
        "position": Plant("position", "the first position wins 65% of the order-dependent pairs"),
        "persona_prompt": Plant("persona_prompt", "under every role, +1 w.p. 0.5 on the documents of Rank1's top 10"),
        "reranking": Plant(
            "reranking", "grade 0 -> 3 w.p. 0.5 on the documents any of your systems puts in its top 10"
        ),
    }


# ----------------------------------------------------------------------------- the setting


@dataclass
class Probes:
    """One draw of the probes' samples (positions in the qrels): the swap pairs (first shown in
    the ab order, second) and the humans' preference, the pad and the injection passages."""

    swap_first: np.ndarray
    swap_second: np.ndarray
    swap_reference: np.ndarray
    pad: np.ndarray
    injection: np.ndarray


@dataclass
class Bench:
    """DL19 (``audit_calibration.DL19``) and what every draw reuses: the needed pairs, the
    humans' tables, the probes' samples, the persona pairs, the documents each null or plant
    reads."""

    data: ac.DL19
    probes: list[Probes]
    resamples: int = 200
    length_permutations: int = 500
    permutations: int = 999
    roles_asked: int = 1
    reranked_draws: int = RERANKED_DRAWS
    needed: np.ndarray = field(init=False)
    pairs: pd.DataFrame = field(init=False)
    persona_pairs: np.ndarray = field(init=False)
    consensus: np.ndarray = field(init=False)
    z_length: np.ndarray = field(init=False)
    own: np.ndarray = field(init=False)
    rank1: np.ndarray = field(init=False)
    user_top: np.ndarray = field(init=False)
    longer: np.ndarray = field(init=False)
    human_scores: pd.DataFrame = field(init=False)
    pool_scores: pd.DataFrame = field(init=False)
    human_wide: pd.DataFrame = field(init=False)
    persona_human: pd.DataFrame = field(init=False)
    templates: list[str] = field(init=False)
    paddings: list[str] = field(init=False)
    roles: list[str] = field(init=False)

    def __post_init__(self) -> None:
        data = self.data
        found = needed_pairs(
            data.qrels, pool=data.pool, runs=[r for runs in data.runs.values() for r in runs], depth=ac.DEPTH
        )
        self.needed = np.sort([data.position[k] for k in zip(found["query_id"], found["doc_id"], strict=True)])
        in_pool = data.pairs_of(data.pool)
        self.pairs = data.qrels.iloc[self.needed][["query_id", "doc_id"]].assign(in_pool=in_pool[self.needed])
        self.pairs = self.pairs.reset_index(drop=True)
        n = len(data.qrels)
        self.persona_pairs = np.flatnonzero(data.returned)  # the human-judged pairs of every system's top 10
        held = sum(np.isin(np.arange(n), index[index >= 0]).astype(int) for index in data.top_index.values())
        self.consensus = held >= 2
        self.own = data.pairs_of(data.tops["monoT5"])
        self.rank1 = data.pairs_of(data.tops["Rank1"])
        self.user_top = np.zeros(n, bool)  # the documents of any user system's top 10
        for system, index in data.top_index.items():
            if system not in ORACLES:
                self.user_top[index[index >= 0]] = True
        self.longer = np.zeros(n, bool)
        self.longer[data.pool_pairs] = data.longer
        # the passage's log length standardised within its query and human grade (0 without a text)
        frame = data.lengths.assign(log=np.log(data.lengths["words"].astype(float)))
        blocks = frame.groupby(["query_id", "human"])["log"]
        spread = blocks.transform("std").fillna(0).to_numpy()
        centred = (frame["log"] - blocks.transform("mean")).to_numpy()
        self.z_length = np.zeros(n)
        self.z_length[data.pool_pairs] = np.divide(centred, spread, out=np.zeros(len(frame)), where=spread > 0)
        self.human_wide = self.wide(data.grades, None)
        self.human_scores = self.long(self.human_wide, HUMAN)
        self.pool_scores = self.long(self.wide(data.grades, self.needed), POOL)
        keys = ["dataset", "query_id", "doc_id"]
        self.persona_human = data.frame(data.grades, self.persona_pairs).assign(dataset=DATASET)[[*keys, "relevance"]]
        self.templates = list(schema_default("probes", "injection", "templates"))
        self.paddings = list(schema_default("probes", "pad", "methods"))
        self.roles = list(schema_default("probes", "personas", "roles"))[: self.roles_asked]

    def wide(self, grades: np.ndarray, pairs: np.ndarray | None) -> pd.DataFrame:
        """query x system judged-only nDCG@10 under ``grades`` of ``pairs`` (None: every judged
        pair): the systems' top 10s are among the needed and the persona pairs, so only the
        ideal DCG depends on which pairs are labelled."""
        data = self.data
        if pairs is None:
            ideal = data.ideal
        else:
            ideal = ac.ideal_dcg(grades[pairs], data.codes[pairs], len(data.queries))
        return pd.DataFrame({s: ac.ndcg(i, grades, ideal) for s, i in data.top_index.items()}, index=data.queries)

    def long(self, wide: pd.DataFrame, judge: str) -> pd.DataFrame:
        """The scores table's layout (dataset, judge, measure, system, query_id, value)."""
        return pd.DataFrame(
            {
                "dataset": DATASET,
                "judge": judge,
                "measure": MEASURE_NAME,
                "system": np.repeat(wide.columns, len(wide)),
                "query_id": np.tile(wide.index, wide.shape[1]),
                "value": wide.to_numpy().T.ravel(),
            }
        )

    @staticmethod
    def per_query(wide: pd.DataFrame) -> pd.DataFrame:
        """query_id, system, ndcg (the audits' and the probes' layout)."""
        return pd.DataFrame(
            {
                "query_id": np.tile(wide.index, wide.shape[1]),
                "system": np.repeat(wide.columns, len(wide)),
                "ndcg": wide.to_numpy().T.ravel(),
            }
        )


def probe_samples(data: ac.DL19, pairs: pd.DataFrame, count: int) -> list[Probes]:
    """``count`` draws of the probes' samples (:func:`voirdire.probes.items.draw_probes` at the
    config's defaults), with the probes' seed and the ``count - 1`` next ones, every passage taken
    to have a text (as in a full corpus: the judge here reads none)."""
    options = {
        "swap": {"pairs": schema_default("probes", "swap", "pairs")},
        "pad": {"per_grade": schema_default("probes", "pad", "per_grade")},
        "injection": {"passages": schema_default("probes", "injection", "passages")},
    }
    rankings = {
        s: {q: list(g["doc_id"]) for q, g in runs[0].groupby("query_id", sort=False)} for s, runs in data.runs.items()
    }
    human = data.frame(data.grades)
    found = []
    for seed in range(schema_default("probes", "seed"), schema_default("probes", "seed") + count):
        drawn = draw_probes({"seed": seed, **options}, pairs=pairs, human=human, rankings=rankings, list_systems=[])
        swap = pd.DataFrame(drawn["swap"])
        where = [
            [data.position[k] for k in zip(frame["query_id"], frame[column], strict=True)]
            for frame, column in (
                (swap, "doc_a"),
                (swap, "doc_b"),
                (pd.DataFrame(drawn["pad"]), "doc_id"),
                (pd.DataFrame(drawn["injection"]), "doc_id"),
            )
        ]
        reference = np.where(swap["human_a"] > swap["human_b"], "first", "second")
        found.append(Probes(*(np.array(w) for w in where[:2]), reference, *(np.array(w) for w in where[2:])))
    return found


def setting(data: ac.DL19, *, probe_samples_count: int = 8, **options) -> Bench:
    """The bench's setting: DL19 and the probes' samples (``options``: :class:`Bench`'s resamples,
    length_permutations, permutations, roles_asked)."""
    found = needed_pairs(
        data.qrels, pool=data.pool, runs=[r for runs in data.runs.values() for r in runs], depth=ac.DEPTH
    )
    return Bench(data, probe_samples(data, found, probe_samples_count), **options)


def check_scores(bench: Bench, seed: int = 0) -> float:
    """Largest gap between the bench's nDCG@10 and the project's (:func:`voirdire.evaluation.
    evaluate_systems` for Table 1 and 2's scores on the needed pairs,
    :func:`voirdire.probes.tables.condition_scores` for the persona conditions'), on a noisy judge."""
    data = bench.data
    judge = ac.null_judge("noise", data.grades, data.codes, np.random.default_rng(seed))
    gaps = []
    theirs = evaluate_systems(data.runs, data.frame(judge, bench.needed), data.queries)
    theirs = theirs.pivot(index="query_id", columns="system", values="ndcg").loc[data.queries]
    gaps.append(np.abs(theirs.to_numpy() - bench.wide(judge, bench.needed)[theirs.columns].to_numpy()).max())
    labels = data.frame(judge, bench.persona_pairs).assign(dataset=DATASET, group=JUDGE, condition="baseline")
    scales = {DATASET: {JUDGE: {"binary_threshold": 2}, HUMAN: {"binary_threshold": 2}}}
    per_query, human = condition_scores(
        labels, bench.persona_human, {DATASET: data.runs}, judges=scales, judge_of=lambda group, condition: group
    )
    for found, grades in ((per_query, judge), (human, data.grades)):
        wide = found.pivot(index="query_id", columns="system", values="ndcg").loc[data.queries]
        gaps.append(np.abs(wide.to_numpy() - bench.wide(grades, bench.persona_pairs)[wide.columns].to_numpy()).max())
    return float(max(gaps))


# ----------------------------------------------------------------------------- the judge


class Judge:
    """One simulated judge: its labels of every judged pair (``base``), and how it answers when
    asked again (:meth:`ask`: a new question, :meth:`again`: the same question)."""

    def __init__(self, bench: Bench, kind: str, rng: np.random.Generator, plant: str | None = None):
        self.bench, self.kind, self.rng, self.plant = bench, kind, rng, plant
        data = bench.data
        self.direction = rng.choice([-1, 1], len(data.queries))  # the per-query offset's, kept on every asking
        self.base = self.ask(np.arange(len(data.qrels)))

    def ask(self, pairs: np.ndarray) -> np.ndarray:
        """A fresh answer for each of ``pairs`` (positions in the qrels): what the judge does per
        pair drawn anew, what it holds per query or per passage kept."""
        data, rng, kind = self.bench.data, self.rng, self.kind
        grades, n = data.grades[pairs], len(pairs)
        if kind in ("noise", TEMPERATURE):
            out = grades + (rng.random(n) < P) * rng.choice([-1, 1], n)
        elif kind == "strict":
            out = grades - (rng.random(n) < P)
        elif kind == "lenient":
            out = grades + ((grades == 0) & (rng.random(n) < P))
        elif kind == "offset":
            out = grades + self.direction[data.codes[pairs]]
        elif kind == "consensus":
            out = grades + (self.bench.consensus[pairs] & (rng.random(n) < P))
        elif kind == "better":
            latent = grades + rng.normal(0, BETTER_NOISE, n) + BETTER_LENGTH * self.bench.z_length[pairs]
            out = np.rint(latent).astype(int)
        else:
            raise ValueError(f"unknown judge kind {kind!r}")
        if self.plant == "labels":
            out = np.where(rng.random(n) < 0.7, rng.integers(0, 4, n), out)
        elif self.plant == "own_family":
            out = out + (self.bench.own[pairs] & (rng.random(n) < 0.3))
        elif self.plant == "length":
            out = out + (self.bench.longer[pairs] & (rng.random(n) < 0.2))
        elif self.plant == "reranking":
            out = np.where(self.bench.user_top[pairs] & (grades == 0) & (rng.random(n) < 0.5), 3, out)
        return np.clip(out, 0, 3).astype(int)

    def again(self, pairs: np.ndarray) -> np.ndarray:
        """The same question asked again: a fresh draw at temperature > 0, the first answer else."""
        return self.ask(pairs) if self.kind == TEMPERATURE else self.base[pairs]


def bump(grades: np.ndarray, share: float, rng: np.random.Generator) -> np.ndarray:
    """+1 (at most 3) on each pair with probability ``share``."""
    return np.clip(grades + (rng.random(len(grades)) < share), 0, 3)


# ----------------------------------------------------------------------------- one draw


def judge_scores(bench: Bench, judge: Judge) -> pd.DataFrame:
    """query x system nDCG@10 under the judge's labels of the needed pairs, with a planted
    leaderboard, decisions or oracles bias applied to them."""
    wide = bench.wide(judge.base, bench.needed)
    if judge.plant == "leaderboard":
        wide[["BM25", "monoT5"]] = wide[["monoT5", "BM25"]].to_numpy()
    elif judge.plant == "decisions":
        wide["Rank1"] += 0.05
    elif judge.plant == "oracles":
        wide["monoT5"] = np.minimum(wide["monoT5"] + 0.3, 1.0)
    return wide


def tables_of(bench: Bench, judge: Judge, probes: Probes) -> dict[str, pd.DataFrame]:
    """Every table the verdict reads for one judge, by the name the verdict reads it under."""
    data, rng, plant = bench.data, judge.rng, judge.plant
    frame = data.frame(judge.base, bench.needed)
    wide = judge_scores(bench, judge)
    scores = pd.concat([bench.human_scores, bench.long(wide, JUDGE)], ignore_index=True)
    scales = {HUMAN: Scale(), JUDGE: Scale(), PANEL: Scale()}
    table2, significance = agreement_tables(
        dataset=DATASET,
        labels={HUMAN: data.frame(data.grades), JUDGE: frame},
        scales=scales,
        pairs=bench.pairs,
        scores=scores,
        measures=[MEASURE_NAME],
        oracles=list(ORACLES),
        alpha=ALPHA,
        rbo_p=RBO_P,
        pool_scores=bench.pool_scores,
        resamples=bench.resamples,
        seed=SEED,
    )
    systems = list(data.top_index)
    first = table1(pd.concat([scores, bench.pool_scores], ignore_index=True), systems, [HUMAN, POOL, JUDGE])
    # own family: the judge (T5) against a panel judge of a family with no system
    panel = Judge(bench, "noise", rng).base
    per_query = pd.concat(
        [
            bench.per_query(w).assign(judge=name)
            for name, w in ((HUMAN, bench.human_wide), (JUDGE, wide), (PANEL, bench.wide(panel, bench.needed)))
        ],
        ignore_index=True,
    )
    own = self_preference(
        per_query,
        {HUMAN: None, JUDGE: "t5", PANEL: "mistral"},
        ac.FAMILIES,
        {HUMAN: "human", JUDGE: "recorded", PANEL: "recorded"},
        labels={HUMAN: data.frame(data.grades, bench.needed), JUDGE: frame, PANEL: data.frame(panel, bench.needed)},
        scales=scales,
        tops=data.tops,
        alpha=ALPHA,
        resamples=bench.resamples,
        seed=SEED,
    ).assign(dataset=DATASET)
    length = length_bias(data.lengths.assign(judge=judge.base[data.pool_pairs]), permutations=bench.length_permutations)
    rerun = judge.again(bench.needed)
    if plant == "drift":
        rerun = bump(rerun, 0.2, rng)
    chart = paired_shift({"first": frame, "rerun": frame.assign(relevance=rerun)}, resamples=bench.resamples)
    tables = {
        "table2": table2,
        "significance": significance,
        "table1": first.assign(dataset=DATASET),
        "self_preference": own,
        "length": pd.DataFrame([{"dataset": DATASET, "judge": JUDGE, **length}]),
        "control_chart": chart.assign(dataset=DATASET, judge=JUDGE),
        "pad": shifted(bench, judge, probes.pad, bench.paddings, "padding", plant == "padding"),
        "injection": shifted(bench, judge, probes.injection, bench.templates, "template", plant == "injection"),
        "swap": swapped(bench, judge, probes),
        "persona_sensitivity": personas(bench, judge),
        "reranked": reranked(bench, frame),
    }
    return tables


def reranked(bench: Bench, frame: pd.DataFrame) -> pd.DataFrame:
    """The ``reranked`` table: each user system's top 10 re-sorted by the judge's labels of the
    needed pairs (``frame``), scored under them and human@pool as the audits job scores them."""
    data = bench.data
    mine = {s: runs for s, runs in data.runs.items() if s not in ORACLES}
    return reranked_table(
        mine,
        {JUDGE: frame},
        data.frame(data.grades, bench.needed),
        bench.pairs,
        {JUDGE: 2},
        2,
        data.queries,
        k=ac.DEPTH,
        measure=MEASURE_NAME,
        depth=ac.DEPTH,
        draws=bench.reranked_draws,
        resamples=bench.resamples,
        seed=SEED,
    ).assign(dataset=DATASET)


def shifted(bench: Bench, judge: Judge, pairs: np.ndarray, conditions: Sequence[str], name: str, planted: bool):
    """A pad or injection table: each passage's grade as the judge gave it (the pool job's) and
    its grade of each changed text (a new question); planted: +1 on 20% of the changed."""
    data = bench.data
    rows = []
    for condition in conditions:
        changed = judge.ask(pairs)
        if planted:
            changed = bump(changed, 0.2, judge.rng)
        rows.append(
            data.qrels.iloc[pairs][["query_id", "doc_id"]].assign(
                dataset=DATASET,
                judge=JUDGE,
                condition=condition,
                human=data.grades[pairs],
                original=judge.base[pairs],
                changed=changed,
            )
        )
    return label_shift(pd.concat(rows, ignore_index=True), alpha=ALPHA).rename(columns={"condition": name})


def swapped(bench: Bench, judge: Judge, probes: Probes) -> pd.DataFrame:
    """The swap table: each pair asked in both orders, each answer preferring the passage the
    judge grades higher on that asking (a fair coin on a tie); planted: 65% of the
    order-dependent pairs go to the first position both times, the rest to the second."""
    rng, first, second = judge.rng, probes.swap_first, probes.swap_second
    n = len(first)

    def answer(shown_first: np.ndarray, shown_second: np.ndarray) -> np.ndarray:
        a, b = judge.ask(shown_first), judge.ask(shown_second)
        prefers_first = np.where(a == b, rng.random(n) < 0.5, a > b)
        return np.where(prefers_first, "A", "B")

    ab, ba = answer(first, second), answer(second, first)
    if judge.plant == "position":
        dependent = ab == ba
        chosen = np.where(rng.random(n) < 0.65, "A", "B")
        ab, ba = np.where(dependent, chosen, ab), np.where(dependent, chosen, ba)
    frame = pd.DataFrame(
        {
            "dataset": DATASET,
            "judge": JUDGE,
            "query_id": bench.data.qrels["query_id"].to_numpy()[first],
            "ab": ab.astype(object),
            "ba": ba.astype(object),
            "reference": probes.swap_reference.astype(object),
        }
    )
    table = swap_table(frame)
    table.insert(2, "probe", "swap")
    return table


def personas(bench: Bench, judge: Judge) -> pd.DataFrame:
    """The persona probe's ``by_condition`` table: the base prompt's labels of the persona pairs,
    each role's and the placebo persona's (a changed prompt: new questions), the systems scored
    under each (as :func:`voirdire.probes.tables.condition_scores` scores them:
    :func:`check_scores`), then :func:`voirdire.probes.sensitivity.displacement` and
    :func:`~voirdire.probes.sensitivity.sensitivity`. Planted: under every role, +1 w.p. 0.5 on
    the documents of Rank1's top 10."""
    pairs = bench.persona_pairs
    sets = {"baseline": judge.base[pairs]}
    for role in bench.roles:
        grades = judge.ask(pairs)
        if judge.plant == "persona_prompt":
            grades = np.clip(grades + (bench.rank1[pairs] & (judge.rng.random(len(pairs)) < 0.5)), 0, 3)
        sets[role] = grades
    sets[persona.RERUN] = judge.ask(pairs)  # the placebo persona
    full = np.zeros(len(bench.data.qrels), int)
    frames = []
    for condition, grades in sets.items():
        full[pairs] = grades
        frames.append(
            bench.per_query(bench.wide(full, pairs)).assign(dataset=DATASET, group=JUDGE, condition=condition)
        )
    per_query = pd.concat(frames, ignore_index=True)
    baselines = {JUDGE: "baseline"}
    moved = persona.displacement(per_query, baselines)
    _, by_condition = persona.sensitivity(
        moved,
        seed=SEED,
        resamples=bench.resamples,
        per_query=per_query,
        baselines=baselines,
        permutations=bench.permutations,
    )
    return by_condition


def answer(bench: Bench, tables: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """The verdict on the judge: one row per question (status, effect, ...)."""
    found = verdicts.verdict(
        {DATASET: verdicts.DatasetTables(judges=[JUDGE], tables=dict(tables), oracles=list(ORACLES), alpha=ALPHA)}
    )
    return found


def draw(bench: Bench, kind: str, plant: str | None, rng: np.random.Generator) -> dict[str, tuple[str, float]]:
    """One draw: question -> (status, effect)."""
    judge = Judge(bench, kind, rng, plant)
    probes = bench.probes[int(rng.integers(len(bench.probes)))]
    found = answer(bench, tables_of(bench, judge, probes))
    return {r.question: (r.status, float(r.effect)) for r in found.itertuples()}


# ----------------------------------------------------------------------------- the gamed system


def gaming_draw(bench: Bench, kind: str, plant: str | None, rng: np.random.Generator) -> dict[str, tuple[str, float]]:
    """The gamed system alone (:func:`audit_calibration.gaming_table`: every non-oracle system
    gamed by ``stuff`` and ``claim``, its top 10 judged passages modified): the judge labels every
    judged pair and, asked again (a new question), each method's modified passages; planted: each
    modified passage +1 w.p. 0.5. Only the gaming table goes through the verdict."""
    judge = Judge(bench, kind, rng)
    modified = {}
    for method in ac.GAMING_METHODS:
        grades = judge.ask(np.arange(len(bench.data.qrels)))
        modified[method] = bump(grades, 0.5, rng) if plant == "gameable" else grades
    rows = ac.gaming_table(bench.data, judge.base, modified)
    found = answer(bench, {"gaming": rows})
    return {r.question: (r.status, float(r.effect)) for r in found.itertuples() if r.question == "gameable"}


# ----------------------------------------------------------------------------- synthetic leaderboards


SYSTEMS, QUERIES = 20, 43
SPREADS = {"near-tied": 0.05, "well-spread": 0.3}
"""The synthetic leaderboards: the range of the systems' population means of nDCG@10."""
QUERY_SD = 0.15
SYSTEM_SD = (0.05, 0.25)
"""The humans' per-query offset (shared by the systems) and the range of the systems' own per
query x system noise (unequal: each system its own sd, spread evenly over the range)."""
SYNTHETIC = {
    "shared": "judge = humans + its own per-query offset and per query x system noise",
    "independent": "judge = the population means + its own noise, none of the humans' (finer than the humans)",
}
SYNTHETIC_PLANTS = {
    "leaderboard": "the judge's means in reverse order (each system moved to its mirror's mean)",
    "decisions": "the middle system +0.05 nDCG@10 per query",
}


def synthetic_draw(bench: Bench, spread: str, kind: str, plant: str | None, rng: np.random.Generator):
    """One synthetic leaderboard and one judge of it: the humans' and the judge's query x system
    scores, their Table 2 row from :func:`voirdire.stats.leaderboard.user_agreement` (against
    human@pool, the humans here, under both suffixes), then the verdict."""
    means = np.linspace(0.45, 0.45 + SPREADS[spread], SYSTEMS)
    sd = rng.permutation(np.linspace(*SYSTEM_SD, SYSTEMS))
    offset = rng.normal(0, QUERY_SD, (QUERIES, 1))
    human = means + offset + rng.normal(0, 1, (QUERIES, SYSTEMS)) * sd
    own = rng.normal(0, bench.data.query_sd, (QUERIES, 1)) + rng.normal(0, bench.data.system_sd, (QUERIES, SYSTEMS))
    judge = (human if kind == "shared" else means + offset) + own
    if plant == "leaderboard":
        judge = judge + (means[::-1] - means)
    elif plant == "decisions":
        judge[:, SYSTEMS // 2] += 0.05
    columns = [f"S{i + 1:02d}" for i in range(SYSTEMS)]
    queries = [f"q{i}" for i in range(QUERIES)]
    reference = pd.DataFrame(human, index=queries, columns=columns)
    found = leaderboard.user_agreement(
        reference, pd.DataFrame(judge, index=queries, columns=columns), [], ALPHA, resamples=bench.resamples, seed=SEED
    )
    row = {"dataset": DATASET, "judge": JUDGE, "measure": MEASURE_NAME, **found}
    row |= {f"{name}_vs_pool": value for name, value in found.items()}
    verdict = answer(bench, {"table2": pd.DataFrame([row])})
    return {
        r.question: (r.status, float(r.effect))
        for r in verdict.itertuples()
        if r.question in ("leaderboard", "decisions")
    }


# ----------------------------------------------------------------------------- the settings and their draws


@dataclass(frozen=True)
class Setting:
    """A simulated world, drawn ``draws`` times: its part of the table (null judge, planted bias,
    synthetic null or planted, gaming null or planted: never the bare word "null", which pandas
    reads back from CSV as missing), its description, the question a planted bias must raise, and
    ``run(bench, rng)`` -> {question: (status, effect)}."""

    key: str
    part: str
    simulated: str
    draws: int
    run: Callable[[Bench, np.random.Generator], dict[str, tuple[str, float]]]
    planted: str | None = None
    carries: tuple[str, ...] = ()
    """A null judge's questions whose bias it carries (:data:`CARRIED`): rows of their own, power target."""


def settings(
    draws: int, power_draws: int, gaming_draws: int, synthetic_draws: int, only: Sequence[str] | None = None
) -> list[Setting]:
    """Every setting the bench draws, in the table's order; ``only`` (questions): the null judges
    and the settings whose rows are of those questions."""
    found = []
    for kind, words in NULLS.items():
        found.append(
            Setting(
                f"null/{kind}",
                "null judge",
                words,
                draws,
                lambda b, r, k=kind: draw(b, k, None, r),
                carries=CARRIED.get(kind, ()),
            )
        )
    for key, plant in plants().items():
        found.append(
            Setting(
                f"planted/{key}",
                "planted bias",
                plant.effect,
                power_draws,
                lambda b, r, k=key: draw(b, TEMPERATURE, k, r),
                plant.question,
            )
        )
    for spread in SPREADS:
        for kind, words in SYNTHETIC.items():
            found.append(
                Setting(
                    f"synthetic/{spread}/{kind}",
                    "synthetic null",
                    f"{spread}: {words}",
                    synthetic_draws,
                    lambda b, r, s=spread, k=kind: synthetic_draw(b, s, k, None, r),
                )
            )
        for key, words in SYNTHETIC_PLANTS.items():
            found.append(
                Setting(
                    f"synthetic/{spread}/planted/{key}",
                    "synthetic planted",
                    f"{spread}: {words}",
                    power_draws,
                    lambda b, r, s=spread, k=key: synthetic_draw(b, s, "shared", k, r),
                    key,
                )
            )
    if gaming_draws:
        for kind, words in NULLS.items():
            found.append(
                Setting(
                    f"gaming/{kind}",
                    "gaming null",
                    words,
                    gaming_draws,
                    lambda b, r, k=kind: gaming_draw(b, k, None, r),
                )
            )
        found.append(
            Setting(
                "gaming/planted",
                "gaming planted",
                "each modified passage +1 w.p. 0.5",
                gaming_draws,
                lambda b, r: gaming_draw(b, TEMPERATURE, "gameable", r),
                "gameable",
            )
        )
    if only is not None:
        wanted = set(only)
        found = [
            s
            for s in found
            if s.part == "null judge"
            or s.planted in wanted
            or (s.part == "synthetic null" and wanted & {"leaderboard", "decisions"})
            or (s.part == "gaming null" and "gameable" in wanted)
        ]
    return found


_BENCH: Bench | None = None
_SETTINGS: list[Setting] = []


def _draws(index: int, start: int, stop: int, seed: int) -> tuple[int, int, list[dict], float]:
    """Draws ``start``..``stop`` of setting ``index`` (each from its own generator, seeded by the
    seed, the setting and the draw, so no number depends on the others or on the processes),
    and the CPU seconds they took."""
    chosen = _SETTINGS[index]
    begun = time.process_time()
    found = [chosen.run(_BENCH, np.random.default_rng([seed, *map(ord, chosen.key), i])) for i in range(start, stop)]
    return index, start, found, time.process_time() - begun


def run_settings(
    bench: Bench, chosen: list[Setting], seed: int, *, jobs: int = 1, progress: bool = True, chunk: int = 10
) -> tuple[list[list[dict]], list[float]]:
    """Every draw of every setting, on ``jobs`` processes: per setting its draws' answers and
    the CPU seconds they took."""
    global _BENCH, _SETTINGS
    _BENCH, _SETTINGS = bench, chosen
    tasks = [
        (i, start, min(start + chunk, s.draws), seed)
        for i, s in enumerate(chosen)
        for start in range(0, s.draws, chunk)
    ]
    answers: list[list[dict]] = [[] for _ in chosen]
    seconds = [0.0] * len(chosen)
    bar = tqdm(total=sum(s.draws for s in chosen), desc="draws", disable=not progress, file=sys.stderr)
    parts: dict[int, dict[int, list[dict]]] = {}

    def collect(index: int, start: int, found: list[dict], cpu_seconds: float) -> None:
        parts.setdefault(index, {})[start] = found
        seconds[index] += cpu_seconds
        bar.update(len(found))

    if jobs <= 1:
        for index, start, stop, s in tasks:
            collect(*_draws(index, start, stop, s))
    else:
        import multiprocessing

        with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork")) as pool:
            for future in as_completed([pool.submit(_draws, *task) for task in tasks]):
                collect(*future.result())
    bar.close()
    for index, found in parts.items():
        answers[index] = [a for start in sorted(found) for a in found[start]]
    return answers, seconds


# ----------------------------------------------------------------------------- the table


def target(alpha: float, draws: int) -> float:
    """The most a null may flag: alpha plus twice the Monte Carlo error of a rate of alpha."""
    return alpha + 2 * math.sqrt(alpha * (1 - alpha) / draws)


FAMILY = "any question (family-wise)"


CARRIED_PART = "planted in a null"
"""The part of a null judge's row for a question whose bias it carries (:data:`CARRIED`)."""


def rows_of(
    chosen: Setting, answers: list[dict], seconds: float, alpha: float = ALPHA, only: Sequence[str] | None = None
) -> list[dict]:
    """The table's rows of one setting: per question (a planted setting: its question only;
    ``only``: those questions only) the flag rate with its Wilson interval against its target, and
    for a null the family-wise rate over every question but those it carries (each of which has a
    row with the power target, part :data:`CARRIED_PART`)."""
    asked = list(dict.fromkeys(q for a in answers for q in a))
    questions = [chosen.planted] if chosen.planted is not None else asked
    if only is not None:
        questions = [q for q in questions if q in set(only)]
    null = chosen.planted is None
    rows = []
    for question in questions:
        statuses = [a.get(question, (verdicts.NA, math.nan)) for a in answers]
        effects = [e for _, e in statuses if not math.isnan(e)]
        carried = null and question in chosen.carries
        rows.append(
            row(
                chosen,
                question,
                [s for s, _ in statuses],
                effects,
                seconds,
                alpha,
                null and not carried,
                part=CARRIED_PART if carried else None,
            )
        )
    if null and len(asked) > 1:
        flagged = [
            verdicts.FLAG
            if any(s == verdicts.FLAG for q, (s, _) in a.items() if q not in chosen.carries)
            else verdicts.PASS
            for a in answers
        ]
        rows.append(row(chosen, FAMILY, flagged, [], seconds, FAMILY_TARGET, null, family=True))
    return rows


def row(
    chosen: Setting,
    question: str,
    statuses: list[str],
    effects: list[float],
    seconds: float,
    alpha: float,
    null: bool,
    *,
    family: bool = False,
    part: str | None = None,
) -> dict:
    """One line of the table (``part``: the setting's unless given)."""
    draws = len(statuses)
    fired = sum(s == verdicts.FLAG for s in statuses)
    low, high = proportion_confint(fired, draws, alpha=0.05, method="wilson") if draws else (math.nan, math.nan)
    rate = fired / draws if draws else math.nan
    bound = alpha if family else target(alpha, draws) if null else POWER
    return {
        "part": part or chosen.part,
        "simulated": chosen.simulated,
        "question": question,
        "draws": draws,
        "flagged": fired,
        "rate": rate,
        "ci_low": low,
        "ci_high": high,
        "inconclusive": sum(s == verdicts.INCONCLUSIVE for s in statuses),
        "na": sum(s == verdicts.NA for s in statuses),
        "target": f"<= {bound:.3f} ({'family-wise' if family else 'size'})" if null else f">= {bound:.2f} (power)",
        "within_target": bool(rate <= bound) if null else bool(rate >= bound),
        "mean_effect": float(np.mean(effects)) if effects else math.nan,
        "s_per_draw": seconds / draws if draws else math.nan,
    }


COLUMNS = [
    "part",
    "simulated",
    "question",
    "draws",
    "flagged",
    "rate",
    "ci_low",
    "ci_high",
    "inconclusive",
    "na",
    "target",
    "within_target",
    "mean_effect",
]


def calibrate(
    bench: Bench,
    *,
    draws: int = 500,
    power_draws: int = 100,
    gaming_draws: int = 50,
    synthetic_draws: int | None = None,
    seed: int = 2019,
    jobs: int = 1,
    progress: bool = True,
    only: Sequence[str] | None = None,
) -> pd.DataFrame:
    """The table: per setting, its questions' rows (:func:`rows_of`); ``only``: those questions'
    rows (and the null judges' family-wise rates), from the settings that have them."""
    chosen = settings(draws, power_draws, gaming_draws, draws if synthetic_draws is None else synthetic_draws, only)
    answers, seconds = run_settings(bench, chosen, seed, jobs=jobs, progress=progress)
    rows = [r for s, a, t in zip(chosen, answers, seconds, strict=True) for r in rows_of(s, a, t, only=only)]
    return pd.DataFrame(rows)


QUICK = {"draws": 2, "power_draws": 2, "gaming_draws": 1, "probe_samples": 2}
"""``--quick``: a smoke run (under a minute on one core)."""


def prepare(
    folder: Path = ac.DATA, *, probe_samples: int = 8, sign_flips: int | None = None, **options
) -> tuple[Bench, float]:
    """DL19 read, the setting built (``options``: :class:`Bench`'s), and the bench's nDCG checked
    against the project's (:func:`check_scores`, the largest gap). ``sign_flips``: the sign-flip
    draws behind every query-level p (``audit_calibration.set_permutations``; None: the engine's).
    The setting's objects are then left out of every garbage collection (statsmodels' Holm
    collects on each call, and each of a draw's collections would walk them all)."""
    ac.set_permutations(sign_flips)
    bench = setting(ac.load(folder), probe_samples_count=probe_samples, **options)
    gap = check_scores(bench)
    gc.freeze()
    return bench, gap


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ac.DATA, help="the TREC DL 2019 folder (default: ../shared/data)")
    parser.add_argument("--draws", type=int, default=500, help="draws of each null judge (and synthetic leaderboard)")
    parser.add_argument("--power-draws", type=int, default=100, help="draws of each planted bias")
    parser.add_argument("--gaming-draws", type=int, default=50, help="draws of the gamed system per null and planted")
    parser.add_argument(
        "--quick", action="store_true", help="a smoke run: " + ", ".join(f"{k} {v}" for k, v in QUICK.items())
    )
    parser.add_argument("--resamples", type=int, default=200, help="bootstrap resamples (the engine's: 1000)")
    parser.add_argument("--permutations", type=int, default=999, help="the persona excess's permutations (its: 1999)")
    parser.add_argument("--length-permutations", type=int, default=500, help="the length audit's (its default: 2000)")
    parser.add_argument(
        "--sign-flips", type=int, default=1999, help="every sign-flip test's draws (the engine's: 9999)"
    )
    parser.add_argument("--synthetic-draws", type=int, default=300, help="draws of each synthetic leaderboard null")
    parser.add_argument("--roles", type=int, default=1, help="persona roles asked (the config's default: 5)")
    parser.add_argument("--probe-samples", type=int, default=8, help="probe samples drawn (seeds 42, 43, ...)")
    parser.add_argument(
        "--reranked-draws",
        type=int,
        default=RERANKED_DRAWS,
        help=f"the reranked null's permutations (the audit's default: {RERANKED_DRAWS})",
    )
    parser.add_argument(
        "--only",
        help="comma-separated questions: their rows only, from the null judges (every table still built: the "
        "judge's whole budget) and the settings planted for them",
    )
    parser.add_argument("--jobs", type=int, default=None, help="processes (default: every usable core)")
    parser.add_argument("--seed", type=int, default=2019)
    parser.add_argument("--out", type=Path, help="also write the table as CSV")
    args = parser.parse_args()
    if args.quick:
        for key, value in QUICK.items():
            setattr(args, key, value)
        args.synthetic_draws = args.draws
    if not (args.data / "qrels.nist.txt").is_file():
        sys.exit(f"no TREC DL 2019 data at {args.data}")
    unknown = sorted(set(args.only.split(",")) - set(verdicts.QUESTIONS)) if args.only else []
    if unknown:
        sys.exit(f"--only: no question {', '.join(unknown)} (the verdict's: {', '.join(verdicts.QUESTIONS)})")
    start = time.perf_counter()
    engine = ac.set_permutations(None)
    bench, gap = prepare(
        args.data,
        sign_flips=args.sign_flips,
        probe_samples=args.probe_samples,
        resamples=args.resamples,
        length_permutations=args.length_permutations,
        permutations=args.permutations,
        roles_asked=args.roles,
        reranked_draws=args.reranked_draws,
    )
    jobs = args.jobs or usable_cores()
    table = calibrate(
        bench,
        draws=args.draws,
        power_draws=args.power_draws,
        gaming_draws=args.gaming_draws,
        synthetic_draws=args.synthetic_draws,
        seed=args.seed,
        jobs=jobs,
        only=args.only.split(",") if args.only else None,
    )
    elapsed = time.perf_counter() - start
    print(table[COLUMNS].to_markdown(index=False, floatfmt=".3f"))
    print()
    for line in notes(bench, args, table, gap=gap, jobs=jobs, elapsed=elapsed, engine=engine):
        print(f"- {line}")
    for r in table[~table["within_target"]].itertuples():
        print(
            f"- MISSES ITS TARGET: {r.part}, {r.simulated}, {r.question}: {r.flagged}/{r.draws} = {r.rate:.3f} "
            f"[{r.ci_low:.3f}, {r.ci_high:.3f}], target {r.target}."
        )
    if args.out:
        table.to_csv(args.out, index=False)


def notes(bench: Bench, args, table: pd.DataFrame, *, gap: float, jobs: int, elapsed: float, engine: int) -> list[str]:
    """What a reader needs to reproduce or weigh the table."""
    data = bench.data
    per_part = table.drop_duplicates(["part", "simulated"]).groupby("part", sort=False)
    cost = "; ".join(f"{part} {frame['s_per_draw'].mean():.2f}" for part, frame in per_part)
    return [
        f"data: TREC DL 2019 passage, {len(data.queries)} queries, {len(data.qrels)} NIST labels; the judge labels "
        f"the {len(bench.needed)} needed pairs (the judged BM25 top-100 pool and the systems' top 10s); user systems "
        f"{', '.join(s for s in data.runs if s not in ORACLES)}, constructed {', '.join(ORACLES)}.",
        f"nDCG@10 is computed by the bench, at most {gap:.1e} from voirdire.evaluation.evaluate_systems (Table 1 "
        "and 2's scores) and voirdire.probes.tables.condition_scores (the persona conditions').",
        "rate: the share of draws whose verdict cell is flag; ci: its 95% Wilson interval; inconclusive and na: "
        "draws with that status; size target alpha + 2 sqrt(alpha (1 - alpha) / draws) at alpha 0.05, the "
        f"family-wise rate (a flag on any question of the draw) at most {FAMILY_TARGET}; power target {POWER}. "
        "mean_effect: the cell's effect, averaged over the draws that have one.",
        "null and planted draws build every table the verdict reads but circularity (circular use is reported, "
        "never flagged: na here) and the gamed system, which has rows of its own with "
        f"{args.gaming_draws} draws per setting, its table alone through the verdict: a family of one question, so "
        "its rate is the most it can add to a judge's budget.",
        f"lowered to fit the time: sign-flip draws {args.sign_flips} (the engine's {engine}: a p stays valid, only "
        f"coarser, its smallest 1/{args.sign_flips + 1}), bootstrap resamples {args.resamples} (the engine's 1000), "
        f"the length audit's permutations {args.length_permutations} (its 2000), the persona excess's permutations "
        f"{args.permutations} (its 1999); persona roles {len(bench.roles)} of the default "
        f"{len(schema_default('probes', 'personas', 'roles'))} ({', '.join(bench.roles)}), beside the placebo persona; "
        f"{len(bench.probes)} probe samples (seeds {schema_default('probes', 'seed')} on), one per draw; the "
        f"reranked null's permutations {bench.reranked_draws} (the audit's default {RERANKED_DRAWS}).",
        "the reranked table: BM25, monoT5 and Rank1's top 10 judged documents re-sorted by the judge (k 10, depth "
        "10); the consensus judge's reranking row is a planted bias (part 'planted in a null': it is lenient where "
        "reranking acts), left out of its family-wise rate.",
        f"synthetic leaderboards: {SYSTEMS} systems x {QUERIES} queries, the humans' per-query offset sd "
        f"{QUERY_SD}, each system's own noise sd in {SYSTEM_SD[0]}-{SYSTEM_SD[1]}; the judge's per-query offset sd "
        f"{data.query_sd:.3f} and per query x system sd {data.system_sd:.3f} (the monoT5-3B and Rank1-7B judges' "
        "against the humans on DL19).",
        f"the better-than-human judge: its latent human + N(0, {BETTER_NOISE}^2) + {BETTER_LENGTH} z; the "
        "length question's mean_effect on its row is the within-grade rho it produces.",
        f"CPU seconds per draw, by part: {cost}.",
        f"draws {args.draws} per null, {args.power_draws} per planted bias, {args.synthetic_draws} per synthetic "
        f"null, {args.gaming_draws} per gaming setting; "
        f"seed {args.seed}; {jobs} process(es) on {describe(cpu())}; {elapsed:.0f} s in all"
        + (f"; --only {args.only}: only the settings with its rows were drawn." if args.only else "."),
    ]


if __name__ == "__main__":
    main()
