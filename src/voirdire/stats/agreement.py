"""Agreement between two labelers or two system orderings (docs/definitions.md, Agreement).

* Labels: Cohen's kappa on graded labels, on binary labels, and quadratic-weighted
  (scikit-learn), with cluster-bootstrap intervals over queries.
* Systems: Kendall's tau-b between system orderings (scipy; vectorised over resamples), and
  rank-biased overlap (RBO; Webber, Moffat & Zobel 2010, extrapolated form). RBO here compares
  two complete rankings without ties: where either ordering ties systems, RBO is NaN (breaking
  ties by name would make it depend on how the names sort; Corsi & Urbano 2024). Its floor is
  not 0: two reversed rankings of k items score above 0 (0.553 for k = 9 at p = 0.9).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..judges import Scale, majority  # noqa: F401 - majority: voirdire.stats exports it
from .resample import LEVEL, RESAMPLES, SEED, interval, query_resamples


def kappas(human: pd.Series, judge: pd.Series, human_scale: Scale, judge_scale: Scale) -> dict[str, float]:
    """Cohen's kappa between aligned label series.

    Graded and quadratic-weighted kappa compare grades directly and are only defined when
    both use the same scale (NaN otherwise, e.g. a binary judge against 0-3 assessors);
    binary kappa maps each side with its own threshold.
    """
    if len(human) != len(judge):
        raise ValueError("label series must be aligned")
    if len(human) == 0:
        return {"kappa_graded": math.nan, "kappa_binary": math.nan, "kappa_quadratic": math.nan}
    same_scale = (human_scale.low, human_scale.high) == (judge_scale.low, judge_scale.high)
    grades = list(range(human_scale.low, human_scale.high + 1))
    return {
        "kappa_binary": _kappa(human_scale.binary(human), judge_scale.binary(judge), [0, 1]),
        "kappa_graded": _kappa(human, judge, grades) if same_scale else math.nan,
        "kappa_quadratic": (_kappa(human, judge, grades, weights="quadratic") if same_scale else math.nan),
    }


def _kappa(a: pd.Series, b: pd.Series, labels: list[int], weights: str | None = None) -> float:
    import warnings

    from sklearn.metrics import cohen_kappa_score  # here: importing sklearn and scipy.stats is a second of CPU

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # one grade on both sides: 0/0, NaN
        return float(cohen_kappa_score(np.asarray(a), np.asarray(b), labels=labels, weights=weights))


def kappa_from_counts(counts: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Cohen's kappa of (..., g, h) confusion counts with disagreement weights (g, h):
    1 - sum(w * observed) / sum(w * expected); NaN where expected disagreement is 0."""
    total = counts.sum(axis=(-2, -1), keepdims=True)
    observed = counts / np.where(total > 0, total, 1)
    expected = observed.sum(axis=-1, keepdims=True) * observed.sum(axis=-2, keepdims=True)
    num, den = (weights * observed).sum(axis=(-2, -1)), (weights * expected).sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, 1 - num / den, math.nan)


def per_query_confusion(
    query_ids: Sequence[str], a: Sequence[int], b: Sequence[int], labels_a: Sequence[int], labels_b: Sequence[int]
) -> np.ndarray:
    """(query, |labels_a|, |labels_b|) confusion counts of aligned label vectors, queries in
    first-seen order."""
    queries = {q: i for i, q in enumerate(dict.fromkeys(query_ids))}
    index_a = {g: i for i, g in enumerate(labels_a)}
    index_b = {g: i for i, g in enumerate(labels_b)}
    counts = np.zeros((len(queries), len(labels_a), len(labels_b)))
    np.add.at(counts, ([queries[q] for q in query_ids], [index_a[g] for g in a], [index_b[g] for g in b]), 1)
    return counts


KAPPAS = ("kappa_graded", "kappa_binary", "kappa_quadratic")


def kappa_intervals(
    aligned: pd.DataFrame,
    scale_a: Scale,
    scale_b: Scale,
    *,
    a: str = "relevance_human",
    b: str = "relevance_judge",
    resamples: int = RESAMPLES,
    seed: int = SEED,
    level: float = LEVEL,
) -> dict[str, float]:
    """Cluster-bootstrap intervals over queries (seeded) of the kappas of :func:`kappas`, and
    ``kappa_degenerate``: the most draws any of them left undefined.

    ``aligned`` has query_id and the label columns ``a`` and ``b``. Graded and quadratic kappa
    need one scale on both sides (NaN otherwise, as their point values)."""
    same_scale = (scale_a.low, scale_a.high) == (scale_b.low, scale_b.high)
    grades = list(range(scale_a.low, scale_a.high + 1))
    qids = aligned["query_id"].tolist()
    plans = {"kappa_binary": (scale_a.binary(aligned[a]), scale_b.binary(aligned[b]), [0, 1], 1.0 - np.eye(2))}
    if same_scale:
        quadratic = np.subtract.outer(np.arange(len(grades)), np.arange(len(grades))) ** 2.0
        for name, weights in (("kappa_graded", 1.0 - np.eye(len(grades))), ("kappa_quadratic", quadratic)):
            plans[name] = (aligned[a], aligned[b], grades, weights)
    row = {f"{name}_ci_{end}": math.nan for name in KAPPAS for end in ("low", "high")}
    row["kappa_degenerate"] = 0
    if aligned["query_id"].nunique() < 2:
        return row
    times = None
    for name, (x, y, labels, weights) in plans.items():
        counts = per_query_confusion(qids, x.tolist(), y.tolist(), labels, labels)
        times = query_resamples(len(counts), resamples, seed) if times is None else times
        found = interval(kappa_from_counts(np.einsum("bq,qij->bij", times, counts), weights), level)
        row[f"{name}_ci_low"], row[f"{name}_ci_high"] = found.low, found.high
        row["kappa_degenerate"] = max(row["kappa_degenerate"], found.degenerate)
    return row


def cuts(scale: Scale) -> list[int]:
    """The binarisation cuts of a scale: relevant means grade >= g, g = low + 1 .. high
    (>= 1, >= 2, >= 3 on 0-3)."""
    return list(range(scale.low + 1, scale.high + 1))


def cut_labels(grades: pd.Series, scale: Scale, other: Scale, cut: int) -> pd.Series:
    """A side's binary labels at the cut ``cut`` of the other side's scale ``other``: grade >= cut
    on the same scale, else at its own binary threshold (a 0/1 judge keeps its labels at every
    cut of 0-3 humans: the cuts then ask which human cut its "relevant" matches)."""
    same_scale = (scale.low, scale.high) == (other.low, other.high)
    return (grades >= cut).astype(int) if same_scale else scale.binary(grades)


def kappa_cuts(
    aligned: pd.DataFrame,
    scale_a: Scale,
    scale_b: Scale,
    *,
    a: str = "relevance_human",
    b: str = "relevance_judge",
    resamples: int = RESAMPLES,
    seed: int = SEED,
    level: float = LEVEL,
) -> dict[str, float]:
    """Cohen's kappa at each cut g of ``scale_a`` (:func:`cuts`): ``kappa_cut_<g>`` of the two
    sides binarised at g (``b`` as :func:`cut_labels` says), each with its cluster-bootstrap
    interval over queries (``kappa_cut_<g>_ci_low``/``_ci_high``: the draws of
    :func:`kappa_intervals` with the same seed, so the cut at ``scale_a``'s binary threshold is
    ``kappa_binary`` and its interval), and ``kappa_cut_degenerate``: the most draws any cut left
    undefined (a resample with one binary label on a side)."""
    row: dict[str, float] = {}
    queries = aligned["query_id"].tolist()
    distinct = len(dict.fromkeys(queries))
    times = query_resamples(distinct, resamples, seed) if distinct >= 2 else None
    degenerate = 0
    for cut in cuts(scale_a):
        x = (aligned[a] >= cut).astype(int)
        y = cut_labels(aligned[b], scale_b, scale_a, cut)
        row[f"kappa_cut_{cut}"] = _kappa(x, y, [0, 1]) if len(aligned) else math.nan
        row[f"kappa_cut_{cut}_ci_low"] = row[f"kappa_cut_{cut}_ci_high"] = math.nan
        if times is None:
            continue
        counts = per_query_confusion(queries, x.tolist(), y.tolist(), [0, 1], [0, 1])
        found = interval(kappa_from_counts(np.einsum("bq,qij->bij", times, counts), 1.0 - np.eye(2)), level)
        row[f"kappa_cut_{cut}_ci_low"], row[f"kappa_cut_{cut}_ci_high"] = found.low, found.high
        degenerate = max(degenerate, found.degenerate)
    row["kappa_cut_degenerate"] = degenerate
    return row


def kendall_tau(a: Sequence[float], b: Sequence[float]) -> float:
    """Kendall's tau-b between two score vectors over the same systems."""
    if len(a) < 2:
        return math.nan
    from scipy import stats

    return float(stats.kendalltau(a, b).statistic)


def kendall_tau_rows(a: np.ndarray | Ranked, b: np.ndarray) -> np.ndarray:
    """Kendall's tau-b between rows of two (rows, items) score arrays, vectorised (the same
    statistic as ``scipy.stats.kendalltau``, ties included); NaN where a row is all ties. ``a``
    may be :class:`Ranked` (its order reused: a reference compared with many judges).

    The pair counts are :func:`_pair_counts`'; they are integers, so the result is the same bits
    as the sum of sign products it replaces (:func:`_kendall_tau_rows_by_pairs`, still used for
    rows holding a value that is not finite, where the sign of a difference can be NaN)."""
    walk = a.ascending if isinstance(a, Ranked) else None
    a = a.values if isinstance(a, Ranked) else a
    a, b = np.atleast_2d(np.asarray(a, dtype=float)), np.atleast_2d(np.asarray(b, dtype=float))
    out = np.empty(len(a))
    finite = np.isfinite(a).all(axis=1) & np.isfinite(b).all(axis=1)
    if not finite.all():
        out[~finite] = _kendall_tau_rows_by_pairs(a[~finite], b[~finite])
    difference, untied_a, untied_b = _pair_counts(a[finite], b[finite], None if walk is None else walk[finite])
    with np.errstate(invalid="ignore", divide="ignore"):
        out[finite] = np.where(
            (untied_a > 0) & (untied_b > 0), difference.astype(float) / np.sqrt(untied_a * untied_b), math.nan
        )
    return out


def kendall_tau_each(a: Sequence[float], rows: np.ndarray) -> np.ndarray:
    """:func:`kendall_tau` of ``a`` against each row of ``rows``, at once: the same bits as one
    ``scipy.stats.kendalltau`` call a row (its arithmetic on the same integer pair counts, and
    its clip to [-1, 1]); NaN where either side ties everything or holds NaN."""
    rows = np.atleast_2d(np.asarray(rows, dtype=float))
    a = np.broadcast_to(np.asarray(a, dtype=float), rows.shape)
    out = np.full(len(rows), math.nan)
    if rows.shape[1] < 2:
        return out
    defined = ~(np.isnan(a).any(axis=1) | np.isnan(rows).any(axis=1))
    difference, untied_a, untied_b = _pair_counts(a[defined], rows[defined])
    tied = (untied_a == 0) | (untied_b == 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = difference.astype(float) / np.sqrt(untied_a) / np.sqrt(untied_b)
    out[defined] = np.where(tied, math.nan, np.minimum(1.0, np.maximum(-1.0, tau)))
    return out


def _pair_counts(
    a: np.ndarray, b: np.ndarray, order: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each row of two (rows, items) arrays without NaN: concordant minus discordant pairs,
    and the pairs each row leaves untied (integers, so exact).

    A row whose ``a`` has no tie is walked in ``a``'s ascending order: every pair is untied in
    ``a``, and a pair is discordant where ``b`` falls along the walk (``b_i > b_j`` for i before
    j), tied where ``b`` repeats; concordant are the pairs untied in ``b`` less the discordant.
    The pairs are compared k steps apart, k = 1 .. n - 1, every row at once: half the
    comparisons of a matrix, none of them masked. A row tied in ``a`` is counted by
    :func:`_pair_counts_by_matrices`. ``order``: each row's ascending order of ``a``, when known
    (any order of ties will do: a row tied in ``a`` is counted apart)."""
    rows, n = a.shape
    difference, untied_a, untied_b = (np.zeros(rows, dtype=np.int64) for _ in range(3))
    if rows == 0 or n < 2:
        return difference, untied_a, untied_b
    order = np.argsort(a, axis=1) if order is None else order
    walked_a = np.take_along_axis(a, order, axis=1)
    tied_a = (walked_a[:, 1:] == walked_a[:, :-1]).any(axis=1)
    if tied_a.any():
        found = _pair_counts_by_matrices(a[tied_a], b[tied_a])
        for out, value in zip((difference, untied_a, untied_b), found, strict=True):
            out[tied_a] = value
    simple = np.flatnonzero(~tied_a)
    if not len(simple):
        return difference, untied_a, untied_b
    # items down, rows across: the pairs k apart in the walk are two row-slices of one array
    walked_b = np.ascontiguousarray(np.take_along_axis(b[simple], order[simple], axis=1).T)
    ordered_b = np.sort(walked_b, axis=0)
    tied_b = np.flatnonzero((ordered_b[1:] == ordered_b[:-1]).any(axis=0))
    falls, repeats = np.zeros(len(simple), dtype=np.int64), np.zeros(len(simple), dtype=np.int64)
    for k in range(1, n):
        falls += np.count_nonzero(walked_b[:-k] > walked_b[k:], axis=0)
    if len(tied_b):
        tied = walked_b[:, tied_b]
        for k in range(1, n):
            repeats[tied_b] += np.count_nonzero(tied[:-k] == tied[k:], axis=0)
    pairs = n * (n - 1) // 2
    untied_a[simple] = pairs
    untied_b[simple] = pairs - repeats
    difference[simple] = (pairs - repeats) - 2 * falls
    return difference, untied_a, untied_b


def _pair_counts_by_matrices(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_pair_counts` from boolean comparison matrices of both rows, a few rows at a time
    (any ties): a pair is concordant where one item is above the other in both rows (one
    orientation of the two counts it), discordant where above in one and below in the other,
    untied where above in one orientation."""
    rows, n = a.shape
    difference, untied_a, untied_b = (np.zeros(rows, dtype=np.int64) for _ in range(3))
    chunk = max(1, 2**19 // max(1, n * n))  # rows per step: comparison matrices of at most 512 kB (in cache)
    for start in range(0, rows, chunk):
        x, y = a[start : start + chunk], b[start : start + chunk]
        above_x, above_y = x[:, :, None] > x[:, None, :], y[:, :, None] > y[:, None, :]
        step = slice(start, start + len(x))
        difference[step] = np.count_nonzero(above_x & above_y, axis=(1, 2)) - np.count_nonzero(
            above_x & above_y.transpose(0, 2, 1), axis=(1, 2)
        )
        untied_a[step], untied_b[step] = np.count_nonzero(above_x, axis=(1, 2)), np.count_nonzero(above_y, axis=(1, 2))
    return difference, untied_a, untied_b


def _kendall_tau_rows_by_pairs(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """:func:`kendall_tau_rows` from the signs of every pair's differences (NaN where any is NaN)."""
    a, b = np.atleast_2d(a), np.atleast_2d(b)
    i, j = np.triu_indices(a.shape[1], k=1)
    with np.errstate(invalid="ignore", divide="ignore"):  # inf - inf: NaN, as the statistic
        sign_a, sign_b = np.sign(a[:, i] - a[:, j]), np.sign(b[:, i] - b[:, j])
        untied_a, untied_b = (sign_a != 0).sum(axis=1), (sign_b != 0).sum(axis=1)
        return np.where(
            (untied_a > 0) & (untied_b > 0), (sign_a * sign_b).sum(axis=1) / np.sqrt(untied_a * untied_b), math.nan
        )


def ordering(scores: pd.Series) -> list[str]:
    """Systems best first; equal scores fall back to name order, for a stable display (never
    for a statistic: :func:`rbo_scores` refuses ties)."""
    frame = pd.DataFrame({"system": scores.index, "score": scores.values})
    return list(frame.sort_values(["score", "system"], ascending=[False, True])["system"])


def rbo(a: Sequence[str], b: Sequence[str], p: float = 0.9) -> float:
    """Extrapolated rank-biased overlap of two rankings of the same k items (Webber 2010, eq. 32).

    ``RBO_ext = X_k/k * p^k + (1-p)/p * sum_{d=1..k} X_d/d * p^d`` with X_d the overlap of
    the two depth-d prefixes. Identical rankings give 1.
    """
    if len(a) != len(b) or set(a) != set(b):
        raise ValueError("rbo here compares two complete rankings of the same items")
    if not 0 < p < 1:
        raise ValueError("p must lie in (0, 1)")
    k = len(a)
    if k == 0:
        return math.nan
    seen_a: set[str] = set()
    seen_b: set[str] = set()
    overlap = 0
    total = 0.0
    for depth in range(1, k + 1):
        x, y = a[depth - 1], b[depth - 1]
        if x == y:
            overlap += 1
        else:
            overlap += (x in seen_b) + (y in seen_a)
        seen_a.add(x)
        seen_b.add(y)
        total += overlap / depth * p**depth
    return overlap / k * p**k + (1 - p) / p * total


def _tied(values: np.ndarray) -> bool:
    ordered = np.sort(np.asarray(values, dtype=float))
    return bool(len(ordered) > 1 and np.any(np.isclose(np.diff(ordered), 0.0, rtol=0, atol=1e-12)))


def rbo_scores(a: pd.Series | np.ndarray, b: pd.Series | np.ndarray, p: float = 0.9, names=None) -> float:
    """RBO between the system orderings two score vectors give (same systems, same order);
    NaN where either ordering ties two systems (no tie-break by name)."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if len(x) == 0 or _tied(x) or _tied(y) or np.isnan(x).any() or np.isnan(y).any():
        return math.nan
    labels = np.arange(len(x)) if names is None else np.asarray(names)
    return rbo(list(labels[np.argsort(-x, kind="stable")]), list(labels[np.argsort(-y, kind="stable")]), p=p)


def rbo_rows(a: np.ndarray | Ranked, b: np.ndarray | Ranked, p: float = 0.9) -> np.ndarray:
    """:func:`rbo_scores` for each row of two (rows, systems) arrays (bootstrap draws), as
    whole-array operations, to the same bits: an item is in both depth-d prefixes when its lower
    position in the two orderings is above d, so the overlaps X_d are a cumulative count of
    those positions; the sum over depths is accumulated in the same order as :func:`rbo`'s loop
    (``np.cumsum``), each term from the same float operations (the powers of p taken by Python).
    Either side may be :class:`Ranked`."""
    x, y = ranked(a), ranked(b)
    if x.values.shape != y.values.shape:
        raise ValueError(f"rankings {x.values.shape} and {y.values.shape} differ in shape")
    if not 0 < p < 1:
        raise ValueError("p must lie in (0, 1)")
    rows, k = x.values.shape
    out = np.full(rows, np.nan)
    if k == 0 or rows == 0:
        return out
    index = np.arange(rows)[:, None]
    joined = np.maximum(x.positions, y.positions)  # both prefixes hold the item from depth joined + 1
    overlap = np.cumsum(np.bincount((joined + index * k).ravel(), minlength=rows * k).reshape(rows, k), axis=1)
    depth = np.arange(1, k + 1)
    powers = np.array([p**d for d in range(1, k + 1)])
    total = np.cumsum(overlap / depth * powers, axis=1)[:, -1]
    value = overlap[:, -1] / k * powers[-1] + (1 - p) / p * total
    defined = ~(x.tied | y.tied)
    out[defined] = value[defined]
    return out


def rbo_floor(k: int, p: float = 0.9) -> float:
    """RBO of a ranking of k items against its reverse: the floor a reader compares RBO with."""
    items = [str(i) for i in range(k)]
    return rbo(items, items[::-1], p=p) if k else math.nan


def tau_ap(reference: Sequence[float], judge: Sequence[float]) -> float:
    """AP correlation tau_AP (Yilmaz, Aslam & Robertson 2008) of the judge's system ordering
    against the reference's: walking down the judge's ordering, each system at position i > 1
    scores the share of the i - 1 systems above it that the reference also puts above it;
    tau_AP = 2 / (N - 1) * sum of those shares - 1. A swap near the top costs more than one
    near the bottom; 1 for the same ordering, -1 for the reverse. NaN where either ties."""
    ref, mine = np.asarray(reference, dtype=float), np.asarray(judge, dtype=float)
    n = len(ref)
    if n < 2 or _tied(ref) or _tied(mine) or np.isnan(ref).any() or np.isnan(mine).any():
        return math.nan
    order = np.argsort(-mine, kind="stable")
    total = 0.0
    for i in range(1, n):
        above = order[:i]
        total += np.sum(ref[above] > ref[order[i]]) / i
    return 2.0 / (n - 1) * total - 1.0


def _close_rows(values: np.ndarray) -> np.ndarray:
    """:func:`_tied` for each row."""
    ordered = np.sort(values, axis=1)
    return np.isclose(np.diff(ordered, axis=1), 0.0, rtol=0, atol=1e-12).any(axis=1)


@dataclass(frozen=True)
class Ranked:
    """One side's (rows, systems) bootstrap draws with what the rank statistics read of that side
    alone, sorted once: a reference's draws are compared with every judge's, and a judge's with
    the reference by four statistics. Build it with :func:`ranked`; the row functions of this
    module take it wherever they take an array (the same bits either way)."""

    values: np.ndarray
    order: np.ndarray
    """Each row's descending order, stable (ties in column order)."""
    positions: np.ndarray
    """Each item's position in its row's ``order`` (0 first): the inverse of the ordering, the
    integers ``argsort(argsort(-values))`` gives, with one sort."""
    close: np.ndarray
    """Rows where two values lie within 1e-12 (:func:`_close_rows`)."""
    tied: np.ndarray
    """``close``, or a row holding NaN: :func:`_tied` for each row, and NaN counts as a tie (its
    tau_AP and RBO are NaN too)."""

    @property
    def ascending(self) -> np.ndarray:
        """An ascending order of each row (ties in any order; NaN first instead of last)."""
        return self.order[:, ::-1]


def ranked(values: np.ndarray | Ranked) -> Ranked:
    """``values`` (rows, systems) as :class:`Ranked` (returned as it is when it already is)."""
    if isinstance(values, Ranked):
        return values
    values = np.atleast_2d(np.asarray(values, dtype=float))
    order = np.argsort(-values, axis=1, kind="stable")
    positions = np.empty_like(order)
    positions[np.arange(len(values))[:, None], order] = np.arange(values.shape[1])
    close = _close_rows(values)
    return Ranked(values, order, positions, close, close | np.isnan(values).any(axis=1))


def _draw_rows(reference: np.ndarray | Ranked, judge: np.ndarray | Ranked) -> tuple[Ranked, Ranked, np.ndarray]:
    """Two (rows, systems) arrays of bootstrap draws as :class:`Ranked`, and a row of NaN per draw to fill."""
    ref, mine = ranked(reference), ranked(judge)
    if ref.values.shape != mine.values.shape:
        raise ValueError(f"reference {ref.values.shape} and judge {mine.values.shape} differ in shape")
    return ref, mine, np.full(ref.values.shape[0], np.nan)


def tau_ap_rows(reference: np.ndarray | Ranked, judge: np.ndarray | Ranked, chunk: int = 512) -> np.ndarray:
    """:func:`tau_ap` for each row of two (rows, systems) arrays (bootstrap draws, or
    :class:`Ranked`), as whole-array operations: each row's reference scores in the judge's order;
    the scores above each (earlier in the walk) that exceed it are counted k steps back, k = 1 ..
    n - 1, ``chunk`` rows at a time (items down, rows across: two slices of one array a step)."""
    ref, mine, out = _draw_rows(reference, judge)
    rows, n = ref.values.shape
    if n < 2:
        return out
    weights = np.zeros(n)
    weights[1:] = 1.0 / np.arange(1, n)
    for start in range(0, rows, chunk):
        step = slice(start, start + chunk)
        walked = np.ascontiguousarray(np.take_along_axis(ref.values[step], mine.order[step], axis=1).T)
        above = np.zeros(walked.shape, dtype=np.int64)  # [i, row]: scores above position i that exceed it
        for k in range(1, n):
            above[k:] += walked[:-k] > walked[k:]
        value = 2.0 / (n - 1) * (np.ascontiguousarray(above.T) @ weights) - 1.0
        value[ref.tied[step] | mine.tied[step]] = np.nan
        out[step] = value
    return out


def top_k(reference: Sequence[float]) -> int:
    """How many systems "the top" means: the better half of them (at least two)."""
    return max(2, math.ceil(len(reference) / 2))


def max_drop(reference: Sequence[float], judge: Sequence[float]) -> float:
    """The largest drop in rank of any system from the reference's ordering to the judge's
    (positions; 0 when no system drops). NaN where either ties."""
    ref, mine = np.asarray(reference, dtype=float), np.asarray(judge, dtype=float)
    if len(ref) < 2 or _tied(ref) or _tied(mine):
        return math.nan
    rank_ref = np.argsort(np.argsort(-ref, kind="stable"), kind="stable")
    rank_mine = np.argsort(np.argsort(-mine, kind="stable"), kind="stable")
    return float(max(0, (rank_mine - rank_ref).max()))


def max_drop_rows(reference: np.ndarray | Ranked, judge: np.ndarray | Ranked) -> np.ndarray:
    """:func:`max_drop` for each row of two (rows, systems) arrays (bootstrap draws, or
    :class:`Ranked`), at once."""
    ref, mine, out = _draw_rows(reference, judge)
    rows, n = ref.values.shape
    if n < 2:
        return out
    drop = np.maximum(0, (mine.positions - ref.positions).max(axis=1)).astype(float)
    defined = ~(ref.close | mine.close)  # as max_drop: NaN where either ties (NaN alone is no tie)
    out[defined] = drop[defined]
    return out


RANK_STATISTICS = ("tau_all", "tau_oracles", "rbo_all", "tau_ap", "tau_top", "max_drop")
"""The statistics :func:`system_agreement_intervals` gives intervals of."""


@dataclass(frozen=True)
class ReferenceDraws:
    """What :func:`system_agreement_intervals` computes of the reference alone, once for every
    judge compared with it (:func:`reference_draws`): the bootstrap's query multiplicities, the
    systems (columns), the reference's mean of each draw (all systems, the oracles, the top half)
    and their orders."""

    queries: int
    systems: tuple[str, ...]
    resamples: int
    seed: int
    times: np.ndarray
    all: Ranked
    picked: list[int]
    oracles: Ranked | None
    top: np.ndarray
    best: Ranked


MIN_QUERIES = 2
"""The fewest queries a bootstrap over queries draws from: with fewer, the system-ordering
intervals are NaN and no reference is drawn."""


def _picked(systems: list[str], oracles: Sequence[str]) -> list[int]:
    """The columns of the oracles among ``systems``, in the oracles' order."""
    return [systems.index(s) for s in oracles if s in systems]


def reference_draws(
    human: pd.DataFrame, oracles: Sequence[str], *, resamples: int = RESAMPLES, seed: int = SEED
) -> ReferenceDraws:
    """The reference side of :func:`system_agreement_intervals` (a query x system table): pass it
    as ``reference=`` to compare many judges with one reference, each sorted once. Two queries
    at least (with fewer, the intervals are NaN and nothing is drawn)."""
    if len(human) < MIN_QUERIES:
        raise ValueError(f"a bootstrap over queries needs two queries or more, not {len(human)}")
    times = query_resamples(len(human), resamples, seed)
    systems = list(human.columns)
    mean_h = times @ human[systems].to_numpy(float) / len(human)
    picked = _picked(systems, oracles)
    top = np.argsort(-human[systems].to_numpy(float).mean(axis=0), kind="stable")[: top_k(systems)]
    return ReferenceDraws(
        len(human),
        tuple(systems),
        resamples,
        seed,
        times,
        ranked(mean_h),
        picked,
        ranked(mean_h[:, picked]) if len(picked) >= 2 else None,
        top,
        ranked(mean_h[:, top]),
    )


def system_agreement_intervals(
    human: pd.DataFrame,
    judge: pd.DataFrame,
    oracles: Sequence[str],
    *,
    rbo_p: float = 0.9,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    level: float = LEVEL,
    reference: ReferenceDraws | None = None,
) -> dict[str, float]:
    """Bootstrap intervals over queries of :data:`RANK_STATISTICS` (tau over all systems and the
    oracles only, RBO, tau_AP, tau on the reference's top half, the largest drop in rank)
    between the system orderings of two aligned query x system tables (their means over the
    resampled queries), and ``system_degenerate``: the most draws any of them left undefined.
    ``reference``: :func:`reference_draws` of ``human`` with the same oracles, resamples and seed
    (the same numbers, the reference sorted once for many judges)."""
    row: dict[str, float] = {f"{name}_ci_{end}": math.nan for name in RANK_STATISTICS for end in ("low", "high")}
    row["system_degenerate"] = 0
    if len(human) < MIN_QUERIES:
        return row
    if reference is None:
        reference = reference_draws(human, oracles, resamples=resamples, seed=seed)
    elif (reference.queries, reference.systems, reference.picked, reference.resamples, reference.seed) != (
        len(human),
        tuple(human.columns),
        _picked(list(human.columns), oracles),
        resamples,
        seed,
    ):
        raise ValueError(
            "reference= was drawn for other queries, systems, oracles, resamples or seed than this comparison"
        )
    mean_j = reference.times @ judge[list(reference.systems)].to_numpy(float) / len(human)
    mine = ranked(mean_j)
    draws = {"tau_all": kendall_tau_rows(reference.all, mean_j)}
    if reference.oracles is not None:
        draws["tau_oracles"] = kendall_tau_rows(reference.oracles, mean_j[:, reference.picked])
    draws["rbo_all"] = rbo_rows(reference.all, mine, p=rbo_p)
    draws["tau_ap"] = tau_ap_rows(reference.all, mine)
    draws["tau_top"] = kendall_tau_rows(reference.best, mean_j[:, reference.top])
    draws["max_drop"] = max_drop_rows(reference.all, mine)
    for name, values in draws.items():
        found = interval(values, level)
        row[f"{name}_ci_low"], row[f"{name}_ci_high"] = found.low, found.high
        row["system_degenerate"] = max(row["system_degenerate"], found.degenerate)
    return row
