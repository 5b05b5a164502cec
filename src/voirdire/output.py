"""Tables and figures as the workflow writes them: one table writer, one figure writer.

* :func:`write_table` writes a table as CSV and as Markdown (one section per dataset), both
  atomically; it takes the table's path with or without its suffix (:func:`stem`).
* :func:`save_figure` writes a figure as PNG and PDF at one resolution (:data:`DPI`), both
  atomically, without a creation date in the PDF (a rerun writes the same bytes), and closes it.
* :func:`pyplot` is matplotlib's pyplot on the Agg backend (no display); :func:`per_dataset` and
  :func:`grid` lay out the panels the audits, probes and assistants draw into.
"""

from __future__ import annotations

import contextlib
import functools
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
    made from. Counts print as integers (see :func:`_counts_as_integers`), a missing number as
    ``n/a`` and a missing reason (a ``reason`` column: why a row has no result) as an empty cell.

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
        shown = _counts_as_integers(block.drop(columns="dataset"))
        cells = [c for c in view or [] if isinstance(c, IntervalCell) and {c.low, c.high} <= set(shown.columns)]
        shown = _with_intervals(shown.assign(**{c.name: _interval_cells(shown, c, floatfmt) for c in cells}), floatfmt)
        if view is not None:
            names = [c.name if isinstance(c, IntervalCell) else c for c in view]
            shown = shown[[c for c in names if c in shown.columns]]
            shown = shown.assign(**{c: shown[c].map(_short) for c in shown.columns if shown[c].dtype.kind == "O"})
        shown = shown.astype(object)
        shown = shown.where(shown.notna(), None)
        for column in shown.columns:
            if _REASON.search(str(column)):
                shown[column] = shown[column].where(shown[column].notna(), "")
        lines += [f"## {dataset}", "", *([note, ""] if note else [])]
        kept, pages = _column_pages(list(shown.columns), keep)
        paged = paged or len(pages) > 1
        for number, columns in enumerate(pages, 1):
            if len(pages) > 1:
                named = columns[0] if len(columns) == 1 else f"{columns[0]} to {columns[-1]}"
                lines += [f"### {named} (columns, page {number} of {len(pages)})", ""]
            with _tabulate_memoized():
                lines += [shown[kept + columns].to_markdown(index=False, floatfmt=floatfmt, missingval="n/a"), ""]
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


TABULATE_PURE = ("_type", "_more_generic", "_afterpoint")
"""tabulate's per-cell helpers that are functions of their arguments alone (a cell's type, the
more general of two types, the digits after a decimal point)."""


@contextlib.contextmanager
def _tabulate_memoized():
    """tabulate (what ``DataFrame.to_markdown`` calls) with :data:`TABULATE_PURE` memoized while
    one table is rendered: the same Markdown, about twice as fast on a table of many rows with
    repeated cells (the paired tests of every system pair under every judge: 400,000 rows at
    100 runs and 20 judges), where tabulate infers each column's type anew from every cell.
    Arguments are told apart by type too (1, 1.0 and True); an unhashable one is passed through."""
    import tabulate

    saved = {name: getattr(tabulate, name) for name in TABULATE_PURE if hasattr(tabulate, name)}

    def memoized(function):
        cached = functools.lru_cache(maxsize=None, typed=True)(function)

        def call(*args, **kwargs):
            try:
                return cached(*args, **kwargs)
            except TypeError:  # an unhashable argument (or the function's own error, raised again)
                return function(*args, **kwargs)

        return call

    try:
        for name, function in saved.items():
            setattr(tabulate, name, memoized(function))
        yield
    finally:
        for name, function in saved.items():
            setattr(tabulate, name, function)


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


# a column of why a row has no result (or a note on it): empty, not "n/a", where there is nothing to explain
_REASON = re.compile(r"(^|_)(reasons?|notes?)($|_)")
# names of statistics that may happen to be whole (a mean grade of 3, a tau of 1): never integers
_STATISTIC = re.compile(
    r"mean|median|average|rate|share|fraction|ratio|_ci|ci_|kappa|tau|rho|^r$|^r_|rbo|score|shift|diff|"
    r"margin|^p$|^p_|_p$|coverage|level|corrected|raw|strictness|excess|inflation|agreement|accuracy|"
    r"consistency|sensitivity|ndcg|cost|limit|lower|upper|alpha|phi|threshold|similarity|grade"
)
# names of counts (and ranks, depths): integers even when they are all 0s and 1s
_COUNT = re.compile(
    r"(^|_)(n|k|count|counts|queries|pairs|systems|topics|qrels|documents|docs|passages|lines|draws|"
    r"resamples|labels|judges|tasks|calls|tokens|samples|wins|ties|up|down|same|moved|unparsed|unlabelled|"
    r"missed|spurious|flipped|invented|dropped|missing|tp|tn|fp|fn|depth|rank|delta_r|groups|conditions|"
    r"prompts|answered|relevant|non_relevant|failures|alarms|rewrites|used|flagged_count|of_family|"
    r"significant|left_out|total|size|unscored|surviving|order_dependent)($|_|s$)"
)


# "n_..." and "..._count": a count, whatever else the name says ("n_grade_3")
# "original_<g>" / "rewritten_<g>": label counts per grade
_COUNTED = re.compile(r"^(n|num)_|_(n|count)$|^count|^(original|rewritten)_\d+$")
# a name ending in what it counts is a count ("strictness_systems", "systems_vs_human")...
_COUNT_END = re.compile(
    r"(^|_)(queries|pairs|systems|topics|qrels|documents|docs|passages|lines|draws|resamples|labels|judges|"
    r"tasks|calls|tokens|samples|groups|conditions|prompts|rewrites|duels|permutations|failures|alarms|tests)$"
)
# ...unless it opens as a statistic or is a share named like a count
_STATISTIC_NAME = re.compile(r"^(mean|median|average|share|rate|fraction|ratio|p|ci)_|^(padded_wins|duel_ties)")


def _counts_as_integers(frame: pd.DataFrame) -> pd.DataFrame:
    """Columns of whole numbers (counts, also beside a missing value) print as integers.

    A column qualifies when every value present is a whole number (float columns, and object
    columns of numbers: a count beside ``None``), and its name is not that of a statistic
    (``mean``, ``rate``, ``kappa``, ``ci_low``, ...) unless it starts ``n_``, ends ``_count`` or
    ends in what it counts (``strictness_systems``; not ``mean_...``, ``share_...``, ``padded_wins``).
    Of the rest, a column of -1, 0 and 1 only stays as it is (it may be a correlation or a
    rate) unless its name says it counts (``queries``, ``pairs``, ``systems_of_family``, ...).
    Bools stay bools.
    """
    frame = frame.copy()
    for column in frame.columns:
        values = frame[column]
        if values.dtype.kind == "O":
            present = values.dropna()
            numbers = present.map(lambda v: isinstance(v, int | float) and not isinstance(v, bool))
            if present.empty or not numbers.all():
                continue
            values = pd.to_numeric(values.where(values.notna(), None), errors="coerce").astype(float)
        elif values.dtype.kind not in "fiu":
            continue
        present = values.dropna()
        if present.empty or not (present % 1 == 0).all() or not present.map(math.isfinite).all():
            continue
        name = str(column).lower()
        counted = _COUNTED.search(name) is not None or (
            _COUNT_END.search(name) is not None and _STATISTIC_NAME.search(name) is None
        )
        if not counted and _STATISTIC.search(name):
            continue
        if _STATISTIC_NAME.search(name) and not _COUNTED.search(name):
            continue
        if not counted and not _COUNT.search(name) and present.isin([-1, 0, 1]).all():
            continue
        frame[column] = values.astype("Int64")
    return frame


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
