"""The swap test: one definition for PRP rankers, pairwise judges and result-list judges.

A pair (x, y) is asked twice: x shown first (answer ``ab``) and y shown first (answer
``ba``); an answer is ``"A"`` (the first shown), ``"B"`` or None (unparsed). A win counts
only if it survives the swap (x wins when ``ab == "A"`` and ``ba == "B"``); any other pair
is a tie, marked for review (a practitioners' checklist of LLM-judge
biases, 2025; a RAG retrieval evaluation, 2026). From a set of pairs:

* ``position_consistency``: the share of pairs answered in both orders whose verdict survives
  (in a RAG retrieval evaluation (2026) a swap test flipped about 81% of a judge's verdicts);
* ``first_position_win_rate``: the share of answered prompts won by the first-shown item
  (0.5 for a judge without position bias);
* ``tie_rate``: the share of all pairs with no surviving verdict (unparsed ones included);
* against a reference preference (human grades, or human nDCG@10 for lists):
  ``accuracy`` over surviving verdicts, and ``agreement_all`` over all pairs (ties count as
  misses);
* intervals and the position test (:func:`swap_intervals`), the query as the unit (the pairs of
  one query share its topic and its prompt, so they are not independent): the tie rate (over
  pairs) and the first-position win rate (over answered prompts) with cluster-bootstrap 95%
  intervals over queries (:func:`voirdire.stats.clustered_rate`; a rate of 0 or 1 gets the
  exact Clopper-Pearson bound over prompts on its open side), and ``position_p``: the
  two-sided sign-flip test over queries (:func:`voirdire.stats.sign_flip_p`) of each query's
  ``order_dependent_first - order_dependent_second`` (pairs that picked the first shown both
  times, minus pairs that picked the second both times). ``position_p_pairs`` keeps the exact
  binomial test of those pairs, every pair counted as independent (descriptive; scipy
  ``binomtest``), and ``position_note`` says why the interval and the test disagree, when they do.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

# A pair's outcome, counts and rates are defined in the leaf module voirdire.swaps, which the PRP
# rankers import too (without importing the probes); the probes read them here by the same names
from ..swaps import FIRST, SECOND, TIE, swap_outcome, swap_summary
from ..swaps import swap_counts as swap_counts
from ..swaps import swap_rates as swap_rates

ALPHA = 0.05
"""The level ``position_note`` reads ``position_p`` at (the verdict's alpha)."""


def _attainable(queries: int) -> float:
    """The smallest two-sided p of the sign-flip test over ``queries`` nonzero per-query totals:
    both all-same-sign patterns of 2^queries (1 with none)."""
    return min(1.0, 2.0 / 2**queries) if queries else 1.0


def position_note(
    low: float,
    high: float,
    p: float,
    *,
    alpha: float = ALPHA,
    voting: int,
    order_dependent: int,
    largest: int,
    exact: bool,
) -> str:
    """'' when the first-position win rate's interval (clear of 0.5 or not) and the position
    test (``p`` < ``alpha`` or not) agree; otherwise one sentence on why they part ways.
    ``voting``: the queries whose order-dependent pairs do not cancel (the only ones the
    sign-flip test can weigh); ``order_dependent``: the pairs that picked one position both
    times; ``largest``: the most of them in one query; ``exact``: the interval is the exact
    bound over prompts of a rate of 0 or 1, not a bootstrap over queries."""
    if any(math.isnan(v) for v in (low, high, p)):
        return ""
    clear, significant = low > 0.5 or high < 0.5, p < alpha
    if clear == significant:
        return ""
    if significant:
        return (
            "the test reads the order-dependent pairs alone; the interval covers every answered prompt, where a "
            "surviving verdict counts one win for each position"
        )
    if _attainable(voting) >= alpha:
        return (
            f"few queries: the sign-flip test over {voting} quer{'y' if voting == 1 else 'ies'} cannot reach "
            f"p < {alpha:g} (its smallest p is {_attainable(voting):.3g})"
        )
    if order_dependent and 2 * largest > order_dependent:
        return (
            f"one query holds {largest} of the {order_dependent} order-dependent pairs: the interval weighs its "
            "prompts, the sign-flip test gives it one query's say"
        )
    if exact:
        return (
            "every answered prompt went to one position: the interval is exact over prompts, not queries; the "
            "sign-flip test over queries decides"
        )
    return (
        f"the percentile bootstrap over queries is narrower than the sign-flip test over {voting} queries allows; "
        "the test decides"
    )


def swap_intervals(
    answers: Iterable[tuple[str | None, str | None]],
    confidence: float = 0.95,
    *,
    queries: Sequence | None = None,
    alpha: float = ALPHA,
    resamples: int | None = None,
    seed: int | None = None,
) -> dict[str, float | int | str]:
    """Intervals and the position test of a set of pairs, each given as its two answers
    ``(ab, ba)``, clustered by ``queries`` (the query of each pair; None: every pair is its own
    query; ``resamples`` and ``seed``: the engine's, 1,000 and 42, when None). Keys are
    ``INTERVAL_COLUMNS``:

    * ``tie_rate_ci_low/high`` and ``first_position_win_rate_ci_low/high``: cluster-bootstrap
      intervals over queries (``confidence``; the queries resampled, each rate recomputed over
      the drawn queries' pairs or answered prompts; :func:`voirdire.stats.clustered_rate`, which
      gives a rate of 0 or 1 the exact Clopper-Pearson bound over prompts instead);
    * ``order_dependent_first`` / ``order_dependent_second``: pairs that picked the first (second)
      shown in both orders;
    * ``position_p``: the two-sided sign-flip test over queries of each query's
      ``first - second`` count of those pairs (:func:`voirdire.stats.sign_flip_p`; 1 with no
      such pair). The per-query *difference of counts*, not a share: its sum over queries is the
      pooled ``first - second`` that the binomial tests, so the estimand stays the pooled share
      and only the unit changes to the query; a query's weight is its number of order-dependent
      pairs (a share per query would weigh a query with one such pair like one with twenty).
      Under no position preference the first and the second position are equally likely to win
      both orders of a pair (a judge whose answers ignore the order cannot do either), so each
      query's count is symmetric about 0 however its pairs depend on one another; the smallest
      p over n queries with a nonzero count is 2 / 2^n;
    * ``position_p_pairs``: the exact binomial test of ``first`` against ``second``, null 1/2,
      every pair independent (descriptive);
    * ``queries``: the queries with an order-dependent pair (first or second both times);
    * ``position_note``: :func:`position_note` ('' when the interval and ``position_p`` agree).
    """
    from scipy.stats import binomtest

    from ..stats import cluster_sums, clustered_rate, sign_flip_p
    from ..stats.resample import RESAMPLES, SEED

    resamples, seed = RESAMPLES if resamples is None else resamples, SEED if seed is None else seed
    pairs = list(answers)
    clusters = list(range(len(pairs))) if queries is None else list(queries)
    if len(clusters) != len(pairs):
        raise ValueError("queries must give the query of every pair")
    level = dict(level=confidence, resamples=resamples, seed=seed)
    tie_rate, tie = clustered_rate([swap_outcome(ab, ba) == TIE for ab, ba in pairs], clusters, **level)
    prompts = [(a == "A", q) for (ab, ba), q in zip(pairs, clusters) for a in (ab, ba) if a is not None]
    win_rate, win = clustered_rate([hit for hit, _ in prompts], [q for _, q in prompts], **level)

    signed = [1.0 if (ab, ba) == ("A", "A") else -1.0 if (ab, ba) == ("B", "B") else 0.0 for ab, ba in pairs]
    first, second = signed.count(1.0), signed.count(-1.0)
    totals, _ = cluster_sums(signed, clusters)
    held, _ = cluster_sums(np.abs(signed), clusters)
    totals = totals[held > 0]
    p = sign_flip_p(totals, seed=seed) if len(totals) else 1.0
    row = {
        "tie_rate_ci_low": tie.low,
        "tie_rate_ci_high": tie.high,
        "first_position_win_rate_ci_low": win.low,
        "first_position_win_rate_ci_high": win.high,
        "order_dependent_first": first,
        "order_dependent_second": second,
        "position_p": p,
        "position_p_pairs": float(binomtest(first, first + second, 0.5).pvalue) if first + second else 1.0,
        "queries": int(len(totals)),
    }
    exact = not (0 < win_rate < 1)
    row["position_note"] = position_note(
        win.low,
        win.high,
        p,
        alpha=alpha,
        voting=int(np.sum(totals != 0)),
        order_dependent=first + second,
        largest=int(held.max()) if len(held) else 0,
        exact=exact,
    )
    return row


INTERVAL_COLUMNS = [
    "tie_rate_ci_low",
    "tie_rate_ci_high",
    "first_position_win_rate_ci_low",
    "first_position_win_rate_ci_high",
    "order_dependent_first",
    "order_dependent_second",
    "position_p",
    "position_p_pairs",
    "queries",
    "position_note",
]
"""The columns :func:`swap_intervals` adds to :func:`swap_table`."""


def swap_table(
    verdicts: pd.DataFrame, keys: Sequence[str] = ("dataset", "judge"), *, alpha: float = ALPHA
) -> pd.DataFrame:
    """Swap figures per group of ``verdicts`` (one row per pair: ``ab``, ``ba``, ``query_id``
    (the unit of the intervals and the position test; without it every pair is its own query),
    and ``reference``: which item the humans prefer, ``"first"``/``"second"``, or None when
    they do not). ``alpha``: the level ``position_note`` reads ``position_p`` at."""
    columns = [
        *keys,
        "pairs",
        "prompts",
        "answered",
        "unparsed",
        "answered_both",
        "surviving",
        "order_dependent",
        "first_position_wins",
        "position_consistency",
        "first_position_win_rate",
        "tie_rate",
        "accuracy",
        "agreement_all",
        *INTERVAL_COLUMNS,
    ]
    rows = []
    for key, group in verdicts.groupby(list(keys), sort=True):
        answers = list(
            zip(group["ab"].where(group["ab"].notna(), None), group["ba"].where(group["ba"].notna(), None), strict=True)
        )
        outcome = pd.Series([swap_outcome(ab, ba) for ab, ba in answers], index=group.index)
        reference = group["reference"]
        scored = reference.notna()
        survived = scored & (outcome != TIE)
        right = (outcome == reference) & survived
        queries = list(group["query_id"]) if "query_id" in group else None
        rows.append(
            {
                **dict(zip(keys, key if isinstance(key, tuple) else (key,), strict=True)),
                **swap_summary(answers),
                "accuracy": right.sum() / survived.sum() if survived.any() else math.nan,
                "agreement_all": right.sum() / scored.sum() if scored.any() else math.nan,
                **swap_intervals(answers, queries=queries, alpha=alpha),
            }
        )
    return pd.DataFrame(rows, columns=columns)


def preference(x: float, y: float) -> str | None:
    """Which of two reference scores is higher: ``"first"``, ``"second"``, or None when equal."""
    if x > y:
        return FIRST
    if y > x:
        return SECOND
    return None
