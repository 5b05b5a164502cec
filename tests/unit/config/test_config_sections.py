"""The config's sections: the check never changes the config it checks (each section's defaults
are resolved into new dicts the Plan holds), and every default has one home, the schema
(``voirdire/schema.yaml``): the dataclasses a config builds and the documented example agree
with it."""

from __future__ import annotations

import copy
import dataclasses
import re

import pytest
import yaml
from conftest import ROOT

from voirdire.assistants.declarations import LLMAssistant
from voirdire.config import check, schema_default, validate_schema
from voirdire.errors import InputError
from voirdire.judges import EmbeddingJudge, LLMJudge, RecordedJudge, Scale
from voirdire.llm.endpoint import Endpoint
from voirdire.probes.items import INJECTIONS
from voirdire.runs import Recorded
from voirdire.systems import Ranker

CONFIGS = ("config/config.yaml", ".test/config.yaml", ".test/runs.yaml", "config/paper.yaml")


def validated(path: str) -> dict:
    return validate_schema(yaml.safe_load((ROOT / path).read_text()))


def demo() -> dict:
    return validated("config/config.yaml")


@pytest.fixture(autouse=True)
def at_root(monkeypatch):
    monkeypatch.chdir(ROOT)  # the configs name their files from the repository root


@pytest.mark.parametrize("path", CONFIGS)
def test_the_check_leaves_the_config_as_it_was(path):
    if not (ROOT / path).is_file():
        pytest.skip(f"{path} is not in this checkout")
    config = validated(path)
    before = copy.deepcopy(config)
    try:
        plan = check(config, configfile=path)
    except InputError as error:  # the TREC DL files of .test/ live outside the repository
        if "not found" in str(error):
            pytest.skip(f"{path} names files this machine lacks: {error}")
        raise
    assert config == before
    # what the check resolved is the Plan's: checking it again resolves nothing new
    assert check(copy.deepcopy(plan.config), configfile=path).config == plan.config


def test_the_demo_sections_are_resolved_into_the_plan_not_the_config():
    config = demo()
    config["gaming"] = {"methods": ["stuff", "claim"]}
    config["probes"]["swap"]["lists"].pop("systems")
    plan = check(config)
    assert "systems" not in config["gaming"] and "judges" not in config["gaming"]
    assert "systems" not in config["probes"]["swap"]["lists"]
    assert plan.gaming["systems"] == ["BM25", "rg-smollm2", "prp-smollm2", "dense-minilm"]  # no oracle
    assert plan.gaming["judges"] == {"smollm2": ["stuff", "claim"], "minilm": ["stuff", "claim"]}
    assert plan.gaming["templates"] == {"claim": INJECTIONS["claim"]}
    assert plan.probes["swap"]["lists"]["systems"] == [str(s) for s in plan.systems]
    assert plan.probes["injection"]["templates"] == INJECTIONS  # the schema's default
    assert plan.config["gaming"] is plan.gaming and plan.config["probes"] is plan.probes
    assert plan.config["datasets"] == config["datasets"]


def test_a_judge_list_becomes_judge_to_methods_and_a_template_is_added_to_claim():
    config = demo()
    config["gaming"] = {"methods": ["stuff", "mine"], "templates": {"mine": "{passage} mine"}, "judges": ["minilm"]}
    before = copy.deepcopy(config)
    plan = check(config)
    assert config == before
    assert plan.gaming["templates"] == {"mine": "{passage} mine", "claim": INJECTIONS["claim"]}
    assert plan.gaming_judges == {"minilm": ["stuff", "mine"]}


def test_a_section_with_errors_is_left_as_it_was_too():
    config = demo()
    config["gaming"] = {"methods": ["stuff", "mine"], "systems": ["Nope"], "judges": {"assessor-b": ["stuff"]}}
    config["probes"]["injection"]["templates"] = {"bare": "no slot"}
    before = copy.deepcopy(config)
    with pytest.raises(InputError) as error:
        check(config)
    assert config == before
    for key in (
        "gaming.methods[1]",
        "gaming.systems[Nope]",
        "gaming.judges.assessor-b",
        "probes.injection.templates.bare",
    ):
        assert key in str(error.value)


# ----------------------------------------------------------------------------- one home of defaults


def field_default(cls, name: str):
    return next(f.default for f in dataclasses.fields(cls) if f.name == name)


ENDPOINT = ("concurrency", "rpm", "timeout_s", "num_retries", "max_connection_failures")
LLM_JUDGE = ("temperature", "top_p", "max_tokens", "seed", "samples", "parse_retries", "threads")
ASSISTANT = ("kind", "temperature", "max_tokens", "seed", "threads")
RANKER = ("backend", "variant", "k", "depth", "batch_size", "dtype", "max_length", "gpus", "mem_mb", "threads")
AGREE = [
    *[(("judges", name), LLMJudge, name) for name in LLM_JUDGE],
    *[(("judges", name), Endpoint, name) for name in ENDPOINT],
    (("judges", "scale", "min"), Scale, "low"),
    (("judges", "scale", "max"), Scale, "high"),
    (("judges", "binary_threshold"), Scale, "binary_threshold"),
    (("judges", "invalid_labels"), RecordedJudge, "invalid_labels"),
    (("judges", "unused_grades"), RecordedJudge, "unused_grades"),
    (("judges", "threads"), EmbeddingJudge, "threads"),
    *[(("assistants", name), LLMAssistant, name) for name in ASSISTANT],
    *[(("assistants", name), Endpoint, name) for name in ENDPOINT],
    *[(("rankers", name), Ranker, name) for name in RANKER],
    *[(("rankers", name), Endpoint, name) for name in ENDPOINT],
    (("runs", "unknown_queries"), Recorded, "unknown_queries"),
]


@pytest.mark.parametrize(("keys", "cls", "name"), AGREE, ids=[f"{'.'.join(k)}={c.__name__}.{n}" for k, c, n in AGREE])
def test_the_schema_default_is_the_dataclass_default(keys, cls, name):
    """A judge, assistant, ranker or run built without a key takes the schema's default: the
    schema is where defaults are set; a dataclass's default only mirrors it (for code that
    builds one directly)."""
    assert schema_default(*keys) == field_default(cls, name)


def test_the_injection_templates_default_in_the_schema():
    assert schema_default("probes", "injection", "templates") == INJECTIONS
    config = validate_schema({"datasets": {"d": {"source": "ir_datasets", "id": "x"}}, "probes": {"injection": {}}})
    assert config["probes"]["injection"]["templates"] == INJECTIONS
    with pytest.raises(KeyError):
        schema_default("judges", "colour")
    with pytest.raises(KeyError):
        schema_default("judges", "model")  # no default: an LLM judge names its model


def test_the_schema_read_by_libyaml_is_the_schema_pyyaml_reads_and_stays_unchanged_by_use():
    """The schema is parsed by libyaml's loader, once per process: the same document as PyYAML's
    own parser gives, and validating a config (defaults filled in) leaves it as it was."""
    from voirdire.config import schema

    own = yaml.safe_load(schema.SCHEMA.read_text(encoding="utf-8"))
    assert schema._schema_doc() == own
    validate_schema(
        {
            "datasets": {"d": {"source": "ir_datasets", "id": "x"}},
            "judges": [{"name": "j", "kind": "llm", "model": "m"}],
        }
    )
    schema_default("probes", "injection", "templates")["changed"] = "a caller's own copy"
    assert schema._schema_doc() == own


def test_the_documented_llm_judge_shows_the_schema_defaults():
    """docs/configuration.md's LLM judge entry writes out the defaults: the schema's."""
    text = (ROOT / "docs/configuration.md").read_text(encoding="utf-8")
    block = re.search(r"^  - name: NAME +# a live LLM judge.*?(?=^\S)", text, re.M | re.S)
    assert block, "the LLM judge entry of docs/configuration.md moved"
    (entry,) = yaml.safe_load(block.group(0))
    shown = {
        key: value
        for key, value in entry.items()
        if key not in ("name", "kind", "model", "prompt_file", "api_base", "api_key_env")
    }
    assert shown, entry
    for key, value in shown.items():
        default = schema_default("judges", key)
        assert value == default or (isinstance(default, dict) and value == {**default, **value}), key
    assert {k: schema_default("judges", "scale", k) for k in ("min", "max")} == entry["scale"]
