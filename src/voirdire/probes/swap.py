"""The swap test: one definition for PRP rankers, pairwise judges and result-list judges.

A pair (x, y) is asked twice: x shown first (answer ``ab``) and y shown first (answer
``ba``); an answer is ``"A"`` (the first shown), ``"B"`` or None (unparsed). A win counts
only if it survives the swap (x wins when ``ab == "A"`` and ``ba == "B"``); any other pair
is a tie, marked for review (a practitioners' checklist of LLM-judge
biases, 2025; a RAG retrieval evaluation, 2026). From a set of pairs:

* ``position_consistency``: the share of pairs answered in both orders whose verdict survives
  (in a RAG retrieval evaluation (2026) a swap test flipped about 81% of a judge's verdicts);
* ``first_position_win_rate``: the share of answered prompts won by the first-shown item
  (0.5 for a judge without position bias);
* ``tie_rate``: the share of all pairs with no surviving verdict (unparsed ones included);
* against a reference preference (human grades, or human nDCG@10 for lists):
  ``accuracy`` over surviving verdicts, and ``agreement_all`` over all pairs (ties count as
  misses);
* intervals (:func:`swap_intervals`): Wilson 95% intervals of the tie rate (over pairs) and of
  the first-position win rate (over answered prompts, taken as independent; Wilson 1927,
  statsmodels ``proportion_confint``), and the exact binomial test of the order-dependent
  pairs that picked the same position both times: ``order_dependent_first`` (the first shown
  both times) against ``order_dependent_second``, null 1/2 (no preference for A or B;
  ``position_p``, scipy ``binomtest``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import pandas as pd

FIRST, SECOND, TIE = "first", "second", "tie"


def swap_outcome(ab: str | None, ba: str | None) -> str:
    """``"first"`` if the item shown first in ``ab`` wins in both orders, ``"second"`` if the other
    does, ``"tie"`` otherwise (order-dependent or unparsed)."""
    if ab == "A" and ba == "B":
        return FIRST
    if ab == "B" and ba == "A":
        return SECOND
    return TIE


def swap_counts(answers: Iterable[tuple[str | None, str | None]]) -> dict[str, int]:
    """The swap test's counts over pairs, each given as its two answers ``(ab, ba)``; counts of
    several sets add up (a PRP ranker's queries), and :func:`swap_rates` turns them into rates."""
    pairs = list(answers)
    shown = [a for pair in pairs for a in pair if a is not None]
    both = [(ab, ba) for ab, ba in pairs if ab is not None and ba is not None]
    return {
        "pairs": len(pairs),
        "prompts": 2 * len(pairs),
        "answered": len(shown),
        "unparsed": 2 * len(pairs) - len(shown),
        "answered_both": len(both),
        "surviving": sum(swap_outcome(ab, ba) != TIE for ab, ba in both),
        "order_dependent": sum(swap_outcome(ab, ba) == TIE for ab, ba in pairs),
        "first_position_wins": sum(a == "A" for a in shown),
    }


def _share(part: float, whole: float) -> float:
    return part / whole if whole else math.nan


def swap_rates(counts: dict[str, int]) -> dict[str, float]:
    """Position consistency, first-position win rate and tie rate from :func:`swap_counts`."""
    return {
        "position_consistency": _share(counts.get("surviving", 0), counts.get("answered_both", 0)),
        "first_position_win_rate": _share(counts.get("first_position_wins", 0), counts.get("answered", 0)),
        "tie_rate": _share(counts.get("order_dependent", 0), counts.get("pairs", 0)),
    }


def swap_summary(answers: Iterable[tuple[str | None, str | None]]) -> dict[str, float | int]:
    """Counts and rates of a set of pairs."""
    counts = swap_counts(answers)
    return {**counts, **swap_rates(counts)}


def swap_intervals(
    answers: Iterable[tuple[str | None, str | None]], confidence: float = 0.95
) -> dict[str, float | int]:
    """Intervals and the position test of a set of pairs, each given as its two answers ``(ab, ba)``."""
    from scipy.stats import binomtest

    from ..stats import wilson

    pairs = list(answers)
    counts = swap_counts(pairs)
    first = sum(ab == "A" and ba == "A" for ab, ba in pairs)
    second = sum(ab == "B" and ba == "B" for ab, ba in pairs)

    tie_low, tie_high = wilson(counts["order_dependent"], counts["pairs"], level=confidence)
    win_low, win_high = wilson(counts["first_position_wins"], counts["answered"], level=confidence)
    return {
        "tie_rate_ci_low": tie_low, "tie_rate_ci_high": tie_high,
        "first_position_win_rate_ci_low": win_low, "first_position_win_rate_ci_high": win_high,
        "order_dependent_first": first, "order_dependent_second": second,
        "position_p": float(binomtest(first, first + second, 0.5).pvalue) if first + second else 1.0,
    }  # fmt: skip


INTERVAL_COLUMNS = ["tie_rate_ci_low", "tie_rate_ci_high", "first_position_win_rate_ci_low",
                    "first_position_win_rate_ci_high", "order_dependent_first", "order_dependent_second",
                    "position_p"]  # fmt: skip
"""The columns :func:`swap_intervals` adds to :func:`swap_table`."""


def swap_table(verdicts: pd.DataFrame, keys: Sequence[str] = ("dataset", "judge")) -> pd.DataFrame:
    """Swap figures per group of ``verdicts`` (one row per pair: ``ab``, ``ba``, and ``reference``:
    which item the humans prefer, ``"first"``/``"second"``, or None when they do not)."""
    columns = [*keys, "pairs", "prompts", "answered", "unparsed", "answered_both", "surviving", "order_dependent",
               "first_position_wins", "position_consistency", "first_position_win_rate", "tie_rate", "accuracy",
               "agreement_all", *INTERVAL_COLUMNS]  # fmt: skip
    rows = []
    for key, group in verdicts.groupby(list(keys), sort=True):
        answers = list(zip(group["ab"].where(group["ab"].notna(), None),
                           group["ba"].where(group["ba"].notna(), None), strict=True))  # fmt: skip
        outcome = pd.Series([swap_outcome(ab, ba) for ab, ba in answers], index=group.index)
        reference = group["reference"]
        scored = reference.notna()
        survived = scored & (outcome != TIE)
        right = (outcome == reference) & survived
        rows.append({
            **dict(zip(keys, key if isinstance(key, tuple) else (key,), strict=True)),
            **swap_summary(answers),
            "accuracy": right.sum() / survived.sum() if survived.any() else math.nan,
            "agreement_all": right.sum() / scored.sum() if scored.any() else math.nan,
            **swap_intervals(answers),
        })  # fmt: skip
    return pd.DataFrame(rows, columns=columns)


def preference(x: float, y: float) -> str | None:
    """Which of two reference scores is higher: ``"first"``, ``"second"``, or None when equal."""
    if x > y:
        return FIRST
    if y > x:
        return SECOND
    return None
