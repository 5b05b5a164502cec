"""The report is filed by the verdict's questions (voirdire.audits.declared.report_section): a
reader finds each question's evidence in a category of its own, the verdict first, and the rules
take every entry's category from the library, not from a string of their own."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from voirdire.audits import declared
from voirdire.verdict import QUESTIONS

ROOT = Path(__file__).resolve().parents[3]
RULES = sorted((ROOT / "workflow" / "rules").glob("*.smk"))

# in_report(<path>, "<name>"[, "<caption>"]) with literal names, as the rule files call it
IN_REPORT = re.compile(r'in_report\(\s*L\.\w+\([^()]*\),\s*"(\w+)"(?:,\s*"(\w+)")?\s*,?\s*\)')


def test_every_table_a_question_reads_is_filed_under_a_question_that_reads_it():
    """Under the first question that reads it, in the verdict's order (Table 2 serves labels,
    leaderboard and decisions, and a file has one place in the report)."""
    for question in QUESTIONS.values():
        for name in question.reads:
            first = next(q for q in QUESTIONS.values() if name in q.reads)
            assert declared.report_section(name)["category"] == declared.report_category(first.name), (
                question.name,
                name,
            )
    # a question's own table that no earlier question reads is under that question itself
    for question in QUESTIONS.values():
        if not any(question.table in q.reads for q in list(QUESTIONS.values())[: list(QUESTIONS).index(question.name)]):
            assert declared.report_section(question.table)["category"] == declared.report_category(question.name)


def test_every_question_has_evidence_in_its_category():
    filed = {declared.report_section(name)["category"] for name in declared.report_entries()}
    for name in QUESTIONS:
        assert declared.report_category(name) in filed, f"the report has nothing under {name}"


def test_no_two_questions_share_a_category():
    titles = [declared.report_title(q) for q in QUESTIONS]
    assert len(set(titles)) == len(titles)
    assert len(set(declared.report_categories())) == len(declared.report_categories())
    # the categories of the entries no question reads are none of the questions'
    assert not set(titles) & set(declared.OTHER_CATEGORIES) and declared.VERDICT_CATEGORY not in titles


def test_the_verdict_comes_first_and_the_questions_in_its_order():
    """Snakemake lists the categories alphabetically: the numbers keep the verdict's order."""
    numbered = declared.report_categories()
    assert sorted(numbered) == numbered
    assert (
        numbered[0].endswith(f". {declared.VERDICT_CATEGORY}")
        and declared.report_section("verdict")["category"] == numbered[0]
    )
    assert numbered[1 : 1 + len(QUESTIONS)] == [declared.report_category(q) for q in QUESTIONS]
    assert declared.report_category("own_family").endswith(". Own family")


def test_every_declared_audit_output_has_a_section():
    for output in declared.outputs():
        entry = declared.report_section(output.name)
        assert entry["category"] in declared.report_categories() and entry["subcategory"], output.name


def test_evidence_and_other_entries_say_what_the_questions_read():
    """A table a question reads goes under that question: EVIDENCE may name it (the persona
    tables, one of which the question reads) only with the same question, OTHER never."""
    read = {name for q in QUESTIONS.values() for name in q.reads}
    for name in read & set(declared.EVIDENCE):
        assert declared.EVIDENCE[name] == declared.report_question(name), name
    assert not read & {name for names in declared.OTHER_CATEGORIES.values() for name in names}
    assert set(declared.EVIDENCE.values()) <= set(QUESTIONS)


def test_an_unknown_entry_is_an_error_not_other():
    with pytest.raises(KeyError, match="no report section"):
        declared.report_section("no_such_table")


def test_the_rules_file_every_report_entry_through_the_library():
    """No rule names a category of its own; every entry a rule puts in the report has a section
    and a caption file."""
    named = []
    for path in RULES:
        text = path.read_text(encoding="utf-8")
        assert "category=" not in text, f"{path.name} names a report category: use in_report"
        assert not re.search(r"(?<!\w)report\(\s*L\.", text), f"{path.name} calls report() itself: use in_report"
        named += IN_REPORT.findall(text)
    assert {"verdict", "table1", "table2", "gaming", "timings"} <= {name for name, _ in named}
    for name, caption in named:
        declared.report_section(name)
        assert (ROOT / "workflow" / "report" / f"{caption or name}.rst").exists(), caption or name


def test_the_questions_declared_beside_their_audits_keep_their_place():
    """A question keeps its column of the verdict and its report category wherever it is
    declared: those moved beside their audits sit where ORDER says, a new one goes last."""
    from dataclasses import asdict

    from voirdire.questions import ORDER, question

    assert list(QUESTIONS)[: len(ORDER)] == list(ORDER)
    modules = {name: QUESTIONS[name].answer.__module__ for name in ("length", "drift", "circular_use")}
    assert modules == {
        "length": "voirdire.audits.length",
        "drift": "voirdire.audits.drift",
        "circular_use": "voirdire.audits.circularity",
    }
    saved = dict(QUESTIONS)
    try:
        # declared again after every other, as a module the registry imports last would declare it
        fields = asdict(saved["own_family"])
        answer = fields.pop("answer")
        del QUESTIONS["own_family"]
        question(fields.pop("name"), **fields)(answer)
        question("planted", asks="?", table="planted", needs=(), rule="none")(lambda rows, judge, context: None)
        assert list(QUESTIONS) == [*saved, "planted"]
        assert declared.report_categories()[1 + len(saved)].endswith(". Planted")
    finally:
        QUESTIONS.clear()
        QUESTIONS.update(saved)


def test_an_audit_declares_its_tables_names_and_the_tables_no_file_holds():
    """Each table's own name in the report (the length audit's two), and a table declared
    written=False (the deciles behind the length figure) is no output of the rule."""
    from voirdire.audits.registry import load

    tables = {t.name: t for a in load().values() for t in a.tables}
    assert declared.report_section("length_systems")["subcategory"] == tables["length_systems"].short
    assert declared.report_section("length")["subcategory"] == tables["length"].short != tables["length_systems"].short
    assert not tables["deciles"].written and "deciles" not in declared.tables()
    assert {"length", "length_systems", "drift", "control_chart"} <= set(declared.tables())


def test_the_registered_audits_file_their_own_entries():
    """A registered audit's table or figure no question reads is filed by its declaration
    (``report``): none of them is listed by hand in EVIDENCE or OTHER_CATEGORIES, and every one the
    shipped audits name is a question or a category of the others (no typo makes a category)."""
    from voirdire.audits.registry import load

    outputs = {o.name for a in load().values() for o in (*(t for t in a.tables if t.written), *a.figures)}
    listed = set(declared.EVIDENCE) | {name for names in declared.OTHER_CATEGORIES.values() for name in names}
    assert not outputs & listed, outputs & listed
    reports = declared.declared_reports()
    assert {"confusion", "leniency", "lojo", "lojo_labels", "drift", "calibration"} <= set(reports)
    assert set(reports.values()) <= set(QUESTIONS) | set(declared.OTHER_CATEGORIES)
    assert declared.report_section("confusion")["category"] == declared.report_category("labels")
    assert declared.report_section("calibration")["category"].endswith(". Calibration with few labels")
    # every output of the audits job is a registered audit's: the label test and self-preference too
    assert {"label_test", "self_preference"} <= set(declared.tables())
    assert {"confusion", "leniency"} <= set(declared.figures())


def test_an_audit_naming_a_category_of_its_own_gets_it_after_the_others():
    from voirdire.audits.registry import AUDITS, Figure, Table, audit, load

    load()
    before = declared.report_categories()
    saved = dict(AUDITS)
    try:
        audit(
            "planted_report",
            tables=[Table("planted_report", "Planted", ["dataset"], report="Planted category")],
            figures=[Figure("planted_report_chart", "planted_report", print, report="labels")],
        )(lambda context: {})
        after = declared.report_categories()
        assert after[: len(before)] == before and after[-1].endswith(". Planted category")
        assert declared.report_section("planted_report")["category"] == after[-1]
        assert declared.report_section("planted_report_chart")["category"] == declared.report_category("labels")
        assert {"planted_report", "planted_report_chart"} <= set(declared.report_entries())
    finally:
        AUDITS.clear()
        AUDITS.update(saved)
    assert declared.report_categories() == before
