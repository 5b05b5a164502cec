"""The judges' leaderboard: which label sets agree best with the humans, and whether the top ones
differ (docs/audits.md, "The judges' leaderboard").

Per dataset and measure, every judge but the humans (the null baselines too: they should rank
last) ranked by its agreement with the humans, with paired comparisons of each judge and the next
one down (:func:`voirdire.stats.ranking.rank_judges`):

* ``kappa_binary``: Cohen's kappa of the binary labels (each side at its own threshold), as the
  label test and Table 2 give it;
* ``alpha_ordinal``: Krippendorff's alpha on the grades, where every judge grades on the humans'
  scale; else ``alpha_binary``, on the binary labels (a 0/1 judge against 0-3 humans has no
  ordinal alpha, and one measure ranks every judge);
* ``tau_user``: Kendall's tau of the means of the systems the user brought (oracles and swaps
  left out, as Table 2's ``tau_user``) against their means under ``human@pool``; with at least
  :data:`voirdire.stats.MIN_USER_SYSTEMS` of them.

Each label measure is computed from per-query confusion counts on the pairs both the judge and the
humans labelled, every judge on one query axis (the queries of the needed pairs), so the resamples
are the same for all: the point equals Table 2's, its interval is drawn by the same method on draws
shared by every judge (its bounds can differ from Table 2's in the last digits).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial

import numpy as np
import pandas as pd

from ..judges import HUMAN, Scale
from ..stats import kappa_from_counts, kendall_tau_rows
from ..stats.leaderboard import MIN_USER_SYSTEMS
from ..stats.ranking import RANK_COLUMNS, per_query_counts, rank_judges
from ..stats.reliability import alpha_from_counts
from ..stats.resample import LEVEL, RESAMPLES, SEED
from .registry import Context, Figure, Table, audit

RANKING_COLUMNS = ["dataset", "measure", "rank", "judge", "kind", "pairs", "systems", *RANK_COLUMNS[2:]]
"""The columns of the ``judge_ranking`` table, in order."""

MEASURES = ("kappa_binary", "alpha_ordinal", "alpha_binary", "tau_user")
"""The measures a dataset's judges can be ranked by (``alpha_ordinal`` or ``alpha_binary``, not both)."""


def _kappa(counts: np.ndarray) -> np.ndarray:
    return kappa_from_counts(counts, 1.0 - np.eye(counts.shape[-1]))


def _tau(sums: np.ndarray) -> np.ndarray:
    """Kendall's tau of the judge's systems (first half of the last axis) against the reference's
    (second half): sums over the same queries, so their order is the means' order."""
    systems = sums.shape[-1] // 2
    return kendall_tau_rows(sums[:, systems:], sums[:, :systems])


def judge_leaderboard(
    labels: Mapping[str, pd.DataFrame],
    scales: Mapping[str, Scale],
    kinds: Mapping[str, str],
    *,
    scores: pd.DataFrame | None = None,
    reference: pd.DataFrame | None = None,
    user: Sequence[str] = (),
    alpha: float = 0.05,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    level: float = LEVEL,
) -> pd.DataFrame:
    """The judges of ``labels`` (the humans' first: their labels of the needed pairs) ranked per
    measure, without the ``dataset`` column (:data:`RANKING_COLUMNS` less it).

    ``scores`` (judge, system, query_id, ndcg: every judge's per-query scores) and ``reference``
    (query x system: the systems under ``human@pool``) give ``tau_user`` over the ``user``
    systems; none, or fewer than :data:`voirdire.stats.MIN_USER_SYSTEMS`: no tau rows."""
    human = labels[HUMAN]
    judges = [j for j in labels if j != HUMAN]
    if not judges:
        return pd.DataFrame(columns=RANKING_COLUMNS[1:])
    hs = scales[HUMAN]
    queries = sorted(dict.fromkeys(human["query_id"]))
    aligned = {j: human.merge(labels[j], on=["query_id", "doc_id"], suffixes=("_human", "_judge")) for j in judges}
    grades = list(range(hs.low, hs.high + 1))
    ordinal = all((scales[j].low, scales[j].high) == (hs.low, hs.high) for j in judges)
    binary, graded = {}, {}
    for j, both in aligned.items():
        h, g = both["relevance_human"], both["relevance_judge"]
        binary[j] = per_query_counts(both["query_id"], hs.binary(h), scales[j].binary(g), [0, 1], [0, 1], queries)
        if ordinal:
            graded[j] = per_query_counts(both["query_id"], h, g, grades, grades, queries)
    plans = {"kappa_binary": (binary, _kappa)}
    if ordinal:
        plans["alpha_ordinal"] = (graded, partial(alpha_from_counts, values=grades, level="ordinal"))
    else:
        plans["alpha_binary"] = (binary, partial(alpha_from_counts, values=[0, 1], level="nominal"))
    sizes = {"pairs": {j: len(both) for j, both in aligned.items()}}
    systems = _user_systems(scores, reference, user)
    if systems:
        ref = reference.loc[:, systems].dropna()
        wide = scores.pivot_table(index="query_id", columns=["judge", "system"], values="ndcg")
        scored = [j for j in judges if j in wide.columns.get_level_values(0)]
        ref = ref.loc[ref.index.isin(wide.index)]
        per_query = {}
        for j in scored:
            mine = wide[j].reindex(index=ref.index, columns=systems)
            if mine.notna().all().all():
                per_query[j] = np.hstack([mine.to_numpy(float), ref.to_numpy(float)])
        if per_query and len(ref) >= 2:
            plans["tau_user"] = (per_query, _tau)
            sizes["systems"] = dict.fromkeys(per_query, len(systems))
    frames = []
    for measure, (arrays, statistic) in plans.items():
        table = rank_judges(arrays, statistic, alpha=alpha, resamples=resamples, seed=seed, level=level)
        table.insert(0, "measure", measure)
        table["kind"] = table["judge"].map(kinds)
        counted = "systems" if measure == "tau_user" else "pairs"  # what the measure is over
        for column in ("pairs", "systems"):
            found = table["judge"].map(sizes.get(column, {})) if column == counted else None
            table[column] = pd.array(found if found is not None else [None] * len(table), dtype="Int64")
        frames.append(table)
    return pd.concat(frames, ignore_index=True)[RANKING_COLUMNS[1:]]


def _user_systems(scores: pd.DataFrame | None, reference: pd.DataFrame | None, user: Sequence[str]) -> list[str]:
    """The user's systems the reference scores, when there are enough of them to rank by tau."""
    if scores is None or reference is None or not len(scores) or not len(reference):
        return []
    systems = [s for s in user if s in reference.columns and s in set(scores["system"])]
    return systems if len(systems) >= MIN_USER_SYSTEMS else []


# ----------------------------------------------------------------------------- the audit, declared


def _chart(ranking: pd.DataFrame, png: str) -> None:
    from .figures import judge_ranking_chart  # matplotlib: only where the figure is drawn

    judge_ranking_chart(ranking, png)


@audit(
    "judge_ranking",
    tables=[
        Table(
            "judge_ranking",
            lambda frame, alpha: (
                "The judges' leaderboard: every judge ranked by its agreement with the humans "
                "(binary kappa, Krippendorff's alpha, tau over your systems), each with its 95% interval over queries, "
                "and each against the next one down: the difference on the same query resamples (95% paired "
                "interval), the swap test's p and the p Holm-adjusted over the adjacent pairs; distinguishable at "
                f"p_holm < {alpha:g}; a tier ends at each distinguishable pair"
            ),
            RANKING_COLUMNS,
            view=[
                "measure",
                "rank",
                "judge",
                "kind",
                "value",
                "next_judge",
                "difference",
                "p",
                "p_holm",
                "distinguishable",
                "tier",
            ],
            counts=["rank"],
            report="labels",  # the judges ranked by their agreement with the humans
        )
    ],
    figures=[Figure("judge_ranking", "judge_ranking", _chart)],
    short="Judge leaderboard",
    systems=False,  # on labels alone; tau over the user's systems where there are systems
)
def audit_judge_ranking(context: Context) -> dict[str, list]:
    """One dataset's ``judge_ranking`` rows: every judge ranked by its agreement with the humans
    (labels; tau over the user's systems against human@pool when there are systems), each against
    the next one down on the same query resamples."""
    data = context.data
    reference = None
    if context.systems:
        pool = data.pool_per_query
        pool = data.per_query[data.per_query["judge"] == HUMAN] if pool is None else pool
        reference = pool.pivot_table(index="query_id", columns="system", values="ndcg") if len(pool) else None
    ranking = judge_leaderboard(
        {**data.labels, HUMAN: context.human},
        {j: context.scale(j) for j in data.judges},
        {j: data.judges[j]["kind"] for j in data.judges},
        scores=data.per_query if context.systems else None,
        reference=reference,
        user=context.user,
        alpha=context.alpha,
        seed=context.seed,
    )
    return {"judge_ranking": [ranking] if len(ranking) else []}
