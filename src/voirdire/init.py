"""``voirdire init``: an editable config for the common case, from files a user already has.

Given human qrels, topics, recorded runs (a folder or files) and recorded judges' label sets,
it writes a labels-only config (no corpus: recorded systems and judges, and the audits that
need only labels) that validates and runs unchanged with
``snakemake --cores N --configfile THAT``. Without runs (a challenge's label sets and its human
qrels, as LLMJudge gives them) the config lists no systems: the label sets are audited alone,
on the human-judged pairs. What it inferred -- a judge's label scale and
binary threshold from its grades, ``unjudged_topics: drop`` when some topics have no qrels --
is written into the file as comments, so the user can see and change it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from pathlib import Path

import yaml

from .errors import ConfigError
from .evaluation import DEFAULT_MEASURES, parse_measure
from .formats import read_qrels, read_topics, run_tag
from .runs import _SAFE, _stem, folder_names, run_files

_JUDGE_NAME = re.compile(r"[^A-Za-z0-9_.-]")


def _pairs(values: Sequence[str], flag: str) -> dict[str, str]:
    found = {}
    for value in values:
        name, sep, rest = value.partition("=")
        if not sep or not name or not rest:
            raise ConfigError(f"expected NAME=VALUE, got {value!r}", key=flag)
        found[name] = rest
    return found


def judge_folder(folder: str | Path) -> dict[str, str]:
    """Judge name -> label set, for a folder of label sets (qrels files; a challenge's submissions):
    one judge per file, named by its file name without the suffixes of a run file (characters
    a judge name cannot carry become ``_``)."""
    path = Path(folder)
    found: dict[str, str] = {}
    for file in run_files(path):
        name = _JUDGE_NAME.sub("_", _stem(file)).lstrip("_.-") or "judge"
        if name in found:
            raise ConfigError(f"two label sets are named {name!r} ({found[name]} and {file})", key="--judges")
        found[name] = str(file)
    if not found:
        raise ConfigError(f"the folder {path} holds no label sets", key="--judges")
    return found


def family_of(name: str, patterns: dict[str, str]) -> str | None:
    """The family of a run or judge: the first ``--family PATTERN=FAMILY`` whose pattern (a name
    or a shell glob, ``run.*monot5*``) matches its name."""
    from fnmatch import fnmatchcase

    return next((family for pattern, family in patterns.items() if fnmatchcase(name, pattern)), None)


def scale_of(path: str | Path) -> tuple[int, int, int]:
    """(min, max, binary threshold) of a label set, from the grades it holds: relevant from
    the middle of the range up (2 on 0-3, 1 on 0-1)."""
    grades = read_qrels(path, (-(10**9), 10**9))["relevance"]
    low, high = int(grades.min()), int(grades.max())
    if low == high:
        high = low + 1
    return low, high, max(low + 1, math.ceil((low + high) / 2))


def init_config(
    *,
    qrels: str,
    topics: str,
    runs: Sequence[str] = (),
    judges: Sequence[str] = (),
    judge_folders: Sequence[str] = (),
    families: Sequence[str] = (),
    measures: Sequence[str] = (),
    dataset: str = "data",
    results: str | None = None,
) -> tuple[dict, list[str]]:
    """The config and the notes (comments) to write above it. No ``runs``: a config without
    systems, whose judges' label sets are audited alone (on the human-judged pairs)."""
    notes: list[str] = []
    family = _pairs(families, "--family")
    judge_files = _pairs(judges, "--judge")
    for folder in judge_folders:
        for name, path in judge_folder(folder).items():
            if name in judge_files:
                raise ConfigError(f"judge {name!r} is given twice ({judge_files[name]} and {path})", key="--judges")
            judge_files[name] = path
    topic_ids = set(read_topics(topics))
    judged = set(read_qrels(qrels)["query_id"])
    spec: dict = {"source": "local", "topics": topics, "qrels": qrels}
    if topic_ids - judged:
        spec["unjudged_topics"] = "drop"
        notes.append(f"{len(topic_ids - judged)} of {len(topic_ids)} topics have no human qrels: unjudged_topics: drop "
                     "(they are dropped and counted)")  # fmt: skip
    if judged - topic_ids:
        spec["unknown_qrels"] = "drop"
        notes.append(f"the qrels judge {len(judged - topic_ids)} queries that are not topics: unknown_qrels: drop")
    run_entries: dict = {}
    names: list[str] = []
    for value in runs:
        path = Path(value)
        if path.is_dir():
            key = path.name if _SAFE.match(path.name) else "runs"
            found, folder_notes = folder_names(path, key="--runs")
            notes += folder_notes
            entry: dict = {"path": str(path)}
            own = {n: f for n in found if (f := family_of(n, family)) and f != family_of(key, family)}
            if family_of(key, family):
                entry["family"] = family_of(key, family)
            if own:
                entry["families"] = own
            run_entries[key] = entry
            names += list(found)
        elif path.is_file():
            tag = run_tag(path)
            key = tag if _SAFE.match(tag) and tag not in run_entries else path.name.split(".")[0]
            run_entries[key] = {"path": str(path), **({"family": f} if (f := family_of(key, family)) else {})}
            names.append(key)
        else:
            raise ConfigError(f"no such file or folder: {value}", key="--runs")
    config: dict = {"results": results or f"results/{dataset}", "datasets": {dataset: spec}}
    if run_entries:
        config["runs"] = run_entries
        config["oracles"] = {"base": names[0]}
        notes.append(f"the oracles (Perfect) reorder the top depth of {names[0]!r} by the human labels (the first "
                     "run given; oracles.base chooses another)")  # fmt: skip
        config["systems"] = ["Perfect", *run_entries]
    elif not judge_files:
        raise ConfigError("give runs (--runs), label sets (--judge, --judges), or both", key="--runs")
    else:
        notes.append("no runs: no systems, so the label sets are audited alone, on the pairs the human qrels judge "
                     "(label agreement, leave one judge out, drift); what ranks systems is n/a in the verdict")  # fmt: skip
    judge_list = []
    for name, path in judge_files.items():
        low, high, threshold = scale_of(path)
        entry = {"name": name, "kind": "recorded", "qrels": path, "scale": {"min": low, "max": high},
                 "binary_threshold": threshold}  # fmt: skip
        if family_of(name, family):
            entry["family"] = family_of(name, family)
        judge_list.append(entry)
        notes.append(f"judge {name}: grades {low}..{high} in its file, relevant from {threshold}")
    config["judges"] = judge_list
    chosen = list(measures) or list(DEFAULT_MEASURES)
    for index, text in enumerate(chosen):
        parse_measure(text, key=f"--measures[{index}]")
    if run_entries or measures:  # measures score systems: none to score without runs
        config["evaluation"] = {"measures": chosen, "depth": 100}
    return config, notes


def write_config(config: dict, notes: Sequence[str], path: str | Path) -> None:
    """Write the config as YAML with the notes as comments on top."""
    snakefile = Path(__file__).resolve().parents[2] / "Snakefile"
    header = [f"# Written by voirdire init; edit freely. Run: snakemake -s {snakefile} --cores 2 --configfile {path}",
              "# Paths resolve from the folder snakemake runs in.", *[f"# - {n}" for n in notes]]  # fmt: skip
    text = "\n".join(header) + "\n" + yaml.safe_dump(config, sort_keys=False, allow_unicode=True)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(text, encoding="utf-8")
