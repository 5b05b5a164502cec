"""Rewrite checks: flag rewrites that are not rewrites (empty, a refusal, a copy of the original,
far shorter or longer, or wrapped in chat such as "Sure! Here is ..."). Flagged rewrites are
reported, never silently dropped: the caller decides."""

from __future__ import annotations

import difflib
import math
import re

import pandas as pd

_APOSTROPHE = "['\u2019\u2018`]"
_REFUSAL = re.compile(
    r"(?:^|[.!?:]\s+|\n)[\s\"'*_>\u201c]*(?:"
    rf"I\s+can{_APOSTROPHE}?t|I\s+cannot|I\s+can\s+not|"
    rf"I{_APOSTROPHE}m\s+sorry|I\s+am\s+sorry|I\s+apologi[sz]e|"
    rf"I{_APOSTROPHE}m\s+(?:unable|not\s+able)|I\s+am\s+(?:unable|not\s+able)|"
    rf"I\s+won{_APOSTROPHE}t|I\s+will\s+not|As\s+an\s+AI)\b",
    re.IGNORECASE,
)
# characters: a refusal opens the answer, it is not deep in a passage
_REFUSAL_WINDOW = 200
_OPENING = re.compile(
    r"^[\s\"'*_]*(?:(?:sure|certainly|of\s+course|absolutely|okay|ok)\s*[!,.:]"
    rf"|here(?:\s+is|\s+are|{_APOSTROPHE}s)\b.*\b(?:rewrite|rewritten|version|text|"
    r"paraphrase|passage)\b.*:)",
    re.IGNORECASE,
)
_CLOSING = re.compile(
    r"^[\s\"'*_(]*(?:let\s+me\s+know\s+if|i\s+hope\s+this\s+helps|hope\s+this\s+helps|"
    r"feel\s+free\s+to|is\s+there\s+anything\s+else)\b",
    re.IGNORECASE,
)
_SENTENCES = re.compile(r"(?<=[.!?])\s+|\n+")
CHECKS = ("empty", "refusal", "copy", "length_out_of_range", "preamble")


def _normalised(text: str) -> str:
    return " ".join(text.split()).lower()


def _is_missing(text: object) -> bool:
    return text is None or (isinstance(text, float) and math.isnan(text))


def _last_sentence(text: str) -> str:
    sentences = [s for s in _SENTENCES.split(text.strip()) if s.strip()]
    return sentences[-1] if sentences else ""


def check_rewrite(
    original: str,
    rewrite: str | None,
    *,
    min_ratio: float = 0.5,
    max_ratio: float = 2.0,
    copy_similarity: float = 0.95,
) -> dict:
    """Is ``rewrite`` a usable rewrite of ``original``? Each check, and ``flagged`` if any.

    * ``empty``: missing or whitespace only. The other checks are then not applied (all
      false, ``length_ratio`` NaN): an empty answer is one failure, not five.
    * ``refusal``: "I can't", "I'm sorry", "As an AI", ... opening a sentence within the
      first 200 characters (straight or curly apostrophes, any case).
    * ``copy``: the same text after whitespace and case normalisation, or near it
      (difflib's similarity ratio >= ``copy_similarity``): the assistant changed nothing.
    * ``length_out_of_range``: words of the rewrite / words of the original outside
      [``min_ratio``, ``max_ratio``] (never when the original is empty: the ratio is NaN).
    * ``preamble``: a chat opening on the first line ("Sure!", "Here is the rewritten
      text:") or a chat closing as the last sentence ("Let me know if ...").
    """
    original = "" if _is_missing(original) else str(original)
    row = dict.fromkeys(CHECKS, False)
    row["length_ratio"] = math.nan
    if _is_missing(rewrite) or not str(rewrite).strip():
        row["empty"] = True
    else:
        rewrite = str(rewrite)
        row["refusal"] = bool(_REFUSAL.search(rewrite.strip()[:_REFUSAL_WINDOW]))
        a, b = _normalised(original), _normalised(rewrite)
        row["copy"] = bool(a) and (
            a == b or difflib.SequenceMatcher(None, a, b, autojunk=False).ratio() >= copy_similarity
        )
        words = len(original.split())
        if words:
            row["length_ratio"] = len(rewrite.split()) / words
            row["length_out_of_range"] = not min_ratio <= row["length_ratio"] <= max_ratio
        first_line = rewrite.strip().split("\n", 1)[0]
        row["preamble"] = bool(_OPENING.search(first_line) or _CLOSING.search(_last_sentence(rewrite)))
    row["flagged"] = any(row[c] for c in CHECKS)
    return {
        "empty": row["empty"],
        "refusal": row["refusal"],
        "copy": row["copy"],
        "length_ratio": row["length_ratio"],
        "length_out_of_range": row["length_out_of_range"],
        "preamble": row["preamble"],
        "flagged": row["flagged"],
    }


def check_rewrites(frame: pd.DataFrame, **options) -> pd.DataFrame:
    """:func:`check_rewrite` on every row of ``frame`` (doc_id, original, text), in order;
    ``reasons`` names the failed checks, comma-joined ("" for a clean rewrite)."""
    rows = []
    for doc_id, original, text in zip(frame["doc_id"], frame["original"], frame["text"], strict=True):
        row = {"doc_id": doc_id, **check_rewrite(original, text, **options)}
        row["reasons"] = ",".join(c for c in CHECKS if row[c])
        rows.append(row)
    columns = [
        "doc_id",
        "empty",
        "refusal",
        "copy",
        "length_ratio",
        "length_out_of_range",
        "preamble",
        "flagged",
        "reasons",
    ]
    return pd.DataFrame(rows, columns=columns)


def summarise_checks(checked: pd.DataFrame) -> dict:
    """Counts of flagged rewrites and of each failed check, and the median length ratio."""
    ratios = checked["length_ratio"].dropna()
    summary = {"rewrites": len(checked), "flagged": int(checked["flagged"].sum())}
    summary.update({c: int(checked[c].sum()) for c in CHECKS})
    summary["median_length_ratio"] = float(ratios.median()) if len(ratios) else math.nan
    return summary
