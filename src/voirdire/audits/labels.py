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
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..judges import HUMAN, Scale
from ..stats import clustered_rate, kappa_intervals, kappas, wilson


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
    queries (``kappa_degenerate``: undefined draws). The same columns
    :func:`voirdire.paper.agreement_tables` gives; with no systems they are Table 2."""
    human = labels[HUMAN].merge(pairs[["query_id", "doc_id"]], on=["query_id", "doc_id"])
    rows = {}
    for judge in labels:
        if judge == HUMAN:
            continue
        both = labels[judge].merge(human, on=["query_id", "doc_id"], suffixes=("_judge", "_human"))
        point = kappas(both["relevance_human"], both["relevance_judge"], scales[HUMAN], scales[judge])
        found = kappa_intervals(both, scales[HUMAN], scales[judge], resamples=resamples, seed=seed)
        row = {"pairs_needed": len(pairs), "pairs_labelled": len(labels[judge]),
               "coverage": len(labels[judge]) / len(pairs) if len(pairs) else math.nan}  # fmt: skip
        for name in ("kappa_binary", "kappa_graded", "kappa_quadratic"):
            row |= {name: point[name], f"{name}_ci_low": found[f"{name}_ci_low"],
                    f"{name}_ci_high": found[f"{name}_ci_high"]}  # fmt: skip
        row["kappa_degenerate"] = found["kappa_degenerate"]
        rows[judge] = row
    return rows
