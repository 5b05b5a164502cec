"""Which columns of a run's tables their report captions do not explain (shared by the caption
tests of the DL19 runs, the label sets alone and the demo)."""

from __future__ import annotations

import re
from pathlib import Path

from voirdire.audits.registry import load

ROOT = Path(__file__).resolve().parents[2]

# caption (stem) -> the tables (paths under a results folder) it is the caption of
CAPTION_TABLES = {
    **{
        name: rf"tables/[^/]+/{name}\.csv"
        for name in (
            "datasets",
            "table1",
            "table2",
            "recorded_runs",
            "significance",
            "position_bias",
            "label_shift",
            "substitution",
            "rewrite_checks",
            "rewrite_self_preference",
            "score_shift",
        )
    },
    "timings": r"tables/timings\.csv",
    "ledger": r"tables/ledger\.csv",
    # every audit, declared beside its computation (voirdire.audits.registry): every table of each
    # it writes (a table only its figure reads has no file and no caption)
    **{
        f"audit_{table.name}": rf"audits/[^/]+/{table.name}\.csv"
        for declared in load().values()
        if declared.captions is None
        for table in declared.tables
        if table.written
    },
    **{f"probe_{name}": rf"audits/original/{name}\.csv" for name in ("swap", "pad", "injection", "gaming")},
    # a jury's tables, written by its own job beside its labels (docs/juries.md)
    **{name: rf"[^/]+/judgments/[^/]+/[^/]+\.{name}\.csv" for name in ("jury", "jury_correlation")},
    **{
        f"probe_sensitivity_{name}": rf"audits/original/(persona|prompt_sensitivity)_{name}\.csv"
        for name in ("agreement", "displacement", "sensitivity", "systems", "consistency")
    },
}


def legend(caption: str) -> list[re.Pattern]:
    """The column names a caption explains: its ``literals``, where ``<x>`` stands for any part
    (``under_<judge>``, ``n_human_<g>``)."""
    text = (ROOT / "workflow" / "report" / f"{caption}.rst").read_text(encoding="utf-8")
    patterns = []
    for literal in re.findall(r"``(.+?)``", text, re.S):
        parts = re.split(r"<[^<>]+>", literal)
        patterns.append(re.compile(".+".join(re.escape(p) for p in parts) + r"\Z"))
    return patterns


def undocumented(results: Path) -> dict[str, list[str]]:
    """Per table of a run: the columns its caption does not explain."""
    missing = {}
    for path in sorted(results.rglob("*.csv")):
        relative = path.relative_to(results).as_posix()
        for caption, pattern in CAPTION_TABLES.items():
            if re.fullmatch(pattern, relative):
                with path.open(encoding="utf-8") as fh:
                    header = fh.readline().strip()
                columns = header.split(",") if header else []  # an empty table may have no header
                patterns = legend(caption)
                lacking = [c for c in columns if c != "dataset" and not any(p.match(c) for p in patterns)]
                if lacking:
                    missing[relative] = lacking
    return missing
