"""bench/audit_calibration.py at a handful of draws on the real DL19 labels: the table's shape,
its arithmetic, and planted biases found (skips without ../shared). No timing is asserted."""

from __future__ import annotations

import math

import pytest
from conftest import load_bench


@pytest.fixture(scope="module")
def bench():
    return load_bench("audit_calibration")


@pytest.fixture(scope="module")
def data(bench):
    from conftest import SHARED_DL19

    if not (SHARED_DL19 / "qrels.nist.txt").is_file():
        pytest.skip(f"real TREC DL 2019 data not found at {SHARED_DL19} (../shared absent)")
    return bench.load(SHARED_DL19)


@pytest.fixture(scope="module")
def table(bench, data):
    return bench.calibrate(data, draws=3, power_draws=2, seed=5, progress=False)


def test_the_bench_scores_as_the_project_does(bench, data):
    assert bench.check_ndcg(data) < 1e-9
    assert len(data.queries) == 43 and len(data.qrels) == 9260
    # the README's reference value: BM25 top-100 at judged-only nDCG@10 0.5058
    assert data.human_wide["BM25"].mean() == pytest.approx(0.5058, abs=5e-5)


def test_table_shape(bench, table):
    audits = bench.audits(200, 500)
    # the difference in differences: disagrees and reversed, on two pairs of systems; the gamed
    # system: the verdict's flag and each gamed system's stuff row
    flags = {"dd": 4, "gaming": 4}
    expected = sum((len(a.nulls) + 1) * flags.get(key, 1) for key, a in audits.items())
    assert len(table) == expected
    assert set(bench.COLUMNS) <= set(table.columns)
    assert set(table["audit"]) == {a.name for a in audits.values()}
    planted = table["simulated"].str.startswith("planted")
    assert (table.loc[planted, "draws"] == 2).all() and (table.loc[~planted, "draws"] == 3).all()
    assert ((table["ci_low"] <= table["rate"]) & (table["rate"] <= table["ci_high"])).all()
    assert (table["rate"] == table["flagged"] / table["draws"]).all()
    bound = table["alpha"] + 2 * (table["alpha"] * (1 - table["alpha"]) / table["draws"]).map(math.sqrt)
    size = table[~planted]
    assert (size["within_target"] == (size["rate"] <= bound[~planted])).all()
    assert (table.loc[planted, "within_target"] == (table.loc[planted, "rate"] >= 0.8)).all()


def test_planted_biases_are_found(table):
    planted = table[table["simulated"].str.startswith("planted")].set_index(["audit", "flag"])
    for audit, flag in [("self-preference", "self_preferring"), ("drift", "shifted"), ("length", "length_biased")]:
        assert planted.loc[(audit, flag), "flagged"] == 2, (audit, flag)
        assert planted.loc[(audit, flag), "mean_statistic"] > 0, (audit, flag)
    # Rank1 was given +0.05 nDCG@10 on every query: monoT5 - Rank1 carries it whether or not it flags
    assert planted.loc[("difference in differences", "disagrees (monoT5, Rank1)"), "mean_statistic"] < -0.02
