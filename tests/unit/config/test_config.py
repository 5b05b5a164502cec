import copy

import pytest

from voirdire.config import check, config_hash, load, validate_schema
from voirdire.data import load_dataset
from voirdire.errors import ConfigError, InputError
from voirdire.preflight import preflight


@pytest.fixture
def base(write):
    topics = write("t.tsv", "1\tcats\n2\tdogs\n")
    qrels = write("q.txt", "1 0 a 2\n2 0 b 1\n")
    corpus = write("c.jsonl", '{"id": "a", "contents": "cats"}\n{"id": "b", "contents": "dogs"}\n')
    judge = write("j.txt", "1 0 a 1\n2 0 b 0\n")
    return {
        "datasets": {"toy": {"source": "local", "topics": str(topics), "qrels": str(qrels), "corpus": str(corpus)}},
        "systems": ["BM25", "Perfect", "Swap[1]"],
        "judges": [{"name": "j", "kind": "recorded", "qrels": str(judge), "scale": {"max": 1}, "binary_threshold": 1}],
    }


def validated(config):
    return validate_schema(copy.deepcopy(config))


def test_defaults_are_filled_and_plan_is_derived(base):
    config = validated(base)
    assert config["bm25"] == {"k1": 0.9, "b": 0.4, "depth": 100}
    assert config["oracles"] == {"tie_break": "stable", "seed": 42, "draws": 10, "base": "BM25"}
    assert config["judges"][0]["scale"] == {"min": 0, "max": 1}
    plan = check(config)
    assert [str(s) for s in plan.systems] == ["BM25", "Perfect", "Swap[1]"]
    assert plan.judge_names("toy") == ["human", "j"]
    assert plan.run_names(plan.systems[2]) == ["swap-1"]
    config["oracles"]["tie_break"] = "random"
    config["oracles"]["draws"] = 3
    assert check(config).run_names(plan.systems[2]) == ["swap-1~r0", "swap-1~r1", "swap-1~r2"]
    preflight(plan)


def test_config_hash_changes_with_settings(base):
    a, b = validated(base), validated(base)
    assert config_hash(a) == config_hash(b)
    b["bm25"]["k1"] = 1.2
    assert config_hash(a) != config_hash(b)


@pytest.mark.parametrize(
    ("mutate", "key", "message"),
    [
        (lambda c: c["systems"].append("Swap[0]"), "systems[Swap[0]]", "positions start at 1"),
        (lambda c: c["systems"].append("Swap[101]"), "systems[Swap[101]]", "at most depth/2"),
        (lambda c: c["systems"].append("Swap[1,1]"), "systems[Swap[1,1]]", "distinct"),
        (lambda c: c["systems"].append("Swap[]"), "systems[Swap[]]", "malformed"),
        (lambda c: c["systems"].append("MonoT5"), "systems[MonoT5]", "unknown system"),
        (lambda c: c["systems"].append("swap[1]"), "systems[swap[1]]", "repeats Swap[1]"),
        (lambda c: c["datasets"]["toy"].update(qrels="/nonexistent/q.txt"), "datasets.toy.qrels", "file not found"),
        (lambda c: c["datasets"]["toy"].pop("topics"), "datasets.toy.topics", "needs 'topics'"),
        (lambda c: c["datasets"].update(toy={"source": "ir_datasets", "id": "x"}), "datasets.toy", "needs a 'corpus'"),
        (lambda c: c["judges"].append(dict(c["judges"][0])), "judges[j].name", "used twice"),
        (lambda c: c["judges"][0].update(name="human"), "judges[human].name", "reserved"),
        (lambda c: c["judges"][0].update(qrels={"other": "x"}), "judges[j].qrels.other", "unknown dataset"),
        (lambda c: c["judges"][0].update(binary_threshold=5), "judges[j]", "binary threshold 5"),
    ],
)
def test_meaning_errors_name_the_key(base, mutate, key, message):
    config = validated(base)
    mutate(config)
    with pytest.raises(ConfigError) as info:
        check(config)
    assert f"config key '{key}'" in str(info.value)
    assert message in str(info.value)
    assert len(info.value.lines) == 1, info.value.lines  # one mistake, one line


@pytest.mark.parametrize(
    ("mutate", "key"),
    [
        (lambda c: c["datasets"]["toy"].update(source="trec_web"), "datasets.toy.source"),
        (lambda c: c["judges"][0].update(kind="oracle"), "judges[j].kind"),
        (lambda c: c.update(bm25={"depth": 1}), "bm25.depth"),
        (lambda c: c.update(datasets={}), "datasets"),
        (lambda c: c.update(colour="red"), "colour"),  # an unknown key is named itself
        (lambda c: c.pop("datasets"), "(top level)"),  # systems: may be left out (tests/workflow/test_labels_only.py)
    ],
)
def test_schema_errors_name_the_key(base, mutate, key):
    mutate(base)
    with pytest.raises(ConfigError) as info:
        validate_schema(base)
    assert f"config key '{key}'" in str(info.value)
    assert len(info.value.lines) == 1, info.value.lines  # one mistake, one line


def test_load_reads_yaml_and_reports_missing(tmp_path, base):
    import yaml

    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(base))
    assert load(path)["bm25"]["depth"] == 100
    with pytest.raises(ConfigError, match="config file not found"):
        load(tmp_path / "missing.yaml")


def test_topics_without_qrels(base, write):
    spec = validated(base)["datasets"]["toy"]
    spec["topics"] = str(write("t3.tsv", "1\tcats\n2\tdogs\n3\tbirds\n"))
    with pytest.raises(InputError, match="1 topic\\(s\\) have no qrels \\(first: 3\\)") as info:
        load_dataset(spec)
    assert "t3.tsv" in str(info.value)
    spec["unjudged_topics"] = "drop"
    assert list(load_dataset(spec).topics) == ["1", "2"]
    spec["qrels"] = str(write("q9.txt", "9 0 a 1\n"))
    with pytest.raises(InputError, match="1 qrels of 1 query id\\(s\\) that are not topics \\(first: 9\\)"):
        load_dataset(spec)  # qrels of an unknown query are an error, not ignored
    spec["unknown_qrels"] = "drop"
    with pytest.raises(InputError, match="no topic has qrels"):
        load_dataset(spec)


def test_preflight_reads_recorded_judges_with_their_scale(base, write):
    base["judges"][0]["qrels"] = str(write("j2.txt", "1 0 a 1\n2 0 b 2\n"))
    plan = check(validated(base))
    with pytest.raises(InputError, match="outside the declared scale 0..1") as info:
        preflight(plan)
    assert "j2.txt:2" in str(info.value)


def test_a_query_list_keeps_those_topics_and_counts_the_rest(base, write):
    spec = validated(base)["datasets"]["toy"]
    spec["topics"] = str(write("t3.tsv", "1\tcats\n2\tdogs\n3\tbirds\n"))
    spec["qrels"] = str(write("q3.txt", "1 0 a 1\n2 0 b 2\n2 0 c 0\n3 0 a 3\n"))
    whole = load_dataset(spec, name="toy")
    spec["queries"] = ["3", "1"]
    kept = load_dataset(spec, name="toy")
    assert list(kept.topics) == ["1", "3"]  # in the topics file's order
    assert sorted(kept.qrels["query_id"]) == ["1", "3"]
    assert kept.summary()["set_aside"] == ["2"] and kept.summary()["queries_set_aside"] == 1
    assert len(kept.qrels) + 2 == len(whole.qrels) and "set_aside" not in whole.summary()
    spec["queries"] = ["1", "7"]  # a typo would shrink the run without a word
    with pytest.raises(
        InputError, match="1 of the 2 listed queries are not topics with qrels \\(first: '7'\\)"
    ) as info:
        load_dataset(spec, name="toy")
    assert "datasets.toy.queries" in str(info.value)
