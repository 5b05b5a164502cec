"""The report opens on the answer: in a real headless Chromium, the first screen of the Snakemake
report (its landing page at 1280x800, before any click or scroll) holds every judge's verdict,
and the landing page's verdict table is results/verdict.csv, cell for cell.

The report is built from the DL19 test config's run (``dl19_results``, shared with test_dl19 and
test_report), so no workflow runs for this module but ``snakemake --report`` (``dl19_report``, also
shared with test_report). The report is a
single-page React app: what is checked is what Chromium draws after its JavaScript ran, read word
by word off the screen (tests/support/chromium.py), not the HTML file.
"""

from __future__ import annotations

import re

import pandas as pd
import pytest
from support import chromium

pytestmark = pytest.mark.workflow

# the landing page is drawn: the verdict embedded in its text and the rule graph beside it
READY = "document.querySelector('.voirdire-verdict') && document.querySelector('#rulegraph svg, #rulegraph canvas')"

# the landing page's verdict table, a list of rows of cell texts (the header first)
TABLE = "Array.from(document.querySelectorAll('.voirdire-verdict table tr'), tr => Array.from(tr.cells, c => c.innerText.trim()))"

# Figure 3 under the verdict: the image as drawn (its decoded width, 0 if it did not load) and its caption
FIGURE = (
    "(f => f && [f.querySelector('img').naturalWidth, f.querySelector('figcaption').innerText])"
    "(document.querySelector('.voirdire-verdict figure'))"
)

# where the verdict is drawn: the window's width, the page's (the window less the navigation bar on
# its left), the verdict block's, its table's and the rule graph's boxes
LAYOUT = """(() => {
  const box = e => { const r = e.getBoundingClientRect(); return {left: r.left, right: r.right, top: r.top,
                                                                   bottom: r.bottom, width: r.width}; };
  const nav = document.querySelector('nav');
  const table = document.querySelector('.voirdire-verdict table');
  return {window: innerWidth, page: innerWidth - (nav ? nav.getBoundingClientRect().right : 0),
          verdict: box(document.querySelector('.voirdire-verdict')), table: box(table),
          rulegraph: box(document.querySelector('#rulegraph'))};
})()"""

# how a judge's sentence (voirdire.verdict.sentence) says each status
SAYS = {"flagged on ": "flag", "inconclusive on ": "inconclusive", "passes ": "pass", "reports ": "info"}
BUDGET = re.compile(r"chance of any false flag at most [0-9.]+ over its \d+ tested questions \(Holm\)")
NONE_FLAGGED = "no audit flags it"
NOT_ASKED = re.compile(r"(\d+) question\(s\) could not be asked")


@pytest.fixture(scope="module")
def browser_available():
    if chromium.executable() is None:
        installed = chromium.install()
        if installed is None:
            pytest.skip("chromium is not installed and apt-get cannot install it here (not found, or not root)")
        if chromium.executable() is None:
            pytest.fail(f"apt-get install chromium failed:\n{installed.stdout[-2000:]}\n{installed.stderr[-2000:]}")


@pytest.fixture(scope="module")
def landing(browser_available, dl19_results, dl19_report, tmp_path_factory):
    """The DL19 run's report (built once, tests/conftest.py) as Chromium shows it: the first
    screen's lines, the verdict table's rows, the verdict CSV, and a screenshot of the first
    screen (named in failure messages)."""
    folder = tmp_path_factory.mktemp("report-browser")
    with chromium.Chromium() as browser:
        page = browser.open(dl19_report.as_uri(), ready=READY)
        screen = page.first_screen()
        table = page.evaluate(TABLE)
        figure = page.evaluate(FIGURE)
        layout = page.evaluate(LAYOUT)
        shot = page.screenshot(folder / "first-screen.png")
    verdict = pd.read_csv(dl19_results / "verdict.csv", keep_default_na=False)
    return {
        "screen": screen,
        "table": table,
        "figure": figure,
        "verdict": verdict,
        "screenshot": shot,
        "layout": layout,
    }


def judges(verdict: pd.DataFrame) -> list[tuple[str, str]]:
    return list(dict.fromkeys(zip(verdict["dataset"], verdict["judge"])))


def stated(sentence: str) -> dict[str, object]:
    """What a judge's sentence says: the questions it flags, passes and reports, and how many
    could not be asked."""
    said: dict[str, object] = {"flag": set(), "inconclusive": set(), "pass": set(), "info": set(), "n/a": 0}
    for part in sentence.removesuffix(".").split("; "):
        if part == NONE_FLAGGED or BUDGET.fullmatch(part):
            continue
        if match := NOT_ASKED.fullmatch(part):
            said["n/a"] = int(match[1])
            continue
        prefix = next((p for p in SAYS if part.startswith(p)), None)
        assert prefix is not None, f"a part of the sentence this test cannot read: {part!r} in {sentence!r}"
        names = re.sub(r" \([^()]*\)", "", part.removeprefix(prefix))  # the effects in brackets
        said[SAYS[prefix]] = set(names.split(", "))
    return said


def expected(rows: pd.DataFrame) -> dict[str, object]:
    """The same, from the judge's rows of verdict.csv."""
    names = {s: {q.replace("_", " ") for q in rows.loc[rows["status"] == s, "question"]} for s in SAYS.values()}
    return {**names, "n/a": int((rows["status"] == "na").sum())}


def test_the_first_screen_holds_every_judges_verdict(landing):
    """Each judge of verdict.csv is named on the first screen, in a sentence whose flags, passes,
    reports and number of questions not asked are that judge's statuses in the CSV."""
    verdict, screen = landing["verdict"], landing["screen"]
    shown = "\n".join(screen)
    assert judges(verdict), "verdict.csv names no judge"
    for dataset, judge in judges(verdict):
        lead = f"{judge} on {dataset}: "
        lines = [line for line in screen if line.startswith(lead)]
        assert lines, f"{judge}'s verdict is not on the first screen ({landing['screenshot']}); it shows:\n{shown}"
        rows = verdict[(verdict["dataset"] == dataset) & (verdict["judge"] == judge)]
        assert stated(lines[0].removeprefix(lead)) == expected(rows), lines[0]


def test_the_first_screen_opens_at_the_top_of_the_page(landing):
    """The page is not scrolled or cut at the top: its first words and the verdict's heading
    line are on screen (Snakemake centres the page vertically, which cut off the top of a page
    taller than the screen; workflow/report/workflow.rst undoes that)."""
    shown = "\n".join(landing["screen"])
    assert "voirdire examines LLM relevance judges" in shown, f"{landing['screenshot']}:\n{shown}"
    assert "The verdict, one row per judge" in shown, f"{landing['screenshot']}:\n{shown}"


def test_the_landing_pages_table_is_the_verdict_csv(landing):
    """Before any click, the landing page's table has a row per judge and a column per question,
    each cell the CSV's text for it with its status word (pass, flag, inconclusive, info or n/a)."""
    verdict, (header, *rows) = landing["verdict"], landing["table"]
    assert header[:2] == ["dataset", "judge"]
    questions = {q.replace("_", " "): q for q in verdict["question"]}
    assert set(header[2:]) >= set(questions), header
    assert [tuple(row[:2]) for row in rows] == judges(verdict)
    text = verdict.set_index(["dataset", "judge", "question"])
    for dataset, judge, *cells in rows:
        for name, cell in zip(header[2:], cells):
            if name not in questions:
                assert cell.startswith("n/a"), (judge, name, cell)  # a question this run did not write
                continue
            row = text.loc[(dataset, judge, questions[name])]
            assert cell == row["text"], (judge, name)
            word = r"n/a" if row["status"] == "na" else rf"\b{row['status']}\b"
            assert re.search(word, cell), (judge, name, cell)


def test_figure3_is_drawn_on_the_landing_page(landing):
    """The DL19 run has systems, so Figure 3 sits under the verdict table, a loaded image."""
    assert landing["figure"] is not None, "no Figure 3 on the landing page"
    width, caption = landing["figure"]
    assert width > 300 and caption.startswith("Figure 3:")


def test_the_verdict_takes_the_pages_full_width_and_the_rule_graph_moves_below(landing):
    """At 1280x800 the verdict is not squeezed beside the rule graph: the verdict block and its
    table span at least 90% of the page (the window less Snakemake's navigation bar, which the
    window's width would count), the table ends inside the window (a table wider than the page
    scrolls sideways in it), and the rule graph lies below the table, not beside it
    (workflow/report/workflow.rst). Beside the rule graph the verdict had 512 px of 990."""
    layout, shot = landing["layout"], landing["screenshot"]
    page = layout["page"]
    assert page > 0.7 * layout["window"], (layout, shot)  # the navigation bar takes a fifth or so
    assert layout["verdict"]["width"] >= 0.9 * page, (layout, shot)
    assert layout["table"]["width"] >= 0.9 * page, (layout, shot)
    assert layout["table"]["right"] <= layout["window"] + 1, (layout, shot)
    assert layout["rulegraph"]["top"] >= layout["table"]["bottom"], (layout, shot)
