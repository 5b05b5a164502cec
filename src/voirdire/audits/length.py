"""Length and Simpson's paradox (seed 004): does a judge reward longer passages?

For every pair both the human and the judge labelled: the passage length in words, the
judge's grade and the human grade. Long passages may be more often relevant, so the overall
length-grade correlation mixes relevance with length. The bias is the correlation *within*
each human grade (length should not move the judge's grade when relevance is fixed); the
overall one can even have the opposite sign (Simpson's paradox). Spearman correlations
(scipy). The within-grade figure pools the grades: lengths and judge grades are ranked
within each human grade and centred there, then correlated (a stratified Spearman), with
its p-value; a judge is flagged as length-biased when that p < ``alpha``.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import stats


def with_lengths(pairs: pd.DataFrame, texts: dict[str, str]) -> pd.DataFrame:
    """Aligned pairs (query_id, doc_id, human, judge) with the passage length in words."""
    out = pairs.copy()
    out["words"] = [len(texts[d].split()) for d in out["doc_id"]]
    return out


def _spearman(x: pd.Series, y: pd.Series) -> float:
    if len(x) < 3 or x.nunique() < 2 or y.nunique() < 2:
        return math.nan
    return float(stats.spearmanr(x, y).statistic)


def length_bias(pairs: pd.DataFrame, alpha: float = 0.01) -> dict:
    """Overall vs within-human-grade correlation of passage length and judge grade."""
    row: dict = {"pairs": len(pairs), "rho_overall": _spearman(pairs["words"], pairs["judge"])}
    for grade, block in pairs.groupby("human"):
        row[f"rho_within_human_{grade}"] = _spearman(block["words"], block["judge"])
    groups = pairs.groupby("human")
    words = groups["words"].rank() - groups["words"].rank().groupby(pairs["human"]).transform("mean")
    grades = groups["judge"].rank() - groups["judge"].rank().groupby(pairs["human"]).transform("mean")
    if len(pairs) >= 3 and words.std() > 0 and grades.std() > 0:
        test = stats.pearsonr(words, grades)
        row["rho_within"], row["p_within"] = float(test.statistic), float(test.pvalue)
    else:
        row["rho_within"] = row["p_within"] = math.nan
    row["length_biased"] = bool(row["p_within"] < alpha) if not math.isnan(row["p_within"]) else False
    row["simpson"] = bool(
        row["length_biased"] and not math.isnan(row["rho_overall"])
        and np.sign(row["rho_within"]) != np.sign(row["rho_overall"])
    )  # fmt: skip
    return row


def _deciles(words: pd.Series) -> pd.Series:
    return pd.qcut(words.rank(method="first"), q=min(10, len(words)), labels=False) + 1


def by_decile(pairs: pd.DataFrame) -> pd.DataFrame:
    """Mean judge grade by length decile: over all pairs, and within each human grade (deciles
    of the lengths of that grade's passages, so relevance is held fixed)."""
    columns = {"all": pairs.groupby(_deciles(pairs["words"]))["judge"].mean()}
    for grade, block in pairs.groupby("human"):
        columns[f"human_{grade}"] = block.groupby(_deciles(block["words"]))["judge"].mean()
    frame = pd.DataFrame(columns)
    frame.index.name = "decile"
    return frame.reset_index()
