"""Judge panels (after a three-family judge-panel study, 2026): leave-one-judge-out, and self-preference corrected for strictness.

A *panel* ranks systems by their mean nDCG@10 over judges (each judge's mean over queries).

* **Leave-one-judge-out**: drop each judge in turn; report for every pair of systems adjacent
  in the full panel order whether the reduced panel keeps the order, the share of the full
  margin that survives, and Kendall's tau between the full and the reduced orderings. Both
  margins carry 95% percentile bootstrap CIs over queries (seeded).
* **Self-preference corrected for strictness**: for judge j of family F,
  raw = mean score j gives systems of F - mean score j's panel gives them;
  strictness = the same difference on the systems not of F; corrected = raw - strictness.
  A judge that is merely harsher everywhere has raw < 0 and strictness < 0, corrected ~ 0.
  j's panel is the judges of *other* families: a same-family judge shares j's bonus, so with
  m same-family judges among n panel judges, each adding the same bonus, the corrected
  value loses m/n of it. The
  null baselines (length, overlap) are never in it; the humans only on request.
  Strictness is measured on the systems of no panel judge's family when there are any
  (``strictness_on``): on a panel judge's own family the panel's self-preference would pass
  for j's strictness, and a clean judge beside a self-preferring panel would be flagged.
  Scores are per-query nDCG@10; 95% CIs are bootstrap over queries
  (``scipy.stats.bootstrap``, seeded).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from ..stats import kendall_tau


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
    """resample x system x judge means over queries drawn with replacement (seeded)."""
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, cube.shape[0], size=(resamples, cube.shape[0]))
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a cell no resampled query scores: NaN
        return np.nanmean(cube[picks], axis=1)


def _percentile_ci(values: np.ndarray, level: float) -> tuple[float, float]:
    tail = 100 * (1 - level) / 2
    low, high = np.nanpercentile(values, [tail, 100 - tail])
    return float(low), float(high)


def leave_one_judge_out(
    per_query: pd.DataFrame, judges: Sequence[str], *, resamples: int = 1000, seed: int = 42, level: float = 0.95
) -> pd.DataFrame:
    """One row per (left-out judge, adjacent pair of systems in the full panel order).

    ``margin_full`` and ``margin_reduced`` carry percentile bootstrap CIs over queries: the
    queries are resampled with replacement (seeded, ``resamples`` times), each judge's system
    means recomputed on the resample, and the margins of the same pair (the full panel's
    order) taken in each resample.
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
            full_low, full_high = _percentile_ci(boot_full[:, u] - boot_full[:, v], level)
            kept_low, kept_high = _percentile_ci(boot_reduced[:, u] - boot_reduced[:, v], level)
            rows.append(
                {
                    "left_out": left_out, "upper": upper, "lower": lower, "margin_full": margin,
                    "margin_reduced": kept, "order_kept": bool(kept > 0 or (kept == 0 and margin == 0)),
                    "margin_share": kept / margin if margin else math.nan, "tau_full_vs_reduced": tau,
                    "margin_full_ci_low": full_low, "margin_full_ci_high": full_high,
                    "margin_reduced_ci_low": kept_low, "margin_reduced_ci_high": kept_high,
                }
            )  # fmt: skip
    return pd.DataFrame(rows)


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


def self_preference(
    per_query: pd.DataFrame,
    judge_families: Mapping[str, str | None],
    system_families: Mapping[str, str | None],
    kinds: Mapping[str, str],
    *,
    include_humans: bool = False,
    resamples: int = 1000,
    seed: int = 42,
) -> pd.DataFrame:
    """Raw, strictness and corrected self-preference per judge, with 95% bootstrap CIs.

    ``per_query`` has columns judge, system, query_id, ndcg; ``judge_families`` and ``kinds``
    cover every judge in it. The audited judges are all but the humans. Judge j's panel is
    :func:`comparison_panel`: the judges that declare a family other than j's, never a null
    baseline (kind ``baseline``), and the humans (kind ``human``) only with ``include_humans``.
    A same-family judge in the panel would share j's bonus and hide part of it.

    A judge whose family has no system, that has no family, or has nobody in its panel gets
    n/a and a reason. The ``panel`` column names the judges compared with.
    """
    humans = [j for j in judge_families if kinds.get(j) == "human"]
    candidates = [j for j in judge_families if kinds.get(j) not in (*NULL_KINDS, "human")]
    wide = per_query.pivot_table(index=["query_id", "system"], columns="judge", values="ndcg")
    scored = set(per_query["system"])
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
        reason = None
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
            "systems_of_family": len(own), "strictness_systems": len(strict_on),
            "strictness_on": "systems of no panel family" if neutral else "every other system",
            "queries": len(raw_q),
        }  # fmt: skip
        for name, values in (("raw", raw_q), ("strictness", strict_q), ("corrected", raw_q - strict_q)):
            row[name] = float(np.mean(values))
            if len(values) >= 2 and np.ptp(values) > 0:
                ci = stats.bootstrap(
                    (values,), np.mean, n_resamples=resamples, confidence_level=0.95,
                    random_state=np.random.default_rng(seed), method="percentile",
                ).confidence_interval  # fmt: skip
                row[f"{name}_ci_low"], row[f"{name}_ci_high"] = float(ci.low), float(ci.high)
            else:
                row[f"{name}_ci_low"] = row[f"{name}_ci_high"] = row[name]
        row["self_preferring"] = bool(row["corrected_ci_low"] > 0)
        rows.append(row | {"reason": None})
    return pd.DataFrame(rows)
