"""Judges: who assigns the relevance labels that a leaderboard is computed from.

A judge has a name, a label scale and a binary threshold (relevant = grade
>= threshold; 2 on the TREC DL 0-3 scale). This module covers the *human* judge (the
dataset's qrels) and *recorded* judges (labels read from an existing qrels file: UMBRELA
outputs, LLMJudge, a reranker used as a judge) and *null* judges (length-only and
query-term-overlap baselines computed from the texts) and live *LLM* judges (their calls are
made by :mod:`voirdire.llm_judge`) and *juries* (labels aggregated from other judges' labels of
the same pairs: :mod:`voirdire.jury`). Every judge turns the set of pairs that evaluation needs
(:func:`needed_pairs`) into qrels.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from .defaults import filled, schema_default
from .errors import ConfigError, InputError
from .formats import read_qrels_counted, trec_eval_order
from .llm.batch import BatchOptions
from .llm.endpoint import Endpoint
from .prompts import DEFAULT_PROMPT

HUMAN = "human"
POOL = "human@pool"
"""The systems under the human labels of the needed pairs only: the reference a judge that copies
the human labels matches exactly (Table 1's ``human@pool`` column, Table 2's ``_vs_pool``)."""


@dataclass(frozen=True)
class Scale:
    """Inclusive integer label range and the grade from which a label counts as relevant."""

    low: int = schema_default("judges", "scale", "min")
    high: int = schema_default("judges", "scale", "max")
    binary_threshold: int = schema_default("judges", "binary_threshold")

    def __post_init__(self) -> None:
        if self.low >= self.high:
            raise ValueError(f"scale {self.low}..{self.high} is empty or a single grade")
        if not self.low < self.binary_threshold <= self.high:
            raise ValueError(f"binary threshold {self.binary_threshold} must lie in {self.low + 1}..{self.high}")

    def __str__(self) -> str:
        return f"{self.low}..{self.high} (relevant >= {self.binary_threshold})"

    def binary(self, grades: pd.Series) -> pd.Series:
        return (grades >= self.binary_threshold).astype(int)


@dataclass(frozen=True)
class HumanJudge:
    """The dataset's own human labels (NIST assessors on TREC DL)."""

    scale: Scale = Scale()
    name: str = HUMAN
    kind: str = "human"
    family: str | None = "human"

    def __str__(self) -> str:
        return "human"


@dataclass(frozen=True)
class RecordedJudge:
    """Labels from an existing qrels file, entering the same analyses as live judges."""

    name: str
    qrels: Path
    scale: Scale
    kind: str = "recorded"
    family: str | None = None
    reruns: tuple[Path, ...] = ()  # more label sets of the same judge, for the drift audit
    invalid_labels: str = schema_default("judges", "invalid_labels")  # off the scale or conflicting: error, or drop
    unused_grades: str = schema_default("judges", "unused_grades")  # only 0/1 on 0-3: error, or allow (a warning)

    def __str__(self) -> str:
        return f"{self.name} (recorded, {self.scale})"


@dataclass(frozen=True)
class NullJudge:
    """A baseline judge computed from the texts alone (see :mod:`voirdire.baselines`)."""

    name: str
    method: str
    scale: Scale = Scale()
    kind: str = "baseline"
    family: str | None = None

    def __str__(self) -> str:
        return f"{self.name} (null baseline: {self.method})"


@dataclass(frozen=True)
class LLMJudge:
    """A live judge: an endpoint (any litellm model) + a prompt template + sampling parameters
    (docs/configuration.md, LLM judges). The endpoint's ``api_key_env`` names the environment variable holding
    the key; the key itself is read at call time and never stored anywhere.
    """

    name: str
    endpoint: Endpoint
    prompt_file: Path = DEFAULT_PROMPT
    scale: Scale = Scale()
    # the schema's defaults (floats as floats: a request's body, its cache key, reads them as given)
    temperature: float = float(schema_default("judges", "temperature"))
    top_p: float = float(schema_default("judges", "top_p"))
    max_tokens: int = schema_default("judges", "max_tokens")
    seed: int | None = schema_default("judges", "seed")
    samples: int = schema_default("judges", "samples")
    parse_retries: int = schema_default("judges", "parse_retries")
    threads: int = schema_default("judges", "threads")  # CPU threads of its jobs (a local model's torch threads)
    batch: BatchOptions | None = None
    """Judge through the provider's batch API at its batch price (docs/batch.md); None: directly."""
    kind: str = "llm"
    family: str | None = None

    def __str__(self) -> str:
        return f"{self.name} ({self.model}, {self.scale})"

    @property
    def model(self) -> str:
        return self.endpoint.model


@dataclass(frozen=True)
class EmbeddingJudge:
    """Grades from the cosine similarity of query and passage embeddings (see
    :mod:`voirdire.embedding_judge`): per-query quantiles, or declared ``thresholds``."""

    name: str
    model: str = "minilm"
    scale: Scale = Scale()
    thresholds: tuple[float, ...] | None = None
    kind: str = "embedding"
    family: str | None = None
    threads: int = schema_default("judges", "threads")  # CPU threads of its job (torch)

    def __str__(self) -> str:
        return f"{self.name} (embedding judge: {self.model})"


JURY_AGGREGATES = ("mean", "median", "majority")
"""How a jury turns its members' grades of a pair into one (docs/juries.md)."""


@dataclass(frozen=True)
class JuryJudge:
    """Labels aggregated from the labels other judges of the dataset gave the same pairs
    (:mod:`voirdire.jury`; docs/juries.md): ``mean`` or ``median`` rounded half up to a grade, or a
    strict ``majority``; a pair gets a label when at least ``quorum`` members answered it.

    ``scale`` is the members' common scale, or 0..1 (relevant >= 1) when ``binarize``: then each
    member's grade counts as its binary label (grade >= its own binary threshold), so members on
    different scales can sit on one jury.
    """

    name: str
    members: tuple[str, ...]
    aggregate: str
    quorum: int
    scale: Scale = Scale()
    binarize: bool = False
    kind: str = "jury"
    family: str | None = None

    def __post_init__(self) -> None:
        if self.aggregate not in JURY_AGGREGATES:
            raise ValueError(f"aggregate {self.aggregate!r} is not one of {', '.join(JURY_AGGREGATES)}")
        if not 1 <= self.quorum <= len(self.members):
            raise ValueError(f"quorum {self.quorum} must lie in 1..{len(self.members)} (the members)")

    def __str__(self) -> str:
        on = "binary votes" if self.binarize else str(self.scale)
        return f"{self.name} (jury: {self.aggregate} of {', '.join(self.members)}; {on}; quorum {self.quorum})"


def default_quorum(members: int) -> int:
    """A jury's quorum unless its config sets one: more than half of its members."""
    return members // 2 + 1


Judge = HumanJudge | RecordedJudge | NullJudge | LLMJudge | EmbeddingJudge | JuryJudge
JUDGE_KINDS = ("human", "recorded", "baseline", "llm", "embedding", "jury")
LLM_FIELDS = ("temperature", "top_p", "max_tokens", "seed", "samples", "parse_retries", "threads")
"""A live judge's own config keys, beside its endpoint's (:data:`voirdire.llm.endpoint.KEYS`)."""


def judge_from_config(entry: dict, *, key: str) -> Judge:
    """Build a judge from one entry of the config's ``judges`` list (the schema's defaults filled
    in where the entry leaves a key out, as validating the config fills them)."""
    entry = filled(entry, "judges")
    kind = entry.get("kind")
    try:
        scale = Scale(int(entry["scale"]["min"]), int(entry["scale"]["max"]), int(entry["binary_threshold"]))
    except ValueError as exc:
        raise ConfigError(str(exc), key=key) from None
    family = entry.get("family")
    if kind == "human":
        return HumanJudge(scale=scale)
    if kind == "recorded":
        if "qrels" not in entry:
            raise ConfigError("a recorded judge needs 'qrels' (a TREC qrels file)", key=f"{key}.qrels")
        reruns = tuple(Path(p) for p in entry.get("reruns") or ())
        return RecordedJudge(
            name=entry["name"],
            qrels=Path(entry["qrels"]),
            scale=scale,
            family=family,
            reruns=reruns,
            invalid_labels=entry["invalid_labels"],
            unused_grades=entry["unused_grades"],
        )
    if kind == "baseline":
        from .baselines import METHODS

        if entry.get("method") not in METHODS:
            raise ConfigError(
                f"a baseline (null) judge needs 'method', one of {', '.join(METHODS)}", key=f"{key}.method"
            )
        return NullJudge(name=entry["name"], method=entry["method"], family=family)
    if kind == "embedding":
        thresholds = entry.get("thresholds")
        if thresholds is not None and (len(thresholds) != scale.high - scale.low or thresholds != sorted(thresholds)):
            raise ConfigError(
                f"thresholds must be {scale.high - scale.low} increasing cosines (grades 1..{scale.high})",
                key=f"{key}.thresholds",
            )
        return EmbeddingJudge(
            name=entry["name"],
            model=entry.get("model") or EmbeddingJudge.model,
            scale=scale,
            family=family,
            thresholds=None if thresholds is None else tuple(float(t) for t in thresholds),
            threads=int(entry["threads"]),
        )
    if kind == "llm":
        endpoint = Endpoint.from_config(entry, key=key)
        prompt = Path(entry.get("prompt_file") or DEFAULT_PROMPT)
        if not prompt.is_file():
            raise ConfigError(f"prompt file not found: {prompt}", key=f"{key}.prompt_file")
        text = prompt.read_text(encoding="utf-8")
        for slot in ("{query}", "{passage}"):
            if slot not in text:
                raise ConfigError(f"prompt template {prompt} lacks {slot}", key=f"{key}.prompt_file")
        options = {field: entry[field] for field in LLM_FIELDS if entry.get(field) is not None}
        batch = BatchOptions.from_config(entry.get("batch"), key=f"{key}.batch")
        if batch is not None and (endpoint.is_local or endpoint.serve is not None):
            raise ConfigError(
                "batch: a provider's batch API judges at half price; a local or served model has none "
                "(leave batch out for it)",
                key=f"{key}.batch",
            )
        return LLMJudge(
            name=entry["name"],
            endpoint=endpoint,
            prompt_file=prompt,
            scale=scale,
            family=family,
            batch=batch,
            **options,
        )
    if kind == "jury":
        raise ConfigError("a jury needs its members' judges: build it with jury_from_config", key=key)
    raise ConfigError(f"unknown judge kind {kind!r}; expected one of {', '.join(JUDGE_KINDS)}", key=f"{key}.kind")


JURY_KEYS = ("members", "aggregate", "quorum", "binarize")
"""The keys only a jury has."""
NOT_A_JURY_KEY = (
    "qrels",
    "reruns",
    "method",
    "model",
    "prompt_file",
    "thresholds",
    "api_base",
    "serve",
    "api_key_env",
    "batch",
)
"""Keys of the other kinds that a jury, whose labels come from its members, has no use for."""


def jury_from_config(entry: dict, *, key: str, members: Mapping[str, Judge]) -> JuryJudge:
    """A jury from one entry of the config's ``judges`` list, its ``members`` already found
    (name -> the member judge of one dataset, for every name the entry lists: checked by
    :func:`voirdire.config.sections_judges.check_judges`).

    Its scale is its members' (they must agree: range and binary threshold), or 0..1 with
    ``binarize``; a ``scale`` or ``binary_threshold`` other than the schema's defaults (which
    the schema fills in when unset) must be that scale. Its family is the one all its members
    declare, if they do, unless it declares its own.
    """
    for name in NOT_A_JURY_KEY:
        if entry.get(name) is not None:
            raise ConfigError(f"a jury has no {name!r}: its labels come from its members", key=f"{key}.{name}")
    aggregate = entry.get("aggregate")
    if aggregate not in JURY_AGGREGATES:
        raise ConfigError(f"a jury needs 'aggregate', one of {', '.join(JURY_AGGREGATES)}", key=f"{key}.aggregate")
    names = list(entry["members"])
    entry = filled(entry, "judges")
    binarize = bool(entry.get("binarize"))  # the schema gives it no default: unset is false
    if binarize:
        scale = Scale(0, 1, 1)
    else:
        scale = members[names[0]].scale
        for index, name in enumerate(names):
            if members[name].scale != scale:
                raise ConfigError(
                    f"member {name!r} grades on {members[name].scale}, member {names[0]!r} on {scale}: a jury's "
                    "members grade on one scale (set binarize: true to take each member's binary label as its vote)",
                    key=f"{key}.members[{index}]",
                )
    declared = (entry["scale"]["min"], entry["scale"]["max"], entry["binary_threshold"])
    unset = Scale()  # the schema's defaults, which it fills in when the keys are left out
    if declared not in (
        (unset.low, unset.high, unset.binary_threshold),
        (scale.low, scale.high, scale.binary_threshold),
    ):
        raise ConfigError(
            f"a jury grades on its members' scale, {scale}{' (binarize)' if binarize else ''}; leave 'scale' and "
            "'binary_threshold' out, or give that scale",
            key=f"{key}.scale",
        )
    quorum = entry.get("quorum")
    if quorum is None:
        quorum = default_quorum(len(names))
    elif not 1 <= int(quorum) <= len(names):
        raise ConfigError(f"quorum {quorum} must lie in 1..{len(names)} (the jury's members)", key=f"{key}.quorum")
    family = entry.get("family")
    if family is None:
        families = {members[name].family for name in names}
        family = families.pop() if len(families) == 1 else None
    return JuryJudge(
        name=entry["name"],
        members=tuple(names),
        aggregate=aggregate,
        quorum=int(quorum),
        scale=scale,
        binarize=binarize,
        family=family,
    )


def needed_pairs(
    human_qrels: pd.DataFrame,
    *,
    pool: pd.DataFrame | None = None,
    runs: Sequence[pd.DataFrame] = (),
    depth: int = 100,
) -> pd.DataFrame:
    """The (query, passage) pairs a judge must label: the human-judged pairs in the top
    ``depth`` of any evaluated system, each once.

    Rankers and oracles reorder the BM25 ``pool``, so the pool and the recorded ``runs``
    stand for every system (the paper judges the human-judged documents of the top-100 pool;
    Balog, Metzler & Qin, 2025). With no system at all, every human-judged pair. Column
    ``in_pool`` says which pairs the BM25 pool holds (False for all without a pool).
    """
    judged = human_qrels[["query_id", "doc_id"]].drop_duplicates()
    sources = [trec_eval_order(r).groupby("query_id", sort=False).head(depth)[["query_id", "doc_id"]] for r in runs]
    pooled = pool[["query_id", "doc_id"]].drop_duplicates() if pool is not None else judged.iloc[:0]
    if pool is None and not runs:
        pairs = judged
    else:
        pairs = pd.concat([pooled, *sources]).drop_duplicates().merge(judged, on=["query_id", "doc_id"])
    pairs = pairs.merge(pooled.assign(in_pool=True), on=["query_id", "doc_id"], how="left")
    pairs["in_pool"] = pairs["in_pool"].astype("boolean").fillna(False).astype(bool)
    return pairs.reset_index(drop=True)


def recorded_coverage(
    name: str, path: str | Path, labels: pd.DataFrame, pairs: pd.DataFrame
) -> tuple[pd.DataFrame, dict]:
    """A recorded judge's labels for exactly ``pairs``, and what the file held beyond them.

    Labels of the dataset's queries for passages outside the pool, and labels of other
    queries, are counted, never dropped without a word. A file that labels none of the pairs
    (qrels of another dataset, say) is an error naming the judge and the file.
    """
    kept = restrict(labels, pairs)
    of_these_queries = labels["query_id"].isin(set(pairs["query_id"]))
    if len(pairs) and kept.empty:
        raise InputError(
            f"recorded judge {name!r} labels none of the {len(pairs)} pairs to judge "
            f"({int(of_these_queries.sum())} of its {len(labels)} labels are for this dataset's "
            "queries); is it the qrels of another dataset?",
            path=path,
        )
    summary = {
        "judge": name,
        "kind": "recorded",
        "labels_in_file": len(labels),
        # labels of this dataset's queries for passages no evaluated system ranks in its top depth
        "labels_outside_pool": int(of_these_queries.sum()) - len(kept),
        "labels_other_queries": int((~of_these_queries).sum()),
        "pairs": len(pairs),
        "pairs_labelled": len(kept),
        "coverage": len(kept) / len(pairs) if len(pairs) else None,
    }
    return kept, summary


def recorded_labels(
    name: str, path: str | Path, pairs: pd.DataFrame, scale: Mapping[str, int], invalid: str = "error", log=None
) -> tuple[pd.DataFrame, dict]:
    """One recorded judge's labels for exactly ``pairs``, and its summary: the file read on
    the judge's scale (``min``, ``max``, ``binary_threshold``), the lines ``invalid: drop``
    left out counted, and what the file held beyond the pairs (:func:`recorded_coverage`).

    ``log`` gets what a user should know, each line naming the judge: what was dropped, the
    summary, needed pairs left unlabelled, labels outside the pool, and a scale whose
    binary threshold no label reaches. Bad input raises :class:`InputError` naming the file.
    """
    raw, dropped = read_qrels_counted(path, (scale["min"], scale["max"]), invalid=invalid)
    labels, summary = recorded_coverage(name, path, raw, pairs)
    summary["invalid_labels_dropped"] = dropped["lines_out_of_scale"] + dropped["conflicting_lines"]
    summary |= dropped
    if log is None:
        return labels, summary
    if summary["invalid_labels_dropped"]:
        log.warning(
            "%s: invalid_labels: drop: %d lines graded outside %d..%d and %d pairs graded twice with "
            "different grades (%d lines, both sides) left out of %s",
            name,
            dropped["lines_out_of_scale"],
            scale["min"],
            scale["max"],
            dropped["conflicting_pairs"],
            dropped["conflicting_lines"],
            path,
        )
    log.info("%s: %s", name, summary)
    if summary["pairs_labelled"] < summary["pairs"]:
        log.warning(
            "%s: %d needed pairs have no label; they count as unjudged",
            name,
            summary["pairs"] - summary["pairs_labelled"],
        )
    if summary["labels_outside_pool"]:
        log.warning(
            "%s: %d labels are for passages outside the pool; they are not used (counted in Table 2)",
            name,
            summary["labels_outside_pool"],
        )
    if len(raw) and raw["relevance"].max() < scale["binary_threshold"]:
        log.warning(
            "%s: no label in %s reaches binary_threshold %d (its grades go up to %d): every pair counts "
            "as non-relevant in binary kappa and binary measures; is the judge's scale declared?",
            name,
            path,
            scale["binary_threshold"],
            raw["relevance"].max(),
        )
    return labels, summary


def restrict(labels: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
    """A judge's labels for exactly ``pairs`` (pairs it did not label stay unjudged)."""
    return labels.merge(pairs[["query_id", "doc_id"]], on=["query_id", "doc_id"]).reset_index(drop=True)


def with_texts(pairs: pd.DataFrame, texts: Mapping[str, str], *, judge: str, log=None) -> pd.DataFrame:
    """The needed pairs a judge that reads texts can label: those whose passage has a text.

    A recorded run can retrieve passages outside the candidates whose texts the workflow holds
    (a RankGPT candidates file holds the BM25 top-100 only). Such a pair is uncovered for
    this judge: it stays unjudged, shows in Table 2's coverage, and is named in the log; it
    is never graded without its text.
    """
    has_text = pairs["doc_id"].isin(set(texts))
    missing = pairs[~has_text]
    if len(missing) and log is not None:
        shown = ", ".join(f"{q}/{d}" for q, d in missing[["query_id", "doc_id"]].head(5).itertuples(index=False))
        log.warning(
            "%s: %d of %d needed pairs have no passage text, so stay uncovered (not graded): %s%s",
            judge,
            len(missing),
            len(pairs),
            shown,
            " ..." if len(missing) > 5 else "",
        )
    return pairs[has_text].reset_index(drop=True)


def majority(labels: Sequence[int]) -> int | None:
    """One label from a judge's k samples: the most frequent, ties by the lower median; None
    when no sample parsed (never 0). (Here, not in :mod:`voirdire.stats`: a judging job needs it
    and not SciPy, whose import is a second of every such job's start.)"""
    if not labels:
        return None
    counts = Counter(labels).most_common()
    top = [label for label, n in counts if n == counts[0][1]]
    return top[0] if len(top) == 1 else statistics.median_low(labels)
