"""What the label audits write, declared once: the ``audits`` rule's outputs, the report's Audits
entries and the final targets are all generated from :data:`OUTPUTS`.

Each entry is one table (``audits/{provenance}/{name}.csv`` and its Markdown view ``.md``) or
one figure (``.png`` and ``.pdf``), the name the audits job writes it under
(``snakemake.output.<key>``), and the caption file that puts it in the report
(``workflow/report/audit_{caption}.rst``; none: the file is written but not shown). A verdict
question names the table it reads (:func:`voirdire.verdict.question`); a test checks that every
such table is declared here or by another rule. Adding an audit output is one line here and
the lines of ``workflow/scripts/audits.py`` that write it.
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

    @property
    def extensions(self) -> tuple[str, str]:
        return ("png", "pdf") if self.figure else ("csv", "md")

    def keys(self) -> dict[str, str]:
        """The output key of each extension, e.g. ``{"csv": "lojo", "md": "lojo_md"}``."""
        first, second = self.extensions
        if self.figure and self.key.endswith("_png"):
            return {first: self.key, second: f"{self.key[: -len('_png')]}_pdf"}
        return {first: self.key, second: f"{self.key}_{second}"}


def _table(name: str, caption: str | None = None) -> AuditOutput:
    return AuditOutput(name, figure=False, key=name, caption=caption or name)


def _figure(name: str, caption: str, key: str | None = None) -> AuditOutput:
    return AuditOutput(name, figure=True, key=key or f"{name}_png", caption=caption)


OUTPUTS: tuple[AuditOutput, ...] = (
    _table("label_test"),
    _figure("confusion", "confusion", key="confusion"),
    _table("lojo"),
    _figure("lojo", "lojo_chart"),
    _table("lojo_labels"),
    _table("self_preference"),
    _table("length"),
    _figure("length", "length_chart"),
    _table("length_systems"),
    _table("drift"),
    _figure("drift", "drift_chart"),
    _figure("leniency", "leniency"),
    _table("control_chart"),
    _table("circularity"),
    _figure("circularity", "circularity"),
    _table("calibration"),
    _figure("calibration", "calibration"),
)


def tables() -> list[str]:
    """The audits' table names, in declaration order."""
    return [o.name for o in OUTPUTS if not o.figure]


def figures() -> list[str]:
    """The audits' figure names, in declaration order."""
    return [o.name for o in OUTPUTS if o.figure]
