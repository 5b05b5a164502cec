"""The probes and gaming sections: their defaults resolved into new dicts
(:func:`probes_from_config`, :func:`gaming_from_config`; the config is left as it is), and their
checks (probed judges, templates and their slots, the persona pool, the LLM padders, the gamed
systems and the judges that read them)."""

from __future__ import annotations

import copy
from pathlib import Path

from ..assistants.declarations import Assistant
from ..errors import ConfigError, item_key
from ..judges import Judge
from ..probes.items import LISTS_PROMPT, PAD_METHODS, PAD_PROMPT, PAIRWISE_PROMPT, require_slots
from ..probes.personas import read_persona_pool
from ..systems import Perfect, Swap, System
from .found import Found, check_file, not_found
from .schema import schema_default
from .sections_judges import checked_assistant


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


def check_probes(
    probes: dict | None,
    judges: dict[str, tuple[Judge, ...]],
    systems: tuple[System, ...],
    found: Found | None = None,
    *,
    systems_ok: bool = True,
) -> tuple[Assistant, ...]:
    """The probes section, resolved (:func:`probes_from_config`): probed judges are live LLM
    judges, templates have their slots, the persona pool has a usable field, the compared lists
    are of listed systems (checked when the systems are); returns the LLM padders."""
    found = found or Found(strict=True)
    if probes is None:
        return ()
    kinds = {j.name: j.kind for js in judges.values() for j in js}
    if "llm" not in kinds.values():
        found.add(ConfigError("the probes ask an LLM judge again, and no judge is of kind llm", key="probes"))
        return ()
    for index, name in enumerate(probes.get("judges", [])):
        if kinds.get(name) != "llm":
            found.add(
                ConfigError(
                    f"{name!r} is not a judge of kind llm (probes ask the judge again)",
                    key=item_key("probes.judges", index, name),
                )
            )
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
                padder = checked_assistant(name, entry, key, prompt=PAD_PROMPT)
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
            check_file(personas["pool"], "probes.personas.pool")
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


def check_gaming(
    gaming: dict | None,
    judges: dict[str, tuple[Judge, ...]],
    systems: tuple[System, ...],
    found: Found | None = None,
    *,
    systems_ok: bool = True,
) -> None:
    """The gaming section, resolved (:func:`gaming_from_config`): methods are built in or have a
    template with a {passage} slot, the gamed systems are listed systems (checked when the
    systems are), the judges are of kind llm or embedding and their methods are listed ones."""
    found = found or Found(strict=True)
    if gaming is None:
        return
    templates = gaming["templates"]
    for name, text in templates.items():
        with found.each():
            require_slots(text, ("passage",), f"gaming.templates.{name}")
    for index, name in enumerate(gaming["methods"]):
        if name != "stuff" and name not in templates:
            found.add(
                ConfigError(
                    f"{name!r} is neither stuff, claim nor a name under gaming.templates",
                    key=item_key("gaming.methods", index, name),
                )
            )
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
            found.add(
                ConfigError(
                    f"{name!r} is not a judge of kind llm or embedding (the gamed passages are judged again)", key=key
                )
            )
        if not isinstance(methods, list) or not all(m in gaming["methods"] for m in methods):
            found.add(
                ConfigError(f"the methods must be a list of gaming.methods ({', '.join(gaming['methods'])})", key=key)
            )
    if not asked:
        found.add(ConfigError("no judge of kind llm or embedding reads the gamed passages", key="gaming.judges"))
