"""The checks of the judges, assistants and variants sections, beside what builds their objects
(``judge_from_config``, ``assistant_from_config``): each dataset's judges, the assistants and the
rankers of their experiment, the judges each variants group compares."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..assistants.declarations import Assistant, assistant_from_config
from ..errors import ConfigError, item_key
from ..judges import HUMAN, JURY_KEYS, HumanJudge, Judge, judge_from_config, jury_from_config
from ..systems import Ranker, System
from .found import Found, check_file, check_files, not_found

log = logging.getLogger(__name__)


def check_judges(config: dict, found: Found | None = None) -> dict[str, tuple[Judge, ...]]:
    """Each dataset's judges: the humans first, then the configured ones in config order. A
    judge with an error is left out (and a jury with it as a member says so). Juries are built
    last, from the judges they name (:func:`check_juries`)."""
    found = found or Found(strict=True)
    built: dict[int, dict[str, Judge]] = {}  # config index -> dataset -> the judge
    seen: set[str] = set()
    juries: list[int] = []
    for index, entry in enumerate(config["judges"]):
        key = item_key("judges", index, entry)
        with found.each():
            if entry["kind"] != "jury" and (keys := [k for k in JURY_KEYS if k in entry]):
                raise ConfigError(f"only a judge of kind jury has {keys[0]!r}", key=f"{key}.{keys[0]}")
            _check_name(entry, key, seen)
            if entry["kind"] == "jury":
                juries.append(index)
            else:
                built[index] = _check_judge(config, entry, key)
    built |= check_juries(config, juries, built, found)
    judges: dict[str, list[Judge]] = {dataset: [HumanJudge()] for dataset in config["datasets"]}
    for index in sorted(built):
        for dataset, judge in built[index].items():
            judges[dataset].append(judge)
    return {dataset: tuple(items) for dataset, items in judges.items()}


def _check_name(entry: dict, key: str, seen: set[str]) -> None:
    name = entry["name"]
    if name == HUMAN or name in seen:
        raise ConfigError(f"judge name {name!r} is {'reserved' if name == HUMAN else 'used twice'}", key=f"{key}.name")
    seen.add(name)


def _check_judge(config: dict, entry: dict, key: str) -> dict[str, Judge]:
    """One judge that is not a jury, for each dataset it judges."""
    if entry["kind"] != "recorded":
        if entry["kind"] == "llm" and entry.get("prompt_file") and not Path(entry["prompt_file"]).is_file():
            raise not_found(entry["prompt_file"], f"{key}.prompt_file", what="prompt file")
        judge = judge_from_config(entry, key=key)
        return {dataset: judge for dataset in config["datasets"]}
    qrels = entry.get("qrels")
    if qrels is None:
        raise ConfigError("a recorded judge needs 'qrels'", key=f"{key}.qrels")
    per_dataset = isinstance(qrels, dict)
    files = qrels if per_dataset else {d: qrels for d in config["datasets"]}
    built: dict[str, Judge] = {}
    for dataset, path in files.items():
        if dataset not in config["datasets"]:
            raise ConfigError(f"unknown dataset {dataset!r}", key=f"{key}.qrels.{dataset}")
        check_file(path, f"{key}.qrels" + (f".{dataset}" if per_dataset else ""))
        reruns = entry.get("reruns") or []
        by_dataset = isinstance(reruns, dict)
        reruns = reruns.get(dataset, []) if by_dataset else reruns
        for index_rerun, rerun in enumerate(reruns):
            check_file(rerun, f"{key}.reruns" + (f".{dataset}" if by_dataset else "") + f"[{index_rerun}]")
        built[dataset] = judge_from_config({**entry, "qrels": path, "reruns": reruns}, key=key)
    return built


def check_juries(
    config: dict, juries: Sequence[int], built: Mapping[int, Mapping[str, Judge]], found: Found | None = None
) -> dict[int, dict[str, Judge]]:
    """The juries (config indexes ``juries``), each on the datasets every one of its members
    judges, built from ``built`` (config index -> dataset -> judge: the other judges) and from
    each other: a jury may sit on another, never on itself (directly or through another jury).

    Every member is a configured judge other than the humans (the reference a jury is
    measured against), listed once; a member whose own entry has an error leaves the jury out
    with an error that says so. A dataset some member does not judge (a recorded judge whose
    qrels name other datasets) is left out of the jury's, with a warning; none left is an error.
    """
    found = found or Found(strict=True)
    entries = config["judges"]
    index_of: dict[str, int] = {}
    for index, entry in enumerate(entries):
        index_of.setdefault(entry["name"], index)  # a name used twice is the first's (the second is an error)
    done: dict[int, dict[str, Judge]] = {}
    failed: set[int] = set()

    def build(index: int, path: tuple[str, ...]) -> dict[str, Judge] | None:
        if index in done or index in failed:
            return done.get(index)
        entry = entries[index]
        key = item_key("judges", index, entry)
        try:
            members = _jury_members(entry, key, index_of, path)
            per_member: dict[str, dict[str, Judge]] = {}
            for position, name in enumerate(members):
                member = index_of[name]
                own = build(member, (*path, entry["name"])) if member in juries else built.get(member)
                if own is None:
                    raise ConfigError(
                        f"member {name!r} has a config error of its own (reported with its key)",
                        key=f"{key}.members[{position}]",
                    )
                per_member[name] = own
            datasets = [d for d in config["datasets"] if all(d in own for own in per_member.values())]
            if not datasets:
                raise ConfigError(
                    "no dataset has every member of the jury (each member's datasets: "
                    + "; ".join(f"{n}: {', '.join(own) or 'none'}" for n, own in per_member.items())
                    + ")",
                    key=f"{key}.members",
                )
            left_out = [d for d in config["datasets"] if d not in datasets]
            if left_out:
                log.warning(
                    "voirdire: warning: jury %s judges %s only: not every member judges %s",
                    entry["name"],
                    ", ".join(datasets),
                    ", ".join(left_out),
                )
            jury = {
                dataset: jury_from_config(entry, key=key, members={n: own[dataset] for n, own in per_member.items()})
                for dataset in datasets
            }
        except ConfigError as error:
            failed.add(index)
            found.add(error)
            return None
        done[index] = jury
        return jury

    for index in juries:
        build(index, ())
    return done


def _jury_members(entry: dict, key: str, index_of: Mapping[str, int], path: tuple[str, ...]) -> list[str]:
    """The names a jury lists, each checked: a judge of the config, not the humans, not the jury
    itself nor a jury that (through others) contains it, listed once."""
    name = entry["name"]
    members = list(entry.get("members") or [])
    if len(members) < 2:
        raise ConfigError("a jury needs 'members': two or more judges' names", key=f"{key}.members")
    for position, member in enumerate(members):
        at = f"{key}.members[{position}]"
        if member == HUMAN:
            raise ConfigError("the human labels are what a jury is measured against, not a member", key=at)
        if member == name:
            raise ConfigError(f"a jury cannot contain itself ({name!r})", key=at)
        if member in path:
            cycle = " -> ".join((*path[path.index(member) :], name, member))
            raise ConfigError(f"{member!r} is a jury that contains {name!r} ({cycle})", key=at)
        if member not in index_of:
            raise ConfigError(f"no judge named {member!r} (judges: {', '.join(sorted(index_of))})", key=at)
        if member in members[:position]:
            raise ConfigError(f"{member!r} is listed twice", key=at)
    return members


POINTWISE = ("rg", "rankt5", "monot5", "dense")


def checked_assistant(name: str, entry: dict, key: str, **options: Any) -> Assistant:
    """One assistant or padder, its files checked first (a relative path's error says where it
    resolves from)."""
    check_files(entry, ("rewrites",) if entry.get("kind", "llm") == "recorded" else ("prompt_file",), key)
    return assistant_from_config(name, entry, key=key, **options)


def check_assistants(
    config: dict, systems: tuple[System, ...], found: Found | None = None, *, systems_ok: bool = True
) -> tuple[Assistant, ...]:
    """The assistants, and the rankers of their experiment: configured systems, and pointwise
    (checked when the systems are: ``systems_ok``)."""
    found = found or Found(strict=True)
    assistants = []
    for name, entry in config.get("assistants", {}).items():
        with found.each():
            assistants.append(checked_assistant(name, entry, f"assistants.{name}"))
    ranker_methods = {s.name: s.method for s in systems if isinstance(s, Ranker)}
    for index, name in enumerate(config.get("rewriting", {}).get("rankers", []) if systems_ok else []):
        key = item_key("rewriting.rankers", index, name)
        if name not in ranker_methods:
            found.add(ConfigError(f"{name!r} is not a ranker listed under systems:", key=key))
        elif ranker_methods[name] not in POINTWISE:
            found.add(
                ConfigError(
                    f"{name!r} is a {ranker_methods[name]} ranker; Figure 5 needs a pointwise one ({', '.join(POINTWISE)})",
                    key=key,
                )
            )
    rewriting = config["rewriting"]
    if rewriting["min_length_ratio"] >= rewriting["max_length_ratio"]:
        found.add(ConfigError("min_length_ratio must be below max_length_ratio", key="rewriting.min_length_ratio"))
    return tuple(assistants)


def check_variants(config: dict, judges: dict[str, tuple[Judge, ...]], found: Found | None = None) -> None:
    """Each variants group names configured judges on the human labels' scale (kappa compares grades)."""
    found = found or Found(strict=True)
    scales = {j.name: (j.scale.low, j.scale.high) for js in judges.values() for j in js}
    for group, entry in config.get("variants", {}).items():
        with found.each():
            _check_variant_group(group, entry, scales)


def _check_variant_group(group: str, entry: dict, scales: dict[str, tuple[int, int]]) -> None:
    for key, name in [("baseline", entry["baseline"])] + [
        (f"variants[{i}]", v) for i, v in enumerate(entry["variants"])
    ]:
        if name not in scales:
            raise ConfigError(
                f"{name!r} is not a judge (judges: {', '.join(sorted(scales))})", key=f"variants.{group}.{key}"
            )
        if scales[name] != scales[HUMAN]:
            raise ConfigError(
                f"judge {name!r} grades on {scales[name]}, the human labels on {scales[HUMAN]}: "
                "prompt variants are compared grade by grade",
                key=f"variants.{group}.{key}",
            )
    if entry["baseline"] in entry["variants"]:
        raise ConfigError("the baseline is also listed as a variant", key=f"variants.{group}.variants")
