"""Recorded systems: TREC run files (a participant's submissions, public reranker runs) that
enter the tables beside the systems the workflow runs itself.

A ``runs:`` entry names one run file, or a folder of them, per dataset. In a folder every file
is one system, named by its run tag (6th column) or, where two files share a tag, by its file
stem. Each run is read as trec_eval reads it and normalised once per dataset (one job, not one
per system) by :func:`normalise_run`:

* a query that is not a topic is an error naming the file, or dropped and counted
  (``unknown_queries: drop``);
* a topic the run lacks stays in every mean with score 0, as ``trec_eval -c`` does; counted;
* the order is trec_eval's (score descending, then document id descending), whatever the
  rank column says; queries with tied scores in the top 10 are counted, since tools that
  break ties by file order report other numbers (Lin & Yang, SIGIR 2019);
* trec_eval reads scores at single precision, so scores that differ beyond about seven digits
  (an LLM reranker's probabilities near 1) tie there and go by document id: the queries whose
  top 10 is ordered otherwise at full precision are counted (``queries_top10_single_precision``),
  since every measure's value there depends on ``evaluation.ties`` (and ir_measures' default
  RR@k provider, like the figures published with such runs, reads full precision);
* the run is cut at ``depth``: a system is scored on the part of its ranking its judges label.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from .errors import ConfigError, InputError
from .formats import run_tag, trec_eval_order

UNKNOWN_QUERIES = ("error", "drop")
_SAFE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")
RUN_SUFFIXES = (".gz", ".txt", ".run", ".trec", ".tsv")


@dataclass(frozen=True)
class Recorded:
    """A system whose ranking is read from a TREC run file, one per dataset."""

    name: str
    files: tuple[tuple[str, Path], ...]  # (dataset, run file)
    family: str | None = None
    group: str = ""  # the runs: key it came from (a folder key lists all of its systems)
    unknown_queries: str = "error"

    def __str__(self) -> str:
        return self.name

    @property
    def slug(self) -> str:
        return self.name

    def file(self, dataset: str) -> Path:
        for name, path in self.files:
            if name == dataset:
                return path
        raise ConfigError(f"run {self.name!r} has no file for dataset {dataset!r}", key=f"runs.{self.group}")


def _stem(path: Path) -> str:
    name = path.name
    for suffix in (".gz", ".txt", ".run", ".trec", ".tsv"):
        name = name.removesuffix(suffix)
    return name


def run_files(folder: Path) -> list[Path]:
    """The run files of a folder: every regular, non-hidden file, in name order."""
    return sorted(p for p in folder.iterdir() if p.is_file() and not p.name.startswith("."))


def folder_names(folder: Path, *, key: str) -> tuple[dict[str, Path], list[str]]:
    """System name -> file for a folder of runs, and the notes on names taken from stems.

    A file is named by its run tag; files whose tags clash are named by their stems instead
    (noted, so the log can say so); stems that clash too are an error.
    """
    files = run_files(folder)
    if not files:
        raise ConfigError(f"the folder {folder} holds no run files", key=key)
    tags = {path: run_tag(path) for path in files}
    counts = pd.Series(list(tags.values())).value_counts()
    names: dict[str, Path] = {}
    notes = []
    for path, tag in tags.items():
        name = tag
        if counts[tag] > 1:
            name = _stem(path)
            notes.append(f"{path}: run tag {tag!r} is shared with another file; named {name!r} by its stem")
        if name in names:
            raise ConfigError(f"two runs are named {name!r} ({names[name]} and {path})", key=key)
        names[name] = path
    return names, notes


def recorded_from_config(
    group: str, entry: Mapping, datasets: list[str], *, key: str
) -> tuple[list[Recorded], list[str]]:
    """The recorded systems of one ``runs:`` entry (a file or a folder, for every dataset or
    per dataset), and notes for the log."""
    spec = entry["path"]
    paths = dict(spec) if isinstance(spec, Mapping) else {d: spec for d in datasets}
    for dataset in paths:
        if dataset not in datasets:
            raise ConfigError(f"unknown dataset {dataset!r}", key=f"{key}.path.{dataset}")
    missing = [d for d in datasets if d not in paths]
    if missing:
        raise ConfigError(f"no run for dataset {missing[0]!r}", key=f"{key}.path")
    families = dict(entry.get("families") or {})
    unknown = entry.get("unknown_queries", "error")
    per_dataset: dict[str, dict[str, Path]] = {}
    notes: list[str] = []
    for dataset, raw in paths.items():
        where = f"{key}.path" + (f".{dataset}" if isinstance(spec, Mapping) else "")
        path = Path(raw)
        if path.is_dir():
            names, found = folder_names(path, key=where)
            notes += found
        elif path.is_file():
            run_tag(path)  # a first line that is not a run line is an error now, naming file:line
            names = {group: path}
        else:
            raise ConfigError(f"file or folder not found: {path}", key=where)
        per_dataset[dataset] = names
    first = per_dataset[datasets[0]]
    for dataset, names in per_dataset.items():
        if set(names) != set(first):
            odd = sorted(set(names) ^ set(first))
            raise ConfigError(
                f"the runs of {dataset!r} and {datasets[0]!r} name different systems ({', '.join(odd[:3])}); "
                "a system needs a run for every dataset",
                key=f"{key}.path",
            )
    for name in families:
        if name not in first:
            raise ConfigError(
                f"{name!r} is not one of this entry's runs ({', '.join(sorted(first))})", key=f"{key}.families"
            )
    systems = []
    for name in first:
        if not _SAFE.match(name):
            raise ConfigError(
                f"run name {name!r} has characters a file name cannot carry (letters, digits, _ . + - only)",
                key=key,
            )
        files = tuple((d, per_dataset[d][name]) for d in datasets)
        family = families.get(name, entry.get("family"))
        systems.append(Recorded(name=name, files=files, family=family, group=group, unknown_queries=unknown))
    return systems, notes


def _queries_with_ties(run: pd.DataFrame) -> int:
    """How many queries of ``run`` score two of their documents the same."""
    repeated = run.duplicated(["query_id", "score"])
    return int(repeated.groupby(run["query_id"], sort=False).any().sum())


def single_precision_order(run: pd.DataFrame) -> pd.DataFrame:
    """A run in trec_eval's order as trec_eval reads it: per query, the score as a single-precision
    float descending, then document id descending (:func:`voirdire.formats.trec_eval_order` is
    the same at full precision)."""
    keyed = run.assign(_single=run["score"].to_numpy(dtype=float).astype(np.float32))
    ordered = keyed.sort_values(["query_id", "_single", "doc_id"], ascending=[True, False, False], kind="stable")
    return ordered.drop(columns="_single")


def queries_ordered_by_precision(run: pd.DataFrame, k: int = 10) -> list[str]:
    """The queries whose top ``k`` (the documents and their order) differs between trec_eval's
    single-precision order (:func:`single_precision_order`) and the full-precision one: where a
    measure at cutoff k depends on ``evaluation.ties``."""
    if not len(run):
        return []
    # both orders sort by query first, and keep as many lines of each: their tops align line by line
    full, single = (
        o.groupby("query_id", sort=False).head(k) for o in (trec_eval_order(run), single_precision_order(run))
    )
    differs = full["doc_id"].to_numpy() != single["doc_id"].to_numpy()
    return sorted(set(full.loc[differs, "query_id"]))


def normalise_run(
    run: pd.DataFrame,
    topics: Mapping[str, str],
    *,
    depth: int,
    unknown_queries: str,
    name: str,
    path: str | Path,
    set_aside: Collection[str] = (),
) -> tuple[pd.DataFrame, dict]:
    """A recorded run as the workflow scores it, and what was changed on the way.

    Returns the top ``depth`` per topic in trec_eval's order, ranks renumbered 1..n (so every
    later reader agrees on the order), with the counts a user must see: unknown queries
    dropped, topics missing (they score 0), queries whose top 10 holds tied scores, queries
    whose top 10 is ordered otherwise at single precision than at full precision (their
    measures depend on ``evaluation.ties``), documents cut below ``depth``. Lines of
    ``set_aside`` queries (topics the dataset's ``queries`` list leaves out) are removed first
    and counted, not taken for unknown queries.
    """
    if unknown_queries not in UNKNOWN_QUERIES:
        raise ValueError(f"unknown_queries must be one of {UNKNOWN_QUERIES}")
    aside = run["query_id"].isin(set(set_aside))
    run = run[~aside]
    known = run["query_id"].isin(set(topics))
    unknown = sorted(set(run.loc[~known, "query_id"]))
    if known.sum() == 0:
        raise InputError(
            f"run {name!r}: none of its {run['query_id'].nunique()} queries is a topic (first: {unknown[0]}); "
            "is it a run of another dataset?",
            path=path,
        )
    if unknown and unknown_queries == "error":
        raise InputError(
            f"run {name!r} ranks {len(unknown)} queries that are not topics (first: {unknown[0]}); "
            "set unknown_queries: drop on the run to drop and count them",
            path=path,
        )
    ordered = trec_eval_order(run[known])
    top10 = ordered.groupby("query_id", sort=False).head(10)
    tied = _queries_with_ties(top10)
    kept = ordered.groupby("query_id", sort=False).head(depth).copy()
    tied_depth = _queries_with_ties(kept)
    by_precision = len(queries_ordered_by_precision(ordered, 10))
    kept["rank"] = kept.groupby("query_id", sort=False).cumcount() + 1
    summary = {
        "system": name,
        "file": str(path),
        "queries": int(kept["query_id"].nunique()),
        "topics_missing": int(len(set(topics) - set(kept["query_id"]))),
        "unknown_queries_dropped": len(unknown),
        "lines_dropped_unknown": int((~known).sum()),
        "lines_set_aside": int(aside.sum()),
        "queries_tied_top10": tied,
        "queries_tied_in_depth": tied_depth,
        "queries_top10_single_precision": by_precision,
        "documents_below_depth": int(len(ordered) - len(kept)),
        "max_depth_in_file": int(ordered.groupby("query_id").size().max()),
        "depth": depth,
    }
    return kept.reset_index(drop=True), summary
