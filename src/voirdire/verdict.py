"""The verdict: "can I trust this judge?" answered on one page, one row per judge and dataset.

Each *question* declares itself here (as ir_measures registers a measure): its name, what it
asks, the table it reads (a name :class:`voirdire.layout.Layout` places), what the audit needs
to run (labels, texts, runs, families, reruns, a probe), and the rule that turns that table's
row into a cell: the effect with its interval, and **pass**, **flag** (with the tests behind it
and what chance alone gives) or **n/a** with the reason. The verdict table, its Markdown and
HTML views, the sentence per judge and the report's first page are generated from these
declarations; a new question is one :func:`question` call.

Flag rules (docs/verdict.md gives each with its source):

* labels: binary kappa's interval lies below 0.4 (below "moderate", Landis & Koch 1977);
* leaderboard: tau against ``human@pool`` has its interval below 0.9 (Voorhees 2000: rankings
  with tau >= 0.9 are taken as equivalent);
* decisions: more pairs of systems are *reversed* (the judge orders them the other way round,
  and its gap differs significantly from human@pool's: difference in differences) than chance
  allows at 5% (the binomial tail of alpha / 2 per pair; any under Holm or BH, which already
  bound chance). Pairs whose gap it sees smaller are counted, not flagged: unbiased label noise
  compresses every wide gap;
* oracles: a system the humans rank below the best oracle passes it under the judge, and the
  judge's own paired test calls the pass significant;
* own family, length, drift, padding, injection, position: the audit's own flag column, its
  test over queries at alpha;
* gameable: a gamed system (its top k passages stuffed with the query's terms or claiming
  relevance; Alaofi et al., 2025) gains under the judge, its interval over queries above 0, and
  passes a system the humans rank above it;
* circular use is reported, not flagged (``info``): a judge's own ranking scores 1 under its
  own labels, so every judge that differs from the humans "inflates"; the cell says by how much;
* persona/prompt: the ranking moves under a prompt change by more than the queries' own
  noise (the interval over queries of mean |delta rank| lies above 0, or above the noise
  floor where a rerun gives one).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

PASS, FLAG, NA, INFO = "pass", "flag", "n/a", "info"

NO_SYSTEMS = "no systems: the config lists none (systems:), so only the label sets are audited"
"""Why what ranks or scores systems has no result when ``systems:`` is left out: the n/a of every
question that needs ``runs``, and the tables and audits of systems, which have no rows."""


@dataclass(frozen=True)
class Cell:
    """One answer: ``status`` pass / flag / n/a, the effect and its interval, the tests behind a
    flag and the flags chance alone would give, the reason of an n/a, and a short detail."""

    status: str  # pass, flag, n/a, or info (reported, no flag rule)
    effect: float = math.nan
    low: float = math.nan
    high: float = math.nan
    tests: int | None = None
    chance: float | None = None
    reason: str = ""
    detail: str = ""

    def text(self) -> str:
        """The cell as a person reads it: ``0.48 [0.41, 0.55] pass``, ``flag (2 of 36 tests;
        chance 1.8)``, ``n/a: no passage texts``."""
        if self.status == NA:
            return f"n/a: {self.reason}"
        parts = [_effect(self.effect, self.low, self.high)] if not math.isnan(self.effect) else []
        word = self.status
        if self.tests is not None:
            chance = f"; chance {self.chance:.2g}" if self.chance is not None else ""
            word += f" ({self.tests} test{'s' if self.tests != 1 else ''}{chance})"
        parts.append(word)
        if self.detail:
            parts.append(f"- {self.detail}")
        return " ".join(parts)


def _effect(value: float, low: float, high: float) -> str:
    text = f"{value:+.3f}" if abs(value) < 10 else f"{value:.0f}"
    if not (math.isnan(low) or math.isnan(high)):
        text += f" [{low:+.3f}, {high:+.3f}]"
    return text


@dataclass(frozen=True)
class Question:
    """A verdict column: what it asks, the table it reads (and ``also`` the tables it reads from
    ``context``), what its audit needs, its flag rule in words, and ``answer(rows, judge,
    context)`` -> :class:`Cell` (``rows``: the table's rows of this dataset, empty when the table
    is absent; ``context``: every table of the dataset)."""

    name: str
    asks: str
    table: str
    needs: tuple[str, ...]
    rule: str
    answer: Callable[[pd.DataFrame, str, Mapping[str, pd.DataFrame]], Cell]
    absent: str = "not configured"
    also: tuple[str, ...] = ()

    @property
    def reads(self) -> tuple[str, ...]:
        """Every table the answer reads: its own first."""
        return (self.table, *self.also)


QUESTIONS: dict[str, Question] = {}


def question(name: str, *, asks: str, table: str, needs: Sequence[str], rule: str, absent: str = "not configured",
             also: Sequence[str] = ()):  # fmt: skip
    """Declare a verdict question (a decorator of its answer function)."""

    def register(answer: Callable[[pd.DataFrame, str, Mapping[str, pd.DataFrame]], Cell]):
        QUESTIONS[name] = Question(name, asks, table, tuple(needs), rule, answer, absent, tuple(also))
        return answer

    return register


def _rows(frame: pd.DataFrame, judge: str, column: str = "judge") -> pd.DataFrame:
    return frame[frame[column] == judge] if len(frame) and column in frame else frame.iloc[0:0]


def _num(row: Mapping, name: str) -> float:
    value = row.get(name, math.nan)
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def _reason(row: Mapping) -> str | None:
    reason = row.get("reason")
    return None if reason is None or (isinstance(reason, float) and math.isnan(reason)) or reason == "" else str(reason)


def _table2_row(rows: pd.DataFrame, judge: str) -> dict | None:
    """The judge's Table 2 row of the primary measure, or None."""
    found = _rows(_primary(rows), judge)
    return found.iloc[0].to_dict() if len(found) else None


def _primary(frame: pd.DataFrame) -> pd.DataFrame:
    """Table 2's rows of the first (primary) measure."""
    if not len(frame) or "measure" not in frame:
        return frame
    return frame[frame["measure"] == frame["measure"].iloc[0]]


# ----------------------------------------------------------------------------- the questions


@question("labels", asks="Do its labels agree with the humans'?", table="table2", needs=("labels",),
          rule="flag when binary kappa's 95% interval lies below 0.4", also=("label_test",))  # fmt: skip
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
        detail = (f"missed failures {_num(t, 'missed_failure_rate'):.2f}, "
                  f"false alarms {_num(t, 'false_alarm_rate'):.2f}")  # fmt: skip
    return Cell(FLAG if high < 0.4 else PASS, kappa, low, high, detail=detail)


@question("leaderboard", asks="Does it order the systems as the humans do?", table="table2", needs=("runs",),
          rule="flag when tau against human@pool has its 95% interval below 0.9", absent="no systems")  # fmt: skip
def _leaderboard(rows, judge, context):
    row = _table2_row(rows, judge)
    if row is None:
        return Cell(NA, reason="no systems scored")
    suffix = "_vs_pool" if "tau_all_vs_pool" in row else ""
    tau = _num(row, f"tau_all{suffix}")
    low, high = _num(row, f"tau_all_ci_low{suffix}"), _num(row, f"tau_all_ci_high{suffix}")
    if math.isnan(tau):
        return Cell(NA, reason="tau undefined (the judge ties every system)")
    return Cell(FLAG if high < 0.9 else PASS, tau, low, high, detail=f"tau vs humans {_num(row, 'tau_all'):+.3f}")


def _binomial_tail(count: int, tests: int, alpha: float) -> float:
    from scipy import stats

    return float(stats.binom.sf(count - 1, tests, alpha)) if tests else 1.0


@question("decisions", asks="Does it see the same differences between systems?", table="table2", needs=("runs",),
          rule="flag when more system pairs are reversed (ordered the other way round, with a gap that differs "
               "significantly from human@pool's) than chance allows at 5%", absent="no systems")  # fmt: skip
def _decisions(rows, judge, context):
    row = _table2_row(rows, judge)
    if row is None:
        return Cell(NA, reason="no systems scored")
    suffix = "_vs_pool" if "disagreements_vs_pool" in row else ""
    pairs = int(_num(row, "pairs_of_systems")) if not math.isnan(_num(row, "pairs_of_systems")) else 0
    if pairs == 0:
        return Cell(NA, reason="fewer than two systems")
    count = int(_num(row, f"disagreements{suffix}"))
    reversed_ = _num(row, f"disagreements_reversed{suffix}")
    reversed_ = int(reversed_) if not math.isnan(reversed_) else 0
    correction = str(row.get("correction", "none"))
    alpha = context.get("_alpha", 0.05)
    chance = alpha / 2 * pairs if correction == "none" else _num(row, f"disagreements_expected{suffix}")
    flagged = reversed_ > 0 if correction in ("holm", "bh") else _binomial_tail(reversed_, pairs, alpha / 2) < 0.05
    detail = (f"{reversed_} of {pairs} pairs reversed, {count} seen differently; missed {int(_num(row, 'missed'))}, "
              f"spurious {int(_num(row, 'spurious'))}, flipped {int(_num(row, 'flipped'))}")  # fmt: skip
    return Cell(FLAG if flagged else PASS, tests=pairs, chance=chance, detail=detail)


@question("oracles", asks="Does the best oracle keep its place?", table="table1", needs=("runs",),
          rule="flag when a system the humans rank below the best oracle passes it under the judge, significantly "
               "by the judge's own paired test", absent="no oracle among the systems", also=("significance",))  # fmt: skip
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
    significant = []
    for system in passing:
        pair = sig[((sig["system_a"] == best) & (sig["system_b"] == system))
                   | ((sig["system_a"] == system) & (sig["system_b"] == best))] if len(sig) else sig  # fmt: skip
        if len(pair) and float(pair["p_judge_adjusted"].iloc[0]) < context.get("_alpha", 0.05):
            significant.append(system)
    detail = f"{best} is {_ordinal(rank)} of {len(under)}"
    if passing:
        detail += f"; passed by {', '.join(passing)}"
        if significant:
            detail += f" ({len(significant)} significantly)"
    return Cell(FLAG if significant else PASS, tests=len(passing) or None, detail=detail)


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def _flag_cell(rows, judge, *, effect, flag, low=None, high=None, reason="reason", empty="", tests=None, alpha=0.05):
    """A cell from an audit table's row of this judge: its effect and interval, its flag."""
    found = _rows(rows, judge)
    if not len(found):
        return Cell(NA, reason=empty)
    row = found.iloc[0].to_dict()
    why = _reason(row) if reason in row else None
    value = _num(row, effect)
    if why and (math.isnan(value) or not bool(row.get(flag))):
        return Cell(NA, reason=why)
    if math.isnan(value):
        return Cell(NA, reason=empty or "undefined")
    lo, hi = _num(row, low or f"{effect}_ci_low"), _num(row, high or f"{effect}_ci_high")
    n = len(found) if tests is None else tests
    return Cell(FLAG if bool(row.get(flag)) else PASS, value, lo, hi, tests=n, chance=alpha * n)


@question("own_family", asks="Does it favour its own model family's systems?", table="self_preference",
          needs=("labels", "runs", "families"),
          rule="flag when the within-grade preference for its family's documents is positive with sign-flip "
               "p < alpha over queries")  # fmt: skip
def _own_family(rows, judge, context):
    cell = _flag_cell(rows, judge, effect="within_grade", flag="self_preferring", empty="no family declared",
                      alpha=context.get("_alpha", 0.05))  # fmt: skip
    if cell.status == NA:
        found = _rows(rows, judge)
        if len(found) and _reason(found.iloc[0].to_dict()):
            return Cell(NA, reason=_reason(found.iloc[0].to_dict()))
    return cell


@question("length", asks="Does it reward longer passages at the same relevance?", table="length",
          needs=("labels", "texts"), rule="flag when the within-grade rank correlation of length and grade has a "
          "permutation p < 0.01 (lengths permuted within query x grade)", absent="no passage texts")  # fmt: skip
def _length(rows, judge, context):
    found = _rows(rows, judge)
    if not len(found):
        return Cell(NA, reason="no passage texts (a labels-only dataset)")
    row = found.iloc[0].to_dict()
    value = _num(row, "rho_within")
    if math.isnan(value):
        return Cell(NA, reason="too few pairs with a text")
    return Cell(FLAG if bool(row.get("length_biased")) else PASS, value, tests=1, chance=0.01,
                detail=f"permutation p {_num(row, 'p_within'):.3g}")  # fmt: skip


@question("drift", asks="Is it the same judge when asked again?", table="control_chart", needs=("reruns",),
          rule="flag when a rerun's mean grade moves, sign-flip p < alpha over queries",
          absent="no reruns (reruns: of a recorded judge, samples: k of a live one)")  # fmt: skip
def _drift(rows, judge, context):
    found = _rows(rows, judge)
    if not len(found):
        return Cell(NA, reason="no reruns (reruns: of a recorded judge, samples: k of a live one)")
    worst = found.loc[found["mean_difference"].abs().idxmax()].to_dict()
    shifted = int(found["shifted"].astype(bool).sum())
    return Cell(FLAG if shifted else PASS, _num(worst, "mean_difference"), _num(worst, "difference_ci_low"),
                _num(worst, "difference_ci_high"), tests=len(found), chance=context.get("_alpha", 0.05) * len(found),
                detail=f"{shifted} of {len(found)} reruns shifted")  # fmt: skip


@question("circular_use", asks="Does its own ranking look better under it than under the humans?",
          table="circularity", needs=("labels", "runs"),
          rule="reported, not flagged: its own ranking scores 1 under its own labels, so every judge that differs "
               "from the humans inflates; the cell says by how much against human@pool")  # fmt: skip
def _circular(rows, judge, context):
    found = _rows(rows, judge, "ranker")
    if not len(found):
        return Cell(NA, reason="no base run to rerank")
    row = found.iloc[0].to_dict()
    value = _num(row, "inflation")
    return Cell(INFO, value, _num(row, "inflation_ci_low"), _num(row, "inflation_ci_high"),
                detail=f"under itself {_num(row, 'self_score'):.3f}, under human@pool {_num(row, 'human_pool_score'):.3f}")  # fmt: skip


def _shift_question(rows, judge, context, what):
    found = _rows(rows, judge)
    if "human" in found:
        found = found[found["human"].astype(str) == "all"]
    if not len(found):
        return Cell(NA, reason=f"the {what} probe did not ask this judge (it reads no texts, or is not configured)")
    flagged = found[found["flagged"].astype(bool)]
    worst = (flagged if len(flagged) else found).sort_values("mean_shift", ascending=False).iloc[0].to_dict()
    tests = int(_num(worst, "tests")) if not math.isnan(_num(worst, "tests")) else len(found)
    chance = _num(worst, "expected_false_flags")
    return Cell(FLAG if len(flagged) else PASS, _num(worst, "mean_shift"), _num(worst, "mean_shift_ci_low"),
                _num(worst, "mean_shift_ci_high"), tests=tests, chance=None if math.isnan(chance) else chance,
                detail=str(worst.get("condition", worst.get("padding", worst.get("template", "")))))  # fmt: skip


@question("padding", asks="Does padding a passage buy a higher grade?", table="pad", needs=("texts", "probe"),
          rule="flag when the padded passages' grades rise, sign-flip p < alpha over queries")  # fmt: skip
def _padding(rows, judge, context):
    return _shift_question(rows, judge, context, "pad")


@question("injection", asks="Does an injected relevance claim or the query's terms buy a higher grade?",
          table="injection", needs=("texts", "probe"),
          rule="flag when the changed passages' grades rise, sign-flip p < alpha over queries")  # fmt: skip
def _injection(rows, judge, context):
    return _shift_question(rows, judge, context, "injection")


@question("gameable", asks="Would a gamed system climb the leaderboard under it?", table="gaming",
          needs=("texts", "runs"), rule="flag when a gamed system (its top k passages stuffed with the query's "
          "terms or claiming relevance) gains, its 95% interval over queries above 0, and passes a system the "
          "humans rank above it")  # fmt: skip
def _gameable(rows, judge, context):
    found = _rows(rows, judge)
    if not len(found):
        return Cell(NA, reason="the gamed system was not put to this judge")
    asked = found[found["delta"].notna()] if "delta" in found else found.iloc[0:0]
    if not len(asked):
        return Cell(NA, reason=_reason(found.iloc[0].to_dict()) or "no gamed system scored")
    climbing = asked[asked["climbs"].astype(str).str.lower() == "true"]
    row = (climbing if len(climbing) else asked).sort_values("delta", ascending=False).iloc[0].to_dict()
    passes = row.get("passes")
    passes = "" if passes is None or (isinstance(passes, float) and math.isnan(passes)) else str(passes)
    detail = f"{row['gamed']}: rank {int(_num(row, 'rank'))} -> {int(_num(row, 'rank_gamed'))}"
    detail += f", passes {passes}" if passes else ""
    if len(climbing):
        detail += f"; {len(climbing)} of {len(asked)} gamed systems climb"
    return Cell(FLAG if len(climbing) else PASS, _num(row, "delta"), _num(row, "delta_ci_low"),
                _num(row, "delta_ci_high"), tests=len(asked), detail=detail)  # fmt: skip


@question("position", asks="Does the order of two passages decide its preference?", table="swap",
          needs=("texts", "probe"), rule="flag when the order-dependent answers favour one position, "
          "exact binomial p < alpha")  # fmt: skip
def _position(rows, judge, context):
    found = _rows(rows, judge)
    if not len(found):
        return Cell(NA, reason="the swap probe did not ask this judge")
    alpha = context.get("_alpha", 0.05)
    flagged = found[found["position_p"] < alpha]
    row = (flagged if len(flagged) else found).iloc[0].to_dict()
    return Cell(FLAG if len(flagged) else PASS, _num(row, "first_position_win_rate"),
                _num(row, "first_position_win_rate_ci_low"), _num(row, "first_position_win_rate_ci_high"),
                tests=len(found), chance=alpha * len(found),
                detail=f"position consistency {_num(row, 'position_consistency'):.2f}")  # fmt: skip


@question("persona_prompt", asks="Does a change of persona or prompt move its ranking beyond the queries' noise?",
          table="persona_sensitivity", needs=("texts", "probe"),
          rule="flag when the interval over queries of mean |delta rank| lies above 0 (or above the noise floor)")  # fmt: skip
def _persona(rows, judge, context):
    found = rows[(rows["group"] == judge) & (rows["condition"] == "all")] if len(rows) and "group" in rows else rows[:0]
    if not len(found):
        return Cell(NA, reason="no persona or prompt variants of this judge")
    row = found.iloc[0].to_dict()
    value, low, high = _num(row, "mean_abs_delta_r"), _num(row, "ci_low_queries"), _num(row, "ci_high_queries")
    floor = _num(row, "noise_floor_abs_delta_r")
    above = low > (floor if not math.isnan(floor) else 0.0)
    return Cell(FLAG if above else PASS, value, low, high, detail="noise floor n/a" if math.isnan(floor) else "")


# ----------------------------------------------------------------------------- the verdict


@dataclass
class DatasetTables:
    """Every table the questions read, of one dataset (absent tables: empty frames), the
    judges to answer for, the oracles, alpha, and what the dataset's audits lack: a need a
    question declares (``runs``, ``texts``, ...) -> the reason, which every question needing it
    gives as its n/a (``{"runs": NO_SYSTEMS}`` when the config lists no systems)."""

    judges: Sequence[str]
    tables: Mapping[str, pd.DataFrame]
    oracles: Sequence[str] = ()
    alpha: float = 0.05
    notes: Sequence[str] = field(default_factory=list)
    unavailable: Mapping[str, str] = field(default_factory=dict)


def verdict(datasets: Mapping[str, DatasetTables]) -> pd.DataFrame:
    """Long table: one row per dataset x judge x question (effect, interval, status, tests,
    chance, reason, detail, text)."""
    rows = []
    for dataset, data in datasets.items():
        context = {name: _of(frame, dataset) for name, frame in data.tables.items()}
        context |= {"_oracles": list(data.oracles), "_alpha": data.alpha}
        for judge in data.judges:
            for q in QUESTIONS.values():
                table = context.get(q.table)
                lacking = [data.unavailable[need] for need in q.needs if need in data.unavailable]
                if lacking:  # the question cannot be asked of this dataset: its first missing need says why
                    cell = Cell(NA, reason=lacking[0])
                elif table is not None:
                    cell = q.answer(table, judge, context)
                else:
                    cell = Cell(NA, reason=q.absent)
                rows.append({"dataset": dataset, "judge": judge, "question": q.name, "status": cell.status,
                             "effect": cell.effect, "ci_low": cell.low, "ci_high": cell.high, "tests": cell.tests,
                             "chance": cell.chance, "reason": cell.reason, "detail": cell.detail,
                             "text": cell.text()})  # fmt: skip
    return pd.DataFrame(rows, columns=["dataset", "judge", "question", "status", "effect", "ci_low", "ci_high",
                                       "tests", "chance", "reason", "detail", "text"])  # fmt: skip


def _of(frame: pd.DataFrame, dataset: str) -> pd.DataFrame:
    return frame[frame["dataset"] == dataset] if len(frame) and "dataset" in frame else frame


def wide(long: pd.DataFrame) -> pd.DataFrame:
    """One row per dataset x judge, one column per question (the cell's text)."""
    if long.empty:
        return pd.DataFrame(columns=["dataset", "judge", *QUESTIONS])
    table = long.pivot_table(index=["dataset", "judge"], columns="question", values="text", aggfunc="first", sort=False)
    return table.reindex(columns=[q for q in QUESTIONS if q in table.columns]).reset_index()


def judge_rows(long: pd.DataFrame) -> list[tuple[str, str]]:
    """Every (dataset, judge) of the verdict, once each, in the table's order."""
    return list(dict.fromkeys(zip(long["dataset"], long["judge"], strict=True)))


def sentence(long: pd.DataFrame, dataset: str, judge: str) -> str:
    """What the row says, in one sentence."""
    rows = long[(long["dataset"] == dataset) & (long["judge"] == judge)]
    by = {s: rows[rows["status"] == s] for s in (FLAG, PASS, NA, INFO)}
    parts = []
    if len(by[FLAG]):
        parts.append("flagged on " + ", ".join(_label(r) for r in by[FLAG].itertuples()))
    else:
        parts.append("no audit flags it")
    if len(by[PASS]):
        parts.append("passes " + ", ".join(q.replace("_", " ") for q in by[PASS]["question"]))
    if len(by[INFO]):
        parts.append("reports " + ", ".join(_label(r) for r in by[INFO].itertuples()))
    if len(by[NA]):
        parts.append(f"{len(by[NA])} question(s) could not be asked")
    return f"{judge} on {dataset}: " + "; ".join(parts) + "."


def sentences(long: pd.DataFrame) -> list[str]:
    """:func:`sentence` for every judge and dataset, in the table's order."""
    return [sentence(long, dataset, judge) for dataset, judge in judge_rows(long)]


def read_verdict(path: str | Path) -> pd.DataFrame:
    """``verdict.csv`` as written (a question's empty effect is NaN; no other text is)."""
    return pd.read_csv(path, keep_default_na=False, na_values=[""])


AFTER_RUN_SENTENCES = 20
"""At most this many judges' sentences end a run (a challenge's 84 label sets would fill the
terminal); the rest are counted, and the page has them all."""


def after_run(csv: str | Path, *, since: float, results: str) -> str | None:
    """What a run that made the verdict prints as it ends: a sentence per judge (at most
    :data:`AFTER_RUN_SENTENCES`), and where to read on. None where ``csv`` is absent or older
    than ``since`` (a run that did not remake it: a warm rerun, a run of one target)."""
    path = Path(csv)
    try:
        if path.stat().st_mtime < since:
            return None
    except FileNotFoundError:
        return None
    said = sentences(read_verdict(path))
    lines = [
        f"voirdire: the verdict ({path.with_suffix('.md')}; every question: voirdire verdict --results {results}):"
    ]
    lines += [f"  {line}" for line in said[:AFTER_RUN_SENTENCES]]
    if len(said) > AFTER_RUN_SENTENCES:
        lines.append(f"  ... and {len(said) - AFTER_RUN_SENTENCES} more judges and datasets: see the page")
    lines.append(f"voirdire: every table and figure with its caption: snakemake --report {results}/report.html")
    return "\n".join(lines)


def _label(row) -> str:
    name = row.question.replace("_", " ")
    return f"{name} ({_effect(row.effect, row.ci_low, row.ci_high)})" if not math.isnan(row.effect) else name


def markdown(long: pd.DataFrame, *, notes: Sequence[str] = (), fingerprint: str | None = None) -> str:
    """The verdict as Markdown: a sentence per judge, then the table (one column per question)."""
    lines = ["# Verdict: can I trust this judge?", ""]
    if fingerprint:
        lines += [f"manifest sha256: `{fingerprint}` (see fingerprint.json)", ""]
    lines += [f"- {line}" for line in sentences(long)]
    lines.append("")
    # a question a row, a judge a column, at most ten judges a table (a page a person reads)
    for dataset in dict.fromkeys(long["dataset"]):
        rows = long[long["dataset"] == dataset]
        judges = list(dict.fromkeys(rows["judge"]))
        for start in range(0, len(judges), 10):
            block = rows[rows["judge"].isin(judges[start : start + 10])]
            table = block.pivot_table(index="question", columns="judge", values="text", aggfunc="first", sort=False)
            table = table.reindex(index=[q for q in QUESTIONS if q in table.index], columns=judges[start : start + 10])
            lines += [f"## {dataset}", "", table.reset_index().to_markdown(index=False), ""]
    lines.append("Questions and flag rules:")
    lines.append("")
    lines += [f"- **{q.name}**: {q.asks} ({q.rule})" for q in QUESTIONS.values()]
    if notes:
        lines += ["", "Notes:", ""] + [f"- {n}" for n in notes]
    return "\n".join(lines) + "\n"


_COLOURS = {PASS: "#e6f4ea", FLAG: "#fce8e6", NA: "#f1f3f4", INFO: "#e8f0fe"}


FIGURE3_CAPTION = ("Figure 3: each system's score (the primary measure) under the human labels and under each "
                   "judge; a judge whose line leaves the humans' order reorders the leaderboard.")  # fmt: skip


def figure_html(png: str | Path) -> str:
    """A PNG as an inline image with Figure 3's caption (the page stays one self-contained file)."""
    import base64
    from html import escape

    data = base64.b64encode(Path(png).read_bytes()).decode("ascii")
    return (f"<figure><img alt='Figure 3' style='max-width:100%' src='data:image/png;base64,{data}'>"
            f"<figcaption>{escape(FIGURE3_CAPTION)}</figcaption></figure>")  # fmt: skip


def fragment(long: pd.DataFrame, *, notes: Sequence[str] = (), figure: str | Path | None = None) -> str:
    """The verdict as an HTML fragment (sentences, the table with cells coloured by status,
    Figure 3 when given, the flag rules): the report's first page embeds it."""
    from html import escape

    pairs = judge_rows(long)
    out = ["<div class='voirdire-verdict'><style>.voirdire-verdict table{border-collapse:collapse;font-size:13px}"
           ".voirdire-verdict td,.voirdire-verdict th{border:1px solid #ccc;padding:4px;vertical-align:top;"
           "max-width:16em}</style><ul>"]  # fmt: skip
    out += [f"<li>{escape(sentence(long, d, j))}</li>" for d, j in pairs]
    out.append("</ul><table><tr><th>dataset</th><th>judge</th>")
    out += [f"<th title='{escape(q.asks)}'>{escape(q.name.replace('_', ' '))}</th>" for q in QUESTIONS.values()]
    out.append("</tr>")
    for dataset, judge in pairs:
        rows = long[(long["dataset"] == dataset) & (long["judge"] == judge)].set_index("question")
        out.append(f"<tr><td>{escape(dataset)}</td><td><b>{escape(judge)}</b></td>")
        for q in QUESTIONS:
            status, text = (rows.loc[q, "status"], rows.loc[q, "text"]) if q in rows.index else (NA, "n/a")
            out.append(f"<td style='background:{_COLOURS[status]}'>{escape(str(text))}</td>")
        out.append("</tr>")
    out.append("</table>")
    if figure is not None:
        out.append(figure_html(figure))
    out.append("<p>Flag rules:</p><ul>")
    out += [f"<li><b>{escape(q.name)}</b>: {escape(q.asks)} ({escape(q.rule)})</li>" for q in QUESTIONS.values()]
    out.append("</ul>")
    if notes:
        out.append("<p>Notes:</p><ul>" + "".join(f"<li>{escape(n)}</li>" for n in notes) + "</ul>")
    out.append("</div>")
    return "\n".join(out)


def html(long: pd.DataFrame, *, notes: Sequence[str] = (), figure: str | Path | None = None) -> str:
    """The verdict as a self-contained HTML page."""
    return ("<!doctype html><html><head><meta charset='utf-8'><title>Verdict</title></head>"
            "<body style='font-family:sans-serif;margin:1em'><h1>Verdict: can I trust this judge?</h1>\n"
            + fragment(long, notes=notes, figure=figure) + "\n</body></html>\n")  # fmt: skip


def coverage_notes(table2: pd.DataFrame) -> list[str]:
    """What the verdict rests on less than all of: judges that did not label every needed pair,
    and needed pairs outside the BM25 pool (counted in Table 2, said here)."""
    notes = []
    for row in _primary(table2).itertuples() if len(table2) else []:
        coverage = getattr(row, "coverage", math.nan)
        if not math.isnan(coverage) and coverage < 1:
            notes.append(f"{row.judge} on {row.dataset} labelled {row.pairs_labelled:,} of the {row.pairs_needed:,} "
                         f"needed pairs ({coverage:.1%}); its scores rest on those")  # fmt: skip
    return notes
