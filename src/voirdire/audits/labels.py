"""The label test: a judge's labels against the human labels, pair by pair.

Per judge: the graded and binary confusion matrices, agreement, *missed failures* (the human
says non-relevant, the judge relevant: leniency) and *false alarms* (the human says
relevant, the judge non-relevant), and the mean judge grade per human grade. Relevant means
grade >= the scale's binary threshold, each side with its own scale.

Each rate comes with its 95% Wilson score interval (Wilson 1927; statsmodels
``proportion_confint(method="wilson")``) and the count it is a share of: ``pairs`` for the
agreements, ``human_non_relevant`` for missed failures, ``human_relevant`` for false alarms.
Pairs are treated as independent; they cluster by query, so the intervals are a lower bound
on the uncertainty over topics.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from statsmodels.stats.proportion import proportion_confint

from ..judges import Scale
from ..stats import kappas


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


def wilson(successes: int, n: int, *, level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of a proportion (statsmodels); NaN for n = 0."""
    if n == 0:
        return math.nan, math.nan
    low, high = proportion_confint(successes, n, alpha=1 - level, method="wilson")
    return float(low), float(high)


def label_test(pairs: pd.DataFrame, human_scale: Scale, judge_scale: Scale, *, level: float = 0.95) -> dict:
    """One row of the label test for aligned pairs (see :func:`aligned`), rates with Wilson CIs."""
    n = len(pairs)
    human_rel = human_scale.binary(pairs["human"]).to_numpy()
    judge_rel = judge_scale.binary(pairs["judge"]).to_numpy()
    human_non = human_rel == 0
    row = {
        "pairs": n,
        "agreement_binary": float(np.mean(human_rel == judge_rel)) if n else math.nan,
        "agreement_graded": (
            float(np.mean(pairs["human"].to_numpy() == pairs["judge"].to_numpy()))
            if n and (human_scale.low, human_scale.high) == (judge_scale.low, judge_scale.high)
            else math.nan
        ),
        # the binary confusion matrix: tp, tn, and its two errors, named as practitioners' judge checklists name them
        "binary_tp": int(np.sum(~human_non & (judge_rel == 1))),
        "binary_tn": int(np.sum(human_non & (judge_rel == 0))),
        "missed_failures": int(np.sum(human_non & (judge_rel == 1))),
        "missed_failure_rate": float(np.mean(judge_rel[human_non] == 1)) if human_non.any() else math.nan,
        "false_alarms": int(np.sum(~human_non & (judge_rel == 0))),
        "false_alarm_rate": float(np.mean(judge_rel[~human_non] == 0)) if (~human_non).any() else math.nan,
    }
    same_scale = (human_scale.low, human_scale.high) == (judge_scale.low, judge_scale.high)
    counts = {
        "agreement_binary": (int(np.sum(human_rel == judge_rel)), n),
        "agreement_graded": (
            int(np.sum(pairs["human"].to_numpy() == pairs["judge"].to_numpy())),
            n if same_scale else 0,
        ),
        "missed_failure_rate": (row["missed_failures"], int(human_non.sum())),
        "false_alarm_rate": (row["false_alarms"], int((~human_non).sum())),
    }
    row["human_non_relevant"], row["human_relevant"] = int(human_non.sum()), int((~human_non).sum())
    for name, (successes, total) in counts.items():
        row[f"{name}_ci_low"], row[f"{name}_ci_high"] = wilson(successes, total, level=level)
    row.update(kappas(pairs["human"], pairs["judge"], human_scale, judge_scale))
    for grade in range(human_scale.low, human_scale.high + 1):
        at = pairs.loc[pairs["human"] == grade, "judge"]
        row[f"mean_judge_grade_at_human_{grade}"] = float(at.mean()) if len(at) else math.nan
    return row
