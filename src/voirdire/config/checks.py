"""The checks of meaning: what a schema cannot check (system names parse, files exist, a source
has the keys it needs), section by section, each beside what builds the section's objects
(``judge_from_config``, ``recorded_from_config``, ...) or resolves its defaults
(:func:`probes_from_config`, :func:`gaming_from_config`). :func:`check` runs them all on a
schema-validated config and returns the :class:`~voirdire.config.plan.Plan`.

A check never changes the config it checks: what a section's defaults depend on (the systems,
the judges) is resolved into new dicts that the Plan holds. Every error is collected (one per
item at least) and raised together at the end.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from ..assistants.declarations import Assistant, assistant_from_config
from ..errors import ConfigError, InputError, item_key, raise_all
from ..judges import HUMAN, HumanJudge, Judge, judge_from_config
from ..llm.endpoint import KEYS as ENDPOINT_KEYS
from ..llm.endpoint import Endpoint
from ..probes.items import LISTS_PROMPT, PAD_METHODS, PAD_PROMPT, PAIRWISE_PROMPT, require_slots
from ..probes.personas import read_persona_pool
from ..runs import Recorded, recorded_from_config
from ..systems import BM25, Perfect, Ranker, Swap, System, parse_system
from .plan import Plan, labels_only
from .schema import load, schema_default, shown

# Keys each dataset source needs (beyond `source`).
REQUIRED = {
    "ir_datasets": ("id",),
    "local": ("topics", "qrels"),
    "rankgpt": ("candidates", "qrels"),
}
FILE_KEYS = ("topics", "qrels", "corpus", "candidates")


class _Found:
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


def _check_file(value: str, key: str) -> None:
    if not Path(value).is_file():
        raise not_found(value, key)


def _check_files(entry: dict, names: Iterable[str], key: str) -> None:
    """The files an entry names under ``names`` (those it gives) exist."""
    for name in names:
        if isinstance(entry.get(name), str):
            _check_file(entry[name], f"{key}.{name}")


def _check_datasets(config: dict, found: _Found | None = None) -> None:
    """Each dataset has the keys its source needs, and the files it names exist."""
    found = found or _Found(strict=True)
    for name, spec in config["datasets"].items():
        source = spec["source"]
        for needed in REQUIRED[source]:
            if needed not in spec:
                found.add(ConfigError(f"source {source!r} needs '{needed}'", key=f"datasets.{name}.{needed}"))
        if source == "ir_datasets" and "corpus" not in spec and "prebuilt" not in spec.get("index", {}):
            found.add(ConfigError(
                f"source {source!r} needs a 'corpus' to index or 'index: {{prebuilt: NAME}}'",
                key=f"datasets.{name}",
            ))  # fmt: skip
        for key in FILE_KEYS:
            if key in spec:
                with found.each():
                    _check_file(spec[key], f"datasets.{name}.{key}")


def _check_rankers(config: dict, found: _Found | None = None) -> dict[str, Ranker]:
    """The configured LLM rerankers by name; an API ranker (backend litellm) gets an endpoint.
    A ranker with an error is left out."""
    found = found or _Found(strict=True)
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


def _check_runs(
    config: dict, rankers: dict[str, Ranker], found: _Found | None = None
) -> tuple[dict[str, Recorded], dict[str, list[str]], list[str]]:
    """The recorded systems by name, the systems each ``runs:`` key stands for, and notes for
    the log (runs named by their file stem because their tags clash)."""
    found = found or _Found(strict=True)
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


def _check_systems(
    config: dict,
    rankers: dict[str, Ranker],
    recorded: dict[str, Recorded],
    groups: dict[str, list[str]],
    found: _Found | None = None,
    *,
    skip: Iterable[str] = (),
) -> tuple[System, ...]:
    """Every name under ``systems:`` parses to one system (a ``runs:`` folder key to all of its
    runs), and none repeats. Names in ``skip`` (rankers with errors of their own) are passed over."""
    found = found or _Found(strict=True)
    skip = set(skip)
    systems: list[System] = []
    if len(config["systems"]) == 1:
        found.add(ConfigError("one system cannot be ranked against others: list two or more, or none to audit "
                              "the judges' label sets alone", key="systems"))  # fmt: skip
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


def _check_labels_only(config: dict, systems: tuple[System, ...], judges: dict[str, tuple[Judge, ...]]) -> None:
    """A labels-only dataset (no corpus) has no texts: what reads texts is a config error."""
    bare = [name for name, spec in config["datasets"].items() if labels_only(spec)]
    if not bare:
        return
    where = f"dataset {bare[0]!r} is labels-only (source local without a corpus)"
    for index, name in enumerate(config["systems"]):
        system = next((s for s in systems if str(s) == name), None)
        if isinstance(system, (BM25, Ranker)):
            raise ConfigError(f"{where}: {name} needs passage texts; list recorded runs and oracles",
                              key=item_key("systems", index, name))  # fmt: skip
    for index, entry in enumerate(config["judges"]):
        if entry["kind"] in TEXT_JUDGES:
            raise ConfigError(f"{where}: a judge of kind {entry['kind']} reads passage texts",
                              key=f"{item_key('judges', index, entry)}.kind")  # fmt: skip
    for section in ("assistants", "probes", "gaming"):
        if config.get(section):
            raise ConfigError(f"{where}: the {section} read passage texts", key=section)
    if config["oracles"]["base"] == "BM25" and any(not isinstance(s, (Recorded,)) for s in systems):
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


def _check_without_systems(config: dict, found: _Found | None = None) -> None:
    """Without ``systems:`` (the judges' label sets audited alone), what compares systems is a
    config error naming its key."""
    found = found or _Found(strict=True)
    for key, why in NEEDS_SYSTEMS:
        node: Any = config
        for part in key.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        if node:
            found.add(ConfigError(f"no systems are listed (systems:), and {why}: list systems, or leave {key} out",
                                  key=key))  # fmt: skip


def _check_oracles(config: dict, systems: tuple[System, ...], recorded: dict[str, Recorded]) -> None:
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


def _check_families(config: dict, systems: tuple[System, ...], judges: dict[str, tuple[Judge, ...]]) -> None:
    """A family one judge or system alone declares, spelled close to another declared family, is
    a typo until the user says otherwise (``audits.self_preference.similar_families: allow``):
    self-preference would quietly become n/a, or compare with another panel."""
    from difflib import get_close_matches

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
        sides = sorted([(family, *next(iter(who.items()))), (close[0], *next(iter(declared[close[0]].items())))],
                       key=lambda side: not side[1].startswith("judge"))  # fmt: skip
        (first, declarer, key), (other, other_declarer, _) = sides
        raise ConfigError(
            f"family {first!r} of {declarer} is declared by nothing else, and spelled like {other!r} of "
            f"{other_declarer}: did you mean {other!r}? (audits.self_preference.similar_families: allow keeps both)",
            key=key,
        )


def _check_measures(config: dict, found: _Found | None = None) -> None:
    """Every measure parses in ir_measures' syntax."""
    from ..evaluation import parse_measure

    found = found or _Found(strict=True)
    for index, text in enumerate(config["evaluation"]["measures"]):
        with found.each():
            parse_measure(text, key=item_key("evaluation.measures", index, text))
    evaluation = config["evaluation"]
    if evaluation["test"] == "tukey" and evaluation["correction"] != "none":
        found.add(ConfigError("randomized Tukey HSD holds the family-wise error over every pair itself: "
                              "set correction: none, or choose test: t or randomization", key="evaluation.correction"))  # fmt: skip


def _check_judges(config: dict, found: _Found | None = None) -> dict[str, tuple[Judge, ...]]:
    """Each dataset's judges: the humans first, then the configured ones in config order. A
    judge with an error is left out."""
    found = found or _Found(strict=True)
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
        _check_file(path, f"{key}.qrels" + (f".{dataset}" if per_dataset else ""))
        reruns = entry.get("reruns") or []
        by_dataset = isinstance(reruns, dict)
        reruns = reruns.get(dataset, []) if by_dataset else reruns
        for index_rerun, rerun in enumerate(reruns):
            _check_file(rerun, f"{key}.reruns" + (f".{dataset}" if by_dataset else "") + f"[{index_rerun}]")
        built.append((dataset, judge_from_config({**entry, "qrels": path, "reruns": reruns}, key=key)))
    for dataset, judge in built:
        judges[dataset].append(judge)


POINTWISE = ("rg", "rankt5", "monot5", "dense")


def _assistant(name: str, entry: dict, key: str, **options: Any) -> Assistant:
    """One assistant or padder, its files checked first (a relative path's error says where it
    resolves from)."""
    _check_files(entry, ("rewrites",) if entry.get("kind", "llm") == "recorded" else ("prompt_file",), key)
    return assistant_from_config(name, entry, key=key, **options)


def _check_assistants(
    config: dict, systems: tuple[System, ...], found: _Found | None = None, *, systems_ok: bool = True
) -> tuple[Assistant, ...]:
    """The assistants, and the rankers of their experiment: configured systems, and pointwise
    (checked when the systems are: ``systems_ok``)."""
    found = found or _Found(strict=True)
    assistants = []
    for name, entry in config.get("assistants", {}).items():
        with found.each():
            assistants.append(_assistant(name, entry, f"assistants.{name}"))
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


def _check_template(path: str | Path, slots: tuple[str, ...], key: str) -> None:
    if not Path(path).is_file():
        raise not_found(path, key)
    require_slots(Path(path).read_text(encoding="utf-8"), slots, key)


def _unlisted_systems(found, names, systems, key: str) -> None:
    """An error for each of ``names`` (under config ``key``) that is not a listed system."""
    listed = {str(s) for s in systems}
    for index, name in enumerate(names):
        if name not in listed:
            found.add(ConfigError(f"{name!r} is not a system listed under systems:", key=item_key(key, index, name)))


def probes_from_config(config: dict, systems: tuple[System, ...]) -> dict | None:
    """The probes section with its defaults resolved (None without one): a new dict, the config
    is left as it is. The systems whose result lists the swap test compares default to all of
    them; the schema fills every other default (the injection probe's templates included)."""
    probes = config.get("probes")
    if probes is None:
        return None
    probes = copy.deepcopy(probes)
    lists = (probes.get("swap") or {}).get("lists")
    if lists is not None:
        lists.setdefault("systems", [str(s) for s in systems])
    return probes


def _check_probes(
    probes: dict | None,
    judges: dict[str, tuple[Judge, ...]],
    systems: tuple[System, ...],
    found: _Found | None = None,
    *,
    systems_ok: bool = True,
) -> tuple[Assistant, ...]:
    """The probes section, resolved (:func:`probes_from_config`): probed judges are live LLM
    judges, templates have their slots, the persona pool has a usable field, the compared lists
    are of listed systems (checked when the systems are); returns the LLM padders."""
    found = found or _Found(strict=True)
    if probes is None:
        return ()
    kinds = {j.name: j.kind for js in judges.values() for j in js}
    if "llm" not in kinds.values():
        found.add(ConfigError("the probes ask an LLM judge again, and no judge is of kind llm", key="probes"))
        return ()
    for index, name in enumerate(probes.get("judges", [])):
        if kinds.get(name) != "llm":
            found.add(ConfigError(f"{name!r} is not a judge of kind llm (probes ask the judge again)",
                                  key=item_key("probes.judges", index, name)))  # fmt: skip
    swap = probes.get("swap")
    if swap is not None:
        with found.each():
            _check_template(swap.get("prompt_file", PAIRWISE_PROMPT), ("query", "a", "b"), "probes.swap.prompt_file")
        lists = swap.get("lists")
        if lists is not None:
            with found.each():
                _check_template(
                    lists.get("prompt_file", LISTS_PROMPT), ("query", "a", "b"), "probes.swap.lists.prompt_file"
                )
            if systems_ok:
                _unlisted_systems(found, lists["systems"], systems, "probes.swap.lists.systems")
    padders: list[Assistant] = []
    pad = probes.get("pad")
    if pad is not None:
        for name, entry in pad.get("assistants", {}).items():
            key = f"probes.pad.assistants.{name}"
            with found.each():
                padder = _assistant(name, entry, key, prompt=PAD_PROMPT)
                if padder.name in PAD_METHODS or padder.kind != "llm":
                    raise ConfigError("an LLM padder needs a model and a name other than repeat/filler", key=key)
                padders.append(padder)
    injection = probes.get("injection")
    if injection is not None:
        for name, text in injection["templates"].items():
            with found.each():
                require_slots(text, ("passage",), f"probes.injection.templates.{name}")
    personas = probes.get("personas")
    if personas is not None:
        with found.each():
            _check_file(personas["pool"], "probes.personas.pool")
            read_persona_pool(personas["pool"], personas["field"], personas["template"], stop_after=1)
    return tuple(padders)


GAMING_KINDS = ("llm", "embedding")
"""The judges a gamed system is put to: those that read the modified texts when asked."""


def gaming_from_config(config: dict, judges: dict[str, tuple[Judge, ...]], systems: tuple[System, ...]) -> dict | None:
    """The gaming section with its defaults resolved (None without one): a new dict, the config
    is left as it is. ``templates`` gains claim's (the injection probe's claim), ``systems``
    defaults to every system that is not an oracle, ``judges`` becomes judge -> its methods
    (default: every judge of kind llm or embedding, each with every method)."""
    gaming = config.get("gaming")
    if gaming is None:
        return None
    gaming = copy.deepcopy(gaming)
    gaming.setdefault("templates", {}).setdefault("claim", schema_default("probes", "injection", "templates")["claim"])
    gaming.setdefault("systems", [str(s) for s in systems if not isinstance(s, (Perfect, Swap))])
    asked = gaming.get("judges")
    if asked is None:
        kinds = {j.name: j.kind for js in judges.values() for j in js}
        asked = [name for name, kind in kinds.items() if kind in GAMING_KINDS]
    if isinstance(asked, list):
        asked = {name: list(gaming["methods"]) for name in asked}
    gaming["judges"] = asked
    return gaming


def _check_gaming(gaming: dict | None, judges: dict[str, tuple[Judge, ...]], systems: tuple[System, ...],
                  found: _Found | None = None, *, systems_ok: bool = True) -> None:  # fmt: skip
    """The gaming section, resolved (:func:`gaming_from_config`): methods are built in or have a
    template with a {passage} slot, the gamed systems are listed systems (checked when the
    systems are), the judges are of kind llm or embedding and their methods are listed ones."""
    found = found or _Found(strict=True)
    if gaming is None:
        return
    templates = gaming["templates"]
    for name, text in templates.items():
        with found.each():
            require_slots(text, ("passage",), f"gaming.templates.{name}")
    for index, name in enumerate(gaming["methods"]):
        if name != "stuff" and name not in templates:
            found.add(ConfigError(f"{name!r} is neither stuff, claim nor a name under gaming.templates",
                                  key=item_key("gaming.methods", index, name)))  # fmt: skip
    if len(set(gaming["methods"])) != len(gaming["methods"]):
        found.add(ConfigError("a method is listed twice", key="gaming.methods"))
    if systems_ok:
        _unlisted_systems(found, gaming["systems"], systems, "gaming.systems")
        if not gaming["systems"]:
            found.add(ConfigError("every system is an oracle: list the systems to game", key="gaming.systems"))
    kinds = {j.name: j.kind for js in judges.values() for j in js}
    asked = gaming["judges"]
    for name, methods in asked.items():
        key = f"gaming.judges.{name}"
        if kinds.get(name) not in GAMING_KINDS:
            found.add(ConfigError(f"{name!r} is not a judge of kind llm or embedding (the gamed passages are "
                                  "judged again)", key=key))  # fmt: skip
        if not isinstance(methods, list) or not all(m in gaming["methods"] for m in methods):
            found.add(ConfigError(f"the methods must be a list of gaming.methods ({', '.join(gaming['methods'])})",
                                  key=key))  # fmt: skip
    if not asked:
        found.add(ConfigError("no judge of kind llm or embedding reads the gamed passages", key="gaming.judges"))


def _check_variants(config: dict, judges: dict[str, tuple[Judge, ...]], found: _Found | None = None) -> None:
    """Each variants group names configured judges on the human labels' scale (kappa compares grades)."""
    found = found or _Found(strict=True)
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


def check(config: dict, *, configfile: str | os.PathLike | Iterable[str | os.PathLike] | None = None) -> Plan:
    """Check a schema-validated config for meaning, section by section, and derive the :class:`Plan`.

    Every error is collected (one per item at least: dataset, ranker, run, system, measure,
    judge, assistant, probe, variants group) and raised together at the end; a check that
    builds on a section with errors (the oracles on the systems, the probes on the judges) is
    left for the next round. ``configfile`` (a path or several), when known, lets a relative
    path that is not found say whether it is there relative to the config file.
    """
    token = _CONFIG_DIRS.set(_config_dirs(configfile))
    try:
        found = _Found()
        _check_datasets(config, found)
        rankers = _check_rankers(config, found)
        bad_rankers = set(config.get("rankers", {})) - set(rankers)
        mark = found.mark()
        recorded, groups, notes = _check_runs(config, rankers, found)
        systems: tuple[System, ...] = ()
        systems_ok = False
        if not found.since(mark):
            mark = found.mark()
            systems = _check_systems(config, rankers, recorded, groups, found, skip=bad_rankers)
            systems_ok = not found.since(mark) and not bad_rankers.intersection(config["systems"])
        if systems_ok and systems:
            with found.each():
                _check_oracles(config, systems, recorded)
        elif not config["systems"]:
            _check_without_systems(config, found)
        _check_measures(config, found)
        assistants = _check_assistants(config, systems, found, systems_ok=systems_ok)
        mark = found.mark()
        judges = _check_judges(config, found)
        judges_ok = not found.since(mark)
        if systems_ok:
            with found.each():
                _check_labels_only(config, systems, judges)
        if systems_ok and judges_ok:
            with found.each():
                _check_families(config, systems, judges)
        # the sections' defaults, resolved into new dicts (the config is never changed)
        resolved = {
            "probes": probes_from_config(config, systems),
            "gaming": gaming_from_config(config, judges, systems),
        }
        padders: tuple[Assistant, ...] = ()
        if judges_ok:
            padders = _check_probes(resolved["probes"], judges, systems, found, systems_ok=systems_ok)
            _check_gaming(resolved["gaming"], judges, systems, found, systems_ok=systems_ok)
            _check_variants(config, judges, found)
        raise_all(found.errors)
    finally:
        _CONFIG_DIRS.reset(token)
    config = {**config, **{section: value for section, value in resolved.items() if value is not None}}
    return Plan(
        config=config, systems=systems, judges=judges, assistants=assistants, padders=padders, notes=tuple(notes)
    )


def load_plan(path: str | Path) -> Plan:
    """Read, validate and check a config file (a relative path's error names the file's folder)."""
    return check(load(path), configfile=path)
