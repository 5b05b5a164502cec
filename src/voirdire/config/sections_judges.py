"""The checks of the judges, assistants and variants sections, beside what builds their objects
(``judge_from_config``, ``assistant_from_config``): each dataset's judges, the assistants and the
rankers of their experiment, the judges each variants group compares."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..assistants.declarations import Assistant, assistant_from_config
from ..errors import ConfigError, item_key
from ..judges import HUMAN, HumanJudge, Judge, judge_from_config
from ..systems import Ranker, System
from .found import Found, check_file, check_files, not_found


def check_judges(config: dict, found: Found | None = None) -> dict[str, tuple[Judge, ...]]:
    """Each dataset's judges: the humans first, then the configured ones in config order. A
    judge with an error is left out."""
    found = found or Found(strict=True)
    judges: dict[str, list[Judge]] = {dataset: [HumanJudge()] for dataset in config["datasets"]}
    seen: set[str] = set()
    for index, entry in enumerate(config["judges"]):
        with found.each():
            _check_judge(config, entry, item_key("judges", index, entry), seen, judges)
    return {dataset: tuple(items) for dataset, items in judges.items()}


def _check_judge(config: dict, entry: dict, key: str, seen: set[str], judges: dict[str, list[Judge]]) -> None:
    name = entry["name"]
    if name == HUMAN or name in seen:
        raise ConfigError(f"judge name {name!r} is {'reserved' if name == HUMAN else 'used twice'}", key=f"{key}.name")
    seen.add(name)
    if entry["kind"] != "recorded":
        if entry["kind"] == "llm" and entry.get("prompt_file") and not Path(entry["prompt_file"]).is_file():
            raise not_found(entry["prompt_file"], f"{key}.prompt_file", what="prompt file")
        judge = judge_from_config(entry, key=key)
        for dataset in config["datasets"]:
            judges[dataset].append(judge)
        return
    qrels = entry.get("qrels")
    if qrels is None:
        raise ConfigError("a recorded judge needs 'qrels'", key=f"{key}.qrels")
    per_dataset = isinstance(qrels, dict)
    files = qrels if per_dataset else {d: qrels for d in config["datasets"]}
    built: list[tuple[str, Judge]] = []
    for dataset, path in files.items():
        if dataset not in config["datasets"]:
            raise ConfigError(f"unknown dataset {dataset!r}", key=f"{key}.qrels.{dataset}")
        check_file(path, f"{key}.qrels" + (f".{dataset}" if per_dataset else ""))
        reruns = entry.get("reruns") or []
        by_dataset = isinstance(reruns, dict)
        reruns = reruns.get(dataset, []) if by_dataset else reruns
        for index_rerun, rerun in enumerate(reruns):
            check_file(rerun, f"{key}.reruns" + (f".{dataset}" if by_dataset else "") + f"[{index_rerun}]")
        built.append((dataset, judge_from_config({**entry, "qrels": path, "reruns": reruns}, key=key)))
    for dataset, judge in built:
        judges[dataset].append(judge)


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
            found.add(ConfigError(
                f"{name!r} is a {ranker_methods[name]} ranker; Figure 5 needs a pointwise one ({', '.join(POINTWISE)})",
                key=key,
            ))  # fmt: skip
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
            raise ConfigError(f"judge {name!r} grades on {scales[name]}, the human labels on {scales[HUMAN]}: "
                              "prompt variants are compared grade by grade", key=f"variants.{group}.{key}")  # fmt: skip
    if entry["baseline"] in entry["variants"]:
        raise ConfigError("the baseline is also listed as a variant", key=f"variants.{group}.variants")
