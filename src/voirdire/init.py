"""``voirdire init``: an editable config for the common case, from files a user already has.

Given human qrels, topics, recorded runs (a folder or files) and recorded judges' label sets,
it writes a labels-only config (no corpus: recorded systems and judges, and the audits that
need only labels) that validates and runs unchanged with
``snakemake --cores N --configfile THAT``. Without runs (a challenge's label sets and its human
qrels, as LLMJudge gives them) the config lists no systems: the label sets are audited alone,
on the human-judged pairs.

Nothing is guessed without a word. The label sets of one release share a scale, inferred once
from all of them (:func:`release_scale`: the human qrels' grades, unless most label sets hold
others); a label set that departs from it is a warning naming its file and the grades it holds
(:func:`judge_scale`). The oracles' base run is chosen by a stated rule (:func:`oracle_base`).
A ``--family`` pattern that matches nothing, and a judge's family spelled near a run's but not
the same, are warnings. Notes and warnings are written into the file as comments, so the user
can see and change what was chosen.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from difflib import get_close_matches
from fnmatch import fnmatch, fnmatchcase
from glob import glob, has_magic
from pathlib import Path

import yaml

from .config.sections_systems import near_families
from .errors import ConfigError, InputError
from .evaluation import DEFAULT_MEASURES, parse_measure
from .formats import read_qrels, read_run, read_topics, run_tag, text_lines, trec_eval_order
from .runs import _SAFE, _stem, folder_names, run_files

_JUDGE_NAME = re.compile(r"[^A-Za-z0-9_.-]")
WARNING = "warning: "
"""The prefix of a note a user must read (a per-file exception, a choice init could not make
safely): ``voirdire init`` prints these apart, after the notes."""
STRAY_SHARE = 0.01
"""Grades outside the release's scale on at most this share of a label set's labels are stray
lines (dropped and counted, ``invalid_labels: drop``); on more, the set has a scale of its own."""
OVERLAP = 0.9
"""A run reranks another when, on average over its queries, at least this share of its top
``depth`` documents lie within the other run's documents for the query."""
DEPTH = 100  # the evaluation depth init writes


def _pairs(values: Sequence[str], flag: str) -> dict[str, str]:
    found = {}
    for value in values:
        name, sep, rest = value.partition("=")
        if not sep or not name or not rest:
            raise ConfigError(f"expected NAME=VALUE, got {value!r}", key=flag)
        found[name] = rest
    return found


def not_qrels(path: str | Path) -> str | None:
    """Why a file is not a qrels file (None if its first line is one: 4 fields, an integer
    grade), read from its first non-blank line; a later bad line is the reader's error."""
    try:
        for number, line in text_lines(path):
            fields = line.split()
            if not fields:
                continue
            if len(fields) != 4:
                return f"line {number} has {len(fields)} fields, not a qrels line (qid iter docid grade)"
            if not re.fullmatch(r"-?[0-9]+", fields[3]):
                return f"line {number} is not a qrels line: its grade {fields[3]!r} is not an integer"
            return None
    except InputError as error:  # not UTF-8 text: a binary file, an archive
        return error.message
    return "it is empty"


def judge_folder(folder: str | Path, *, notes: list[str] | None = None) -> dict[str, str]:
    """Judge name -> label set, for a folder of label sets (qrels files; a challenge's submissions)
    or a glob (``release/*.qrels``): one judge per file, named by its file name without the
    suffixes of a run file (characters a judge name cannot carry become ``_``). A file that is not
    a qrels file (a release's ``topics.tsv``, a README) is skipped, with a line in ``notes``."""
    path = Path(folder)
    if path.is_dir():
        files = run_files(path)
    elif has_magic(str(folder)):
        files = sorted(Path(p) for p in glob(str(folder)) if Path(p).is_file() and not Path(p).name.startswith("."))
    else:
        raise ConfigError(f"no such folder: {folder} (a folder of label sets, or a glob)", key="--judges")
    found: dict[str, str] = {}
    for file in files:
        reason = not_qrels(file)
        if reason is not None:
            if notes is not None:
                notes.append(f"{file}: skipped, not a label set ({reason})")
            continue
        name = _JUDGE_NAME.sub("_", _stem(file).removesuffix(".qrels")).lstrip("_.-") or "judge"
        if name in found:
            raise ConfigError(f"two label sets are named {name!r} ({found[name]} and {file})", key="--judges")
        found[name] = str(file)
    if not found:
        raise ConfigError(f"{folder} holds no label sets (qrels files)", key="--judges")
    return found


def family_of(name: str, patterns: dict[str, str]) -> str | None:
    """The family of a run or judge: the first ``--family PATTERN=FAMILY`` whose pattern (a name
    or a shell glob, ``run.*monot5*``) matches its name."""
    return next((family for pattern, family in patterns.items() if fnmatchcase(name, pattern)), None)


# ----------------------------------------------------------------------------- scales


def middle_threshold(low: int, high: int) -> int:
    """Relevant from the middle of the range up: 2 on 0-3, 1 on 0-1, 5 on 0-10."""
    return max(low + 1, math.ceil((low + high) / 2))


def grade_counts(path: str | Path) -> dict[int, int]:
    """Grade -> labels of a label set (a pair graded twice differently is an error naming file:line)."""
    grades = read_qrels(path, (-(10**9), 10**9))["relevance"].value_counts()
    return {int(grade): int(count) for grade, count in sorted(grades.items())}


def _shown(grades: Sequence[int]) -> str:
    grades = list(grades)
    return ", ".join(map(str, grades[:-1])) + f" and {grades[-1]}" if len(grades) > 1 else str(grades[0])


def _outside(counts: Mapping[int, int], low: int, high: int) -> dict[int, int]:
    return {grade: n for grade, n in counts.items() if not low <= grade <= high}


def release_scale(human: Mapping[int, int], sets: Mapping[str, Mapping[int, int]]) -> tuple[tuple[int, int, int], str]:
    """The scale a release's label sets share, (min, max, binary threshold), and where it comes from.

    The human qrels' range is the default: it is kept when at least half of the label sets hold
    no other grade (stray lines aside, :data:`STRAY_SHARE`). Otherwise the label sets speak for
    themselves: the range of the grades at least half of them use."""
    low, high = min(human), max(human)
    high = max(high, low + 1)
    fits = [
        name
        for name, counts in sets.items()
        if sum(_outside(counts, low, high).values()) <= STRAY_SHARE * sum(counts.values())
    ]
    if 2 * len(fits) >= len(sets):
        return (low, high, middle_threshold(low, high)), (
            f"the human qrels' grades; {len(fits)} of {len(sets)} label sets hold no other grade"
        )
    common = sorted(
        g for g in {g for c in sets.values() for g in c} if 2 * sum(g in c for c in sets.values()) >= len(sets)
    )
    if len(common) < 2:
        common = sorted({g for c in sets.values() for g in c})
    low, high = common[0], max(common[-1], common[0] + 1)
    return (low, high, middle_threshold(low, high)), (
        f"the grades at least half of the {len(sets)} label sets use: the human qrels' {min(human)}-{max(human)} fits "
        f"only {len(fits)} of them"
    )


def judge_scale(
    name: str, path: str, counts: Mapping[int, int], release: tuple[int, int, int]
) -> tuple[dict, str | None]:
    """A label set's config keys (``scale``, ``binary_threshold``, ``invalid_labels``) on the
    release's scale, and the warning when it departs from it (None when it does not):

    * grades outside the release's on at most :data:`STRAY_SHARE` of its labels: stray lines,
      left out and counted (``invalid_labels: drop``), never mapped onto a grade;
    * only the release's two lowest grades (0 and 1 on 0-3): a binary label set, declared so;
    * some of the release's grades unused (never the top grade: a strict judge): the release's
      scale, since a strict judge is a finding, not a scale of its own;
    * grades outside the release's on more of its labels: its own range (min..max, relevant
      from the middle)."""
    low, high, threshold = release
    total = sum(counts.values())
    outside = _outside(counts, low, high)
    stray = sum(outside.values())
    release_text = f"the release's {low}-{high}"
    if stray > STRAY_SHARE * total:
        own_low, own_high = min(counts), max(max(counts), min(counts) + 1)
        own = middle_threshold(own_low, own_high)
        return {"scale": {"min": own_low, "max": own_high}, "binary_threshold": own}, (
            f"{path}: grades {_shown(sorted(outside))} on {stray:,} of {total:,} labels, outside {release_text}: "
            f"judge {name} declared on its own {own_low}..{own_high}, relevant from {own}; check its scale "
            f"(judges[{name}].scale, binary_threshold)"
        )
    entry: dict = {"scale": {"min": low, "max": high}, "binary_threshold": threshold}
    said = []
    if stray:
        entry["invalid_labels"] = "drop"
        word = "grade" if len(outside) == 1 else "grades"
        said.append(
            f"{word} {_shown(sorted(outside))} on {stray:,} of {total:,} labels, outside {release_text}: "
            "invalid_labels: drop leaves those lines out, counted in Table 2 (invalid_labels_dropped)"
        )
    used = sorted(set(counts) - set(outside))
    if used == [low, low + 1] and high - low >= 2:
        entry["scale"], entry["binary_threshold"] = {"min": low, "max": low + 1}, low + 1
        said.append(
            f"only grades {low} and {low + 1} on {total - stray:,} labels, the two lowest of {release_text}: "
            f"judge {name} declared {low}..{low + 1}, relevant from {low + 1} (a binary label set; if its "
            f"{low + 1} means the release's {low + 1}, declare {low}..{high} and unused_grades: allow)"
        )
    elif used != list(range(low, high + 1)):
        missing = [g for g in range(low, high + 1) if g not in used]
        said.append(
            f"grades {_shown(used)} on {total - stray:,} labels, never {_shown(missing)} of {release_text}: "
            f"judge {name} stays on {low}..{high}, relevant from {threshold} (a strict or coarse judge is "
            "a finding: the log and the verdict's notes say so)"
        )
    return entry, (f"{path}: " + "; ".join(said)) if said else None


# ----------------------------------------------------------------------------- the oracles' base


def _documents(run) -> dict[str, set[str]]:
    """Query id -> the documents a run (a frame: query_id, doc_id) holds for it."""
    return {qid: set(docs) for qid, docs in run.groupby("query_id", sort=False)["doc_id"]}


def _within(top: Mapping[str, set[str]], pool: Mapping[str, set[str]]) -> float:
    """The mean share, over the queries of ``top``, of its documents that ``pool`` holds for the query."""
    shares = [len(docs & pool.get(qid, set())) / len(docs) for qid, docs in top.items() if docs]
    return sum(shares) / len(shares) if shares else 0.0


def oracle_base(runs: Mapping[str, str | Path], chosen: str | None = None, *, depth: int = DEPTH) -> tuple[str, str]:
    """The run the oracles (Perfect) reorder, and why: ``chosen`` (``--oracle-base``) if given;
    else the only run; else the run all others rerank: the one run whose documents hold, per
    query, at least :data:`OVERLAP` of every other run's top ``depth`` (on average over its
    queries); else the run named BM25 (one name holding ``bm25``, any case) among those that
    hold the others, or among all; else a :class:`ConfigError` asking for ``--oracle-base``."""
    names = list(runs)
    if chosen is not None:
        if chosen not in runs:
            close = get_close_matches(chosen, names, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ConfigError(f"{chosen!r} is not a run (runs: {', '.join(names)}){hint}", key="--oracle-base")
        return chosen, "--oracle-base"
    if len(names) == 1:
        return names[0], "the only run"
    ordered = {name: trec_eval_order(read_run(path)) for name, path in runs.items()}
    tops = {name: _documents(run.groupby("query_id", sort=False).head(depth)) for name, run in ordered.items()}
    pools = {name: _documents(run) for name, run in ordered.items()}
    least = {b: min(_within(tops[r], pools[b]) for r in names if r != b) for b in names}
    holders = [b for b in names if least[b] >= OVERLAP]
    if len(holders) == 1:
        return holders[0], (
            f"the run the others rerank: of each other run's top {depth}, at least {least[holders[0]]:.0%} lies "
            "within its documents (per query, on average)"
        )
    named = [b for b in (holders or names) if "bm25" in b.lower()]
    if len(named) == 1:
        why = (
            f"{', '.join(holders)} each hold the others' top {depth}"
            if holders
            else f"no run holds {OVERLAP:.0%} of every other run's top {depth}"
        )
        return named[0], f"the run named BM25 ({why})"
    found = (
        f"{', '.join(holders)} each hold the others' documents (the same pool, reranked)"
        if holders
        else f"no run holds {OVERLAP:.0%} of every other run's top {depth} per query"
    )
    raise ConfigError(
        f"the oracles (Perfect) reorder one run's top {depth} by the human labels, and init cannot tell "
        f"which: {found}, and no one run is named BM25; give --oracle-base RUN (one of "
        f"{', '.join(names)})",
        key="--oracle-base",
    )


# ----------------------------------------------------------------------------- families


def family_warnings(
    patterns: Mapping[str, str],
    runs: Sequence[str],
    judges: Mapping[str, str | None],
    systems: Mapping[str, str | None],
) -> list[str]:
    """What a user must hear about ``--family``: a pattern that matches no run or judge name (with
    the names it nearly matches), and a judge whose family no system has while a system's family
    is spelled near it (``flan-t5`` and ``t5``): its own-family audit would be n/a."""
    warnings = []
    names = [*runs, *judges]
    for pattern, family in patterns.items():
        if any(fnmatchcase(name, pattern) for name in names):
            continue
        near = [n for n in names if fnmatch(n.lower(), pattern.lower())] or (
            [] if has_magic(pattern) else get_close_matches(pattern, names, n=3, cutoff=0.6)
        )
        hint = f"; did you mean {', '.join(map(repr, near))}? (patterns are case-sensitive globs)" if near else ""
        warnings.append(
            f"--family {pattern}={family} matches no run or judge name (runs: {', '.join(runs) or 'none'}; "
            f"judges: {', '.join(judges) or 'none'}){hint}"
        )
    system_families = sorted({f for f in systems.values() if f})
    for judge, family in judges.items():
        if not family or family in system_families:
            continue
        near = near_families(family, system_families)
        if near:
            warnings.append(
                f"judge {judge}'s family {family!r} is no run's family, but spelled near "
                f"{', '.join(map(repr, near))} (runs' families: {', '.join(system_families)}): its "
                "own-family audit is n/a; if it is the same family, give both one name (--family)"
            )
    return warnings


# ----------------------------------------------------------------------------- short system names

SHORT_NAME = 20
"""The longest system name :func:`short_names` gives: a name is in every cell of the verdict that
names systems (the oracles cell lists each system that passes an oracle)."""
_WORDS = re.compile(r"[A-Za-z0-9]+|[^A-Za-z0-9]+")
_RESERVED = re.compile(r"^(bm25|perfect|swap\[.*\])$", re.IGNORECASE)  # the workflow's own systems


def _words(name: str) -> list[str]:
    """A name as its alternating words and separators (``run.bm25-v2`` -> run . bm25 - v2)."""
    return _WORDS.findall(name)


def _common_affixes(names: Sequence[str]) -> tuple[int, int]:
    """How many leading and trailing tokens (:func:`_words`) every name shares, cut at a separator
    (the prefix ends with one, the suffix starts with one), each name keeping a word."""
    tokens = [_words(n) for n in names]
    if len(tokens) < 2:
        return 0, 0
    shortest = min(len(t) for t in tokens)
    lead = 0
    while lead < shortest - 1 and len({t[lead] for t in tokens}) == 1:
        lead += 1
    while lead and tokens[0][lead - 1].isalnum():  # back to the last separator
        lead -= 1
    trail = 0
    while trail < shortest - lead - 1 and len({t[-1 - trail] for t in tokens}) == 1:
        trail += 1
    while trail and tokens[0][-trail].isalnum():  # forward to a separator
        trail -= 1
    return lead, trail


def _abbreviated(name: str, limit: int, spread: Mapping[str, int] | None = None) -> str:
    """``name`` in at most ``limit`` characters, its words joined by ``-``: the first and the last
    (a team, a run's number or version), then the words between as they fit, the rarest across the
    runs first (``spread``: word -> how many names hold it; what tells runs apart), kept in their
    order; a word that no longer fits whole is cut to what is left (three characters or more)."""
    if len(name) <= limit:
        return name
    words = [w for w in _words(name) if w.isalnum()]
    if len(words) < 2:
        return name[:limit]
    first, last = words[0], words[-1][: max(3, limit // 2)]
    first = first[: max(1, limit - len(last) - 1)]
    kept = {0: first, len(words) - 1: last}
    room = limit - len(first) - len(last) - 1
    middle = sorted(range(1, len(words) - 1), key=lambda i: (spread or {}).get(words[i], 0))
    for i in middle:
        if len(words[i]) + 1 <= room:
            kept[i], room = words[i], room - len(words[i]) - 1
        elif room >= 4:
            kept[i], room = words[i][: room - 1], 0
    return "-".join(kept[i] for i in sorted(kept))


def short_names(names: Sequence[str], limit: int = SHORT_NAME) -> dict[str, str]:
    """Name -> a short, unique, readable system name. Names of at most ``limit`` characters are
    kept as they are (every one of them, when none is longer). Otherwise every name loses what all
    of them share at their start and end (``llmjudge-2024-``, ``.run``: whole words), and a name
    still longer keeps its first and last word and the rarest words between that fit
    (:func:`_abbreviated`); a coincidence left is numbered. A name never becomes one of the
    workflow's own systems (BM25, Perfect, Swap[...]), and holds only the characters a system name
    may (letters, digits, ``_ . + -``)."""
    names = list(dict.fromkeys(names))
    if all(len(n) <= limit for n in names):
        return {n: n for n in names}
    lead, trail = _common_affixes(names)
    stripped = ["".join(_words(n)[lead : len(_words(n)) - trail]) for n in names]
    spread = Counter(w for n in stripped for w in {w for w in _words(n) if w.isalnum()})
    found: dict[str, str] = {}
    taken: set[str] = set()
    for name, short in zip(names, stripped, strict=True):
        candidate = re.sub(r"[^A-Za-z0-9_.+-]", "_", _abbreviated(short, limit, spread)).lstrip("_.+-") or "run"
        if _RESERVED.match(candidate):
            candidate = _abbreviated(f"{candidate}-run", limit)
        unique, number = candidate, 1
        while unique.lower() in taken:
            number += 1
            unique = f"{candidate[: limit - len(str(number)) - 1]}-{number}"
        taken.add(unique.lower())
        found[name] = unique
    return found


def _described(path: Path, name: str) -> str:
    """A run's full identity, for the ``description`` of its shortened entry."""
    return f"{name}: {path} (run tag {run_tag(path)})"


# ----------------------------------------------------------------------------- the config


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
    oracle_base_run: str | None = None,
) -> tuple[dict, list[str]]:
    """The config and the notes (comments) to write above it; notes that start with
    :data:`WARNING` are what a user must read. No ``runs``: a config without systems, whose
    judges' label sets are audited alone (on the human-judged pairs)."""
    notes: list[str] = []
    family = _pairs(families, "--family")
    judge_files = _pairs(judges, "--judge")
    for folder in judge_folders:
        for name, path in judge_folder(folder, notes=notes).items():
            if Path(path).resolve() == Path(qrels).resolve():  # a release's folder may hold its human qrels
                notes.append(f"{path}: skipped, the human qrels (--qrels)")
                continue
            if name in judge_files:
                raise ConfigError(f"judge {name!r} is given twice ({judge_files[name]} and {path})", key="--judges")
            judge_files[name] = path
    topic_ids = set(read_topics(topics))
    human = read_qrels(qrels)
    judged = set(human["query_id"])
    spec: dict = {"source": "local", "topics": topics, "qrels": qrels}
    if topic_ids - judged:
        spec["unjudged_topics"] = "drop"
        notes.append(
            f"{len(topic_ids - judged)} of {len(topic_ids)} topics have no human qrels: unjudged_topics: drop "
            "(they are dropped and counted)"
        )
    if judged - topic_ids:
        spec["unknown_qrels"] = "drop"
        notes.append(f"the qrels judge {len(judged - topic_ids)} queries that are not topics: unknown_qrels: drop")
    run_entries: dict = {}
    run_files_: dict[str, str | Path] = {}  # system name -> its run file
    system_families: dict[str, str | None] = {}
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
            run_files_.update(found)
            system_families.update({n: own.get(n, entry.get("family")) for n in found})
        elif path.is_file():
            tag = run_tag(path)
            key = tag if _SAFE.match(tag) and tag not in run_entries else path.name.split(".")[0]
            run_entries[key] = {"path": str(path), **({"family": f} if (f := family_of(key, family)) else {})}
            run_files_[key] = path
            system_families[key] = run_entries[key].get("family")
        else:
            raise ConfigError(f"no such file or folder: {value}", key="--runs")
    full_names = list(run_files_)
    shortened = short_names(full_names)
    if any(short != full for full, short in shortened.items()):
        # long names (clashing run tags give file names) would fill every cell that names systems:
        # every run its own entry under a short name, the full one in its description
        run_entries = {}
        for full, path in run_files_.items():
            short = shortened[full]
            entry = {"path": str(path), "description": _described(Path(path), full)}
            if f := system_families.get(full) or family_of(short, family):
                entry["family"] = f
            run_entries[short] = entry
        system_families = {shortened[n]: f for n, f in system_families.items()}
        run_files_ = {shortened[n]: p for n, p in run_files_.items()}
        if oracle_base_run in shortened:
            oracle_base_run = shortened[oracle_base_run]
        notes.append(
            f"system names shortened to at most {SHORT_NAME} characters ({sum(s != f for f, s in shortened.items())} "
            f"of {len(shortened)} runs): each runs: entry's description holds the run's full name, file and run tag; "
            "tables/<dataset>/recorded_runs.csv maps every system to its file"
        )
    config: dict = {"results": results or f"results/{dataset}", "datasets": {dataset: spec}}
    if run_entries:
        config["runs"] = run_entries
        base, why = oracle_base(run_files_, oracle_base_run)
        config["oracles"] = {"base": base}
        notes.append(
            f"the oracles (Perfect) reorder the top depth of {base!r} by the human labels: {why} "
            "(oracles.base chooses another)"
        )
        config["systems"] = ["Perfect", *run_entries]
    elif not judge_files:
        raise ConfigError("give runs (--runs), label sets (--judge, --judges), or both", key="--runs")
    else:
        if oracle_base_run is not None:
            raise ConfigError("no runs: there are no oracles to base on a run", key="--oracle-base")
        notes.append(
            "no runs: no systems, so the label sets are audited alone, on the pairs the human qrels judge "
            "(label agreement, leave one judge out, drift); what ranks systems is n/a in the verdict"
        )
    config["judges"], judge_notes = _judges(judge_files, human, family)
    notes += judge_notes
    judge_families = {j["name"]: j.get("family") for j in config["judges"]}
    notes += [
        WARNING + w
        for w in family_warnings(
            family,
            list(dict.fromkeys([*run_entries, *run_files_, *full_names])),
            judge_families,
            system_families if run_entries else {},
        )
    ]
    chosen = list(measures) or list(DEFAULT_MEASURES)
    for index, text in enumerate(chosen):
        parse_measure(text, key=f"--measures[{index}]")
    if run_entries or measures:  # measures score systems: none to score without runs
        config["evaluation"] = {"measures": chosen, "depth": DEPTH}
    return config, notes


def _judges(files: Mapping[str, str], human, family: Mapping[str, str]) -> tuple[list[dict], list[str]]:
    """The judges' entries on the release's scale, the note that states it, and a warning per
    label set that departs from it."""
    if not files:
        return [], []
    counts = {name: grade_counts(path) for name, path in files.items()}
    human_counts = {int(g): int(n) for g, n in human["relevance"].value_counts().items()}
    release, source = release_scale(human_counts, counts)
    low, high, threshold = release
    notes = [
        f"label sets: the release's scale is {low}-{high}, relevant from {threshold} ({source}); every "
        "label set is declared on it but those named in a warning"
    ]
    entries = []
    for name, path in files.items():
        keys, warning = judge_scale(name, path, counts[name], release)
        entry = {"name": name, "kind": "recorded", "qrels": path, **keys}
        if family_of(name, dict(family)):
            entry["family"] = family_of(name, dict(family))
        entries.append(entry)
        if warning:
            notes.append(WARNING + warning)
    return entries, notes


def write_config(config: dict, notes: Sequence[str], path: str | Path) -> None:
    """Write the config as YAML with the notes as comments on top."""
    snakefile = Path(__file__).resolve().parents[2] / "Snakefile"
    header = [
        f"# Written by voirdire init; edit freely. Run: snakemake -s {snakefile} --cores 2 --configfile {path}",
        "# Paths resolve from the folder snakemake runs in.",
        *[f"# - {n}" for n in notes],
    ]
    text = "\n".join(header) + "\n" + yaml.safe_dump(config, sort_keys=False, allow_unicode=True)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(text, encoding="utf-8")
