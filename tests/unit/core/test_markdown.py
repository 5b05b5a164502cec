"""The Markdown view of a table (:func:`voirdire.output.markdown_table`): tabulate's pipe layout,
each column typed by its dtype, cells that cannot break the table."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from voirdire.output import MISSING, markdown_table, write_table


def tabulated(frame: pd.DataFrame, floatfmt: str) -> str:
    """The same frame through pandas' ``to_markdown`` (tabulate's pipe format), as the workflow
    wrote its views before: missing values as None, ``n/a``."""
    return frame.astype(object).where(frame.notna(), None).to_markdown(index=False, floatfmt=floatfmt, missingval="n/a")


def rows_of(text: str) -> list[list[str]]:
    """A pipe table's rows (header, alignment row, body), each cell stripped; an escaped ``\\|`` stays
    inside its cell."""
    rows = []
    for line in text.splitlines():
        cells, cell, escaped = [], "", False
        for char in line.strip()[1:-1]:
            if char == "|" and not escaped:
                cells.append(cell.strip())
                cell = ""
            else:
                cell += char
            escaped = char == "\\"
        rows.append([*cells, cell.strip()])
    return rows


def typed_frame(rows: int, seed: int) -> pd.DataFrame:
    """A frame of every kind of column a table holds, with missing values."""
    rng = np.random.default_rng(seed)
    missing = rng.uniform(size=rows) < 0.2
    spread = 10.0 ** rng.integers(-6, 4, rows)
    return pd.DataFrame(
        {
            "judge": rng.choice(["smollm2", "assessor-b", "a judge with a long name"], rows),
            "pairs": rng.integers(0, 10_000, rows),
            "queries": pd.array(np.where(missing, None, rng.integers(0, 50, rows)), dtype="Int64"),
            "p": np.where(missing, np.nan, rng.uniform(size=rows) * spread),
            "difference": rng.normal(0, 1, rows),
            "whole": rng.integers(-3, 3, rows).astype(float),  # whole floats stay floats
            "extreme": np.where(rng.uniform(size=rows) < 0.1, np.inf, -rng.uniform(size=rows)),
            "flagged": rng.uniform(size=rows) < 0.5,
            "blocked": pd.Series(np.where(missing, None, rng.uniform(size=rows) < 0.5), dtype=object),
            "family": pd.Series(np.where(missing, None, "t5"), dtype=object),
            "count_beside_none": pd.Series([None if m else int(i) for i, m in enumerate(missing)], dtype=object),
            "query_id": [str(1_000_000 + int(i)) for i in rng.integers(0, 10**6, rows)],
            "nothing": np.full(rows, np.nan),
        }
    )


@pytest.mark.parametrize("floatfmt", [".3f", ".4g", ".4f"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_layout_is_tabulates_pipe_format(floatfmt, seed):
    """On columns whose text tabulate reads the way their dtype says, the same text as pandas'
    ``to_markdown``: widths, decimal alignment, alignment row, missing values."""
    frame = typed_frame(40, seed)
    assert markdown_table(frame, floatfmt=floatfmt) == tabulated(frame, floatfmt)
    one_row = frame.head(1)
    assert markdown_table(one_row, floatfmt=floatfmt) == tabulated(one_row, floatfmt)


def test_a_frame_without_rows_or_columns():
    empty = pd.DataFrame({"judge": pd.Series([], dtype=object), "pairs": pd.Series([], dtype=int)})
    assert markdown_table(empty) == tabulated(empty, ".4f")
    assert markdown_table(pd.DataFrame(index=[0, 1])) == ""


def test_numbers_align_right_at_the_decimal_point_and_text_left():
    frame = pd.DataFrame({"name": ["a", "bb"], "value": [1.5, 12.25], "n": [3, 40], "p": [0.5, None]})
    header, alignment, first, second = markdown_table(frame, floatfmt="g").splitlines()
    assert alignment == "|:-------|--------:|----:|------:|"
    assert first == "| a      |    1.5  |   3 |   0.5 |"
    assert second == "| bb     |   12.25 |  40 | n/a   |"
    assert header == "| name   |   value |   n |     p |"


def test_a_pipe_or_a_line_break_in_a_cell_cannot_break_the_table():
    frame = pd.DataFrame({"why": ["a | b", "two\nlines", None], "x|y": [1, 2, 3]})
    text = markdown_table(frame)
    lines = text.splitlines()
    assert len(lines) == 2 + len(frame)
    rows = rows_of(text)
    assert all(len(row) == 2 for row in rows)
    assert rows[0] == ["why", "x\\|y"]
    assert [row[0] for row in rows[2:]] == ["a \\| b", "two lines", MISSING]


def test_text_stays_as_written():
    """tabulate would read text that looks like a number as one (and print "1.50" as "1.5000");
    a text column prints each value as written, left-aligned. Integers in digits (query ids)
    align right, as written."""
    frame = pd.DataFrame({"version": ["1.50", "2"], "query_id": ["0042", "1037798"], "mixed": ["all", "0"]})
    rows = rows_of(markdown_table(frame, floatfmt=".4f"))
    assert [row[0] for row in rows[2:]] == ["1.50", "2"]
    assert [row[1] for row in rows[2:]] == ["0042", "1037798"]
    assert rows[1][0].startswith(":") and rows[1][1].endswith(":") and rows[1][2].startswith(":")
    assert [row[2] for row in rows[2:]] == ["all", "0"]


def test_blank_columns_leave_a_missing_value_empty():
    frame = pd.DataFrame(
        {"reason": [None, "no labels"], "family": [None, "t5"], "n": pd.array([None, 3], dtype="Int64")}
    )
    rows = rows_of(markdown_table(frame, blank=["reason"]))
    assert rows[2] == ["", MISSING, MISSING]
    assert rows[3] == ["no labels", "t5", "3"]


def test_write_table_merges_intervals_and_prints_integers_from_their_dtype(tmp_path):
    frame = pd.DataFrame(
        {
            "dataset": ["d", "d", "d"],
            "judge": ["a", "b", "c"],
            "kappa": [0.5, 1.0, None],
            "kappa_ci_low": [0.25, math.nan, 0.1],
            "kappa_ci_high": [0.75, math.nan, 0.2],
            "pairs": [10, 20, 30],
            "systems": [3.0, None, 5.0],  # a count beside a missing value, declared
            "rank": [1.0, 2.0, 3.0],  # whole, not declared: a float
        }
    )
    write_table(frame, tmp_path / "t", title="t", floatfmt=".3f", counts=["systems"])
    rows = rows_of((tmp_path / "t.md").read_text(encoding="utf-8").split("## d\n\n")[1].strip())
    assert rows[0] == ["judge", "kappa", "pairs", "systems", "rank"]
    assert [row[1:] for row in rows[2:]] == [
        ["0.500 [0.250, 0.750]", "10", "3", "1.000"],
        ["1.000", "20", MISSING, "2.000"],
        [MISSING, "30", "5", "3.000"],
    ]
    assert pd.read_csv(tmp_path / "t.csv")["systems"].tolist()[0] == 3.0  # the CSV keeps the data as it is
