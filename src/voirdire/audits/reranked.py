"""Judge-reranked systems: circularity per system (Clarke & Dietz, 2024).

For every system the user brings (never the constructed oracles) and every judge but the humans,
a variant ``{system}>{judge}``: the system's top ``k`` of each query re-sorted by the judge's
grade (descending), equal grades in the system's own order, the rest of the run unchanged. Both
are scored as every audit scores systems (:func:`voirdire.evaluation.evaluate_systems_under`: cut
at the evaluation depth, binarized at each label set's threshold, ties as configured) under the
judge and under ``human@pool`` (the human labels of the needed pairs). The *gain* under each is
variant - system; the *over-rating* is the gain under the judge less the gain under the humans.

**Choices** (docs/judge-in-the-loop.md):

* the system's own order is the order it is scored in: trec_eval's (score as a single-precision
  float descending, then document id descending) under ``ties: trec_eval``, the full score under
  ``exact``; the variant is handed on with its scores renumbered n..1 down each query, so either
  setting reads its order;
* ``k`` is at most the evaluation depth (a config error otherwise, before any job): every
  human-judged document of a top ``k`` is then a needed pair, which a live judge labels through
  its normal call path and ``voirdire plan`` counts;
* a document of the top ``k`` the judge has no grade for (a recorded judge's missing label, a
  text-reading judge's passage without a text, a passage no human judged) is never guessed: it
  keeps its own position, and only the graded documents are re-sorted among the positions they
  held. The table counts them (``unlabelled``, ``unjudged``).

**The question is calibrated against the judge's own noise.** A judge whose grade is the human
grade plus independent noise *does* over-rate its rerankings: a variant sorted by the judge's own
noise is sorted best under the judge (its gain there is the noise's maximum) and less well under
the humans (the winner's curse). So over-rating > 0 is what every noisy judge shows; the question
is whether it over-rates *beyond* its noise. The null permutes the judge's grades among the pairs
of the same query and human grade (its errors exchangeable among documents of the same human
grade in a query): its per-query leniency and its confusion matrix with the humans are kept
exactly; every variant and score is recomputed per draw. It flags a judge whose errors
concentrate where reranking acts: on the documents the systems retrieve and rank high (a
leniency on one family's documents, on documents many systems put in their top k).

**p from the null's normal approximation.** The verdict adjusts a judge's ~14 questions together
(Holm at alpha 0.05), so its smallest p must reach 0.05 / 14 = 0.0036; a Monte Carlo p (1 + hits)
/ (draws + 1) cannot go below 1 / (draws + 1) (0.005 at 200 draws), so a flag would need
thousands of draws. The statistic (the total over-rating) is a mean over systems x queries of
per-query terms that the permutation moves independently across queries (blocks never cross a
query), so its permutation distribution is close to normal (a central limit over the queries;
on DL19's 43 queries and 5,000 draws its skewness is -0.02 to +0.13, its excess kurtosis -0.11
to +0.07 for four judges: bench/reranked_null.py). ``p`` is therefore 1 - Phi((observed - null mean) / null sd),
the null's moments from ``draws`` draws (default 1,000: the sd to about 2%), and the Monte Carlo
p stays beside it (``p_permutation``: the share of draws at least as over-rated, add-one; Phipson
& Smyth, 2010), with the null's skewness (``null_skew``) to judge the approximation by. A null
without spread (a copy of the humans) has the Monte Carlo p.

**A draw in numpy.** The permutation changes only the judge's grades, so each run's lines are
made integer arrays once (:class:`FastNull`: positions, the judge's grade slots, the human gains,
the query segments) and every draw's variant orders and scores are computed for a chunk of draws
at once, the measure as pytrec_eval computes it (nDCG: linear gains, 1/log2(rank + 1), judged-only
or not, any cutoff). The observed statistic stays the evaluation path's
(:func:`voirdire.evaluation.evaluate_systems_under`, ir_measures underneath), and the numpy path
is used only where it reproduces those scores for every system, variant and query (to 1e-9);
another measure (P, AP, nDCG with ``gains``...) is drawn through the evaluation path per draw, the
same statistic on the same permutations, 200 to 300 times slower.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import ConfigError
from ..evaluation import (
    MEASURE,
    check_ties,
    cut,
    evaluate_prepared,
    evaluate_systems_under,
    parse_measure,
    prepare_runs,
)
from ..judges import HUMAN, restrict
from ..output import IntervalCell
from ..questions import NA, PASS, Cell, judge_rows, number, question
from ..stats import (
    block_permutations,
    interval,
    kendall_tau,
    kendall_tau_rows,
    query_mean_test,
    query_resamples,
    top_k,
)
from ..stats.resample import RESAMPLES, SEED
from .registry import Context, Figure, Table, audit

log = logging.getLogger(__name__)

ARROW = ">"
"""A variant is named ``{system}>{judge}``."""
ALL = "all"
"""The ``system`` of a judge's row over every system of the user's (the verdict reads it)."""
DRAWS = 1000
"""The permutation null's draws (``audits.reranked.draws``): its mean and sd (behind ``p``) to
about 2% of the sd (0.5 ms a draw on DL19's three systems, depth 100: bench/reranked_null.py)."""
TOP = 5
"""The second "top" of the systems' tau: the humans' top 5 (beside their top half)."""
KEY = "audits.reranked.k"

COLUMNS = [
    "judge",
    "system",
    "variant",
    "k",
    "queries",
    "top_k_pairs",
    "unlabelled",
    "unjudged",
    "queries_reordered",
    "system_judge",
    "variant_judge",
    "system_human",
    "variant_human",
    "gain_judge",
    "gain_judge_ci_low",
    "gain_judge_ci_high",
    "gain_human",
    "gain_human_ci_low",
    "gain_human_ci_high",
    "over_rating",
    "over_rating_ci_low",
    "over_rating_ci_high",
    "null_mean",
    "null_sd",
    "excess",
    "null_skew",
    "p",
    "p_permutation",
    "draws",
    "tau_top_half",
    "tau_top_half_ci_low",
    "tau_top_half_ci_high",
    "top_half",
    "tau_top5",
    "tau_top5_ci_low",
    "tau_top5_ci_high",
    "top5",
]
"""The ``reranked`` table's columns after ``dataset``: one row per judge x system, and one per
judge over every system (``system`` = :data:`ALL`), which alone carries the taus."""


def variant_name(system: str, judge: str) -> str:
    return f"{system}{ARROW}{judge}"


def default_k(measure: str, depth: int | None) -> int:
    """The top k re-sorted when ``audits.reranked.k`` is not set: the primary measure's cutoff (10
    for nDCG@10), else the evaluation depth; at most the depth."""
    cutoff = parse_measure(measure)["cutoff"]
    k = cutoff if isinstance(cutoff, int) and cutoff > 0 else depth if depth else 10
    return min(k, depth) if depth else k


def resolve_k(k: int | None, measure: str, depth: int | None) -> int:
    """``audits.reranked.k`` checked against the evaluation depth (a :class:`ConfigError` naming the
    key when it exceeds it: the judges label only the needed pairs, the human-judged documents of
    every system's top ``depth``), or its default (:func:`default_k`)."""
    if k is None:
        return default_k(measure, depth)
    if k < 1:
        raise ConfigError(f"k must be at least 1, got {k}", key=KEY)
    if depth is not None and k > depth:
        raise ConfigError(
            f"k = {k} exceeds the evaluation depth {depth} (evaluation.depth, else bm25.depth): the judges "
            "label only the human-judged documents of each system's top depth, so a deeper re-sort would "
            "need labels no judge is asked for; lower k or raise the depth",
            key=KEY,
        )
    return int(k)


# ----------------------------------------------------------------------------- one system's top k


def own_order(run: pd.DataFrame, depth: int | None, ties: str = "trec_eval") -> pd.DataFrame:
    """The run as it is scored: its top ``depth`` of each query as :func:`voirdire.evaluation.cut`
    takes it (None: all of it), in the order the measure reads it: score descending (as a
    single-precision float under ``ties="trec_eval"``, as trec_eval reads it; the full score under
    ``exact``), then document id descending; ``position`` 0 first."""
    check_ties(ties)
    frame = (cut(run, depth, ties) if depth is not None else run)[["query_id", "doc_id", "score"]]
    key = frame["score"].astype(np.float32) if ties == "trec_eval" else frame["score"].astype(float)
    frame = frame.assign(_key=key.astype(float), doc_id=frame["doc_id"].astype(str))
    frame = frame.sort_values(["query_id", "_key", "doc_id"], ascending=[True, False, False], kind="stable")
    frame["position"] = frame.groupby("query_id", sort=False).cumcount()
    return frame.drop(columns="_key").reset_index(drop=True)


@dataclass
class TopK:
    """One run prepared to be re-sorted many times: its lines in its own order (:func:`own_order`),
    the lines of the top ``k`` whose pair the judge grades (``graded``, in order) and the index of
    each one's grade in the judge's label array (``slot``)."""

    ordered: pd.DataFrame
    query: np.ndarray
    doc: np.ndarray
    rank: np.ndarray
    score: np.ndarray
    graded: np.ndarray
    slot: np.ndarray
    query_code: np.ndarray
    top_k_pairs: int
    unlabelled: int
    unjudged: int


def prepare(
    run: pd.DataFrame, k: int, keys: pd.MultiIndex, needed: pd.MultiIndex, depth: int | None, ties: str
) -> TopK:
    """A run's :class:`TopK` against the judge's labelled pairs ``keys`` (their order is the label
    array's) and the ``needed`` pairs (the human-judged pairs of every system's top depth)."""
    ordered = own_order(run, depth, ties)
    pairs = pd.MultiIndex.from_arrays([ordered["query_id"].astype(str), ordered["doc_id"].astype(str)])
    slot = keys.get_indexer(pairs)
    top = (ordered["position"] < k).to_numpy()
    is_needed = pairs.isin(needed)
    graded = np.flatnonzero(top & (slot >= 0))
    sizes = ordered.groupby("query_id", sort=False)["doc_id"].transform("size").to_numpy()
    rank = ordered["position"].to_numpy() + 1
    return TopK(
        ordered=ordered,
        query=ordered["query_id"].to_numpy(dtype=object),
        doc=ordered["doc_id"].to_numpy(dtype=object),
        rank=rank,
        score=(sizes - rank + 1).astype(float),
        graded=graded,
        slot=slot[graded],
        query_code=pd.factorize(ordered["query_id"])[0][graded],
        top_k_pairs=int((top & is_needed).sum()),
        unlabelled=int((top & is_needed & (slot < 0)).sum()),
        unjudged=int((top & ~is_needed & (slot < 0)).sum()),
    )


def rerank(prepared: TopK, grades: np.ndarray) -> pd.DataFrame:
    """The variant of a prepared run under the judge's ``grades`` (its label array): the graded
    lines of each query's top k sorted by grade descending, equal grades in the run's own order,
    into the positions they held; every other line where it was. Scores renumbered n..1 down
    each query (a run any ties setting reads in this order)."""
    line = np.arange(len(prepared.ordered))
    if len(prepared.graded):
        grade = grades[prepared.slot]
        # graded lines by query, then grade descending, then their own order (lexsort: last key first)
        moved = prepared.graded[np.lexsort((prepared.graded, -grade, prepared.query_code))]
        line[prepared.graded] = moved  # graded lines are already in query order: the slots match
    # a line moves only within its query: each position keeps its query, rank and score
    return pd.DataFrame(
        {"query_id": prepared.query, "doc_id": prepared.doc[line], "rank": prepared.rank, "score": prepared.score}
    )


def same_order(prepared: TopK, variant: pd.DataFrame) -> np.ndarray:
    """Per query of the run (in its order), whether the variant keeps the run's own order."""
    moved = prepared.ordered["doc_id"].to_numpy() != variant["doc_id"].to_numpy()
    return ~pd.Series(moved).groupby(prepared.ordered["query_id"].to_numpy(), sort=False).any().to_numpy()


# ----------------------------------------------------------------------------- the null, in numpy


def fast_measure(measure: str) -> tuple[float, bool] | None:
    """(cutoff, judged_only) of a measure :class:`FastNull` computes as pytrec_eval does: nDCG with
    trec_eval's linear gains and log2 discount (``dcg`` log2, no ``gains``), at any cutoff (inf:
    none), judged-only or not; None for any other (its null is scored by the evaluation path)."""
    parsed = parse_measure(measure)
    if parsed.NAME != "nDCG" or parsed["dcg"] != "log2" or "gains" in parsed.params:
        return None
    cutoff = parsed.params.get("cutoff")
    return (float(cutoff) if isinstance(cutoff, int) and cutoff > 0 else math.inf), bool(parsed["judged_only"])


class _Lines:
    """One prepared run (:class:`TopK`) as integer arrays over the lines the measure can read, in
    their own order: each line's query (its index in the scored queries), the query segments, its
    grade's index in the judge's label array (-1: none) and its human gain (whether the humans
    grade it). Only the top ``k`` moves, as a set in place, so a line below it that the cutoff
    never reaches under either label set (its query's judged lines above it, for a judged-only
    measure, already as many as the cutoff) is left out: it counts in no draw."""

    def __init__(
        self,
        prepared: TopK,
        queries: pd.Index,
        keys: pd.MultiIndex,
        human: pd.Series,
        cutoff: float,
        judged_only: bool,
    ) -> None:
        pairs = pd.MultiIndex.from_arrays([prepared.query.astype(str), prepared.doc.astype(str)])
        slot = keys.get_indexer(pairs)
        grade = human.reindex(pairs).to_numpy(dtype=float)
        position = prepared.ordered["position"].to_numpy()
        k = int(position[prepared.graded].max()) + 1 if len(prepared.graded) else 0
        if judged_only:
            first = np.flatnonzero(position == 0)  # the runs' queries are contiguous, in their own order
            start = np.repeat(first, np.diff(np.r_[first, len(position)]))
            read = position < k
            for judged in (slot >= 0, ~np.isnan(grade)):
                seen = np.cumsum(judged) - judged  # judged lines before each line, over the run
                read |= (seen - seen[start]) < cutoff
        else:
            read = (position < k) | (position < cutoff)
        # lines of a query not scored leave, as the evaluation drops them
        keep = np.flatnonzero((queries.get_indexer(prepared.query) >= 0) & read)
        self.size = len(keep)
        self.query = queries.get_indexer(prepared.query[keep])
        self.starts = np.flatnonzero(np.r_[True, self.query[1:] != self.query[:-1]]) if len(keep) else keep
        self.segment = self.query[self.starts]
        self.lengths = np.diff(np.r_[self.starts, self.size])
        self.position = np.arange(self.size) - np.repeat(self.starts, self.lengths)
        self.slot = slot[keep]
        self.human_judged = ~np.isnan(grade[keep])
        self.human_gain = np.nan_to_num(grade[keep])
        # the re-sorted lines: the graded top k (their positions among the kept lines, in order)
        where = np.full(len(prepared.ordered), -1)
        where[keep] = np.arange(self.size)
        graded = where[prepared.graded]
        chosen = graded >= 0
        # each graded line's segment (they run in the lines' order, as the re-sort's first key must)
        segment = np.repeat(np.arange(len(self.starts)), self.lengths)
        self.graded, self.graded_slot = graded[chosen], prepared.slot[chosen]
        self.graded_segment = segment[self.graded]


class FastNull:
    """The permutation null's statistic computed in numpy for many label sets at once: every
    variant's order and every score, the same measure pytrec_eval computes (:func:`fast_measure`),
    scored per draw from integer arrays made once (the lines' positions, the judge's grade slots,
    the human gains, the query segments) instead of a run and qrels handed to pytrec_eval per draw.
    :meth:`observed` scores the judge's own grades; :func:`_judge_rows` checks it against the
    evaluation path's scores before any draw is trusted."""

    def __init__(
        self,
        prepared: Mapping[str, list[TopK]],
        systems: list[str],
        labels: pd.DataFrame,
        grades: np.ndarray,
        human: pd.DataFrame,
        query_ids: list[str],
        cutoff: float,
        judged_only: bool,
    ) -> None:
        self.systems, self.cutoff, self.judged_only = systems, cutoff, judged_only
        queries = pd.Index(query_ids)
        keys = pd.MultiIndex.from_frame(labels[["query_id", "doc_id"]])
        by_pair = human.drop_duplicates(["query_id", "doc_id"], keep="last").set_index(["query_id", "doc_id"])
        relevance = by_pair["relevance"]
        self.lines = {
            s: [_Lines(p, queries, keys, relevance, cutoff, judged_only) for p in prepared[s]] for s in systems
        }
        longest = max((int(run.lengths.max()) for runs in self.lines.values() for run in runs if run.size), default=1)
        self.discount = 1 / np.log2(np.arange(2, longest + 2))  # rank r (1 first): 1 / log2(r + 1)
        # each grade's code (0 the lowest): the re-sort reads only the grades' order
        values, self.codes = np.unique(grades, return_inverse=True)
        self.levels = len(values)
        self.grades = grades
        # the ideal DCGs: a permutation within (query, human grade) keeps each query's multiset of
        # the judge's grades, so its ideal is the observed grades' in every draw
        self.ideal_judge = self._ideal(labels["query_id"].to_numpy(), grades, queries)
        self.ideal_human = self._ideal(human["query_id"].to_numpy(), human["relevance"].to_numpy(float), queries)

    def _ideal(self, query: np.ndarray, gain: np.ndarray, queries: pd.Index) -> np.ndarray:
        """Per scored query, the DCG of its graded documents sorted best first, cut at the cutoff."""
        code = queries.get_indexer(query)
        keep = (code >= 0) & (gain > 0)
        code, gain = code[keep], gain[keep]
        order = np.lexsort((-gain, code))
        code, gain = code[order], gain[order]
        rank = np.arange(len(code)) - np.searchsorted(code, code)  # 0 first within each query
        cut = rank < self.cutoff
        weight = 1 / np.log2(rank[cut] + 2)
        return np.bincount(code[cut], weights=gain[cut] * weight, minlength=len(queries))

    def _score(self, run: _Lines, order: np.ndarray | None, gain: np.ndarray, judged: np.ndarray, ideal: np.ndarray):
        """(draws, queries): the measure of the lines in ``order`` (draws x lines: the line at each
        position; None: their own order) under per-line ``gain`` (draws x lines, or lines) of which
        the ``judged`` lines are graded. Unjudged lines leave before the cut if judged-only (as
        trec_eval's -J), else hold their rank with no gain."""
        draws = gain.shape[0] if gain.ndim == 2 else (order.shape[0] if order is not None else 1)
        found = np.zeros((draws, len(ideal)))
        if not run.size:
            return found
        if order is None:
            at_gain, at_judged = np.broadcast_to(gain, (draws, run.size)), np.broadcast_to(judged, (draws, run.size))
        else:
            at_gain = np.take_along_axis(gain, order, axis=1) if gain.ndim == 2 else gain[order]
            at_judged = judged[order]
        if self.judged_only:
            seen = np.cumsum(at_judged, axis=1)
            before = seen[:, run.starts] - at_judged[:, run.starts]
            rank = seen - np.repeat(before, run.lengths, axis=1)  # 1 for a segment's first judged line
            counted = at_judged & (rank <= self.cutoff)
        else:
            rank = np.broadcast_to(run.position + 1, (draws, run.size))
            counted = rank <= self.cutoff
        weight = np.where(counted, self.discount[np.minimum(rank, len(self.discount)) - 1], 0.0)
        dcg = np.add.reduceat(at_gain * weight, run.starts, axis=1)
        norm = ideal[run.segment]
        found[:, run.segment] = np.divide(dcg, norm, out=np.zeros_like(dcg), where=norm > 0)
        return found

    def _orders(self, run: _Lines, codes: np.ndarray) -> np.ndarray:
        """(draws, lines): the variant's line at each position under each draw's grade ``codes``
        (draws x labels): the graded top k sorted by query, grade descending, own order."""
        draws = codes.shape[0]
        order = np.broadcast_to(np.arange(run.size), (draws, run.size)).copy()
        m = len(run.graded)
        if m:
            code = codes[:, run.graded_slot]
            key = (run.graded_segment.astype(np.int64) * self.levels + (self.levels - 1 - code)) * m + np.arange(m)
            order[:, run.graded] = run.graded[np.argsort(key, axis=1)]
        return order

    def scores(self, grades: np.ndarray, codes: np.ndarray) -> dict[str, np.ndarray]:
        """Per system, (draws, queries, 4): the system and its variant under the judge's ``grades``
        (draws x labels, and their ``codes``), then under the humans, each the mean over the
        system's runs."""
        padded = np.concatenate([grades, np.zeros((len(grades), 1))], axis=1)  # slot -1: no grade
        found = {}
        for s in self.systems:
            parts = []
            for run in self.lines[s]:
                gain_j = padded[:, run.slot]
                judged_j = run.slot >= 0
                order = self._orders(run, codes)
                parts.append(
                    np.stack(
                        [
                            self._score(run, None, gain_j, judged_j, self.ideal_judge),
                            self._score(run, order, gain_j, judged_j, self.ideal_judge),
                            np.broadcast_to(
                                self._score(run, None, run.human_gain, run.human_judged, self.ideal_human),
                                (len(grades), len(self.ideal_human)),
                            ),
                            self._score(run, order, run.human_gain, run.human_judged, self.ideal_human),
                        ],
                        axis=2,
                    )
                )
            found[s] = np.mean(parts, axis=0)
        return found

    def observed(self) -> dict[str, np.ndarray]:
        """:meth:`scores` of the judge's own grades, (queries, 4) per system."""
        return {s: v[0] for s, v in self.scores(self.grades[None, :], self.codes[None, :]).items()}

    def over_rating(self, grades: np.ndarray, codes: np.ndarray) -> np.ndarray:
        """(draws, systems): each system's mean over-rating over the queries under each draw."""
        found = self.scores(grades, codes)
        columns = []
        for s in self.systems:
            v = found[s]
            columns.append(((v[..., 1] - v[..., 0]) - (v[..., 3] - v[..., 2])).mean(axis=1))
        return np.stack(columns, axis=1)


# ----------------------------------------------------------------------------- the table


@dataclass
class Scored:
    """Per-query tables (query x system) of the systems and their variants under the judge and
    under the humans, in the order of ``systems`` and ``variants``."""

    judge: pd.DataFrame
    human: pd.DataFrame


def _wide(frame: pd.DataFrame, systems: Sequence[str], query_ids: Sequence[str]) -> pd.DataFrame:
    """query x system of a long (query_id, system, ndcg) table of every system over every query."""
    wide = frame.set_index(["query_id", "system"])["ndcg"].unstack("system")
    return wide.reindex(index=list(query_ids), columns=list(systems))


def _score(
    runs: Mapping[str, list[pd.DataFrame]],
    labels: pd.DataFrame,
    human: pd.DataFrame,
    thresholds: tuple[int, int],
    query_ids: Sequence[str],
    measure: str,
    depth: int | None,
    ties: str,
) -> Scored:
    """The runs under the judge's ``labels`` and the humans' (``human@pool``), per query."""
    sets = {"judge": labels, "human": human}
    under = evaluate_systems_under(
        runs, sets, {"judge": thresholds[0], "human": thresholds[1]}, query_ids, measure=measure, depth=depth, ties=ties
    )
    wide = {name: _wide(frame, list(runs), query_ids) for name, frame in under.items()}
    return Scored(wide["judge"], wide["human"])


def reranked_table(
    runs: Mapping[str, list[pd.DataFrame]],
    judge_labels: Mapping[str, pd.DataFrame],
    human: pd.DataFrame,
    pairs: pd.DataFrame,
    thresholds: Mapping[str, int],
    human_threshold: int,
    query_ids: Sequence[str],
    *,
    k: int,
    measure: str = str(MEASURE),
    depth: int | None = None,
    ties: str = "trec_eval",
    draws: int = DRAWS,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    fast: bool = True,
) -> pd.DataFrame:
    """The ``reranked`` table (:data:`COLUMNS`) of one dataset: every system of ``runs`` (the
    user's, never the oracles) reranked by each judge of ``judge_labels`` (its labels of the
    needed ``pairs``), scored under the judge and under ``human`` (``human@pool``: the human labels
    of the needed pairs). Gains and over-ratings carry 95% cluster-bootstrap intervals over queries
    (:func:`voirdire.stats.query_mean_test`); ``p``, ``null_mean`` and ``null_sd`` come from the
    permutation null of the module docstring (``draws`` draws, seeded), drawn in numpy where it
    computes the measure (:class:`FastNull`; ``fast=False``: every draw through the evaluation
    path, the same statistic on the same permutations, slower). No system: no rows."""
    if not runs or not judge_labels:
        return pd.DataFrame(columns=COLUMNS)
    query_ids = [str(q) for q in query_ids]
    human = human[["query_id", "doc_id", "relevance"]].astype({"query_id": str, "doc_id": str})
    needed = pd.MultiIndex.from_arrays([pairs["query_id"].astype(str), pairs["doc_id"].astype(str)])
    rows = []
    for judge, labels in judge_labels.items():
        rows.extend(
            _judge_rows(
                judge,
                runs,
                labels,
                human,
                needed,
                (thresholds[judge], human_threshold),
                query_ids,
                k=k,
                measure=measure,
                depth=depth,
                ties=ties,
                draws=draws,
                resamples=resamples,
                seed=seed,
                fast=fast,
            )
        )
    return pd.DataFrame(rows, columns=COLUMNS)


def _judge_rows(
    judge: str,
    runs: Mapping[str, list[pd.DataFrame]],
    labels: pd.DataFrame,
    human: pd.DataFrame,
    needed: pd.MultiIndex,
    thresholds: tuple[int, int],
    query_ids: list[str],
    *,
    k: int,
    measure: str,
    depth: int | None,
    ties: str,
    draws: int,
    resamples: int,
    seed: int,
    fast: bool = True,
) -> list[dict]:
    labels = labels[["query_id", "doc_id", "relevance"]].astype({"query_id": str, "doc_id": str})
    labels = labels.drop_duplicates(["query_id", "doc_id"], keep="last").reset_index(drop=True)
    keys = pd.MultiIndex.from_frame(labels[["query_id", "doc_id"]])
    grades = labels["relevance"].to_numpy(dtype=float)
    systems = list(runs)
    prepared = {s: [prepare(r, k, keys, needed, depth, ties) for r in draws_] for s, draws_ in runs.items()}
    names = {s: variant_name(s, judge) for s in systems}

    def variants(these: np.ndarray) -> dict[str, list[pd.DataFrame]]:
        return {names[s]: [rerank(p, these) for p in prepared[s]] for s in systems}

    observed_variants = variants(grades)
    scored = _score({**runs, **observed_variants}, labels, human, thresholds, query_ids, measure, depth, ties)
    over = _over_rating(scored, systems, names)  # query x system
    # the null: the judge's grades permuted among its pairs of the same query and human grade
    null = _null(
        labels,
        grades,
        human,
        prepared,
        systems,
        names,
        runs,
        thresholds,
        query_ids,
        measure,
        depth,
        ties,
        draws,
        seed,
        scored=scored if fast else None,
    )
    rows = []
    for s in systems:
        gain_j = scored.judge[names[s]] - scored.judge[s]
        gain_h = scored.human[names[s]] - scored.human[s]
        row = {
            "judge": judge,
            "system": s,
            "variant": names[s],
            "k": k,
            "queries": len(query_ids),
            "top_k_pairs": sum(p.top_k_pairs for p in prepared[s]),
            "unlabelled": sum(p.unlabelled for p in prepared[s]),
            "unjudged": sum(p.unjudged for p in prepared[s]),
            "queries_reordered": int(
                np.mean(
                    [(~same_order(p, v)).sum() for p, v in zip(prepared[s], observed_variants[names[s]], strict=True)]
                )
            ),
            "system_judge": scored.judge[s].mean(),
            "variant_judge": scored.judge[names[s]].mean(),
            "system_human": scored.human[s].mean(),
            "variant_human": scored.human[names[s]].mean(),
        }
        row |= _tested("gain_judge", gain_j, resamples, seed)
        row |= _tested("gain_human", gain_h, resamples, seed)
        row |= _tested("over_rating", over[s], resamples, seed)
        row |= _null_columns(float(over[s].mean()), null[:, systems.index(s)] if len(null) else null)
        rows.append(row)
    total = over.mean(axis=1)  # each query's over-rating, averaged over the systems
    row = {
        "judge": judge,
        "system": ALL,
        "variant": "",
        "k": k,
        "queries": len(query_ids),
        **{c: sum(r[c] for r in rows) for c in ("top_k_pairs", "unlabelled", "unjudged", "queries_reordered")},
        **{
            c: float(np.mean([r[c] for r in rows]))
            for c in ("system_judge", "variant_judge", "system_human", "variant_human")
        },
    }
    row |= _tested(
        "gain_judge",
        (scored.judge[list(names.values())].to_numpy() - scored.judge[systems].to_numpy()).mean(axis=1),
        resamples,
        seed,
    )
    row |= _tested(
        "gain_human",
        (scored.human[list(names.values())].to_numpy() - scored.human[systems].to_numpy()).mean(axis=1),
        resamples,
        seed,
    )
    row |= _tested("over_rating", total, resamples, seed)
    row |= _null_columns(float(total.mean()), null.mean(axis=1) if len(null) else null)
    row |= _top_taus(scored, [*systems, *names.values()], resamples, seed)
    rows.append(row)
    return rows


def _over_rating(scored: Scored, systems: list[str], names: Mapping[str, str]) -> pd.DataFrame:
    """query x system: (variant - system under the judge) - (variant - system under the humans)."""
    variants = [names[s] for s in systems]
    gain_j = scored.judge[variants].to_numpy() - scored.judge[systems].to_numpy()
    gain_h = scored.human[variants].to_numpy() - scored.human[systems].to_numpy()
    return pd.DataFrame(gain_j - gain_h, index=scored.judge.index, columns=systems)


def _tested(name: str, values, resamples: int, seed: int) -> dict[str, float]:
    """The mean over queries and its 95% cluster-bootstrap interval."""
    test = query_mean_test(np.asarray(values, dtype=float), resamples=resamples, seed=seed)
    return {name: test["mean"], f"{name}_ci_low": test["ci_low"], f"{name}_ci_high": test["ci_high"]}


def _null_columns(observed: float, null: np.ndarray) -> dict[str, float]:
    """The null's mean, sd and skewness, the excess over its mean, the one-sided p from the normal
    approximation of the null (``p``: 1 - Phi((observed - mean) / sd)) and the Monte Carlo one
    (``p_permutation``: add-one, Phipson & Smyth 2010). A null without spread (a judge whose
    permuted grades give one over-rating, as a copy of the humans does) has the Monte Carlo p."""
    if not len(null):
        return {
            "null_mean": math.nan,
            "null_sd": math.nan,
            "null_skew": math.nan,
            "excess": math.nan,
            "p": math.nan,
            "p_permutation": math.nan,
            "draws": 0,
        }
    from scipy.stats import norm, skew

    mean = float(null.mean())
    sd = float(null.std(ddof=1)) if len(null) > 1 else math.nan
    hits = int((null >= observed - 1e-12).sum())
    permutation = (1 + hits) / (1 + len(null))
    spread = sd > 1e-12  # NaN: False
    return {
        "null_mean": mean,
        "null_sd": sd,
        "null_skew": float(skew(null, bias=False)) if spread and len(null) > 2 else math.nan,
        "excess": observed - mean,
        "p": float(norm.sf((observed - mean) / sd)) if spread else permutation,
        "p_permutation": permutation,
        "draws": len(null),
    }


def _null(
    labels: pd.DataFrame,
    grades: np.ndarray,
    human: pd.DataFrame,
    prepared: Mapping[str, list[TopK]],
    systems: list[str],
    names: Mapping[str, str],
    runs: Mapping[str, list[pd.DataFrame]],
    thresholds: tuple[int, int],
    query_ids: list[str],
    measure: str,
    depth: int | None,
    ties: str,
    draws: int,
    seed: int,
    *,
    scored: Scored | None = None,
) -> np.ndarray:
    """(draws, systems): each system's mean over-rating under the judge's grades permuted within
    (query, human grade) blocks (a pair without a human grade: a block of its own query's).

    Computed by :class:`FastNull` where it computes the measure and its scores of the judge's own
    grades equal ``scored`` (the evaluation path's, to 1e-9 on every query, system and variant):
    then the same statistic, drawn from the same permutations. Else (another measure, a run whose
    order pytrec_eval reads otherwise, no ``scored`` given) every draw's variants are scored by the
    evaluation path."""
    if draws <= 0 or not len(grades):
        return np.empty((0, len(systems)))
    by_pair = human.drop_duplicates(["query_id", "doc_id"], keep="last").set_index(["query_id", "doc_id"])["relevance"]
    grade_h = by_pair.reindex(pd.MultiIndex.from_frame(labels[["query_id", "doc_id"]])).fillna(-1).to_numpy()
    codes = pd.factorize(pd.MultiIndex.from_arrays([labels["query_id"].to_numpy(), grade_h]))[0]
    fast = _fast_null(prepared, systems, names, labels, grades, human, query_ids, measure, scored)
    if fast is not None:
        found = np.empty((draws, len(systems)))
        b = 0
        for order, drawn in block_permutations(codes, draws, seed=seed):
            permuted = np.empty((len(drawn), len(grades)))
            permuted[:, order] = grades[drawn]
            levels = np.empty((len(drawn), len(grades)), dtype=np.int64)
            levels[:, order] = fast.codes[drawn]
            found[b : b + len(drawn)] = fast.over_rating(permuted, levels)
            b += len(drawn)
        return found
    return _null_evaluated(
        labels,
        grades,
        human,
        codes,
        prepared,
        systems,
        names,
        runs,
        thresholds,
        query_ids,
        measure,
        depth,
        ties,
        draws,
        seed,
    )


def _fast_null(
    prepared: Mapping[str, list[TopK]],
    systems: list[str],
    names: Mapping[str, str],
    labels: pd.DataFrame,
    grades: np.ndarray,
    human: pd.DataFrame,
    query_ids: list[str],
    measure: str,
    scored: Scored | None,
) -> FastNull | None:
    """A :class:`FastNull` of this judge when it computes ``measure`` on these grades (none
    negative) and reproduces ``scored`` (the evaluation path's per-query scores of the systems and
    their variants under the judge and the humans, to 1e-9); else None (logged)."""
    spec = fast_measure(measure)
    if spec is None or scored is None:
        return None
    if (grades < 0).any() or (human["relevance"].to_numpy(float) < 0).any():
        return None
    fast = FastNull(prepared, systems, labels, grades, human, query_ids, *spec)
    found = fast.observed()
    for s in systems:
        expected = np.column_stack(
            [scored.judge[s], scored.judge[names[s]], scored.human[s], scored.human[names[s]]]
        ).astype(float)
        gap = float(np.abs(found[s] - expected).max()) if expected.size else 0.0
        if not gap <= 1e-9:
            log.warning(
                "the reranked null's numpy scores differ from the evaluation's by %.3g for %s; its draws are "
                "scored by the evaluation path instead (slower)",
                gap,
                s,
            )
            return None
    return fast


def _null_evaluated(
    labels: pd.DataFrame,
    grades: np.ndarray,
    human: pd.DataFrame,
    codes: np.ndarray,
    prepared: Mapping[str, list[TopK]],
    systems: list[str],
    names: Mapping[str, str],
    runs: Mapping[str, list[pd.DataFrame]],
    thresholds: tuple[int, int],
    query_ids: list[str],
    measure: str,
    depth: int | None,
    ties: str,
    draws: int,
    seed: int,
) -> np.ndarray:
    """:func:`_null` with every draw's variants scored by the evaluation path (pytrec_eval)."""
    # the systems under the humans do not move with the judge's grades: scored once; the systems'
    # runs cut at the depth and coded once for every draw (as evaluate_systems_under cuts them)
    fixed = _score(runs, labels, human, thresholds, query_ids, measure, depth, ties).human[systems].to_numpy()
    ready = prepare_runs(runs, query_ids, depth=depth, ties=ties)
    found = np.empty((draws, len(systems)))
    b = 0
    for order, drawn in block_permutations(codes, draws, seed=seed):
        for row in drawn:
            permuted = np.empty_like(grades)
            permuted[order] = grades[row]
            judged = labels.assign(relevance=permuted.astype(int))
            these = {names[s]: [rerank(p, permuted) for p in prepared[s]] for s in systems}
            system_j = evaluate_prepared(ready, {"judge": judged}, {"judge": thresholds[0]}, measure=measure)["judge"]
            variants = evaluate_systems_under(
                these,
                {"judge": judged, "human": human},
                {"judge": thresholds[0], "human": thresholds[1]},
                query_ids,
                measure=measure,
                depth=depth,
                ties=ties,
            )
            gain_j = (
                _wide(variants["judge"], list(these), query_ids).to_numpy()
                - _wide(system_j, systems, query_ids).to_numpy()
            )
            gain_h = _wide(variants["human"], list(these), query_ids).to_numpy() - fixed
            found[b] = (gain_j - gain_h).mean(axis=0)
            b += 1
    return found


def _top_taus(scored: Scored, columns: list[str], resamples: int, seed: int) -> dict[str, float]:
    """Kendall's tau between the judge's and the humans' orderings of the systems and their
    variants, on the humans' top half and top :data:`TOP` (by ``human@pool``), each with its 95%
    bootstrap interval over queries (the same top, the means over the resampled queries)."""
    human = scored.human[columns].to_numpy(dtype=float)
    judge = scored.judge[columns].to_numpy(dtype=float)
    means = human.mean(axis=0)
    order = np.argsort(-means, kind="stable")
    out: dict[str, float] = {}
    times = query_resamples(len(human), resamples, seed) if len(human) >= 2 else None
    for name, size in (("tau_top_half", top_k(list(means))), ("tau_top5", min(TOP, len(columns)))):
        picked = order[:size]
        out[name.replace("tau_", "")] = size
        out[name] = kendall_tau(means[picked], judge.mean(axis=0)[picked]) if size >= 2 else math.nan
        if times is None or size < 2:
            out[f"{name}_ci_low"] = out[f"{name}_ci_high"] = math.nan
            continue
        draws = kendall_tau_rows(times @ human[:, picked] / len(human), times @ judge[:, picked] / len(human))
        found = interval(draws)
        out[f"{name}_ci_low"], out[f"{name}_ci_high"] = found.low, found.high
    return out


# ----------------------------------------------------------------------------- the audit, declared
# What the workflow generates from (voirdire.audits.registry): the audits job calls the computation
# once per dataset, writes the table and draws the figure, the report files them, the verdict asks
# the question.

TITLE = (
    "Judge-reranked systems: each of your systems' top k re-sorted by the judge's grade, its gain under "
    "the judge and under human@pool (95% cluster-bootstrap CIs over queries); over_rating = gain under the "
    "judge - gain under the humans, which any noisy judge shows (it sorts by its own noise); p: one-sided, "
    "against the judge's own noise (its grades permuted among pairs of the same query and human grade)"
)


def _chart(table: pd.DataFrame, png: str) -> None:
    from .figures import reranked_chart  # matplotlib: only where the figure is drawn

    reranked_chart(table, png)


def _check_k(config: Mapping) -> None:
    """A k beyond the evaluation depth: a config error naming ``audits.reranked.k``, before any job."""
    k = config.get("audits", {}).get("reranked", {}).get("k")
    if k is not None:
        resolve_k(k, None, config["evaluation"].get("depth") or config["bm25"]["depth"])


@audit(
    "reranked",
    tables=[
        Table(
            "reranked",
            TITLE,
            ["dataset", *COLUMNS],
            view=[
                "judge",
                "system",
                "k",
                IntervalCell("gain_judge", "gain_judge", "gain_judge_ci_low", "gain_judge_ci_high"),
                IntervalCell("gain_human", "gain_human", "gain_human_ci_low", "gain_human_ci_high"),
                IntervalCell("over_rating", "over_rating", "over_rating_ci_low", "over_rating_ci_high"),
                "null_mean",
                "excess",
                "p",
                "unlabelled",
                IntervalCell("tau_top_half", "tau_top_half", "tau_top_half_ci_low", "tau_top_half_ci_high"),
                IntervalCell("tau_top5", "tau_top5", "tau_top5_ci_low", "tau_top5_ci_high"),
            ],
            empty="reranks your own systems (oracles and swaps left out) by each judge's grade",
            counts=["k", "unlabelled"],
            first=("each judge over all your systems", lambda rows: rows["system"] == ALL),
        )
    ],
    figures=[Figure("reranked", "reranked", _chart, caption="reranked_chart")],
    short="Judge-reranked systems",
    check=_check_k,
    settings={
        "type": "object",
        "default": {},
        "additionalProperties": False,
        "description": "Judge-reranked systems (docs/judge-in-the-loop.md): each of your systems' top k re-sorted by "
        "each judge's grade, scored under the judge and under human@pool",
        "properties": {
            "k": {
                "type": ["integer", "null"],
                "minimum": 1,
                "default": None,
                "description": "the top k of each query each system has re-sorted by the judge's grade (equal grades "
                "in the system's order, the rest of the run unchanged); default: the primary measure's cutoff (10 for "
                "nDCG@10), else the evaluation depth. At most the evaluation depth (a config error otherwise): the "
                "judges label only the human-judged documents of each system's top depth",
            },
            "draws": {
                "type": "integer",
                "minimum": 19,
                "default": DRAWS,
                "description": "draws of the permutation null behind the question 'would systems that rerank with it "
                "be over-rated?' (the judge's grades permuted among the pairs of the same query and human grade; "
                "seeded by evaluation.seed)",
            },
        },
    },
)
def audit_reranked(context: Context) -> dict[str, pd.DataFrame]:
    """One dataset's ``reranked`` rows: every user system reranked by each judge but the humans."""
    data = context.data
    mine = {s: data.runs[s] for s in context.user if s in data.runs}
    thresholds = {j: data.scale(j).binary_threshold for j in data.judges}
    table = reranked_table(
        mine,
        {j: restrict(data.labels[j], data.pairs) for j in context.judges},
        context.human,
        data.pairs,
        thresholds,
        thresholds[HUMAN],
        list(data.topics),
        k=resolve_k(context.settings.get("k"), context.measure, context.depth),
        measure=context.measure,
        depth=context.depth,
        ties=context.ties,
        draws=int(context.settings.get("draws", DRAWS)),
        seed=context.seed,
    )
    return {"reranked": table}


RERANK_EFFECT = 0.05
"""The over-rating of judge-reranked systems beyond the judge's own noise that matters: 0.05 in the
measure, as a gamed system's gain (gameable)."""


@question(
    "reranking",
    asks="Would systems that rerank with it be over-rated?",
    table="reranked",
    needs=("labels", "runs"),
    rule="each of your systems' top k re-sorted by the judge's grade: flag when the over-rating (its gain "
    "under the judge - its gain under human@pool, the mean over your systems and the queries) exceeds what "
    "the judge's own noise gives, one-sided p from the normal approximation of a permutation null (its grades "
    "permuted among the pairs of the same query and human grade: its leniency per query and its confusion matrix "
    "kept); a noisy judge over-rates "
    "its rerankings by its noise alone (the winner's curse), so the raw over-rating is reported, the excess "
    "flagged; n/a without systems of your own",
    absent="no systems of your own (oracles and swaps left out)",
    effect=RERANK_EFFECT,
    effect_words=f"an over-rating {RERANK_EFFECT} beyond its noise",
)
def _reranking(rows, judge, context):
    found = judge_rows(rows, judge)
    found = found[found["system"].astype(str) == "all"] if len(found) and "system" in found else found.iloc[0:0]
    if not len(found):
        return Cell(NA, reason="no systems of your own to rerank (oracles and swaps left out)")
    row = found.iloc[0].to_dict()
    value, null = number(row, "over_rating"), number(row, "null_mean")
    if math.isnan(value):
        return Cell(NA, reason="no over-rating (no query scored)")
    detail = f"its own noise gives {null:+.3f}, excess {number(row, 'excess'):+.3f}"
    draws = number(row, "draws")
    if not math.isnan(draws) and draws > 0:
        detail += f" (p normal; Monte Carlo p {number(row, 'p_permutation'):.2g} over {int(draws)} draws)"
    unlabelled = number(row, "unlabelled")
    if unlabelled > 0:
        detail += f"; {int(unlabelled)} top-k pairs it did not label kept in place"
    tau = number(row, "tau_top5")
    if not math.isnan(tau):
        detail += f"; tau on the humans' top {int(number(row, 'top5'))} with the variants {tau:+.3f}"
    return Cell(
        PASS,
        value,
        number(row, "over_rating_ci_low"),
        number(row, "over_rating_ci_high"),
        p=number(row, "p"),
        signal=number(row, "excess") > 0,
        se=number(row, "null_sd"),
        detail=detail,
    )
