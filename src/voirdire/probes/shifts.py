"""Label shift under a change that should not change the label: the pad and injection probes.

Each row of the input is one passage graded twice by one judge: ``original`` (the plain text)
and ``changed`` (padded, or with an injected claim or the query's terms). Per judge and
condition, overall and per human grade:

* ``pairs``, and ``unlabelled``: pairs where either grade did not parse (left out, never
  counted as 0);
* the columns of :func:`voirdire.stats.paired_shift` on the labelled pairs, clustered by
  query (``n`` pairs over ``queries``, how many went ``up``, ``down`` or stayed ``same`` and
  their shares, the mean grade before and after, ``mean_shift`` with its cluster-bootstrap
  interval, ``shift_p``: the sign-flip test over queries of each query's summed shift, the
  clustered marginal homogeneity test, and the pair-level sign test ``sign_p_pairs``,
  descriptive only): the same paired test as the Assistants experiment;
* ``flagged``: ``shift_p`` < alpha and the tested mean shift is positive (the change bought a
  higher grade);
* ``tests``: the rows of the table whose shift was tested (``shift_p`` defined), the family
  ``flagged`` stands on, and ``expected_false_flags``: alpha x tests, at most what chance
  alone would flag (a flag also needs a positive shift, so about half that).

A padded text should never win (its shift should be about 0); an injected claim should not move a
non-relevant passage (Alaofi et al., arXiv 2501.17969).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..output import per_dataset, save_figure
from ..stats import SHIFT_COLUMNS, direction, expected_false_flags, paired_shift

ALL = "all"


def _row(group: pd.DataFrame, alpha: float) -> dict:
    labelled = group.dropna(subset=["original", "changed"])
    row = {"pairs": len(group), "unlabelled": len(group) - len(labelled)}
    row |= paired_shift(
        labelled["original"].to_numpy(dtype=float),
        labelled["changed"].to_numpy(dtype=float),
        labelled["query_id"].tolist(),
    )
    row["flagged"] = direction(bool(row["shift_p"] < alpha), row["mean_shift"]) == "up"
    return row


def label_shift(
    grades: pd.DataFrame, alpha: float = 0.05, keys: Sequence[str] = ("dataset", "judge", "condition")
) -> pd.DataFrame:
    """Shift per group of ``keys``, overall (``human`` = "all") and per human grade; ``grades``
    has the ``keys``, query_id, human, original and changed (NaN: unparsed)."""
    rows = []
    for key, group in grades.groupby(list(keys), sort=True):
        ids = dict(zip(keys, key if isinstance(key, tuple) else (key,), strict=True))
        rows.append({**ids, "human": ALL, **_row(group, alpha)})
        for grade, part in group.groupby("human", sort=True):
            rows.append({**ids, "human": str(int(grade)), **_row(part, alpha)})
    columns = [*keys, "human", "pairs", "unlabelled", *SHIFT_COLUMNS, "flagged", "tests", "expected_false_flags"]
    table = pd.DataFrame(rows, columns=columns)
    tests = int(table["shift_p"].notna().sum())
    return table.assign(tests=tests, expected_false_flags=expected_false_flags(tests, alpha))


def shift_chart(table: pd.DataFrame, png: str, title: str) -> None:
    """Mean label shift per judge and condition (all human grades), one panel per dataset."""
    overall = table[table["human"] == ALL] if len(table) else table
    fig, panels = per_dataset(overall, 5.0, 3.2)
    for ax, dataset, rows in panels:
        if not len(rows):
            ax.text(0.5, 0.5, "no data", ha="center", va="center")
            ax.set_axis_off()
            continue
        labels = [f"{r.judge}\n{r.condition}" for r in rows.itertuples()]
        colours = ["tab:red" if f else "tab:grey" for f in rows["flagged"]]
        ax.bar(range(len(rows)), rows["mean_shift"].fillna(0), color=colours)
        ax.axhline(0, color="black", linewidth=0.8)
        ax.set_xticks(range(len(rows)), labels, fontsize=7, rotation=30, ha="right")
        ax.set_ylabel("mean grade shift (changed - original)")
        ax.set_title(f"{title}: {dataset} (red: flagged)", fontsize=9)
    save_figure(fig, png)


def swap_chart(table: pd.DataFrame, png: str) -> None:
    """Position consistency, first-position win rate and tie rate per judge and probe."""
    fig, panels = per_dataset(table, 5.0, 3.2)
    measures = ("position_consistency", "first_position_win_rate", "tie_rate")
    for ax, dataset, rows in panels:
        if not len(rows):
            ax.text(0.5, 0.5, "no data", ha="center", va="center")
            ax.set_axis_off()
            continue
        width = 0.8 / len(measures)
        for i, measure in enumerate(measures):
            ax.bar(np.arange(len(rows)) + i * width, rows[measure].fillna(0), width, label=measure.replace("_", " "))
        ax.axhline(0.5, color="black", linestyle=":", linewidth=0.8)
        ax.set_xticks(np.arange(len(rows)) + width, [f"{r.judge}\n{r.probe}" for r in rows.itertuples()], fontsize=7)
        ax.set_ylim(0, 1)
        ax.set_title(f"Swap test: {dataset}", fontsize=9)
        ax.legend(fontsize=7)
    save_figure(fig, png)
