"""A jury in the config (docs/juries.md): a judge of kind jury naming other judges, checked
before any job (every error names its key), and built on its members' scale."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from conftest import ROOT

from voirdire.cli import main as voirdire_cli
from voirdire.config import check, validate_schema
from voirdire.errors import InputError
from voirdire.inputs import Inputs
from voirdire.judges import JuryJudge, Scale
from voirdire.layout import Layout


def dl19_config(dl19) -> dict:
    """The two recorded DL19 judges (both 0/1), a null baseline (0-3) and a jury of the three."""
    return {
        "results": "results/jury-test",
        "datasets": {
            "dl19": {
                "source": "rankgpt",
                "candidates": str(dl19 / "bm25-top100.rankgpt.json"),
                "qrels": str(dl19 / "qrels.nist.txt"),
                "topics": str(dl19 / "topics.tsv"),
            }
        },
        "systems": ["BM25", "Perfect", "Swap[1]"],
        "judges": [
            {
                "name": "monot5-3b",
                "kind": "recorded",
                "family": "t5",
                "qrels": str(dl19 / "qrels.monot5-3b.txt"),
                "scale": {"min": 0, "max": 1},
                "binary_threshold": 1,
            },
            {
                "name": "rank1-7b",
                "kind": "recorded",
                "family": "rank1",
                "qrels": str(dl19 / "qrels.rank1-7b.txt"),
                "scale": {"min": 0, "max": 1},
                "binary_threshold": 1,
            },
            {"name": "overlap", "kind": "baseline", "method": "overlap"},
            {
                "name": "panel",
                "kind": "jury",
                "members": ["monot5-3b", "rank1-7b", "overlap"],
                "aggregate": "majority",
                "binarize": True,
            },
        ],
    }


def errors_of(config: dict) -> list[str]:
    config = validate_schema(copy.deepcopy(config))
    with pytest.raises(InputError) as caught:
        check(config)
    return [str(error) for error in caught.value.errors]


def jury_entry(config: dict, name: str = "panel") -> dict:
    return next(entry for entry in config["judges"] if entry["name"] == name)


def test_a_jury_of_the_recorded_dl19_judges_and_a_null_baseline_passes_voirdire_check(dl19, tmp_path, capsys):
    config = dl19_config(dl19)
    path = tmp_path / "jury.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    assert voirdire_cli(["check", "--configfile", str(path)]) == 0, capsys.readouterr().err
    plan = check(validate_schema(copy.deepcopy(config)))
    jury = plan.judge("dl19", "panel")
    assert isinstance(jury, JuryJudge) and jury.kind == "jury"
    assert jury.members == ("monot5-3b", "rank1-7b", "overlap") and jury.quorum == 2
    assert jury.scale == Scale(0, 1, 1) and jury.binarize and jury.family is None  # two families: none
    assert plan.judge_names("dl19") == ["human", "monot5-3b", "rank1-7b", "overlap", "panel"]


def test_the_jury_rule_reads_its_members_labels(dl19):
    plan = check(validate_schema(dl19_config(dl19)))
    layout = Layout("R")
    inputs = Inputs(plan, layout, plan.config)
    wildcards = SimpleNamespace(dataset="dl19", provenance="original", judge="panel")
    assert inputs.jury_member_qrels(wildcards) == {
        name: layout.qrels("dl19", "original", name) for name in ("monot5-3b", "rank1-7b", "overlap")
    }
    scales = inputs.jury_scales(wildcards)
    assert scales["overlap"] == {"min": 0, "max": 3, "binary_threshold": 2} and set(scales) >= {"human", "monot5-3b"}
    assert inputs.judges_of_kind("jury") == "panel"


def test_members_on_different_scales_need_binarize(dl19):
    config = dl19_config(dl19)
    del jury_entry(config)["binarize"]
    (error,) = errors_of(config)
    assert "config key 'judges[panel].members[2]'" in error and "binarize" in error, error
    # members of one scale need no binarize: the jury grades on it
    jury_entry(config)["members"] = ["monot5-3b", "rank1-7b"]
    plan = check(validate_schema(config))
    assert plan.judge("dl19", "panel").scale == Scale(0, 1, 1) and not plan.judge("dl19", "panel").binarize


@pytest.mark.parametrize(
    ("members", "key", "words"),
    [
        (["monot5-3b", "rank1-7b", "nobody"], "judges[panel].members[2]", "no judge named 'nobody'"),
        (["monot5-3b", "panel"], "judges[panel].members[1]", "cannot contain itself"),
        (["monot5-3b", "human"], "judges[panel].members[1]", "measured against"),
        (["monot5-3b", "rank1-7b", "monot5-3b"], "judges[panel].members[2]", "listed twice"),
        (["monot5-3b"], "judges[panel].members", "two or more"),
    ],
)
def test_a_bad_member_is_an_error_naming_its_key(dl19, members, key, words):
    config = dl19_config(dl19)
    jury_entry(config)["members"] = members
    (error,) = errors_of(config)
    assert f"config key '{key}'" in error and words in error, error


def test_two_juries_that_contain_each_other_are_an_error(dl19):
    config = dl19_config(dl19)
    outer = {"name": "outer", "kind": "jury", "members": ["panel", "rank1-7b"], "aggregate": "mean", "binarize": True}
    config["judges"].append(outer)
    plan = check(validate_schema(copy.deepcopy(config)))  # a jury on a jury is fine
    assert plan.judge("dl19", "outer").members == ("panel", "rank1-7b")
    jury_entry(config)["members"] = ["monot5-3b", "outer"]
    errors = errors_of(config)
    cycle = [e for e in errors if "judges[outer].members[0]" in e and "contains 'outer'" in e]
    assert cycle and "panel -> outer -> panel" in cycle[0], errors
    assert all("judges[panel]" in e or "judges[outer]" in e for e in errors), errors


@pytest.mark.parametrize(
    ("change", "key", "words"),
    [
        ({"aggregate": None}, "judges[panel].aggregate", "needs 'aggregate'"),
        ({"quorum": 4}, "judges[panel].quorum", "1..3"),
        ({"scale": {"min": 0, "max": 2}}, "judges[panel].scale", "members' scale"),
        ({"qrels": "x.txt"}, "judges[panel].qrels", "a jury has no 'qrels'"),
    ],
)
def test_a_bad_jury_setting_is_an_error_naming_its_key(dl19, change, key, words):
    config = dl19_config(dl19)
    entry = jury_entry(config)
    for name, value in change.items():
        entry.pop(name, None)
        if value is not None:
            entry[name] = value
    (error,) = errors_of(config)
    assert f"config key '{key}'" in error and words in error, error


def test_only_a_jury_has_members(dl19):
    config = dl19_config(dl19)
    jury_entry(config, "overlap")["members"] = ["monot5-3b", "rank1-7b"]
    errors = errors_of(config)
    assert any("judges[overlap].members" in e and "only a judge of kind jury" in e for e in errors), errors


def test_a_jury_declared_on_its_members_scale_and_quorum(dl19):
    config = dl19_config(dl19)
    jury_entry(config).update(scale={"min": 0, "max": 1}, binary_threshold=1, quorum=3, family="mixed")
    jury = check(validate_schema(config)).judge("dl19", "panel")
    assert jury.quorum == 3 and jury.scale == Scale(0, 1, 1) and jury.family == "mixed"


def test_a_jury_of_one_family_is_of_that_family(dl19):
    config = dl19_config(dl19)
    for entry in config["judges"][:2]:
        entry["family"] = "t5"
    jury_entry(config)["members"] = ["monot5-3b", "rank1-7b"]
    assert check(validate_schema(config)).judge("dl19", "panel").family == "t5"


def test_a_jury_sits_only_where_every_member_judges(dl19, caplog):
    """A recorded member of one dataset only: the jury judges that dataset alone, with a warning."""
    config = dl19_config(dl19)
    config["datasets"]["other"] = copy.deepcopy(config["datasets"]["dl19"])
    config["judges"][0]["qrels"] = {"dl19": config["judges"][0]["qrels"]}
    plan = check(validate_schema(config))
    assert "panel" in plan.judge_names("dl19") and "panel" not in plan.judge_names("other")
    assert any("jury panel judges dl19 only" in record.getMessage() for record in caplog.records)


def test_the_documented_jury_checks(dl19):
    """docs/juries.md's example judges, on DL19, pass the check as written (its paths resolve from
    the repository root, as the docs say)."""
    text = (ROOT / "docs/juries.md").read_text(encoding="utf-8")
    block = re.search(r"```yaml\n(judges:.*?)```", text, re.S)
    assert block, "the example of docs/juries.md moved"
    judges = yaml.safe_load(block.group(1))["judges"]
    for entry in judges:
        if "qrels" in entry:
            entry["qrels"] = str(dl19 / Path(entry["qrels"]).name)
    config = {**dl19_config(dl19), "judges": judges}
    jury = check(validate_schema(config)).judge("dl19", "panel")
    assert jury.aggregate == "majority" and jury.binarize and len(jury.members) == 3
