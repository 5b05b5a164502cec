"""The config schema (``voirdire/schema.yaml``, package data) as the one home of every default.

The schema states each key's default once; Snakemake's ``validate`` and
:func:`voirdire.config.validate_schema` fill them into a config, and the code that builds a judge,
an assistant or a ranker reads them here rather than repeating them: a dataclass's default is
:func:`schema_default` of its key, and an entry built from a config is :func:`filled` before its
keys are read. This module imports nothing else of voirdire, so any module may read a default
(:mod:`voirdire.judges` does, which :mod:`voirdire.config` imports).
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Mapping
from importlib.resources import files
from pathlib import Path
from typing import Any

import yaml

SCHEMA = Path(str(files("voirdire").joinpath("schema.yaml")))
"""The config schema, shipped as package data (an installed wheel carries it)."""


def read_schema(path: str | Path) -> dict:
    """A schema file, parsed by libyaml's loader where PyYAML has it (the schema is read at every
    Snakemake start, a Slurm job's included: the pure-Python loader took ten times longer)."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    with open(path, encoding="utf-8") as fh:
        return yaml.load(fh, Loader=loader)


@functools.cache
def schema_doc() -> dict:
    """The workflow's schema, parsed once per process (nothing here changes it: callers get copies)."""
    return read_schema(SCHEMA)


def _node(keys: tuple[str, ...]) -> dict:
    """The schema of the key ``keys`` names; a list's items and a mapping's entries (a judge, a
    ranker, an assistant) are passed through: their keys follow the section's name."""
    node = schema_doc()
    for key in keys:
        for where in (node, node.get("items"), node.get("additionalProperties")):
            if isinstance(where, dict) and key in where.get("properties", {}):
                node = where["properties"][key]
                break
        else:
            raise KeyError(f"the schema has no key {'.'.join(keys)}")
    return node


def schema_default(*keys: str) -> Any:
    """The schema's default of one config key, a fresh copy: ``schema_default("judges",
    "temperature")``. A list's items and a mapping's entries (a judge, a ranker) are passed
    through: their keys follow the section's name. KeyError when the key has no default."""
    node = _node(keys)
    if "default" not in node:
        raise KeyError(f"the schema gives {'.'.join(keys)} no default")
    return copy.deepcopy(node["default"])


def filled(entry: Mapping, *section: str) -> dict:
    """A copy of ``entry``, one item of the config section ``section`` names (``"judges"``, or
    ``"assistants"``: one entry of the list or mapping), with the schema's default of every key
    it leaves out filled in, in nested mappings too (a judge's ``scale``), as validating the
    config fills them. A key given, None included, is kept as given. Code that builds an object
    from an entry reads ``entry[key]`` after this, never a default of its own."""
    node = _node(section) if section else schema_doc()
    for where in (node.get("items"), node.get("additionalProperties"), node):
        if isinstance(where, dict) and "properties" in where:
            return _fill(entry, where)
    return dict(entry)


def _fill(value: Mapping, node: dict) -> dict:
    value = dict(value)
    for name, sub in node.get("properties", {}).items():
        if name not in value and "default" in sub:
            value[name] = copy.deepcopy(sub["default"])
        if isinstance(value.get(name), Mapping) and "properties" in sub:
            value[name] = _fill(value[name], sub)
    return value
