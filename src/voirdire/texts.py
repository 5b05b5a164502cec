"""The texts of a provenance: the passages as read, or with an assistant's used rewrites in place.

Every stage that reads passage texts (judges, rerankers, audits) reads them through here, so the
``original`` provenance and each ``rewritten-{assistant}`` one differ only in the rewrites.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

import pandas as pd

from .formats import read_passages


def provenance_texts(
    passages: Collection[str | Path], rewrites: str | Path | None = None
) -> tuple[dict[str, str], set[str]]:
    """The texts of a provenance: the passages' texts, with the used rewrites substituted.

    Returns the texts and the substituted passage ids (empty for ``original``)."""
    texts: dict[str, str] = {}
    for path in passages:
        texts.update(read_passages(path))
    if rewrites is None:
        return texts, set()
    table = pd.read_parquet(rewrites, columns=["doc_id", "text", "used"])
    used = table[table["used"]]
    texts.update(zip(used["doc_id"], used["text"], strict=True))
    return texts, set(used["doc_id"])
