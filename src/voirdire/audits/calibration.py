"""Calibration with a few human labels (the paper's open question, section 7).

Draw k human-labelled queries; on the other queries only the judge's scores are used. Each
system's mean nDCG@10 is then estimated by prediction-powered inference, PPI++ mean
estimation with the power-tuned lambda (Angelopoulos, Duchi & Zrnic 2023), computed by
``ppi_py`` (``ppi_mean_pointestimate`` and ``ppi_mean_ci`` with ``lam=None``), the
implementation by the method's authors. It corrects the judge's bias with the k labelled
queries and keeps a valid 95% confidence interval:

    theta  = lambda * mean_U(f) + mean_L(y - lambda * f)
    lambda = cov_L(y, f) / ((1 + k / |U|) var_{L+U}(f)), clipped to [0, 1]

(f: the judge's per-query nDCG, y: the human one, L: the k labelled queries, U: the rest;
ppi_py estimates var(f) on the labelled and unlabelled queries pooled). Against it stand the
judge alone (mean of f over all queries) and the humans alone on the same k queries (mean of
y). Both intervals are of one family: ppi_py's CLT (z) intervals, ``ppi_mean_ci`` for PPI and
``classical_mean_ci`` for the humans alone. At k = 3-10 a z interval under-covers; the
coverage columns show by how much, for both, so neither looks narrower than it is.

Reported per k over R seeded draws:

* Kendall's tau of each estimate's system ordering against the humans' on all queries (does
  the correction recover the order of oracles and LLM rankers?): the mean and the 10th, 50th
  and 90th percentiles over draws;
* coverage: the share of (draw, system) intervals that contain the system's human mean over
  *all* queries, the target a user of k labels wants to learn, and the intervals' mean width.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
from ppi_py import classical_mean_ci, ppi_mean_ci, ppi_mean_pointestimate

from ..stats import kendall_tau

QUANTILES = (10, 50, 90)  # percentiles of tau over draws


def ppi_mean(
    y_labelled: np.ndarray, f_labelled: np.ndarray, f_unlabelled: np.ndarray, *, level: float = 0.95
) -> tuple[float, float, float]:
    """PPI++ estimate of the mean of y and its CI (ppi_py, power-tuned lambda): (theta, low, high).

    A judge whose scores do not vary has no power to lend (lambda's denominator is 0); then
    lambda = 0, the humans' mean and interval, which is what PPI++ tends to as var(f) -> 0.
    """
    y, f, u = (np.asarray(a, dtype=float) for a in (y_labelled, f_labelled, f_unlabelled))
    lam = None if np.ptp(np.concatenate([f, u])) > 0 else 0.0
    theta = float(np.squeeze(ppi_mean_pointestimate(y, f, u, lam=lam)))
    low, high = ppi_mean_ci(y, f, u, alpha=1 - level, lam=lam)
    return theta, float(np.squeeze(low)), float(np.squeeze(high))


def human_mean(y_labelled: np.ndarray, *, level: float = 0.95) -> tuple[float, float, float]:
    """The humans alone on the labelled queries: mean and ppi_py's classical (z) CI."""
    y = np.asarray(y_labelled, dtype=float)
    low, high = classical_mean_ci(y, alpha=1 - level)
    return float(y.mean()), float(np.squeeze(low)), float(np.squeeze(high))


def estimates(human: pd.DataFrame, judge: pd.DataFrame, labelled: np.ndarray, *, level: float = 0.95) -> pd.DataFrame:
    """Per system: PPI-corrected and humans-only estimates with CIs, for one set of labelled queries.

    ``human`` and ``judge`` are aligned query x system tables; ``labelled`` a boolean mask
    over their rows. Columns: corrected, corrected_low, corrected_high, human_only,
    human_only_low, human_only_high. One ppi_py call covers every system, with lambda tuned
    per system (``lam_optim_mode="element"``: the same estimate as one call per system, as
    :func:`ppi_mean` makes; a test holds them equal).
    """
    y, f = human.to_numpy(dtype=float), judge.to_numpy(dtype=float)
    y_l, f_l, f_u = y[labelled], f[labelled], f[~labelled]
    varying = np.ptp(f, axis=0) > 0
    theta, low, high = np.empty(y.shape[1]), np.empty(y.shape[1]), np.empty(y.shape[1])
    for columns, lam, mode in ((varying, None, "element"), (~varying, 0.0, "overall")):
        if columns.any():
            args = (y_l[:, columns], f_l[:, columns], f_u[:, columns])
            theta[columns] = np.ravel(ppi_mean_pointestimate(*args, lam=lam, lam_optim_mode=mode))
            lows, highs = ppi_mean_ci(*args, alpha=1 - level, lam=lam, lam_optim_mode=mode)
            low[columns], high[columns] = np.ravel(lows), np.ravel(highs)
    # ppi_py's classical interval takes one variable at a time (a 2-D array is pooled)
    human_low, human_high = np.array([np.ravel(classical_mean_ci(column, alpha=1 - level)) for column in y_l.T]).T
    return pd.DataFrame(
        {"corrected": theta, "corrected_low": low, "corrected_high": high, "human_only": y_l.mean(axis=0),
         "human_only_low": np.ravel(human_low), "human_only_high": np.ravel(human_high)},
        index=human.columns,
    )  # fmt: skip


def calibration_curve(
    human: pd.DataFrame,
    judge: pd.DataFrame,
    ks: Sequence[int] = (3, 5, 10, 20),
    draws: int = 50,
    seed: int = 42,
    *,
    level: float = 0.95,
) -> pd.DataFrame:
    """One row per k: tau of judge-only, PPI-corrected and human-only orderings (mean and
    percentiles over draws), CI widths and coverage of the all-query human mean.

    ``human`` and ``judge`` are query x system tables of per-query nDCG@10 (same shape).
    """
    human, judge = human.sort_index(), judge.loc[human.index, human.columns].sort_index()
    queries = human.index.to_numpy()
    truth = human.mean()  # the target: each system's human mean over all queries
    tau_judge = kendall_tau(truth.values, judge.mean()[truth.index].values)
    rng = np.random.default_rng(seed)
    rows = []
    for k in ks:
        if not 2 <= k < len(queries) - 1:
            continue
        taus = {"judge": [], "corrected": [], "human_only": []}
        widths = {"corrected": [], "human_only": []}
        covered = {"corrected": [], "human_only": []}
        for _ in range(draws):
            mask = np.zeros(len(queries), dtype=bool)
            mask[rng.choice(len(queries), size=k, replace=False)] = True
            found = estimates(human, judge, mask, level=level).loc[truth.index]
            taus["judge"].append(tau_judge)
            for name in widths:
                taus[name].append(kendall_tau(truth.values, found[name].values))
                low, high = found[f"{name}_low"].to_numpy(), found[f"{name}_high"].to_numpy()
                widths[name].extend(high - low)
                covered[name].extend((low <= truth.values) & (truth.values <= high))
        row = {"k": k, "draws": draws, "level": level}
        for name, values in taus.items():  # tau is undefined (NaN) for an estimate that ties every system
            defined = np.array([v for v in values if not math.isnan(v)])
            row[f"tau_{name}"] = float(defined.mean()) if len(defined) else math.nan
            for q in QUANTILES:
                row[f"tau_{name}_p{q}"] = float(np.percentile(defined, q)) if len(defined) else math.nan
        for name in widths:
            row[f"ci_width_{name}"] = float(np.mean(widths[name]))
            row[f"coverage_{name}"] = float(np.mean(covered[name]))
        rows.append(row)
    return pd.DataFrame(rows)
