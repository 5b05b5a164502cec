"""Per-query scores of every system under one judge, for any ir_measures measure.

The paper's measure, and the default, is judged-only nDCG@10: unjudged documents are removed
from a run before it is cut at 10 (trec_eval ``-J``), gains are linear, and the ideal DCG uses
every qrel of the query (Balog, Metzler & Qin, 2025). Users add measures in ir_measures'
syntax (``evaluation.measures``: ``AP@100``, ``RR@10``, ``P@10``, ...). A binary measure
binarizes at each judge's own threshold (``rel=``) unless the user wrote one: ``AP@100`` is
``AP(rel=2)@100`` under NIST's 0-3 labels and ``AP(rel=1)@100`` under a 0/1 judge.

Every number is trec_eval's, ties included (score descending, then document id descending):
ir_measures computes it with its pytrec_eval backend (:func:`route`). trec_eval has no cutoff
for reciprocal rank, so pytrec_eval would compute ``RR@10`` over the whole run; ``RR@k`` is
computed instead as RR of the run's top k in trec_eval's order, which is its definition (under
``judged_only=True`` the unjudged documents are removed before the cut, as for nDCG). ir_measures' default pipeline
sends ``RR@k`` to its MS MARCO provider, which breaks tied scores by document id *ascending*:
the two agree wherever scores do not tie within a query, and we keep trec_eval's order in
ties, as every other measure has it. A measure neither route computes is a config error.

Ties (``evaluation.ties``): trec_eval reads every score as a single-precision float, so scores
that differ only beyond about seven digits tie there and are ordered by document id descending
(Rank1's 0.9999998215687883 and 0.9999998115390605 do): ``trec_eval``, the default, keeps that
convention (trec_eval's and ir_measures' pytrec_eval numbers); ``exact`` orders by the full
score, ties (equal scores) by document id descending as trec_eval does, which is the order
ir_measures' default RR@k provider reads where scores do not tie exactly. :func:`cut` takes the
setting: under ``exact`` the run is handed on with its scores renumbered n..1 down each query in
that order, so pytrec_eval, single precision and all, keeps it.

The workflow computes every score once per dataset and provenance (:func:`scores_table`: every
system under every judge and under ``human@pool``, every measure); every table reads it back,
one measure of it with :func:`primary_scores`.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, Mapping, Sequence

import ir_measures
import numpy as np
import pandas as pd
from ir_measures import nDCG
from ir_measures.measures.base import Measure

from .errors import ConfigError
from .formats import trec_eval_order
from .judges import HUMAN, POOL, restrict
from .parallel import in_processes

MEASURE = nDCG(judged_only=True) @ 10
DEFAULT_MEASURES = (str(MEASURE),)

SCORE_COLUMNS = ["dataset", "judge", "measure", "system", "query_id", "value"]
"""The scores table of one dataset and provenance (:func:`scores_table`), long."""
PRIMARY_COLUMNS = ["dataset", "judge", "query_id", "system", "ndcg"]
"""One measure's per-query scores (:func:`primary_scores`): the column ``ndcg`` holds the value
whatever the measure."""

TIES = ("trec_eval", "exact")
"""How scores are ordered (``evaluation.ties``): as trec_eval reads them, at single precision
(then document id descending), or by the full score (then document id descending)."""

CUT_FIRST = frozenset({"RR"})
"""Measures whose value at cutoff k is, by definition, the measure without a cutoff on the run's
top k: RR@k is 1/rank of the first relevant document among the top k, 0 if there is none."""


def route(measure: Measure) -> tuple[Measure, int | None]:
    """How a measure is computed: (what pytrec_eval computes, the cutoff the run is cut at
    first in trec_eval's order, or None). pytrec_eval computes the measure itself when it
    supports it at its cutoff; an ``RR@k`` is computed as RR on the run's top k. A measure
    neither route computes raises ValueError.

    A measure pytrec_eval computes at its cutoff is handed the whole run, never a top k cut
    here: trec_eval ranks by the score as a single-precision float (then document id), so
    scores that differ only beyond float precision (0.99999988206414 and 0.99999988206413,
    as LLM rerankers' probabilities do) tie for it and may swap across the cutoff."""
    if ir_measures.pytrec_eval.supports(measure):
        return measure, None
    cutoff = measure.params.get("cutoff")
    if measure.NAME in CUT_FIRST and isinstance(cutoff, int) and cutoff > 0:
        whole = type(measure)(**{k: v for k, v in measure.params.items() if k != "cutoff"})
        if ir_measures.pytrec_eval.supports(whole):
            return whole, cutoff
    raise ValueError(f"neither pytrec_eval nor a cut of the run computes {measure}")


def parse_measure(text: str, *, key: str | None = None) -> Measure:
    """One measure in ir_measures' syntax; an unparsable one, or one no :func:`route` computes,
    is a config error naming ``key``."""
    try:
        measure = ir_measures.parse_measure(str(text))
    except (ValueError, NameError, SyntaxError, TypeError, AttributeError) as exc:
        raise ConfigError(f"ir_measures cannot parse the measure {text!r} ({exc})", key=key) from None
    try:
        computed, _ = route(measure)
        ir_measures.pytrec_eval.evaluator([computed], {"q": {"d": 1}})
    except (ValueError, KeyError, NotImplementedError, TypeError, AssertionError) as exc:
        raise ConfigError(
            f"the measure {text!r} cannot be computed as trec_eval computes it ({exc}); voirdire computes "
            "pytrec_eval's measures (nDCG, AP, P, R, Success, ... at their cutoffs) and RR@k",
            key=key,
        ) from None
    return measure


@functools.cache
def for_judge(text: str, binary_threshold: int) -> Measure:
    """The measure as computed under a judge: ``rel=`` set to the judge's binary threshold for a
    measure that binarizes, unless the measure names its own. Kept once made: each run scored
    would otherwise parse (and check with a throwaway evaluator) every measure again."""
    measure = parse_measure(text)
    if "rel" in measure.SUPPORTED_PARAMS and "rel" not in measure.params:
        measure = measure(rel=binary_threshold)
    return measure


def exact_order(run: pd.DataFrame) -> pd.DataFrame:
    """The run in trec_eval's order at full precision (score descending, then document id
    descending) with its scores renumbered n..1 down each query: any reader, pytrec_eval's single
    precision included, keeps that order (n below 2**24, which a float32 holds exactly)."""
    ordered = trec_eval_order(run).copy()
    position = ordered.groupby("query_id", sort=False).cumcount().to_numpy()
    sizes = ordered.groupby("query_id", sort=False)["doc_id"].transform("size").to_numpy()
    ordered["score"] = (sizes - position).astype(float)
    return ordered


def check_ties(ties: str) -> None:
    """A ``ties`` setting that is not one of :data:`TIES` is a ValueError."""
    if ties not in TIES:
        raise ValueError(f"ties must be one of {TIES}, got {ties!r}")


def cut(run: pd.DataFrame, depth: int, ties: str = "trec_eval") -> pd.DataFrame:
    """The top ``depth`` of every query in trec_eval's order (the part a judge labels). ``ties``
    (:data:`TIES`): ``exact`` hands the top on in :func:`exact_order` (scores renumbered, so that
    pytrec_eval reads the full-precision order); ``trec_eval`` with the run's own scores, which
    pytrec_eval reads at single precision."""
    check_ties(ties)
    ordered = exact_order(run) if ties == "exact" else trec_eval_order(run)
    return ordered.groupby("query_id", sort=False).head(depth)


def judged_only(run: pd.DataFrame, qrels: pd.DataFrame) -> pd.DataFrame:
    """The documents of a run that ``qrels`` grades for its query, at any grade (trec_eval ``-J``)."""
    keys = pd.MultiIndex.from_frame(qrels[["query_id", "doc_id"]].astype(str))
    return run[pd.MultiIndex.from_frame(run[["query_id", "doc_id"]].astype(str)).isin(keys)]


def run_dict(run: pd.DataFrame) -> dict[str, dict[str, float]]:
    """A run as pytrec_eval reads it (query -> document -> score): the dict ir_measures builds from
    a DataFrame row by row (the same keys in the same order; a later line of a pair wins), built
    from whole columns, many times faster on runs of thousands of lines."""
    return _nested(run["query_id"].tolist(), run["doc_id"].tolist(), run["score"].tolist())


def qrels_dict(qrels: pd.DataFrame) -> dict[str, dict[str, int]]:
    """Qrels as pytrec_eval reads them (query -> document -> grade): the dict ir_measures builds
    from a DataFrame row by row, built from whole columns (as :func:`run_dict`)."""
    return _nested(qrels["query_id"].tolist(), qrels["doc_id"].tolist(), qrels["relevance"].tolist())


def _calc(evaluator, texts: Mapping[Measure, list[str]], run: dict) -> Iterator[tuple[list[str], str, float]]:
    """What ``evaluator.iter_calc(run)`` yields, as (the measure's texts in ``texts``, query,
    value): the values pytrec_eval computes, then the measure's default for every query of the
    qrels it returned nothing for, as ``iter_calc`` adds them. Without iter_calc's bookkeeping,
    which hashes a measure (its repr) for every value: measures are matched by identity (an
    equal object the evaluator hands back, by equality)."""
    names = {id(measure): found for measure, found in texts.items()}
    seen: dict[int, set[str]] = {id(measure): set() for measure in texts}
    for metric in evaluator._iter_calc(run):
        key = id(metric.measure)
        if key not in names:  # an equal object, not ours
            key = id(next(m for m in texts if m == metric.measure))
        seen[key].add(metric.query_id)
        yield names[key], metric.query_id, metric.value
    for measure in texts:
        for query_id in sorted(set(evaluator.qrel_qids) - seen[id(measure)]):
            yield names[id(measure)], query_id, measure.DEFAULT


def _within_query(queries: np.ndarray) -> np.ndarray:
    """Each line's position within its query (0 first), for lines whose queries are contiguous."""
    index = np.arange(len(queries))
    if not len(queries):
        return index
    starts = np.flatnonzero(np.r_[True, queries[1:] != queries[:-1]])
    return index - np.repeat(starts, np.diff(np.r_[starts, len(queries)]))


class _Run:
    """One run as it is scored: its lines for the scored queries, cut at the evaluation depth (then
    in trec_eval's order), as whole columns, and where each line comes in trec_eval's order. The
    pytrec_eval dict of a cutoff that does not depend on the judge is kept once made: a run scored
    under twenty judges is cut and converted once, not twenty times."""

    def __init__(self, run: pd.DataFrame, wanted: set[str], depth: int | None, ties: str = "trec_eval") -> None:
        run = run[run["query_id"].isin(wanted)]
        if depth is not None:
            run = cut(run, depth, ties)
        elif ties == "exact":
            run = exact_order(run)
        self.query = run["query_id"].to_numpy(dtype=object)
        self.doc = run["doc_id"].to_numpy(dtype=object)
        self.score = run["score"].to_numpy()
        # the lines in trec_eval's order, for a measure cut first at its own cutoff
        self.order = np.arange(len(run)) if depth is not None else _in_trec_eval_order(run)
        self.pairs = np.empty(0, dtype=np.int64)  # the (query, document) codes; set by _Runs
        self.dicts: dict[int | None, dict] = {}

    def lines(self, at: int | None, judged: np.ndarray | None) -> np.ndarray:
        """The lines pytrec_eval is handed for a measure cut first at ``at`` (None: the run as it
        is), of the ``judged`` pairs only (sorted codes) unless None: unjudged lines leave before
        the cut."""
        lines = np.arange(len(self.query)) if at is None else self.order
        if judged is not None:
            pairs = self.pairs[lines]
            found = np.searchsorted(judged, pairs)
            lines = lines[(found < len(judged)) & (judged[np.minimum(found, len(judged) - 1)] == pairs)]
        if at is not None:
            lines = lines[_within_query(self.query[lines]) < at]
        return lines

    def as_dict(self, lines: np.ndarray) -> dict[str, dict[str, float]]:
        """These lines as pytrec_eval reads a run (:func:`run_dict`'s dict)."""
        return _nested(self.query[lines].tolist(), self.doc[lines].tolist(), self.score[lines].tolist())


def _in_trec_eval_order(run: pd.DataFrame) -> np.ndarray:
    """The positions of a run's lines in trec_eval's order (:func:`voirdire.formats.trec_eval_order`)."""
    return trec_eval_order(run.assign(_line=np.arange(len(run))))["_line"].to_numpy()


def _as_text(values) -> np.ndarray:
    """Ids as text, an object array (the same strings for ids read as text)."""
    return pd.Series(values, dtype=object).astype(str).to_numpy(dtype=object)


def _nested(queries: list, docs: list, values: list) -> dict:
    """query -> document -> value in the lines' order (a later line of a pair wins)."""
    found: dict = {}
    for query, doc, value in zip(queries, docs, values, strict=True):
        inner = found.get(query)
        if inner is None:
            inner = found[query] = {}
        inner[doc] = value
    return found


class _Runs:
    """Every system's runs (an oracle's several draws) prepared once to be scored under one judge
    or many: each run filtered to the scored queries and cut at the evaluation depth once, its
    (query, document) pairs coded as integers so that a judge's judged-only cut is one array
    lookup, its judge-free pytrec_eval dicts kept."""

    def __init__(
        self,
        runs: Mapping[str, list[pd.DataFrame]],
        query_ids: Iterable[str],
        depth: int | None,
        ties: str = "trec_eval",
    ) -> None:
        check_ties(ties)
        self.qids = [str(q) for q in query_ids]
        wanted = set(self.qids)
        self.systems = {system: [_Run(run, wanted, depth, ties) for run in draws] for system, draws in runs.items()}
        every = [run for draws in self.systems.values() for run in draws]
        self._queries = pd.Index(pd.unique(np.array(self.qids, dtype=object)))
        docs = [_as_text(run.doc) for run in every]
        self._docs = pd.Index(pd.unique(np.concatenate(docs))) if every else pd.Index([])
        for run, doc in zip(every, docs, strict=True):
            run.pairs = self._codes(_as_text(run.query), doc)

    def _codes(self, queries: np.ndarray, docs: np.ndarray) -> np.ndarray:
        """Each (query, document) pair as one integer, from ids as text (:func:`_as_text`: as
        :func:`judged_only` compares them); a pair of a query not scored or a document in no
        run: -1."""
        query = self._queries.get_indexer(queries).astype(np.int64)
        doc = self._docs.get_indexer(docs).astype(np.int64)
        return np.where((query >= 0) & (doc >= 0), query * len(self._docs) + doc, -1)

    def values(self, qrels: pd.DataFrame, measures: Sequence[str], binary_threshold: int) -> dict:
        """system -> measure (as written) -> its value for each query of ``qids``, the mean over
        the system's draws. A query a run does not answer, or without qrels, scores 0 (as
        trec_eval ``-c``)."""
        qrels = qrels[qrels["query_id"].isin(set(self.qids))][["query_id", "doc_id", "relevance"]]
        routes: dict[tuple[int | None, bool], dict[Measure, list[str]]] = {}
        for text in measures:
            computed, at = route(for_judge(text, binary_threshold))
            judged = at is not None and bool(computed["judged_only"])  # unjudged documents leave before the cut
            routes.setdefault((at, judged), {}).setdefault(computed, []).append(text)
        judged_pairs = None
        if any(judged for _, judged in routes):
            codes = self._codes(_as_text(qrels["query_id"]), _as_text(qrels["doc_id"]))
            judged_pairs = np.unique(codes[codes >= 0])
        evaluators: dict = {}  # this judge's qrels, converted once for every run
        found: dict[str, dict[str, np.ndarray]] = {}
        for system, draws in self.systems.items():
            scored = []
            for run in draws:
                values: dict[str, dict[str, float]] = {text: {} for text in measures}
                if len(run.query) and len(qrels):
                    for (at, judged), texts in routes.items():
                        if judged:
                            handed = run.as_dict(run.lines(at, judged_pairs))
                        elif (handed := run.dicts.get(at)) is None:
                            handed = run.dicts[at] = run.as_dict(run.lines(at, None))
                        if not handed:
                            continue
                        key = tuple(texts)
                        if (evaluator := evaluators.get(key)) is None:  # what ir_measures' iter_calc builds
                            evaluator = evaluators[key] = ir_measures.pytrec_eval.evaluator(
                                list(texts), qrels_dict(qrels)
                            )
                        for names, query_id, value in _calc(evaluator, texts, handed):
                            for text in names:
                                values[text][query_id] = value
                scored.append({text: np.array([values[text].get(q, 0.0) for q in self.qids]) for text in measures})
            # the mean of the draws as a sum of DataFrames computes it: ((d0 + d1) + d2) / 3
            found[system] = {
                text: sum((s[text] for s in scored[1:]), scored[0][text]) / len(scored) for text in measures
            }
        return found


def per_query_scores(
    run: pd.DataFrame,
    qrels: pd.DataFrame,
    query_ids: Iterable[str],
    measures: Sequence[str] = DEFAULT_MEASURES,
    *,
    binary_threshold: int = 2,
    depth: int | None = None,
    ties: str = "trec_eval",
) -> pd.DataFrame:
    """Wide table: one row per query in ``query_ids``, one column per measure (as written).

    A query the run does not answer, or with no qrels under this judge, scores 0 (as
    trec_eval ``-c``), so every system is averaged over the same queries. ``depth`` cuts every
    query of the run in trec_eval's order before any measure (the evaluation depth); each
    measure is then computed as :func:`route` says, its scores ordered as ``ties`` says
    (:data:`TIES`).
    """
    prepared = _Runs({"": [run]}, query_ids, depth, ties)
    values = prepared.values(qrels, measures, binary_threshold)[""]
    return pd.DataFrame({text: values[text] for text in measures}, index=prepared.qids)


def per_query_ndcg(run: pd.DataFrame, qrels: pd.DataFrame, query_ids: Iterable[str]) -> pd.Series:
    """Judged-only nDCG@10 for each query in ``query_ids`` (the paper's measure)."""
    return per_query_scores(run, qrels, query_ids)[str(MEASURE)].rename(str(MEASURE))


def _long(prepared: _Runs, qrels: pd.DataFrame, measures: Sequence[str], binary_threshold: int) -> pd.DataFrame:
    """The long table (measure, system, query_id, value) of prepared runs under one judge."""
    found = prepared.values(qrels, measures, binary_threshold)
    if not found:
        return pd.DataFrame(
            {
                "measure": pd.Series(dtype=str),
                "system": pd.Series(dtype=str),
                "query_id": pd.Series(dtype=str),
                "value": pd.Series(dtype=float),
            }
        )
    blocks = [(system, text) for system in found for text in measures]
    size = len(prepared.qids)
    return pd.DataFrame(
        {
            "measure": np.repeat(np.array([text for _, text in blocks], dtype=object), size),
            "system": np.repeat(np.array([system for system, _ in blocks], dtype=object), size),
            "query_id": np.tile(np.array(prepared.qids, dtype=object), len(blocks)),
            "value": np.concatenate([found[system][text] for system, text in blocks]).astype(float),
        }
    )


def evaluate_measures(
    runs: Mapping[str, list[pd.DataFrame]],
    qrels: pd.DataFrame,
    query_ids: Iterable[str],
    measures: Sequence[str] = DEFAULT_MEASURES,
    *,
    binary_threshold: int = 2,
    depth: int | None = None,
    ties: str = "trec_eval",
) -> pd.DataFrame:
    """Long table (measure, system, query_id, value) for every system under one judge.

    A system given several runs (an oracle with random tie-break, one run per draw) scores
    the mean over its draws, per query. No runs: no rows.
    """
    return _long(_Runs(runs, query_ids, depth, ties), qrels, measures, binary_threshold)


def evaluate_systems(
    runs: Mapping[str, list[pd.DataFrame]],
    qrels: pd.DataFrame,
    query_ids: Iterable[str],
    *,
    measure: str = str(MEASURE),
    binary_threshold: int = 2,
    depth: int | None = None,
    ties: str = "trec_eval",
) -> pd.DataFrame:
    """Long table (query_id, system, ndcg) for every system under one judge and one measure
    (the primary measure: judged-only nDCG@10 unless configured otherwise)."""
    under = evaluate_systems_under(
        runs, {"": qrels}, {"": binary_threshold}, query_ids, measure=measure, depth=depth, ties=ties
    )
    return under[""]


def evaluate_systems_under(
    runs: Mapping[str, list[pd.DataFrame]],
    labels: Mapping[str, pd.DataFrame],
    thresholds: Mapping[str, int],
    query_ids: Iterable[str],
    *,
    measure: str = str(MEASURE),
    depth: int | None = None,
    ties: str = "trec_eval",
) -> dict[str, pd.DataFrame]:
    """:func:`evaluate_systems` of the same runs under each of several label sets (name -> its
    qrels, binarized at ``thresholds[name]``): name -> its long table (query_id, system, ndcg).
    Every run is cut and coded once for all of them."""
    return evaluate_prepared(prepare_runs(runs, query_ids, depth=depth, ties=ties), labels, thresholds, measure=measure)


def prepare_runs(
    runs: Mapping[str, list[pd.DataFrame]],
    query_ids: Iterable[str],
    *,
    depth: int | None = None,
    ties: str = "trec_eval",
) -> _Runs:
    """The runs filtered to ``query_ids``, cut at ``depth`` and coded once, for
    :func:`evaluate_prepared` to score under label sets given later (a permutation null scores the
    same systems under many)."""
    return _Runs(runs, query_ids, depth, ties)


def evaluate_prepared(
    prepared: _Runs,
    labels: Mapping[str, pd.DataFrame],
    thresholds: Mapping[str, int],
    *,
    measure: str = str(MEASURE),
) -> dict[str, pd.DataFrame]:
    """:func:`evaluate_systems_under` of runs :func:`prepare_runs` prepared."""
    return {
        name: _long(prepared, qrels, [measure], thresholds[name]).rename(columns={"value": "ndcg"})[
            ["query_id", "system", "ndcg"]
        ]
        for name, qrels in labels.items()
    }


def scores_table(
    dataset: str,
    runs: Mapping[str, list[pd.DataFrame]],
    labels: Mapping[str, pd.DataFrame],
    thresholds: Mapping[str, int],
    pairs: pd.DataFrame,
    query_ids: Iterable[str],
    measures: Sequence[str] = DEFAULT_MEASURES,
    *,
    depth: int | None = None,
    processes: int = 1,
    ties: str = "trec_eval",
) -> pd.DataFrame:
    """Every system under every judge for every measure, and under ``human@pool``: the long
    table (dataset, judge, measure, system, query_id, value) of one dataset and provenance.

    ``labels`` maps each judge (the humans first) to its qrels, ``thresholds`` each judge to its
    binary threshold. Each judge's rows are :func:`evaluate_measures` of its labels, in the order
    of ``labels``; ``human@pool``'s (last) are the human labels restricted to ``pairs`` (the
    needed pairs), at the humans' threshold. No runs: no rows. ``processes``: the judges are
    scored in that many processes (:func:`voirdire.parallel.in_processes`; the same table).
    ``ties``: how scores are ordered (:data:`TIES`; ``evaluation.ties``).
    """
    prepared = _Runs(runs, query_ids, depth, ties)  # every run cut and coded once, for every judge

    def under(judge_qrels: tuple[str, pd.DataFrame]) -> pd.DataFrame:
        judge, qrels = judge_qrels
        scores = _long(prepared, qrels, measures, thresholds[HUMAN if judge == POOL else judge])
        scores.insert(0, "judge", judge)
        scores.insert(0, "dataset", dataset)
        return scores

    frames = in_processes(under, [*labels.items(), (POOL, restrict(labels[HUMAN], pairs))], processes)
    return pd.concat(frames, ignore_index=True)[SCORE_COLUMNS]


def read_scores(paths: Iterable) -> pd.DataFrame:
    """The scores tables at ``paths`` (:func:`scores_table`'s, as written), one after another;
    none: an empty table with the same columns."""
    frames = [pd.read_parquet(path) for path in paths]
    if not frames:
        return pd.DataFrame({column: pd.Series(dtype=float if column == "value" else str) for column in SCORE_COLUMNS})
    return pd.concat(frames, ignore_index=True)


def primary_scores(scores: pd.DataFrame, measure: str, judges: Sequence[str] | None = None) -> pd.DataFrame:
    """One measure's per-query scores from a scores table, as the audits, figures and probes read
    them: dataset, judge, query_id, system, ``ndcg`` (the column keeps that name whatever the
    measure). ``judges``: those judges only, in that order; by default every judge but
    ``human@pool``, in the table's order."""
    frame = scores[scores["measure"] == measure]
    if judges is None:
        frame = frame[frame["judge"] != POOL]
    else:
        order = {judge: rank for rank, judge in enumerate(judges)}
        frame = frame[frame["judge"].isin(list(order))]
        frame = frame.sort_values("judge", key=lambda column: column.map(order), kind="stable")
    return frame.rename(columns={"value": "ndcg"})[PRIMARY_COLUMNS].reset_index(drop=True)
