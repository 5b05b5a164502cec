"""What the label audits write, declared once: the ``audits`` rule's outputs, their report
entries and the final targets are all generated from :func:`outputs`.

Each entry is one table (``audits/{provenance}/{name}.csv`` and its Markdown view ``.md``) or
one figure (``.png`` and ``.pdf``), the name the audits job writes it under
(``snakemake.output.<key>``), and the caption file that puts it in the report
(``workflow/report/audit_{caption}.rst``; none: the file is written but not shown). A verdict
question names the table it reads (:func:`voirdire.verdict.question`); a test checks that every
such table is declared here or by another rule. Every audit is declared beside its computation
(:mod:`voirdire.audits.registry`) and brings its outputs itself: its written tables and its
figures, in the order the audits are loaded; ``workflow/scripts/audits.py`` writes and draws each
as declared.

Where every entry of the Snakemake report is filed (:func:`report_section`) is declared here too:
beside the verdict question it is evidence of. The categories follow the verdict
(:mod:`voirdire.verdict`): the verdict first, then one category per question, titled as the
verdict's table heads its column ("own_family" -> "Own family") and in its order, then the
entries no question reads (:data:`OTHER_CATEGORIES`). A table a question reads
(``Question.reads``) is filed under the first question that reads it, so a new question takes its
tables with it. What no question reads is filed by its declaration: a registered audit's table or
figure by its ``report`` (:attr:`voirdire.audits.registry.Table.report`: the question whose answer
it shows, as the confusion matrix beside the label test, or a category of :data:`OTHER_CATEGORIES`;
a category named nowhere else follows them), the outputs of the other rules by :data:`EVIDENCE`
(a question) or :data:`OTHER_CATEGORIES`. The subcategory is the entry's short name ("Table 2",
"Swap test"), shared by a table and its figure. Snakemake's report lists categories
alphabetically, so each is numbered ("01. Verdict"). The rules call it with the entry's file stem
(``in_report`` in ``workflow/rules/targets.smk``); a stem filed nowhere is a :class:`KeyError`,
not an "Other" category.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class AuditOutput:
    name: str
    """The file's stem under ``audits/{provenance}/``."""
    figure: bool
    """A figure (``png`` and ``pdf``) rather than a table (``csv`` and ``md``)."""
    key: str
    """The job's name for the csv or png (``snakemake.output.<key>``); the md or pdf is ``<key>_md`` /
    ``<key>_pdf`` (a figure named like a table: ``<name>_png`` / ``<name>_pdf``)."""
    caption: str | None
    """The report caption's stem (``audit_<caption>.rst``), or None: not in the report."""
    captions: str | None = None
    """The caption's folder; None: the workflow's ``workflow/report`` (an audit installed by an
    entry point keeps its captions beside its module: :mod:`voirdire.audits.registry`)."""

    @property
    def extensions(self) -> tuple[str, str]:
        return ("png", "pdf") if self.figure else ("csv", "md")

    def keys(self) -> dict[str, str]:
        """The output key of each extension, e.g. ``{"csv": "lojo", "md": "lojo_md"}``."""
        first, second = self.extensions
        if self.figure and self.key.endswith("_png"):
            return {first: self.key, second: f"{self.key[: -len('_png')]}_pdf"}
        return {first: self.key, second: f"{self.key}_{second}"}


def registered() -> dict:
    """The audits declared beside their computation (:func:`voirdire.audits.registry.load`)."""
    from .registry import load  # imports the audits' modules (pandas): only where the workflow needs them

    return load()


def outputs() -> tuple[AuditOutput, ...]:
    """Every output of the audits job: each registered audit's written tables and figures (a
    table's caption ``audit_<name>``, a figure's ``audit_<caption>``)."""
    found = []
    for declared in registered().values():
        folder = None if declared.captions is None else str(declared.captions)
        found += [AuditOutput(t.name, False, t.name, t.name, folder) for t in declared.tables if t.written]
        found += [AuditOutput(f.name, True, f"{f.name}_png", f.caption_stem, folder) for f in declared.figures]
    return tuple(found)


def tables() -> list[str]:
    """The audits' table names, in declaration order."""
    return [o.name for o in outputs() if not o.figure]


def figures() -> list[str]:
    """The audits' figure names, in declaration order."""
    return [o.name for o in outputs() if o.figure]


# ----------------------------------------------------------------------------- report sections

VERDICT_CATEGORY = "Verdict"

PERSONA_PARTS = ("agreement", "displacement", "sensitivity", "systems", "consistency", "heatmap", "chart")
"""The persona (``persona_<part>``) and prompt-variant (``prompt_sensitivity_<part>``) tables and figures."""

EVIDENCE: dict[str, str] = {
    "figure3": "leaderboard",  # each system under each judge: the leaderboard it would publish
    "asl": "decisions",  # which pairs of systems each judge's tests call different
    **{f"{prefix}_{part}": "persona_prompt" for prefix in ("persona", "prompt_sensitivity") for part in PERSONA_PARTS},
}
"""Report entries of the other rules (not a registered audit's: those name theirs, ``report``) that
no question reads but show a question's answer -> that question."""

OTHER_CATEGORIES: dict[str, tuple[str, ...]] = {
    "Datasets and systems": ("datasets", "recorded_runs", "position_bias"),
    "Calibration with few labels": (),  # the calibration audit's (voirdire.audits.calibration: report=)
    "Juries": ("jury", "jury_correlation"),  # written by the jury rule (workflow/rules/judges.smk)
    "Assistants": (
        "label_shift",
        "substitution",
        "rewrite_checks",
        "figure4",
        "rewrite_self_preference",
        "score_shift",
        "figure5",
    ),
    "Reproducibility": ("fingerprint", "probes_fingerprint", "timings"),
    "Cost": ("ledger",),  # the cost ledger: calls, tokens and dollars planned and spent (workflow/rules/plan.smk)
}
"""The categories of the report entries that answer no question (after the questions', in this
order), each with the entries of the other rules it holds; a registered audit's table or figure
names its category itself (``report``)."""

SHORT_NAMES: dict[str, str] = {
    "verdict": "Verdict",
    "table1": "Table 1",
    "table2": "Table 2",
    "figure3": "Figure 3",
    "figure4": "Figure 4",
    "figure5": "Figure 5",
    "asl": "ASL curves",
    "swap": "Swap test",
    "pad": "Pad test",
    "injection": "Injection probe",
    "gaming": "Gamed system",
    "position_bias": "PRP position bias",
    "rewrite_self_preference": "Rewrite self-preference",
    "probes_fingerprint": "Probes fingerprint",
    "jury_correlation": "Jury: member error correlation",
    **{f"persona_{part}": f"Personas: {part}" for part in PERSONA_PARTS},
    **{f"prompt_sensitivity_{part}": f"Prompt variants: {part}" for part in PERSONA_PARTS},
}
"""Subcategories that are not the stem's words (``label_test`` -> "Label test" needs none)."""


def _questions():
    from voirdire.questions import QUESTIONS  # pandas: only where the report is filed

    registered()  # the questions declared beside their audits join QUESTIONS

    return QUESTIONS


def report_title(question: str) -> str:
    """A question as the verdict's table heads its column, capitalised: ``own_family`` -> "Own family"."""
    return _questions()[question].name.replace("_", " ").capitalize()


def declared_reports() -> dict[str, str]:
    """Where each registered audit's written table and figure that names one is filed (its
    ``report``), by file stem; a table's names its figure of the same name too."""
    found: dict[str, str] = {}
    for declared in registered().values():
        outputs = [*(t for t in declared.tables if t.written), *declared.figures]
        for output in outputs:
            if output.report is not None:
                found.setdefault(output.name, output.report)
    return found


def other_categories() -> list[str]:
    """The categories of the entries no question reads: :data:`OTHER_CATEGORIES`, then those only a
    registered audit names (``report``: neither a question nor one of them), as loaded."""
    questions = _questions()
    named = [r for r in declared_reports().values() if r not in questions and r not in OTHER_CATEGORIES]
    return list(dict.fromkeys([*OTHER_CATEGORIES, *named]))


def report_categories() -> list[str]:
    """Every report category, numbered in the report's order: the verdict, the questions, the others."""
    names = [VERDICT_CATEGORY, *(report_title(q) for q in _questions()), *other_categories()]
    width = len(str(len(names)))
    return [f"{i:0{width}d}. {name}" for i, name in enumerate(names, start=1)]


def report_category(question: str) -> str:
    """The report category of a verdict question (its name in :data:`voirdire.verdict.QUESTIONS`)."""
    return report_categories()[1 + list(_questions()).index(question)]


def report_question(name: str) -> str | None:
    """The question a report entry is filed under: the first that reads it, else the question its
    declaration names (``report``), else its :data:`EVIDENCE`."""
    questions = _questions()
    for question in questions.values():
        if name in question.reads:
            return question.name
    declared = declared_reports().get(name)
    return declared if declared in questions else EVIDENCE.get(name)


def report_section(name: str) -> dict[str, str]:
    """The report entry of the table or figure ``name`` (its file stem) -> ``{"category": ...,
    "subcategory": ...}``, the keyword arguments of Snakemake's ``report()``."""
    numbered = report_categories()
    if name == "verdict":
        category = numbered[0]
    elif (question := report_question(name)) is not None:
        category = report_category(question)
    else:
        others = [c for c, names in OTHER_CATEGORIES.items() if name in names]
        others += [declared_reports()[name]] if name in declared_reports() else []
        if not others:
            raise KeyError(
                f"{name}: no report section (a question reads it, its declaration's report, or "
                "voirdire.audits.declared's EVIDENCE or OTHER_CATEGORIES)"
            )
        category = numbered[1 + len(_questions()) + other_categories().index(others[0])]
    shorts = SHORT_NAMES | {o.name: a.short for a in registered().values() if a.short for o in (*a.tables, *a.figures)}
    # a table's own short name, and its figure's of the same name
    shorts |= {t.name: t.short for a in registered().values() for t in a.tables if t.short}
    return {"category": category, "subcategory": shorts.get(name, name.replace("_", " ").capitalize())}


def report_entries() -> list[str]:
    """Every stem :func:`report_section` files, the verdict's first."""
    read = [name for q in _questions().values() for name in q.reads]
    other = [name for names in OTHER_CATEGORIES.values() for name in names]
    return list(dict.fromkeys(["verdict", *read, *declared_reports(), *EVIDENCE, *other]))
