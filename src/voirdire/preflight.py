"""Checks of input files that run when the DAG is built, before any job starts.

Topics and qrels are small, so reading them up front costs little and turns a malformed
line into an error before hours of BM25 or judging. Corpora and candidate files can be
large; their readers check them inside the jobs that read them.
"""

from __future__ import annotations

from .config import Plan
from .data import load_dataset
from .formats import read_qrels
from .judges import RecordedJudge


def preflight(plan: Plan) -> None:
    """Parse every topics/qrels file the plan names; raises InputError on the first fault."""
    for name, spec in plan.config["datasets"].items():
        if spec["source"] != "ir_datasets":
            load_dataset(spec, name=name)
        for judge in plan.judges[name]:
            if isinstance(judge, RecordedJudge):
                read_qrels(judge.qrels, (judge.scale.low, judge.scale.high))
