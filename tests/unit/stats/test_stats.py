import math

import pandas as pd
import pytest
from scipy import stats as sps

from voirdire.judges import Scale
from voirdire.stats import compare_significance, kappas, kendall_tau, ordering, paired_tests, rbo

GRADED = Scale(0, 3, 2)
BINARY = Scale(0, 1, 1)


def test_kappas_hand_computed():
    human = pd.Series([3, 2, 1, 0])
    judge = pd.Series([3, 1, 1, 0])
    k = kappas(human, judge, GRADED, GRADED)
    # binary: human 1100, judge 1000 -> p_o 3/4, p_e 1/2 -> 0.5
    assert k["kappa_binary"] == pytest.approx(0.5)
    # graded: p_o 3/4, p_e 1/4 -> 2/3
    assert k["kappa_graded"] == pytest.approx(2 / 3)
    # quadratic: observed disagreement 1/36, expected 10/36 -> 0.9
    assert k["kappa_quadratic"] == pytest.approx(0.9)


def test_graded_kappa_undefined_across_scales_binary_uses_each_threshold():
    human = pd.Series([3, 2, 1, 0])
    judge = pd.Series([1, 1, 0, 0])  # a binary judge, relevant >= 1
    k = kappas(human, judge, GRADED, BINARY)
    assert k["kappa_binary"] == pytest.approx(1.0)
    assert math.isnan(k["kappa_graded"]) and math.isnan(k["kappa_quadratic"])


def test_kendall_tau_and_ordering():
    assert kendall_tau([3, 2, 1], [3, 2, 1]) == pytest.approx(1.0)
    assert kendall_tau([3, 2, 1], [1, 2, 3]) == pytest.approx(-1.0)
    # one discordant pair of three: (2 - 1) / 3
    assert kendall_tau([3, 2, 1], [3, 1, 2]) == pytest.approx(1 / 3)
    assert ordering(pd.Series({"b": 0.5, "a": 0.5, "c": 0.9})) == ["c", "a", "b"]


def test_rbo_hand_computed():
    assert rbo(list("abcd"), list("abcd")) == pytest.approx(1.0)
    # X1 = 0, X2 = 2: 1 * 0.25 + (0.5/0.5) * (0 + 2/2 * 0.25) = 0.5
    assert rbo(["x", "y"], ["y", "x"], p=0.5) == pytest.approx(0.5)
    # X1=0, X2=0, X3=1... a=[a,b,c], b=[c,b,a], p=0.5: X=[0,1,3]
    # total = 0 + 1/2*0.25 + 3/3*0.125 = 0.25 ; rbo = 1*0.125 + 1*0.25
    assert rbo(list("abc"), list("cba"), p=0.5) == pytest.approx(0.375)
    with pytest.raises(ValueError):
        rbo(["a"], ["b"])


def test_paired_tests_and_significance_classes():
    wide = pd.DataFrame({"A": [1.0, 2.0, 3.0], "B": [0.0, 0.0, 0.0], "C": [1.0, 2.0, 3.0]})
    tests = paired_tests(wide).set_index(["system_a", "system_b"])
    # diffs 1,2,3: mean 2, sd 1 -> t = 2 / (1 / sqrt 3)
    assert tests.loc[("A", "B"), "t"] == pytest.approx(2 * math.sqrt(3))
    assert tests.loc[("A", "B"), "p"] == pytest.approx(2 * sps.t.sf(2 * math.sqrt(3), df=2))
    assert tests.loc[("A", "C"), "p"] == 1.0 and tests.loc[("A", "C"), "mean_diff"] == 0.0
    human = pd.DataFrame(
        {
            "system_a": ["A", "A", "B"],
            "system_b": ["B", "C", "C"],
            "mean_diff": [0.2, 0.1, -0.1],
            "t": [0, 0, 0],
            "p": [0.01, 0.2, 0.01],
        }
    )
    judge = human.assign(mean_diff=[0.2, -0.1, 0.1], p=[0.2, 0.01, 0.01])
    result = compare_significance(human, judge).set_index(["system_a", "system_b"])
    assert result["missed"].tolist() == [True, False, False]
    assert result["spurious"].tolist() == [False, True, False]
    assert result["flipped"].tolist() == [False, True, True]
    assert result["flipped_significant"].tolist() == [False, False, True]


def test_vectorised_paired_tests_equal_scipy_pair_by_pair():
    import itertools

    import numpy as np
    from scipy import stats

    rng = np.random.default_rng(5)
    wide = pd.DataFrame(rng.random((20, 6)), columns=list("abcdef"))
    wide["f"] = wide["a"]  # identical: p = 1 by definition
    wide["e"] = wide["b"] + 0.1  # a constant difference: scipy's t is infinite, p = 0
    tests = paired_tests(wide).set_index(["system_a", "system_b"])
    assert len(tests) == 15
    for a, b in itertools.combinations(wide.columns, 2):
        if (a, b) == ("a", "f"):
            assert tests.loc[(a, b), "p"] == 1.0 and tests.loc[(a, b), "t"] == 0.0
            continue
        expected = stats.ttest_rel(wide[a], wide[b])
        assert tests.loc[(a, b), "p"] == pytest.approx(expected.pvalue, abs=1e-12)
        assert tests.loc[(a, b), "mean_diff"] == pytest.approx((wide[a] - wide[b]).mean())


@pytest.mark.parametrize(
    "clusters",
    [
        ["q2", "q1", "q2", "q3", "q1"],
        pd.Series(["q2", "q1", "q2", "q3"], dtype="string[pyarrow]"),
        pd.Series(["b", "a", "b"], dtype=object),
        [3, 1, 3, 1.0, True],
        ["q1", None, "q1", None],
        [],
    ],
)
def test_cluster_codes_are_first_seen_order_as_a_dict_walk_gives_them(clusters):
    import numpy as np

    from voirdire.stats.resample import _factorize

    seen: dict = {}
    expected = [seen.setdefault(c, len(seen)) for c in clusters]
    codes, uniques = _factorize(clusters)
    assert codes.tolist() == expected and uniques == list(seen) and codes.dtype == np.dtype(int)
