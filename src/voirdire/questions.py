"""The verdict's questions and their rules: "can I trust this judge?" asked one question at a time.

Each *question* declares itself here or beside its audit (as ir_measures registers a measure;
length, drift and circular use in :mod:`voirdire.audits`, reranking too): its name, what it
asks, the table it reads (a name :class:`voirdire.layout.Layout` places), what the audit needs
to run (labels, texts, runs, families, reruns, a probe), its rule in words, the effect it is
meant to find (the power behind a pass), and the function that turns the table's rows of one
judge into a :class:`Cell`. :mod:`voirdire.verdict` lays the cells out (table, page, sentence).

**One error budget per judge.** Every question that can flag gives a p-value (one-sided where
its flag is: a rise of the grade, a preference for its own family, more reversed pairs than
chance); a question made of several tests (reruns, padding conditions, gamed systems, prompts)
gives the smallest p of them times their number (Bonferroni, Holm's first step). A judge's
questions are one family: :func:`error_budget` adjusts their p-values by Holm's step-down
(statsmodels), so a judge free of every bias the audits look for is flagged anywhere with
probability at most alpha (5%), whatever the number of questions asked of it.

A cell reads:

* **flag**: the question's own condition holds (the effect points the way the rule flags and
  clears its stated minimum) and its Holm-adjusted p is below alpha;
* **inconclusive**, with the reason: the p was below alpha alone but not within the judge's
  budget; or the interval straddles the rule's threshold (labels); or a pass would only mean
  no power: the power to find the question's stated effect at this sample size, at the
  budget's strictest level (alpha / tests), is below 0.8 and the interval does not exclude
  that effect; or the question has no null here
  (a persona without a rerun);
* **pass**: the rest; **n/a** with the reason it could not be asked; **info**: reported, no
  flag rule (circular use).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from .stats.leaderboard import MIN_USER_SYSTEMS

PASS, FLAG, NA, INFO, INCONCLUSIVE = "pass", "flag", "na", "info", "inconclusive"
"""The statuses of a cell, as ``verdict.csv`` writes them (``na``, not "n/a", which pandas reads as missing)."""
STATUSES = (FLAG, INCONCLUSIVE, PASS, INFO, NA)
POWER = 0.8
"""A pass stands where the question could find its stated effect with at least this power."""

NO_SYSTEMS = "no systems: the config lists none (systems:), so only the label sets are audited"
"""Why what ranks or scores systems has no result when ``systems:`` is left out: the n/a of every
question that needs ``runs``, and the tables and audits of systems, which have no rows."""

KAPPA_FLOOR = 0.4
"""Binary kappa below this is less than "moderate" agreement (Landis & Koch, 1977)."""
RESOLVED_TAU = 0.5
"""Below this reference tau (what an unbiased judge with the judge's own noise reaches), the
judge's noise alone scrambles the systems' order: no ordering question can be answered."""


@dataclass(frozen=True)
class Cell:
    """One answer: ``status``; the effect and its interval; ``p`` the question's p-value for the
    judge's error budget (NaN: the question tests nothing) and ``signal`` whether the effect
    points the way the rule flags and clears its minimum; ``se`` the standard error the power
    is read from; ``tests`` behind the question; ``reason`` of an n/a or an inconclusive; a
    short ``detail``. :func:`error_budget` adds ``p_holm``, ``family`` (the judge's tested
    questions), ``power`` and ``chance`` (the judge's chance of any false flag, at most)."""

    status: str
    effect: float = math.nan
    low: float = math.nan
    high: float = math.nan
    tests: int | None = None
    chance: float | None = None
    reason: str = ""
    detail: str = ""
    p: float = math.nan
    signal: bool = False
    se: float = math.nan
    p_holm: float = math.nan
    family: int | None = None
    power: float = math.nan

    def text(self) -> str:
        """The cell as a person reads it: ``+0.210 [+0.150, +0.270] flag (p 0.0004, Holm over 7:
        0.0028)``, ``inconclusive: power 0.39 ...``, ``n/a: no passage texts``."""
        if self.status == NA:
            return f"n/a: {self.reason}"
        parts = [_effect(self.effect, self.low, self.high)] if not math.isnan(self.effect) else []
        word = self.status
        if not math.isnan(self.p) and self.status in (FLAG, PASS, INCONCLUSIVE):
            tests = f"{self.tests} tests, " if self.tests and self.tests > 1 else ""
            holm = f", Holm over {self.family}: {_p(self.p_holm)}" if self.family and self.family > 1 else ""
            word += f" ({tests}p {_p(self.p)}{holm})"
        if self.status == INCONCLUSIVE and self.reason:
            word += f": {self.reason}"
        parts.append(word)
        if self.detail:
            parts.append(f"- {self.detail}")
        return " ".join(parts)


def _p(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value:.2g}" if value >= 1e-4 else "<0.0001"


def _effect(value: float, low: float, high: float) -> str:
    text = f"{value:+.3f}" if abs(value) < 10 else f"{value:.0f}"
    if not (math.isnan(low) or math.isnan(high)):
        text += f" [{low:+.3f}, {high:+.3f}]"
    return text


@dataclass(frozen=True)
class Question:
    """A verdict column: what it asks, the table it reads (and ``also`` the tables it reads from
    ``context``), what its audit needs, its flag rule in words, the effect a pass must have had
    the power to find (``effect`` in the cell's unit, ``effect_words`` as a person says it;
    ``sided``: "greater" or "two-sided"), and ``answer(rows, judge, context)`` -> :class:`Cell`
    (``rows``: the table's rows of this dataset, empty when the table is absent; ``context``:
    every table of the dataset)."""

    name: str
    asks: str
    table: str
    needs: tuple[str, ...]
    rule: str
    answer: Callable[[pd.DataFrame, str, Mapping[str, pd.DataFrame]], Cell]
    absent: str = "not configured"
    also: tuple[str, ...] = ()
    effect: float | None = None
    effect_words: str = ""
    sided: str = "greater"

    @property
    def reads(self) -> tuple[str, ...]:
        """Every table the answer reads: its own first."""
        return (self.table, *self.also)


QUESTIONS: dict[str, Question] = {}

ORDER = (
    "labels",
    "leaderboard",
    "decisions",
    "oracles",
    "own_family",
    "length",
    "drift",
    "circular_use",
    "padding",
    "injection",
    "gameable",
    "position",
    "persona_prompt",
)
"""The verdict's columns (and the report's categories) in this order, whichever module declares
the question (here, or beside its audit: :mod:`voirdire.audits.registry` imports those modules
after this one, in the order of their file names); a question not named here follows them, in
the order it is declared."""


def question(name: str, *, asks: str, table: str, needs: Sequence[str], rule: str, **options):
    """Declare a verdict question (a decorator of its answer function); ``options``: the rest of
    :class:`Question`'s fields (absent, also, effect, effect_words, sided). :data:`QUESTIONS` stays
    in :data:`ORDER`."""

    def register(answer: Callable[[pd.DataFrame, str, Mapping[str, pd.DataFrame]], Cell]):
        options["also"] = tuple(options.get("also", ()))
        QUESTIONS[name] = Question(name, asks, table, tuple(needs), rule, answer, **options)
        # sorted in place (verdict.py and the report hold this dict); stable: the rest as declared
        ordered = sorted(QUESTIONS.items(), key=lambda item: ORDER.index(item[0]) if item[0] in ORDER else len(ORDER))
        QUESTIONS.clear()
        QUESTIONS.update(ordered)
        return answer

    return register


# ----------------------------------------------------------------------------- reading rows


def _rows(frame: pd.DataFrame, judge: str, column: str = "judge") -> pd.DataFrame:
    return frame[frame[column] == judge] if len(frame) and column in frame else frame.iloc[0:0]


def _num(row: Mapping, name: str) -> float:
    value = row.get(name, math.nan)
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def _true(value) -> bool:
    """A flag column as written to CSV and read back (bool, "True", "true", 1)."""
    return str(value).strip().lower() in ("true", "1", "1.0")


def _reason(row: Mapping) -> str | None:
    reason = row.get("reason")
    return None if reason is None or (isinstance(reason, float) and math.isnan(reason)) or reason == "" else str(reason)


def _primary(frame: pd.DataFrame) -> pd.DataFrame:
    """Table 2's rows of the first (primary) measure."""
    if not len(frame) or "measure" not in frame:
        return frame
    return frame[frame["measure"] == frame["measure"].iloc[0]]


def _table2_row(rows: pd.DataFrame, judge: str) -> dict | None:
    """The judge's Table 2 row of the primary measure, or None."""
    found = _rows(_primary(rows), judge)
    return found.iloc[0].to_dict() if len(found) else None


judge_rows, number = _rows, _num
"""What a question declared beside its audit (:mod:`voirdire.audits.registry`) reads its rows with."""


def _se(low: float, high: float) -> float:
    """The standard error a 95% interval implies (its width over 2 x 1.96)."""
    return (high - low) / (2 * 1.959964) if not (math.isnan(low) or math.isnan(high)) else math.nan


def _one_sided(p_two: float, effect: float) -> float:
    """The one-sided p (H1: effect > 0) of a symmetric two-sided test's p."""
    if math.isnan(p_two) or math.isnan(effect):
        return math.nan
    return p_two / 2 if effect > 0 else 1 - p_two / 2


def _bonferroni_min(p_values: Sequence[float]) -> tuple[float, int]:
    """The smallest defined p times the number of defined tests (at most 1), and that number."""
    p = [v for v in p_values if not math.isnan(v)]
    return (min(1.0, min(p) * len(p)) if p else math.nan), len(p)


standard_error, bonferroni_min = _se, _bonferroni_min
"""What a question declared beside its audit reads its interval's standard error and its tests' p with."""


# ----------------------------------------------------------------------------- the questions


@question(
    "labels",
    asks="Do its labels agree with the humans'?",
    table="table2",
    needs=("labels",),
    rule=f"flag when binary kappa is below {KAPPA_FLOOR} (one-sided, from its bootstrap interval); "
    f"inconclusive when the interval straddles {KAPPA_FLOOR}",
    also=("label_test",),
)
def _labels(rows, judge, context):
    found = _rows(_primary(rows), judge)
    if not len(found):
        return Cell(NA, reason="no labels of the needed pairs")
    row = found.iloc[0].to_dict()
    kappa, low, high = _num(row, "kappa_binary"), _num(row, "kappa_binary_ci_low"), _num(row, "kappa_binary_ci_high")
    if math.isnan(kappa):
        return Cell(NA, reason="kappa undefined (one grade on a side)")
    test = _rows(context.get("label_test", pd.DataFrame()), judge)
    detail = ""
    if len(test):
        t = test.iloc[0].to_dict()
        detail = f"missed failures {_num(t, 'missed_failure_rate'):.2f}, false alarms {_num(t, 'false_alarm_rate'):.2f}"
    for alpha in ("alpha_ordinal", "alpha_binary"):  # Krippendorff's, as challenges rank label sets beside kappa
        if not math.isnan(_num(row, alpha)):
            name = alpha.replace("_", " ")
            found_alpha = _effect(_num(row, alpha), _num(row, f"{alpha}_ci_low"), _num(row, f"{alpha}_ci_high"))
            detail = f"{name} {found_alpha}" + (f"; {detail}" if detail else "")
            break
    se = _se(low, high)
    from scipy.stats import norm  # as _power reads the same normal approximation

    p = float(norm.cdf((kappa - KAPPA_FLOOR) / se)) if se > 0 else (0.0 if high < KAPPA_FLOOR else 1.0)
    straddles = low < KAPPA_FLOOR <= high
    return Cell(
        INCONCLUSIVE if straddles else PASS,
        kappa,
        low,
        high,
        p=p,
        signal=kappa < KAPPA_FLOOR,
        detail=detail,
        reason=f"the interval straddles {KAPPA_FLOOR}" if straddles else "",
    )


def _user_systems(row: Mapping, suffix: str) -> int:
    value = _num(row, f"systems_user{suffix}")
    return 0 if math.isnan(value) else int(value)


def _suffix(row: Mapping, column: str) -> str:
    return "_vs_pool" if f"{column}_vs_pool" in row else ""


@question(
    "leaderboard",
    asks="Does it order the systems as the humans do?",
    table="table2",
    needs=("runs",),
    rule="over the systems you brought (oracles and swaps left out), flag when tau against human@pool lies "
    "below what an unbiased judge with this judge's own per-query noise reaches (one-sided: both sides' "
    "deviations resampled by whole queries, the humans' means shrunk to their real spread); inconclusive "
    "where that reference is below 0.5; n/a below 3 systems",
    absent="no systems",
)
def _leaderboard(rows, judge, context):
    row = _table2_row(rows, judge)
    if row is None:
        return Cell(NA, reason="no systems scored")
    suffix = _suffix(row, "tau_user")
    if f"tau_user{suffix}" not in row:
        return Cell(NA, reason="Table 2 has no tau over your own systems (a table of an older version)")
    systems = _user_systems(row, suffix)
    if systems < MIN_USER_SYSTEMS:
        return Cell(
            NA, reason=f"{systems} system(s) of your own (oracles and swaps left out); tau needs {MIN_USER_SYSTEMS}"
        )
    tau, null = _num(row, f"tau_user{suffix}"), _num(row, f"tau_user_null{suffix}")
    if math.isnan(tau):
        return Cell(NA, reason="tau undefined (the judge ties every system)")
    low, high = _num(row, f"tau_user_ci_low{suffix}"), _num(row, f"tau_user_ci_high{suffix}")
    detail = f"{systems} systems of your own; an unbiased judge with its noise reaches tau {null:+.3f}"
    every = _num(row, f"tau_all{suffix}")
    if not math.isnan(every):
        detail += f"; every system, oracles included: {every:+.3f}"
    unresolved = null < RESOLVED_TAU
    return Cell(
        INCONCLUSIVE if unresolved else PASS,
        tau,
        low,
        high,
        p=_num(row, f"tau_user_p{suffix}"),
        signal=tau < null,
        detail=detail,
        reason=f"its own noise scrambles these systems (an unbiased judge with it reaches tau {null:+.2f}): "
        "it cannot tell them apart"
        if unresolved
        else "",
    )


@question(
    "decisions",
    asks="Does it see the same differences between systems?",
    table="table2",
    needs=("runs",),
    rule="over the systems you brought, flag when more pairs are reversed (ordered the other way round, with "
    "a gap that differs significantly from human@pool's) than an unbiased judge's reversals reach: each "
    "query's judge - human@pool vector sign-flipped across every system at once",
    absent="no systems",
)
def _decisions(rows, judge, context):
    row = _table2_row(rows, judge)
    if row is None:
        return Cell(NA, reason="no systems scored")
    suffix = _suffix(row, "reversed_user")
    if f"reversed_user{suffix}" not in row:
        return Cell(NA, reason="Table 2 has no reversals among your own systems (a table of an older version)")
    systems = _user_systems(row, suffix)
    if systems < MIN_USER_SYSTEMS:
        return Cell(
            NA,
            reason=f"{systems} system(s) of your own (oracles and swaps left out); the count's null "
            f"needs {MIN_USER_SYSTEMS}",
        )
    pairs = int(_num(row, f"pairs_user{suffix}"))
    reversed_ = int(_num(row, f"reversed_user{suffix}"))
    expected = _num(row, f"reversed_user_expected{suffix}")
    detail = f"{reversed_} of {pairs} pairs of your {systems} systems reversed (an unbiased judge: {expected:.1f})"
    every = _num(row, f"disagreements_reversed{suffix}")
    if not math.isnan(every):
        detail += f"; every system, oracles included: {int(every)} of {int(_num(row, 'pairs_of_systems'))}"
    return Cell(PASS, p=_num(row, f"reversed_user_p{suffix}"), signal=reversed_ > 0, tests=pairs, detail=detail)


@question(
    "oracles",
    asks="Does the best oracle keep its place?",
    table="table1",
    needs=("runs",),
    rule="flag when a system the humans rank below the best oracle passes it under the judge, significantly "
    "by the judge's own paired test (Bonferroni over the passes)",
    absent="no oracle among the systems",
    also=("significance",),
)
def _oracles(rows, judge, context):
    oracles = [s for s in context.get("_oracles", []) if len(rows) and s in set(rows["system"])]
    if not len(rows) or judge not in rows or not oracles:
        return Cell(NA, reason="no oracle among the systems" if len(rows) else "no systems scored")
    table = rows[rows["measure"] == rows["measure"].iloc[0]].set_index("system")
    best = max(oracles, key=lambda s: table.loc[s, "human"])
    under = table[judge].sort_values(ascending=False)
    rank = int(list(under.index).index(best)) + 1
    passing = [s for s in under.index[: rank - 1] if table.loc[s, "human"] < table.loc[best, "human"]]
    significance = context.get("significance", pd.DataFrame())
    sig = _rows(_primary(significance), judge) if len(significance) else significance
    p_values = []
    for system in passing:
        pair = (
            sig[
                ((sig["system_a"] == best) & (sig["system_b"] == system))
                | ((sig["system_a"] == system) & (sig["system_b"] == best))
            ]
            if len(sig)
            else sig
        )
        p_values.append(
            float(pair["p_judge"].iloc[0])
            if len(pair) and "p_judge" in pair
            else float(pair["p_judge_adjusted"].iloc[0])
            if len(pair)
            else math.nan
        )
    p, tests = _bonferroni_min(p_values)
    detail = f"{best} is {_ordinal(rank)} of {len(under)}"
    if passing:
        detail += f"; passed by {', '.join(passing)}"
    return Cell(PASS, p=1.0 if not passing else p, signal=bool(passing), tests=tests or None, detail=detail)


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


@question(
    "own_family",
    asks="Does it favour its own model family's systems?",
    table="self_preference",
    needs=("labels", "runs", "families"),
    rule="flag when the within-grade preference for its family's documents (strata: query x human grade x "
    "how many other systems retrieved the document) is positive, one-sided sign-flip p over queries, and "
    "beyond every neutral family's placebo",
    effect=0.2,
    effect_words="a preference of +0.2 grade",
)
def _own_family(rows, judge, context):
    found = _rows(rows, judge)
    if not len(found):
        return Cell(NA, reason="no family declared")
    row = found.iloc[0].to_dict()
    value = _num(row, "within_grade")
    if math.isnan(value):
        return Cell(NA, reason=_reason(row) or "undefined")
    low, high = _num(row, "within_grade_ci_low"), _num(row, "within_grade_ci_high")
    placebo = row.get("beyond_placebo")
    known = placebo is not None and not (isinstance(placebo, float) and math.isnan(placebo)) and placebo != ""
    beyond = _true(placebo) if known else True  # no neutral family: the test alone decides
    detail = (
        "no neutral family for a placebo"
        if not known
        else ""
        if beyond
        else (f"not beyond the placebo ({row.get('placebo_max_family')} reaches {_num(row, 'placebo_max'):+.3f})")
    )
    return Cell(
        PASS,
        value,
        low,
        high,
        p=_num(row, "within_grade_p"),
        signal=value > 0 and beyond,
        se=_se(low, high),
        detail=detail,
    )


def _shift_question(rows, judge, what):
    found = _rows(rows, judge)
    if "human" in found:
        found = found[found["human"].astype(str) == "all"]
    if not len(found):
        return Cell(NA, reason=f"the {what} probe did not ask this judge (it reads no texts, or is not configured)")
    one_sided = [_one_sided(_num(r, "shift_p"), _num(r, "mean_shift")) for r in found.to_dict("records")]
    p, tests = _bonferroni_min(one_sided)
    worst = found.iloc[int(np.nanargmin(one_sided))] if tests else found.iloc[0]
    worst = worst.to_dict()
    low, high = _num(worst, "mean_shift_ci_low"), _num(worst, "mean_shift_ci_high")
    return Cell(
        PASS,
        _num(worst, "mean_shift"),
        low,
        high,
        p=p,
        signal=_num(worst, "mean_shift") > 0,
        se=_se(low, high),
        tests=tests or None,
        detail=str(worst.get("condition", worst.get("padding", worst.get("template", "")))),
    )


@question(
    "padding",
    asks="Does padding a passage buy a higher grade?",
    table="pad",
    needs=("texts", "probe"),
    rule="flag when the padded passages' grades rise, one-sided sign-flip p over queries (Bonferroni over "
    "the conditions)",
    effect=0.2,
    effect_words="a rise of 0.2 grade",
)
def _padding(rows, judge, context):
    return _shift_question(rows, judge, "pad")


@question(
    "injection",
    asks="Does an injected relevance claim or the query's terms buy a higher grade?",
    table="injection",
    needs=("texts", "probe"),
    rule="flag when the changed passages' grades rise, one-sided "
    "sign-flip p over queries (Bonferroni over the conditions)",
    effect=0.2,
    effect_words="a rise of 0.2 grade",
)
def _injection(rows, judge, context):
    return _shift_question(rows, judge, "injection")


@question(
    "gameable",
    asks="Would a gamed system climb the leaderboard under it?",
    table="gaming",
    needs=("texts", "runs"),
    rule="flag when a gamed system (its top k passages stuffed with the query's "
    "terms or claiming relevance) gains, one-sided paired p over queries (Bonferroni over the gamed "
    "systems), and passes a system the humans rank above it",
    effect=0.05,
    effect_words="a gain of 0.05 in the measure",
)
def _gameable(rows, judge, context):
    found = _rows(rows, judge)
    if not len(found):
        return Cell(NA, reason="the gamed system was not put to this judge")
    asked = found[found["delta"].notna()] if "delta" in found else found.iloc[0:0]
    if not len(asked):
        return Cell(NA, reason=_reason(found.iloc[0].to_dict()) or "no gamed system scored")
    records = asked.to_dict("records")
    one_sided = [_one_sided(_num(r, "delta_p"), _num(r, "delta")) for r in records]
    p, tests = _bonferroni_min(one_sided)
    passing = [i for i, r in enumerate(records) if _passes(r) and _num(r, "delta") > 0]
    pick = min(passing or range(len(records)), key=lambda i: one_sided[i] if not math.isnan(one_sided[i]) else 2)
    row = records[pick]
    low, high = _num(row, "delta_ci_low"), _num(row, "delta_ci_high")
    detail = f"{row['gamed']}: rank {int(_num(row, 'rank'))} -> {int(_num(row, 'rank_gamed'))}"
    detail += f", passes {_passes(row)}" if _passes(row) else ""
    if passing:
        detail += f"; {len(passing)} of {len(records)} gamed systems gain and pass one"
    # the flag needs a gamed system that both gains significantly and passes: the p of those
    p_passing = min(1.0, min(one_sided[i] for i in passing) * tests) if passing else p
    return Cell(
        PASS,
        _num(row, "delta"),
        low,
        high,
        p=p_passing,
        signal=bool(passing),
        se=_se(low, high),
        tests=tests or None,
        detail=detail,
    )


def _passes(row: Mapping) -> str:
    passes = row.get("passes")
    return "" if passes is None or (isinstance(passes, float) and math.isnan(passes)) else str(passes)


@question(
    "position",
    asks="Does the order of two passages decide its preference?",
    table="swap",
    needs=("texts", "probe"),
    rule="flag when the order-dependent answers favour one position, two-sided "
    "sign-flip p over queries (Bonferroni over the prompts)",
    effect=0.15,
    effect_words="a first-position win rate 0.15 from 0.5",
    sided="two-sided",
)
def _position(rows, judge, context):
    found = _rows(rows, judge)
    if not len(found):
        return Cell(NA, reason="the swap probe did not ask this judge")
    records = found.to_dict("records")
    p_values = [_num(r, "position_p") for r in records]
    p, tests = _bonferroni_min(p_values)
    row = records[int(np.nanargmin(p_values))] if tests else records[0]
    low, high = _num(row, "first_position_win_rate_ci_low"), _num(row, "first_position_win_rate_ci_high")
    detail = f"position consistency {_num(row, 'position_consistency'):.2f}"
    note = row.get("position_note")
    if isinstance(note, str) and note:
        detail += f"; {note}"
    return Cell(
        PASS,
        _num(row, "first_position_win_rate"),
        low,
        high,
        p=p,
        signal=True,
        se=_se(low, high),
        tests=tests or None,
        detail=detail,
    )


NO_RERUN = "no placebo persona beside the roles, so |delta rank| has no null (a prompt-variant group, or a table of an older version)"


@question(
    "persona_prompt",
    asks="Does a change of persona or prompt move its ranking beyond the queries' noise?",
    table="persona_sensitivity",
    needs=("texts", "probe"),
    rule="flag when mean |delta rank| under the persona exceeds the placebo persona's (a neutral role: any "
    "prompt change draws a fresh answer) on the same query draws, one-sided; inconclusive without one",
    effect=0.5,
    effect_words="0.5 rank positions more than the placebo persona moves",
)
def _persona(rows, judge, context):
    found = rows[(rows["group"] == judge) & (rows["condition"] == "all")] if len(rows) and "group" in rows else rows[:0]
    if not len(found):
        return Cell(NA, reason="no persona or prompt variants of this judge")
    row = found.iloc[0].to_dict()
    if not _true(row.get("rerun", False)) or math.isnan(_num(row, "excess_abs_delta_r")):
        return Cell(
            INCONCLUSIVE,
            _num(row, "mean_abs_delta_r"),
            _num(row, "ci_low_queries"),
            _num(row, "ci_high_queries"),
            reason=NO_RERUN,
        )
    value, low, high = _num(row, "excess_abs_delta_r"), _num(row, "excess_ci_low"), _num(row, "excess_ci_high")
    return Cell(
        PASS,
        value,
        low,
        high,
        p=_num(row, "excess_p"),
        signal=value > 0,
        se=_se(low, high),
        detail=f"mean |delta rank| {_num(row, 'mean_abs_delta_r'):.2f}, less the placebo persona's",
    )


# ----------------------------------------------------------------------------- one budget per judge


def error_budget(cells: Mapping[str, Cell], alpha: float = 0.05) -> dict[str, Cell]:
    """The judge's cells with their final status: Holm's step-down over every question with a
    p-value (:func:`voirdire.stats.adjust`), then the power of each pass at the budget's
    strictest level. See the module docstring for what each status means."""
    from .stats import adjust

    tested = [name for name, cell in cells.items() if cell.status in (PASS, INCONCLUSIVE) and not math.isnan(cell.p)]
    adjusted = dict(zip(tested, adjust([cells[n].p for n in tested], "holm"), strict=True)) if tested else {}
    family = len(tested)
    out = dict(cells)
    for name in tested:
        cell, p_holm = cells[name], float(adjusted[name])
        done = replace(cell, p_holm=p_holm, family=family, chance=alpha)
        if cell.signal and p_holm < alpha:
            out[name] = replace(done, status=FLAG, reason="")
            continue
        if cell.signal and cell.p < alpha:
            out[name] = replace(
                done,
                status=INCONCLUSIVE,
                reason=f"p {_p(cell.p)} alone, above the judge's budget of {alpha:g} over {family} questions (Holm)",
            )
            continue
        if cell.status == INCONCLUSIVE:
            out[name] = done
            continue
        power = _power(QUESTIONS.get(name), cell.se, alpha / max(family, 1))
        done = replace(done, power=power)
        if not math.isnan(power) and power < POWER and not _rules_out(QUESTIONS[name], cell):
            q = QUESTIONS[name]
            done = replace(
                done,
                status=INCONCLUSIVE,
                reason=f"power {power:.2f} to find {q.effect_words} at this sample size (a pass needs {POWER:g})",
            )
        out[name] = done
    return out


def _rules_out(q: Question, cell: Cell) -> bool:
    """Whether the cell's interval already excludes the question's stated effect (a conclusive
    pass whatever the power: a gamed system that loses 0.2 cannot be gaining 0.05)."""
    if q.effect is None or math.isnan(cell.low) or math.isnan(cell.high):
        return False
    if q.sided == "two-sided":
        return -q.effect < cell.low and cell.high < q.effect
    return cell.high < q.effect


def _power(q: Question | None, se: float, level: float) -> float:
    """The normal-approximation power of a test at ``level`` to find the question's stated effect
    where its estimate has standard error ``se`` (NaN where either is unknown)."""
    if q is None or q.effect is None or math.isnan(se) or se <= 0:
        return math.nan
    from scipy.stats import norm

    crit = norm.isf(level / 2 if q.sided == "two-sided" else level)
    return float(norm.sf(crit - q.effect / se))
