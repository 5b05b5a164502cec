"""The label test: a judge's labels against the human labels, pair by pair.

Per judge: the graded and binary confusion matrices, agreement, *missed failures* (the human
says non-relevant, the judge relevant: leniency) and *false alarms* (the human says
relevant, the judge non-relevant), and the mean judge grade per human grade. Relevant means
grade >= the scale's binary threshold, each side with its own scale.

Each rate comes with the count it is a share of (``pairs`` for the agreements,
``human_non_relevant`` for missed failures, ``human_relevant`` for false alarms) and a 95%
cluster-bootstrap interval over queries (:func:`voirdire.stats.clustered_rate`): the pairs of
one query share a topic, an assessor and a prompt, and a judge's leniency varies by topic, so
pairs are not independent. ``rate_degenerate`` counts the bootstrap draws with no pair to
rate (the most of any rate). Wilson's interval (Wilson 1927; statsmodels), which counts every
pair as independent and is too narrow when leniency varies by topic, stays as the descriptive
``<rate>_ci_low_wilson`` / ``<rate>_ci_high_wilson``.

Table 2's label columns (:func:`label_agreement`) carry Cohen's kappas, Krippendorff's alphas and
kappa at each binarisation cut; :func:`topic_agreement` is the same question topic by topic.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..judges import HUMAN, Scale
from ..output import IntervalCell
from ..stats import clustered_rate, kappa_intervals, kappas, mean_interval, per_query_confusion, query_resamples, wilson
from ..stats.agreement import kappa_cuts, kappa_from_counts
from ..stats.reliability import alpha_distances, alpha_from_counts, alpha_interval, krippendorff_alpha
from ..stats.resample import interval
from .registry import Context, Figure, Table, audit


def aligned(human: pd.DataFrame, judge: pd.DataFrame) -> pd.DataFrame:
    """Pairs both labelled: columns query_id, doc_id, human, judge."""
    return human.merge(judge, on=["query_id", "doc_id"], suffixes=("_human", "_judge")).rename(
        columns={"relevance_human": "human", "relevance_judge": "judge"}
    )[["query_id", "doc_id", "human", "judge"]]


def confusion(pairs: pd.DataFrame, human_scale: Scale, judge_scale: Scale) -> pd.DataFrame:
    """Counts of (human grade, judge grade), every grade of both scales present."""
    rows = range(human_scale.low, human_scale.high + 1)
    cols = range(judge_scale.low, judge_scale.high + 1)
    table = pd.crosstab(pairs["human"], pairs["judge"]).reindex(index=rows, columns=cols, fill_value=0)
    table.index.name, table.columns.name = "human", "judge"
    return table


def label_test(
    pairs: pd.DataFrame,
    human_scale: Scale,
    judge_scale: Scale,
    *,
    level: float = 0.95,
    resamples: int = 1000,
    seed: int = 42,
) -> dict:
    """One row of the label test for aligned pairs (see :func:`aligned`): rates with
    cluster-bootstrap intervals over queries, and Wilson's over pairs as descriptive columns."""
    n = len(pairs)
    human_rel = human_scale.binary(pairs["human"]).to_numpy()
    judge_rel = judge_scale.binary(pairs["judge"]).to_numpy()
    human_non = human_rel == 0
    same_scale = (human_scale.low, human_scale.high) == (judge_scale.low, judge_scale.high)
    graded_same = pairs["human"].to_numpy() == pairs["judge"].to_numpy()
    row = {
        "pairs": n,
        "queries": int(pairs["query_id"].nunique()),
        "agreement_binary": float(np.mean(human_rel == judge_rel)) if n else math.nan,
        "agreement_graded": float(np.mean(graded_same)) if n and same_scale else math.nan,
        # the binary confusion matrix: tp, tn, and its two errors, named as practitioners' judge checklists name them
        "binary_tp": int(np.sum(~human_non & (judge_rel == 1))),
        "binary_tn": int(np.sum(human_non & (judge_rel == 0))),
        "missed_failures": int(np.sum(human_non & (judge_rel == 1))),
        "missed_failure_rate": float(np.mean(judge_rel[human_non] == 1)) if human_non.any() else math.nan,
        "false_alarms": int(np.sum(~human_non & (judge_rel == 0))),
        "false_alarm_rate": float(np.mean(judge_rel[~human_non] == 0)) if (~human_non).any() else math.nan,
    }
    queries = pairs["query_id"].to_numpy()
    everyone = np.ones(n, dtype=bool)
    # each rate: its hits among the pairs it is a share of (which pairs), clustered by their query
    rates = {
        "agreement_binary": (human_rel == judge_rel, everyone),
        "agreement_graded": (graded_same, everyone if same_scale else np.zeros(n, dtype=bool)),
        "missed_failure_rate": (judge_rel == 1, human_non),
        "false_alarm_rate": (judge_rel == 0, ~human_non),
    }
    row["human_non_relevant"], row["human_relevant"] = int(human_non.sum()), int((~human_non).sum())
    row["rate_degenerate"] = 0
    for name, (hits, which) in rates.items():
        _, found = clustered_rate(hits[which], queries[which].tolist(), resamples=resamples, seed=seed, level=level)
        row[f"{name}_ci_low"], row[f"{name}_ci_high"] = found.low, found.high
        low, high = wilson(int(hits[which].sum()), int(which.sum()), level=level)
        row[f"{name}_ci_low_wilson"], row[f"{name}_ci_high_wilson"] = low, high
        row["rate_degenerate"] = max(row["rate_degenerate"], found.degenerate)
    row.update(kappas(pairs["human"], pairs["judge"], human_scale, judge_scale))
    for grade in range(human_scale.low, human_scale.high + 1):
        at = pairs.loc[pairs["human"] == grade, "judge"]
        row[f"mean_judge_grade_at_human_{grade}"] = float(at.mean()) if len(at) else math.nan
    return row


def label_agreement(
    labels: dict[str, pd.DataFrame],
    scales: dict[str, Scale],
    pairs: pd.DataFrame,
    *,
    resamples: int = 1000,
    seed: int = 42,
) -> dict[str, dict]:
    """Table 2's label columns per judge (every judge of ``labels`` but the humans): the needed
    pairs, those the judge labelled and its coverage, and its graded, binary and quadratic kappas
    against the human labels of the needed pairs, each with its cluster-bootstrap interval over
    queries (``kappa_degenerate``: undefined draws); as the field reports agreement too,
    Krippendorff's alphas (:func:`alphas`: ``alpha_ordinal``, ``alpha_interval``, ``alpha_binary``)
    and kappa at each cut of the human scale (``kappa_cut_<g>``,
    :func:`voirdire.stats.agreement.kappa_cuts`), on the same resamples. The same columns
    :func:`voirdire.paper.agreement_tables` gives; with no systems they are Table 2."""
    human = labels[HUMAN].merge(pairs[["query_id", "doc_id"]], on=["query_id", "doc_id"])
    rows = {}
    for judge in labels:
        if judge == HUMAN:
            continue
        both = labels[judge].merge(human, on=["query_id", "doc_id"], suffixes=("_judge", "_human"))
        point = kappas(both["relevance_human"], both["relevance_judge"], scales[HUMAN], scales[judge])
        found = kappa_intervals(both, scales[HUMAN], scales[judge], resamples=resamples, seed=seed)
        row = {
            "pairs_needed": len(pairs),
            "pairs_labelled": len(labels[judge]),
            "coverage": len(labels[judge]) / len(pairs) if len(pairs) else math.nan,
        }
        for name in ("kappa_binary", "kappa_graded", "kappa_quadratic"):
            row |= {
                name: point[name],
                f"{name}_ci_low": found[f"{name}_ci_low"],
                f"{name}_ci_high": found[f"{name}_ci_high"],
            }
        row["kappa_degenerate"] = found["kappa_degenerate"]
        row |= alphas(both, scales[HUMAN], scales[judge], resamples=resamples, seed=seed)
        row |= kappa_cuts(both, scales[HUMAN], scales[judge], resamples=resamples, seed=seed)
        rows[judge] = row
    return rows


ALPHAS = ("alpha_ordinal", "alpha_interval", "alpha_binary")
"""Krippendorff's alphas of :func:`alphas`, in Table 2's order."""


def alphas(
    both: pd.DataFrame,
    human_scale: Scale,
    judge_scale: Scale,
    *,
    a: str = "relevance_human",
    b: str = "relevance_judge",
    resamples: int = 1000,
    seed: int = 42,
) -> dict[str, float]:
    """Krippendorff's alpha of a judge against the humans (:mod:`voirdire.stats.reliability`),
    each with its cluster-bootstrap interval over queries: ``alpha_ordinal`` and
    ``alpha_interval`` on the grades (one scale on both sides; NaN otherwise, as graded kappa),
    ``alpha_binary`` on the binary labels (each side at its own threshold: the one alpha of a 0/1
    judge against 0-3 humans; on two values every level gives it), and ``alpha_degenerate``: the
    most draws any of them left undefined."""
    same_scale = (human_scale.low, human_scale.high) == (judge_scale.low, judge_scale.high)
    grades = list(range(human_scale.low, human_scale.high + 1))
    binary = both.assign(**{a: human_scale.binary(both[a]), b: judge_scale.binary(both[b])})
    plans = {
        "alpha_ordinal": (both, grades, "ordinal"),
        "alpha_interval": (both, grades, "interval"),
        "alpha_binary": (binary, [0, 1], "nominal"),
    }
    row: dict[str, float] = {"alpha_degenerate": 0}
    for name, (frame, values, level) in plans.items():
        if name != "alpha_binary" and not same_scale:
            row |= {name: math.nan, f"{name}_ci_low": math.nan, f"{name}_ci_high": math.nan}
            continue
        found = alpha_interval(frame, values, level, a=a, b=b, resamples=resamples, seed=seed)
        row |= {name: found["alpha"], f"{name}_ci_low": found["ci_low"], f"{name}_ci_high": found["ci_high"]}
        row["alpha_degenerate"] = max(row["alpha_degenerate"], found["degenerate"])
    order = [f"{name}{end}" for name in ALPHAS for end in ("", "_ci_low", "_ci_high")]
    return {name: row[name] for name in [*order, "alpha_degenerate"]}


def topic_agreement(
    pairs: pd.DataFrame,
    human_scale: Scale,
    judge_scale: Scale,
    *,
    level: float = 0.95,
    resamples: int = 1000,
    seed: int = 42,
) -> pd.DataFrame:
    """Agreement topic by topic, for aligned pairs (:func:`aligned`): one row per query, the
    most disagreeing first.

    * ``alpha_level``: ``ordinal`` on one scale; ``binary`` (each side at its own threshold)
      across scales, as :func:`alphas`' ``alpha_binary``;
    * ``disagreement``: the mean distance (at ``alpha_level``) between the judge's and the
      humans' label over the topic's pairs, over the distance expected by chance over all the
      judge's pairs (alpha's D_e): 0 when every pair agrees, 1 at chance. Its mean over topics,
      weighted by their pairs, is 1 - alpha over all pairs (``disagreement_all``), so the topics
      are ranked on one yardstick (``rank``, 1 = the most disagreeing);
    * ``kappa_binary`` and ``alpha``: the topic's own binary kappa and alpha (its own chance
      terms: NaN where the topic has one label on a side, or one value on both);
    * ``disagrees_most``: the topic's disagreement lies above ``disagreement_all`` (its whole
      interval): the topics where the judge and the humans part ways.

    Within one topic the only units are its pairs: each statistic's interval
    (``<statistic>_ci_low_pairs`` / ``_ci_high_pairs``) is a bootstrap over the topic's pairs
    (seeded; descriptive, as the label test's Wilson intervals: one assessor's pairs are not
    independent), ``degenerate_pairs`` its undefined draws."""
    same_scale = (human_scale.low, human_scale.high) == (judge_scale.low, judge_scale.high)
    if same_scale:
        values, kind = list(range(human_scale.low, human_scale.high + 1)), "ordinal"
        x, y = pairs["human"].to_numpy(dtype=int), pairs["judge"].to_numpy(dtype=int)
    else:
        values, kind = [0, 1], "nominal"
        x, y = human_scale.binary(pairs["human"]).to_numpy(), judge_scale.binary(pairs["judge"]).to_numpy()
    if not len(pairs):
        return pd.DataFrame(columns=TOPIC_COLUMNS)
    human_rel = human_scale.binary(pairs["human"]).to_numpy()
    judge_rel = judge_scale.binary(pairs["judge"]).to_numpy()
    grades = list(range(len(values)))
    index = {v: i for i, v in enumerate(values)}
    xi, yi = np.array([index[v] for v in x]), np.array([index[v] for v in y])
    counts = np.zeros((len(values), len(values)))
    np.add.at(counts, (xi, yi), 1)
    totals = counts.sum(axis=0) + counts.sum(axis=1)
    distance = alpha_distances(totals, values, kind)
    chance = float((np.outer(totals, totals) * distance).sum() / (totals.sum() * (totals.sum() - 1)))
    whole = 1 - float(alpha_from_counts(counts, values, kind))
    scaled = distance[xi, yi] / chance if chance > 0 else np.full(len(pairs), math.nan)
    rows = []
    for query, at in pd.Series(np.arange(len(pairs))).groupby(pairs["query_id"].to_numpy(), sort=False):
        at = at.to_numpy()
        n = len(at)
        times = query_resamples(n, resamples, seed)  # the topic's pairs resampled: the engine's draws
        # each pair's confusion cell (graded at the alpha level, and binary): a resample sums them
        one_hot = per_query_confusion(range(n), xi[at].tolist(), yi[at].tolist(), grades, grades)
        binary = per_query_confusion(range(n), human_rel[at].tolist(), judge_rel[at].tolist(), [0, 1], [0, 1])
        row = {
            "query_id": query,
            "pairs": n,
            "alpha_level": "ordinal" if same_scale else "binary",
            "agreement_binary": float(np.mean(human_rel[at] == judge_rel[at])),
            "disagreement": float(np.mean(scaled[at])),
            "disagreement_all": whole,
            "kappa_binary": float(kappa_from_counts(binary.sum(axis=0), 1.0 - np.eye(2))),
            "alpha": krippendorff_alpha(x[at], y[at], kind),
        }
        draws = {
            "disagreement": None,
            "kappa_binary": kappa_from_counts(np.einsum("bq,qij->bij", times, binary), 1.0 - np.eye(2)),
            "alpha": alpha_from_counts(np.einsum("bq,qij->bij", times, one_hot), values, kind),
        }
        row["degenerate_pairs"] = 0
        for name, drawn in draws.items():
            if drawn is None:
                found = mean_interval(scaled[at], resamples=resamples, seed=seed, level=level)
            else:
                found = interval(drawn, level)
            row[f"{name}_ci_low_pairs"], row[f"{name}_ci_high_pairs"] = found.low, found.high
            row["degenerate_pairs"] = max(row["degenerate_pairs"], found.degenerate)
        rows.append(row)
    table = pd.DataFrame(rows)
    table["disagrees_most"] = table["disagreement_ci_low_pairs"] > whole
    table = table.sort_values("disagreement", ascending=False, kind="stable").reset_index(drop=True)
    table.insert(1, "rank", np.arange(1, len(table) + 1))
    return table[TOPIC_COLUMNS]


TOPIC_COLUMNS = [
    "query_id",
    "rank",
    "pairs",
    "alpha_level",
    *(f"disagreement{end}" for end in ("", "_ci_low_pairs", "_ci_high_pairs")),
    "disagreement_all",
    "disagrees_most",
    "agreement_binary",
    *(f"{name}{end}" for name in ("kappa_binary", "alpha") for end in ("", "_ci_low_pairs", "_ci_high_pairs")),
    "degenerate_pairs",
]
"""The columns of :func:`topic_agreement`, in order."""


# ----------------------------------------------------------------------------- the audits, declared

CONFUSION_COLUMNS = ["dataset", "judge", "human_grade", "judge_grade", "pairs"]
"""The confusion matrices in long form (one row per cell, every grade of both scales), the
unwritten table behind the ``confusion`` figure."""


def confusion_matrices(cells: pd.DataFrame) -> dict[tuple[str, str], pd.DataFrame]:
    """The confusion matrix of every (dataset, judge), in the order of ``cells`` (the long form of
    :data:`CONFUSION_COLUMNS`): each as :func:`confusion` gives it."""
    matrices = {}
    for (dataset, judge), block in cells.groupby(["dataset", "judge"], sort=False):
        matrix = block.pivot(index="human_grade", columns="judge_grade", values="pairs")
        matrix.index.name, matrix.columns.name = "human", "judge"
        matrices[dataset, judge] = matrix
    return matrices


def _confusion_chart(cells: pd.DataFrame, png: str) -> None:
    from .figures import confusion_heatmaps  # matplotlib: only where the figure is drawn

    confusion_heatmaps(confusion_matrices(cells), png)


def _leniency_chart(rows: pd.DataFrame, png: str) -> None:
    from .figures import leniency_chart

    leniency_chart(rows, png)


@audit(
    "label_test",
    tables=[
        Table(
            "label_test",
            "Label test: each judge against the human labels, pair by pair "
            "(rates with 95% cluster-bootstrap intervals over queries and the counts they are shares of)",
            # no judge besides the humans: no row, and no scale to name the mean-grade columns by
            ["dataset", "judge"],
            view=[
                "judge",
                "kind",
                "pairs",
                "queries",
                "agreement_binary",
                "kappa_binary",
                "missed_failures",
                "missed_failure_rate",
                "false_alarms",
                "false_alarm_rate",
            ],
            counts=["pairs", "queries", "missed_failures", "false_alarms"],
        ),
        Table("confusion", "Confusion matrices", CONFUSION_COLUMNS, written=False),
    ],
    figures=[
        Figure("confusion", "confusion", _confusion_chart, caption="confusion", report="labels"),
        Figure("leniency", "label_test", _leniency_chart, caption="leniency", report="labels"),
    ],
    systems=False,
)
def audit_label_test(context: Context) -> dict[str, list]:
    """One dataset's ``label_test`` rows (:func:`label_test`) and confusion matrices in long form
    (:func:`confusion`): every judge but the humans against the human labels of the needed pairs."""
    rows, cells = [], []
    for judge in context.judges:
        both = aligned(context.human, context.data.labels[judge])
        human_scale, scale = context.scale(HUMAN), context.scale(judge)
        rows.append(
            {"judge": judge, "kind": context.data.judges[judge]["kind"], **label_test(both, human_scale, scale)}
        )
        matrix = confusion(both, human_scale, scale).rename_axis(index="human_grade", columns="judge_grade")
        cells.append(matrix.stack().rename("pairs").reset_index().assign(judge=judge)[CONFUSION_COLUMNS[1:]])
    return {"label_test": rows, "confusion": cells}


def _chart(topics: pd.DataFrame, png: str) -> None:
    from .figures import topic_agreement_chart  # matplotlib: only where the figure is drawn

    topic_agreement_chart(topics, png)


@audit(
    "topic_agreement",
    tables=[
        Table(
            "topic_agreement",
            "Agreement topic by topic: each judge's disagreement with the humans on each topic's pairs over "
            "the disagreement chance gives over all its pairs (Krippendorff's D_o / D_e: 0 agrees, 1 chance), the "
            "most disagreeing first; the topic's own binary kappa and alpha (95% bootstrap intervals over the "
            "topic's pairs, descriptive); disagrees_most: the whole interval above the judge's disagreement over "
            "all pairs",
            ["dataset", "judge", *TOPIC_COLUMNS],
            view=[
                "judge",
                "query_id",
                "rank",
                "pairs",
                IntervalCell("disagreement", "disagreement", "disagreement_ci_low_pairs", "disagreement_ci_high_pairs"),
                "disagrees_most",
                "agreement_binary",
                IntervalCell("kappa_binary", "kappa_binary", "kappa_binary_ci_low_pairs", "kappa_binary_ci_high_pairs"),
                IntervalCell("alpha", "alpha", "alpha_ci_low_pairs", "alpha_ci_high_pairs"),
                "alpha_level",
            ],
            counts=["rank", "pairs"],
            first=(
                "the topics where a judge disagrees more than over all its pairs",
                lambda rows: rows["disagrees_most"],
            ),
            report="labels",
        )
    ],
    figures=[Figure("topic_agreement", "topic_agreement", _chart)],
    systems=False,
)
def audit_topic_agreement(context: Context) -> dict[str, list]:
    """One dataset's ``topic_agreement`` rows: every judge but the humans against the humans on each
    topic's pairs (:func:`topic_agreement`)."""
    found = []
    for judge in context.judges:
        both = aligned(context.human, context.data.labels[judge])
        topics = topic_agreement(both, context.scale(HUMAN), context.scale(judge), seed=context.seed).assign(
            judge=judge
        )
        found.append(topics[["judge", *(c for c in topics.columns if c != "judge")]])
    return {"topic_agreement": found}
