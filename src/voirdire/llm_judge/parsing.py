"""Reading a grade out of a judge's answer: one strict format, a few fallbacks, or *unparsed*.

The strict format is the default prompt's last line, ``##final score: N``. Fallbacks are
tried in order only when it is absent; each is named, so how often a judge needed one is
counted. An answer that matches nothing, gives a grade outside the judge's scale, or states
two different strict grades is *unparsed*: it is never turned into 0 (UMBRELA's own parser
does that, and it biases every downstream number).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

STRICT = re.compile(r"##\s*final\s+score\s*:\s*(-?\d+)", re.IGNORECASE)
FALLBACKS: tuple[tuple[str, re.Pattern[str]], ...] = (
    # "Final score: 2", "**Final Score** = 2", "final score 2"
    ("final-score", re.compile(r"final\s+score\W{0,6}(-?\d+)", re.IGNORECASE)),
    # "O = 2", "O: 2" (the overall grade of the prompt's M/T/O steps)
    ("overall", re.compile(r"(?:^|\n)\s*\W{0,2}O\W{0,2}\s*[:=]\s*(-?\d+)")),
    # the whole answer is one number, e.g. "2" or "2."
    ("bare-number", re.compile(r"^\W*(-?\d+)\W*$")),
)
UNPARSED = "unparsed"


@dataclass(frozen=True)
class Parsed:
    label: int | None
    rule: str  # "strict", a fallback name, or "unparsed"
    reason: str = ""

    @property
    def ok(self) -> bool:
        return self.label is not None


def parse_grade(text: str | None, low: int = 0, high: int = 3) -> Parsed:
    """The grade stated in ``text``, or an explicit unparsed outcome with a reason."""
    if not text or not text.strip():
        return Parsed(None, UNPARSED, "empty answer")
    strict = {int(m) for m in STRICT.findall(text)}
    if len(strict) > 1:
        return Parsed(None, UNPARSED, f"conflicting final scores {sorted(strict)}")
    if strict:
        return _in_scale(strict.pop(), "strict", low, high)
    for name, pattern in FALLBACKS:
        found = {int(m) for m in pattern.findall(text.strip())}
        if len(found) == 1:
            return _in_scale(found.pop(), name, low, high)
        if len(found) > 1:
            return Parsed(None, UNPARSED, f"{name}: conflicting grades {sorted(found)}")
    return Parsed(None, UNPARSED, "no grade found")


def _in_scale(value: int, rule: str, low: int, high: int) -> Parsed:
    if low <= value <= high:
        return Parsed(value, rule)
    return Parsed(None, UNPARSED, f"{rule}: grade {value} outside {low}..{high}")
