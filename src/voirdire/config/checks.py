"""The checks of meaning: what a schema cannot check (system names parse, files exist, a source
has the keys it needs), section by section. Each section's checks live beside what builds its
objects or resolves its defaults: :mod:`~voirdire.config.sections_systems` (datasets, rankers,
runs, systems, oracles, measures), :mod:`~voirdire.config.sections_judges` (judges, assistants,
variants), :mod:`~voirdire.config.sections_probes` (probes and gaming, with
:func:`probes_from_config`, :func:`gaming_from_config`); :mod:`~voirdire.config.found` holds
what they share (the errors of a pass, the file checks). :func:`check` runs them all on a
schema-validated config and returns the :class:`~voirdire.config.plan.Plan`. What is not an
error but will be left out by a job is said as a warning and kept in the plan's notes
(:func:`runs_without_texts`: a recorded run's human-judged passages that have no text).

A check never changes the config it checks: what a section's defaults depend on (the systems,
the judges) is resolved into new dicts that the Plan holds. Every error is collected (one per
item at least) and raised together at the end.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

import pandas as pd

from ..assistants.declarations import Assistant
from ..errors import InputError, raise_all
from ..formats import read_qrels, read_rankgpt, read_run, trec_eval_order
from ..judges import Judge
from ..runs import Recorded
from ..systems import System
from .found import Found, config_files
from .plan import Plan
from .schema import load
from .sections_judges import check_assistants, check_judges, check_variants
from .sections_probes import check_gaming, check_probes, gaming_from_config, probes_from_config
from .sections_systems import (
    check_datasets,
    check_families,
    check_fetched_texts,
    check_labels_only,
    check_measures,
    check_oracles,
    check_rankers,
    check_runs,
    check_systems,
    check_without_systems,
)

__all__ = ["check", "gaming_from_config", "load_plan", "probes_from_config", "runs_without_texts"]

log = logging.getLogger(__name__)


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
            with found.each():
                check_fetched_texts(config, systems)
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
    # not errors: what a job will leave out, said before any (recorded runs' passages without texts)
    depth = config["evaluation"].get("depth") or config["bm25"]["depth"]
    notes += warn_runs_without_texts(config, systems, judges, depth)
    config = {**config, **{section: value for section, value in resolved.items() if value is not None}}
    return Plan(
        config=config, systems=systems, judges=judges, assistants=assistants, padders=padders, notes=tuple(notes)
    )


def load_plan(path: str | Path) -> Plan:
    """Read, validate and check a config file (a relative path's error names the file's folder)."""
    return check(load(path), configfile=path)


# ----------------------------------------------------------------------------- warnings
# A RankGPT candidates file holds its own candidates' texts only (DL19's: BM25's top 100), and a
# recorded run may rerank far more (the public monoT5/Rank1 runs rerank BM25's top 1000). A pair
# without a text is not an error: the judges that read texts leave it uncovered (Table 2's
# coverage), the probes, the gamed system and the length audit leave it out and count it. Where the
# texts and the runs are files the config names (source: rankgpt), the check says so, with the
# count. Other sources (a corpus, ir_datasets) hold a text for every passage or are not read here.

TEXT_KINDS = ("llm", "embedding", "baseline")
"""The judges that read passage texts (a baseline reads them too: length, overlap)."""


def runs_without_texts(
    config: dict, systems: Sequence[System], judges: dict[str, tuple[Judge, ...]], depth: int
) -> list[str]:
    """One warning per dataset whose recorded runs retrieve, in their top ``depth``, human-judged
    passages its candidates file has no text for (the count, per run), naming what leaves them
    out. A file that cannot be read is left to the preflight, which names its problem."""
    recorded = [s for s in systems if isinstance(s, Recorded)]
    warnings = []
    for name, spec in config["datasets"].items():
        if not recorded or spec.get("source") != "rankgpt":
            continue
        human = next((j for j in judges.get(name, ()) if j.kind == "human"), None)
        scale = (human.scale.low, human.scale.high) if human is not None else (0, 3)
        try:
            _, _, texts = read_rankgpt(spec["candidates"])
            judged = read_qrels(spec["qrels"], scale)[["query_id", "doc_id"]]
            if spec.get("queries"):
                judged = judged[judged["query_id"].isin(set(spec["queries"]))]
            per_run = {}
            for system in recorded:
                top = trec_eval_order(read_run(system.file(name))).groupby("query_id", sort=False).head(depth)
                per_run[system.name] = top[["query_id", "doc_id"]].merge(judged, on=["query_id", "doc_id"])
        except (InputError, OSError, ValueError, KeyError):
            continue
        pairs = pd.concat(per_run.values(), ignore_index=True).drop_duplicates()
        missing = pairs[~pairs["doc_id"].isin(texts)]
        if not len(missing):
            continue
        counts = ", ".join(f"{run}: {int((~found['doc_id'].isin(texts)).sum())}" for run, found in per_run.items())
        warnings.append(
            f"dataset {name}: {len(missing)} of the {len(pairs)} human-judged pairs in the recorded runs' top {depth} "
            f"({counts}) have no passage text in {spec['candidates']} (it holds its own candidates' texts only): "
            f"{_who(config, judges, name)} leave them out, counted (not an error)"
        )
    return warnings


def _who(config: dict, judges: dict[str, tuple[Judge, ...]], dataset: str) -> str:
    """What leaves a pair without a text out, in this config."""
    who = []
    readers = sorted(j.name for j in judges.get(dataset, ()) if j.kind in TEXT_KINDS)
    if readers:
        who.append(f"the judges that read texts ({', '.join(readers)}: uncovered, in Table 2's coverage)")
    if config.get("probes"):
        who.append("the probes (swap, pad, injection, personas)")
    if config.get("gaming"):
        who.append("the gamed system")
    who.append("the length audit")
    return ", ".join(who[:-1]) + (" and " if len(who) > 1 else "") + who[-1]


def warn_runs_without_texts(
    config: dict, systems: Sequence[System], judges: dict[str, tuple[Judge, ...]], depth: int
) -> list[str]:
    """:func:`runs_without_texts`, each said as a warning (``voirdire: warning: ...``); returned
    for the plan's notes."""
    found = runs_without_texts(config, systems, judges, depth)
    for text in found:
        log.warning("voirdire: warning: %s", text)
    return found
