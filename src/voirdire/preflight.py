"""Checks of input files and the environment that run when the DAG is built, before any job.

Topics and qrels are small, so reading them up front costs little and turns a malformed
line into an error before hours of BM25 or judging. A JSONL corpus is checked line by line
too (valid JSON, an id and a text, UTF-8); a large one is checked once and remembered by its
path, size and modification time under ``results/.preflight/``. LLM judges and API rankers
need their key in the environment: an unset ``api_key_env`` fails here, not in the job.
"""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path

from .assistants.declarations import LLMAssistant
from .config import Plan
from .data import load_dataset
from .errors import ConfigError, InputError
from .formats import read_corpus, read_qrels_counted
from .judges import LLMJudge, RecordedJudge

log = logging.getLogger(__name__)


def check_results_dir(results: str | Path) -> None:
    """The results folder can be created: no part of its path is a regular file."""
    path = Path(results).absolute()
    for parent in [path, *path.parents]:
        if parent.exists():
            if not parent.is_dir():
                raise ConfigError(f"{parent} is a file, so {path} cannot be a folder", key="results")
            return


def check_keys(plan: Plan) -> None:
    """Every LLM judge's, API ranker's and live assistant's and LLM padder's ``api_key_env`` is set in the environment."""
    endpoints = {f"judges[{j.name}]": j.endpoint for js in plan.judges.values() for j in js if isinstance(j, LLMJudge)}
    endpoints.update({f"rankers.{r.name}": r.endpoint for r in plan.rankers if r.endpoint is not None})
    endpoints.update({f"assistants.{a.name}": a.endpoint for a in plan.assistants if isinstance(a, LLMAssistant)})
    endpoints.update(
        {f"probes.pad.assistants.{a.name}": a.endpoint for a in plan.padders if isinstance(a, LLMAssistant)}
    )
    for key, endpoint in endpoints.items():
        endpoint.api_key(key=key)  # the call path's own check, run before any job


def check_corpus(path: str | Path, results: str | Path, *, remember: bool = True) -> None:
    """Read a JSONL corpus through once (file:line of the first bad record); remembered if good
    (unless ``remember`` is False: then read each time and nothing is written)."""
    stat = Path(path).stat()
    token = hashlib.sha256(f"{Path(path).absolute()}|{stat.st_size}|{stat.st_mtime_ns}".encode()).hexdigest()
    marker = Path(results) / ".preflight" / f"corpus-{token[:16]}.ok"
    if marker.is_file():
        return
    for _ in read_corpus(path):
        pass
    if not remember:
        return
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.write_text(f"{path}\n", encoding="utf-8")


def _grades(grades) -> str:
    grades = [str(g) for g in grades]
    return ", ".join(grades[:-1]) + f" and {grades[-1]}" if len(grades) > 1 else grades[0]


def unused_grades(judge: RecordedJudge, labels) -> tuple[str, bool] | None:
    """What a label set leaves unused of its declared scale: a sentence for the log and the
    verdict's notes, and whether it is a binary judge's grades on a larger scale (only the two
    lowest grades of three or more: a 0/1 judge declared 0-3). None when it uses every grade,
    or holds too few labels to tell (fewer than ten per grade)."""
    low, high = judge.scale.low, judge.scale.high
    if len(labels) < 10 * (high - low + 1):
        return None
    used = sorted({int(g) for g in labels["relevance"].unique()})
    missing = [g for g in range(low, high + 1) if g not in used]
    if not missing:
        return None
    binary = used == [low, low + 1] and high - low >= 2
    if binary:
        what = "a binary judge's grades, kept on the declared scale (unused_grades: allow)"
    else:
        what = "a strict or coarse judge: a finding, its labels used as given"
    note = (
        f"recorded judge {judge.name} uses only the grades {_grades(used)} of its scale {low}..{high} "
        f"(never {_grades(missing)}) in {judge.qrels}: {what}"
    )
    return note, binary


def check_grades_used(judge: RecordedJudge, labels) -> str | None:
    """A label set that leaves grades of its declared scale unused. Only the two lowest grades of a
    scale of three or more (a 0/1 judge declared 0-3, which makes Table 2's binary kappa 0 and
    every AP 0 without a word) is most likely declared wrong: an error naming the judge's
    ``scale`` key, unless it sets ``unused_grades: allow``. Any other unused grade (a strict
    judge that never gives the top grade, a prompt variant that grades 0 and 2 only) is a
    finding, not a config error: a warning in the log naming the judge and the grades it used,
    and the sentence returned, for the verdict's notes (:func:`unused_grade_notes`)."""
    found = unused_grades(judge, labels)
    if found is None:
        return None
    note, binary = found
    if binary and judge.unused_grades != "allow":
        low, high = judge.scale.low, judge.scale.high
        raise ConfigError(
            f"recorded judge {judge.name!r} is declared on {low}..{high} but never uses its top grade {high}: it "
            f"uses only the grades {low} and {low + 1} in {judge.qrels}, a binary judge's: declare the scale it uses "
            f"(scale: {{min: {low}, max: {low + 1}}}, binary_threshold: {low + 1}), or set unused_grades: allow",
            key=f"judges[{judge.name}].scale",
        )
    log.warning("%s", note)
    return note


def _recorded(plan: Plan) -> list[RecordedJudge]:
    """Every recorded judge of the plan, once per label set (a judge of several datasets may name one file)."""
    found = {(j.name, str(j.qrels)): j for js in plan.judges.values() for j in js if isinstance(j, RecordedJudge)}
    return list(found.values())


def unused_grade_notes(plan: Plan) -> list[str]:
    """The verdict's notes on grades left unused: one sentence per recorded judge's label set that
    leaves grades of its declared scale unused (:func:`unused_grades`), read from its qrels file
    as the workflow reads it. A label set that cannot be read is left to the preflight's error."""
    notes = []
    for judge in _recorded(plan):
        try:
            labels = read_qrels_counted(judge.qrels, (judge.scale.low, judge.scale.high), invalid=judge.invalid_labels)
        except InputError:
            continue
        found = unused_grades(judge, labels[0])
        if found is not None:
            notes.append(found[0])
    return notes


def preflight(plan: Plan, *, keys: bool = True, write: bool = True) -> list[str]:
    """Parse every topics/qrels/corpus/candidates file the plan names, check keys and results;
    return the verdict's notes on grades the recorded judges leave unused (as :func:`unused_grade_notes`).

    ``keys=False`` skips the API-key check, for what makes no call (``--lint``, ``--report``).
    ``write=False`` leaves the results folder untouched (a corpus checked is not remembered),
    for what only reads the workflow (``--lint``, ``--list``).
    Raises :class:`~voirdire.errors.InputError` naming the file:line or config key.
    """
    results = plan.config["results"]
    notes: list[str] = []
    seen: set[tuple[str, str]] = set()  # a label set two datasets share is judged once
    check_results_dir(results)
    if keys:
        check_keys(plan)
    for name, spec in plan.config["datasets"].items():
        topics = None
        if spec["source"] != "ir_datasets":
            topics = set(load_dataset(spec, name=name).topics)
        if "corpus" in spec:
            check_corpus(spec["corpus"], results, remember=write)
        for judge in plan.judges[name]:
            if not isinstance(judge, RecordedJudge):
                continue
            bounds = (judge.scale.low, judge.scale.high)
            for rerun in judge.reruns:
                read_qrels_counted(rerun, bounds, invalid=judge.invalid_labels)
            labels = read_qrels_counted(judge.qrels, bounds, invalid=judge.invalid_labels)[0]
            query_ids = set(labels["query_id"].unique())  # not set(column): a Python loop over every label
            if topics is not None and not topics & query_ids:
                raise InputError(
                    f"recorded judge {judge.name!r} has no label for any query of dataset {name!r} "
                    f"(its query ids: {', '.join(sorted(query_ids)[:3])}, ...; is it "
                    "the qrels of another dataset?)",
                    path=judge.qrels,
                )
            if (judge.name, str(judge.qrels)) in seen:
                continue
            seen.add((judge.name, str(judge.qrels)))
            note = check_grades_used(judge, labels)
            if note is not None:
                notes.append(note)
    return notes
