"""Prompt templates shipped with voirdire (package data, read with :mod:`importlib.resources`).

``umbrela-style.txt`` is the default judge template: UMBRELA-style 0-3 grading written in our
own words (UMBRELA: Upadhyay et al., 2024), with ``{query}`` and ``{passage}`` slots.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path


def path(name: str) -> Path:
    """A shipped template as a file path (a wheel installs package data as plain files)."""
    return Path(str(files(__name__).joinpath(name)))


DEFAULT_PROMPT = path("umbrela-style.txt")
