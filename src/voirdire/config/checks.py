"""The checks of meaning: what a schema cannot check (system names parse, files exist, a source
has the keys it needs), section by section. Each section's checks live beside what builds its
objects or resolves its defaults: :mod:`~voirdire.config.sections_systems` (datasets, rankers,
runs, systems, oracles, measures), :mod:`~voirdire.config.sections_judges` (judges, assistants,
variants), :mod:`~voirdire.config.sections_probes` (probes and gaming, with
:func:`probes_from_config`, :func:`gaming_from_config`); :mod:`~voirdire.config.found` holds
what they share (the errors of a pass, the file checks). :func:`check` runs them all on a
schema-validated config and returns the :class:`~voirdire.config.plan.Plan`.

A check never changes the config it checks: what a section's defaults depend on (the systems,
the judges) is resolved into new dicts that the Plan holds. Every error is collected (one per
item at least) and raised together at the end.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from ..assistants.declarations import Assistant
from ..errors import raise_all
from ..systems import System
from .found import Found, config_files
from .plan import Plan
from .schema import load
from .sections_judges import check_assistants, check_judges, check_variants
from .sections_probes import check_gaming, check_probes, gaming_from_config, probes_from_config
from .sections_systems import (
    check_datasets,
    check_families,
    check_labels_only,
    check_measures,
    check_oracles,
    check_rankers,
    check_runs,
    check_systems,
    check_without_systems,
)

__all__ = ["check", "gaming_from_config", "load_plan", "probes_from_config"]


def check(config: dict, *, configfile: str | os.PathLike | Iterable[str | os.PathLike] | None = None) -> Plan:
    """Check a schema-validated config for meaning, section by section, and derive the :class:`Plan`.

    Every error is collected (one per item at least: dataset, ranker, run, system, measure,
    judge, assistant, probe, variants group) and raised together at the end; a check that
    builds on a section with errors (the oracles on the systems, the probes on the judges) is
    left for the next round. ``configfile`` (a path or several), when known, lets a relative
    path that is not found say whether it is there relative to the config file.
    """
    with config_files(configfile):
        found = Found()
        check_datasets(config, found)
        rankers = check_rankers(config, found)
        bad_rankers = set(config.get("rankers", {})) - set(rankers)
        mark = found.mark()
        recorded, groups, notes = check_runs(config, rankers, found)
        systems: tuple[System, ...] = ()
        systems_ok = False
        if not found.since(mark):
            mark = found.mark()
            systems = check_systems(config, rankers, recorded, groups, found, skip=bad_rankers)
            systems_ok = not found.since(mark) and not bad_rankers.intersection(config["systems"])
        if systems_ok and systems:
            with found.each():
                check_oracles(config, systems, recorded)
        elif not config["systems"]:
            check_without_systems(config, found)
        check_measures(config, found)
        assistants = check_assistants(config, systems, found, systems_ok=systems_ok)
        mark = found.mark()
        judges = check_judges(config, found)
        judges_ok = not found.since(mark)
        if systems_ok:
            with found.each():
                check_labels_only(config, systems, judges)
        if systems_ok and judges_ok:
            with found.each():
                check_families(config, systems, judges)
        # the sections' defaults, resolved into new dicts (the config is never changed)
        resolved = {
            "probes": probes_from_config(config, systems),
            "gaming": gaming_from_config(config, judges, systems),
        }
        padders: tuple[Assistant, ...] = ()
        if judges_ok:
            padders = check_probes(resolved["probes"], judges, systems, found, systems_ok=systems_ok)
            check_gaming(resolved["gaming"], judges, systems, found, systems_ok=systems_ok)
            check_variants(config, judges, found)
        raise_all(found.errors)
    config = {**config, **{section: value for section, value in resolved.items() if value is not None}}
    return Plan(
        config=config, systems=systems, judges=judges, assistants=assistants, padders=padders, notes=tuple(notes)
    )


def load_plan(path: str | Path) -> Plan:
    """Read, validate and check a config file (a relative path's error names the file's folder)."""
    return check(load(path), configfile=path)
