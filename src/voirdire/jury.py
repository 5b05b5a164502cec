"""Juries: one label per pair from several judges' labels of it (docs/juries.md).

A jury (:class:`voirdire.judges.JuryJudge`) reads its members' labels of the needed pairs -- the
qrels every judge writes -- and writes its own, which then enter every table, audit and verdict
question as any judge's do. Per pair:

* a member *answers* when its labels hold the pair; an unparsed answer, a pair it could not
  grade (no passage text) or left out is no answer, counted, never read as a grade;
* the pair needs at least ``quorum`` answering members (default: more than half the members);
  fewer, and it is *short of a quorum*: no label;
* ``mean`` and ``median`` of the answering members' grades are rounded half up to a grade
  (``floor(x + 1/2)``, in integers: 1.5 -> 2, 2/3 -> 1, 1/3 -> 0); the median of an even count is
  the mean of its two middle grades, rounded the same way;
* ``majority`` is strict: the grade more than half of the answering members gave; none (a 1-1
  split, three different grades of three) is *no verdict*: no label, as an unparsed answer;
  never broken by the members' order or by the lower grade.

Every rule above is symmetric in the members, so their order in the config changes no label.
With ``binarize`` each member votes its binary label (grade >= its own binary threshold), and the
jury grades 0..1.

The members' error correlation and the panel's effective size are
:func:`voirdire.stats.redundancy.error_correlations` and :func:`~voirdire.stats.redundancy.kish_n_eff`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .judges import JuryJudge, Scale, restrict
from .stats.redundancy import error_correlations, kish_n_eff
from .stats.resample import RESAMPLES, SEED, interval

LABELLED, NO_VERDICT, SHORT = "labelled", "no_verdict", "short_of_quorum"
"""A pair's outcome: a jury label, no strict majority among enough answers, too few answers."""

KEYS = ["query_id", "doc_id"]
RESERVED = ("answering", "outcome", "relevance", "human")
"""Columns of :attr:`Verdicts.pairs` beside the members' votes."""


def member_votes(
    pairs: pd.DataFrame,
    labels: Mapping[str, pd.DataFrame],
    scales: Mapping[str, Scale],
    *,
    binarize: bool = False,
) -> pd.DataFrame:
    """The needed ``pairs`` (query_id, doc_id), one column per member (in ``labels``' order) with
    its vote on each: its grade, or its binary label with ``binarize``; NaN where it gave none."""
    votes = pairs[KEYS].drop_duplicates().reset_index(drop=True)
    for name, frame in labels.items():
        kept = restrict(frame, votes)[[*KEYS, "relevance"]]
        grade = kept["relevance"].astype(float)
        if binarize:
            grade = (grade >= scales[name].binary_threshold).astype(float)
        votes = votes.merge(kept[KEYS].assign(**{name: grade.to_numpy()}), on=KEYS, how="left")
    return votes


def aggregate_votes(
    votes: np.ndarray, aggregate: str, quorum: int, scale: Scale
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each row's jury grade (NaN: no label), outcome (:data:`LABELLED`, :data:`NO_VERDICT`,
    :data:`SHORT`) and number of answering members, from (pairs, members) votes (NaN: no answer).
    Symmetric in the columns: their order changes nothing."""
    votes = np.asarray(votes, dtype=float)
    answering = np.isfinite(votes).sum(axis=1)
    enough = answering >= quorum
    counted = np.where(answering > 0, answering, 1)
    grade = np.full(len(votes), math.nan)
    if aggregate == "mean":
        total = np.nansum(votes, axis=1).round().astype(np.int64)  # grades are integers: exact
        grade = ((2 * total + counted) // (2 * counted)).astype(float)  # floor(total / n + 1/2)
        decided = enough
    elif aggregate == "median":
        ordered = np.sort(votes, axis=1)  # NaN last
        rows = np.arange(len(votes))
        low = np.nan_to_num(ordered[rows, (counted - 1) // 2]).round().astype(np.int64)
        high = np.nan_to_num(ordered[rows, counted // 2]).round().astype(np.int64)
        grade = ((low + high + 1) // 2).astype(float)  # the middle, or the two middles' mean, half up
        decided = enough
    elif aggregate == "majority":
        levels = np.arange(scale.low, scale.high + 1)
        counts = (votes[:, :, None] == levels[None, None, :]).sum(axis=1)  # (pairs, grades)
        best = counts.max(axis=1) if len(levels) else np.zeros(len(votes), dtype=int)
        grade = levels[counts.argmax(axis=1)].astype(float)  # unique where strict: more than half
        decided = enough & (2 * best > answering)
    else:
        raise ValueError(f"unknown aggregate {aggregate!r}")
    outcome = np.where(~enough, SHORT, np.where(decided, LABELLED, NO_VERDICT))
    return np.where(decided, grade, math.nan), outcome, answering


@dataclass(frozen=True)
class Verdicts:
    """A jury's work on the needed pairs: ``labels`` (qrels of the labelled pairs), ``pairs``
    (every needed pair: the members' votes, ``answering``, ``outcome``, ``relevance``)."""

    labels: pd.DataFrame
    pairs: pd.DataFrame
    members: tuple[str, ...]

    def count(self, outcome: str) -> int:
        return int((self.pairs["outcome"] == outcome).sum())

    @property
    def fewer_members(self) -> int:
        """Pairs some member gave no answer to."""
        return int((self.pairs["answering"] < len(self.members)).sum())

    def missing(self) -> dict[str, int]:
        """Member -> the needed pairs it gave no answer to."""
        return {m: int(self.pairs[m].isna().sum()) for m in self.members}


def jury_verdicts(
    jury: JuryJudge, pairs: pd.DataFrame, labels: Mapping[str, pd.DataFrame], scales: Mapping[str, Scale]
) -> Verdicts:
    """The jury's labels of ``pairs`` from its members' ``labels`` (member -> qrels) on their
    ``scales``."""
    missing = [m for m in jury.members if m not in labels]
    if missing:
        raise ValueError(f"jury {jury.name}: no labels of member(s) {', '.join(missing)}")
    taken = [m for m in jury.members if m in (*KEYS, *RESERVED)]
    if taken:
        raise ValueError(f"jury {jury.name}: a member named {taken[0]!r} clashes with a column of the jury's pairs")
    votes = member_votes(pairs, {m: labels[m] for m in jury.members}, scales, binarize=jury.binarize)
    grade, outcome, answering = aggregate_votes(
        votes[list(jury.members)].to_numpy(), jury.aggregate, jury.quorum, jury.scale
    )
    votes = votes.assign(answering=answering, outcome=outcome, relevance=grade)
    decided = votes[votes["outcome"] == LABELLED]
    qrels = decided[KEYS].assign(relevance=decided["relevance"].astype(int)).reset_index(drop=True)
    return Verdicts(labels=qrels, pairs=votes, members=jury.members)


CORRELATION_COLUMNS = [
    "dataset",
    "judge",
    "member_a",
    "member_b",
    "pairs",
    "queries",
    "correlation",
    "correlation_ci_low",
    "correlation_ci_high",
    "correlation_degenerate",
]


def jury_tables(
    dataset: str,
    jury: JuryJudge,
    verdicts: Verdicts,
    human: pd.DataFrame,
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The jury's row (the ``jury`` table) and its members' error correlations, one row per pair of
    members (``jury_correlation``), from its :class:`Verdicts` and the ``human`` qrels."""
    frame = verdicts.pairs.merge(
        human[[*KEYS, "relevance"]].rename(columns={"relevance": "human"}), on=KEYS, how="left"
    )
    members = list(jury.members)
    found = error_correlations(
        frame[members].to_numpy(),
        frame["human"].to_numpy(float),
        frame["query_id"].to_numpy(),
        resamples=resamples,
        seed=seed,
    )
    rows = []
    for (i, j), r, draws, used, queries in zip(found.pairs, found.point, found.draws.T, found.used, found.queries):
        low, high, degenerate = _interval(draws, used)
        rows.append(
            {
                "dataset": dataset,
                "judge": jury.name,
                "member_a": members[i],
                "member_b": members[j],
                "pairs": int(used),
                "queries": int(queries),
                "correlation": float(r),
                "correlation_ci_low": low,
                "correlation_ci_high": high,
                "correlation_degenerate": degenerate,
            }
        )
    correlation = pd.DataFrame(rows, columns=CORRELATION_COLUMNS)
    n_eff = kish_n_eff(len(members), found.mean)
    fewest = int(found.used.min()) if len(found.used) else 0  # passages of the member pair with the fewest
    mean_low, mean_high, _ = _interval(found.mean_draws, fewest)
    eff_low, eff_high, eff_degenerate = _interval(kish_n_eff(len(members), found.mean_draws), fewest)
    row = {
        "dataset": dataset,
        "judge": jury.name,
        "members": ", ".join(members),
        "aggregate": jury.aggregate,
        "votes": "binary" if jury.binarize else f"grades {jury.scale.low}..{jury.scale.high}",
        "quorum": jury.quorum,
        "pairs": len(verdicts.pairs),
        "labelled": verdicts.count(LABELLED),
        "no_verdict": verdicts.count(NO_VERDICT),
        "short_of_quorum": verdicts.count(SHORT),
        "fewer_members": verdicts.fewer_members,
        "missing": ", ".join(f"{m}: {n}" for m, n in verdicts.missing().items()),
        "queries": int(frame["query_id"].nunique()),
        "mean_correlation": found.mean,
        "mean_correlation_ci_low": mean_low,
        "mean_correlation_ci_high": mean_high,
        "n_eff": n_eff,
        "n_eff_ci_low": eff_low,
        "n_eff_ci_high": eff_high,
        "n_eff_degenerate": eff_degenerate,
        "note": _note(found.point, n_eff, members, found.pairs),
    }
    return pd.DataFrame([row]), correlation


def _interval(draws: np.ndarray, used: int) -> tuple[float, float, int]:
    if not used:
        return math.nan, math.nan, int(len(draws))
    found = interval(draws)
    return found.low, found.high, found.degenerate


def _note(point: np.ndarray, n_eff: float, members: list[str], pairs) -> str:
    """Why n_eff is missing, or what a value above the members' count means."""
    undefined = [f"{members[i]}-{members[j]}" for (i, j), r in zip(pairs, point) if not np.isfinite(r)]
    if undefined:
        return (
            f"n_eff undefined: no within-grade spread to correlate for {', '.join(undefined)} (a member that "
            "grades every pair of a human grade alike, or no pairs both answered)"
        )
    if not np.isfinite(n_eff):
        return "n_eff undefined: the members' errors are too anti-correlated (1 + (m - 1) r_mean <= 0)"
    if n_eff > len(members):
        return "n_eff above the members' count: their errors are anti-correlated (they cancel)"
    return ""
