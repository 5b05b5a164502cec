"""The one statistics engine every table and audit calls (docs/definitions.md).

* :mod:`.resample`: the bootstrap over queries (seeded, counting undefined draws);
* :mod:`.agreement`: kappa, Kendall's tau, RBO, with their intervals;
* :mod:`.leaderboard`: tau and the reversed pairs over the user's systems, with their nulls;
* :mod:`.paired`: paired tests with the query as the unit (sign-flip, clustered marginal
  homogeneity), the systems' paired t-tests and difference in differences;
* :mod:`.permutation`: permutation tests within blocks;
* :mod:`.proportions`: rates of clustered pairs;
* :mod:`.redundancy`: a panel's error correlation against the humans and its effective size;
* :mod:`.significance`: IR's randomization test, randomized Tukey HSD, discriminative power;
* :mod:`.multiplicity`: adjusted p-values and what chance alone flags;
* :mod:`.ranking`: judges ranked by a measure, neighbours compared on the same resamples.

No audit resamples on its own: a test reads the audit modules' source to hold that.
"""

from .agreement import (
    KAPPAS,
    RANK_STATISTICS,
    kappa_from_counts,
    kappa_intervals,
    kappas,
    kendall_tau,
    kendall_tau_rows,
    majority,
    max_drop,
    ordering,
    per_query_confusion,
    rbo,
    rbo_floor,
    rbo_scores,
    reference_draws,
    system_agreement_intervals,
    tau_ap,
    top_k,
)
from .leaderboard import (
    MIN_USER_SYSTEMS,
    NULL_DRAWS,
    USER_COLUMNS,
    reversal_counts,
    reversal_null,
    tau_null,
    user_agreement,
    user_systems,
)
from .multiplicity import CORRECTIONS, adjust, expected_false_flags
from .paired import (
    SHIFT_COLUMNS,
    clustered_homogeneity,
    compare_significance,
    difference_in_differences,
    direction,
    disagreeing,
    paired_shift,
    paired_tests,
    query_mean_test,
    sign_flip_p,
    sign_test_p,
    stuart_maxwell,
)
from .permutation import block_permutations, permutation_p
from .proportions import clustered_rate, wilson
from .ranking import RANK_COLUMNS, difference_interval, rank_judges, swap_p
from .redundancy import ErrorCorrelations, error_correlations, kish_n_eff
from .resample import (
    Interval,
    cluster_sums,
    clustered_mean,
    column_mean_intervals,
    interval,
    mean_interval,
    percentile_interval,
    query_picks,
    query_resamples,
    ratio_interval,
)
from .significance import TESTS, asl_curve, discriminative_power, randomization_tests, significance_tests, tukey_tests

__all__ = [
    "CORRECTIONS",
    "KAPPAS",
    "RANK_STATISTICS",
    "SHIFT_COLUMNS",
    "TESTS",
    "asl_curve",
    "discriminative_power",
    "max_drop",
    "randomization_tests",
    "significance_tests",
    "tau_ap",
    "top_k",
    "tukey_tests",
    "Interval",
    "adjust",
    "block_permutations",
    "permutation_p",
    "cluster_sums",
    "clustered_homogeneity",
    "clustered_mean",
    "column_mean_intervals",
    "clustered_rate",
    "compare_significance",
    "difference_in_differences",
    "disagreeing",
    "direction",
    "expected_false_flags",
    "interval",
    "kappa_from_counts",
    "kappa_intervals",
    "kappas",
    "kendall_tau",
    "kendall_tau_rows",
    "majority",
    "mean_interval",
    "ordering",
    "paired_shift",
    "paired_tests",
    "per_query_confusion",
    "percentile_interval",
    "query_mean_test",
    "query_picks",
    "query_resamples",
    "ratio_interval",
    "rbo",
    "rbo_floor",
    "rbo_scores",
    "reference_draws",
    "sign_flip_p",
    "sign_test_p",
    "stuart_maxwell",
    "system_agreement_intervals",
    "wilson",
    "MIN_USER_SYSTEMS",
    "NULL_DRAWS",
    "USER_COLUMNS",
    "reversal_counts",
    "reversal_null",
    "tau_null",
    "user_agreement",
    "user_systems",
    "ErrorCorrelations",
    "error_correlations",
    "kish_n_eff",
    "RANK_COLUMNS",
    "difference_interval",
    "rank_judges",
    "swap_p",
]
