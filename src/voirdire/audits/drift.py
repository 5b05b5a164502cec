"""Drift (seed 001): is a judge the same judge when asked again?

Two or more label sets of one judge -- re-runs (a recorded judge's ``reruns:``), or the
samples of a live judge with ``samples: k`` (temperature > 0 on a hosted API is not
deterministic either: FastChat#3018) -- are compared with the first one: the per-pair flip
rate, Cohen's kappa between the runs, and Kendall's tau between the system orderings they
give. With three runs or more, a control chart: each run's mean grade against limits taken
from a bootstrap of the first run's mean grade (99.7%, the Shewhart 3-sigma width).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd
from scipy import stats

from ..judges import Scale
from ..stats import kappas, kendall_tau


def label_sets_from_answers(answers: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """A live judge's label sets from its raw answers (the judging job's parquet): one per
    sample when it asked each pair several times, else one per model version the provider
    reported (a model silently updated between runs); parsed answers only."""
    ok = answers[answers["status"] == "ok"].rename(columns={"label": "relevance"})
    by = "sample" if ok["sample"].nunique() >= 2 else "model_version"
    return {
        f"{by}={key}": block[["query_id", "doc_id", "relevance"]].astype({"relevance": int}).reset_index(drop=True)
        for key, block in ok.groupby(by, sort=True)
    }


def drift(
    label_sets: Mapping[str, pd.DataFrame], scale: Scale, system_means: Mapping[str, pd.Series] | None = None
) -> pd.DataFrame:
    """One row per later run against the first: flips on the pairs both labelled, kappa, tau."""
    names = list(label_sets)
    if len(names) < 2:
        return pd.DataFrame()
    first = label_sets[names[0]]
    rows = []
    for name in names[1:]:
        both = first.merge(label_sets[name], on=["query_id", "doc_id"], suffixes=("_a", "_b"))
        flips = int((both["relevance_a"] != both["relevance_b"]).sum())
        row = {
            "run": name, "against": names[0], "pairs": len(both), "flips": flips,
            "flip_rate": flips / len(both) if len(both) else math.nan,
        }  # fmt: skip
        row.update(kappas(both["relevance_a"], both["relevance_b"], scale, scale))
        if system_means is not None:
            a, b = system_means[names[0]], system_means[name]
            row["tau_systems"] = kendall_tau(a.values, b[a.index].values)
        rows.append(row)
    return pd.DataFrame(rows)


def control_chart(
    label_sets: Mapping[str, pd.DataFrame], *, resamples: int = 1000, seed: int = 42, level: float = 0.997
) -> pd.DataFrame:
    """Mean grade per run, with control limits from the first run's bootstrap (3+ runs only)."""
    names = list(label_sets)
    if len(names) < 3:
        return pd.DataFrame()
    grades = label_sets[names[0]]["relevance"].to_numpy(dtype=float)
    if np.ptp(grades) > 0:
        ci = stats.bootstrap((grades,), np.mean, n_resamples=resamples, confidence_level=level,
                             random_state=np.random.default_rng(seed), method="percentile").confidence_interval  # fmt: skip
        low, high = float(ci.low), float(ci.high)
    else:
        low = high = float(grades.mean())
    rows = []
    for name in names:
        mean = float(label_sets[name]["relevance"].mean())
        rows.append({"run": name, "mean_grade": mean, "lower_limit": low, "upper_limit": high,
                     "out_of_control": bool(mean < low or mean > high)})  # fmt: skip
    return pd.DataFrame(rows)
