"""Judge panels (after a three-family judge-panel study, 2026): leave-one-judge-out, and self-preference corrected for strictness.

A *panel* ranks systems by their mean nDCG@10 over judges (each judge's mean over queries).

* **Leave-one-judge-out**: drop each judge in turn; report for every pair of systems adjacent
  in the full panel order whether the reduced panel keeps the order, the share of the full
  margin that survives, and Kendall's tau between the full and the reduced orderings. Both
  margins carry 95% percentile bootstrap CIs over queries (seeded).
* **Leave-one-judge-out on labels** (no systems needed): the panel's label of a pair is the
  majority of its judges' binary labels (each at its own threshold; a tie counts as relevant),
  on the pairs every panel judge and the humans labelled; report the panel's binary kappa
  against the humans with all judges and without each in turn, and the change, each with a 95%
  cluster-bootstrap CI over queries (the same resamples for both, so the change is paired).
* **Self-preference**: for judge j of family F, against j's panel (the judges of *other*
  families: a same-family judge shares j's bonus; never the null baselines; the humans only on
  request):

  - the paper-comparable figures, on per-query nDCG@10: raw = mean score j gives systems of
    F - mean score its panel gives them; strictness = the same difference on the systems not
    of F (of no panel judge's family where there are any, ``strictness_on``);
    corrected = raw - strictness. It assumes strictness lowers every system's nDCG by the same
    amount, which it does not (a judge that grades 1 -> 0 costs a weak system more than a
    strong one), so it is reported, not flagged on;
  - the flag's estimate, ``within_grade``, on labels: within each query, human grade and
    consensus (how many systems put the document in their top 10), j's grade minus its panel's
    on documents F's systems put in their top 10 against documents that only other systems
    retrieved. A judge that is strict or lenient on a grade, or on documents many systems
    retrieve, moves both sides of that stratum alike, so only a preference for F's documents
    remains. Its interval is a bootstrap over queries and its p a one-sided sign-flip test over
    queries (the engine's ``query_mean_test``); a placebo moves the family to every other family
    of systems, and the flag needs the estimate above every placebo's.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from ..evaluation import cut
from ..judges import HUMAN, Scale
from ..stats import (
    interval,
    kappa_from_counts,
    kendall_tau,
    per_query_confusion,
    query_mean_test,
    query_resamples,
)
from .registry import Context, Figure, Table, audit, chance


def system_means(per_query: pd.DataFrame, judges: Sequence[str]) -> pd.DataFrame:
    """system x judge mean nDCG@10 over queries."""
    frame = per_query[per_query["judge"].isin(judges)]
    return frame.pivot_table(index="system", columns="judge", values="ndcg", aggfunc="mean")[list(judges)]


def query_cube(per_query: pd.DataFrame, judges: Sequence[str], systems: Sequence[str]) -> np.ndarray:
    """query x system x judge array of per-query nDCG@10 (NaN where a judge scored no such query)."""
    wide = per_query[per_query["judge"].isin(judges)].pivot_table(
        index="query_id", columns=["system", "judge"], values="ndcg", aggfunc="mean"
    )
    wide = wide.reindex(columns=pd.MultiIndex.from_product([list(systems), list(judges)]))
    return wide.to_numpy(dtype=float).reshape(len(wide), len(systems), len(judges))


def resampled_means(cube: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    """resample x system x judge means over queries drawn with replacement (the engine's draws):
    each cell's sum over the drawn queries it scores over their number (NaN where none is), as
    products of the draws' multiplicities with the cube, not a (resample x query x system x judge)
    copy of it (800 MB at 1,000 draws of 50 queries, 100 systems and 20 judges)."""
    queries, *shape = cube.shape
    times = query_resamples(queries, resamples, seed)
    flat = cube.reshape(queries, -1)
    scored = ~np.isnan(flat)
    sums, counts = times @ np.where(scored, flat, 0.0), times @ scored.astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, sums / counts, np.nan).reshape(resamples, *shape)


def leave_one_judge_out(
    per_query: pd.DataFrame, judges: Sequence[str], *, resamples: int = 1000, seed: int = 42, level: float = 0.95
) -> pd.DataFrame:
    """One row per (left-out judge, adjacent pair of systems in the full panel order).

    ``margin_full`` and ``margin_reduced`` carry percentile bootstrap CIs over queries: the
    queries are resampled with replacement (seeded, ``resamples`` times), each judge's system
    means recomputed on the resample, and the margins of the same pair (the full panel's
    order) taken in each resample; ``degenerate`` counts draws where a margin is undefined.
    """
    if len(judges) < 2:
        return pd.DataFrame()
    means = system_means(per_query, judges)
    full = means.mean(axis=1).sort_values(ascending=False)
    systems = list(full.index)
    boot = resampled_means(query_cube(per_query, judges, systems), resamples, seed)  # B x S x J
    position = {s: i for i, s in enumerate(systems)}
    boot_full = boot.mean(axis=2)
    rows = []
    for index, left_out in enumerate(judges):
        reduced = means.drop(columns=left_out).mean(axis=1)
        tau = kendall_tau(full.values, reduced[full.index].values)
        boot_reduced = np.delete(boot, index, axis=2).mean(axis=2)
        for upper, lower in zip(full.index[:-1], full.index[1:], strict=True):
            margin = full[upper] - full[lower]
            kept = reduced[upper] - reduced[lower]
            u, v = position[upper], position[lower]
            full_ci = interval(boot_full[:, u] - boot_full[:, v], level)
            kept_ci = interval(boot_reduced[:, u] - boot_reduced[:, v], level)
            rows.append(
                {
                    "left_out": left_out,
                    "upper": upper,
                    "lower": lower,
                    "margin_full": margin,
                    "margin_reduced": kept,
                    "order_kept": bool(kept > 0 or (kept == 0 and margin == 0)),
                    "margin_share": kept / margin if margin else math.nan,
                    "tau_full_vs_reduced": tau,
                    "margin_full_ci_low": full_ci.low,
                    "margin_full_ci_high": full_ci.high,
                    "margin_reduced_ci_low": kept_ci.low,
                    "margin_reduced_ci_high": kept_ci.high,
                    "degenerate": max(full_ci.degenerate, kept_ci.degenerate),
                }
            )
    return pd.DataFrame(rows)


LOJO_LABEL_COLUMNS = [
    "left_out",
    "panel",
    "pairs",
    "queries",
    "kappa_judge",
    "kappa_full",
    "kappa_full_ci_low",
    "kappa_full_ci_high",
    "kappa_reduced",
    "kappa_reduced_ci_low",
    "kappa_reduced_ci_high",
    "kappa_change",
    "kappa_change_ci_low",
    "kappa_change_ci_high",
    "without_it",
    "degenerate",
]
"""The columns of :func:`leave_one_judge_out_labels`, in order."""


def leave_one_judge_out_labels(
    labels: Mapping[str, pd.DataFrame],
    scales: Mapping[str, Scale],
    judges: Sequence[str],
    human: str,
    *,
    resamples: int = 1000,
    seed: int = 42,
    level: float = 0.95,
) -> pd.DataFrame:
    """One row per judge of the panel ``judges`` (two or more): the panel's binary kappa against
    the ``human`` labels with every judge (``kappa_full``) and without this one
    (``kappa_reduced``), and ``kappa_change`` = reduced - full, each with a percentile
    cluster-bootstrap CI over queries (one set of resampled queries for all, so the change is
    paired); ``kappa_judge`` is the judge's own binary kappa on the same pairs. ``without_it``
    reads the change's CI: ``worse`` (the panel agrees less without the judge: it helps),
    ``better`` (it hurts), ``same`` (the CI holds 0).

    The panel's label of a pair: relevant when at least half of its judges call it relevant
    (each at its own binary threshold), on the pairs every panel judge and the humans labelled.
    No systems are needed; ``degenerate`` counts draws where a kappa is undefined."""
    if len(judges) < 2:
        return pd.DataFrame(columns=LOJO_LABEL_COLUMNS)
    keys = ["query_id", "doc_id"]
    frame = labels[human][[*keys, "relevance"]].rename(columns={"relevance": human})
    frame = frame.assign(**{human: scales[human].binary(frame[human])})
    for judge in judges:
        side = labels[judge][[*keys, "relevance"]]
        side = side.assign(relevance=scales[judge].binary(side["relevance"])).rename(columns={"relevance": judge})
        frame = frame.merge(side, on=keys)
    if frame.empty or frame["query_id"].nunique() < 2:
        return pd.DataFrame(columns=LOJO_LABEL_COLUMNS)
    queries = frame["query_id"].tolist()
    times = query_resamples(frame["query_id"].nunique(), resamples, seed)
    weights = 1.0 - np.eye(2)

    def kappa_of(votes: pd.Series) -> tuple[float, np.ndarray]:
        counts = per_query_confusion(queries, frame[human].tolist(), votes.astype(int).tolist(), [0, 1], [0, 1])
        point = float(kappa_from_counts(counts.sum(axis=0), weights))
        return point, kappa_from_counts(np.einsum("bq,qij->bij", times, counts), weights)

    def panel(members: Sequence[str]) -> pd.Series:
        return frame[list(members)].mean(axis=1) >= 0.5

    full, full_draws = kappa_of(panel(judges))
    full_ci = interval(full_draws, level)
    rows = []
    for judge in judges:
        reduced, reduced_draws = kappa_of(panel([j for j in judges if j != judge]))
        own, _ = kappa_of(frame[judge] == 1)
        reduced_ci, change_ci = interval(reduced_draws, level), interval(reduced_draws - full_draws, level)
        without = "worse" if change_ci.high < 0 else "better" if change_ci.low > 0 else "same"
        rows.append(
            {
                "left_out": judge,
                "panel": len(judges),
                "pairs": len(frame),
                "queries": frame["query_id"].nunique(),
                "kappa_judge": own,
                "kappa_full": full,
                "kappa_full_ci_low": full_ci.low,
                "kappa_full_ci_high": full_ci.high,
                "kappa_reduced": reduced,
                "kappa_reduced_ci_low": reduced_ci.low,
                "kappa_reduced_ci_high": reduced_ci.high,
                "kappa_change": reduced - full,
                "kappa_change_ci_low": change_ci.low,
                "kappa_change_ci_high": change_ci.high,
                "without_it": without if math.isfinite(reduced - full) else "undefined",
                "degenerate": max(full_ci.degenerate, change_ci.degenerate),
            }
        )
    return pd.DataFrame(rows, columns=LOJO_LABEL_COLUMNS)


NULL_KINDS = ("baseline",)  # the length and overlap judges: no model, no family, never in a panel


def comparison_panel(
    judge: str,
    families: Mapping[str, str | None],
    candidates: Iterable[str],
    *,
    humans: Iterable[str] = (),
) -> list[str]:
    """The judges ``judge`` is compared with: the candidates that declare a family other than
    its own (a panel of judges from different families), then ``humans``.

    A candidate with no declared family is left out: it cannot be said to be of another
    family. Callers pass the null baselines neither as candidates nor as humans.
    """
    family = families.get(judge)
    panel = [c for c in candidates if c != judge and families.get(c) is not None and families.get(c) != family]
    return panel + [h for h in humans if h != judge and h not in panel]


def top_documents(
    runs: Mapping[str, Sequence[pd.DataFrame]], judged: pd.DataFrame, depth: int = 10
) -> dict[str, pd.DataFrame]:
    """Per system, the (query_id, doc_id) of its top ``depth`` judged documents (unjudged ones
    removed first, as judged-only nDCG does; trec_eval's order), over all its runs (an oracle's
    tie-break draws)."""
    keys = pd.MultiIndex.from_frame(judged[["query_id", "doc_id"]].astype(str))
    out = {}
    for system, system_runs in runs.items():
        tops = []
        for run in system_runs:
            run = run.astype({"query_id": str, "doc_id": str})
            kept = run[pd.MultiIndex.from_frame(run[["query_id", "doc_id"]]).isin(keys)]
            tops.append(cut(kept, depth)[["query_id", "doc_id"]])
        out[system] = pd.concat(tops).drop_duplicates().reset_index(drop=True) if tops else pd.DataFrame()
    return out


def _docs(tops: Mapping[str, pd.DataFrame], systems: Iterable[str]) -> set[tuple[str, str]]:
    found: set[tuple[str, str]] = set()
    for system in systems:
        if system in tops and len(tops[system]):
            found |= set(zip(tops[system]["query_id"], tops[system]["doc_id"], strict=True))
    return found


def consensus(tops: Mapping[str, pd.DataFrame], systems: Iterable[str]) -> dict[tuple[str, str], int]:
    """Per (query_id, doc_id): how many of ``systems`` hold it in their top documents (``tops``,
    :func:`top_documents`); a pair none holds is absent (count 0)."""
    counts: dict[tuple[str, str], int] = {}
    for key in (k for system in systems for k in _docs(tops, [system])):
        counts[key] = counts.get(key, 0) + 1
    return counts


def residuals(
    judge: str, panel: Sequence[str], labels: Mapping[str, pd.DataFrame], scales: Mapping[str, Scale], human: str
) -> pd.DataFrame:
    """query_id, doc_id, human, r: the judge's grade minus its panel's mean grade on the pairs
    all of them labelled, the panel's grades mapped linearly onto the judge's scale."""
    low, high = scales[judge].low, scales[judge].high
    frame = labels[human][["query_id", "doc_id", "relevance"]].rename(columns={"relevance": "human"})
    frame = frame.merge(labels[judge][["query_id", "doc_id", "relevance"]], on=["query_id", "doc_id"])
    frame = frame.rename(columns={"relevance": "grade"})
    mapped = []
    for other in panel:
        s = scales[other]
        side = labels[other][["query_id", "doc_id", "relevance"]]
        side = side.assign(relevance=low + (side["relevance"] - s.low) / max(s.high - s.low, 1) * (high - low))
        frame = frame.merge(side.rename(columns={"relevance": f"panel_{len(mapped)}"}), on=["query_id", "doc_id"])
        mapped.append(f"panel_{len(mapped)}")
    frame["r"] = frame["grade"] - frame[mapped].mean(axis=1)
    return frame[["query_id", "doc_id", "human", "r"]]


def within_grade(
    resid: pd.DataFrame,
    own: set[tuple[str, str]],
    other: set[tuple[str, str]],
    *,
    agreement: Mapping[tuple[str, str], int] | None = None,
    **engine,
) -> dict[str, float]:
    """Does the judge, relative to its panel, grade the documents of ``own`` higher than
    comparable documents of ``other`` (only other systems retrieved them)?

    Strata: query x human grade x consensus, the consensus of a document its count in
    ``agreement`` (:func:`consensus`: how many systems, of every family, put it in their top k;
    0 where absent; ``agreement`` None: one consensus for all, the strata query x grade). The
    count is over every system, the family's own included: a judge lenient on documents
    several systems retrieved (consensus leniency, with no family bias) grades up a family's
    document that one other system also found (two systems) as it grades up another document
    two other systems found, and not one that a single other system found; counting the other
    systems alone would compare exactly these two and read the leniency as self-preference. So
    a document only the family's systems retrieved (none of the other systems: count = the
    number of family systems that hold it, 1 with one such system) is compared with documents
    as many other systems retrieved, and none is left out for that reason.

    Per stratum with documents on both sides: d = mean r(own) - mean r(other), weighted by
    n_own n_other / (n_own + n_other) (as Cochran-Mantel-Haenszel weighs strata); the estimate is
    the weighted mean over strata and its interval a cluster bootstrap over queries. A stratum
    with documents on one side only is dropped and its documents counted: ``pairs_own_unmatched``
    (a family document no other document of its query, grade and consensus matches, e.g. one
    that more systems retrieved than there are other systems) and ``pairs_other_unmatched``.

    ``p`` is one-sided, H1: the judge prefers ``own`` (estimate > 0). It comes from the two-sided
    sign-flip test over queries (:func:`voirdire.stats.query_mean_test`) whose null, every
    query's total flipped or kept, is symmetric about 0: p = p_two / 2 where the estimate is
    positive, 1 - p_two / 2 where it is not. Labels, not nDCG: a judge strict on one grade lowers
    both sides of its stratum alike."""
    keys = list(zip(resid["query_id"], resid["doc_id"], strict=True))
    side = np.array([1 if k in own else 0 if k in other else -1 for k in keys], int)  # own, other, neither
    count = np.zeros(len(keys), int) if agreement is None else np.array([agreement.get(k, 0) for k in keys], int)
    frame = resid.assign(mine=side, consensus=count)
    frame = frame[side >= 0]
    # the strata in sorted order (query, grade, consensus); per stratum the sizes and sums of r of each side
    stratum = frame.groupby(["query_id", "human", "consensus"], sort=True).ngroup().to_numpy()
    mine, r = frame["mine"].to_numpy() == 1, frame["r"].to_numpy(float)
    k = int(stratum.max()) + 1 if len(stratum) else 0
    n_own, n_other = (np.bincount(stratum, weights=w, minlength=k) for w in (mine, ~mine))
    s_own, s_other = (np.bincount(stratum, weights=np.where(w, r, 0.0), minlength=k) for w in (mine, ~mine))
    matched = (n_own > 0) & (n_other > 0)
    row = {
        "pairs_own": int(mine.sum()),
        "pairs_other": int((~mine).sum()),
        "strata": int(matched.sum()),
        "pairs_own_unmatched": int(n_own[~matched].sum()),
        "pairs_other_unmatched": int(n_other[~matched].sum()),
    }
    if not matched.any():
        return row | dict.fromkeys(("mean", "ci_low", "ci_high", "p"), math.nan) | {"queries": 0, "degenerate": 0}
    n_own, n_other, s_own, s_other = (a[matched] for a in (n_own, n_other, s_own, s_other))
    weights = n_own * n_other / (n_own + n_other)
    effect = s_own / n_own - s_other / n_other
    _, first = np.unique(stratum, return_index=True)  # each stratum's first pair
    queries = frame["query_id"].to_numpy()[first[matched]]
    found = query_mean_test(effect, queries, weights=weights, **engine)
    return row | found | {"p": _greater(found["p"], found["mean"])}


def _greater(p_two: float, mean: float) -> float:
    """The one-sided p (H1: mean > 0) of a two-sided test whose null is symmetric about 0."""
    if math.isnan(p_two) or math.isnan(mean):
        return math.nan
    return p_two / 2 if mean > 0 else 1 - p_two / 2


def self_preference(
    per_query: pd.DataFrame,
    judge_families: Mapping[str, str | None],
    system_families: Mapping[str, str | None],
    kinds: Mapping[str, str],
    *,
    labels: Mapping[str, pd.DataFrame] | None = None,
    scales: Mapping[str, Scale] | None = None,
    tops: Mapping[str, pd.DataFrame] | None = None,
    include_humans: bool = False,
    alpha: float = 0.05,
    resamples: int = 1000,
    seed: int = 42,
) -> pd.DataFrame:
    """Self-preference per judge: the paper-comparable nDCG figures and the flag's estimate.

    ``per_query`` has columns judge, system, query_id, ndcg; ``judge_families`` and ``kinds``
    cover every judge in it. Judge j's panel is :func:`comparison_panel`: the judges that
    declare a family other than j's, never a null baseline (kind ``baseline``), and the
    humans (kind ``human``) only with ``include_humans``.

    * ``raw``, ``strictness``, ``corrected`` (= raw - strictness): differences of mean
      nDCG@10 between j and its panel, on j's family's systems and on the others, with
      bootstrap intervals over queries. The seed's and the papers' figure, kept for
      comparison; it is *not* the flag: strictness does not lower every system's nDCG alike
      (grading 1 -> 0 costs a weak system more than a strong one), so a strict judge with no
      family bias would read as self-preferring.
    * ``within_grade``: the flag's estimate (:func:`within_grade`), from ``labels`` (every
      judge's and the humans' qrels), ``scales`` and ``tops`` (each system's top judged
      documents, :func:`top_documents`): the judge's grade minus its panel's on documents
      j's family's systems retrieved, against documents only other systems retrieved, of the
      same query, human grade and consensus (how many of the scored systems, j's family's
      included, hold the document in their top documents: ``consensus_systems`` of them), so
      that a judge lenient on documents many systems found is not read as self-preferring.
      ``within_grade_p`` is one-sided, H1: j prefers its family's documents (the sign-flip
      test over queries; a negative estimate has p >= 0.5). ``pairs_own_unmatched`` /
      ``pairs_other_unmatched``: documents of a stratum with no document on the other side,
      left out (the estimate rests on the rest).
    * ``placebo_min`` / ``placebo_max``: the same statistic with the family moved to each
      other family of systems that no panel judge has a stake in (``placebo_families`` of them,
      ``placebo_max_family`` the one that reads highest): what the design reads where j has no
      stake. ``beyond_placebo``: ``within_grade`` > ``placebo_max`` (None where no placebo
      family exists).
    * ``self_preferring``: ``within_grade`` > 0 with ``within_grade_p`` < ``alpha`` *and*
      ``beyond_placebo`` (not False). The flag needs both (an intersection-union rule, Berger
      1982): the test alone flags a judge with no family bias in at most ``alpha`` of draws, and
      the conjunction can only flag less, so the placebo costs no size. It is a negative control
      (Lipsitch et al. 2010) for a confound the strata do not hold, one that any family of
      systems would show too: where the families are exchangeable under such a null, the own
      family's estimate is the highest of ``placebo_families`` + 1 in 1 / (``placebo_families``
      + 1) of draws, so the flag fires in at most that share however significant the test reads.
      Its price is power: a real preference must clear the largest of the placebos' noisy
      estimates (one per neutral family, so more families ask more). Where no placebo family
      exists the flag rests on the test alone (``beyond_placebo`` None). ``placebo_blocked``:
      the test alone would have flagged, the placebo did not let it.

    The columns ``pairs_own_unmatched``, ``pairs_other_unmatched``, ``consensus_systems``,
    ``placebo_max_family``, ``beyond_placebo`` and ``placebo_blocked`` follow ``reason``.
    * ``note``: where ``corrected``'s strictness rests on a single system (``strictness_systems``
      1), says so: the figure then reads that one system's scores.

    A judge whose family has no system, that has no family, or has nobody in its panel gets
    n/a and a reason; without labels the within-grade estimate is n/a with its reason.
    """
    humans = [j for j in judge_families if kinds.get(j) == "human"]
    candidates = [j for j in judge_families if kinds.get(j) not in (*NULL_KINDS, "human", "jury")]
    wide = per_query.pivot_table(index=["query_id", "system"], columns="judge", values="ndcg")
    scored = set(per_query["system"])
    engine = {"resamples": resamples, "seed": seed}
    rows = []
    for judge in [j for j in judge_families if kinds.get(j) != "human"]:
        family = judge_families[judge]
        others = comparison_panel(judge, judge_families, candidates, humans=humans if include_humans else ())
        others = [j for j in others if j in wide.columns]
        present = [s for s in system_families if s in scored]
        own = [s for s in present if family is not None and system_families[s] == family]
        rest = [s for s in present if s not in own]
        # strictness on the systems no panel judge has a stake in, where there are any: on a
        # panel judge's own family the panel's self-preference would pass for j's strictness
        staked = {judge_families.get(j) for j in others} - {None}
        neutral = [s for s in rest if system_families[s] not in staked]
        strict_on = neutral or rest
        reason, extra = None, {}
        if judge not in wide.columns:
            reason = "no per-query scores under the judge"
        elif kinds.get(judge) in NULL_KINDS:
            reason = "a null baseline has no family"
        elif family is None:
            reason = "the judge declares no family"
        elif not own:
            reason = f"no system of family {family!r}"
        elif not others:
            reason = "no judge of another family to compare with" + ("" if include_humans else " (humans not included)")
        elif not rest:
            reason = "every system is of the judge's family"
        head = {"judge": judge, "family": family, "panel": ", ".join(others)}
        if reason:
            rows.append(head | {"reason": reason, "self_preferring": False})
            continue
        # per query: the judge's mean over F systems minus the panel's (and the same off F)
        diff = (wide[judge] - wide[others].mean(axis=1)).unstack("system")
        raw_q = diff[own].mean(axis=1).to_numpy()
        strict_q = diff[strict_on].mean(axis=1).to_numpy()
        row = head | {
            "systems_of_family": len(own),
            "strictness_systems": len(strict_on),
            "strictness_on": "systems of no panel family" if neutral else "every other system",
            "queries": len(raw_q),
        }
        degenerate = 0
        for name, values in (("raw", raw_q), ("strictness", strict_q), ("corrected", raw_q - strict_q)):
            found = query_mean_test(values, **engine)
            row |= {name: found["mean"], f"{name}_ci_low": found["ci_low"], f"{name}_ci_high": found["ci_high"]}
            degenerate = max(degenerate, found["degenerate"])
        flag_reason = _within_grade_reason(judge, others, labels, scales, tops, humans)
        if flag_reason is None:
            resid = residuals(judge, others, labels, scales, humans[0])
            agreement = consensus(tops, present)
            # documents a panel judge's family retrieved carry that judge's own preference: left
            # out of both sides where the family's documents remain (as strictness_on does)
            staked_docs = _docs(tops, [s for s in rest if system_families[s] in staked])
            mine = _docs(tops, own)
            own_docs = (mine - staked_docs) or mine
            other_docs = _docs(tops, rest) - mine - staked_docs
            found = within_grade(resid, own_docs, other_docs, agreement=agreement, **engine)
            row |= {
                "within_grade": found["mean"],
                "within_grade_ci_low": found["ci_low"],
                "within_grade_ci_high": found["ci_high"],
                "within_grade_p": found["p"],
                "pairs_own": found["pairs_own"],
                "pairs_other": found["pairs_other"],
                "strata": found["strata"],
                "documents_on": "none a panel family retrieved"
                if own_docs is not mine or not staked_docs
                else "the family's, though a panel family retrieved them too",
            }
            degenerate = max(degenerate, found["degenerate"])
            neutral_families = {s: system_families[s] for s in present if system_families[s] not in staked}
            placebo = _placebo(resid, tops, neutral_families, family, agreement, **engine)
            row |= {k: placebo[k] for k in ("placebo_families", "placebo_min", "placebo_max")}
            extra = {k: found[k] for k in ("pairs_own_unmatched", "pairs_other_unmatched")}
            extra |= {"consensus_systems": len(present), "placebo_max_family": placebo["placebo_max_family"]}
            if not found["strata"]:
                flag_reason = (
                    "no query, human grade and consensus has documents of the family's systems and of only other"
                    " systems"
                )
        row["degenerate"] = degenerate
        if len(strict_on) < 2:  # the nDCG correction (not the flag) then reads one system's scores
            row["note"] = f"corrected: its strictness rests on one system ({strict_on[0]})"
        p = row.get("within_grade_p", math.nan)
        significant = bool(flag_reason is None and p < alpha and row["within_grade"] > 0)
        beyond = None
        if flag_reason is None and row.get("placebo_families"):
            beyond = bool(row["within_grade"] > row["placebo_max"])
        row["self_preferring"] = significant and beyond is not False
        extra |= {"beyond_placebo": beyond, "placebo_blocked": significant and beyond is False}
        rows.append(row | {"reason": flag_reason} | extra)
    return pd.DataFrame(rows)


def _within_grade_reason(judge, others, labels, scales, tops, humans) -> str | None:
    if labels is None or scales is None or tops is None:
        return "no labels or top documents given: the within-grade estimate needs them"
    if not humans or humans[0] not in labels:
        return "no human labels"
    missing = [j for j in (judge, *others) if j not in labels or j not in scales]
    if missing:
        return f"no labels of {', '.join(missing)}"
    return None


def _placebo(
    resid, tops, families: Mapping[str, str | None], family: str, agreement: Mapping[tuple[str, str], int], **engine
) -> dict:
    """The within-grade statistic with the family moved to each other family of systems that no
    panel judge has a stake in (``families``; a system of no family is a family of its own);
    j's own family's documents on neither side, the strata the same (query x grade x the
    documents' consensus ``agreement``)."""
    groups: dict[str, list[str]] = {}
    for system, fam in families.items():
        if fam != family:
            groups.setdefault(fam or f"system:{system}", []).append(system)
    mine = _docs(tops, [s for s, f in families.items() if f == family])
    values = {}
    for name, members in groups.items():
        placebo = _docs(tops, members) - mine
        rest = _docs(tops, [s for s in families if s not in members and families[s] != family]) - placebo - mine
        found = within_grade(resid, placebo, rest, agreement=agreement, **engine)
        if not math.isnan(found["mean"]):
            values[name] = found["mean"]
    if not values:
        return {"placebo_families": 0, "placebo_min": math.nan, "placebo_max": math.nan, "placebo_max_family": None}
    top = max(values, key=values.get)
    low = min(values.values())
    return {"placebo_families": len(values), "placebo_min": low, "placebo_max": values[top], "placebo_max_family": top}


# ----------------------------------------------------------------------------- the audit, declared


def _chart(lojo: pd.DataFrame, png: str) -> None:
    from .figures import lojo_chart  # matplotlib: only where the figure is drawn

    lojo_chart(lojo, png)


@audit(
    "lojo",
    tables=[
        Table(
            "lojo",
            "Leave one judge out: does each adjacent pair of the panel ranking hold without the judge? "
            "(margins with 95% bootstrap CIs over queries)",
            [],
            # margin_share (in the CSV) is unbounded where the full margin is near 0: margins are shown
            view=["left_out", "upper", "lower", "margin_full", "margin_reduced", "order_kept", "tau_full_vs_reduced"],
            empty="needs two judges or more besides the null baselines (it ranks the systems)",
            systems=True,
            short="Leave one judge out",
            report="leaderboard",  # the panel's order of systems without each judge
        ),
        Table(
            "lojo_labels",
            "Leave one judge out on labels: the panel's label (at least half its judges say relevant, each at "
            "its own threshold) against the humans', binary kappa with every judge and without each (95% "
            "cluster-bootstrap CIs over queries; the change paired on the same resamples)",
            ["dataset", *LOJO_LABEL_COLUMNS],
            view=[
                "left_out",
                "panel",
                "pairs",
                "queries",
                "kappa_judge",
                "kappa_full",
                "kappa_reduced",
                "kappa_change",
                "without_it",
            ],
            empty="needs two judges or more besides the null baselines, on pairs of two queries or more",
            counts=["pairs", "queries"],
            short="Leave one judge out (labels)",
            report="labels",
        ),
    ],
    figures=[
        Figure(
            "lojo",
            "lojo",
            _chart,
            placeholder="no panel ranking of systems (lojo_labels.md: the labels without each judge)",
        )
    ],
    systems=False,  # the labels without each judge need no system; the ranking without each, systems
)
def audit_lojo(context: Context) -> dict[str, list]:
    """One dataset's rows: ``lojo_labels`` (the panel's labels with and without each judge, against
    the humans') and, with systems, ``lojo`` (the panel's ranking of the systems without each
    judge). The panel: every judge but the humans, the null baselines and the juries (a jury
    repeats its members)."""
    data = context.data
    panel = [j for j in context.judges if data.judges[j]["kind"] not in (*NULL_KINDS, "jury")]
    scales = {j: context.scale(j) for j in data.judges}
    labels = leave_one_judge_out_labels({**data.labels, HUMAN: context.human}, scales, panel, HUMAN, seed=context.seed)
    found = {"lojo_labels": [labels] if len(labels) else []}
    if context.systems:
        lojo = leave_one_judge_out(data.per_query, panel, seed=context.seed)
        found["lojo"] = [lojo] if len(lojo) else []
    return found


SELF_PREFERENCE_SETTINGS = {
    "type": "object",
    "default": {},
    "additionalProperties": False,
    "description": "Self-preference (docs/audits.md): each judge against a panel of judges of other families",
    "properties": {
        "include_humans": {
            "type": "boolean",
            "default": False,
            "description": "put the human labels in every judge's comparison panel beside the judges of other "
            "families (default: judges only, as the panel studies do)",
        },
        "similar_families": {
            "enum": ["error", "allow"],
            "default": "error",
            "description": "a family that one judge or system alone declares, spelled close to another family "
            "(rnak1 beside rank1): an error naming it, unless allowed",
        },
    },
}
"""The config section ``audits.self_preference``; ``similar_families`` is read where the config is
checked (:mod:`voirdire.config.sections_systems`), before any job."""


def _self_preference_title(rows: pd.DataFrame, alpha: float) -> str:
    tests = int(rows["within_grade_p"].notna().sum()) if "within_grade_p" in rows else 0
    return (
        "Self-preference against a panel of judges of other families: flagged from the within-grade "
        "label estimate (the family's documents against other documents of the same human grade; 95% "
        "bootstrap CI and sign-flip p over queries; the nDCG raw / strictness / corrected are the papers' "
        f"figures, not flagged on; {chance(tests, alpha)})"
    )


@audit(
    "self_preference",
    tables=[
        Table(
            "self_preference",
            _self_preference_title,
            ["dataset", "judge"],
            view=[
                "judge",
                "family",
                "panel",
                "within_grade",
                "within_grade_p",
                "strata",
                "placebo_min",
                "placebo_max",
                "corrected",
                "self_preferring",
                "reason",
                "note",
            ],
            empty="compares the judges' labels of a family's systems' documents",
            # counts (a float column where a row has none): an integer where every value is whole
            counts=[
                "systems_of_family",
                "strictness_systems",
                "consensus_systems",
                "queries",
                "pairs_own",
                "pairs_other",
                "pairs_own_unmatched",
                "pairs_other_unmatched",
            ],
        )
    ],
    systems=True,
    short="Self-preference",
    settings=SELF_PREFERENCE_SETTINGS,
)
def audit_self_preference(context: Context) -> dict[str, pd.DataFrame]:
    """One dataset's ``self_preference`` rows (:func:`self_preference`): every judge against the
    judges of other families (never the null baselines; the humans with ``include_humans``), its
    flag read on the documents each system puts in its top (the runs cut at the evaluation depth,
    human-judged documents, the primary measure's cutoff; 10 without one)."""
    data = context.data
    judges = list(data.judges)
    runs = data.runs
    if context.depth:
        runs = {s: [cut(r, context.depth, context.ties) for r in rs] for s, rs in runs.items()}
    found = self_preference(
        data.per_query,
        {j: data.judges[j]["family"] for j in judges},
        context.system_families,
        {j: data.judges[j]["kind"] for j in judges},
        labels=data.labels,
        scales={j: context.scale(j) for j in judges},
        tops=top_documents(runs, context.human, context.cutoff or 10),
        include_humans=context.settings.get("include_humans", False),
        alpha=context.alpha,
        seed=context.seed,
    )
    return {"self_preference": found}
