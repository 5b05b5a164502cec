"""One error type for bad input, which always says where the problem is.

Config keys are written one way everywhere: dotted, with a list item named by its ``name``
where it has one (``judges[monot5-3b].kind``), a system by its text (``systems[Swap[1]]``),
and any other list item by its position (``evaluation.measures[0]``); see :func:`item_key`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any


class InputError(ValueError):
    """Bad user input: names the file and line, or the config key, at fault."""

    def __init__(
        self,
        message: str,
        *,
        path: str | Path | None = None,
        line: int | None = None,
        key: str | None = None,
    ) -> None:
        self.message = message
        self.path = None if path is None else str(path)
        self.line = line
        self.key = key
        where = []
        if self.path is not None:
            where.append(self.path if line is None else f"{self.path}:{line}")
        if key is not None:
            where.append(f"config key '{key}'")
        super().__init__(f"{', '.join(where)}: {message}" if where else message)

    @property
    def errors(self) -> list[InputError]:
        """The single errors this one stands for: itself (:class:`ConfigErrors`: all of them)."""
        return [self]

    @property
    def lines(self) -> list[str]:
        """What a user reads: one line per error (print each after ``voirdire: ``)."""
        return [str(error) for error in self.errors]


class ConfigError(InputError):
    """A configuration value that cannot work; raised before any job starts."""


class ConfigErrors(ConfigError):
    """Several config errors found in one pass, reported together: one line each.

    ``str()`` is their lines joined by newlines; ``key``, ``path`` and ``message`` are the
    first error's, so a caller that reads one error still reads a true one.
    """

    def __init__(self, errors: Iterable[InputError]) -> None:
        flat = [single for error in errors for single in error.errors]
        if not flat:
            raise ValueError("ConfigErrors needs at least one error")
        self._errors = flat
        first = flat[0]
        ValueError.__init__(self, "\n".join(str(error) for error in flat))
        self.message, self.path, self.line, self.key = first.message, first.path, first.line, first.key

    @property
    def errors(self) -> list[InputError]:
        return list(self._errors)

    def __reduce__(self):  # picklable (a job's error may cross a process boundary)
        return (ConfigErrors, (self._errors,))


def raise_all(errors: Sequence[InputError]) -> None:
    """Raise nothing, the one error as it is, or several as one :class:`ConfigErrors`."""
    flat = [single for error in errors for single in error.errors]
    if len(flat) == 1:
        raise flat[0]
    if flat:
        raise ConfigErrors(flat)


def item_key(section: str, index: int, item: Any) -> str:
    """The key of one list item under ``section``: by its ``name`` where it has one
    (``judges[monot5-3b]``), a system by its text (``systems[Swap[1]]``), else by position
    (``evaluation.measures[0]``)."""
    if isinstance(item, dict) and isinstance(item.get("name"), str) and item["name"]:
        return f"{section}[{item['name']}]"
    if section.rsplit(".", 1)[-1] == "systems" and isinstance(item, str) and item:
        return f"{section}[{item}]"
    return f"{section}[{index}]"


def key_of(path: Iterable[Any], config: Any) -> str:
    """The config key of a location given as a list of dict keys and list indexes (as
    jsonschema's ``absolute_path``), in :func:`item_key`'s notation; ``(top level)`` for the
    config itself."""
    key = ""
    node = config
    for part in path:
        if isinstance(part, int) and isinstance(node, list):
            item = node[part] if 0 <= part < len(node) else None
            key = item_key(key or "(top level)", part, item)
            node = item
        else:
            key = f"{key}.{part}" if key else str(part)
            node = node.get(part) if isinstance(node, dict) else None
    return key or "(top level)"
