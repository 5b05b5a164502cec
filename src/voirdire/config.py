"""Configuration: JSON-schema validation with defaults, then checks of meaning.

The schema (``voirdire/schema.yaml``, package data) fixes shapes and defaults; :func:`check` then checks
what a schema cannot (system names parse, files exist, a source has the keys it needs) and
returns a :class:`Plan` that the Snakefile's input functions read. Every error is a
:class:`~voirdire.errors.ConfigError` naming the config key, raised before any job starts.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import Any

import yaml

from .errors import ConfigError
from .judges import HUMAN, HumanJudge, Judge, judge_from_config
from .llm.endpoint import KEYS as ENDPOINT_KEYS
from .llm.endpoint import Endpoint
from .probes.items import (
    INJECTIONS,
    LISTS_PROMPT,
    PAD_METHODS,
    PAIRWISE_PROMPT,
    require_slots,
)
from .probes.personas import read_persona_pool
from .rewriters import ORIGINAL, PAD_PROMPT, Assistant, assistant_from_config
from .runs import Recorded, recorded_from_config
from .systems import BM25, Oracle, Ranker, System, parse_system

SCHEMA = Path(str(files("voirdire").joinpath("schema.yaml")))
"""The config schema, shipped as package data (an installed wheel carries it)."""

# Keys each dataset source needs (beyond `source`).
REQUIRED = {
    "ir_datasets": ("id",),
    "local": ("topics", "qrels"),
    "rankgpt": ("candidates", "qrels"),
}
FILE_KEYS = ("topics", "qrels", "corpus", "candidates")


def validate_schema(config: dict, schema: str | Path = SCHEMA) -> dict:
    """Validate ``config`` in place against the schema, filling defaults (as Snakemake does)."""
    import jsonschema

    with open(schema, encoding="utf-8") as fh:
        schema_doc = yaml.safe_load(fh)

    base = jsonschema.Draft202012Validator

    def set_defaults(validator, properties, instance, schema_node):
        for name, sub in properties.items():
            if isinstance(instance, dict) and "default" in sub:
                instance.setdefault(name, json.loads(json.dumps(sub["default"])))
        yield from base.VALIDATORS["properties"](validator, properties, instance, schema_node)

    validator_cls = jsonschema.validators.extend(base, {"properties": set_defaults})
    errors = sorted(validator_cls(schema_doc).iter_errors(config), key=lambda e: list(e.path))
    if errors:
        error = errors[0]
        key = ".".join(str(p) for p in error.absolute_path) or "(top level)"
        raise ConfigError(error.message, key=key)
    return config


def load(path: str | Path) -> dict:
    """Read a YAML config and validate it against the schema."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError("config file not found", path=path)
    with path.open(encoding="utf-8") as fh:
        try:
            config = yaml.safe_load(fh) or {}
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
            column = "" if mark is None else f" at column {mark.column + 1}"
            raise ConfigError(
                f"not valid YAML{column}: {problem}", path=path, line=None if mark is None else mark.line + 1
            ) from None
    return validate_schema(config)


def config_hash(config: dict) -> str:
    """SHA-256 of the config in canonical JSON: equal hashes, equal settings."""
    canonical = json.dumps(config, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


@dataclass(frozen=True)
class Plan:
    """What the workflow will compute, derived once from a validated config."""

    config: dict
    systems: tuple[System, ...]
    judges: dict[str, tuple[Judge, ...]] = field(default_factory=dict)
    assistants: tuple[Assistant, ...] = ()
    padders: tuple[Assistant, ...] = ()  # the pad probe's LLM padders
    notes: tuple[str, ...] = ()  # what the config check chose and a user should read (logged)

    @property
    def recorded(self) -> list[Recorded]:
        """The recorded systems (``runs:``) listed under ``systems:``."""
        return [s for s in self.systems if isinstance(s, Recorded)]

    def labels_only(self, dataset: str) -> bool:
        return labels_only(self.config["datasets"][dataset])

    @property
    def base(self) -> System:
        """The run the oracles reorder (``oracles.base``): BM25 or a recorded run."""
        name = self.config["oracles"]["base"]
        if name == "BM25":
            return BM25()
        return next(s for s in self.recorded if s.name == name)

    @property
    def depth(self) -> int:
        """Every system is cut at this depth before any measure (``evaluation.depth``, else
        ``bm25.depth``)."""
        return self.config["evaluation"].get("depth") or self.config["bm25"]["depth"]

    @property
    def measures(self) -> list[str]:
        return list(self.config["evaluation"]["measures"])

    @property
    def probe_judges(self) -> list[str]:
        """The LLM judges the probes ask again (none without a ``probes`` section)."""
        probes = self.config.get("probes")
        if probes is None:
            return []
        llm = [j.name for j in next(iter(self.judges.values()), ()) if j.kind == "llm"]
        return [name for name in llm if name in probes.get("judges", llm)]

    def padder(self, name: str) -> Assistant:
        for padder in self.padders:
            if padder.name == name:
                return padder
        raise ConfigError(f"no LLM padder {name!r}", key="probes.pad.assistants")

    @property
    def provenances(self) -> list[str]:
        """``original``, then ``rewritten-{assistant}`` for every assistant."""
        return [ORIGINAL] + [a.provenance for a in self.assistants]

    def assistant(self, name: str) -> Assistant:
        for assistant in self.assistants:
            if assistant.name == name:
                return assistant
        raise ConfigError(f"no assistant {name!r}", key="assistants")

    @property
    def rewriting_rankers(self) -> list[Ranker]:
        """The pointwise rankers of the assistants experiment (Figure 5, experiment 3)."""
        names = self.config.get("rewriting", {}).get("rankers", []) if self.assistants else []
        return [r for r in self.rankers if r.name in names]

    @property
    def datasets(self) -> list[str]:
        return list(self.config["datasets"])

    @property
    def oracles(self) -> list[Oracle]:
        return [s for s in self.systems if not isinstance(s, (BM25, Ranker, Recorded))]

    @property
    def rankers(self) -> list[Ranker]:
        return [s for s in self.systems if isinstance(s, Ranker)]

    @property
    def draws(self) -> int:
        """Runs per oracle: one for a stable tie-break, R for a random one."""
        cfg = self.config["oracles"]
        return cfg["draws"] if cfg["tie_break"] == "random" else 1

    def run_names(self, system: System) -> list[str]:
        """Run file stems for a system (``swap-1~r0`` .. for random tie-break draws)."""
        if isinstance(system, (BM25, Ranker, Recorded)) or self.draws == 1:
            return [system.slug]
        return [f"{system.slug}~r{draw}" for draw in range(self.draws)]

    def judge_names(self, dataset: str) -> list[str]:
        return [judge.name for judge in self.judges[dataset]]

    def judge(self, dataset: str, name: str) -> Judge:
        for judge in self.judges[dataset]:
            if judge.name == name:
                return judge
        raise ConfigError(f"no judge {name!r} for dataset {dataset!r}", key="judges")

    def system(self, slug: str) -> System:
        for system in self.systems:
            if system.slug == slug:
                return system
        raise ConfigError(f"no system with slug {slug!r}", key="systems")


def _check_file(value: str, key: str) -> None:
    if not Path(value).is_file():
        raise ConfigError(f"file not found: {value}", key=key)


def _check_datasets(config: dict) -> None:
    """Each dataset has the keys its source needs, and the files it names exist."""
    for name, spec in config["datasets"].items():
        source = spec["source"]
        for needed in REQUIRED[source]:
            if needed not in spec:
                raise ConfigError(
                    f"source {source!r} needs '{needed}'", key=f"datasets.{name}.{needed}"
                )
        if source == "ir_datasets" and "corpus" not in spec and "prebuilt" not in spec.get("index", {}):
            raise ConfigError(
                f"source {source!r} needs a 'corpus' to index or 'index: {{prebuilt: NAME}}'",
                key=f"datasets.{name}",
            )
        for key in FILE_KEYS:
            if key in spec:
                _check_file(spec[key], f"datasets.{name}.{key}")


def _check_rankers(config: dict) -> dict[str, Ranker]:
    """The configured LLM rerankers by name; an API ranker (backend litellm) gets an endpoint."""
    depth = config["bm25"]["depth"]
    rankers = {}
    for name, spec in config.get("rankers", {}).items():
        key = f"rankers.{name}"
        try:
            builtin = parse_system(name, depth=depth)
        except ConfigError:
            builtin = None
        if builtin is not None:
            raise ConfigError(f"ranker name {name!r} is taken by {builtin}", key=key)
        backend = spec.get("backend", "transformers")
        if spec["method"] in ("rankt5", "monot5", "dense") and backend != "transformers":
            raise ConfigError("T5 and dense rankers run with transformers only", key=f"{key}.backend")
        endpoint = Endpoint.from_config(spec, key=key) if backend == "litellm" else None
        own = {k: v for k, v in spec.items() if k not in ENDPOINT_KEYS or k == "model"}
        rankers[name] = Ranker(name=name, endpoint=endpoint, **own)
    return rankers


def labels_only(spec: dict) -> bool:
    """A local dataset without a corpus: topics and qrels only, no passage texts."""
    return spec["source"] == "local" and "corpus" not in spec and "prebuilt" not in spec.get("index", {})


def _check_runs(config: dict, rankers: dict[str, Ranker]) -> tuple[dict[str, Recorded], dict[str, list[str]], list[str]]:
    """The recorded systems by name, the systems each ``runs:`` key stands for, and notes for
    the log (runs named by their file stem because their tags clash)."""
    datasets = list(config["datasets"])
    depth = config["bm25"]["depth"]
    recorded: dict[str, Recorded] = {}
    groups: dict[str, list[str]] = {}
    notes: list[str] = []
    for group, entry in config.get("runs", {}).items():
        key = f"runs.{group}"
        if group in rankers:
            raise ConfigError(f"{group!r} is both a run and a ranker (rankers.{group})", key=key)
        systems, found = recorded_from_config(group, entry, datasets, key=key)
        notes += found
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
            recorded[system.name] = system
        groups[group] = [s.name for s in systems]
    return recorded, groups, notes


def _check_systems(
    config: dict, rankers: dict[str, Ranker], recorded: dict[str, Recorded], groups: dict[str, list[str]]
) -> tuple[System, ...]:
    """Every name under ``systems:`` parses to one system (a ``runs:`` folder key to all of its
    runs), and none repeats."""
    systems: list[System] = []
    for index, name in enumerate(config["systems"]):
        key = f"systems[{index}]"
        names = groups.get(name, [name]) if name not in recorded else [name]
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
            raise ConfigError(f"{where}: {name} needs passage texts; list recorded runs and oracles", key=f"systems[{index}]")
    for index, entry in enumerate(config["judges"]):
        if entry["kind"] in TEXT_JUDGES:
            raise ConfigError(f"{where}: a judge of kind {entry['kind']} reads passage texts", key=f"judges[{index}].kind")
    for section in ("assistants", "probes"):
        if config.get(section):
            raise ConfigError(f"{where}: the {section} read passage texts", key=section)
    if config["oracles"]["base"] == "BM25" and any(not isinstance(s, (Recorded,)) for s in systems):
        raise ConfigError(f"{where}: the oracles need a base run; set oracles.base to a recorded run", key="oracles.base")


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


def _check_measures(config: dict) -> None:
    """Every measure parses in ir_measures' syntax."""
    from .evaluation import parse_measure

    for index, text in enumerate(config["evaluation"]["measures"]):
        parse_measure(text, key=f"evaluation.measures[{index}]")


def _check_judges(config: dict) -> dict[str, tuple[Judge, ...]]:
    """Each dataset's judges: the humans first, then the configured ones in config order."""
    judges: dict[str, list[Judge]] = {dataset: [HumanJudge()] for dataset in config["datasets"]}
    seen: set[str] = set()
    for index, entry in enumerate(config["judges"]):
        key = f"judges[{index}]"
        name = entry["name"]
        if name == HUMAN or name in seen:
            raise ConfigError(
                f"judge name {name!r} is {'reserved' if name == HUMAN else 'used twice'}",
                key=f"{key}.name",
            )
        seen.add(name)
        if entry["kind"] != "recorded":
            judge = judge_from_config(entry, key=key)
            for dataset in config["datasets"]:
                judges[dataset].append(judge)
            continue
        qrels = entry.get("qrels")
        if qrels is None:
            raise ConfigError("a recorded judge needs 'qrels'", key=f"{key}.qrels")
        files = qrels if isinstance(qrels, dict) else {d: qrels for d in config["datasets"]}
        for dataset, path in files.items():
            if dataset not in config["datasets"]:
                raise ConfigError(f"unknown dataset {dataset!r}", key=f"{key}.qrels.{dataset}")
            _check_file(path, f"{key}.qrels" + (f".{dataset}" if isinstance(qrels, dict) else ""))
            reruns = entry.get("reruns") or []
            reruns = reruns.get(dataset, []) if isinstance(reruns, dict) else reruns
            for index_rerun, rerun in enumerate(reruns):
                _check_file(rerun, f"{key}.reruns[{index_rerun}]")
            judges[dataset].append(judge_from_config({**entry, "qrels": path, "reruns": reruns}, key=key))
    return {dataset: tuple(items) for dataset, items in judges.items()}


POINTWISE = ("rg", "rankt5", "monot5", "dense")


def _check_assistants(config: dict, systems: tuple[System, ...]) -> tuple[Assistant, ...]:
    """The assistants, and the rankers of their experiment: configured systems, and pointwise."""
    assistants = tuple(
        assistant_from_config(name, entry, key=f"assistants.{name}")
        for name, entry in config.get("assistants", {}).items()
    )
    ranker_methods = {s.name: s.method for s in systems if isinstance(s, Ranker)}
    for index, name in enumerate(config.get("rewriting", {}).get("rankers", [])):
        key = f"rewriting.rankers[{index}]"
        if name not in ranker_methods:
            raise ConfigError(f"{name!r} is not a ranker listed under systems:", key=key)
        if ranker_methods[name] not in POINTWISE:
            raise ConfigError(
                f"{name!r} is a {ranker_methods[name]} ranker; Figure 5 needs a pointwise one ({', '.join(POINTWISE)})",
                key=key,
            )
    rewriting = config.get("rewriting", {})
    if rewriting.get("min_length_ratio", 0.5) >= rewriting.get("max_length_ratio", 2.0):
        raise ConfigError("min_length_ratio must be below max_length_ratio", key="rewriting.min_length_ratio")
    return assistants


def _check_template(path: str | Path, slots: tuple[str, ...], key: str) -> None:
    if not Path(path).is_file():
        raise ConfigError(f"file not found: {path}", key=key)
    require_slots(Path(path).read_text(encoding="utf-8"), slots, key)


def _check_probes(config: dict, judges: dict[str, tuple[Judge, ...]], systems: tuple[System, ...]) -> tuple[Assistant, ...]:
    """The probes section: probed judges are live LLM judges, templates have their slots, the
    persona pool has a usable field; returns the LLM padders. Fills in the default injection
    templates and the systems whose lists are compared (all)."""
    probes = config.get("probes")
    if probes is None:
        return ()
    kinds = {j.name: j.kind for js in judges.values() for j in js}
    if "llm" not in kinds.values():
        raise ConfigError("the probes ask an LLM judge again, and no judge is of kind llm", key="probes")
    for index, name in enumerate(probes.get("judges", [])):
        if kinds.get(name) != "llm":
            raise ConfigError(f"{name!r} is not a judge of kind llm (probes ask the judge again)", key=f"probes.judges[{index}]")
    swap = probes.get("swap")
    if swap is not None:
        _check_template(swap.get("prompt_file", PAIRWISE_PROMPT), ("query", "a", "b"), "probes.swap.prompt_file")
        lists = swap.get("lists")
        if lists is not None:
            _check_template(lists.get("prompt_file", LISTS_PROMPT), ("query", "a", "b"), "probes.swap.lists.prompt_file")
            names = [str(s) for s in systems]
            lists.setdefault("systems", names)
            for index, name in enumerate(lists["systems"]):
                if name not in names:
                    raise ConfigError(f"{name!r} is not a system listed under systems:", key=f"probes.swap.lists.systems[{index}]")
    padders: tuple[Assistant, ...] = ()
    pad = probes.get("pad")
    if pad is not None:
        padders = tuple(
            assistant_from_config(name, entry, key=f"probes.pad.assistants.{name}", prompt=PAD_PROMPT)
            for name, entry in pad.get("assistants", {}).items()
        )
        for padder in padders:
            if padder.name in PAD_METHODS or padder.kind != "llm":
                raise ConfigError("an LLM padder needs a model and a name other than repeat/filler", key=f"probes.pad.assistants.{padder.name}")
    injection = probes.get("injection")
    if injection is not None:
        injection.setdefault("templates", dict(INJECTIONS))
        for name, text in injection["templates"].items():
            require_slots(text, ("passage",), f"probes.injection.templates.{name}")
    personas = probes.get("personas")
    if personas is not None:
        _check_file(personas["pool"], "probes.personas.pool")
        read_persona_pool(personas["pool"], personas["field"], personas["template"], stop_after=1)
    return padders


def _check_variants(config: dict, judges: dict[str, tuple[Judge, ...]]) -> None:
    """Each variants group names configured judges on the human labels' scale (kappa compares grades)."""
    scales = {j.name: (j.scale.low, j.scale.high) for js in judges.values() for j in js}
    for group, entry in config.get("variants", {}).items():
        for key, name in [("baseline", entry["baseline"])] + [(f"variants[{i}]", v) for i, v in enumerate(entry["variants"])]:
            if name not in scales:
                raise ConfigError(f"{name!r} is not a judge (judges: {', '.join(sorted(scales))})", key=f"variants.{group}.{key}")
            if scales[name] != scales[HUMAN]:
                raise ConfigError(f"judge {name!r} grades on {scales[name]}, the human labels on {scales[HUMAN]}: "
                                  "prompt variants are compared grade by grade", key=f"variants.{group}.{key}")  # fmt: skip
        if entry["baseline"] in entry["variants"]:
            raise ConfigError("the baseline is also listed as a variant", key=f"variants.{group}.variants")


def check(config: dict) -> Plan:
    """Check a schema-validated config for meaning, section by section, and derive the :class:`Plan`."""
    _check_datasets(config)
    rankers = _check_rankers(config)
    recorded, groups, notes = _check_runs(config, rankers)
    systems = _check_systems(config, rankers, recorded, groups)
    _check_oracles(config, systems, recorded)
    _check_measures(config)
    assistants = _check_assistants(config, systems)
    judges = _check_judges(config)
    _check_labels_only(config, systems, judges)
    padders = _check_probes(config, judges, systems)
    _check_variants(config, judges)
    return Plan(config=config, systems=systems, judges=judges, assistants=assistants, padders=padders, notes=tuple(notes))


def load_plan(path: str | Path) -> Plan:
    return check(load(path))


def as_plain(value: Any) -> Any:
    """Snakemake's config objects as plain dicts/lists (for hashing and JSON)."""
    return json.loads(json.dumps(value, default=str))
