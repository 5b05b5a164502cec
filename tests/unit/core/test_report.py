"""What a reader sees: the report's captions render cleanly and explain every column, the
Markdown tables print counts as integers, and the docs' figures come from a run."""

from __future__ import annotations

import re
import subprocess
import sys

import jinja2
import pandas as pd
import pytest
from conftest import ROOT
from docutils.core import publish_parts
from support.captions import CAPTION_TABLES, undocumented

from voirdire.output import _counts_as_integers, write_table

CAPTIONS = sorted((ROOT / "workflow" / "report").glob("*.rst"))


def render(text: str) -> str:
    """A caption as Snakemake's report renders it: Jinja first, then reStructuredText to HTML,
    with every Docutils message (info and up) written into the output."""
    text = jinja2.Environment().from_string(text).render(snakemake=None, categories={}, files={})
    return publish_parts(text, writer="html", settings_overrides={"report_level": 1, "halt_level": 5})["whole"]


@pytest.mark.parametrize("caption", CAPTIONS, ids=lambda p: p.stem)
def test_caption_renders_without_system_messages(caption):
    html = render(caption.read_text(encoding="utf-8"))
    messages = re.findall(r'class="system-message".*?</div>', html, re.S)
    assert "System Message" not in html, f"{caption.name}: {' | '.join(re.sub('<[^>]+>', ' ', m) for m in messages)}"


def test_the_check_sees_a_bad_caption():
    assert "System Message" in render("mean |delta_r| over systems")
    assert "System Message" not in render("mean ``|delta_r|`` over systems")


def test_every_table_caption_exists():
    stems = {p.stem for p in CAPTIONS}
    assert set(CAPTION_TABLES) <= stems, set(CAPTION_TABLES) - stems


@pytest.mark.xdist_group("shared-runs")  # the fixture is asked for by name: conftest cannot see it
@pytest.mark.parametrize("run", ["dl19_results", "dl19_runs_results"])
def test_each_table_caption_explains_its_columns(run, request):
    """Every column of every table the DL19 runs write (judges; recorded runs and measures) is
    named in its caption."""
    assert undocumented(request.getfixturevalue(run)) == {}


def test_report_builds_without_system_messages(dl19_report):
    html = dl19_report.read_text(encoding="utf-8")
    assert "pairs_outside_pool" in html  # the captions are in it (Table 2's legend)
    assert "System Message" not in html
    assert "Undefined substitution" not in html


def test_counts_print_as_integers(tmp_path):
    """Integer-ness from the data and the writer's word, never from a column's name."""
    frame = pd.DataFrame(
        {
            "dataset": ["d"] * 3,
            "queries": [14.0, None, 3.0],  # a count beside a missing value: float, declared
            "unparsed_pairs": pd.Series([141, None, 0], dtype=object),  # ints in an object column
            "systems_of_family": [1.0, 1.0, None],  # a declared count of 0s and 1s
            "n_grade_3": [0.0, 1.0, 1.0],  # named like a count, not declared: a float
            "strictness_systems": [7.0, None, 4.5],  # declared, not whole: printed as a float
            "pairs": [3, 4, 5],  # an integer dtype: an integer, declared or not
            "depth": pd.array([10, None, 20], dtype="Int64"),
            "tau_oracles": [1.0, 1.0, -1.0],  # a statistic that happens to be whole
            "mean_grade": [3.0, 2.0, 3.0],
            "coverage": [1.0, 0.5, None],
            "flagged": [True, False, True],
            "reason": [None, "the judge declares no family", None],
            "family": ["t5", None, "rank1"],
        }
    )
    counts = ["queries", "systems_of_family", "strictness_systems", "not_a_column"]
    shown = _counts_as_integers(frame, counts)
    for column in ("queries", "systems_of_family"):
        assert str(shown[column].dtype) == "Int64", column
    for column in ("strictness_systems", "n_grade_3", "tau_oracles", "mean_grade", "coverage"):
        assert shown[column].dtype.kind == "f", column
    assert shown["unparsed_pairs"].dtype == object and shown["flagged"].dtype == bool
    write_table(frame, tmp_path / "t", title="t", floatfmt=".4f", counts=counts)
    table = (tmp_path / "t.md").read_text(encoding="utf-8")
    assert "page 2 of 2" in table  # 15 columns: paged, the first column on every page
    cells = markdown_cells(table)
    assert cells["queries"] == ["14", "n/a", "3"]
    assert cells["unparsed_pairs"] == ["141", "n/a", "0"]
    assert cells["systems_of_family"] == ["1", "1", "n/a"]
    assert cells["strictness_systems"] == ["7.0000", "n/a", "4.5000"]
    assert cells["n_grade_3"] == ["0.0000", "1.0000", "1.0000"]
    assert cells["pairs"] == ["3", "4", "5"] and cells["depth"] == ["10", "n/a", "20"]
    assert cells["tau_oracles"] == ["1.0000", "1.0000", "-1.0000"]
    assert cells["mean_grade"] == ["3.0000", "2.0000", "3.0000"]
    assert cells["flagged"] == ["True", "False", "True"]
    # no reason: an empty cell, not "n/a" (the default blank columns); a missing family is still n/a
    assert cells["reason"] == ["", "the judge declares no family", ""]
    assert cells["family"] == ["t5", "n/a", "rank1"]
    assert "14.0" not in table and "141.0" not in table
    write_table(frame, tmp_path / "u", title="u", floatfmt=".4f", counts=counts, blank=())
    assert markdown_cells((tmp_path / "u.md").read_text(encoding="utf-8"))["reason"][0] == "n/a"


def markdown_cells(table: str) -> dict[str, list[str]]:
    """Column -> its cells, from every column page of a Markdown table."""
    cells = {}
    for page in table.split("### ")[1:]:
        rows = [
            [c.strip() for c in line.strip()[1:-1].split("|")] for line in page.splitlines() if line.startswith("|")
        ]
        for i, name in enumerate(rows[0]):
            cells[name] = [r[i] for r in rows[2:]]
    return cells


def test_plan_cost_of_an_unpriced_model_is_na(monkeypatch):
    from voirdire import plan

    monkeypatch.setattr(plan, "estimated_cost", lambda *_: None)  # litellm's cost map has no price
    row = plan._row("judge", "local/model", 10, [], [])
    assert row["est_cost_usd_max"] == "n/a"
    assert "n/a" in pd.DataFrame([row]).to_markdown(index=False)


def test_doc_figures_quotes_the_run(dl19_results):
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "doc_figures.py"), str(dl19_results)],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    text = result.stdout
    for heading in ("## Table 1", "## Table 2", "## Self-preference", "## Wall time"):
        assert heading in text
    # every Table 1 figure quoted is the one the run's own Markdown table prints
    table1 = (dl19_results / "tables" / "original" / "table1.md").read_text(encoding="utf-8")
    quoted = re.search(r"\| BM25 \| ([0-9.]+ \[[0-9.]+, [0-9.]+\]) \|", text).group(1)
    assert re.search(rf"\| BM25 +\| nDCG\S* +\| +{re.escape(quoted)} \|", table1)
    assert "n/a" not in text.split("## Wall time")[1]  # the run's benchmark files are there
