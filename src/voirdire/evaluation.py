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
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import ir_measures
import pandas as pd
from ir_measures import nDCG
from ir_measures.measures.base import Measure

from .errors import ConfigError
from .formats import trec_eval_order

MEASURE = nDCG(judged_only=True) @ 10
DEFAULT_MEASURES = (str(MEASURE),)

CUT_FIRST = frozenset({"RR"})
"""Measures whose value at cutoff k is, by definition, the measure without a cutoff on the run's
top k: RR@k is 1/rank of the first relevant document among the top k, 0 if there is none."""


def route(measure: Measure) -> tuple[Measure, int | None]:
    """How a measure is computed: (what pytrec_eval computes, the cutoff the run is cut at
    first in trec_eval's order, or None). pytrec_eval computes the measure itself when it
    supports it at its cutoff; an ``RR@k`` is computed as RR on the run's top k. A measure
    neither route computes raises ValueError."""
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


def for_judge(text: str, binary_threshold: int) -> Measure:
    """The measure as computed under a judge: ``rel=`` set to the judge's binary threshold for a
    measure that binarizes, unless the measure names its own."""
    measure = parse_measure(text)
    if "rel" in measure.SUPPORTED_PARAMS and "rel" not in measure.params:
        measure = measure(rel=binary_threshold)
    return measure


def cut(run: pd.DataFrame, depth: int) -> pd.DataFrame:
    """The top ``depth`` of every query in trec_eval's order (the part a judge labels)."""
    return trec_eval_order(run).groupby("query_id", sort=False).head(depth)


def judged_only(run: pd.DataFrame, qrels: pd.DataFrame) -> pd.DataFrame:
    """The documents of a run that ``qrels`` grades for its query, at any grade (trec_eval ``-J``)."""
    keys = pd.MultiIndex.from_frame(qrels[["query_id", "doc_id"]].astype(str))
    return run[pd.MultiIndex.from_frame(run[["query_id", "doc_id"]].astype(str)).isin(keys)]


def per_query_scores(
    run: pd.DataFrame,
    qrels: pd.DataFrame,
    query_ids: Iterable[str],
    measures: Sequence[str] = DEFAULT_MEASURES,
    *,
    binary_threshold: int = 2,
    depth: int | None = None,
    evaluators: dict | None = None,
) -> pd.DataFrame:
    """Wide table: one row per query in ``query_ids``, one column per measure (as written).

    A query the run does not answer, or with no qrels under this judge, scores 0 (as
    trec_eval ``-c``), so every system is averaged over the same queries. ``depth`` cuts every
    query of the run in trec_eval's order before any measure (the evaluation depth); each
    measure is then computed as :func:`route` says. ``evaluators``: a dict that keeps
    ir_measures' evaluators (the qrels converted once) for further runs scored with the same
    qrels, query ids, measures and threshold (:func:`evaluate_measures` passes one).
    """
    qids = [str(q) for q in query_ids]
    wanted = set(qids)
    run = run[run["query_id"].isin(wanted)]
    if depth is not None:
        run = cut(run, depth)
    qrels = qrels[qrels["query_id"].isin(wanted)]
    routes: dict[tuple[int | None, bool], dict[Measure, list[str]]] = {}
    for text in measures:
        computed, at = route(for_judge(text, binary_threshold))
        judged = at is not None and bool(computed["judged_only"])  # unjudged documents leave before the cut
        routes.setdefault((at, judged), {}).setdefault(computed, []).append(text)
    values: dict[str, dict[str, float]] = {text: {} for text in measures}
    if len(run) and len(qrels):
        qrels = qrels[["query_id", "doc_id", "relevance"]]
        for (at, judged), texts in routes.items():
            ranked = judged_only(run, qrels) if judged else run
            ranked = cut(ranked, at) if at is not None else ranked
            if not len(ranked):
                continue
            key = tuple(texts)
            evaluator = evaluators.get(key) if evaluators is not None else None
            if evaluator is None:  # what ir_measures.pytrec_eval.iter_calc builds for one run
                evaluator = ir_measures.pytrec_eval.evaluator(list(texts), qrels)
                if evaluators is not None:
                    evaluators[key] = evaluator
            for metric in evaluator.iter_calc(ranked[["query_id", "doc_id", "score"]]):
                for text in texts[metric.measure]:
                    values[text][metric.query_id] = metric.value
    return pd.DataFrame({text: [values[text].get(q, 0.0) for q in qids] for text in measures}, index=qids)


def per_query_ndcg(run: pd.DataFrame, qrels: pd.DataFrame, query_ids: Iterable[str]) -> pd.Series:
    """Judged-only nDCG@10 for each query in ``query_ids`` (the paper's measure)."""
    return per_query_scores(run, qrels, query_ids)[str(MEASURE)].rename(str(MEASURE))


def evaluate_measures(
    runs: Mapping[str, list[pd.DataFrame]],
    qrels: pd.DataFrame,
    query_ids: Iterable[str],
    measures: Sequence[str] = DEFAULT_MEASURES,
    *,
    binary_threshold: int = 2,
    depth: int | None = None,
) -> pd.DataFrame:
    """Long table (measure, system, query_id, value) for every system under one judge.

    A system given several runs (an oracle with random tie-break, one run per draw) scores
    the mean over its draws, per query. No runs: no rows.
    """
    qids = [str(q) for q in query_ids]
    frames = []
    evaluators: dict = {}  # one judge's qrels, converted once for every run
    for system, system_runs in runs.items():
        draws = [per_query_scores(r, qrels, qids, measures, binary_threshold=binary_threshold, depth=depth,
                                  evaluators=evaluators) for r in system_runs]  # fmt: skip
        mean = sum(draws[1:], draws[0]) / len(draws)
        for text in measures:
            frames.append(
                pd.DataFrame({"measure": text, "system": system, "query_id": qids, "value": mean[text].values})
            )
    if not frames:
        return pd.DataFrame({"measure": pd.Series(dtype=str), "system": pd.Series(dtype=str),
                             "query_id": pd.Series(dtype=str), "value": pd.Series(dtype=float)})  # fmt: skip
    return pd.concat(frames, ignore_index=True)


def evaluate_systems(
    runs: Mapping[str, list[pd.DataFrame]],
    qrels: pd.DataFrame,
    query_ids: Iterable[str],
    *,
    measure: str = str(MEASURE),
    binary_threshold: int = 2,
    depth: int | None = None,
) -> pd.DataFrame:
    """Long table (query_id, system, ndcg) for every system under one judge and one measure
    (the primary measure: judged-only nDCG@10 unless configured otherwise)."""
    scores = evaluate_measures(runs, qrels, query_ids, [measure], binary_threshold=binary_threshold, depth=depth)
    return scores.rename(columns={"value": "ndcg"})[["query_id", "system", "ndcg"]]
