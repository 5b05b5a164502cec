"""Calibration with a few human labels (the paper's open question, section 7).

Draw k human-labelled queries; on the other queries only the judge's scores are used. Each
system's mean nDCG@10 is then estimated by prediction-powered inference, PPI++ mean
estimation with the power-tuned lambda (Angelopoulos, Duchi & Zrnic 2023), computed by
``ppi_py`` (``ppi_mean_pointestimate`` and ``ppi_mean_ci``, given the lambda ppi_py's own
tuning finds, once per estimate: :func:`tuned_lambda`), the implementation by the method's
authors. It corrects the judge's bias with the k labelled
queries and keeps a valid 95% confidence interval:

    theta  = lambda * mean_U(f) + mean_L(y - lambda * f)
    lambda = cov_L(y, f) / ((1 + k / |U|) var_{L+U}(f)), clipped to [0, 1]

(f: the judge's per-query nDCG, y: the human one, L: the k labelled queries, U: the rest;
ppi_py estimates var(f) on the labelled and unlabelled queries pooled). Against it stand the
judge alone (mean of f over all queries) and the humans alone on the same k queries (mean of
y). Both intervals are of one family: ppi_py's CLT (z) intervals, ``ppi_mean_ci`` for PPI and
``classical_mean_ci`` for the humans alone. At k = 3-10 a z interval under-covers; the
coverage columns show by how much, for both, so neither looks narrower than it is.

The target is the mean over the N queries at hand (what labelling all of them would give),
of which k are drawn without replacement: a finite population. ppi_py's intervals are for
the mean of an infinite population, and are too wide for this target by a factor
1 / sqrt(1 - k/N) (1.37 at N = 43, k = 20, where the classical interval covers the N-query
mean about 98% of the time: a coverage column measured against it could not show
under-coverage). Both
intervals' half-widths are therefore multiplied by the finite-population correction
``sqrt(1 - k/N)`` (:func:`fpc`), about their centre (the point estimate). Why:

* humans alone: under sampling without replacement, var(mean_L(y)) = (1 - k/N) S^2 / k, with
  S^2 the variance of y over the N queries (Cochran 1977, Theorem 2.2): the classical
  variance S^2 / k times (1 - k/N);
* PPI, lambda held fixed: mean_U(f) = (N mean_N(f) - k mean_L(f)) / (N - k), so
  theta = mean_L(y - lambda' f) + lambda' mean_N(f) with lambda' = lambda N / (N - k): a
  difference estimator, unbiased for the N-query mean, with variance
  (1 - k/N) var_N(y - lambda' f) / k = (1 - k/N) V + lambda^2 S_f^2 / (N - k) - 2 lambda C / N,
  where V = var(y - lambda f) / k + lambda^2 S_f^2 / (N - k) is ppi_py's variance (its
  rectifier term, which dominates, and its imputed term) and C = cov(y, f). At the power-tuned
  lambda = C (N - k) / (N S_f^2) the last two terms sum to -lambda C / N <= 0 (lambda is 0
  when C <= 0), so (1 - k/N) V is the PPI variance or a little more: the corrected PPI
  interval is exact to first order or conservative, never narrower than the truth.

Reported per k over R seeded draws:

* Kendall's tau of each estimate's system ordering against the humans' on all queries (does
  the correction recover the order of oracles and LLM rankers?): the mean and the 10th, 50th
  and 90th percentiles over draws;
* coverage: the share of (draw, system) corrected intervals that contain the system's human
  mean over *all* N queries, the target a user of k labels wants to learn, and the corrected
  intervals' mean width; ``queries`` (N) and ``fpc`` (the factor) beside them.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..judges import HUMAN
from ..stats import kendall_tau
from ..stats.agreement import kendall_tau_each
from .registry import Context, Figure, Table, audit

QUANTILES = (10, 50, 90)  # percentiles of tau over draws


def fpc(k: int, population: int | None) -> float:
    """The finite-population correction sqrt(1 - k/N) of a mean over k of N units drawn without
    replacement (1 with no population: an infinite one)."""
    if population is None:
        return 1.0
    if not 0 < k <= population:
        raise ValueError(f"{k} labelled queries out of a population of {population}")
    return math.sqrt(1 - k / population)


def _narrow(centre, low, high, factor: float):
    """An interval's half-width times ``factor``, about ``centre``."""
    centre, low, high = (np.asarray(a, dtype=float) for a in (centre, low, high))
    return centre - factor * (centre - low), centre + factor * (high - centre)


def ppi_mean(
    y_labelled: np.ndarray,
    f_labelled: np.ndarray,
    f_unlabelled: np.ndarray,
    *,
    level: float = 0.95,
    population: int | None = None,
) -> tuple[float, float, float]:
    """PPI++ estimate of the mean of y and its CI (ppi_py, power-tuned lambda): (theta, low, high).

    A judge whose scores do not vary has no power to lend (lambda's denominator is 0); then
    lambda = 0, the humans' mean and interval, which is what PPI++ tends to as var(f) -> 0.
    ``population`` N: the target is the mean over N queries of which these are the labelled k,
    and the half-width is multiplied by :func:`fpc` (see the module docstring); None: ppi_py's
    interval as it is (an infinite population).
    """
    from ppi_py import ppi_mean_ci, ppi_mean_pointestimate

    y, f, u = (np.asarray(a, dtype=float) for a in (y_labelled, f_labelled, f_unlabelled))
    lam = tuned_lambda(y, f, u, "overall") if np.ptp(np.concatenate([f, u])) > 0 else 0.0
    theta = float(np.squeeze(ppi_mean_pointestimate(y, f, u, lam=lam)))
    low, high = ppi_mean_ci(y, f, u, alpha=1 - level, lam=lam)
    low, high = _narrow(theta, np.squeeze(low), np.squeeze(high), fpc(len(y), population))
    return theta, float(low), float(high)


def tuned_lambda(y: np.ndarray, f: np.ndarray, u: np.ndarray, mode: str = "element") -> np.ndarray | float:
    """PPI++'s power-tuned lambda as ppi_py tunes it when given ``lam=None`` (clipped to [0, 1];
    ``mode``: ``lam_optim_mode``, one lambda per column or one for all), tuned once per estimate.

    ``ppi_mean_pointestimate`` and ``ppi_mean_ci`` each tune it when left to themselves, from
    the same gradients (both centre them on the PPI estimate with lambda = 1), so passing this
    lambda to both gives their numbers to the bit (a test holds them equal) at half the work.
    ppi_py's own tuning function is called, not re-derived (it is private to ppi_py, whose
    version the lock file pins; the test breaks should a new version tune otherwise)."""
    from ppi_py import ppi_mean_pointestimate
    from ppi_py.ppi import _calc_lam_glm

    y, f, u = (np.asarray(a, dtype=float).reshape(len(a), -1) for a in (y, f, u))
    centre = ppi_mean_pointestimate(y, f, u, lam=1)
    return _calc_lam_glm(y - centre, f - centre, u - centre, np.eye(y.shape[1]), coord=None, clip=True, optim_mode=mode)


def human_mean(
    y_labelled: np.ndarray, *, level: float = 0.95, population: int | None = None
) -> tuple[float, float, float]:
    """The humans alone on the labelled queries: mean and ppi_py's classical (z) CI, its
    half-width multiplied by :func:`fpc` when the target is the mean over ``population`` queries."""
    from ppi_py import classical_mean_ci

    y = np.asarray(y_labelled, dtype=float)
    low, high = classical_mean_ci(y, alpha=1 - level)
    low, high = _narrow(y.mean(), np.squeeze(low), np.squeeze(high), fpc(len(y), population))
    return float(y.mean()), float(low), float(high)


def estimates(
    human: pd.DataFrame, judge: pd.DataFrame, labelled: np.ndarray, *, level: float = 0.95, finite: bool = True
) -> pd.DataFrame:
    """Per system: PPI-corrected and humans-only estimates with CIs, for one set of labelled queries.

    ``human`` and ``judge`` are aligned query x system tables; ``labelled`` a boolean mask
    over their rows. Columns: corrected, corrected_low, corrected_high, human_only,
    human_only_low, human_only_high. One ppi_py call covers every system, with lambda tuned
    per system (``lam_optim_mode="element"``: the same estimate as one call per system, as
    :func:`ppi_mean` makes; a test holds them equal). ``finite`` (default): the target is the
    mean over the table's N queries, and both intervals' half-widths are multiplied by
    :func:`fpc` (k labelled of N); otherwise ppi_py's intervals as they are.
    """
    found = _estimate_arrays(human.to_numpy(dtype=float), judge.to_numpy(dtype=float), labelled, level, finite)
    return pd.DataFrame(found, index=human.columns)


def _estimate_arrays(y: np.ndarray, f: np.ndarray, labelled: np.ndarray, level: float, finite: bool) -> dict:
    """:func:`estimates` on a query x system array each of human and judge scores: its columns
    as arrays (what :func:`calibration_curve` reads, draw after draw, without a table each)."""
    from ppi_py import ppi_mean_ci, ppi_mean_pointestimate

    labelled = np.asarray(labelled, dtype=bool)
    y_l, f_l, f_u = y[labelled], f[labelled], f[~labelled]
    factor = fpc(int(labelled.sum()), len(labelled) if finite else None)
    varying = np.ptp(f, axis=0) > 0
    theta, low, high = np.empty(y.shape[1]), np.empty(y.shape[1]), np.empty(y.shape[1])
    for columns, tune in ((varying, True), (~varying, False)):
        if columns.any():
            args = (y_l[:, columns], f_l[:, columns], f_u[:, columns])
            lam = tuned_lambda(*args) if tune else 0.0
            theta[columns] = np.ravel(ppi_mean_pointestimate(*args, lam=lam))
            lows, highs = ppi_mean_ci(*args, alpha=1 - level, lam=lam)
            low[columns], high[columns] = np.ravel(lows), np.ravel(highs)
    low, high = _narrow(theta, low, high, factor)
    human_low, human_high = _classical_intervals(y_l, level)
    human_low, human_high = _narrow(y_l.mean(axis=0), human_low, human_high, factor)
    return {
        "corrected": theta,
        "corrected_low": low,
        "corrected_high": high,
        "human_only": y_l.mean(axis=0),
        "human_only_low": human_low,
        "human_only_high": human_high,
    }


def _classical_intervals(y: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    """ppi_py's ``classical_mean_ci`` of every column of ``y`` (it takes one variable at a time:
    a 2-D array is pooled), at once: the same arithmetic on each column laid out contiguously,
    so the same bits as one call per column (a test holds them equal), one normal quantile."""
    columns = np.ascontiguousarray(np.asarray(y, dtype=float).T)
    mean, std_mean = columns.mean(axis=1), columns.std(axis=1) / np.sqrt(columns.shape[1])
    zcrit = _two_sided_z(level)
    return mean - zcrit * std_mean, mean + zcrit * std_mean


@functools.cache
def _two_sided_z(level: float) -> float:
    """The normal quantile of a two-sided ``level`` interval, as ppi_py takes it (``norm.ppf``
    costs a fifth of a millisecond a call; a calibration curve asks it for thousands of draws)."""
    from scipy.stats import norm

    return norm.ppf(1 - (1 - level) / 2.0)


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
    percentiles over draws), the widths and coverage of the all-query human mean of both
    intervals, finite-population corrected (k of N queries, :func:`fpc`), with ``queries`` (N)
    and ``fpc`` (the factor).

    ``human`` and ``judge`` are query x system tables of per-query nDCG@10 (same shape).
    """
    human, judge = human.sort_index(), judge.loc[human.index, human.columns].sort_index()
    queries = human.index.to_numpy()
    truth = human.mean()  # the target: each system's human mean over all queries
    y, f = human.to_numpy(dtype=float), judge.to_numpy(dtype=float)
    tau_judge = kendall_tau(truth.values, judge.mean()[truth.index].values)
    rng = np.random.default_rng(seed)
    rows = []
    for k in ks:
        if not 2 <= k < len(queries) - 1:
            continue
        taus = {"judge": [tau_judge] * draws}
        found_means = {"corrected": [], "human_only": []}  # each draw's estimates, tau taken of all at once
        widths = {"corrected": [], "human_only": []}
        covered = {"corrected": [], "human_only": []}
        for _ in range(draws):
            mask = np.zeros(len(queries), dtype=bool)
            mask[rng.choice(len(queries), size=k, replace=False)] = True
            found = _estimate_arrays(y, f, mask, level, True)  # systems in truth's order
            for name in widths:
                found_means[name].append(found[name])
                low, high = found[f"{name}_low"], found[f"{name}_high"]
                widths[name].extend(high - low)
                covered[name].extend((low <= truth.values) & (truth.values <= high))
        for name, means in found_means.items():
            taus[name] = list(kendall_tau_each(truth.values, np.array(means))) if means else []
        row = {"k": k, "draws": draws, "level": level, "queries": len(queries), "fpc": fpc(k, len(queries))}
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


# ----------------------------------------------------------------------------- the audit, declared

KS = (3, 5, 10, 20)
"""The default numbers of human-labelled queries (``audits.calibration.ks``)."""
DRAWS = 50
"""The default seeded draws of the labelled queries per k (``audits.calibration.draws``)."""


def _chart(curve: pd.DataFrame, png: str) -> None:
    from .figures import calibration_chart  # matplotlib: only where the figure is drawn

    calibration_chart(curve, png)


@audit(
    "calibration",
    tables=[
        Table(
            "calibration",
            "Calibration with k human-labelled queries: PPI++ (ppi_py) vs the judge alone and the humans alone; "
            "tau over draws (mean, 10th/50th/90th percentiles), 95% z intervals for both estimates and their "
            "coverage of each system's human mean over all queries",
            ["dataset", "judge", "k"],
            view=[
                "judge",
                "k",
                "draws",
                "tau_judge",
                "tau_corrected",
                "tau_human_only",
                "ci_width_corrected",
                "coverage_corrected",
                "ci_width_human_only",
                "coverage_human_only",
            ],
            empty="corrects the judges' scores of the systems with a few human-labelled queries",
            counts=["k", "draws"],
            report="Calibration with few labels",  # answers no question: a category of its own
        )
    ],
    figures=[
        Figure(
            "calibration", "calibration", _chart, caption="calibration", placeholder="no systems' scores to calibrate"
        )
    ],
    short="Calibration (PPI)",
    settings={
        "type": "object",
        "default": {},
        "additionalProperties": False,
        "description": "Calibration with a few human labels (docs/audits.md): each system's mean re-estimated "
        "from k human-labelled queries and the judge's scores of the rest (PPI++)",
        "properties": {
            "ks": {
                "type": "array",
                "items": {"type": "integer", "minimum": 2},
                "minItems": 1,
                "default": list(KS),
                "description": "the numbers k of human-labelled queries drawn; a k of the query count minus one "
                "or more is skipped (nothing would be left to correct)",
            },
            "draws": {
                "type": "integer",
                "minimum": 1,
                "default": DRAWS,
                "description": "seeded draws of the k labelled queries per k (seeded by evaluation.seed)",
            },
        },
    },
)
def audit_calibration(context: Context) -> dict[str, list]:
    """One dataset's ``calibration`` rows: every judge but the humans, its curve over k against the
    humans' per-query scores of the systems."""
    block = context.data.per_query
    wide = block.pivot_table(index="query_id", columns=["judge", "system"], values="ndcg")
    ks, draws = context.settings.get("ks", KS), context.settings.get("draws", DRAWS)
    found = []
    for judge in context.judges:
        curve = calibration_curve(wide[HUMAN], wide[judge], ks=ks, draws=draws, seed=context.seed).assign(judge=judge)
        found.append(curve[["judge", *(c for c in curve.columns if c != "judge")]])
    return {"calibration": found}
