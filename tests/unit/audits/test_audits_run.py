"""The audits job's library function on a small hand-made dataset: every table, the right rows."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from voirdire.audits.labels import aligned, confusion, confusion_matrices
from voirdire.audits.run import DatasetInputs, all_tables, audit_tables
from voirdire.evaluation import evaluate_systems
from voirdire.judges import HUMAN, needed_pairs, restrict


def small_dataset(seed=3):
    rng = np.random.default_rng(seed)
    queries = [f"q{i}" for i in range(12)]
    topics = {q: f"query {q}" for q in queries}
    base = pd.DataFrame(
        [(q, f"{q}-d{j}", j + 1, 100.0 - j) for q in queries for j in range(10)],
        columns=["query_id", "doc_id", "rank", "score"],
    )
    human = base.assign(relevance=rng.integers(0, 4, len(base)))[["query_id", "doc_id", "relevance"]]
    lenient = human.assign(relevance=np.minimum(3, human["relevance"] + 1))
    rerun = lenient.assign(relevance=np.where(rng.random(len(lenient)) < 0.2, 0, lenient["relevance"]))
    labels = {HUMAN: human, "copy": human.copy(), "lenient": lenient}
    runs = {"base": [base], "shuffled": [base.assign(score=rng.random(len(base)))]}
    per_query = pd.concat([evaluate_systems(runs, qrels, queries).assign(judge=j) for j, qrels in labels.items()])
    meta = {
        j: {
            "min": 0,
            "max": 3,
            "binary_threshold": 2,
            "kind": "human" if j == HUMAN else "recorded",
            "family": {"copy": "a", "lenient": "b"}.get(j, "human"),
        }
        for j in labels
    }
    texts = {d: "word " * (1 + i % 40) for i, d in enumerate(base["doc_id"])}
    return DatasetInputs(
        judges=meta,
        pairs=needed_pairs(human, pool=base),
        labels=labels,
        runs=runs,
        base=base,
        topics=topics,
        per_query=per_query,
        texts=texts,
        label_sets={"lenient": {"qrels": lenient, "rerun-1": rerun}},
    )


def test_every_audit_table_comes_back_with_its_rows():
    data = small_dataset()
    tables = audit_tables(
        {"toy": data}, system_families={"base": "a", "shuffled": "b"}, calibration={"ks": [3, 5], "draws": 5}
    )
    assert set(tables) == set(all_tables())
    # the confusion figure's matrices, rebuilt from the unwritten long table exactly as the label test counts them
    matrices = confusion_matrices(tables["confusion"])
    assert list(matrices) == [("toy", "copy"), ("toy", "lenient")]
    human = restrict(data.labels[HUMAN], data.pairs)
    for judge in ("copy", "lenient"):
        counted = confusion(aligned(human, data.labels[judge]), data.scale(HUMAN), data.scale(judge))
        pd.testing.assert_frame_equal(matrices["toy", judge], counted)
    assert matrices["toy", "lenient"].loc[0, 0] == 0 and matrices["toy", "lenient"].loc[0, 1] > 0  # one grade up
    labels = tables["label_test"].set_index("judge")
    assert labels.loc["copy", "agreement_binary"] == 1.0 and labels.loc["lenient", "missed_failures"] > 0
    circularity = tables["circularity"].set_index("ranker")
    assert circularity.loc[HUMAN, "inflation"] == 0 and circularity.loc[HUMAN, "inflation_p"] == 1.0
    # the lenient judge merges grades 2 and 3: its own ranking is ideal under itself, not under the humans
    assert (
        circularity.loc["lenient", "self_score"] == pytest.approx(1.0) and circularity.loc["lenient", "inflation"] > 0
    )
    assert {"inflation_ci_low", "inflation_ci_high", "queries"} <= set(circularity.columns)
    assert "inflated" not in circularity.columns  # every judge that differs from the humans inflates: no flag
    assert list(tables["drift"]["judge"]) == ["lenient"] and tables["control_chart"]["down"].iloc[0] > 0
    assert tables["control_chart"]["mean_difference"].iloc[0] < 0  # the rerun set 20% of labels to 0
    assert set(tables["calibration"]["k"]) == {3, 5} and set(tables["length"]["judge"]) == {"copy", "lenient"}
    assert set(tables["self_preference"]["judge"]) == {"copy", "lenient"}
    assert all(t.columns[0] == "dataset" for t in tables.values() if len(t.columns))


def test_a_labels_only_dataset_has_no_length_rows_and_the_rest():
    data = small_dataset()
    data.texts = {}
    tables = audit_tables(
        {"toy": data}, system_families={"base": "a", "shuffled": "b"}, calibration={"ks": [3], "draws": 3}
    )
    assert tables["length"].empty and list(tables["deciles"].columns) == ["dataset", "judge", "decile"]
    assert len(tables["label_test"]) == 2 and len(tables["circularity"]) == 3


def test_inflation_interval_is_a_bootstrap_of_the_per_query_gap_with_a_sign_flip_test():
    from scipy import stats

    from voirdire.audits.circularity import inflation_interval
    from voirdire.stats import query_resamples

    rng = np.random.default_rng(1)
    own = pd.Series(rng.random(20) * 0.2 + 0.54, index=[f"q{i}" for i in range(20)])
    human = pd.Series(rng.random(20) * 0.5 + 0.3, index=own.index)
    row = inflation_interval(own, human, resamples=500, seed=9)
    gap = (own - human).to_numpy()
    boot = query_resamples(20, 500, 9) @ gap / 20
    assert (row["inflation_ci_low"], row["inflation_ci_high"]) == pytest.approx(tuple(np.percentile(boot, [2.5, 97.5])))
    # each query's gap keeps or flips its sign (scipy's sign-flip permutation test, other draws)
    reference = stats.permutation_test(
        (gap,), np.mean, permutation_type="samples", n_resamples=20000, random_state=3
    ).pvalue
    assert 0.01 < reference < 0.5 and row["inflation_p"] == pytest.approx(reference, abs=0.02)
    assert row["queries"] == 20 and row["inflation_degenerate"] == 0


def with_qrels_beyond_the_pool(seed=3):
    """The small dataset, with relevant human qrels no system retrieves (as NIST's pools hold), a
    judge that copies the human labels of the needed pairs, and one whose labels are noise."""
    data = small_dataset(seed)
    rng = np.random.default_rng(seed + 1)
    extra = pd.DataFrame(
        [(q, f"{q}-unretrieved{j}", 3) for q in data.topics for j in range(3)],
        columns=["query_id", "doc_id", "relevance"],
    )
    human = pd.concat([data.labels[HUMAN], extra], ignore_index=True)
    pairs = needed_pairs(human, pool=data.base)
    copy = human.merge(pairs[["query_id", "doc_id"]], on=["query_id", "doc_id"])
    noise = copy.assign(relevance=rng.integers(0, 4, len(copy)))
    data.pairs = pairs
    data.labels = {HUMAN: human, "copy": copy, "lenient": data.labels["lenient"], "noise": noise}
    data.judges = dict(data.judges) | {
        "noise": {"min": 0, "max": 3, "binary_threshold": 2, "kind": "recorded", "family": "c"}
    }
    data.per_query = pd.concat(
        [evaluate_systems(data.runs, qrels, list(data.topics)).assign(judge=j) for j, qrels in data.labels.items()]
    )
    return data


def test_a_judge_copying_the_human_labels_has_no_inflation_and_a_noisy_one_has():
    data = with_qrels_beyond_the_pool()
    tables = audit_tables(
        {"toy": data}, system_families={"base": "a", "shuffled": "b"}, calibration={"ks": [3], "draws": 2}
    )
    circularity = tables["circularity"].set_index("ranker")
    copy = circularity.loc["copy"]
    # under every human qrel the copy's ranking scores lower (a larger ideal DCG) ...
    assert copy["human_score"] < copy["self_score"]
    # ... but against the human labels of the same pairs, the copy is the humans exactly
    assert copy["self_score"] == copy["human_pool_score"] == copy["under_human@pool"]
    assert copy["inflation"] == 0 and copy["inflation_ci_low"] == copy["inflation_ci_high"] == 0
    assert copy["inflation_p"] == 1.0
    assert circularity.loc[HUMAN, "inflation"] == 0
    noise = circularity.loc["noise"]  # its own ranking is ideal under its own labels only
    assert noise["self_score"] == pytest.approx(1.0) and noise["inflation"] > 0.1
    assert noise["inflation_ci_low"] > 0 and noise["inflation_p"] < 0.01


def test_the_humans_join_the_self_preference_panel_only_when_asked():
    families = {"system_families": {"base": "a", "shuffled": "b"}, "calibration": {"ks": [3], "draws": 2}}
    without = audit_tables({"toy": small_dataset()}, **families)
    # audits.self_preference.include_humans: the audit's own settings (voirdire.audits.panel)
    with_humans = audit_tables(
        {"toy": small_dataset()}, settings={"self_preference": {"include_humans": True}}, **families
    )
    panel = without["self_preference"].set_index("judge")["panel"]
    assert HUMAN not in panel["copy"] and "lenient" in panel["copy"]
    assert HUMAN in with_humans["self_preference"].set_index("judge").loc["copy", "panel"]


def test_the_self_preference_settings_are_its_config_section():
    """``audits.self_preference`` is declared by the audit (voirdire.audits.panel), not the shipped
    schema: validating a config fills its defaults, and a wrong value is an error naming the key."""
    from voirdire.config import validate_schema
    from voirdire.errors import ConfigError

    base = {
        "datasets": {"d": {"source": "ir_datasets", "id": "x"}},
        "judges": [{"name": "j", "kind": "llm", "model": "m"}],
    }
    filled = validate_schema(dict(base))["audits"]["self_preference"]
    assert filled == {"include_humans": False, "similar_families": "error"}
    asked = validate_schema({**base, "audits": {"self_preference": {"include_humans": True}}})
    assert asked["audits"]["self_preference"]["include_humans"] is True
    with pytest.raises(ConfigError, match="audits.self_preference.include_humans"):
        validate_schema({**base, "audits": {"self_preference": {"include_humans": "yes"}}})


def deep_tied_dataset(seed=5, depth=10):
    """Runs 30 deep whose scores tie in threes (the rank column in doc id order, trec_eval's the
    other way), a 0/1 judge with threshold 1 and a drift label set, for a binary measure cut
    at ``depth`` < 30."""
    rng = np.random.default_rng(seed)
    queries = [f"q{i}" for i in range(10)]
    docs = [(q, f"{q}-d{j:02d}") for q in queries for j in range(30)]
    base = pd.DataFrame(
        [(q, d, j % 30 + 1, 100.0 - (j % 30) // 3) for j, (q, d) in enumerate(docs)],
        columns=["query_id", "doc_id", "rank", "score"],
    )
    human = base.assign(relevance=rng.choice(4, len(base), p=[0.4, 0.3, 0.2, 0.1]))[["query_id", "doc_id", "relevance"]]
    runs = {"base": [base]} | {
        f"s{i}": [base.assign(score=rng.integers(0, 6, len(base)).astype(float))] for i in range(5)
    }
    pairs = needed_pairs(human, pool=base, runs=[r[0] for r in runs.values()], depth=depth)
    on_pairs = human.merge(pairs[["query_id", "doc_id"]], on=["query_id", "doc_id"])
    binary = on_pairs.assign(relevance=(on_pairs["relevance"] >= 1).astype(int))
    rerun = binary.assign(
        relevance=np.where(rng.random(len(binary)) < 0.3, 1 - binary["relevance"], binary["relevance"])
    )
    labels = {HUMAN: human, "binary": binary}
    meta = {
        HUMAN: {"min": 0, "max": 3, "binary_threshold": 2, "kind": "human", "family": "human"},
        "binary": {"min": 0, "max": 1, "binary_threshold": 1, "kind": "recorded", "family": "a"},
    }
    per_query = pd.concat(
        [
            evaluate_systems(
                runs, q, queries, measure="AP@100", depth=depth, binary_threshold=meta[j]["binary_threshold"]
            ).assign(judge=j)
            for j, q in labels.items()
        ]
    )
    return DatasetInputs(
        judges=meta,
        pairs=pairs,
        labels=labels,
        runs=runs,
        base=base,
        topics={q: q for q in queries},
        per_query=per_query,
        label_sets={"binary": {"qrels": binary, "rerun-1": rerun}},
    )


def test_drift_and_circularity_score_systems_as_table_2_does():
    from voirdire.evaluation import cut, evaluate_measures
    from voirdire.formats import ranked, run_from_rankings
    from voirdire.judges import restrict
    from voirdire.stats import kendall_tau
    from voirdire.systems import Perfect, oracle_rankings

    depth, measure = 10, "AP@100"
    data = deep_tied_dataset(depth=depth)
    tables = audit_tables(
        {"toy": data}, system_families={}, measure=measure, depth=depth, calibration={"ks": [3], "draws": 2}
    )

    def table2(runs, labels, threshold, **options):  # the scores rule's call (voirdire.evaluation.scores_table)
        options = {"binary_threshold": threshold, "depth": depth} | options
        scores = evaluate_measures(runs, labels, list(data.topics), [measure], **options)
        return scores.groupby("system")["value"].mean()

    # drift: tau between the systems' orderings under the two label sets of the 0/1 judge
    sets = data.label_sets["binary"]
    means = {name: table2(data.runs, labels, 1) for name, labels in sets.items()}
    expected = kendall_tau(means["qrels"].to_numpy(), means["rerun-1"][means["qrels"].index].to_numpy())
    assert tables["drift"]["tau_systems"].iloc[0] == pytest.approx(expected)
    naive = {name: table2(data.runs, labels, 2, depth=None) for name, labels in sets.items()}  # the old call
    assert kendall_tau(naive["qrels"].to_numpy(), naive["rerun-1"][naive["qrels"].index].to_numpy()) != expected

    # circularity: the humans' ranking is the Perfect oracle of the base run's top depth
    grades = {q: dict(zip(g["doc_id"], g["relevance"], strict=True)) for q, g in data.labels[HUMAN].groupby("query_id")}
    perfect = {"human": [run_from_rankings(oracle_rankings(Perfect(), ranked(cut(data.base, depth)), grades))]}
    circularity = tables["circularity"].set_index("ranker")
    for judge, labels, threshold in (
        (HUMAN, data.labels[HUMAN], 2),
        ("binary", data.labels["binary"], 1),
        ("human@pool", restrict(data.labels[HUMAN], data.pairs), 2),
    ):
        assert circularity.loc[HUMAN, f"under_{judge}"] == pytest.approx(table2(perfect, labels, threshold)["human"])
    old = table2({"human": [data.base.sort_values(["query_id", "rank"])]}, data.labels[HUMAN], 2, depth=None)
    assert circularity.loc[HUMAN, "under_human"] != pytest.approx(old["human"])


def test_leave_one_judge_out_never_drops_or_keeps_a_null_baseline():
    data = small_dataset()
    longest = data.labels["lenient"].assign(relevance=3)  # a null baseline: the same grade for every pair
    data.labels = dict(data.labels) | {"longest": longest}
    data.judges = dict(data.judges) | {
        "longest": {"min": 0, "max": 3, "binary_threshold": 2, "kind": "baseline", "family": None}
    }
    data.per_query = pd.concat(
        [data.per_query, evaluate_systems(data.runs, longest, list(data.topics)).assign(judge="longest")]
    )
    options = {"system_families": {"base": "a", "shuffled": "b"}, "calibration": {"ks": [3], "draws": 2}}
    tables = audit_tables({"toy": data}, **options)
    without = audit_tables({"toy": small_dataset()}, **options)
    assert set(tables["lojo"]["left_out"]) == {"copy", "lenient"}
    pd.testing.assert_frame_equal(tables["lojo"], without["lojo"])


def test_the_calibration_audit_reads_its_settings_and_the_schema_gives_their_defaults():
    """The calibration's k and draws are the settings ``audits.calibration`` (defaults in the
    schema, as the audits rule passes them); the old keyword says the same."""
    from voirdire.audits.calibration import DRAWS, KS
    from voirdire.config import validate_schema

    families = {"system_families": {"base": "a", "shuffled": "b"}}
    by_settings = audit_tables({"toy": small_dataset()}, settings={"calibration": {"ks": [4], "draws": 3}}, **families)
    by_keyword = audit_tables({"toy": small_dataset()}, calibration={"ks": [4], "draws": 3}, **families)
    assert set(by_settings["calibration"]["k"]) == {4} and set(by_settings["calibration"]["draws"]) == {3}
    pd.testing.assert_frame_equal(by_settings["calibration"], by_keyword["calibration"])
    config = yaml.safe_load((Path(__file__).resolve().parents[3] / ".test" / "config.yaml").read_text())
    filled = validate_schema(config)
    assert filled["audits"]["calibration"] == {"ks": list(KS), "draws": DRAWS}


def test_an_audit_may_return_rows_as_dicts_and_frames_each_given_its_dataset(monkeypatch):
    """A registered audit's list of rows (dicts and frames) is concatenated as it comes, the
    dataset first; a table it leaves out on a dataset has the columns it declares."""
    from voirdire.audits import registry

    @registry.audit(
        "planted_rows",
        tables=[
            registry.Table("planted_rows", "rows", ["dataset", "judge", "value"]),
            registry.Table("planted_unused", "unused", ["dataset", "judge", "other"], written=False),
        ],
        systems=False,
    )
    def planted(context):
        return {
            "planted_rows": [
                {"judge": j, "value": float(i)} if i % 2 else pd.DataFrame({"judge": [j], "value": [float(i)]})
                for i, j in enumerate(context.judges)
            ]
        }

    try:
        data = small_dataset()
        data.runs, data.base = {}, None  # a labels-only dataset: an audit of labels still runs
        tables = audit_tables({"one": data, "two": small_dataset()}, system_families={})
    finally:
        registry.AUDITS.pop("planted_rows")
    rows = tables["planted_rows"]
    assert list(rows.columns) == ["dataset", "judge", "value"]
    assert list(rows["dataset"]) == ["one", "one", "two", "two"] and list(rows["value"]) == [0.0, 1.0, 0.0, 1.0]
    assert tables["planted_unused"].empty and list(tables["planted_unused"].columns) == ["dataset", "judge", "other"]
