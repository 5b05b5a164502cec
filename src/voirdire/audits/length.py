"""Length and Simpson's paradox (as in a three-family judge-panel study, 2026): does a judge reward longer passages?

For every pair both the human and the judge labelled: the passage length in words, the
judge's grade and the human grade. Long passages may be more often relevant, so the overall
length-grade correlation mixes relevance with length. The bias is the correlation *within*
each human grade (length should not move the judge's grade when relevance is fixed); the
overall one can even have the opposite sign (Simpson's paradox). Spearman correlations
(scipy).

The within-grade figure is a stratified Spearman correlation on *percentile* ranks within
query x grade blocks: lengths and judge grades are ranked within the pairs of one query and
one human grade, divided by the block's size and centred there, then correlated over the
pairs of each grade (``rho_within_human_g``) and over all pairs (``rho_within``). Relevance
is held fixed by the grade and the topic by the query, so a judge that is merely more lenient
on topics whose passages are long shows no length effect; each block weighs about in
proportion to its size (a block of one pair, or one whose lengths or grades all tie, not at
all), where raw centred ranks would weigh it by ``n (n^2 - 1)`` and let the largest drown the
rest. The p-values come from permuting the lengths within the same query x grade blocks
(pairs of one query share a topic, so they are not independent; Good 2005, *Permutation,
Parametric and Bootstrap Tests of Hypotheses*, on stratified permutation tests), two-sided,
with the add-one estimate of Phipson & Smyth (2010): the statistic tested is the one
reported. A judge is flagged as length-biased when that p < ``alpha``.

A pair whose passage has no text (a recorded run's, beyond the candidates whose texts the
workflow holds) has no length: it is left out of every figure here and counted
(``pairs_without_text``; across systems, :func:`top_pairs_without_text`).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Hashable, Iterator, Mapping

import numpy as np
import pandas as pd

from ..evaluation import cut, judged_only, parse_measure
from ..formats import trec_eval_order
from ..questions import INCONCLUSIVE, NA, PASS, Cell, judge_rows, number, question
from ..stats.permutation import block_permutations, permutation_p
from .labels import aligned
from .registry import Context, Figure, Table, audit, chance


def with_lengths(pairs: pd.DataFrame, texts: Mapping[str, str]) -> pd.DataFrame:
    """Aligned pairs (query_id, doc_id, human, judge) with the passage length in words (NaN for
    a passage without a text: :func:`length_bias` and :func:`by_decile` leave it out, counted)."""
    out = pairs.copy()
    words = [len(texts[d].split()) if d in texts else math.nan for d in out["doc_id"]]
    out["words"] = pd.Series(words, index=out.index, dtype=float)
    return out


def _spearman(x: pd.Series, y: pd.Series) -> float:
    if len(x) < 3 or x.nunique() < 2 or y.nunique() < 2:
        return math.nan
    from scipy import stats

    return float(stats.spearmanr(x, y).statistic)


def _percentile_ranks(values: pd.Series, strata: np.ndarray) -> np.ndarray:
    """Average ranks within each stratum, divided by its size and centred: in (-1/2, 1/2)."""
    values = pd.Series(values.to_numpy(), index=range(len(values)))
    groups = values.groupby(strata)
    return ((groups.rank() - 0.5) / groups.transform("size") - 0.5).to_numpy(dtype=float)


def length_bias(pairs: pd.DataFrame, alpha: float = 0.01, *, seed: int = 42, permutations: int = 2000) -> dict:
    """Overall vs within-query-and-human-grade correlation of passage length and judge grade.

    ``pairs``: what :func:`with_lengths` returns (query_id, doc_id, human, judge, words; no
    query_id: one query). Keys: ``pairs``; ``rho_overall`` (Spearman over all pairs); per human
    grade g, ``n_human_g``, ``rho_within_human_g`` (on percentile ranks within that grade's
    query blocks; scipy's Spearman rho of the grade when it holds one query) and
    ``p_within_human_g``; the pooled ``rho_within`` on the same percentile ranks and its
    ``p_within``; ``permutations`` (lengths permuted within query x grade blocks, seeded);
    ``length_biased`` (``p_within`` < ``alpha``) and ``simpson`` (biased, and the overall rho
    has the other sign); ``pairs_without_text``: the pairs left out for want of a length (a
    passage without a text: ``words`` NaN), not in ``pairs``.
    """
    measured = pairs["words"].notna()
    without_text = int((~measured).sum())
    pairs = pairs[measured].reset_index(drop=True)
    row: dict = {"pairs": len(pairs), "pairs_without_text": without_text}
    row["rho_overall"] = _spearman(pairs["words"], pairs["judge"])
    grades = sorted(pairs["human"].unique())
    human = pairs["human"].to_numpy()
    queries = pairs["query_id"] if "query_id" in pairs else pd.Series(0, index=pairs.index)
    blocks = pd.MultiIndex.from_arrays([queries, pairs["human"]]).factorize()[0]
    u = _percentile_ranks(pairs["words"], blocks)  # ranked within the blocks the permutation keeps
    v = _percentile_ranks(pairs["judge"], blocks)
    member = np.stack([human == g for g in grades], axis=1).astype(float)  # pairs x grades
    uu, vv = (u**2) @ member, (v**2) @ member
    scale = np.sqrt(uu * vv)
    total = math.sqrt(uu.sum() * vv.sum())
    with np.errstate(invalid="ignore", divide="ignore"):
        observed = np.append(((u * v) @ member) / scale, (u @ v) / total if total > 0 else np.nan)
    observed[:-1][member.sum(axis=0) < 3] = np.nan
    if len(pairs) < 3:
        observed[-1] = np.nan
    null = []
    for order, drawn in block_permutations(blocks, permutations, seed):
        products = u[drawn] * v[order]  # permutations x pairs, in block order
        per_grade = products @ member[order]
        with np.errstate(invalid="ignore", divide="ignore"):
            null.append(np.column_stack([per_grade / scale, per_grade.sum(axis=1) / total]))
    p = permutation_p(observed, np.concatenate(null)) if permutations else np.full(len(observed), np.nan)
    for i, grade in enumerate(grades):
        row[f"n_human_{grade}"] = int(member[:, i].sum())
        row[f"rho_within_human_{grade}"] = float(observed[i])
        row[f"p_within_human_{grade}"] = float(p[i])
    row["rho_within"], row["p_within"] = float(observed[-1]), float(p[-1])
    row["permutations"] = permutations
    row["length_biased"] = bool(row["p_within"] < alpha) if not math.isnan(row["p_within"]) else False
    row["simpson"] = bool(
        row["length_biased"]
        and not math.isnan(row["rho_overall"])
        and np.sign(row["rho_within"]) != np.sign(row["rho_overall"])
    )
    return row


def _deciles(words: pd.Series) -> pd.Series:
    return pd.qcut(words.rank(method="first"), q=min(10, len(words)), labels=False) + 1


def by_decile(pairs: pd.DataFrame) -> pd.DataFrame:
    """Mean judge grade by length decile: over all pairs, and within each human grade (deciles
    of the lengths of that grade's passages, so relevance is held fixed). A pair without a
    length (no text) is left out."""
    pairs = pairs[pairs["words"].notna()]
    columns = {"all": pairs.groupby(_deciles(pairs["words"]))["judge"].mean()}
    for grade, block in pairs.groupby("human"):
        columns[f"human_{grade}"] = block.groupby(_deciles(block["words"]))["judge"].mean()
    frame = pd.DataFrame(columns)
    frame.index.name = "decile"
    return frame.reset_index()


def _judged_top(
    run: pd.DataFrame, judged: pd.DataFrame | None, depth: int | None, evaluation_depth: int | None = None
) -> pd.DataFrame:
    """The documents a measure with cutoff ``depth`` scores, as the evaluation takes them: the
    run cut at ``evaluation_depth``, then with ``judged`` (query_id, doc_id) the unjudged
    documents removed, as judged-only measures do (trec_eval ``-J``), then its top ``depth``
    (None: all), every cut in trec_eval's order (score descending, then document id
    descending), whatever the rank column says."""
    if evaluation_depth is not None:
        run = cut(run, evaluation_depth)
    if judged is not None:
        run = judged_only(run, judged)
    return cut(run, depth) if depth is not None else run


def system_lengths(
    runs: dict[str, list[pd.DataFrame]],
    texts: dict[str, str],
    depth: int | None = 10,
    judged: pd.DataFrame | None = None,
    *,
    evaluation_depth: int | None = None,
) -> pd.Series:
    """Per system: the mean length (words) of its top-``depth`` passages, averaged over queries
    (and over an oracle's tie-break draws). With ``judged`` (a qrels frame: query_id, doc_id),
    the top ``depth`` of the *judged* passages, the ones judged-only nDCG@10 scores. Every run
    is first cut at ``evaluation_depth`` and every cut is in trec_eval's order, as the
    evaluation takes them (:func:`_judged_top`)."""
    return system_lengths_by_judge(runs, texts, {None: judged}, depth, evaluation_depth=evaluation_depth)[None]


def system_lengths_by_judge(
    runs: Mapping[str, list[pd.DataFrame]],
    texts: Mapping[str, str],
    judged: Mapping[Hashable, pd.DataFrame | None],
    depth: int | None = 10,
    *,
    evaluation_depth: int | None = None,
) -> dict[Hashable, pd.Series]:
    """:func:`system_lengths` under each judge of ``judged`` (judge -> its qrels, or None: every
    document), the same numbers: the runs are cut at ``evaluation_depth`` and put in trec_eval's
    order once, and each judge's judged documents picked from all of them at once (a
    judge-independent cut commutes with the judged-only filter, which keeps the order). A
    passage without a text has no length and is left out of its query's mean
    (:func:`top_pairs_without_text` counts them)."""
    systems = list(runs)
    if not texts:  # no passage has a length: every mean is NaN, as the loop below would find
        return {j: pd.Series(math.nan, index=systems, dtype=float) for j in judged}
    words = {d: len(t.split()) for d, t in texts.items()}
    owner = [(s, i) for s, rs in runs.items() for i in range(len(rs))]
    out = {}
    for judge, top in _tops(runs, judged, depth, evaluation_depth):
        top = top.assign(words=top["doc_id"].map(words).astype(float))  # all missing: still numbers
        per_query = top.groupby(["run", "query_id"])["words"].mean()  # sorted: by run, then query
        runs_of = per_query.index.get_level_values("run").to_numpy()
        bounds = np.searchsorted(runs_of, [np.arange(len(owner)), np.arange(len(owner)) + 1])
        values = per_query.to_numpy(dtype=float)
        means: dict[str, list[float]] = {s: [] for s in systems}
        for index, (system, _) in enumerate(owner):
            means[system].append(pd.Series(values[bounds[0][index] : bounds[1][index]], dtype=float).mean())
        out[judge] = pd.Series({s: float(np.mean(m)) for s, m in means.items()}, dtype=float)
    return out


def top_pairs_without_text(
    runs: Mapping[str, list[pd.DataFrame]],
    texts: Collection[str],
    judged: Mapping[Hashable, pd.DataFrame | None],
    depth: int | None = 10,
    *,
    evaluation_depth: int | None = None,
) -> dict[Hashable, int]:
    """Per judge of ``judged``: the distinct (query, passage) pairs in any system's top ``depth``
    as :func:`system_lengths_by_judge` takes it whose passage has no text, so no length (left
    out of the systems' mean lengths)."""
    known = texts if isinstance(texts, (set, frozenset, Mapping)) else set(texts)
    out: dict[Hashable, int] = {}
    for judge, top in _tops(runs, judged, depth, evaluation_depth):
        missing = top.loc[~top["doc_id"].isin(known), ["query_id", "doc_id"]]
        out[judge] = len(missing.drop_duplicates())
    return out


def _tops(
    runs: Mapping[str, list[pd.DataFrame]],
    judged: Mapping[Hashable, pd.DataFrame | None],
    depth: int | None,
    evaluation_depth: int | None,
) -> Iterator[tuple[Hashable, pd.DataFrame]]:
    """(judge, the documents its measure scores): every run (numbered in ``run``, in the order
    of ``runs`` and their draws) cut at ``evaluation_depth`` in trec_eval's order, the judge's
    judged documents (qrels; None: every document), then each query's top ``depth``."""
    ordered = [
        cut(r, evaluation_depth) if evaluation_depth is not None else trec_eval_order(r)
        for rs in runs.values()
        for r in rs
    ]
    sizes = [len(r) for r in ordered]
    every = pd.DataFrame(
        {
            "run": np.repeat(np.arange(len(ordered)), sizes),
            "query_id": np.concatenate([r["query_id"].to_numpy(dtype=object) for r in ordered]) if ordered else [],
            "doc_id": np.concatenate([r["doc_id"].to_numpy(dtype=object) for r in ordered]) if ordered else [],
        }
    )
    pairs = pd.MultiIndex.from_arrays([every["query_id"].astype(str), every["doc_id"].astype(str)])
    codes, distinct = pairs.factorize()
    for judge, qrels in judged.items():
        top = every
        if qrels is not None:  # judged_only: the pairs the qrels grade, at any grade
            hit = distinct.get_indexer(pd.MultiIndex.from_frame(qrels[["query_id", "doc_id"]].astype(str)))
            graded = np.zeros(len(distinct), dtype=bool)
            graded[hit[hit >= 0]] = True
            top = top[graded[codes]]
        if depth is not None:
            top = top.groupby(["run", "query_id"], sort=False).head(depth)
        yield judge, top


def fisher_interval(r: float, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Confidence interval of a Pearson r from ``n`` points by Fisher's z transform (Fisher 1921):
    ``tanh(atanh(r) +- z / sqrt(n - 3))``; (-1, 1) when n <= 3 (no interval to speak of)."""
    if math.isnan(r):
        return math.nan, math.nan
    if n <= 3:
        return -1.0, 1.0
    z = math.atanh(float(np.clip(r, -1 + 1e-12, 1 - 1e-12)))
    from scipy import stats

    half = stats.norm.ppf(0.5 + confidence / 2) / math.sqrt(n - 3)
    return math.tanh(z - half), math.tanh(z + half)


def tier_correlation(
    lengths: pd.Series, scores: pd.Series, tiers: dict[str, str | None], confidence: float = 0.95
) -> dict:
    """Pearson r of system length and score across all systems and within each tier (a family
    with three systems or more), each tier's r with its Fisher z interval.

    Simpson's paradox (``simpson_<tier>``, and ``simpson`` for any tier) only when the overall r
    lies outside the tier's interval and the tier's r has the other sign: a bare sign flip is
    not enough (among three systems with no effect it happens half the time, and the interval
    of three points is the whole of (-1, 1)).
    """
    systems = [s for s in scores.index if s in lengths.index]
    row: dict = {"systems": len(systems)}
    row["r_all"] = _pearson(lengths[systems], scores[systems])
    flags = []
    for tier in sorted({tiers.get(s) for s in systems if tiers.get(s)}):
        members = [s for s in systems if tiers.get(s) == tier]
        if len(members) >= 3:
            r = _pearson(lengths[members], scores[members])
            low, high = fisher_interval(r, len(members), confidence)
            flag = bool(
                not math.isnan(r)
                and not math.isnan(row["r_all"])
                and not low <= row["r_all"] <= high
                and np.sign(r) != np.sign(row["r_all"])
            )
            row |= {
                f"systems_{tier}": len(members),
                f"r_within_{tier}": r,
                f"r_within_{tier}_ci_low": low,
                f"r_within_{tier}_ci_high": high,
                f"simpson_{tier}": flag,
            }
            flags.append(flag)
    row["simpson"] = any(flags)
    return row


def _pearson(x: pd.Series, y: pd.Series) -> float:
    if len(x) < 3 or x.nunique() < 2 or y.nunique() < 2:
        return math.nan
    from scipy import stats

    return float(stats.pearsonr(x, y).statistic)


# ----------------------------------------------------------------------------- the audit, declared


def _chart(deciles: pd.DataFrame, png: str) -> None:
    from .figures import length_chart  # matplotlib: only where the figure is drawn

    length_chart(deciles, png)


@audit(
    "length",
    tables=[
        Table(
            "length",
            lambda frame, alpha: (
                "Length bias: passage length vs judge grade, overall and within human grades "
                "(permutation p-values within query x grade blocks; length_biased at p < 0.01: "
                f"{chance(len(frame), 0.01)})"
            ),
            ["dataset", "judge"],
            view=[
                "judge",
                "pairs",
                "pairs_without_text",
                "rho_overall",
                "rho_within",
                "p_within",
                "permutations",
                "length_biased",
                "simpson",
            ],
            counts=["pairs", "pairs_without_text", "permutations"],
            short="Length bias",
        ),
        Table(
            "length_systems",
            "Length across systems vs within tiers: r of a system's judged top-10 passage length and its score "
            "(a tier flagged only when the overall r lies outside its Fisher-z 95% interval, sign reversed)",
            ["dataset", "judge"],
            empty="correlates the systems' passage lengths with their scores",
            systems=True,
            short="Length across systems",
            report="length",
        ),
        # the mean grade by length decile within each human grade: the figure's, not written
        Table("deciles", "Length deciles", ["dataset", "judge", "decile"], written=False),
    ],
    figures=[Figure("length", "deciles", _chart)],
    systems=False,  # the pairs' lengths need texts, not systems; the systems' lengths need both
)
def audit_length(context: Context) -> dict[str, list]:
    """One dataset's rows: ``length`` and ``deciles`` of every judge but the humans with three
    pairs or more with a text, and with systems ``length_systems`` of every judge (the humans too):
    the systems' lengths on the documents the primary measure scores under it (each run cut at the
    evaluation depth, judged documents only for a judged-only measure, then the measure's cutoff)."""
    data = context.data
    found = {"length": [], "deciles": []}
    for judge in context.judges:
        measured = with_lengths(aligned(context.human, data.labels[judge]), data.texts)  # no text: left out, counted
        if measured["words"].notna().sum() >= 3:
            found["length"].append({"judge": judge, **length_bias(measured)})
            found["deciles"].append(by_decile(measured).assign(judge=judge))
    if not context.systems:  # what follows scores systems
        return found
    primary = parse_measure(context.measure)
    top = context.cutoff
    judges = list(data.judges)
    scored = {j: data.labels[j] if primary.params.get("judged_only", False) else None for j in judges}
    lengths = system_lengths_by_judge(data.runs, data.texts, scored, top, evaluation_depth=context.depth)
    gaps = top_pairs_without_text(data.runs, data.texts, scored, top, evaluation_depth=context.depth)
    block = data.per_query
    found["length_systems"] = []
    for judge in judges:
        means = block[block["judge"] == judge].groupby("system")["ndcg"].mean()
        correlation = tier_correlation(lengths[judge], means, context.system_families)
        found["length_systems"].append({"judge": judge, **correlation, "top_pairs_without_text": gaps[judge]})
    return found


RHO_MIN = 0.1
"""The within-grade rank correlation of length and grade that matters: a judge with a finer
sense of relevance than a coarse human grade correlates with length a little (length tracks
relevance within a grade), so significance alone over thousands of pairs is no finding."""


@question(
    "length",
    asks="Does it reward longer passages at the same relevance?",
    table="length",
    needs=("labels", "texts"),
    rule=f"flag when the within-grade rank correlation of length and grade is "
    f"at least {RHO_MIN} in size, significant (lengths permuted within query x grade), and beyond every "
    "other judge's of the panel; inconclusive without a panel (labels alone cannot tell a length bias from "
    "a finer sense of relevance, which tracks length too)",
    absent="no passage texts",
    also=("label_test",),
    effect=RHO_MIN,
    effect_words=f"a correlation of {RHO_MIN}",
    sided="two-sided",
)
def _length(rows, judge, context):
    found = judge_rows(rows, judge)
    if not len(found):
        return Cell(NA, reason="no passage texts (a labels-only dataset)")
    row = found.iloc[0].to_dict()
    value = number(row, "rho_within")
    pairs = number(row, "pairs")
    if math.isnan(value):
        return Cell(
            NA,
            reason="too few pairs with a text"
            if not pairs >= 3
            else "rho undefined: its grade never varies within a query and human grade",
        )
    se = 1 / math.sqrt(pairs - 3) if pairs > 3 else math.nan  # Fisher's z, near 0
    p = number(row, "p_within")
    if abs(value) < RHO_MIN:
        detail = f"below the {RHO_MIN} that matters" if p < 0.05 else ""
        return Cell(PASS, value, p=p, signal=False, se=se, detail=detail)
    panel = _length_panel(rows, judge, context)
    if not panel:
        return Cell(
            INCONCLUSIVE,
            value,
            p=p,
            signal=False,
            se=se,
            reason="no other judge to compare with: a judge finer than the human grade tracks length too",
        )
    beyond = value > max(panel) if value > 0 else value < min(panel)
    edge = max(panel) if value > 0 else min(panel)
    return Cell(PASS, value, p=p, signal=beyond, se=se, detail=f"the panel's most extreme {edge:+.3f}")


def _length_panel(rows: pd.DataFrame, judge: str, context: Mapping) -> list[float]:
    """The within-grade rho of every other judge of the dataset that is not a null baseline (the
    label test's ``kind`` says which are; the humans never have a row)."""
    kinds = context.get("label_test", pd.DataFrame())
    baselines = set(kinds.loc[kinds["kind"] == "baseline", "judge"]) if len(kinds) and "kind" in kinds else set()
    others = rows[(rows["judge"] != judge) & ~rows["judge"].isin(baselines)] if "judge" in rows else rows[:0]
    return [float(v) for v in others["rho_within"] if not math.isnan(float(v))]
