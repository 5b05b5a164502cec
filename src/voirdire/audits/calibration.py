"""Calibration with a few human labels (the paper's open question, section 7).

Draw k human-labelled queries; on the other queries only the judge's scores are used. Each
system's mean nDCG@10 is then estimated by prediction-powered inference (PPI++ mean
estimation, Angelopoulos et al. 2023; power-tuned lambda), which corrects the judge's bias
with the k human-labelled queries and keeps a valid 95% confidence interval:

    theta = lambda * mean_U(f) + mean_L(y - lambda * f)
    var   = lambda^2 var_U(f) / |U| + var_L(y - lambda * f) / k
    lambda = cov_L(y, f) / ((1 + k / |U|) var_L(f)), clipped to [0, 1]

(f: the judge's per-query nDCG, y: the human one, L: the k labelled queries, U: the rest).
Against it stand the judge alone (mean of f) and the humans alone on the same k queries
(mean of y, t interval). Reported per k over R seeded draws: Kendall's tau of each estimate's
system ordering against the humans' on all queries (does the correction recover the order of
oracles and LLM rankers?), the CI widths, and how often the CIs cover the human mean.
(``ppi_py`` implements the same estimator; it is not used here to keep the dependencies of
the science core to numpy and scipy.)
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats

from ..stats import kendall_tau

Z95 = float(stats.norm.ppf(0.975))


def ppi_mean(y_labelled: np.ndarray, f_labelled: np.ndarray, f_unlabelled: np.ndarray) -> tuple[float, float]:
    """PPI++ estimate of the mean of y and the half-width of its 95% CI."""
    k, n = len(y_labelled), len(f_unlabelled)
    var_f = float(np.var(f_labelled, ddof=1)) if k > 1 else 0.0
    if var_f > 0:
        cov = float(np.cov(y_labelled, f_labelled, ddof=1)[0, 1])
        lam = min(1.0, max(0.0, cov / ((1 + k / n) * var_f)))
    else:
        lam = 0.0
    residual = y_labelled - lam * f_labelled
    theta = lam * float(np.mean(f_unlabelled)) + float(np.mean(residual))
    variance = lam**2 * float(np.var(f_unlabelled, ddof=1)) / n + float(np.var(residual, ddof=1)) / k
    return theta, Z95 * math.sqrt(max(variance, 0.0))


def calibration_curve(
    human: pd.DataFrame, judge: pd.DataFrame, ks: Sequence[int] = (3, 5, 10, 20), draws: int = 50, seed: int = 42
) -> pd.DataFrame:
    """One row per k: tau of judge-only, PPI-corrected and human-only orderings, CI widths, coverage.

    ``human`` and ``judge`` are query x system tables of per-query nDCG@10 (same shape).
    """
    human, judge = human.sort_index(), judge.loc[human.index, human.columns].sort_index()
    queries = human.index.to_numpy()
    truth = human.mean()
    rng = np.random.default_rng(seed)
    rows = []
    for k in ks:
        if not 2 <= k < len(queries) - 1:
            continue
        taus = {"judge": [], "corrected": [], "human_only": []}
        widths = {"corrected": [], "human_only": []}
        covered = {"corrected": [], "human_only": []}
        for _ in range(draws):
            labelled = rng.choice(len(queries), size=k, replace=False)
            mask = np.zeros(len(queries), dtype=bool)
            mask[labelled] = True
            corrected, human_only = {}, {}
            for system in human.columns:
                y, f = human[system].to_numpy(), judge[system].to_numpy()
                theta, half = ppi_mean(y[mask], f[mask], f[~mask])
                corrected[system] = theta
                mean_y = float(np.mean(y[mask]))
                half_y = float(stats.t.ppf(0.975, k - 1) * np.std(y[mask], ddof=1) / math.sqrt(k))
                human_only[system] = mean_y
                widths["corrected"].append(2 * half)
                widths["human_only"].append(2 * half_y)
                covered["corrected"].append(abs(theta - truth[system]) <= half)
                covered["human_only"].append(abs(mean_y - truth[system]) <= half_y)
            taus["judge"].append(kendall_tau(truth.values, judge.mean().values))
            taus["corrected"].append(kendall_tau(truth.values, pd.Series(corrected)[truth.index].values))
            taus["human_only"].append(kendall_tau(truth.values, pd.Series(human_only)[truth.index].values))
        row = {"k": k, "draws": draws}
        for name, values in taus.items():  # tau is undefined (NaN) for a judge that ties every system
            defined = [v for v in values if not math.isnan(v)]
            row[f"tau_{name}"] = float(np.mean(defined)) if defined else math.nan
        for name in widths:
            row[f"ci_width_{name}"] = float(np.mean(widths[name]))
            row[f"coverage_{name}"] = float(np.mean(covered[name]))
        rows.append(row)
    return pd.DataFrame(rows)
