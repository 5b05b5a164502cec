"""Where a run's time went: the Snakemake benchmark file of every job, as one table.

Every rule writes a benchmark file (``benchmark:``; Snakemake measures wall time, CPU time
and peak memory) under ``logs/benchmarks/``, mirroring its log's path. The report shows the
slowest jobs from them; ``bench/`` scripts read the same files.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

import pandas as pd

from . import machine


def read_benchmarks(root: str | Path, files: Iterable[str | Path] | None = None) -> pd.DataFrame:
    """One row per job: job (its benchmark file's path under ``root``, without ``.tsv``), wall
    seconds, CPU seconds and peak resident memory (MB), slowest first. A job that ran several
    times (``repeat``) shows its last run."""
    root = Path(root)
    paths = sorted(Path(p) for p in files) if files is not None else sorted(root.rglob("*.tsv"))
    rows = []
    for path in paths:
        table = pd.read_csv(path, sep="\t")
        if table.empty:
            continue
        last = table.iloc[-1]
        rows.append(
            {
                "job": str(path.relative_to(root)).removesuffix(".tsv"),
                "wall_s": float(last["s"]),
                "cpu_s": float(last["cpu_time"])
                if "cpu_time" in table and pd.notna(last["cpu_time"])
                else float("nan"),
                "max_rss_mb": float(last["max_rss"])
                if "max_rss" in table and pd.notna(last["max_rss"])
                else float("nan"),
            }
        )
    frame = pd.DataFrame(rows, columns=["job", "wall_s", "cpu_s", "max_rss_mb"])
    return frame.sort_values(["wall_s", "job"], ascending=[False, True]).reset_index(drop=True)


def slowest(frame: pd.DataFrame, top: int = 15) -> pd.DataFrame:
    """The ``top`` slowest jobs, with each one's share of the summed wall time, and a last row
    for the rest."""
    total = frame["wall_s"].sum()
    head = frame.head(top).copy()
    rest = frame.iloc[top:]
    if len(rest):
        head = pd.concat(
            [
                head,
                pd.DataFrame(
                    [
                        {
                            "job": f"({len(rest)} other jobs)",
                            "wall_s": rest["wall_s"].sum(),
                            "cpu_s": rest["cpu_s"].sum(),
                            "max_rss_mb": rest["max_rss_mb"].max(),
                        }
                    ]
                ),
            ],
            ignore_index=True,
        )
    head["share_of_job_time"] = head["wall_s"] / total if total else float("nan")
    return head


def measured_on(environ: Mapping[str, str] = os.environ) -> str:
    """Where the jobs ran, for the table's title: this machine's CPU (:mod:`voirdire.machine`),
    or, in a Slurm job, the cluster's nodes (each job's log names its own)."""
    if environ.get("SLURM_JOB_ID"):
        return "measured on the cluster's nodes (each job's log names its host)"
    return f"measured on {machine.describe(machine.cpu())}"
