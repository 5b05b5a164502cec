"""The pad probe's LLM padders (``probes.pad.assistants``) have the schema of an assistant: the
schema's ``$ref`` to the ``assistants:`` entry, not a copy. A typo under a padder is one error
naming its key (before, any key passed unread), the padders take an assistant's defaults (and
build the same padder as before those were filled in), and every shipped config still validates."""

from __future__ import annotations

import copy

import pytest
import yaml
from conftest import ROOT

from voirdire.assistants.declarations import assistant_from_config
from voirdire.cli import main as voirdire_cli
from voirdire.config import validate_schema
from voirdire.errors import ConfigError, ConfigErrors
from voirdire.probes.items import PAD_PROMPT

DEMO = ROOT / "config" / "config.yaml"
SHIPPED = sorted([*ROOT.glob("config/*.yaml"), *ROOT.glob(".test/*.yaml")])


def demo() -> dict:
    return yaml.safe_load(DEMO.read_text(encoding="utf-8"))


def padders(config: dict) -> dict:
    return config["probes"]["pad"]["assistants"]


def test_the_demo_has_a_padder_to_typo():
    assert padders(demo()), "config/config.yaml lost its LLM padder: give these tests another one"


def test_a_typo_under_a_padder_is_one_error_naming_the_key():
    config = demo()
    name = next(iter(padders(config)))
    padders(config)[name]["max_tokenz"] = 40
    with pytest.raises(ConfigError) as error:
        validate_schema(config)
    assert not isinstance(error.value, ConfigErrors)  # one error, not several
    assert str(error.value) == (
        f"config key 'probes.pad.assistants.{name}.max_tokenz': unknown key 'max_tokenz' (did you mean 'max_tokens'?)"
    )


def test_voirdire_check_says_it_in_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    config = demo()
    name = next(iter(padders(config)))
    padders(config)[name]["modle"] = "local/smollm2-135m"
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    assert voirdire_cli(["check", "--configfile", str(path)]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert lines == [
        f"voirdire: config key 'probes.pad.assistants.{name}.modle': unknown key 'modle' (did you mean 'model'?)"
    ]


def test_a_wrong_value_under_a_padder_names_its_key():
    config = demo()
    name = next(iter(padders(config)))
    padders(config)[name]["max_tokens"] = 0
    with pytest.raises(
        ConfigError, match=rf"'probes\.pad\.assistants\.{name}\.max_tokens': 0 is less than the minimum"
    ):
        validate_schema(config)


def test_a_padder_takes_an_assistants_keys_and_defaults():
    entry = {"model": "local/smollm2-135m"}
    config = {
        "datasets": {"d": {"source": "ir_datasets", "id": "x"}},
        "assistants": {"a": dict(entry)},
        "probes": {"pad": {"assistants": {"p": dict(entry)}}},
    }
    validate_schema(config)
    assert config["probes"]["pad"]["assistants"]["p"] == config["assistants"]["a"] != entry


def test_the_filled_defaults_build_the_same_padder():
    """The schema now fills a padder's defaults in: the padder built is the one built before."""
    raw = demo()
    filled = validate_schema(copy.deepcopy(raw))
    for name, entry in padders(raw).items():
        key = f"probes.pad.assistants.{name}"
        before = assistant_from_config(name, entry, key=key, prompt=PAD_PROMPT)
        assert assistant_from_config(name, padders(filled)[name], key=key, prompt=PAD_PROMPT) == before


@pytest.mark.parametrize("path", SHIPPED, ids=[str(p.relative_to(ROOT)) for p in SHIPPED])
def test_every_shipped_config_validates(path):
    validate_schema(yaml.safe_load(path.read_text(encoding="utf-8")))


def test_the_shipped_configs_are_found():
    names = {str(p.relative_to(ROOT)) for p in SHIPPED}
    assert {"config/config.yaml", ".test/config.yaml"} <= names
