"""The Assistants experiment's tables (Balog, Metzler & Qin, SIGIR 2025, §4.3).

* Experiment 1 (Figure 4): :func:`label_shift`, the judge's labels of original against
  rewritten passages (the paired test of :func:`voirdire.stats.paired_shift`, pairs clustered
  by query).
* Experiments 2-3 (substitution): :func:`substitution`, each system's per-query nDCG@10
  before and after its passages are replaced by their rewrites (paired t-test over queries).
* Experiment 3 (Figure 5): :func:`score_shift`, the rankers' own scores of rewrite against
  original (a sign test with the query as the unit).

Every table that flags says how many tests its flag column stands on (``tests``: its rows
whose test is defined) and ``expected_false_flags`` (alpha x tests): what chance alone would
flag if no shift were real.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from ..stats import SHIFT_COLUMNS, direction, expected_false_flags, paired_shift, sign_flip_p, sign_test_p

# ----------------------------------------------------------------------------- experiment 1

_GROUP = ["dataset", "assistant", "judge"]


def _strata(block: pd.DataFrame) -> Iterator[tuple[str, pd.DataFrame]]:
    """The stratum "all", then each human grade present, in grade order."""
    yield "all", block
    for grade in sorted(block["human"].dropna().unique()):
        yield f"human={int(grade)}", block[block["human"] == grade]


def _per_stratum(
    frame: pd.DataFrame, group: list[str], columns: list[str], row: Callable[[pd.DataFrame], dict]
) -> pd.DataFrame:
    """One row per group and stratum: the group's keys, the stratum, then ``row`` of its pairs."""
    rows = []
    for key, block in frame.groupby(group, sort=False):
        for stratum, rows_in in _strata(block):
            rows.append(dict(zip(group, key, strict=True)) | {"stratum": stratum} | row(rows_in))
    return pd.DataFrame(rows, columns=columns)


def _count_tests(table: pd.DataFrame, p: str, alpha: float) -> pd.DataFrame:
    """``tests``: the rows whose ``p`` is defined (the family the flag stands on) and
    ``expected_false_flags``: alpha x tests."""
    tests = int(table[p].notna().sum())
    return table.assign(tests=tests, expected_false_flags=expected_false_flags(tests, alpha))


def _shift_row(block: pd.DataFrame, grades: Sequence[int], alpha: float) -> dict:
    labelled = block.dropna(subset=["original", "rewritten"])
    before = labelled["original"].to_numpy(dtype=float)
    after = labelled["rewritten"].to_numpy(dtype=float)
    row: dict = {"pairs": len(block), "unlabelled": len(block) - len(labelled)}
    for side, values in (("original", before), ("rewritten", after)):
        for g in grades:
            row[f"{side}_{g}"] = int(np.sum(values == g))
    row |= paired_shift(before, after, labelled["query_id"].tolist())
    row["significant"] = bool(row["shift_p"] < alpha)  # False for NaN
    row["direction"] = direction(row["significant"], row["mean_shift"])  # the sign of the tested statistic
    return row


def label_shift(labels: pd.DataFrame, *, alpha: float = 0.05, grades: Sequence[int] = (0, 1, 2, 3)) -> pd.DataFrame:
    """Experiment 1: the judge's labels of the original passages against its labels of the
    rewrites, per (dataset, assistant, judge) over all pairs and within each human grade.

    ``labels``: dataset, assistant, judge, query_id, doc_id, human, original, rewritten (NaN
    = no label or unparsed; such pairs count as ``unlabelled`` and are left out of the rest).
    ``original_g`` / ``rewritten_g``: label counts per grade; then the columns of
    :func:`voirdire.stats.paired_shift` with the pairs clustered by query (``SHIFT_COLUMNS``:
    n, queries, up, down, same, their shares, the mean shift with its cluster-bootstrap
    interval, ``shift_p``: the sign-flip test over queries of each query's summed shift, the
    clustered marginal homogeneity test, the descriptive pair-level sign test ``sign_p_pairs``).
    ``significant``: ``shift_p`` < ``alpha``; ``direction`` the sign of the mean shift that
    ``shift_p`` tests; ``tests``, ``expected_false_flags``: the rows tested and alpha x tests.
    """
    columns = [*_GROUP, "stratum", "pairs", "unlabelled"]
    columns += [f"{side}_{g}" for side in ("original", "rewritten") for g in grades]
    columns += [*SHIFT_COLUMNS, "significant", "direction", "tests", "expected_false_flags"]
    table = _per_stratum(labels, _GROUP, columns, lambda block: _shift_row(block, grades, alpha))
    return _count_tests(table, "shift_p", alpha)


LABEL_SHIFT_VIEW = [
    "judge",
    "stratum",
    "pairs",
    "unlabelled",
    "queries",
    "up",
    "down",
    "mean_shift",
    "shift_p",
    "significant",
    "direction",
    "tests",
]
"""The columns of :func:`label_shift` a person reads in the Markdown (the mean shift with its
interval in one cell; the table's title names the assistant); the CSV keeps every one."""


# ----------------------------------------------------------------------------- experiment 2

_PAIRED = ["dataset", "judge", "system", "query_id"]


def _order(*columns: pd.Series) -> dict:
    """Each value's position of first appearance across ``columns``."""
    values = dict.fromkeys(v for column in columns for v in column)
    return {v: i for i, v in enumerate(values)}


def _paired_t(after: np.ndarray, before: np.ndarray) -> tuple[float, float]:
    diff = after - before
    if len(diff) < 2:
        return math.nan, math.nan
    if not np.any(diff != 0):
        return 0.0, 1.0
    if np.allclose(diff, diff[0], rtol=0, atol=1e-12):
        # the same shift on every query: no variance, a certain difference
        return math.copysign(math.inf, float(diff.mean())), 0.0
    test = stats.ttest_rel(after, before)
    return float(test.statistic), float(test.pvalue)


def substitution(original: pd.DataFrame, rewritten: pd.DataFrame, *, alpha: float = 0.05) -> pd.DataFrame:
    """Experiments 2-3: each system's per-query nDCG@10 with its passages as retrieved and
    with them replaced by an assistant's rewrites, paired by (dataset, judge, system, query).

    Queries scored on one side only are left out (``queries_dropped``). Only the datasets an
    assistant rewrote are compared for it. ``delta`` = rewritten - original; ``t``, ``p``:
    paired t-test (all differences zero: t = 0, p = 1; one shift on every query: t = ±inf,
    p = 0; fewer than two queries: NaN). Rows follow the input order of datasets, assistants,
    judges and systems. ``tests``: the rows with a defined p (one family: the table);
    ``expected_false_flags``: alpha x tests.
    """
    columns = [
        "dataset",
        "assistant",
        "judge",
        "system",
        "queries",
        "queries_dropped",
        "ndcg_original",
        "ndcg_rewritten",
        "delta",
        "t",
        "p",
        "significant",
        "tests",
        "expected_false_flags",
    ]
    orders = {name: _order(original[name], rewritten[name]) for name in ("dataset", "judge", "system")}
    orders["assistant"] = _order(rewritten["assistant"])
    rows = []
    for assistant, after in rewritten.groupby("assistant", sort=False):
        before = original[original["dataset"].isin(set(after["dataset"]))]
        merged = before[[*_PAIRED, "ndcg"]].merge(
            after[[*_PAIRED, "ndcg"]],
            on=_PAIRED,
            how="outer",
            suffixes=("_original", "_rewritten"),
        )
        for (dataset, judge, system), block in merged.groupby(_PAIRED[:3], sort=False):
            both = block.dropna(subset=["ndcg_original", "ndcg_rewritten"])
            x = both["ndcg_rewritten"].to_numpy(dtype=float)
            y = both["ndcg_original"].to_numpy(dtype=float)
            t, p = _paired_t(x, y)
            row = {
                "dataset": dataset,
                "assistant": assistant,
                "judge": judge,
                "system": system,
                "queries": len(both),
                "queries_dropped": len(block) - len(both),
                "ndcg_original": float(y.mean()) if len(y) else math.nan,
                "ndcg_rewritten": float(x.mean()) if len(x) else math.nan,
            }
            row["delta"] = row["ndcg_rewritten"] - row["ndcg_original"]
            row |= {"t": t, "p": p, "significant": bool(p < alpha)}
            rows.append(row)
    table = _count_tests(pd.DataFrame(rows, columns=columns), "p", alpha)
    if table.empty:
        return table
    rank = pd.DataFrame({name: table[name].map(order) for name, order in orders.items()})
    keys = ["dataset", "assistant", "judge", "system"]
    return table.loc[rank.sort_values(keys, kind="mergesort").index].reset_index(drop=True)


SUBSTITUTION_VIEW = [
    "judge",
    "system",
    "queries",
    "queries_dropped",
    "ndcg_original",
    "ndcg_rewritten",
    "delta",
    "p",
    "significant",
    "tests",
]
"""The columns of :func:`substitution` a person reads in the Markdown; the CSV keeps every one
(``t``, ``expected_false_flags``, the passages substituted and in the pool)."""


# ----------------------------------------------------------------------------- experiment 3

_RANKER = ["dataset", "assistant", "ranker"]


def _within(diff: np.ndarray, tolerance: float) -> np.ndarray:
    """|diff| <= tolerance, with room for float rounding (0.51 - 0.50 is not above 0.01)."""
    return np.abs(diff) <= tolerance * (1 + 1e-9) + 1e-12


def _score_row(block: pd.DataFrame, tolerance: float, alpha: float) -> dict:
    scored = block.dropna(subset=["original", "rewritten"])
    diff = scored["rewritten"].to_numpy(dtype=float) - scored["original"].to_numpy(dtype=float)
    n = len(diff)
    within = _within(diff, tolerance)
    sign = np.where(within, 0, np.sign(diff))  # +1 higher, -1 lower, 0 a tie
    higher, lower = int(np.sum(sign > 0)), int(np.sum(sign < 0))
    totals = scored.assign(sign=sign).groupby("query_id", sort=False)["sign"].sum().to_numpy(dtype=float)
    p = sign_flip_p(totals) if n else math.nan  # the query is the unit: its higher - lower, sign-flipped
    significant = bool(p < alpha)  # False for NaN
    return {
        "pairs": len(block),
        "unscored": len(block) - n,
        "n": n,
        "queries": len(totals),
        "mean_diff": float(diff.mean()) if n else math.nan,
        "median_diff": float(np.median(diff)) if n else math.nan,
        "within_tolerance": float(within.mean()) if n else math.nan,
        "higher": higher,
        "lower": lower,
        "shift_p": float(p),
        "sign_p_pairs": sign_test_p(higher, lower) if n else math.nan,
        "significant": significant,
        "direction": direction(significant, higher - lower),  # the sign of the tested statistic
    }


def score_shift(scores: pd.DataFrame, *, tolerance: float = 0.01, alpha: float = 0.05) -> pd.DataFrame:
    """Experiment 3: rewritten - original ranker score per pair, per (dataset, assistant,
    ranker) over all pairs and within each human grade.

    Differences within ±``tolerance`` are ties; a pair scored ``higher`` counts +1, ``lower``
    -1. ``shift_p``: the two-sided sign-flip test over queries of each query's higher - lower
    (a sign test with the query as the unit: pairs of one query share a topic); ``direction``
    is the side that wins when it is significant. ``sign_p_pairs``: the exact sign test over
    pairs, every pair counted as independent (descriptive, not the flag). Pairs with a missing
    score count as ``unscored``. ``tests``, ``expected_false_flags``: the rows tested and alpha x
    tests.
    """
    columns = [
        *_RANKER,
        "stratum",
        "pairs",
        "unscored",
        "n",
        "queries",
        "mean_diff",
        "median_diff",
        "within_tolerance",
        "higher",
        "lower",
        "shift_p",
        "sign_p_pairs",
        "significant",
        "direction",
        "tests",
        "expected_false_flags",
    ]
    table = _per_stratum(scores, _RANKER, columns, lambda block: _score_row(block, tolerance, alpha))
    return _count_tests(table, "shift_p", alpha)


SCORE_SHIFT_VIEW = [
    "ranker",
    "stratum",
    "pairs",
    "unscored",
    "queries",
    "mean_diff",
    "higher",
    "lower",
    "shift_p",
    "significant",
    "direction",
    "tests",
]
"""The columns of :func:`score_shift` a person reads in the Markdown; the CSV keeps every one."""
