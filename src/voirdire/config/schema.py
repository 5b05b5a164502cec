"""The config schema (``voirdire/schema.yaml``, package data): shapes and defaults, the one
home of every default a schema can state (:func:`schema_default`, from :mod:`voirdire.defaults`,
reads one).

:func:`validate_schema` validates a config against it and fills its defaults in (as Snakemake's
``validate`` does); every schema error is one line naming its key (:func:`voirdire.errors.key_of`),
all of them at once. The checks of meaning come next (:mod:`voirdire.config.checks`).
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

from ..defaults import SCHEMA, schema_default
from ..defaults import read_schema as _read_schema
from ..defaults import schema_doc as _schema_doc
from ..errors import ConfigError, key_of, raise_all

__all__ = ["SCHEMA", "as_plain", "config_hash", "load", "schema_default", "shown", "validate_schema"]


_LONG = 300  # a schema message longer than this (a big instance's repr) is cut


def _short(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


_KINDS = {
    "string": "a string",
    "object": "a mapping",
    "array": "a list",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "null": "null",
}


def _expected(schema: dict) -> str:
    """What one branch of a oneOf/anyOf accepts, in words."""
    if "const" in schema:
        return repr(schema["const"])
    if "enum" in schema:
        return "one of " + ", ".join(map(repr, schema["enum"]))
    kinds = schema.get("type")
    kinds = [kinds] if isinstance(kinds, str) else kinds or []
    return " or ".join(_KINDS.get(k, k) for k in kinds) or "another shape"


def _schema_message(error) -> str:
    """jsonschema's message on one line, a oneOf/anyOf in words, a long instance cut short."""
    if error.validator in ("oneOf", "anyOf") and error.context and isinstance(error.validator_value, list):
        message = f"{_short(error.instance)} is not {' nor '.join(_expected(s) for s in error.validator_value)}"
    else:
        message = " ".join(error.message.split())
    return message if len(message) <= _LONG else message[: _LONG - 3] + "..."


def _schema_lines(error, config: dict) -> list[tuple[list, str, str]]:
    """The path, key and message of one schema error; a key the schema does not know is named itself
    (``judges[x].colour: unknown key``), with the nearest known key when one is close."""
    path = list(error.absolute_path)
    if error.validator in ("oneOf", "anyOf") and error.context:
        # the one branch of the shape the value has (a mapping whose entry is wrong): its errors
        branches: dict[Any, list] = {}
        for sub in error.context:
            branches.setdefault(sub.schema_path[0], []).append(sub)
        meant = [
            subs
            for subs in branches.values()
            if not any(s.validator in ("type", "const", "enum") and not s.path for s in subs)
        ]
        if len(meant) == 1:
            return [line for sub in meant[0] for line in _schema_lines(sub, config)]
    known = error.schema.get("properties") if isinstance(error.schema, dict) else None
    if error.validator == "additionalProperties" and error.validator_value is False and isinstance(known, dict):
        lines = []
        for name in [k for k in error.instance if k not in known]:
            close = difflib.get_close_matches(str(name), list(known), n=1)
            if close:
                hint = f" (did you mean {close[0]!r}?)"
            elif len(known) <= 10:
                hint = f"; expected one of {', '.join(known)}"
            else:
                hint = f"; the keys allowed here are in {shown(SCHEMA)}"
            lines.append(([*path, name], key_of([*path, name], config), f"unknown key {name!r}{hint}"))
        if lines:
            return lines
    return [(path, key_of(path, config), _schema_message(error))]


def _path_order(path: Iterable[Any]) -> list[tuple]:
    return [(0, part, "") if isinstance(part, int) else (1, 0, str(part)) for part in path]


@functools.cache
def _workflow_schema() -> dict:
    """The shipped schema with every registered audit's settings (voirdire.audits.registry)."""
    from ..audits.registry import with_settings

    return with_settings(_schema_doc())


def validate_schema(config: dict, schema: str | Path = SCHEMA) -> dict:
    """Validate ``config`` in place against the schema, filling defaults (as Snakemake's
    ``validate`` does); every schema error is one line naming its key (all of them at once:
    :class:`~voirdire.errors.ConfigErrors` when there are several)."""
    import jsonschema

    schema_doc = _workflow_schema() if Path(schema) == SCHEMA else _read_schema(schema)
    base = jsonschema.Draft202012Validator

    def set_defaults(validator, properties, instance, schema_node):
        for name, sub in properties.items():
            if isinstance(instance, dict) and "default" in sub:
                instance.setdefault(name, json.loads(json.dumps(sub["default"])))
        yield from base.VALIDATORS["properties"](validator, properties, instance, schema_node)

    validator_cls = jsonschema.validators.extend(base, {"properties": set_defaults})
    found = [line for error in validator_cls(schema_doc).iter_errors(config) for line in _schema_lines(error, config)]
    errors: list[ConfigError] = []
    seen: set[tuple[str, str]] = set()
    for _, key, message in sorted(found, key=lambda line: _path_order(line[0])):  # in config order
        if (key, message) not in seen:
            seen.add((key, message))
            errors.append(ConfigError(message, key=key))
    raise_all(errors)
    return config


def load(path: str | Path) -> dict:
    """Read a YAML config and validate it against the schema."""
    path = Path(path)
    if not path.is_file():
        where = "" if path.is_absolute() else f" (relative paths resolve from the working directory, {Path.cwd()})"
        raise ConfigError(f"config file not found{where}", path=path)
    with path.open(encoding="utf-8") as fh:
        try:
            config = yaml.safe_load(fh) or {}
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
            column = "" if mark is None else f" at column {mark.column + 1}"
            raise ConfigError(
                f"not valid YAML{column}: {problem}", path=path, line=None if mark is None else mark.line + 1
            ) from None
    return validate_schema(config)


def config_hash(config: dict) -> str:
    """SHA-256 of the config in canonical JSON: equal hashes, equal settings."""
    canonical = json.dumps(config, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def shown(path: Path) -> str:
    """A path as a user reads it: relative to the working directory when it is under it."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def as_plain(value: Any) -> Any:
    """Snakemake's config objects as plain dicts/lists (for hashing and JSON)."""
    return json.loads(json.dumps(value, default=str))
