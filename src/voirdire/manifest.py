"""The manifest: what the tables are made of (systems, judges, datasets, evaluation settings).

Snakemake reruns a rule when its input files are newer than its outputs (and, by default,
when its params or code changed). With ``--rerun-triggers mtime``, or a results directory
copied elsewhere, a new judge in the config could leave the tables as they were: "Nothing
to be done", and the judge missing. So the aggregate rules take ``results/manifest.json``
as an input. It is derived from the config when the DAG is built and rewritten only when
its content changes, so its time stamp moves exactly when the tables' make-up does, on any
rerun trigger. Its SHA-256 is printed with every table and in the fingerprint.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from .config import Plan, as_plain
from .formats import atomic_write


def manifest(plan: Plan) -> dict:
    """The settings every table depends on, in a canonical form."""
    config = as_plain(plan.config)
    return {
        "datasets": config["datasets"],
        "systems": [str(s) for s in plan.systems],
        "rankers": config.get("rankers", {}),
        "oracles": config["oracles"],
        "bm25": config["bm25"],
        "judges": config["judges"],
        "evaluation": config["evaluation"],
    }


def canonical(value: dict) -> str:
    return json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def write_if_changed(path: str | Path, content: dict) -> bool:
    """Write the manifest unless the file already holds exactly this; True if it was written."""
    path = Path(path)
    text = canonical(content)
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return False
    with atomic_write(path) as fh:
        fh.write(text)
    return True


def sha256(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()
