"""Judge panels (seed 004): leave-one-judge-out, and self-preference corrected for strictness.

A *panel* ranks systems by their mean nDCG@10 over judges (each judge's mean over queries).

* **Leave-one-judge-out**: drop each judge in turn; report for every pair of systems adjacent
  in the full panel order whether the reduced panel keeps the order, the share of the full
  margin that survives, and Kendall's tau between the full and the reduced orderings.
* **Self-preference corrected for strictness**: for judge j of family F,
  raw = mean score j gives systems of F - mean score the other judges give them;
  strictness = the same difference on the systems not of F; corrected = raw - strictness.
  A judge that is merely harsher everywhere has raw < 0 and strictness < 0, corrected ~ 0.
  Scores are per-query nDCG@10; 95% CIs are bootstrap over queries
  (``scipy.stats.bootstrap``, seeded).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from ..stats import kendall_tau


def system_means(per_query: pd.DataFrame, judges: Sequence[str]) -> pd.DataFrame:
    """system x judge mean nDCG@10 over queries."""
    frame = per_query[per_query["judge"].isin(judges)]
    return frame.pivot_table(index="system", columns="judge", values="ndcg", aggfunc="mean")[list(judges)]


def leave_one_judge_out(per_query: pd.DataFrame, judges: Sequence[str]) -> pd.DataFrame:
    """One row per (left-out judge, adjacent pair of systems in the full panel order)."""
    if len(judges) < 2:
        return pd.DataFrame()
    means = system_means(per_query, judges)
    full = means.mean(axis=1).sort_values(ascending=False)
    rows = []
    for left_out in judges:
        reduced = means.drop(columns=left_out).mean(axis=1)
        tau = kendall_tau(full.values, reduced[full.index].values)
        for upper, lower in zip(full.index[:-1], full.index[1:], strict=True):
            margin = full[upper] - full[lower]
            kept = reduced[upper] - reduced[lower]
            rows.append(
                {
                    "left_out": left_out, "upper": upper, "lower": lower, "margin_full": margin,
                    "margin_reduced": kept, "order_kept": bool(kept > 0 or (kept == 0 and margin == 0)),
                    "margin_share": kept / margin if margin else math.nan, "tau_full_vs_reduced": tau,
                }
            )  # fmt: skip
    return pd.DataFrame(rows)


def _mean_difference(judge_scores: np.ndarray, other_scores: np.ndarray) -> float:
    return float(np.mean(judge_scores) - np.mean(other_scores))


def self_preference(
    per_query: pd.DataFrame,
    judge_families: Mapping[str, str | None],
    system_families: Mapping[str, str | None],
    *,
    resamples: int = 1000,
    seed: int = 42,
) -> pd.DataFrame:
    """Raw, strictness and corrected self-preference per judge, with 95% bootstrap CIs.

    ``per_query`` has columns judge, system, query_id, ndcg. A judge whose family has no
    system, or that has no family, or no other judge to compare with, gets n/a and a reason.
    """
    judges = list(judge_families)
    rows = []
    for judge in judges:
        family = judge_families[judge]
        others = [j for j in judges if j != judge]
        own = [s for s, f in system_families.items() if family is not None and f == family]
        rest = [s for s in system_families if s not in own]
        reason = None
        if family is None:
            reason = "the judge declares no family"
        elif not own:
            reason = f"no system of family {family!r}"
        elif not others:
            reason = "no other judge to compare with"
        elif not rest:
            reason = "every system is of the judge's family"
        if reason:
            rows.append({"judge": judge, "family": family, "reason": reason})
            continue
        # per query: the judge's mean over F systems minus the other judges' (and the same off F)
        wide = per_query.pivot_table(index=["query_id", "system"], columns="judge", values="ndcg")
        diff = (wide[judge] - wide[others].mean(axis=1)).unstack("system")
        raw_q = diff[own].mean(axis=1).to_numpy()
        strict_q = diff[rest].mean(axis=1).to_numpy()
        row = {"judge": judge, "family": family, "systems_of_family": len(own), "queries": len(raw_q)}
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
        rows.append(row)
    return pd.DataFrame(rows)
