"""Label-level self-preference on rewritten passages (after Balog, Metzler & Qin, SIGIR 2025, §4.3).

Does a judge grade passages rewritten by an assistant of its own family (a Gemini judge and a
Gemini rewriter) up more than other judges grade the same rewrites? A judge's raw shift on a
pair is its rewritten label minus its original label. Rewrites can change what a passage says,
so every judge may move; the correction subtracts, pair by pair, the mean shift of the judge's
panel on the same pair (strictness corrected, as in the family audit of a judge panel).
``excess`` is the mean of those corrected shifts, with a cluster-bootstrap CI over queries
(:func:`voirdire.stats.clustered_mean`: the pairs of one query share a topic, so a judge that
moves a whole query's rewrites together is one unit of evidence, not one per pair;
``degenerate`` counts undefined draws). A judge is ``self_preferring`` when it shares the
assistant's family and the CI lies above 0 (one-sided, alpha 0.025). Every judge gets the figure: one of another family with a
large excess is not self-preferring, but is worth a look.

The candidates are the judges that read meaning (LLM and embedding judges, not the length or
overlap baselines, whose shift follows the rewrite's length); a judge's panel is the
candidates that declare a family other than its own (:func:`voirdire.audits.panel.comparison_panel`).
A same-family judge would share the bonus and hide part of it: with m same-family judges
among n, each grading its family up by the same amount, the excess loses m/n of it. The
``panel`` column names the judges compared with.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping

import pandas as pd

from ..audits.panel import comparison_panel
from ..stats import clustered_mean

COLUMNS = [
    "dataset",
    "assistant",
    "assistant_family",
    "judge",
    "family",
    "same_family",
    "panel",
    "pairs",
    "queries",
    "raw_shift",
    "panel_shift",
    "excess",
    "excess_ci_low",
    "excess_ci_high",
    "degenerate",
    "self_preferring",
    "reason",
]
VIEW = [
    "judge",
    "family",
    "same_family",
    "panel",
    "pairs",
    "queries",
    "raw_shift",
    "panel_shift",
    "excess",
    "self_preferring",
    "reason",
]
"""The columns a person reads in the Markdown (the excess with its interval in one cell; the
table's title names the assistant); the CSV keeps every one of ``COLUMNS``."""


def rewrite_self_preference(
    labels: pd.DataFrame,
    families: Mapping[str, str | None],
    assistant_family: str | None,
    *,
    panel: Collection[str],
    seed: int = 42,
    resamples: int = 1000,
    level: float = 0.95,
) -> pd.DataFrame:
    """One row per (dataset, assistant, judge of ``panel``); ``labels`` as for
    :func:`voirdire.assistants.experiments.label_shift` (NaN labels are left out pair by pair).

    ``panel`` is the candidate judges; each judge is compared with those of them that
    declare a family other than its own."""
    rows = []
    for (dataset, assistant), block in labels.groupby(["dataset", "assistant"], sort=False):
        shifts = (
            block[block["judge"].isin(panel)]
            .assign(shift=lambda f: f["rewritten"] - f["original"])
            .pivot_table(index=["query_id", "doc_id"], columns="judge", values="shift", aggfunc="first")
        )
        for judge in [j for j in dict.fromkeys(block["judge"]) if j in panel]:
            family = families.get(judge)
            row = {
                "dataset": dataset,
                "assistant": assistant,
                "assistant_family": assistant_family,
                "judge": judge,
                "family": family,
                "same_family": bool(family and assistant_family and family == assistant_family),
                "self_preferring": False,
                "reason": None,
            }
            others = comparison_panel(judge, families, shifts.columns)
            row["panel"] = ", ".join(others)
            if not others:
                rows.append(row | {"pairs": 0, "reason": "no other judge of the panel declares another family"})
                continue
            own = shifts[judge]
            reference = shifts[others].mean(axis=1)  # the other judges' mean shift on the pair
            both = own.notna() & reference.notna()
            excess = (own - reference)[both]
            queries = excess.index.get_level_values("query_id")
            point, found = clustered_mean(
                excess.to_numpy(dtype=float), queries, resamples=resamples, seed=seed, level=level
            )
            row |= {
                "pairs": int(both.sum()),
                "queries": int(queries.nunique()),
                "raw_shift": float(own[both].mean()) if both.any() else math.nan,
                "panel_shift": float(reference[both].mean()) if both.any() else math.nan,
                "excess": point,
                "excess_ci_low": found.low,
                "excess_ci_high": found.high,
                "degenerate": found.degenerate,
            }
            if not assistant_family:
                row["reason"] = "the assistant declares no family"
            elif not family:
                row["reason"] = "the judge declares no family"
            elif not len(excess):
                row["reason"] = "no pair labelled by the judge and the panel on both sides"
            else:
                row["self_preferring"] = bool(row["same_family"] and found.low > 0)  # False for NaN (one query)
            rows.append(row)
    return pd.DataFrame(rows, columns=COLUMNS)
