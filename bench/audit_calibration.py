"""Benchmark: does every flagging audit keep its size and find a planted bias? (prints a table)

From the real TREC DL 2019 passage labels (NIST, 43 queries graded 0-3; ``../shared/data``),
the bench simulates judges many times over and calls the project's own audit functions on
each one, as the workflow calls them:

* **null judges**, with no bias the audit looks for: *strict* (every grade -1 with
  probability 0.3), *lenient* (0 -> 1 with probability 0.3), *per-pair noise* (each grade
  +-1 with probability 0.3, the sign at random), *topic-level* (all of a query's labels +1 or
  -1 together, the direction drawn per query), and for the length audit a topic leniency that
  grows with the topic's mean passage length; every grade clipped to 0-3;
* **planted** biases of a stated size, on the per-pair-noise judge.

The audits and what each draw is:

* self-preference (``audits.panel.self_preference``, flag ``self_preferring``): a judge of
  monoT5's family (T5) against a panel of one noisy copy of the humans of a family with no
  system; systems BM25, the Perfect oracle, monoT5-3B and Rank1-7B (the public runs). Planted:
  +1 with probability 0.3 on the documents monoT5 puts in its top 10;
* drift (``audits.drift.paired_shift``, ``shifted``): two runs of one judge on every judged
  pair. Planted: the rerun +1 on 20% of pairs;
* label shift (``probes.shifts.label_shift``, ``flagged`` on the human = "all" row) at the
  probes' sample sizes: pad, 25 pool pairs per human grade; injection, 50 of grade 0. Planted:
  the changed grade +1 on 20% of pairs;
* length (``audits.length.length_bias``, ``length_biased``, its alpha 0.01): the 2,257 judged
  pool pairs with their passages' real lengths. Planted: +1 with probability 0.2 on passages
  longer than their query's median;
* difference in differences (``stats.difference_in_differences``, ``disagrees`` and
  ``reversed``, the one the verdict's decisions question flags on; uncorrected as by
  default), read on monoT5 vs Rank1 and on Perfect vs BM25; nulls also include Gaussian nDCG
  noise with the real monoT5-3B and Rank1-7B judges' spread. Planted: Rank1 +0.05 nDCG@10 on
  every query, which lifts it above monoT5 (0.008 above Rank1 under NIST).
* the gamed system (``probes.gaming.gaming_rows``, ``climbs``; the verdict's gameable flag
  fires when any row climbs) as the defaults put it: BM25, monoT5 and Rank1 (every system that is
  not an oracle) each gamed by ``stuff`` and ``claim``, their top 10 judged passages modified, the
  t test. The judge labels every judged pair (Table 1) and, asked again, each method's modified
  passages: a null judge ignores the modification, so it keeps what it holds per query (a
  topic's direction) and draws what it does per pair anew (a noisy judge disagrees with itself
  as on a rerun); one more null, *topic-level + per-pair noise*, and ``--all-nulls`` adds the
  pure topic-level judge (every modified passage labelled as its original: Δ = 0). Planted: on the
  per-pair-noise judge, each modified passage +1 with probability 0.5 (``--gaming-shift``).

Per audit and setting it prints how often the flag fired, with its Wilson interval
(statsmodels ``proportion_confint``), the tested statistic's mean, and ``within_target``: a
null's flag rate at most alpha + 2 sqrt(alpha (1 - alpha) / draws) (its size, give or take
twice its Monte Carlo error), a planted bias found in at least 80% of the draws (its power).
Where a paired test compares two label sets of one judge (drift, pad, injection), the null is
two independent draws of the same judge: moving each query's labels +-1 away from the humans'
is not mean-zero once grades clip at 0 and 3, so it would be a real shift, not a null.

The flags rest on permutation tests (sign flips over queries, Fisher 1935, Good 2005;
lengths permuted within query x grade blocks, Phipson & Smyth 2010 for the p). To fit ten
minutes on two cores the bench lowers the bootstrap resamples behind the intervals (no flag
reads them) and the permutations (a permutation p stays valid with fewer, only coarser), and
prints both under the table. The length audit runs per-pair noise and the length-correlated
topic leniency by default (circularity is reported, not flagged: every judge that differs from the
humans scores its own ranking 1, so it has no null to hold);
``--all-nulls`` runs every kind everywhere.

    python bench/audit_calibration.py                  # 200 null draws, 100 planted
    python bench/audit_calibration.py --quick          # 20 and 10: a smoke run
    python bench/audit_calibration.py --audits drift length --draws 500 --out calibration.csv
    python bench/audit_calibration.py --audits gaming --draws 100 --power-draws 50   # about 1 s a draw
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from statsmodels.stats.proportion import proportion_confint
from tqdm import tqdm

from voirdire.audits.circularity import HUMAN_POOL, judge_ranking
from voirdire.audits.drift import paired_shift
from voirdire.audits.length import length_bias
from voirdire.audits.panel import self_preference, top_documents
from voirdire.evaluation import MEASURE, cut, evaluate_systems, judged_only
from voirdire.formats import read_qrels, read_rankgpt, read_run, read_topics, run_from_rankings
from voirdire.judges import HUMAN, Scale
from voirdire.probes.gaming import gamed_id, gaming_rows, items_to_modify
from voirdire.probes.shifts import label_shift
from voirdire.stats import difference_in_differences
from voirdire.stats import paired as paired_stats
from voirdire.systems import Perfect, oracle_rankings

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "trec-dl-2019"
DEPTH = 10
DISCOUNT = 1 / np.log2(np.arange(2, DEPTH + 2))
P = 0.3
"""The probability behind the strict, lenient and per-pair-noise judges."""

KINDS = {
    "strict": "strict: every grade -1 w.p. 0.3",
    "lenient": "lenient: 0 -> 1 w.p. 0.3",
    "noise": "per-pair noise: +-1 w.p. 0.3",
    "topic": "topic-level: a query's labels +-1 together",
    "topic_noise": "topic-level +-1 (a query's direction kept when asked again) + per-pair noise",
    "topic_length": "topic leniency ~ topic length (+1 w.p. length percentile) + per-pair noise",
    "copy": "a copy of the human labels",
    "gaussian": "nDCG@10 + Gaussian noise per query and per query x system, sd of the real judges'",
}
NULLS = ("strict", "lenient", "noise", "topic")
GAMED = ("BM25", "monoT5", "Rank1")
"""The gamed systems: every one that is not an oracle (``gaming.systems``' default)."""
GAMING_METHODS = ("stuff", "claim")
GAMING_K = 10
"""``gaming.k``'s default: every passage of each system's top 10 judged documents is modified."""
FAMILIES = {"BM25": None, "Perfect": None, "monoT5": "t5", "Rank1": "qwen"}
"""The systems and their families: monoT5 is fine-tuned from T5, Rank1 from Qwen2.5 (the
data's README); BM25 and the Perfect oracle have none."""


# ----------------------------------------------------------------------------- the data


@dataclass
class DL19:
    """The NIST labels (one row per judged pair, by query), the systems' top-10 judged
    documents, the BM25 top-100 pool and its passages' lengths in words."""

    qrels: pd.DataFrame
    topics: dict[str, str]
    runs: dict[str, list[pd.DataFrame]]
    pool: pd.DataFrame
    words: dict[str, int]
    codes: np.ndarray = field(init=False)
    grades: np.ndarray = field(init=False)
    queries: list[str] = field(init=False)
    tops: dict[str, pd.DataFrame] = field(init=False)
    top_index: dict[str, np.ndarray] = field(init=False)
    ideal: np.ndarray = field(init=False)
    pool_pairs: np.ndarray = field(init=False)
    position: dict[tuple[str, str], int] = field(init=False)
    lengths: pd.DataFrame = field(init=False)
    longer: np.ndarray = field(init=False)
    length_leniency: np.ndarray = field(init=False)
    human_wide: pd.DataFrame = field(init=False)
    human_ranking: np.ndarray = field(init=False)
    human_scores: pd.DataFrame = field(init=False)
    gaming_items: np.ndarray = field(init=False)
    gaming_ids: dict[str, list[str]] = field(init=False)
    returned: np.ndarray = field(init=False)
    query_sd: float = math.nan
    system_sd: float = math.nan

    def __post_init__(self) -> None:
        # plain Python strings: the audits iterate over ids, which Arrow-backed strings slow down
        ids = {"query_id": object, "doc_id": object}
        self.qrels = self.qrels.astype(ids).sort_values(["query_id", "doc_id"]).reset_index(drop=True)
        self.pool = self.pool.astype(ids)
        self.runs = {s: [r.astype(ids) for r in runs] for s, runs in self.runs.items()}
        self.queries = sorted(self.qrels["query_id"].unique())
        self.codes = self.qrels["query_id"].map({q: i for i, q in enumerate(self.queries)}).to_numpy()
        self.grades = self.qrels["relevance"].to_numpy(dtype=int)
        self.position = {k: i for i, k in enumerate(zip(self.qrels["query_id"], self.qrels["doc_id"]))}
        self.tops = {s: top.astype(ids) for s, top in top_documents(self.runs, self.qrels, DEPTH).items()}
        self.top_index = {s: self.index_of(run[0]) for s, run in self.runs.items()}
        self.ideal = ideal_dcg(self.grades, self.codes, len(self.queries))
        self.pool_pairs = np.flatnonzero(self.pairs_of(self.pool))
        self.human_wide = self.wide(self.grades)
        self.human_ranking = self.index_of(judge_ranking(self.pool, self.frame(self.grades)))
        # the gamed system: Table 1 under the humans as the workflow computes it, and the pairs a
        # gamed system modifies (the judged pairs in the gamed systems' top k), by method
        self.human_scores = self.evaluated(self.grades)
        items, _ = items_to_modify([run for s in GAMED for run in self.runs[s]], GAMING_K, self.qrels)
        self.gaming_items = np.array([self.position[k] for k in zip(items["query_id"], items["doc_id"])])
        self.gaming_ids = {m: [gamed_id(d, m) for d in items["doc_id"]] for m in GAMING_METHODS}
        self.returned = np.zeros(len(self.qrels), bool)
        for index in self.top_index.values():
            self.returned[index[index >= 0]] = True
        # the length audit's pairs: the judged pool pairs, every one with its passage's text
        frame = self.qrels.iloc[self.pool_pairs][["query_id", "doc_id"]].reset_index(drop=True)
        self.lengths = frame.assign(
            human=self.grades[self.pool_pairs], words=frame["doc_id"].map(self.words).to_numpy()
        )
        if self.lengths["words"].isna().any():
            raise ValueError("a judged pool passage has no text")
        by_query = self.lengths.groupby("query_id", sort=False)["words"]
        self.longer = (self.lengths["words"] > by_query.transform("median")).to_numpy()
        mean_words = self.lengths["words"].groupby(self.codes[self.pool_pairs]).mean()
        self.length_leniency = mean_words.rank(pct=True).reindex(range(len(self.queries)), fill_value=0.5).to_numpy()

    def pool_ideal(self, grades: np.ndarray) -> np.ndarray:
        """Per query, the ideal DCG@10 of ``grades`` on the judged pool pairs only."""
        return ideal_dcg(grades[self.pool_pairs], self.codes[self.pool_pairs], len(self.queries))

    def pairs_of(self, frame: pd.DataFrame) -> np.ndarray:
        """Which judged pairs ``frame`` (query_id, doc_id) holds."""
        keys = pd.MultiIndex.from_frame(frame[["query_id", "doc_id"]])
        return pd.MultiIndex.from_frame(self.qrels[["query_id", "doc_id"]]).isin(keys)

    def index_of(self, ranking: pd.DataFrame) -> np.ndarray:
        """(queries, 10) positions in ``qrels`` of a run's top 10 judged documents (unjudged ones
        removed first, then cut in trec_eval's order: :func:`voirdire.evaluation.cut`), -1 where
        a query has fewer."""
        found = np.fromiter(
            (self.position.get(k, -1) for k in zip(ranking["query_id"], ranking["doc_id"])), int, len(ranking)
        )
        top = cut(ranking[found >= 0].assign(position=found[found >= 0]), DEPTH)
        index = np.full((len(self.queries), DEPTH), -1)
        rows = self.codes[top["position"].to_numpy()]
        index[rows, top.groupby("query_id", sort=False).cumcount().to_numpy()] = top["position"].to_numpy()
        return index

    def frame(self, grades: np.ndarray, pairs: np.ndarray | None = None) -> pd.DataFrame:
        """A qrels frame (query_id, doc_id, relevance) of ``grades`` for ``pairs`` (all: None)."""
        base = self.qrels if pairs is None else self.qrels.iloc[pairs]
        return base[["query_id", "doc_id"]].assign(relevance=grades if pairs is None else grades[pairs])

    def long(self, grades: np.ndarray) -> pd.DataFrame:
        """query_id, system, ndcg: :meth:`wide` as evaluate_systems lays it out."""
        wide = self.wide(grades)
        return pd.DataFrame(
            {
                "query_id": np.tile(self.queries, wide.shape[1]),
                "system": np.repeat(wide.columns, len(wide)),
                "ndcg": wide.to_numpy().T.ravel(),
            }
        )

    def evaluated(self, grades: np.ndarray, pairs: np.ndarray | None = None) -> pd.DataFrame:
        """query x system nDCG@10 under ``grades`` (of ``pairs``; None: all) by
        :func:`voirdire.evaluation.evaluate_systems` (Table 1's scores, which the gamed system's
        are compared with to the last bit)."""
        long = evaluate_systems(self.runs, self.frame(grades, pairs), self.queries)
        return long.pivot(index="query_id", columns="system", values="ndcg").loc[self.queries]

    def pruned(self, grades: np.ndarray) -> np.ndarray:
        """The judged pairs judged-only nDCG@10 reads, of any system and of any gamed system under
        ``grades``: those a system returns (every modified passage among them) and each query's
        ten best graded of the rest, which hold the ideal DCG@10 whichever passages are swapped
        for their modified ones. The gamed system's table on them is the table on every pair
        (:func:`check_gaming`), in two thirds of the time."""
        rest = np.flatnonzero(~self.returned)
        order = rest[np.lexsort((-grades[rest], self.codes[rest]))]
        codes = self.codes[order]
        rank = np.arange(len(order)) - np.searchsorted(codes, codes)
        keep = self.returned.copy()
        keep[order[rank < DEPTH]] = True
        return np.flatnonzero(keep)

    def wide(self, grades: np.ndarray) -> pd.DataFrame:
        """query x system judged-only nDCG@10 under ``grades`` (every judged pair)."""
        ideal = ideal_dcg(grades, self.codes, len(self.queries))
        return pd.DataFrame({s: ndcg(i, grades, ideal) for s, i in self.top_index.items()}, index=self.queries)


def load(folder: Path = DATA) -> DL19:
    """The NIST qrels, the topics, the BM25 top-100 (with texts) and four systems: BM25, the
    Perfect oracle (the BM25 top-100 sorted by NIST label), and the public monoT5-3B and
    Rank1-7B runs. Each system is kept as its top 10 judged documents in trec_eval's order,
    rescored 10..1 so no tie is left to break."""
    qrels = read_qrels(folder / "qrels.nist.txt")
    topics = read_topics(folder / "topics.tsv")
    _, bm25, texts = read_rankgpt(folder / "bm25-top100.rankgpt.json")
    pools = {q: list(g.sort_values("rank")["doc_id"]) for q, g in bm25.groupby("query_id")}
    human = {q: dict(zip(g["doc_id"], g["relevance"])) for q, g in qrels.groupby("query_id")}
    full = {
        "BM25": bm25,
        "Perfect": run_from_rankings(oracle_rankings(Perfect(), pools, human)),
        "monoT5": read_run(folder / "run.monot5-3b.txt"),
        "Rank1": read_run(folder / "run.rank1-7b.txt"),
    }
    runs = {}
    for system, run in full.items():
        top = cut(judged_only(run, qrels), DEPTH)
        runs[system] = [run_from_rankings({q: list(g["doc_id"]) for q, g in top.groupby("query_id", sort=False)})]
    words = {d: len(t.split()) for d, t in texts.items()}
    data = DL19(qrels, topics, runs, bm25, words)
    data.query_sd, data.system_sd = real_judge_noise(
        data, [folder / "qrels.monot5-3b.txt", folder / "qrels.rank1-7b.txt"]
    )
    return data


def real_judge_noise(data: DL19, files: list[Path]) -> tuple[float, float]:
    """How far real judges' per-query nDCG@10 strays from the humans', the two parts of the
    difference in differences' Gaussian null: the spread over queries of the judge - human gap
    averaged over systems, and the spread left per query and system once that and each
    system's mean gap are removed (the root mean square over the recorded judges given)."""
    query, system = [], []
    for path in files:
        labels = read_qrels(path).set_index(["query_id", "doc_id"])["relevance"]
        keys = pd.MultiIndex.from_frame(data.qrels[["query_id", "doc_id"]])
        gap = (data.wide(labels.reindex(keys).fillna(0).to_numpy(dtype=int)) - data.human_wide).to_numpy()
        common = gap.mean(axis=1, keepdims=True)
        rest = gap - common - (gap - common).mean(axis=0, keepdims=True)
        query.append(common.std(ddof=1))
        system.append(math.sqrt((rest**2).sum() / ((gap.shape[0] - 1) * (gap.shape[1] - 1))))
    return float(np.sqrt(np.mean(np.square(query)))), float(np.sqrt(np.mean(np.square(system))))


def ideal_dcg(grades: np.ndarray, codes: np.ndarray, queries: int) -> np.ndarray:
    """Per query, the DCG@10 of its labels sorted best first (every qrel of the query)."""
    order = np.lexsort((-grades, codes))
    g, c = grades[order], codes[order]
    start = np.searchsorted(c, np.arange(queries))
    position = np.arange(len(c)) - start[c]
    keep = position < DEPTH
    return np.bincount(c[keep], weights=g[keep] * DISCOUNT[position[keep]], minlength=queries)


def ndcg(index: np.ndarray, grades: np.ndarray, ideal: np.ndarray) -> np.ndarray:
    """Judged-only nDCG@10 per query (linear gains, as trec_eval): 0 where the ideal DCG is."""
    gains = np.where(index >= 0, grades[np.maximum(index, 0)], 0)
    dcg = gains @ DISCOUNT
    return np.divide(dcg, ideal, out=np.zeros_like(dcg, dtype=float), where=ideal > 0)


def check_ndcg(data: DL19, seed: int = 0) -> float:
    """Largest gap between the bench's vectorised nDCG@10 and the project's
    :func:`voirdire.evaluation.evaluate_systems` (the bench scores thousands of simulated
    judges, so it computes the measure itself): the systems under the humans and under a
    noisy judge, and both rankings of the circularity audit under the humans, the judge and
    human@pool."""
    judge = null_judge("noise", data.grades, data.codes, np.random.default_rng(seed))
    gaps = []
    for grades in (data.grades, judge):
        theirs = evaluate_systems(data.runs, data.frame(grades), data.queries)
        theirs = theirs.pivot(index="query_id", columns="system", values="ndcg").loc[data.queries]
        gaps.append(np.abs(theirs.to_numpy() - data.wide(grades)[theirs.columns].to_numpy()).max())
    labels = {
        HUMAN: data.frame(data.grades),
        "judge": data.frame(judge, data.pool_pairs),
        HUMAN_POOL: data.frame(data.grades, data.pool_pairs),
    }
    runs = {name: [judge_ranking(data.pool, labels[name])] for name in (HUMAN, "judge")}
    _, mine = circularity_scores(data, judge, {name: data.index_of(run[0]) for name, run in runs.items()})
    for name, frame in labels.items():
        theirs = evaluate_systems(runs, frame, data.queries).pivot(index="query_id", columns="system", values="ndcg")
        for ranker in runs:
            gaps.append(np.abs(theirs.loc[data.queries, ranker].to_numpy() - mine[ranker][name].to_numpy()).max())
    return float(max(gaps))


# ----------------------------------------------------------------------------- simulated judges


def null_judge(
    kind: str, grades: np.ndarray, codes: np.ndarray, rng: np.random.Generator, leniency: np.ndarray | None = None
) -> np.ndarray:
    """One draw of a judge of ``kind`` (:data:`KINDS`) from the human ``grades`` of pairs of
    the queries ``codes``; ``leniency`` (per query, for ``topic_length``): the probability
    that the query's labels all go up one grade."""
    n = len(grades)
    if kind == "copy":
        out = grades.copy()
    elif kind == "strict":
        out = grades - (rng.random(n) < P)
    elif kind == "lenient":
        out = grades + ((grades == 0) & (rng.random(n) < P))
    elif kind == "noise":
        out = grades + (rng.random(n) < P) * rng.choice([-1, 1], n)
    elif kind == "topic":
        out = grades + rng.choice([-1, 1], codes.max() + 1)[codes]
    elif kind == "topic_length":
        up = rng.random(len(leniency)) < leniency
        out = null_judge("noise", grades, codes, rng) + up[codes]
    else:
        raise ValueError(f"unknown judge kind {kind!r}")
    return np.clip(out, 0, 3).astype(int)


def bump(grades: np.ndarray, where: np.ndarray, probability: float, rng: np.random.Generator) -> np.ndarray:
    """``grades`` with +1 (clipped at 3) on each pair of ``where`` with ``probability``."""
    return np.clip(grades + (where & (rng.random(len(grades)) < probability)), 0, 3)


# ----------------------------------------------------------------------------- one draw per audit


@dataclass(frozen=True)
class Audit:
    """An audit as the bench runs it: the function it calls, its flag, the statistic the flag
    tests and its alpha, the null kinds it is run on (``nulls``; ``more``: the others of
    ``--all-nulls``), the planted bias, and ``draw``: (data, kind or "planted", rng) ->
    {flag: (fired, statistic)}."""

    name: str
    call: str
    statistic: str
    alpha: float
    nulls: tuple[str, ...]
    more: tuple[str, ...]
    planted: str
    draw: Callable[..., dict[str, tuple[bool, float]]]


SCALES = {HUMAN: Scale(), "judge": Scale(), "panel": Scale()}


def draw_self_preference(
    data: DL19, kind: str, rng: np.random.Generator, resamples: int
) -> dict[str, tuple[bool, float]]:
    """Judge ``judge`` (family t5, monoT5's) against a panel of one noisy copy of the humans
    (family mistral: no system of its own); planted: +1 w.p. 0.3 on the documents monoT5 puts
    in its top 10."""
    own = data.pairs_of(data.tops["monoT5"])
    if kind == "planted":
        judge = bump(null_judge("noise", data.grades, data.codes, rng), own, 0.3, rng)
    else:
        judge = null_judge(kind, data.grades, data.codes, rng)
    panel = null_judge("noise", data.grades, data.codes, rng)
    grades = {HUMAN: data.grades, "judge": judge, "panel": panel}
    per_query = pd.concat([data.long(g).assign(judge=name) for name, g in grades.items()], ignore_index=True)
    table = self_preference(
        per_query,
        {HUMAN: None, "judge": "t5", "panel": "mistral"},
        FAMILIES,
        {HUMAN: "human", "judge": "recorded", "panel": "recorded"},
        labels={name: data.frame(g) for name, g in grades.items()},
        scales=SCALES,
        tops=data.tops,
        alpha=0.05,
        resamples=resamples,
        seed=42,
    )
    found = table.set_index("judge").loc["judge"]
    return {"self_preferring": (bool(found["self_preferring"]), float(found.get("within_grade", math.nan)))}


def draw_drift(data: DL19, kind: str, rng: np.random.Generator, resamples: int) -> dict[str, tuple[bool, float]]:
    """Two runs of one judge over every judged pair; planted: the rerun +1 on 20% of pairs."""
    base = "noise" if kind == "planted" else kind
    first = null_judge(base, data.grades, data.codes, rng)
    later = null_judge(base, data.grades, data.codes, rng)
    if kind == "planted":
        later = bump(later, np.ones(len(later), bool), 0.2, rng)
    table = paired_shift(
        {"first": data.frame(first), "rerun": data.frame(later)}, alpha=0.05, resamples=resamples, seed=42
    )
    return {"shifted": (bool(table.loc[0, "shifted"]), float(table.loc[0, "mean_difference"]))}


def probe_sample(data: DL19, rng: np.random.Generator, probe: str) -> np.ndarray:
    """The probes' samples of pool pairs: pad, 25 per human grade; injection, 50 of grade 0."""
    pool = data.pool_pairs
    human = data.grades[pool]
    if probe == "pad":
        return np.concatenate([rng.choice(pool[human == g], 25, replace=False) for g in range(4)])
    return rng.choice(pool[human == 0], 50, replace=False)


def draw_label_shift(
    data: DL19, kind: str, rng: np.random.Generator, probe: str, share: float = 0.2
) -> dict[str, tuple[bool, float]]:
    """The pad (or injection) probe: each sampled pair graded on the original and on the changed
    text, two draws of one judge; planted: the changed grade +1 on ``share`` of pairs."""
    pairs = probe_sample(data, rng, probe)
    grades, codes = data.grades[pairs], data.codes[pairs]
    base = "noise" if kind == "planted" else kind
    original = null_judge(base, grades, codes, rng)
    changed = null_judge(base, grades, codes, rng)
    if kind == "planted":
        changed = bump(changed, np.ones(len(changed), bool), share, rng)
    frame = data.qrels.iloc[pairs][["query_id", "doc_id"]].assign(
        dataset="dl19", judge="judge", condition=probe, human=grades, original=original, changed=changed
    )
    table = label_shift(frame, alpha=0.05)
    found = table[table["human"] == "all"].iloc[0]
    return {"flagged": (bool(found["flagged"]), float(found["mean_shift"]))}


def draw_length(data: DL19, kind: str, rng: np.random.Generator, permutations: int) -> dict[str, tuple[bool, float]]:
    """The judged pool pairs (each has a text); planted: +1 w.p. 0.2 on passages longer than
    their query's median."""
    frame, codes = data.lengths, data.codes[data.pool_pairs]
    base = "noise" if kind == "planted" else kind
    judge = null_judge(base, frame["human"].to_numpy(), codes, rng, data.length_leniency)
    if kind == "planted":
        judge = bump(judge, data.longer, 0.2, rng)
    row = length_bias(frame.assign(judge=judge), alpha=0.01, permutations=permutations, seed=42)
    return {"length_biased": (bool(row["length_biased"]), float(row["rho_within"]))}


def circularity_scores(
    data: DL19, judge: np.ndarray, rankings: Mapping[str, np.ndarray]
) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    """Mean and per-query judged-only nDCG@10 of each ranking under the humans (every qrel),
    the judge (the pool pairs) and human@pool: circularity_table's two inputs."""
    under = {
        HUMAN: (data.grades, data.ideal),
        "judge": (judge, data.pool_ideal(judge)),
        HUMAN_POOL: (data.grades, data.pool_ideal(data.grades)),
    }
    per_query = {
        ranker: pd.DataFrame({name: ndcg(index, g, ideal) for name, (g, ideal) in under.items()}, index=data.queries)
        for ranker, index in rankings.items()
    }
    scores = pd.DataFrame({ranker: table.mean() for ranker, table in per_query.items()}).T
    return scores, per_query


def draw_difference_in_differences(data: DL19, kind: str, rng: np.random.Generator) -> dict[str, tuple[bool, float]]:
    """Table 2's difference in differences, systems scored under the humans and under the
    judge, uncorrected (the default); read on two pairs of systems: monoT5 vs Rank1 (the
    closest) and Perfect vs BM25 (the widest gap). Planted: Rank1 +0.05 nDCG@10 on every
    query under a per-pair-noise judge (it passes monoT5: a reversal)."""
    base = "noise" if kind == "planted" else kind
    if kind == "gaussian":
        judge = data.human_wide + rng.normal(0, data.query_sd, (len(data.queries), 1))
        judge = judge + rng.normal(0, data.system_sd, judge.shape)
    else:
        judge = data.wide(null_judge(base, data.grades, data.codes, rng))
    if kind == "planted":
        judge["Rank1"] += 0.05
    dd = difference_in_differences(data.human_wide, judge, alpha=0.05, correction="none")
    found = {}
    for r in dd.itertuples():  # dd: (judge - human) on system_a - system_b; either way round
        found[r.system_a, r.system_b] = (bool(r.disagrees), bool(r.reversed), float(r.dd))
        found[r.system_b, r.system_a] = (bool(r.disagrees), bool(r.reversed), -float(r.dd))
    out = {}
    for a, b in (("monoT5", "Rank1"), ("Perfect", "BM25")):
        disagrees, reversed_, dd_value = found[a, b]
        out[f"disagrees ({a}, {b})"] = (disagrees, dd_value)
        out[f"reversed ({a}, {b})"] = (reversed_, dd_value)  # what the verdict's decisions flag reads
    return out


def asked_again(
    kind: str, grades: np.ndarray, codes: np.ndarray, rng: np.random.Generator, times: int
) -> list[np.ndarray]:
    """``times`` label sets of one null judge of ``kind`` on the same pairs: the judge asked again
    about passages whose modification adds no relevance and which it ignores. What it holds per
    query (a topic's direction) it keeps; what it does per pair (a strict, lenient or noisy
    grade) it draws anew, so a noisy judge disagrees with itself as a rerun would. ``topic`` has
    no per-pair part: every set is the same (a modified passage labelled as its original)."""
    if kind not in ("topic", "topic_noise"):
        return [null_judge(kind, grades, codes, rng) for _ in range(times)]
    n, direction = len(grades), rng.choice([-1, 1], codes.max() + 1)[codes]
    sets = []
    for _ in range(times):
        noise = (rng.random(n) < P) * rng.choice([-1, 1], n) if kind == "topic_noise" else 0
        sets.append(np.clip(grades + direction + noise, 0, 3).astype(int))
    return sets


def gaming_table(
    data: DL19, judge: np.ndarray, modified: Mapping[str, np.ndarray], *, every_pair: bool = False
) -> pd.DataFrame:
    """:func:`voirdire.probes.gaming.gaming_rows` as the workflow calls it with the defaults
    (every non-oracle system gamed by every method, k 10, judged-only nDCG@10, the t test,
    alpha 0.05): the judge's labels of the judged pairs (``judge``) and of each method's
    modified passages (``modified[method]``, indexed as the qrels; only the gamed pairs are read).
    The qrels are those :meth:`DL19.pruned` keeps (``every_pair``: all of them)."""
    mine = None if every_pair else data.pruned(judge)
    human = None if every_pair else data.pruned(data.grades)
    items, pairs = data.gaming_items, data.qrels.iloc[data.gaming_items]
    labels = pd.concat(
        [
            pd.DataFrame(
                {
                    "query_id": pairs["query_id"].to_numpy(),
                    "doc_id": data.gaming_ids[m],
                    "relevance": modified[m][items],
                }
            )
            for m in GAMING_METHODS
        ],
        ignore_index=True,
    )
    return gaming_rows(
        dataset="dl19",
        judge="judge",
        methods=GAMING_METHODS,
        systems=GAMED,
        runs=data.runs,
        scores=data.evaluated(judge, mine),
        human_scores=data.human_scores,
        judge_qrels=data.frame(judge, mine),
        human_qrels=data.frame(data.grades, human),
        labels=labels,
        k=GAMING_K,
        measure=str(MEASURE),
        depth=DEPTH,
        binary_threshold=2,
        human_threshold=2,
        alpha=0.05,
        test="t",
        seed=42,
    )


def draw_gaming(data: DL19, kind: str, rng: np.random.Generator, shift: float = 0.5) -> dict[str, tuple[bool, float]]:
    """The gamed system: the judge labels every judged pair and, asked again (:func:`asked_again`),
    each method's modified passages; planted: on the per-pair-noise judge, each modified passage
    +1 w.p. ``shift``. The verdict's flag is any row's ``climbs`` (its statistic the largest Δ);
    each system's ``stuff`` row is shown too."""
    base = "noise" if kind == "planted" else kind
    judge, *again = asked_again(base, data.grades, data.codes, rng, 1 + len(GAMING_METHODS))
    if kind == "planted":
        again = [bump(a, np.ones(len(a), bool), shift, rng) for a in again]
    rows = gaming_table(data, judge, dict(zip(GAMING_METHODS, again, strict=True)))
    out = {f"climbs (any of {len(rows)})": (bool(rows["climbs"].any()), float(rows["delta"].max()))}
    for r in rows[rows["method"] == GAMING_METHODS[0]].itertuples():
        out[f"climbs ({r.gamed})"] = (bool(r.climbs), float(r.delta))
    return out


def check_gaming(data: DL19, seed: int = 0) -> tuple[float, float]:
    """Two checks of the bench's gamed system, each a largest gap (0 when it holds): a noisy
    judge that labels each modified passage as it labelled the original moves no gamed system
    (|Δ| and |human Δ|: the gamed system's scores and Table 1's are computed alike); and a
    planted draw's table on the pruned qrels is the table on every pair (every number column)."""
    rng = np.random.default_rng(seed)
    judge = null_judge("noise", data.grades, data.codes, rng)
    rows = gaming_table(data, judge, dict.fromkeys(GAMING_METHODS, judge))
    still = float(max(rows["delta"].abs().max(), rows["human_delta"].abs().max()))
    again = {
        m: bump(null_judge("noise", data.grades, data.codes, rng), np.ones(len(judge), bool), 0.5, rng)
        for m in GAMING_METHODS
    }
    pruned, full = (gaming_table(data, judge, again, every_pair=every) for every in (False, True))
    numbers = pruned.select_dtypes("number").columns
    same = (pruned.drop(columns=numbers).astype(str) == full.drop(columns=numbers).astype(str)).all().all()
    gap = float(np.nanmax(np.abs(pruned[numbers].to_numpy(float) - full[numbers].to_numpy(float))))
    return still, gap if same else math.inf


def audits(resamples: int, permutations: int, probe_shift: float = 0.2, gaming_shift: float = 0.5) -> dict[str, Audit]:
    """Every audit the bench runs, by key, with the null kinds it runs by default (``more``:
    those ``--all-nulls`` adds: for the length audit, kinds that move grades within a block at
    random as per-pair noise does)."""
    return {
        "self_preference": Audit(
            "self-preference",
            "audits.panel.self_preference",
            "within_grade",
            0.05,
            NULLS,
            (),
            "+1 w.p. 0.3 on monoT5's top-10 documents",
            lambda d, k, r: draw_self_preference(d, k, r, resamples),
        ),
        "drift": Audit(
            "drift",
            "audits.drift.paired_shift",
            "mean_difference",
            0.05,
            NULLS,
            (),
            "rerun +1 on 20% of pairs",
            lambda d, k, r: draw_drift(d, k, r, resamples),
        ),
        "pad": Audit(
            "label shift (pad, 25 per grade)",
            "probes.shifts.label_shift",
            "mean_shift",
            0.05,
            NULLS,
            (),
            f"changed +1 on {probe_shift:.0%} of pairs",
            lambda d, k, r: draw_label_shift(d, k, r, "pad", probe_shift),
        ),
        "injection": Audit(
            "label shift (injection, 50 of grade 0)",
            "probes.shifts.label_shift",
            "mean_shift",
            0.05,
            NULLS,
            (),
            f"changed +1 on {probe_shift:.0%} of pairs",
            lambda d, k, r: draw_label_shift(d, k, r, "injection", probe_shift),
        ),
        "length": Audit(
            "length",
            "audits.length.length_bias",
            "rho_within",
            0.01,
            ("noise", "topic_length"),
            ("strict", "lenient", "topic"),
            "+1 w.p. 0.2 on passages longer than their query's median",
            lambda d, k, r: draw_length(d, k, r, permutations),
        ),
        "dd": Audit(
            "difference in differences",
            "stats.difference_in_differences",
            "dd",
            0.05,
            ("gaussian", *NULLS),
            (),
            "Rank1 +0.05 nDCG@10 per query (above monoT5)",
            draw_difference_in_differences,
        ),
        "gaming": Audit(
            "gamed system (3 systems x 2 methods, k 10)",
            "probes.gaming.gaming_rows",
            "delta",
            0.05,
            ("strict", "lenient", "noise", "topic_noise"),
            ("topic",),
            f"each modified passage +1 w.p. {gaming_shift:.0%}",
            lambda d, k, r: draw_gaming(d, k, r, gaming_shift),
        ),
    }


# ----------------------------------------------------------------------------- the table


def target(alpha: float, draws: int) -> float:
    """The most a null may flag: alpha plus twice the Monte Carlo error of a rate of alpha."""
    return alpha + 2 * math.sqrt(alpha * (1 - alpha) / draws)


POWER = 0.8


def simulate(
    data: DL19,
    key: str,
    audit: Audit,
    draws: int,
    power_draws: int,
    seed: int,
    *,
    all_nulls: bool = False,
    progress: bool = True,
) -> list[dict]:
    """Every setting of one audit: ``draws`` of each null kind and ``power_draws`` of the
    planted bias, each setting from its own generator (seeded by ``seed``, the audit and the
    kind), so an audit's numbers do not depend on which others run."""
    rows = []
    kinds = (*audit.nulls, *audit.more) if all_nulls else audit.nulls
    for kind, n in [(kind, draws) for kind in kinds] + [("planted", power_draws)]:
        rng = np.random.default_rng([seed, *map(ord, key), *map(ord, kind)])
        found: dict[str, list[tuple[bool, float]]] = {}
        start = time.perf_counter()
        for _ in tqdm(range(n), desc=f"{key}: {kind}", disable=not progress, leave=False, file=sys.stderr):
            for flag, value in audit.draw(data, kind, rng).items():
                found.setdefault(flag, []).append(value)
        seconds = time.perf_counter() - start
        for flag, values in found.items():
            fired = sum(v[0] for v in values)
            statistic = float(np.nanmean([v[1] for v in values])) if values else math.nan
            rows.append(row(audit, flag, kind, n, fired, statistic, seconds))
    return rows


def row(audit: Audit, flag: str, kind: str, draws: int, fired: int, statistic: float, seconds: float) -> dict:
    """One line of the table: the flag rate with its Wilson interval, against its target."""
    low, high = proportion_confint(fired, draws, alpha=0.05, method="wilson")
    rate = fired / draws
    planted = kind == "planted"
    bound = POWER if planted else target(audit.alpha, draws)
    return {
        "audit": audit.name,
        "flag": flag,
        "alpha": audit.alpha,
        "simulated": f"planted: {audit.planted}" if planted else f"null: {KINDS[kind]}",
        "statistic": audit.statistic,
        "mean_statistic": statistic,
        "draws": draws,
        "flagged": int(fired),
        "rate": rate,
        "ci_low": low,
        "ci_high": high,
        "target": f">= {bound:.2f} (power)" if planted else f"<= {bound:.3f} (size)",
        "within_target": bool(rate >= bound) if planted else bool(rate <= bound),
        "s_per_draw": seconds / draws,
    }


def set_permutations(permutations: int | None) -> int:
    """Set the sign-flip draws behind every query-level p (``None``: leave the engine's
    default); returns the number in force. The engine takes it as a keyword default, so the
    bench sets that default: the audits' functions take no such argument."""
    defaults = paired_stats.sign_flip_p.__kwdefaults__
    if permutations is not None:
        defaults["permutations"] = permutations
    return defaults["permutations"]


def calibrate(
    data: DL19,
    keys: list[str] | None = None,
    *,
    draws: int = 200,
    power_draws: int = 100,
    seed: int = 2019,
    resamples: int = 200,
    length_permutations: int = 500,
    all_nulls: bool = False,
    progress: bool = True,
    probe_shift: float = 0.2,
    gaming_shift: float = 0.5,
) -> pd.DataFrame:
    """The table: one row per audit, flag and simulated judge."""
    chosen = audits(resamples, length_permutations, probe_shift, gaming_shift)
    rows = []
    for key in keys or list(chosen):
        rows += simulate(data, key, chosen[key], draws, power_draws, seed, all_nulls=all_nulls, progress=progress)
    return pd.DataFrame(rows)


COLUMNS = [
    "audit",
    "flag",
    "alpha",
    "simulated",
    "draws",
    "flagged",
    "rate",
    "ci_low",
    "ci_high",
    "target",
    "within_target",
    "statistic",
    "mean_statistic",
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA, help="the TREC DL 2019 folder (default: ../shared/data)")
    parser.add_argument("--draws", type=int, default=200, help="draws of each null judge")
    parser.add_argument("--power-draws", type=int, default=100, help="draws of each planted bias")
    parser.add_argument("--quick", action="store_true", help="20 null and 10 planted draws: a smoke run")
    parser.add_argument("--audits", nargs="+", choices=list(audits(1, 1)), help="a subset (default: all)")
    parser.add_argument("--all-nulls", action="store_true", help="every null kind for every audit (slower)")
    parser.add_argument("--resamples", type=int, default=200, help="bootstrap resamples behind the intervals")
    parser.add_argument(
        "--permutations", type=int, default=None, help="sign-flip draws of every query-level p (default: the engine's)"
    )
    parser.add_argument("--length-permutations", type=int, default=500, help="the length audit's (its default: 2000)")
    parser.add_argument("--seed", type=int, default=2019)
    parser.add_argument(
        "--probe-shift",
        type=float,
        default=0.2,
        help="the pad and injection probes' planted bias: +1 on this share of pairs",
    )
    parser.add_argument(
        "--gaming-shift",
        type=float,
        default=0.5,
        help="the gamed system's planted bias: each modified passage +1 with this probability",
    )
    parser.add_argument("--out", type=Path, help="also write the table as CSV")
    args = parser.parse_args()
    if args.quick:
        args.draws, args.power_draws = 20, 10
    if not (args.data / "qrels.nist.txt").is_file():
        sys.exit(f"no TREC DL 2019 data at {args.data}")
    start = time.perf_counter()
    data = load(args.data)
    gap = check_ndcg(data)
    gaming = check_gaming(data) if "gaming" in (args.audits or audits(1, 1)) else None
    engine = set_permutations(None)
    permutations = set_permutations(args.permutations)
    table = calibrate(
        data,
        args.audits,
        draws=args.draws,
        power_draws=args.power_draws,
        seed=args.seed,
        resamples=args.resamples,
        length_permutations=args.length_permutations,
        all_nulls=args.all_nulls,
        probe_shift=args.probe_shift,
        gaming_shift=args.gaming_shift,
    )
    elapsed = time.perf_counter() - start
    print(table[COLUMNS].to_markdown(index=False, floatfmt=".3f"))
    print()
    for line in notes(data, args, gap=gap, gaming=gaming, engine=engine, permutations=permutations, elapsed=elapsed):
        print(f"- {line}")
    for r in table[~table["within_target"]].itertuples():
        print(
            f"- MISSES ITS TARGET: {r.audit}, {r.flag}, {r.simulated}: {r.flagged}/{r.draws} = {r.rate:.3f} "
            f"[{r.ci_low:.3f}, {r.ci_high:.3f}], target {r.target}."
        )
    if args.out:
        table.to_csv(args.out, index=False)


def notes(
    data: DL19, args, *, gap: float, gaming: tuple[float, float] | None, engine: int, permutations: int, elapsed: float
) -> list[str]:
    """What a reader needs to reproduce or weigh the table."""
    rng = np.random.default_rng(args.seed)
    twice = [null_judge("noise", data.grades, data.codes, rng) for _ in range(2)]
    flips = float(np.mean(twice[0] != twice[1]))
    # moving every label of a query +1 or -1 (clipped) from the humans: its expected shift
    clipped = 0.5 * np.mean(data.grades < 3) - 0.5 * np.mean(data.grades > 0)
    lines = [
        f"data: TREC DL 2019 passage, {len(data.queries)} queries, {len(data.qrels)} NIST labels; systems "
        f"{', '.join(data.runs)} (each its top 10 judged documents); the judged BM25 top-100 pool: "
        f"{len(data.pool_pairs)} pairs, every one with its text (the length audit's and the probes' pairs).",
        f"nDCG@10 is computed by the bench, at most {gap:.1e} from voirdire.evaluation.evaluate_systems "
        "(checked at the start on the humans and a noisy judge, the systems and the circularity rankings).",
        "rate: the share of draws the flag fired; ci: its 95% Wilson interval; size target: alpha + "
        "2 sqrt(alpha (1 - alpha) / draws); power target: 0.80. mean_statistic: the tested statistic's mean "
        "over the draws.",
        f"difference in differences' Gaussian null: per-query sd {data.query_sd:.3f}, per query x system sd "
        f"{data.system_sd:.3f} (the monoT5-3B and Rank1-7B judges' nDCG@10 against the humans').",
        f"the per-pair-noise judge (the base of every planted bias) disagrees with itself on {flips:.0%} of "
        "the pairs between two draws: a noisy judge, so the power shown is a floor for steadier judges.",
        "paired tests (drift, pad, injection): the null is two independent draws of one judge. Moving each "
        "query's labels +-1 away from the humans' (a random direction per query) is no null: clipped at 0 and "
        f"3 it shifts the mean grade by {clipped:+.3f} in expectation on these labels.",
        f"lowered to fit the time: bootstrap resamples {args.resamples} (intervals only: no flag reads them); "
        f"sign-flip permutations {permutations} (the engine's default: {engine}); "
        f"the length audit's permutations {args.length_permutations} (its default 2000).",
        f"draws {args.draws} per null, {args.power_draws} per planted bias; seed {args.seed}; "
        f"{os.cpu_count()} CPUs; {elapsed:.0f} s in all.",
    ]
    if gaming is not None:
        still, pruned = gaming
        lines.insert(
            2,
            (
                f"gamed system: {len(data.gaming_items)} modified passages per method ({', '.join(GAMED)}: top "
                f"{GAMING_K} judged); a judge labelling each modified passage as its original moves none (largest "
                f"|delta|, |human delta|: {still:.1e}); its table on the pruned qrels (pairs a system returns and "
                f"each query's {DEPTH} best of the rest) is the table on every pair (largest gap {pruned:.1e}). "
                f"Planted: each modified passage +1 w.p. {args.gaming_shift}. Its climbs reads Delta's bootstrap "
                "interval at the engine's 1000 resamples, as the workflow does (--resamples does not lower it)."
            ),
        )
    return lines


if __name__ == "__main__":
    main()
