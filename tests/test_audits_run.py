"""The audits job's library function on a small hand-made dataset: every table, the right rows."""

import numpy as np
import pandas as pd
import pytest

from voirdire.audits.run import TABLES, DatasetInputs, audit_tables
from voirdire.evaluation import evaluate_systems
from voirdire.judges import HUMAN, needed_pairs


def small_dataset(seed=3):
    rng = np.random.default_rng(seed)
    queries = [f"q{i}" for i in range(12)]
    topics = {q: f"query {q}" for q in queries}
    base = pd.DataFrame([(q, f"{q}-d{j}", j + 1, 100.0 - j) for q in queries for j in range(10)],
                        columns=["query_id", "doc_id", "rank", "score"])  # fmt: skip
    human = base.assign(relevance=rng.integers(0, 4, len(base)))[["query_id", "doc_id", "relevance"]]
    lenient = human.assign(relevance=np.minimum(3, human["relevance"] + 1))
    rerun = lenient.assign(relevance=np.where(rng.random(len(lenient)) < 0.2, 0, lenient["relevance"]))
    labels = {HUMAN: human, "copy": human.copy(), "lenient": lenient}
    runs = {"base": [base], "shuffled": [base.assign(score=rng.random(len(base)))]}
    per_query = pd.concat([evaluate_systems(runs, qrels, queries).assign(judge=j) for j, qrels in labels.items()])
    meta = {j: {"min": 0, "max": 3, "binary_threshold": 2, "kind": "human" if j == HUMAN else "recorded",
                "family": {"copy": "a", "lenient": "b"}.get(j, "human")} for j in labels}  # fmt: skip
    texts = {d: "word " * (1 + i % 40) for i, d in enumerate(base["doc_id"])}
    return DatasetInputs(judges=meta, pairs=needed_pairs(human, pool=base), labels=labels, runs=runs, base=base,
                         topics=topics, per_query=per_query, texts=texts,
                         label_sets={"lenient": {"qrels": lenient, "rerun-1": rerun}})  # fmt: skip


def test_every_audit_table_comes_back_with_its_rows():
    tables, heatmaps = audit_tables({"toy": small_dataset()}, system_families={"base": "a", "shuffled": "b"},
                                    calibration={"ks": [3, 5], "draws": 5})  # fmt: skip
    assert set(tables) == set(TABLES) and set(heatmaps) == {("toy", "copy"), ("toy", "lenient")}
    labels = tables["label_test"].set_index("judge")
    assert labels.loc["copy", "agreement_binary"] == 1.0 and labels.loc["lenient", "missed_failures"] > 0
    circularity = tables["circularity"].set_index("ranker")
    assert circularity.loc[HUMAN, "inflation"] == 0 and circularity.loc[HUMAN, "inflation_p"] == 1.0
    # the lenient judge's own ranking is the humans' order with grades shifted: no inflation either way
    assert {"inflation_ci_low", "inflation_ci_high", "queries"} <= set(circularity.columns)
    assert list(tables["drift"]["judge"]) == ["lenient"] and tables["control_chart"]["down"].iloc[0] > 0
    assert tables["control_chart"]["mean_difference"].iloc[0] < 0  # the rerun set 20% of labels to 0
    assert set(tables["calibration"]["k"]) == {3, 5} and set(tables["length"]["judge"]) == {"copy", "lenient"}
    assert set(tables["self_preference"]["judge"]) == {"copy", "lenient"}
    assert all(t.columns[0] == "dataset" for t in tables.values() if len(t.columns))


def test_a_labels_only_dataset_has_no_length_rows_and_the_rest():
    data = small_dataset()
    data.texts = {}
    tables, _ = audit_tables({"toy": data}, system_families={"base": "a", "shuffled": "b"},
                             calibration={"ks": [3], "draws": 3})  # fmt: skip
    assert tables["length"].empty and list(tables["deciles"].columns) == ["dataset", "judge", "decile"]
    assert len(tables["label_test"]) == 2 and len(tables["circularity"]) == 3


def test_inflation_interval_is_a_bootstrap_of_the_per_query_gap():
    from scipy import stats

    from voirdire.audits.circularity import inflation_interval
    from voirdire.stats import query_resamples

    rng = np.random.default_rng(1)
    own = pd.Series(rng.random(20) * 0.2 + 0.8, index=[f"q{i}" for i in range(20)])
    human = pd.Series(rng.random(20) * 0.5, index=own.index)
    row = inflation_interval(own, human, resamples=500, seed=9)
    boot = query_resamples(20, 500, 9) @ (own - human).to_numpy() / 20
    assert (row["inflation_ci_low"], row["inflation_ci_high"]) == pytest.approx(tuple(np.percentile(boot, [2.5, 97.5])))
    assert row["inflation_p"] == pytest.approx(stats.ttest_rel(own, human).pvalue)


def test_the_humans_join_the_self_preference_panel_only_when_asked():
    families = {"system_families": {"base": "a", "shuffled": "b"}, "calibration": {"ks": [3], "draws": 2}}
    without, _ = audit_tables({"toy": small_dataset()}, **families)
    with_humans, _ = audit_tables({"toy": small_dataset()}, include_humans=True, **families)
    panel = without["self_preference"].set_index("judge")["panel"]
    assert HUMAN not in panel["copy"] and "lenient" in panel["copy"]
    assert HUMAN in with_humans["self_preference"].set_index("judge").loc["copy", "panel"]
