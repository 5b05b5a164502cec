"""Many tests at once: adjusted p-values and what chance alone would flag."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

CORRECTIONS = {"none": None, "holm": "holm", "bh": "fdr_bh"}


def adjust(p_values: Sequence[float], correction: str = "none") -> np.ndarray:
    """p-values adjusted for many tests within one family (statsmodels ``multipletests``):
    ``none`` (the paper's uncorrected tests), ``holm`` (family-wise error) or ``bh``
    (Benjamini-Hochberg false discovery rate). NaN p-values stay NaN and are not counted."""
    p = np.asarray(p_values, dtype=float)
    method = CORRECTIONS[correction]
    if method is None or len(p) == 0:
        return p
    from statsmodels.stats.multitest import multipletests

    out = np.full(len(p), np.nan)
    defined = ~np.isnan(p)
    if defined.any():
        out[defined] = multipletests(p[defined], method=method)[1]
    return out


def expected_false_flags(
    tests: int, alpha: float, correction: str = "none", discoveries: int = 0, families: int = 1
) -> float:
    """How many flags chance alone would give, at most, when every null holds:

    * ``none``: alpha x tests (each test errs with probability alpha);
    * ``holm``: each of ``families`` families errs at all with probability at most alpha, so
      the expected number of families with a false flag is at most alpha x families;
    * ``bh``: the false discoveries are at most alpha x ``discoveries`` in expectation (the
      false discovery rate applies to what was declared significant).
    """
    if correction == "holm":
        return alpha * families
    if correction == "bh":
        return alpha * discoveries
    return alpha * tests
