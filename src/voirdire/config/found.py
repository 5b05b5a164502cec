"""The errors of one check pass (:class:`Found`), and the checks of the files a config names: a
path that is not there is an error that says where a relative path resolves from
(:func:`not_found`), and names the file when it is there relative to the config file."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

from ..errors import ConfigError, InputError
from .schema import shown


class Found:
    """The errors of one check pass. A check runs each item in ``with found.each():``, which
    keeps the item's error and goes on with the next item; a strict one (a check called on its
    own) raises the first error as it comes."""

    def __init__(self, *, strict: bool = False) -> None:
        self.errors: list[InputError] = []
        self.strict = strict

    @contextmanager
    def each(self) -> Iterator[None]:
        try:
            yield
        except InputError as error:
            if self.strict:
                raise
            self.errors.extend(error.errors)

    def add(self, error: InputError) -> None:
        with self.each():
            raise error

    def mark(self) -> int:
        return len(self.errors)

    def since(self, mark: int) -> bool:
        """Whether an error was found since ``mark``."""
        return len(self.errors) > mark


_CONFIG_DIRS: ContextVar[tuple[Path, ...]] = ContextVar("voirdire_config_dirs", default=())
"""The folders of the config files being checked (other than the working directory), for the
"did you mean" of a relative path that is not found."""


def _config_dirs(configfile: str | os.PathLike | Iterable[str | os.PathLike] | None) -> tuple[Path, ...]:
    if configfile is None:
        return ()
    paths = [configfile] if isinstance(configfile, (str, os.PathLike)) else list(configfile)
    cwd = Path.cwd()
    folders: list[Path] = []
    for path in paths:
        folder = Path(os.path.abspath(path)).parent
        if folder != cwd and folder not in folders:
            folders.append(folder)
    return tuple(folders)


@contextmanager
def config_files(configfile: str | os.PathLike | Iterable[str | os.PathLike] | None) -> Iterator[None]:
    """While checking the config of ``configfile`` (a path or several, or None when unknown):
    :func:`not_found` looks for a relative path in their folders too."""
    token = _CONFIG_DIRS.set(_config_dirs(configfile))
    try:
        yield
    finally:
        _CONFIG_DIRS.reset(token)


def not_found(value: str | Path, key: str, *, what: str = "file") -> ConfigError:
    """The error of a config path that is not there: a relative one says that it resolves
    from the working directory, and names the file if it is there relative to the config file."""
    message = f"{what} not found: {value}"
    path = Path(value)
    if not path.is_absolute():
        message += f" (relative paths resolve from the working directory, {Path.cwd()})"
        for folder in _CONFIG_DIRS.get():
            there = Path(os.path.normpath(folder / path))
            if there.exists():
                message += f"; did you mean {shown(there)} (relative to the config file)?"
                break
    return ConfigError(message, key=key)


def check_file(value: str, key: str) -> None:
    if not Path(value).is_file():
        raise not_found(value, key)


def check_files(entry: dict, names: Iterable[str], key: str) -> None:
    """The files an entry names under ``names`` (those it gives) exist."""
    for name in names:
        if isinstance(entry.get(name), str):
            check_file(entry[name], f"{key}.{name}")
