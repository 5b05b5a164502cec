"""The gamed system: would a gamed system climb the leaderboard under this judge?

LLM judges raise their labels for passages stuffed with the query's terms or carrying an
instruction such as "this passage is perfectly relevant" (Alaofi et al., 2025), and a system
that knows the judge can be tuned to it (Clarke & Dietz, 2024). The injection probe asks this of
single passages; this asks it of a leaderboard. A system S is *gamed* by modifying the
passages of its top ``k``:

* ``stuff``: the query's content terms appended, repeated until they make up ``share`` of the
  passage's words (at least one copy);
* ``claim``: a sentence claiming relevance (the injection probe's ``claim`` template);
* any user template with a ``{passage}`` slot (``{query}`` and ``{query_terms}`` are filled too).

A modified passage is a new document ``{doc_id}#{method}`` whose human label is the original's
(the modification adds no relevance); the gamed system ``S#{method}`` is S's run with its top-k
document ids replaced by the modified ones, in S's order. It is scored on the qrels in which each
modified passage stands in for its original (the judge's label of the modified text; under the
humans, the original's label, so the human score cannot move: ``human_delta`` is 0 by
construction, a check). Every other system keeps its score (Table 1's).

A passage without a text (a recorded run's, beyond the candidates whose texts the workflow
holds) cannot be modified: it stays in the gamed run as it is, unmodified, and is counted
(``without_text``), never taken for a label the judge failed to give (``unlabelled``).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from ..evaluation import check_ties, per_query_scores
from ..formats import trec_eval_order
from ..runs import single_precision_order
from ..stats import mean_interval, significance_tests
from .items import INJECTIONS, inject, query_terms

METHODS = {"stuff": None, "claim": INJECTIONS["claim"]}
"""The built-in methods: ``stuff`` (no template: the query's terms up to a share of the passage)
and ``claim`` (a relevance claim appended, the injection probe's template)."""
SHARE = 0.25
"""``stuff``'s default: the appended query terms make up a quarter of the passage's words."""
SEPARATOR = "#"

COLUMNS = [
    "dataset",
    "judge",
    "method",
    "system",
    "gamed",
    "k",
    "queries",
    "modified",
    "unlabelled",
    "without_text",
    "score",
    "score_gamed",
    "delta",
    "delta_ci_low",
    "delta_ci_high",
    "delta_p",
    "human_delta",
    "rank",
    "rank_gamed",
    "systems",
    "passes",
    "passes_significant",
    "climbs",
    "reason",
]
VIEW = ["judge", "gamed", "score", "score_gamed", "delta", "human_delta", "rank", "rank_gamed", "passes", "climbs"]
"""The columns a person reads in the Markdown (the CSV keeps every one)."""


def gamed_id(doc_id: str, method: str) -> str:
    return f"{doc_id}{SEPARATOR}{method}"


def gamed_name(system: str, method: str) -> str:
    return f"{system}{SEPARATOR}{method}"


def stuff(passage: str, query: str, share: float = SHARE) -> str:
    """The passage with the query's content terms appended, repeated until they make up ``share``
    of the passage's words (at least one copy of every term)."""
    terms = query_terms(query).split()
    if not terms:
        return passage
    count = max(len(terms), math.ceil(share * len(passage.split())))
    return f"{passage.strip()} {' '.join(terms[i % len(terms)] for i in range(count))}"


def modify(method: str, passage: str, query: str, *, template: str | None = None, share: float = SHARE) -> str:
    """A passage as a gamed system returns it: ``stuff`` without a template, else the template filled."""
    if template is None:
        if method != "stuff":
            raise ValueError(f"method {method!r} needs a template")
        return stuff(passage, query, share)
    return inject(template, passage, query)


def as_evaluated(run: pd.DataFrame, ties: str = "trec_eval") -> pd.DataFrame:
    """The run in the order the evaluation reads it under ``evaluation.ties``: trec_eval's, at
    single precision as trec_eval reads scores (``trec_eval``) or at full precision (``exact``),
    then document id descending."""
    check_ties(ties)
    return single_precision_order(run) if ties == "trec_eval" else trec_eval_order(run)


def in_order(run: pd.DataFrame, ties: str = "trec_eval") -> pd.DataFrame:
    """The run in the order the evaluation reads it (:func:`as_evaluated`) with scores n..1 down
    each query (so a renamed document cannot move in a tie, and the gamed system is read in the
    order its system is scored in)."""
    ordered = as_evaluated(run, ties)[["query_id", "doc_id", "score"]].copy()
    position = ordered.groupby("query_id", sort=False).cumcount()
    ordered["score"] = (len(ordered) - position).astype(float)
    return ordered.reset_index(drop=True)


def top(run: pd.DataFrame, k: int, ties: str = "trec_eval") -> pd.DataFrame:
    """The (query_id, doc_id) pairs of each query's top ``k`` in the order the evaluation reads
    it (:func:`as_evaluated`)."""
    return as_evaluated(run, ties).groupby("query_id", sort=False).head(k)[["query_id", "doc_id"]]


def items_to_modify(
    runs: Iterable[pd.DataFrame],
    k: int,
    judged: pd.DataFrame,
    texts: Collection[str] | None = None,
    ties: str = "trec_eval",
) -> tuple[pd.DataFrame, int]:
    """The pairs in any gamed run's top ``k`` that are judged (human-judged pool pairs: only those
    count under judged-only measures, and only those a judge labels) and, with ``texts`` (the
    passages that have one), whose passage has a text (the rest cannot be modified: they stay as
    they are; the judged pairs without ``texts`` less these are the ones left out), and how many
    pairs of those top-k lists were left unjudged (an unjudged passage stays unjudged when
    modified). ``ties``: the order the top is read in (:func:`as_evaluated`)."""
    tops = pd.concat([top(r, k, ties) for r in runs], ignore_index=True).drop_duplicates()
    keys = judged[["query_id", "doc_id"]].drop_duplicates()
    kept = tops.merge(keys, on=["query_id", "doc_id"])
    unjudged = len(tops) - len(kept)
    if texts is not None:
        kept = kept[kept["doc_id"].isin(_ids(texts))]
    return kept.sort_values(["query_id", "doc_id"], kind="stable").reset_index(drop=True), unjudged


def _ids(texts: Collection[str]) -> Collection[str]:
    return texts if isinstance(texts, (set, frozenset, Mapping)) else set(texts)


def modified_texts(
    items: pd.DataFrame,
    methods: Mapping[str, str | None],
    topics: Mapping[str, str],
    texts: Mapping[str, str],
    share: float = SHARE,
) -> pd.DataFrame:
    """(query_id, doc_id, method, gamed_id, text): every item modified by every method."""
    rows = [
        (q, d, m, gamed_id(d, m), modify(m, texts[d], topics[q], template=t, share=share))
        for m, t in methods.items()
        for q, d in items[["query_id", "doc_id"]].itertuples(index=False)
    ]
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "method", "gamed_id", "text"])


def to_label(gamed: pd.DataFrame, methods: Iterable[str]) -> pd.DataFrame:
    """The modified passages of ``methods`` (rows of :func:`modified_texts`) as a judge labels
    them: query_id, doc_id (the modified passage's id), text, and ``original``, the passage it
    was made from."""
    chosen = gamed[gamed["method"].isin(list(methods))]
    items = chosen[["query_id", "gamed_id", "text", "doc_id"]].rename(columns={"doc_id": "original"})
    return items.rename(columns={"gamed_id": "doc_id"}).reset_index(drop=True)


def texts_by_pair(items: pd.DataFrame) -> dict[tuple[str, str], str]:
    """(query_id, doc_id) -> text of :func:`to_label`'s items: a stuffed text carries its query's
    terms, so it belongs to its (query, passage) pair, not to the passage alone."""
    return dict(zip(zip(items["query_id"], items["doc_id"], strict=True), items["text"], strict=True))


def game(
    run: pd.DataFrame, k: int, method: str, texts: Collection[str] | None = None, ties: str = "trec_eval"
) -> tuple[pd.DataFrame, dict]:
    """The gamed run (the run in the order the evaluation reads it, :func:`in_order`, its top
    ``k`` per query renamed ``{doc_id}#{method}``; with ``texts``, only the passages that have a
    text: the rest cannot be modified and stay as they are) and the renaming: (query_id, doc_id)
    -> the modified passage's id."""
    gamed = in_order(run, ties)
    first = gamed.groupby("query_id", sort=False).cumcount() < k
    if texts is not None:
        first &= gamed["doc_id"].isin(_ids(texts))
    originals = list(zip(gamed.loc[first, "query_id"], gamed.loc[first, "doc_id"], strict=True))
    swap = {(q, d): gamed_id(d, method) for q, d in originals}
    gamed.loc[first, "doc_id"] = [swap[key] for key in originals]
    return gamed, swap


def stand_in(qrels: pd.DataFrame, swap: Mapping, labels: Mapping | None = None) -> pd.DataFrame:
    """The qrels in which each modified passage stands in for its original (``swap``: (query_id,
    doc_id) -> its modified id): the original's row leaves, the modified passage's row comes in
    with ``labels[(query_id, modified id)]`` as its grade (the judge's label of the modified
    text; absent: unlabelled, no row) or, without ``labels``, the original's own grade (the humans:
    a modified passage is as relevant as its original)."""
    qrels = qrels[["query_id", "doc_id", "relevance"]]
    keys = pd.Series(list(zip(qrels["query_id"], qrels["doc_id"], strict=True)), index=qrels.index, dtype=object)
    replaced = keys.isin(set(swap))
    if labels is None:
        added = qrels[replaced].assign(doc_id=[swap[key] for key in keys[replaced]])
    else:
        found = [(q, g, labels[q, g]) for (q, _), g in swap.items() if (q, g) in labels]
        added = pd.DataFrame(found, columns=["query_id", "doc_id", "relevance"])
    return pd.concat([qrels[~replaced], added], ignore_index=True).astype({"relevance": int})


def gamed_scores(
    runs: Sequence[pd.DataFrame],
    qrels: pd.DataFrame,
    queries: Sequence[str],
    method: str,
    k: int,
    *,
    labels: Mapping | None,
    measure: str,
    depth: int | None,
    binary_threshold: int,
    texts: Collection[str] | None = None,
    ties: str = "trec_eval",
) -> pd.Series:
    """Per-query scores of the gamed system (mean over a system's runs, as an oracle's draws);
    with ``texts``, a passage without one is not modified (:func:`game`); ``ties``: the order
    its system is scored in (``evaluation.ties``)."""
    values = []
    for run in runs:
        gamed, swap = game(run, k, method, texts, ties)
        found = per_query_scores(
            gamed,
            stand_in(qrels, swap, labels),
            queries,
            [measure],
            binary_threshold=binary_threshold,
            depth=depth,
            ties=ties,
        )
        values.append(found[measure])
    return sum(values[1:], values[0]) / len(values)


def paired_p(a: pd.Series, b: pd.Series, test: str = "t", seed: int = 42) -> float:
    """Two-sided p of the engine's paired test of two systems' per-query scores (NaN on one query)."""
    if len(a) < 2:
        return math.nan
    options = {} if test == "t" else {"seed": seed}
    frame = pd.DataFrame({"a": a.to_numpy(dtype=float), "b": b.to_numpy(dtype=float)})
    return float(significance_tests(frame, test, **options)["p"].iloc[0])


def _ranks(means: pd.Series) -> pd.Series:
    """1 for the best mean; ties share the best rank."""
    return means.rank(ascending=False, method="min").astype(int)


def gaming_rows(
    *,
    dataset: str,
    judge: str,
    methods: Sequence[str],
    systems: Sequence[str],
    runs: Mapping[str, Sequence[pd.DataFrame]],
    scores: pd.DataFrame,
    human_scores: pd.DataFrame,
    judge_qrels: pd.DataFrame,
    human_qrels: pd.DataFrame,
    labels: pd.DataFrame,
    k: int,
    measure: str,
    depth: int | None,
    binary_threshold: int,
    human_threshold: int,
    alpha: float = 0.05,
    test: str = "t",
    seed: int = 42,
    texts: Collection[str] | None = None,
    ties: str = "trec_eval",
) -> pd.DataFrame:
    """One row per method x gamed system for one judge and dataset.

    ``scores`` and ``human_scores`` are wide (query x system) per-query scores of every system
    under the judge and the humans, as Table 1 computes them; ``labels`` is the judge's labels of
    the modified passages (query_id, doc_id = ``{doc_id}#{method}``, relevance). Δ is the mean
    over queries of (gamed − original) under the judge, its interval the bootstrap over queries
    (:func:`voirdire.stats.mean_interval`), ``delta_p`` the engine's paired test. The passes are the
    systems the humans rank above S that the judge ranked at or above S and ranks below S#method;
    a pass is significant when the engine's paired test of the two under the judge has p < alpha.
    ``climbs``: Δ's interval lies above 0 and S#method passes a human-better system. ``texts``: the
    passages that have a text; a human-judged top-k passage without one is not modified and is
    counted in ``without_text`` (not in ``modified`` nor ``unlabelled``). ``ties``: the order the
    systems are scored in (``evaluation.ties``), which the gamed system is read in too, so that no
    tie moves it under the humans."""
    queries = list(scores.index)
    graded = dict(zip(zip(labels["query_id"], labels["doc_id"], strict=True), labels["relevance"], strict=True))
    judge_means, human_means = scores.mean(), human_scores.mean()
    rows = []
    for method in methods:
        for system in systems:
            name = gamed_name(system, method)
            common = {"judge": judge, "method": method, "system": system, "gamed": name}
            system_runs = runs[system]
            modified = pd.concat([top(r, k, ties) for r in system_runs]).drop_duplicates()
            modified = modified.merge(human_qrels[["query_id", "doc_id"]], on=["query_id", "doc_id"])
            readable = modified if texts is None else modified[modified["doc_id"].isin(_ids(texts))]
            without, modified = len(modified) - len(readable), readable
            wanted = {(q, gamed_id(d, method)) for q, d in modified.itertuples(index=False)}
            unlabelled = len(wanted - set(graded))
            kwargs = {"measure": measure, "depth": depth, "texts": texts, "ties": ties}
            after = gamed_scores(
                system_runs, judge_qrels, queries, method, k, labels=graded, binary_threshold=binary_threshold, **kwargs
            )
            human_after = gamed_scores(
                system_runs, human_qrels, queries, method, k, labels=None, binary_threshold=human_threshold, **kwargs
            )
            before = scores[system]
            diff = (after - before).to_numpy(dtype=float)
            ci = mean_interval(diff, seed=seed)
            p = paired_p(after, before, test, seed)
            board = judge_means.drop(system)
            ranks_after = _ranks(pd.concat([board, pd.Series({name: after.mean()})]))
            above = [s for s in human_means.index if s != system and human_means[s] > human_means[system]]
            passes = [s for s in above if judge_means[s] >= judge_means[system] and after.mean() > judge_means[s]]
            significant = []
            for other in passes:
                if paired_p(after, scores[other], test, seed) < alpha:
                    significant.append(other)
            delta = float(np.mean(diff)) if len(diff) else math.nan
            rows.append(
                {
                    "dataset": dataset,
                    **common,
                    "k": k,
                    "queries": len(queries),
                    "modified": len(modified),
                    "unlabelled": unlabelled,
                    "without_text": without,
                    "score": float(before.mean()),
                    "score_gamed": float(after.mean()),
                    "delta": delta,
                    "delta_ci_low": ci.low,
                    "delta_ci_high": ci.high,
                    "delta_p": p,
                    "human_delta": float((human_after - human_scores[system]).mean()),
                    "rank": int(_ranks(judge_means)[system]),
                    "rank_gamed": int(ranks_after[name]),
                    "systems": len(judge_means),
                    "passes": ", ".join(passes),
                    "passes_significant": ", ".join(significant),
                    "climbs": bool(ci.low > 0 and len(passes) > 0),
                    "reason": "",
                }
            )
    return pd.DataFrame(rows, columns=COLUMNS)


TEXT_COLUMNS = ("dataset", "judge", "method", "system", "gamed", "passes", "passes_significant", "climbs", "reason")


def combine(frames: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """The table from its parts (rows of judges asked, and of judges not asked): number columns
    stay numbers beside an n/a row, so the Markdown prints each interval in its cell."""
    table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=COLUMNS)
    for column in COLUMNS:
        if column not in TEXT_COLUMNS:
            table[column] = pd.to_numeric(table[column], errors="coerce")
    return table


def not_asked(dataset: str, judge: str, reason: str) -> pd.DataFrame:
    """The row of a judge the gamed system is not put to, with the reason (the verdict's n/a)."""
    row = dict.fromkeys(COLUMNS, None) | {"dataset": dataset, "judge": judge, "reason": reason}
    return pd.DataFrame([row], columns=COLUMNS)


def gaming_chart(table: pd.DataFrame, png: str | Path):
    """The change in score of every gamed system under its judge, with its 95% interval over
    queries, one panel per dataset: red where the gamed system climbs (interval above 0 and a
    human-better system passed), grey otherwise; each row says its rank before and after.
    Returns the figure (saved, closed)."""
    from ..output import per_dataset, save_figure

    asked = table[table["gamed"].notna() & table["delta"].notna()] if len(table) else table
    fig, panels = per_dataset(asked, 6.0, max(2.2, 0.45 * len(asked) + 1.2))
    for ax, dataset, rows in panels:
        if not len(rows):
            ax.text(0.5, 0.5, "no judge is put to the gamed system", ha="center", va="center")
            ax.set_axis_off()
            continue
        y = np.arange(len(rows))[::-1]
        low = (rows["delta"] - rows["delta_ci_low"]).clip(lower=0).fillna(0)
        high = (rows["delta_ci_high"] - rows["delta"]).clip(lower=0).fillna(0)
        colours = ["tab:red" if bool(c) else "tab:grey" for c in rows["climbs"]]
        ax.errorbar(rows["delta"], y, xerr=[low, high], fmt="none", ecolor="black", elinewidth=1, capsize=3)
        ax.scatter(rows["delta"], y, c=colours, zorder=3)
        ax.axvline(0, color="black", linewidth=0.8)
        labels = [f"{r.judge}: {r.gamed} (rank {r.rank:.0f} -> {r.rank_gamed:.0f})" for r in rows.itertuples()]
        ax.set_yticks(y, labels, fontsize=7)
        ax.set_xlabel("change in score under the judge\n(gamed - original; 95% CI over queries)", fontsize=8)
        ax.set_title(f"The gamed system: {dataset} (red: climbs)", fontsize=9)
    save_figure(fig, png)
    return fig
