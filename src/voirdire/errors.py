"""One error type for bad input, which always says where the problem is."""

from __future__ import annotations

from pathlib import Path


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


class ConfigError(InputError):
    """A configuration value that cannot work; raised before any job starts."""
