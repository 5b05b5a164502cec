"""A judge's and an assistant's defaults are stated once, in the schema: the dataclasses read
them (:func:`voirdire.defaults.schema_default`), the builders read a filled entry
(:func:`voirdire.defaults.filled`), and neither repeats a default of its own."""

from __future__ import annotations

import ast
import copy
import dataclasses
from pathlib import Path

import pytest

import voirdire
from voirdire.assistants.declarations import LLMAssistant, assistant_from_config
from voirdire.config import validate_schema
from voirdire.defaults import filled, schema_default, schema_doc
from voirdire.judges import EmbeddingJudge, LLMJudge, RecordedJudge, Scale, judge_from_config

SRC = Path(voirdire.__file__).parent
BUILDERS = {"judges.py": "judges", "assistants/declarations.py": "assistants"}
"""The modules that build an entry of a config section, and the section."""
DATASETS = {"d": {"source": "ir_datasets", "id": "x"}}


def defaulted_keys(section: str) -> set[str]:
    """The keys of one entry of ``section`` that the schema gives a default, nested ones too."""
    node = schema_doc()["properties"][section]
    entry = node.get("items") or node.get("additionalProperties")
    keys = set()

    def walk(properties: dict) -> None:
        for name, sub in properties.items():
            if "default" in sub:
                keys.add(name)
            walk(sub.get("properties", {}))

    walk(entry["properties"])
    return keys


NOT_DEFAULTS = {"kind"}
"""Fields that share a schema key's name but are no default: a class's ``kind`` names the class
(``LLMAssistant.kind`` is "llm" whatever the schema's default kind)."""
READS_SCHEMA = {"schema_default", "Scale"}
"""Calls whose value is the schema's: :func:`schema_default`, and ``Scale()``, whose fields read it."""


def repeated_defaults(source: str, keys: set[str]) -> list[str]:
    """Where ``source`` states a default of one of ``keys`` itself: a dataclass field of that
    name whose default is not read from the schema, or ``.get(key, default)``."""
    keys = keys - NOT_DEFAULTS
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            name = node.target.id
            reads_schema = any(
                isinstance(n, ast.Call) and getattr(n.func, "id", None) in READS_SCHEMA for n in ast.walk(node.value)
            )
            if name in keys and not reads_schema:
                found.append(f"line {node.lineno}: field {name} = {ast.unparse(node.value)}")
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and len(node.args) == 2
            and isinstance(node.args[0], ast.Constant)
            and node.args[0].value in keys
        ):
            found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


@pytest.mark.parametrize(("module", "section"), BUILDERS.items())
def test_no_builder_repeats_a_default_of_the_schema(module, section):
    keys = defaulted_keys(section)
    assert {"temperature", "max_tokens", "seed", "threads"} <= keys
    assert repeated_defaults((SRC / module).read_text(encoding="utf-8"), keys) == []


def test_a_repeated_default_is_found():
    """The check above on a planted repetition: a literal field default, a ``.get`` with a default."""
    planted = (
        "@dataclass\nclass J:\n    temperature: float = 0.0\n    top_p: float = float(schema_default('judges', 'top_p'))\n"
        "def build(entry):\n    return entry.get('max_tokens', 256), entry.get('model')\n"
    )
    found = repeated_defaults(planted, defaulted_keys("judges"))
    assert len(found) == 2 and "temperature" in found[0] and "max_tokens" in found[1]


@pytest.mark.parametrize(
    ("cls", "field", "keys"),
    [
        (LLMJudge, "temperature", ("judges", "temperature")),
        (LLMJudge, "top_p", ("judges", "top_p")),
        (LLMJudge, "max_tokens", ("judges", "max_tokens")),
        (LLMJudge, "samples", ("judges", "samples")),
        (Scale, "high", ("judges", "scale", "max")),
        (RecordedJudge, "invalid_labels", ("judges", "invalid_labels")),
        (EmbeddingJudge, "threads", ("judges", "threads")),
        (LLMAssistant, "temperature", ("assistants", "temperature")),
        (LLMAssistant, "max_tokens", ("assistants", "max_tokens")),
    ],
)
def test_a_dataclass_default_is_the_schemas_and_floats_stay_floats(cls, field, keys):
    (default,) = [f.default for f in dataclasses.fields(cls) if f.name == field]
    assert default == schema_default(*keys)
    if cls.__annotations__.get(field) == "float":
        assert isinstance(default, float)  # 0.0, as a request body and its cache key always had it


@pytest.mark.parametrize(
    ("section", "entry"),
    [
        ("judges", {"name": "j", "kind": "llm", "model": "m", "scale": {"max": 1}, "seed": None}),
        ("judges", {"name": "r", "kind": "recorded", "qrels": "q.txt"}),
        ("assistants", {"model": "m", "temperature": 0.7}),
        ("assistants", {"kind": "recorded", "rewrites": "r.jsonl"}),
    ],
)
def test_filled_is_what_validating_the_config_fills_in(section, entry):
    config = {"datasets": DATASETS, section: [copy.deepcopy(entry)] if section == "judges" else {"a": entry}}
    validated = validate_schema(copy.deepcopy(config))
    expected = validated[section][0] if section == "judges" else validated[section]["a"]
    assert filled(entry, section) == expected
    assert filled(entry, section) is not entry and entry == (config[section][0] if section == "judges" else entry)


def test_a_judge_built_from_a_bare_entry_is_the_judge_of_the_validated_config():
    bare = {"name": "j", "kind": "llm", "model": "openai/m"}
    validated = validate_schema({"datasets": DATASETS, "judges": [dict(bare)]})["judges"][0]
    assert judge_from_config(bare, key="judges[j]") == judge_from_config(validated, key="judges[j]")
    recorded = {"name": "r", "kind": "recorded", "qrels": "q.txt", "scale": {"max": 1}, "binary_threshold": 1}
    judge = judge_from_config(recorded, key="judges[r]")
    assert judge.scale == Scale(0, 1, 1) and judge.invalid_labels == schema_default("judges", "invalid_labels")
    assistant = assistant_from_config("a", {"model": "openai/m"}, key="assistants.a")
    assert assistant.max_tokens == schema_default("assistants", "max_tokens")
