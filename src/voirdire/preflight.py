"""Checks of input files and the environment that run when the DAG is built, before any job.

Topics and qrels are small, so reading them up front costs little and turns a malformed
line into an error before hours of BM25 or judging. A JSONL corpus is checked line by line
too (valid JSON, an id and a text, UTF-8); a large one is checked once and remembered by its
path, size and modification time under ``results/.preflight/``. LLM judges and API rankers
need their key in the environment: an unset ``api_key_env`` fails here, not in the job.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from .assistants.declarations import LLMAssistant
from .config import Plan
from .data import load_dataset
from .errors import ConfigError, InputError
from .formats import read_corpus, read_qrels_counted
from .judges import LLMJudge, RecordedJudge


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


def check_grades_used(judge: RecordedJudge, labels) -> None:
    """A label set declared on a scale it does not use is most likely declared wrong (a 0/1
    judge declared 0-3 makes Table 2's binary kappa 0 and every AP 0 without a word): an error
    naming the judge's ``scale`` key, unless it sets ``unused_grades: allow``."""
    low, high = judge.scale.low, judge.scale.high
    # a handful of labels says little about the scale: ten per grade at least before it is judged
    if judge.unused_grades == "allow" or len(labels) < 10 * (high - low + 1):
        return
    used = sorted(set(labels["relevance"].astype(int)))
    problems = []
    if high not in used:
        problems.append(f"never uses its top grade {high}")
    if len(used) <= 2 < high - low + 1:
        problems.append(f"uses only the grades {', '.join(map(str, used))}")
    problem = " and ".join(problems)
    if problem:
        raise ConfigError(
            f"recorded judge {judge.name!r} is declared on {low}..{high} but {problem} in {judge.qrels}: declare the "
            f"scale it uses (scale: {{min: {used[0]}, max: {used[-1]}}}, binary_threshold), or set "
            "unused_grades: allow",
            key=f"judges[{judge.name}].scale",
        )


def preflight(plan: Plan, *, keys: bool = True, write: bool = True) -> None:
    """Parse every topics/qrels/corpus/candidates file the plan names, check keys and results.

    ``keys=False`` skips the API-key check, for what makes no call (``--lint``, ``--report``).
    ``write=False`` leaves the results folder untouched (a corpus checked is not remembered),
    for what only reads the workflow (``--lint``, ``--list``).
    Raises :class:`~voirdire.errors.InputError` naming the file:line or config key.
    """
    results = plan.config["results"]
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
            check_grades_used(judge, labels)
