"""One judging job of a test, as the workflow's ``llm_judge`` rule runs it: its qrels, raw answers
and summary written beside each other under one name."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from voirdire.judges import LLMJudge
from voirdire.llm_judge.job import run_judging_job


def judging_job(
    judge: LLMJudge,
    folder: Path,
    name: str,
    *,
    pairs: pd.DataFrame,
    texts: dict[str, str],
    topics: dict[str, str],
    store_path: Path | None = None,
    **options: Any,
) -> dict:
    """``run_judging_job`` of ``pairs`` (the original passages, no progress bar) writing
    ``folder/name.{txt,parquet,json}``, its store ``store_path`` (default ``folder/name.sqlite``);
    returns its summary."""
    return run_judging_job(
        judge,
        pairs=pairs,
        texts=texts,
        topics=topics,
        store_path=store_path or folder / f"{name}.sqlite",
        provenance="original",
        qrels_out=folder / f"{name}.txt",
        raw_out=folder / f"{name}.parquet",
        summary_out=folder / f"{name}.json",
        progress=False,
        **options,
    )
