"""The verdict: "can I trust this judge?" answered on one page, one row per judge and dataset.

The questions, their rules and the judge's error budget live in :mod:`voirdire.questions`
(each declared with ``@question``, there or beside its audit); this module asks them of every judge and dataset and lays
the answers out: the long table (``verdict.csv``), the wide one, a sentence per judge, the
Markdown page, the HTML page and the report's first page. docs/verdict.md gives every rule with
its source and docs/audit-calibration.md how often each fires on a clean judge.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from .audits.registry import load as load_audits
from .questions import (  # noqa: F401 (the verdict's vocabulary, re-exported)
    FLAG,
    INCONCLUSIVE,
    INFO,
    NA,
    NO_SYSTEMS,
    PASS,
    QUESTIONS,
    Cell,
    Question,
    _effect,
    _primary,
    error_budget,
    question,
)

# the questions declared beside their audits (voirdire.audits.registry) join QUESTIONS, in its ORDER
load_audits()

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


COLUMNS = [
    "dataset",
    "judge",
    "question",
    "status",
    "effect",
    "ci_low",
    "ci_high",
    "p",
    "p_holm",
    "family",
    "power",
    "tests",
    "chance",
    "reason",
    "detail",
    "text",
]
"""The long verdict's columns (``verdict.csv``)."""


def verdict(datasets: Mapping[str, DatasetTables]) -> pd.DataFrame:
    """Long table: one row per dataset x judge x question (:data:`COLUMNS`): each question's
    cell, then the judge's error budget over its questions (:func:`voirdire.questions.error_budget`)."""
    rows = []
    for dataset, data in datasets.items():
        context = {name: _of(frame, dataset) for name, frame in data.tables.items()}
        context |= {"_oracles": list(data.oracles), "_alpha": data.alpha}
        for judge in data.judges:
            cells = {}
            for q in QUESTIONS.values():
                table = context.get(q.table)
                lacking = [data.unavailable[need] for need in q.needs if need in data.unavailable]
                if lacking:  # the question cannot be asked of this dataset: its first missing need says why
                    cells[q.name] = Cell(NA, reason=lacking[0])
                elif table is not None:
                    cells[q.name] = q.answer(table, judge, context)
                else:
                    cells[q.name] = Cell(NA, reason=q.absent)
            for name, cell in error_budget(cells, data.alpha).items():
                rows.append(
                    {
                        "dataset": dataset,
                        "judge": judge,
                        "question": name,
                        "status": cell.status,
                        "effect": cell.effect,
                        "ci_low": cell.low,
                        "ci_high": cell.high,
                        "p": cell.p,
                        "p_holm": cell.p_holm,
                        "family": cell.family,
                        "power": cell.power,
                        "tests": cell.tests,
                        "chance": cell.chance,
                        "reason": cell.reason,
                        "detail": cell.detail,
                        "text": cell.text(),
                    }
                )
    return pd.DataFrame(rows, columns=COLUMNS)


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
    """What the row says, in one sentence, with the judge's error budget."""
    rows = long[(long["dataset"] == dataset) & (long["judge"] == judge)]
    by = {s: rows[rows["status"] == s] for s in (FLAG, INCONCLUSIVE, PASS, NA, INFO)}
    parts = []
    if len(by[FLAG]):
        parts.append("flagged on " + ", ".join(_label(r) for r in by[FLAG].itertuples()))
    else:
        parts.append("no audit flags it")
    if len(by[INCONCLUSIVE]):
        parts.append("inconclusive on " + ", ".join(q.replace("_", " ") for q in by[INCONCLUSIVE]["question"]))
    if len(by[PASS]):
        parts.append("passes " + ", ".join(q.replace("_", " ") for q in by[PASS]["question"]))
    if len(by[INFO]):
        parts.append("reports " + ", ".join(_label(r) for r in by[INFO].itertuples()))
    if len(by[NA]):
        parts.append(f"{len(by[NA])} question(s) could not be asked")
    family = pd.to_numeric(rows["family"], errors="coerce").max() if "family" in rows else math.nan
    chance = pd.to_numeric(rows["chance"], errors="coerce").max() if "chance" in rows else math.nan
    if not (math.isnan(family) or math.isnan(chance)):
        parts.append(f"chance of any false flag at most {chance:g} over its {int(family)} tested questions (Holm)")
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


_COLOURS = {PASS: "#e6f4ea", FLAG: "#fce8e6", INCONCLUSIVE: "#fef7e0", NA: "#f1f3f4", INFO: "#e8f0fe"}


FIGURE3_CAPTION = (
    "Figure 3: each system's score (the primary measure) under the human labels and under each "
    "judge; a judge whose line leaves the humans' order reorders the leaderboard."
)


def figure_html(png: str | Path) -> str:
    """A PNG as an inline image with Figure 3's caption (the page stays one self-contained file)."""
    import base64
    from html import escape

    data = base64.b64encode(Path(png).read_bytes()).decode("ascii")
    return (
        f"<figure><img alt='Figure 3' style='max-width:100%' src='data:image/png;base64,{data}'>"
        f"<figcaption>{escape(FIGURE3_CAPTION)}</figcaption></figure>"
    )


def fragment(long: pd.DataFrame, *, notes: Sequence[str] = (), figure: str | Path | None = None) -> str:
    """The verdict as an HTML fragment (sentences, the table with cells coloured by status,
    Figure 3 when given, the flag rules): the report's first page embeds it."""
    from html import escape

    pairs = judge_rows(long)
    out = [
        "<div class='voirdire-verdict'><style>.voirdire-verdict table{border-collapse:collapse;font-size:13px}"
        ".voirdire-verdict td,.voirdire-verdict th{border:1px solid #ccc;padding:4px;vertical-align:top;"
        "max-width:16em}</style><ul>"
    ]
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
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>Verdict</title></head>"
        "<body style='font-family:sans-serif;margin:1em'><h1>Verdict: can I trust this judge?</h1>\n"
        + fragment(long, notes=notes, figure=figure)
        + "\n</body></html>\n"
    )


def coverage_notes(table2: pd.DataFrame) -> list[str]:
    """What the verdict rests on less than all of: judges that did not label every needed pair,
    and needed pairs outside the BM25 pool (counted in Table 2, said here)."""
    notes = []
    for row in _primary(table2).itertuples() if len(table2) else []:
        coverage = getattr(row, "coverage", math.nan)
        if not math.isnan(coverage) and coverage < 1:
            notes.append(
                f"{row.judge} on {row.dataset} labelled {row.pairs_labelled:,} of the {row.pairs_needed:,} "
                f"needed pairs ({coverage:.1%}); its scores rest on those"
            )
    return notes


# ----------------------------------------------------------------------------- the judges' leaderboard


def read_ranking(path: str | Path) -> pd.DataFrame:
    """The judges' leaderboard (``audits/<provenance>/judge_ranking.csv``) as written."""
    table = pd.read_csv(path, keep_default_na=False, na_values=[""])
    for column in ("next_judge", "kind"):
        if column in table:
            table[column] = table[column].astype(object).where(table[column].notna(), None)
    return table


def _interval(value: float, low: float, high: float, signed: bool = False) -> str:
    if math.isnan(value):
        return "n/a"
    number = f"{value:+.3f}" if signed else f"{value:.3f}"
    return number if math.isnan(low) else f"{number} [{low:.3f}, {high:.3f}]"


def _split(value) -> bool:
    """A ``distinguishable`` cell as read back (True, False or empty)."""
    return str(value).strip().lower() == "true"


def ranking_summary(block: pd.DataFrame) -> str:
    """Whether the top ones of one dataset's ranking by one measure are distinguishable, in words:
    the leader alone in its tier, or the judges no adjacent comparison separates from it."""
    block = block.sort_values("rank")
    top = block.iloc[0]
    if len(block) < 2 or pd.isna(top["next_judge"]):
        return f"{top['judge']} leads; no other judge to compare"
    gap = _interval(top["difference"], top["difference_ci_low"], top["difference_ci_high"], True)
    if _split(top["distinguishable"]):
        return f"{top['judge']} leads, distinguishable from {top['next_judge']} ({gap}, p_holm {top['p_holm']:.3g})"
    tier = block[block["tier"] == top["tier"]]["judge"].tolist()
    shown = ", ".join(map(str, tier[:5])) + (f" and {len(tier) - 5} more" if len(tier) > 5 else "")
    first = f"{top['judge']} vs {top['next_judge']}: {gap}, p_holm {top['p_holm']:.3g}"
    return f"the top {len(tier)} ({shown}) are not distinguishable by adjacent comparisons ({first})"


def ranking_text(table: pd.DataFrame) -> str:
    """The judges' leaderboard for the terminal (``voirdire verdict --rank``): per dataset and
    measure a sentence on the top (:func:`ranking_summary`), then a line per judge: its rank,
    the measure with its 95% interval, and against the next one down the difference with its
    paired interval, p, p_holm and the tier."""
    if table.empty:
        return "no judge besides the human labels: nothing to rank"
    lines = []
    for (dataset, measure), block in table.groupby(["dataset", "measure"], sort=False):
        block = block.sort_values("rank")
        comparisons = int(block["comparisons"].max()) if len(block) else 0
        queries = int(block["queries"].max())
        head = f"{dataset}, {measure} ({queries} queries; Holm over {comparisons} adjacent pair(s))"
        lines.append(f"{head}: {ranking_summary(block)}")
        width = max(len(str(j)) for j in block["judge"])
        for row in block.itertuples():
            value = _interval(row.value, row.value_ci_low, row.value_ci_high)
            tier = "" if pd.isna(row.tier) else f"tier {int(row.tier)}"
            line = f"  {row.rank:>3}  {row.judge!s:<{width}}  {value:<24}  {tier}"
            if pd.notna(row.next_judge):
                gap = _interval(row.difference, row.difference_ci_low, row.difference_ci_high, True)
                verdict = "distinguishable" if _split(row.distinguishable) else "not distinguishable"
                line += f"  vs {row.next_judge}: {gap}, p {row.p:.3g}, p_holm {row.p_holm:.3g}: {verdict}"
            lines.append(line.rstrip())
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"
