"""The checks of the datasets, rankers, runs, systems, oracles and measures sections, beside what
builds their objects (:class:`~voirdire.systems.Ranker`, ``recorded_from_config``,
``parse_system``): the systems of the Plan, and the checks that read them (a labels-only
dataset, a config without systems, the declared families)."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from difflib import get_close_matches
from pathlib import Path
from typing import Any

from ..errors import ConfigError, InputError, item_key
from ..judges import Judge
from ..llm.endpoint import KEYS as ENDPOINT_KEYS
from ..llm.endpoint import Endpoint
from ..runs import Recorded, recorded_from_config
from ..systems import BM25, Ranker, System, parse_system
from ..textsource import shard_files, source_of
from .found import Found, check_file, not_found
from .plan import fetched_texts, labels_only

# Keys each dataset source needs (beyond `source`).
REQUIRED = {
    "ir_datasets": ("id",),
    "local": ("topics", "qrels"),
    "rankgpt": ("candidates", "qrels"),
}
FILE_KEYS = ("topics", "qrels", "corpus", "candidates")

log = logging.getLogger(__name__)


def check_datasets(config: dict, found: Found | None = None) -> None:
    """Each dataset has the keys its source needs, and the files it names exist."""
    found = found or Found(strict=True)
    for name, spec in config["datasets"].items():
        source = spec["source"]
        for needed in REQUIRED[source]:
            if needed not in spec:
                found.add(ConfigError(f"source {source!r} needs '{needed}'", key=f"datasets.{name}.{needed}"))
        if source == "ir_datasets" and "corpus" not in spec and "prebuilt" not in spec.get("index", {}):
            found.add(
                ConfigError(
                    f"source {source!r} needs a 'corpus' to index or 'index: {{prebuilt: NAME}}'",
                    key=f"datasets.{name}",
                )
            )
        for key in FILE_KEYS:
            if key in spec:
                with found.each():
                    check_file(spec[key], f"datasets.{name}.{key}")
        if "texts" in spec:
            with found.each():
                check_texts(name, spec)


def check_texts(name: str, spec: dict) -> None:
    """A ``texts:`` entry (voirdire.textsource): a local dataset without a BM25 pool, one source,
    and its index folder or segment files there (a prebuilt name is fetched by the job)."""
    key = f"datasets.{name}.texts"
    if spec["source"] != "local" or "corpus" in spec or "prebuilt" in spec.get("index", {}):
        raise ConfigError(
            "texts: is for a local dataset without a corpus or index (its systems are recorded runs); "
            "a dataset with a BM25 pool reads its texts from that",
            key=key,
        )
    try:
        kind, where = source_of(spec["texts"])
    except InputError as error:
        raise ConfigError(error.message, key=key) from None
    if kind == "index" and not Path(where).is_dir():
        raise not_found(where, f"{key}.index", what="index folder")
    if kind == "segments":
        try:
            shard_files(where)
        except InputError:
            raise not_found(where, f"{key}.segments", what="segment file, folder or glob") from None


def check_rankers(config: dict, found: Found | None = None) -> dict[str, Ranker]:
    """The configured LLM rerankers by name; an API ranker (backend litellm) gets an endpoint.
    A ranker with an error is left out."""
    found = found or Found(strict=True)
    depth = config["bm25"]["depth"]
    rankers = {}
    for name, spec in config.get("rankers", {}).items():
        with found.each():
            key = f"rankers.{name}"
            try:
                builtin = parse_system(name, depth=depth)
            except ConfigError:
                builtin = None
            if builtin is not None:
                raise ConfigError(f"ranker name {name!r} is taken by {builtin}", key=key)
            backend = spec["backend"]
            if spec["method"] in ("rankt5", "monot5", "dense") and backend != "transformers":
                raise ConfigError("T5 and dense rankers run with transformers only", key=f"{key}.backend")
            endpoint = Endpoint.from_config(spec, key=key) if backend == "litellm" else None
            own = {k: v for k, v in spec.items() if k not in ENDPOINT_KEYS or k == "model"}
            rankers[name] = Ranker(name=name, endpoint=endpoint, **own)
    return rankers


def check_runs(
    config: dict, rankers: dict[str, Ranker], found: Found | None = None
) -> tuple[dict[str, Recorded], dict[str, list[str]], list[str]]:
    """The recorded systems by name, the systems each ``runs:`` key stands for, and notes for
    the log (runs named by their file stem because their tags clash)."""
    found = found or Found(strict=True)
    datasets = list(config["datasets"])
    depth = config["bm25"]["depth"]
    recorded: dict[str, Recorded] = {}
    groups: dict[str, list[str]] = {}
    notes: list[str] = []
    for group, entry in config.get("runs", {}).items():
        with found.each():
            key = f"runs.{group}"
            if group in rankers:
                raise ConfigError(f"{group!r} is both a run and a ranker (rankers.{group})", key=key)
            spec = entry["path"]
            for dataset, raw in spec.items() if isinstance(spec, dict) else [(d, spec) for d in datasets]:
                if dataset in datasets and not Path(raw).exists():
                    where = f"{key}.path" + (f".{dataset}" if isinstance(spec, dict) else "")
                    raise not_found(raw, where, what="file or folder")
            systems, more = recorded_from_config(group, entry, datasets, key=key)
            for system in systems:
                try:
                    builtin = parse_system(system.name, depth=depth)
                except ConfigError:
                    builtin = None
                if builtin is not None:
                    raise ConfigError(f"run name {system.name!r} is taken by {builtin}", key=key)
                clash = "a ranker" if system.name in rankers else "another run" if system.name in recorded else None
                if clash:
                    raise ConfigError(f"run name {system.name!r} is also the name of {clash}", key=key)
            notes += more
            recorded.update((system.name, system) for system in systems)
            groups[group] = [s.name for s in systems]
    return recorded, groups, notes


def check_systems(
    config: dict,
    rankers: dict[str, Ranker],
    recorded: dict[str, Recorded],
    groups: dict[str, list[str]],
    found: Found | None = None,
    *,
    skip: Iterable[str] = (),
) -> tuple[System, ...]:
    """Every name under ``systems:`` parses to one system (a ``runs:`` folder key to all of its
    runs), and none repeats. Names in ``skip`` (rankers with errors of their own) are passed over."""
    found = found or Found(strict=True)
    skip = set(skip)
    systems: list[System] = []
    if len(config["systems"]) == 1:
        found.add(
            ConfigError(
                "one system cannot be ranked against others: list two or more, or none to audit "
                "the judges' label sets alone",
                key="systems",
            )
        )
    for index, name in enumerate(config["systems"]):
        if name in skip:
            continue
        key = item_key("systems", index, name)
        names = groups.get(name, [name]) if name not in recorded else [name]
        with found.each():
            for each in names:
                system = parse_system(each, depth=config["bm25"]["depth"], key=key, rankers=rankers, recorded=recorded)
                if system in systems:
                    raise ConfigError(f"{each!r} repeats {system}", key=key)
                systems.append(system)
    return tuple(systems)


TEXT_JUDGES = ("llm", "embedding", "baseline")


def check_labels_only(config: dict, systems: tuple[System, ...], judges: dict[str, tuple[Judge, ...]]) -> None:
    """A labels-only dataset (no corpus) has no texts: what reads texts is a config error."""
    bare = [name for name, spec in config["datasets"].items() if labels_only(spec)]
    if not bare:
        return
    where = f"dataset {bare[0]!r} is labels-only (source local without a corpus)"
    for index, name in enumerate(config["systems"]):
        system = next((s for s in systems if str(s) == name), None)
        if isinstance(system, (BM25, Ranker)):
            raise ConfigError(
                f"{where}: {name} needs passage texts; list recorded runs and oracles",
                key=item_key("systems", index, name),
            )
    for index, entry in enumerate(config["judges"]):
        if entry["kind"] in TEXT_JUDGES:
            raise ConfigError(
                f"{where}: a judge of kind {entry['kind']} reads passage texts",
                key=f"{item_key('judges', index, entry)}.kind",
            )
    for section in ("assistants", "probes", "gaming"):
        if config.get(section):
            raise ConfigError(f"{where}: the {section} read passage texts", key=section)
    if config["oracles"]["base"] == "BM25" and any(not isinstance(s, (Recorded,)) for s in systems):
        raise ConfigError(
            f"{where}: the oracles need a base run; set oracles.base to a recorded run", key="oracles.base"
        )


def check_fetched_texts(config: dict, systems: tuple[System, ...]) -> None:
    """A dataset whose texts are fetched for its needed pairs (``texts:``) has no BM25 pool: BM25
    and the rankers (which rerank the pool) are config errors, the oracles need a recorded base
    run, and the assistants experiment (which samples beyond the needed pairs) is not supported."""
    fetched = [name for name, spec in config["datasets"].items() if fetched_texts(spec)]
    if not fetched:
        return
    where = f"dataset {fetched[0]!r} fetches its texts (texts:) and has no BM25 pool"
    for index, name in enumerate(config["systems"]):
        system = next((s for s in systems if str(s) == name), None)
        if isinstance(system, (BM25, Ranker)):
            raise ConfigError(
                f"{where}: {name} needs one; list recorded runs and oracles", key=item_key("systems", index, name)
            )
    if config.get("assistants"):
        raise ConfigError(f"{where}: the assistants experiment samples passages beyond it", key="assistants")
    if config["oracles"]["base"] == "BM25" and any(not isinstance(s, Recorded) for s in systems):
        raise ConfigError(
            f"{where}: the oracles need a base run; set oracles.base to a recorded run", key="oracles.base"
        )


NEEDS_SYSTEMS = (
    ("assistants", "the assistants experiment scores the systems on rewritten passages"),
    ("probes.swap.lists", "the swap test of result lists compares the systems' lists"),
    ("probes.personas", "persona-conditioned judging measures how the systems' ranking moves"),
    ("variants", "prompt sensitivity measures how the systems' ranking moves"),
    ("gaming", "the gamed system is put on the systems' leaderboard"),
)
"""Sections that compare systems, so need ``systems:``, and why."""


def check_without_systems(config: dict, found: Found | None = None) -> None:
    """Without ``systems:`` (the judges' label sets audited alone), what compares systems is a
    config error naming its key."""
    found = found or Found(strict=True)
    for key, why in NEEDS_SYSTEMS:
        node: Any = config
        for part in key.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        if node:
            found.add(
                ConfigError(f"no systems are listed (systems:), and {why}: list systems, or leave {key} out", key=key)
            )


def check_oracles(config: dict, systems: tuple[System, ...], recorded: dict[str, Recorded]) -> None:
    """``oracles.base`` is BM25 or a recorded run."""
    base = config["oracles"]["base"]
    if base != "BM25" and base not in recorded:
        raise ConfigError(
            f"{base!r} is not a recorded run (runs: {', '.join(sorted(recorded)) or 'none'}); the oracles "
            "reorder BM25 or a recorded run",
            key="oracles.base",
        )
    if base != "BM25" and not any(str(s) == base for s in systems):
        raise ConfigError(f"the oracles' base run {base!r} is not listed under systems:", key="oracles.base")


def near_families(family: str, others: Iterable[str]) -> list[str]:
    """The families of ``others`` spelled near ``family``: the same but for case, close by difflib,
    or one a part of the other's name (``t5`` of ``flan-t5``)."""

    def parts(name: str) -> set[str]:
        return set(re.split(r"[^a-z0-9]+", name.lower())) - {""}

    found = []
    for other in others:
        if other == family:
            continue
        low, other_low = family.lower(), other.lower()
        if low == other_low or other_low in parts(family) or low in parts(other):
            found.append(other)
        elif get_close_matches(family, [other], n=1, cutoff=0.6):
            found.append(other)
    return found


def check_families(config: dict, systems: tuple[System, ...], judges: dict[str, tuple[Judge, ...]]) -> None:
    """A family one judge or system alone declares, spelled close to another declared family, is
    a typo until the user says otherwise (``audits.self_preference.similar_families: allow``):
    self-preference would quietly become n/a, or compare with another panel. A judge's family that
    no system has but one a part of a system's (``flan-t5`` and ``t5``) is a warning in the log:
    its own-family audit is n/a."""
    from ..systems import family_of

    if config["audits"]["self_preference"]["similar_families"] == "allow":
        return
    declared: dict[str, dict[str, str]] = {}  # family -> who -> config key
    for system in systems:
        family = family_of(system)
        if family:
            section = "rankers" if isinstance(system, Ranker) else "runs"
            declared.setdefault(family, {})[f"system {system}"] = f"{section}.{system}.family"
    for judge in {j.name: j for js in judges.values() for j in js}.values():
        if getattr(judge, "family", None):
            declared.setdefault(judge.family, {})[f"judge {judge.name}"] = f"judges[{judge.name}].family"
    reported: set[frozenset[str]] = set()
    for family, who in declared.items():
        if len(who) > 1:
            continue
        close = get_close_matches(family, [f for f in declared if f != family], n=1, cutoff=0.6)
        if not close or frozenset((family, close[0])) in reported:
            continue
        reported.add(frozenset((family, close[0])))
        # the judge's side is what self-preference reads: name its key where one side is a judge
        sides = sorted(
            [(family, *next(iter(who.items()))), (close[0], *next(iter(declared[close[0]].items())))],
            key=lambda side: not side[1].startswith("judge"),
        )
        (first, declarer, key), (other, other_declarer, _) = sides
        raise ConfigError(
            f"family {first!r} of {declarer} is declared by nothing else, and spelled like {other!r} of "
            f"{other_declarer}: did you mean {other!r}? (audits.self_preference.similar_families: allow keeps both)",
            key=key,
        )
    system_families = sorted({f for system in systems if (f := family_of(system))})
    for judge in {j.name: j for js in judges.values() for j in js}.values():
        family = getattr(judge, "family", None)
        near = near_families(family, system_families) if family and family not in system_families else []
        if near:
            log.warning(
                "judges[%s].family: %r is no system's family, but spelled near %s of the systems: the "
                "own-family audit of judge %s is n/a (the same family? give both one name)",
                judge.name,
                family,
                ", ".join(map(repr, near)),
                judge.name,
            )


def check_measures(config: dict, found: Found | None = None) -> None:
    """Every measure parses in ir_measures' syntax."""
    from ..evaluation import parse_measure

    found = found or Found(strict=True)
    for index, text in enumerate(config["evaluation"]["measures"]):
        with found.each():
            parse_measure(text, key=item_key("evaluation.measures", index, text))
    evaluation = config["evaluation"]
    if evaluation["test"] == "tukey" and evaluation["correction"] != "none":
        found.add(
            ConfigError(
                "randomized Tukey HSD holds the family-wise error over every pair itself: "
                "set correction: none, or choose test: t or randomization",
                key="evaluation.correction",
            )
        )
    # each registered audit's own check of its settings (voirdire.audits.registry)
    from ..audits.registry import load

    for declared in load().values():
        if declared.check is not None:
            with found.each():
                declared.check(config)
