"""The Assistants experiment's sample: the same number of (query, passage) pairs at every human grade.

A perfectly calibrated judge gives each grade equally often on such a sample, so a shift of its
labels in either direction is visible at every grade (Balog, Metzler & Qin, SIGIR 2025, §4.3).
The pad and injection probes draw their passages the same way.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np
import pandas as pd


def balanced_sample(
    qrels: pd.DataFrame,
    per_grade: int,
    seed: int,
    *,
    grades: Sequence[int] = (0, 1, 2, 3),
    has_text: Collection[str] | None = None,
) -> tuple[pd.DataFrame, dict]:
    """``per_grade`` (query, passage) pairs at each human grade of ``grades``, seeded.

    The draw does not depend on the row order of ``qrels`` (pairs are sorted by query and
    passage first) nor on the other grades: each grade draws from its own generator, seeded
    with ``(seed, position of the grade in grades)``, so a grade that comes up short leaves
    the others' samples unchanged. Pairs whose passage has no text (not in ``has_text``,
    when given) cannot be rewritten and are not eligible; a grade with fewer than
    ``per_grade`` eligible pairs gives all it has and is marked ``short``. Grades outside
    ``grades`` are ignored (counted as ``other_grades``; ``without_text`` counts only pairs
    of ``grades``).
    """
    if per_grade < 0:
        raise ValueError(f"per_grade must be >= 0, got {per_grade}")
    table = (
        qrels[["query_id", "doc_id", "relevance"]]
        .astype({"query_id": str, "doc_id": str, "relevance": int})
        .sort_values(["query_id", "doc_id"], kind="mergesort")
        .reset_index(drop=True)
    )
    wanted = table["relevance"].isin(list(grades))
    other_grades = int((~wanted).sum())
    table = table[wanted]
    without_text = 0
    if has_text is not None:
        texts = set(has_text)
        with_text = table["doc_id"].isin(texts)
        without_text = int((~with_text).sum())
        table = table[with_text]
    drawn, per = [], {}
    for position, grade in enumerate(grades):
        pool = table[table["relevance"] == grade]
        if len(pool) > per_grade:
            rng = np.random.default_rng([seed, position])
            pool = pool.iloc[np.sort(rng.choice(len(pool), size=per_grade, replace=False))]
        drawn.append(pool)
        available = int((table["relevance"] == grade).sum())
        per[str(grade)] = {
            "available": available,
            "drawn": len(pool),
            "short": available < per_grade,
        }
    sample = pd.concat(drawn, ignore_index=True) if drawn else table.iloc[:0]
    sample = sample.rename(columns={"relevance": "human"}).astype({"human": int})
    sample = sample.sort_values(["human", "query_id", "doc_id"], kind="mergesort")
    summary = {
        "per_grade": per_grade,
        "seed": seed,
        "pairs": len(sample),
        "without_text": without_text,
        "other_grades": other_grades,
        "grades": per,
    }
    return sample[["query_id", "doc_id", "human"]].reset_index(drop=True), summary
