"""Tables and figures as the workflow writes them: one table writer, one figure writer.

* :func:`write_table` writes a table as CSV and as Markdown (one section per dataset), both
  atomically; it takes the table's path with or without its suffix (:func:`stem`). The
  Markdown is :func:`markdown_table`'s: each column typed by its dtype (integers as integers,
  floats with the table's format, text as written), never by its name; a float column of counts
  prints as integers where the writer names it in ``counts``.
* :func:`save_figure` writes a figure as PNG and PDF at one resolution (:data:`DPI`), both
  atomically, without a creation date in the PDF (a rerun writes the same bytes), and closes it.
* :func:`pyplot` is matplotlib's pyplot on the Agg backend (no display); :func:`per_dataset` and
  :func:`grid` lay out the panels the audits, probes and assistants draw into.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from .formats import atomic_write

DPI = 130
"""The resolution of every figure (PNG; a PDF's vector parts do not depend on it)."""
PDF_METADATA = {"CreationDate": None}
"""No creation date in a PDF, so a rerun (locally or on a cluster) writes the same bytes."""
SUFFIXES = (".csv", ".md", ".png", ".pdf")


def stem(path: str | Path) -> Path:
    """``path`` without its table or figure suffix (``.csv``, ``.md``, ``.png``, ``.pdf``), if any."""
    path = Path(path)
    return path.with_suffix("") if path.suffix in SUFFIXES else path


# ----------------------------------------------------------------------------- figures


def pyplot():
    """matplotlib's pyplot on the Agg backend (imported on first use: it takes a while)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def per_dataset(frame: pd.DataFrame, width: float, height: float):
    """A figure with one panel per dataset of ``frame``: (fig, [(axis, dataset, rows)])."""
    plt = pyplot()
    datasets = list(dict.fromkeys(frame["dataset"])) if len(frame) else [""]
    fig, axes = plt.subplots(1, len(datasets), figsize=(width * len(datasets), height), squeeze=False)
    panels = [
        (ax, d, frame[frame["dataset"] == d] if len(frame) else frame) for ax, d in zip(axes[0], datasets, strict=True)
    ]
    return fig, panels


def grid(count: int, width: float, height: float, cols: int = 3):
    """A figure of ``count`` panels (at least one), ``cols`` a row; unused panels hidden."""
    plt = pyplot()
    count = max(1, count)
    cols = min(cols, count)
    rows = (count + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(width * cols, height * rows), squeeze=False)
    for ax in axes.flat[count:]:
        ax.axis("off")
    return fig, list(axes.flat[:count])


def save_figure(fig, png: str | Path, pdf: str | Path | None = None) -> None:
    """Write ``fig`` as PNG and PDF (``pdf`` defaults to the PNG's path with ``.pdf``), each
    atomically, then close it. Tight layout unless the figure has a layout engine of its own or
    was laid out by :func:`fit_to_contents`."""
    _save(fig, png, pdf)


def save_fitted(fig, png: str | Path, pdf: str | Path | None = None) -> None:
    """:func:`fit_to_contents`, then :func:`save_figure`, the PNG taken from the fit's last draw
    (the same bytes ``savefig`` writes, without drawing the figure again)."""
    _save(fit_to_contents(fig), png, pdf, drawn=True)


def _save(fig, png: str | Path, pdf: str | Path | None, drawn: bool = False) -> None:
    fitted = getattr(fig, _FITTED, False)
    if fig.get_layout_engine() is None and not fitted:
        fig.tight_layout()
    pdf = Path(png).with_suffix(".pdf") if pdf is None else pdf
    for path, fmt in ((png, "png"), (pdf, "pdf")):
        with atomic_write(path, "wb") as fh:  # creates the folder
            if fmt == "png" and drawn and fitted and hasattr(fig.canvas, "buffer_rgba"):  # an Agg canvas
                _png_of_last_draw(fig, fh)
            else:
                fig.savefig(fh, format=fmt, dpi=DPI, **({"metadata": PDF_METADATA} if fmt == "pdf" else {}))
    pyplot().close(fig)


_FITTED = "_voirdire_fitted"
"""Set on a figure :func:`fit_to_contents` laid out: no layout engine left to run when it is saved."""


def _png_of_last_draw(fig, fh) -> None:
    """The PNG of the Agg canvas as it was last drawn, written as ``savefig(format="png",
    dpi=DPI)`` writes it (``FigureCanvasAgg.print_png``: the RGBA buffer through
    ``matplotlib.image.imsave``, the same metadata)."""
    from matplotlib import image

    image.imsave(fh, fig.canvas.buffer_rgba(), format="png", origin="upper", dpi=fig.dpi)


# ----------------------------------------------------------------------------- tables


MAX_COLUMNS = 12
"""The widest Markdown table a person reads; the CSV keeps every column."""
MAX_CELL = 80
"""A view's longer text cells lose their parenthetical remarks (the CSV keeps the full text)."""
MAX_ROWS = 1000
"""The longest Markdown table a person reads, per dataset; the CSV keeps every row. The paired
tests of every pair of 100 systems under 20 judges and 4 measures are 424,200 rows."""


class IntervalCell(NamedTuple):
    """A view cell ``name`` of an interval whose bounds are not named ``<x>_ci_low`` and
    ``<x>_ci_high`` (the sensitivity table's ``ci_low_queries``, ``ci_high_queries``): ``value
    [low, high]`` from the columns ``value``, ``low`` and ``high``, or ``[low, high]`` alone
    when ``value`` is None (a second interval of a value shown in another cell)."""

    name: str
    value: str | None
    low: str
    high: str


View = list[str | IntervalCell]
"""A Markdown view: the columns a person reads, in order (names after the ``<x>_ci_low`` /
``<x>_ci_high`` merge), and :class:`IntervalCell` cells."""

BLANK = ("reason", "reasons", "note", "notes", "position_note")
"""The columns of why a row has no result, or a note on it, in every table: where such a cell is
missing there is nothing to explain, and the Markdown leaves it empty rather than ``n/a``
(:func:`write_table`'s ``blank``)."""
MISSING = "n/a"
"""How the Markdown prints a missing value."""


def write_table(
    frame: pd.DataFrame,
    path: str | Path,
    *,
    title: str,
    floatfmt: str = ".4f",
    manifest: str | None = None,
    empty: str = "no judge besides the human labels is configured",
    view: View | None = None,
    first: tuple[str, Callable[[pd.DataFrame], pd.Series]] | None = None,
    max_rows: int = MAX_ROWS,
    keep: Sequence[str] = (),
    counts: Sequence[str] = (),
    blank: Sequence[str] = BLANK,
) -> None:
    """Write the table as ``<stem>.csv`` and ``<stem>.md`` (one Markdown section per dataset);
    ``path`` is either file or their common stem.

    A dataset of more than ``max_rows`` rows shows ``max_rows`` of them in the Markdown and says
    so: those ``first`` picks (what they are, and a function of the rows giving a boolean mask),
    then the others, each in the table's order.

    The CSV keeps every column. The Markdown is the view a person reads: a statistic and its
    interval share one cell (``0.482 [0.360, 0.588]``, from ``<x>``, ``<x>_ci_low`` and
    ``<x>_ci_high``), and ``view`` (names after that merge, and :class:`IntervalCell` cells of other
    bounds) picks and orders its columns; the Markdown then says how many columns the CSV has,
    and a view's text cells longer than :data:`MAX_CELL` lose their parenthetical remarks (a
    long n/a reason reads as its first clause). ``manifest`` (the manifest's SHA-256) is
    printed under the Markdown title, so a table says which systems, judges and settings it was
    made from. The Markdown is rendered by :func:`markdown_table`: a column of integers prints
    as integers, and so does a column named in ``counts`` (the writer's word that it counts)
    whose values present are all whole (a count beside a missing value is a float column); other
    numbers print with ``floatfmt``. A missing value prints as ``n/a``, except in the text
    columns named in ``blank`` (by default :data:`BLANK`: why a row has no result, or a note on
    it), where a missing value means there is nothing to say and prints as an empty cell.

    A view wider than :data:`MAX_COLUMNS` is paged by column (:func:`_column_pages`): every page
    repeats the ``keep`` columns (by default the first) and shows the next of the others, under a
    heading that names them.
    """
    base = stem(path)
    with atomic_write(f"{base}.csv") as fh:
        write_csv(frame, fh)
    lines = [f"# {title}", ""]
    if manifest:
        lines += [f"manifest sha256: `{manifest}` (see fingerprint.json)", ""]
    if frame.empty:
        lines.append(f"(no rows: {empty})")
    paged = False
    for dataset, block in frame.groupby("dataset", sort=False) if not frame.empty else []:
        note = None
        if len(block) > max_rows:
            block, note = _rows_shown(block, first, max_rows, f"{base.name}.csv")
        shown = _counts_as_integers(block.drop(columns="dataset"), counts)
        cells = [c for c in view or [] if isinstance(c, IntervalCell) and {c.low, c.high} <= set(shown.columns)]
        shown = _with_intervals(shown.assign(**{c.name: _interval_cells(shown, c, floatfmt) for c in cells}), floatfmt)
        if view is not None:
            names = [c.name if isinstance(c, IntervalCell) else c for c in view]
            shown = shown[[c for c in names if c in shown.columns]]
            shown = shown.assign(**{c: shown[c].map(_short) for c in shown.columns if shown[c].dtype.kind == "O"})
        lines += [f"## {dataset}", "", *([note, ""] if note else [])]
        kept, pages = _column_pages(list(shown.columns), keep)
        paged = paged or len(pages) > 1
        for number, columns in enumerate(pages, 1):
            if len(pages) > 1:
                named = columns[0] if len(columns) == 1 else f"{columns[0]} to {columns[-1]}"
                lines += [f"### {named} (columns, page {number} of {len(pages)})", ""]
            lines += [markdown_table(shown[kept + columns], floatfmt=floatfmt, blank=blank), ""]
    if (view is not None or paged) and not frame.empty:
        lines.append(f"{len(frame.columns)} columns in all: `{base.name}.csv` has every one.")
    with atomic_write(f"{base}.md") as fh:
        fh.write("\n".join(lines))


CSV_FLOAT = "%.12g"
"""How a table's CSV prints a float: 12 significant digits."""


def write_csv(frame: pd.DataFrame, fh) -> None:
    """``frame.to_csv(fh, index=False, float_format=CSV_FLOAT)``, the same text; a frame of
    numbers, booleans and text (each column one of them) is formatted column by column and
    joined here, several times faster than pandas' writer on the paired tests of every pair of
    many systems (400,000 rows); any other column is left to pandas."""
    text = _csv_text(frame)
    if text is None:
        frame.to_csv(fh, index=False, float_format=CSV_FLOAT)
    else:
        fh.write(text)


_NEEDS_QUOTES = re.compile(r'[,"\n]')


def _csv_field(text: str) -> str:
    """A text field as the csv module's minimal quoting writes it (pandas' default)."""
    return '"' + text.replace('"', '""') + '"' if _NEEDS_QUOTES.search(text) else text


def _csv_text(frame: pd.DataFrame) -> str | None:
    """The CSV of :func:`write_csv`, or None where a column is not float64, integer, boolean or
    text (with missing values), or the frame has fewer than two columns (a lone empty field is
    quoted) or duplicate column names."""
    if frame.shape[1] < 2 or not frame.columns.is_unique or not all(isinstance(c, str) for c in frame.columns):
        return None
    columns = []
    for name in frame.columns:
        column = frame[name]
        kind = column.dtype.kind if isinstance(column.dtype, np.dtype) else None
        if kind == "f" and column.dtype == np.float64:
            columns.append(["" if x != x else CSV_FLOAT % x for x in column.tolist()])
        elif kind in ("i", "u"):
            columns.append([str(x) for x in column.tolist()])
        elif kind == "b":
            columns.append(["True" if x else "False" for x in column.tolist()])
        elif kind == "O" or pd.api.types.is_string_dtype(column.dtype):
            values = column.tolist()
            if not all(
                isinstance(x, str) or x is None or x is pd.NA or (isinstance(x, float) and x != x) for x in values
            ):
                return None
            texts = {x for x in values if isinstance(x, str)}
            if any("\r" in x for x in texts):  # the csv module's own rule for a carriage return
                return None
            fields = {x: _csv_field(x) for x in texts}
            columns.append([fields[x] if isinstance(x, str) else "" for x in values])
        else:
            return None
    header = ",".join(_csv_field(name) for name in frame.columns)
    return "\n".join([header, *(",".join(row) for row in zip(*columns, strict=True))]) + "\n"


def _column_pages(columns: list[str], keep: Sequence[str] = ()) -> tuple[list[str], list[list[str]]]:
    """The Markdown's columns in pages of at most :data:`MAX_COLUMNS`: the columns every page
    repeats (``keep``'s that are present; by default the first column), and each page's others;
    one page of the others when every column fits."""
    if len(columns) <= MAX_COLUMNS:
        return [], [columns]
    kept = [c for c in keep if c in columns] or columns[:1]
    others = [c for c in columns if c not in kept]
    width = max(1, MAX_COLUMNS - len(kept))
    return kept, [others[start : start + width] for start in range(0, len(others), width)]


def _rows_shown(
    block: pd.DataFrame, first: tuple[str, Callable[[pd.DataFrame], pd.Series]] | None, max_rows: int, csv: str
) -> tuple[pd.DataFrame, str]:
    """The ``max_rows`` rows of a long dataset's block the Markdown shows, and the line that says
    which: ``first``'s rows, then the others, each in the table's order."""
    if first is None:
        return block.head(max_rows), f"{max_rows:,} of {len(block):,} rows shown, in order; `{csv}` has every row."
    what, pick = first
    picked = pick(block).fillna(False).astype(bool).to_numpy()
    order = np.r_[np.flatnonzero(picked), np.flatnonzero(~picked)][:max_rows]
    shown = min(int(picked.sum()), max_rows)
    note = (
        f"{max_rows:,} of {len(block):,} rows shown: {what} first ({shown:,} of {int(picked.sum()):,} shown), "
        f"then the others in order; `{csv}` has every row."
    )
    return block.iloc[order], note


_INTERVAL = re.compile(r"^(?P<name>.+)_ci_low(?P<suffix>.*)$")


def _with_intervals(frame: pd.DataFrame, floatfmt: str) -> pd.DataFrame:
    """``<x>``, ``<x>_ci_low``, ``<x>_ci_high`` (also ``<x>_ci_low<suffix>``, as Table 2's
    ``_vs_pool`` columns) as one text column ``<x>``: ``value [low, high]``."""
    frame = frame.copy()
    for column in list(frame.columns):
        match = _INTERVAL.match(str(column))
        if not match:
            continue
        name = f"{match['name']}{match['suffix']}"
        high = f"{match['name']}_ci_high{match['suffix']}"
        if name not in frame.columns or high not in frame.columns:
            continue
        if not all(pd.api.types.is_numeric_dtype(frame[c]) for c in (name, column, high)):
            continue
        frame[name] = _interval_cells(frame, IntervalCell(name, name, column, high), floatfmt)
        frame = frame.drop(columns=[column, high])
    return frame


def _interval_cells(frame: pd.DataFrame, cell: IntervalCell, floatfmt: str) -> list[str | None]:
    """The cells ``value [low, high]`` of ``cell`` (``[low, high]`` without a value column): the
    value alone where a bound is missing, None (n/a) where the value (or, alone, a bound) is."""

    def text(value, low, up):
        bounds = None if pd.isna(low) or pd.isna(up) else f"[{format(low, floatfmt)}, {format(up, floatfmt)}]"
        if cell.value is None:
            return bounds
        return None if pd.isna(value) else " ".join(t for t in (format(value, floatfmt), bounds) if t)

    values = frame[cell.value] if cell.value in frame.columns else [None] * len(frame)
    return [text(v, lo, hi) for v, lo, hi in zip(values, frame[cell.low], frame[cell.high], strict=True)]


def _short(value):
    """A text longer than :data:`MAX_CELL` without its parenthetical remarks (nested ones too)."""
    if not isinstance(value, str) or len(value) <= MAX_CELL:
        return value
    text, previous = value, None
    while text != previous:
        previous, text = text, re.sub(r"\s*\([^()]*\)", "", text)
    return text.strip() or value


def _counts_as_integers(frame: pd.DataFrame, counts: Sequence[str] = ()) -> pd.DataFrame:
    """``frame`` with the columns named in ``counts`` (those present) as integers (``Int64``)
    where every value present is a whole, finite number: a float column, or an object column of
    numbers (a count beside ``None``). A column whose values are not all whole stays as it is
    (it prints with the table's ``floatfmt``), and so does every column not named: the
    integer-ness of the others comes from their dtype (:func:`markdown_table`)."""
    frame = frame.copy()
    for column in dict.fromkeys(counts):
        if column not in frame.columns:
            continue
        values = frame[column]
        if values.dtype.kind == "O":
            present = values.dropna()
            if present.empty or not present.map(lambda v: isinstance(v, int | float) and not isinstance(v, bool)).all():
                continue
            values = pd.to_numeric(values.where(values.notna(), None), errors="coerce").astype(float)
        elif values.dtype.kind != "f":
            continue
        present = values.dropna()
        if present.empty or not present.map(math.isfinite).all() or not (present % 1 == 0).all():
            continue
        frame[column] = values.astype("Int64")
    return frame


# ----------------------------------------------------------------------------- Markdown


def markdown_table(frame: pd.DataFrame, floatfmt: str = ".4f", blank: Sequence[str] = ()) -> str:
    """``frame`` as a Markdown pipe table, each column typed by its data, not its name.

    * A column of integers (an integer dtype, ``Int64`` with missing values, or an object column
      whose values present are all ints), and a text column whose values are all integers written
      in digits (query ids), are right-aligned; integers print as they are.
    * A column of floats (a float dtype, or an object column of numbers) is right-aligned at the
      decimal point, each value as ``format(value, floatfmt)``.
    * Any other column (text, booleans, a column with nothing in it) is left-aligned, each value
      as ``str(value)``, without surrounding whitespace.
    * A missing value (None, NaN, ``pd.NA``) prints as :data:`MISSING`, or as an empty cell in the
      columns named in ``blank``. In text and headers a ``|`` is escaped (``\\|``) and a line
      break becomes a space, so a cell cannot break the table.

    Every column is at least two characters wider than its header, and cells are padded to the
    column's width: the layout of tabulate's ``pipe`` format (what ``DataFrame.to_markdown``
    writes) with ``numalign="decimal"``, so a table reads as before; the column's type, however,
    is decided once from its dtype rather than cell by cell from each value's text, so text that
    looks like a float stays as written. A frame without columns is the empty string.
    """
    if frame.shape[1] == 0:
        return ""
    blank = set(blank)
    headers, columns, aligns = [], [], []
    for position in range(frame.shape[1]):
        name = frame.columns[position]
        cells, numeric = _cells(frame.iloc[:, position], floatfmt, "" if name in blank else MISSING)
        header = _escape(str(name))
        if numeric:
            decimals = [_after_point(c) for c in cells]
            most = max(decimals, default=-1)
            cells = [c + " " * (most - d) for c, d in zip(cells, decimals, strict=True)]
        width = max([len(header) + 2, *map(len, cells)])
        if numeric:
            headers.append(header.rjust(width))
            columns.append([c.rjust(width) for c in cells])
        else:
            headers.append(header.ljust(width))
            columns.append([c.ljust(width) for c in cells])
        aligns.append(
            "-" * (width + 1) + ":" if numeric else (":" + "-" * (width + 1) if len(frame) else "-" * (width + 2))
        )
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join(aligns) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in zip(*columns, strict=True)]
    return "\n".join(lines)


def _cells(column: pd.Series, floatfmt: str, missing: str) -> tuple[list[str], bool]:
    """A column's cells as text, and whether it is a column of numbers (aligned right)."""
    values = column.tolist()
    absent = column.isna().tolist()
    kind = column.dtype.kind
    if pd.api.types.is_integer_dtype(column.dtype):  # int64, Int64 (with missing values), uint8...
        typed = "int"
    elif kind == "f":
        typed = "float"
    else:
        present = [v for v, a in zip(values, absent, strict=True) if not a]
        typed = _object_type(present) if kind == "O" else "text"
    if all(absent):
        typed = "text"  # nothing to align
    if typed == "int":
        return [
            missing if a else str(v) if isinstance(v, str) else str(int(v)) for v, a in zip(values, absent, strict=True)
        ], True
    if typed == "float":
        return [missing if a else format(float(v), floatfmt) for v, a in zip(values, absent, strict=True)], True
    texts = {}
    cells = []
    for v, a in zip(values, absent, strict=True):
        if a:
            cells.append(missing)
        elif isinstance(v, str) and v in texts:
            cells.append(texts[v])
        else:
            text = _escape(str(v)).strip()
            if isinstance(v, str):
                texts[v] = text
            cells.append(text)
    return cells, False


_DIGITS = re.compile(r"[-+]?\d+")


def _object_type(present: list) -> str:
    """The type of an object column from its values present: ``int`` (ints, or integers written
    in digits), ``float`` (numbers, not all ints) or ``text``."""
    if not present:
        return "text"
    if all(isinstance(v, int | np.integer) and not isinstance(v, bool | np.bool_) for v in present):
        return "int"
    if all(isinstance(v, str) and _DIGITS.fullmatch(v.strip()) for v in present):
        return "int"
    if all(
        isinstance(v, int | float | np.integer | np.floating) and not isinstance(v, bool | np.bool_) for v in present
    ):
        return "float"
    return "text"


def _escape(text: str) -> str:
    """A cell's text that cannot break a pipe table: ``|`` escaped, line breaks as spaces."""
    if "|" in text:
        text = text.replace("|", "\\|")
    if "\n" in text or "\r" in text:
        text = " ".join(text.splitlines())
    return text


def _after_point(cell: str) -> int:
    """The characters after a number's decimal point (or, without one, after its exponent's
    ``e``), -1 for an integer, a number without either, or text such as ``n/a``: how far the
    decimal alignment pads it on the right."""
    try:
        number = float(cell)
    except ValueError:
        return -1
    if _DIGITS.fullmatch(cell.strip()) or (math.isinf(number) and cell.strip().lower() not in ("inf", "-inf", "+inf")):
        return -1
    point = cell.rfind(".")
    point = cell.lower().rfind("e") if point < 0 else point
    return len(cell) - point - 1 if point >= 0 else -1


SHORT_NAME = 14
"""The longest name a figure draws on an axis; a longer one gets a short label and a key."""


def short_labels(names: Sequence[str], limit: int = SHORT_NAME, prefix: str = "S") -> dict[str, str]:
    """An axis label per name: the name itself when it has at most ``limit`` characters, else
    ``prefix`` and a number (``S1``, ``S2``, ... over the long names, in the order given; never
    one of the names), which :func:`add_key` spells out."""
    names = list(dict.fromkeys(names))
    taken, labels, number = set(names), {}, 0
    for name in names:
        if len(name) <= limit:
            labels[name] = name
            continue
        number += 1
        while f"{prefix}{number}" in taken:
            number += 1
        labels[name] = f"{prefix}{number}"
    return labels


def add_key(fig, labels: dict[str, str], title: str = "systems"):
    """The key of :func:`short_labels`: a legend below the panels, one ``S1: full name`` line per
    shortened name (a figure with a constrained layout makes room for it). None when no name
    was shortened."""
    from matplotlib.lines import Line2D

    entries = [f"{short}: {full}" for full, short in labels.items() if short != full]
    if not entries:
        return None
    width = fig.get_size_inches()[0]
    per_column = 0.06 * max(map(len, entries)) + 0.3  # inches at font size 7
    columns = max(1, min(len(entries), int(width // per_column), -(-len(entries) // 4)))
    handles = [Line2D([], [], linestyle="none") for _ in entries]
    return fig.legend(
        handles,
        entries,
        loc="outside lower center",
        ncol=columns,
        fontsize=7,
        title=title,
        title_fontsize=8,
        handlelength=0,
        handletextpad=0,
        frameon=False,
        alignment="left",
    )


def fit_to_contents(fig, pad: float = 0.1, rounds: int = 4):
    """Grow ``fig`` until everything it draws lies inside it (a long legend or key, a label the
    layout could not place): draw, measure, enlarge by what sticks out, again. Then fix the
    layout where it stands, so writing the PNG and the PDF does not solve it again. Measured at
    the PNG's resolution (:data:`voirdire.output.DPI`: hinted text there is the widest). Returns ``fig``."""
    fig.set_dpi(DPI)
    for _ in range(rounds):
        fig.canvas.draw()  # runs the layout engine
        box = fig.get_tightbbox(fig.canvas.get_renderer())  # inches
        width, height = fig.get_size_inches()
        wider = max(0.0, -box.x0) + max(0.0, box.x1 - width)
        taller = max(0.0, -box.y0) + max(0.0, box.y1 - height)
        if wider <= 0.01 and taller <= 0.01:
            break
        fig.set_size_inches(
            width + (wider + pad if wider > 0.01 else 0), height + (taller + pad if taller > 0.01 else 0)
        )
    else:
        fig.canvas.draw()
    if fig.get_layout_engine() is not None:
        # laid out where it stands: no engine, so savefig does not draw it once more to lay it
        # out, and marked, so save_figure does not lay it out again (a tight layout)
        fig.set_layout_engine(None)
        if fig.get_layout_engine() is not None:  # rcParams asked for one: a placeholder, as before
            fig.set_layout_engine("none")
        setattr(fig, _FITTED, True)
    return fig
