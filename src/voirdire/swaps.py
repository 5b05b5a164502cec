"""A pair asked in both orders: its outcome, and the counts and rates of a set of such pairs.

The swap test's one definition (:mod:`voirdire.probes.swap` builds its tables on it), shared by
the PRP rankers (:mod:`voirdire.rankers.llm`), the pairwise judges and the result-list judges.
An answer is ``"A"`` (the item shown first), ``"B"`` or None (unparsed); a pair is answered
twice, x shown first (``ab``) and y shown first (``ba``), and a win counts only if it survives
the swap. A leaf module: it imports nothing of voirdire, so a ranker reads the swap test without
importing the probes.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

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
