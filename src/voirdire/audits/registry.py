"""Audits declared where they are computed: one module holds an audit's computation, the tables
and figures it writes and (through :func:`voirdire.questions.question`) its verdict question.

Adding an audit is three files: its module (in ``voirdire/audits/``, or any installed module named
by an entry point of the group ``voirdire.audits``), its caption(s) and its test. The module
decorates its computation with :func:`audit`; :func:`load` imports every such module, and from
there the workflow generates the rest: the ``audits`` rule's outputs and report entries
(:mod:`voirdire.audits.declared`; a table or figure no verdict question reads is filed where its
``report`` says), the config schema's section ``audits.<name>`` (its ``settings``,
:func:`with_settings`), the job's tables (:func:`voirdire.audits.run.audit_tables` calls the
computation once per dataset with a :class:`Context`), their files (``workflow/scripts/audits.py``
writes each :class:`Table` and draws each :class:`Figure`) and the verdict's inputs. Every audit
of the job is declared so, the label test (:mod:`voirdire.audits.labels`) and self-preference
(:mod:`voirdire.audits.panel`) included: nothing is written by hand.

A caption is ``workflow/report/audit_<name>.rst`` for the audits shipped here; an entry-point audit
keeps its captions beside its module (``<module folder>/audit_<name>.rst``), since it cannot add
files to the workflow.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pandas only where an audit runs, not where the workflow reads its outputs
    import pandas as pd

ENTRY_POINTS = "voirdire.audits"
"""The entry-point group naming the modules of audits installed beside voirdire."""


@dataclass(frozen=True)
class Table:
    """A table an audit writes (``audits/{provenance}/<name>.csv`` and its Markdown view)."""

    name: str
    title: str | Callable[[pd.DataFrame, float], str]
    """The Markdown view's heading; a function of the table and the job's ``alpha`` where it
    counts its tests: ``title(frame, alpha) -> str``."""
    columns: Sequence[str]
    """The columns of the table when no dataset has a row (what its figure and caption expect)."""
    view: Sequence[Any] | None = None
    """The Markdown view's columns (:func:`voirdire.output.write_table`'s ``view``)."""
    empty: str = "no judge besides the human labels is configured"
    """Why the table has no row (an audit of systems: prefixed by why a dataset has none)."""
    floatfmt: str = ".3f"
    counts: Sequence[str] = ()
    """Float columns printed as integers where every value is whole (``write_table``'s ``counts``)."""
    first: tuple[str, Callable[[pd.DataFrame], Any]] | None = None
    """The rows a long view shows first (``write_table``'s ``first``)."""
    written: bool = True
    """Written as a file; False: computed for a figure (or another table) only, never written,
    not an output of the rule (the length audit's deciles behind its chart)."""
    short: str | None = None
    """Its name in the report, and its figure's of the same name (default: its audit's ``short``)."""
    systems: bool | None = None
    """Its empty view says why where the config lists no systems (default: its audit's
    ``systems``; True for a table computed from what only systems bring, such as the base run)."""
    report: str | None = None
    """Where the report files it, and its figure of the same name, where no verdict question reads
    it: the question whose answer it shows (``"labels"``), or a category of the entries no question
    reads (``"Calibration with few labels"``; :func:`voirdire.audits.declared.report_section`)."""

    def heading(self, frame: pd.DataFrame, alpha: float) -> str:
        return self.title(frame, alpha) if callable(self.title) else self.title


@dataclass(frozen=True)
class Figure:
    """A figure an audit draws from one of its tables (``<name>.png`` and ``.pdf``)."""

    name: str
    table: str | Sequence[str]
    """The table it draws, or the tables (in the order ``draw`` takes them)."""
    draw: Callable[..., None]
    """``draw(table, png_path)`` (``draw(table, other, ..., png_path)`` for several tables): writes
    the PNG and the PDF beside it (:func:`voirdire.output.save_figure`)."""
    caption: str | None = None
    """Its caption's stem after ``audit_`` (default ``<name>_chart``)."""
    placeholder: str | None = None
    """Where the config lists no systems: the figure says this (after why) instead of being drawn;
    None: drawn from the tables as they are."""
    report: str | None = None
    """Where the report files it (as :attr:`Table.report`), for a figure named unlike its tables."""

    @property
    def tables(self) -> tuple[str, ...]:
        return (self.table,) if isinstance(self.table, str) else tuple(self.table)

    @property
    def caption_stem(self) -> str:
        return self.caption or f"{self.name}_chart"


@dataclass(frozen=True)
class Audit:
    name: str
    compute: Callable[[Context], Mapping[str, pd.DataFrame | list]]
    """One dataset's rows of each of its tables (the runner adds the ``dataset`` column first): a
    frame, or a list of frames and row dicts concatenated as they come (a table with no row on
    the dataset is left out, or an empty list)."""
    tables: tuple[Table, ...]
    figures: tuple[Figure, ...] = ()
    systems: bool = True
    """It needs the user's systems (runs): a dataset of label sets alone gets no rows, and the
    empty table says why."""
    captions: Path | None = None
    """The folder of its captions; None: the workflow's ``workflow/report``."""
    short: str | None = None
    """Its tables' and figures' name in the report (default: the file stem's words)."""
    settings: Mapping[str, Any] | None = None
    """The JSON schema of its config section ``audits.<name>`` (defaults filled as every key's),
    merged into the workflow's schema (:func:`with_settings`)."""
    check: Callable[[Mapping[str, Any]], None] | None = None
    """``check(config)``: what the schema cannot say of its settings, a
    :class:`voirdire.errors.ConfigError` naming the key, raised by ``voirdire check`` before any job."""

    def caption(self, output: str) -> Path | None:
        """The caption file of one of its tables or figures (``audit_<name>.rst``), or None (its
        folder is the workflow's: the rule finds it there)."""
        return None if self.captions is None else self.captions / f"audit_{output}.rst"


@dataclass
class Context:
    """What an audit reads of one dataset: the audits job's inputs (:class:`voirdire.audits.run.
    DatasetInputs`), the humans' labels of the needed pairs (``human@pool``), the judges besides
    the humans, the user's systems (not the constructed oracles), and ``score``: every run of a
    mapping ``{system: [run, ...]}`` under every label set of ``{name: qrels}`` at their binary
    thresholds, as Table 2 scores them (cut at the evaluation depth, the primary measure)."""

    dataset: str
    data: Any
    human: pd.DataFrame
    judges: Sequence[str]
    user: Sequence[str]
    system_families: Mapping[str, str | None]
    score: Callable[..., Mapping[str, pd.DataFrame]]
    depth: int | None
    measure: str
    ties: str
    seed: int
    alpha: float
    settings: Mapping[str, Any] = field(default_factory=dict)
    """The audit's own settings (``config["audits"][<name>]``, defaults applied by the schema)."""

    @property
    def systems(self) -> bool:
        """Whether the dataset has systems (runs): without, only the audits of labels have rows."""
        return bool(self.data.runs)

    def scale(self, judge: str):
        """A judge's :class:`voirdire.judges.Scale` (``data.scale``)."""
        return self.data.scale(judge)

    @property
    def cutoff(self) -> int | None:
        """The primary measure's rank cutoff (10 for ``nDCG@10``); None for a measure without one."""
        from ..evaluation import parse_measure  # ir_measures: only where an audit runs

        cutoff = parse_measure(self.measure)["cutoff"]
        return cutoff if isinstance(cutoff, int) else None


AUDITS: dict[str, Audit] = {}


def chance(tests: int, alpha: float) -> str:
    """A flag table's note on multiplicity (in its title): the tests it ran and the flags chance alone gives."""
    return f"{tests} tests at alpha {alpha:g}: chance alone would flag about {tests * alpha:.2f}"


def audit(
    name: str,
    *,
    tables: Sequence[Table],
    figures: Sequence[Figure] = (),
    systems: bool = True,
    captions: Path | None = None,
    short: str | None = None,
    settings: Mapping[str, Any] | None = None,
    check: Callable[[Mapping[str, Any]], None] | None = None,
):
    """Declare an audit (a decorator of its computation ``compute(context) -> {table: rows}``)."""

    def register(compute: Callable[[Context], Mapping[str, pd.DataFrame]]):
        taken = {t.name for a in AUDITS.values() if a.name != name for t in a.tables}
        clash = taken & {t.name for t in tables}
        if clash:
            raise ValueError(f"audit {name!r}: table {sorted(clash)[0]!r} is another audit's")
        AUDITS[name] = Audit(name, compute, tuple(tables), tuple(figures), systems, captions, short, settings, check)
        return compute

    return register


_LOADED: list[str] = []


def load() -> dict[str, Audit]:
    """Every audit: the modules of ``voirdire.audits`` that declare one, then those named by the
    ``voirdire.audits`` entry points, each imported once."""
    if not _LOADED:
        package = importlib.import_module(__package__)
        for module in pkgutil.iter_modules(package.__path__):
            path = Path(package.__path__[0]) / f"{module.name}.py"
            # only the modules that declare an audit: the others (figures, matplotlib) stay unimported
            if path.is_file() and "@audit(" in path.read_text(encoding="utf-8"):
                importlib.import_module(f"{__package__}.{module.name}")
        for point in entry_points(group=ENTRY_POINTS):
            importlib.import_module(point.value)
        _LOADED.append("done")
    return AUDITS


def with_settings(schema: dict) -> dict:
    """The workflow's config schema with each registered audit's settings as ``audits.<name>``
    (a copy; ``schema`` is not changed). A name the schema already has is a :class:`ValueError`."""
    import copy

    merged = copy.deepcopy(schema)
    audits = merged["properties"]["audits"]["properties"]
    for name, declared in load().items():
        if declared.settings is None:
            continue
        if name in audits:
            raise ValueError(f"audit {name!r}: the config schema already has audits.{name}")
        audits[name] = copy.deepcopy(dict(declared.settings))
    return merged
