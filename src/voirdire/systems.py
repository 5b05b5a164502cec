"""Systems: the BM25 first stage and the oracle rankers of the paper.

Oracles follow Balog, Metzler & Qin (SIGIR 2025), section 4.2.3 and Figure 2, as defined in
docs/definitions.md (Systems). *Perfect* sorts a query's BM25 pool by human label, descending (unjudged
candidates count as 0). *Swap[i,j,..]* starts from Perfect and, for each listed position p,
exchanges the documents at ranks p and n+1-p (n = pool length).

Systems are small frozen objects that print as the paper writes them (``Swap[1,2]``) and
carry a shell-safe ``slug`` for file names (``swap-1-2``).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .errors import ConfigError
from .llm.endpoint import Endpoint
from .runs import Recorded

TIE_BREAKS = ("stable", "random")


@dataclass(frozen=True)
class BM25:
    """The first-stage ranker whose top-k pool every other system reorders."""

    def __str__(self) -> str:
        return "BM25"

    @property
    def slug(self) -> str:
        return "bm25"


@dataclass(frozen=True)
class Perfect:
    """The BM25 pool sorted by human label, best first."""

    def __str__(self) -> str:
        return "Perfect"

    @property
    def slug(self) -> str:
        return "perfect"

    def swaps(self) -> tuple[int, ...]:
        return ()


@dataclass(frozen=True)
class Swap:
    """Perfect with rank p exchanged with rank n+1-p for every listed p (1-based)."""

    positions: tuple[int, ...]

    def __post_init__(self) -> None:
        if not self.positions:
            raise ValueError("Swap needs at least one position")
        if any(p < 1 for p in self.positions):
            raise ValueError("Swap positions start at 1")
        if len(set(self.positions)) != len(self.positions):
            raise ValueError("Swap positions must be distinct")
        object.__setattr__(self, "positions", tuple(sorted(self.positions)))

    def __str__(self) -> str:
        return f"Swap[{','.join(map(str, self.positions))}]"

    @property
    def slug(self) -> str:
        return "swap-" + "-".join(map(str, self.positions))

    def swaps(self) -> tuple[int, ...]:
        return self.positions


@dataclass(frozen=True)
class Ranker:
    """An LLM reranker of the BM25 pool, named in config (``rankers:``); see voirdire.rankers."""

    name: str
    method: str
    model: str
    backend: str = "transformers"
    variant: str = "sliding"  # PRP: allpairs | sliding | heap
    k: int = 10  # PRP sliding: passes; heap: top k
    depth: int = 100  # rerank the top `depth` of the pool; the rest keeps BM25 order below
    batch_size: int = 8
    dtype: str = "auto"
    max_length: int = 512
    gpus: int = 0
    mem_mb: int = 8000
    threads: int = 2  # CPU threads of its job (torch); 1 lets two CPU rankers share 2 cores
    endpoint: Endpoint | None = None  # backend litellm: the model and how to reach it
    family: str | None = None  # model family (gemini, gpt, t5, ...), for the self-preference audit

    def __str__(self) -> str:
        return self.name

    @property
    def slug(self) -> str:
        return self.name


Oracle = Perfect | Swap
System = BM25 | Oracle | Ranker | Recorded


def family_of(system: System) -> str | None:
    """The model family a system belongs to: ``bm25``, ``oracle``, or what a ranker or a
    recorded run declares."""
    if isinstance(system, BM25):
        return "bm25"
    if isinstance(system, (Ranker, Recorded)):
        return system.family
    return "oracle"


_SWAP = re.compile(r"^swap\[(.*)\]$", re.IGNORECASE)
_SWAP_SLUG = re.compile(r"^swap((?:-\d+)+)$")


def parse_system(
    name: str,
    *,
    depth: int | None = None,
    key: str | None = None,
    rankers: dict[str, Ranker] | None = None,
    recorded: dict[str, Recorded] | None = None,
) -> System:
    """Parse ``BM25``, ``Perfect``, ``Swap[2,3]`` (or their slugs ``bm25``, ``swap-2-3``), or
    the name of a ranker defined in config.

    With ``depth`` (the pool size), swap positions must lie in the top half of the pool:
    Swap[p] exchanges ranks p and depth+1-p, so p > depth/2 would swap back into the top.
    """
    text = str(name).strip()
    lowered = text.lower()
    if rankers and text in rankers:
        return rankers[text]
    if recorded and text in recorded:
        return recorded[text]
    if lowered == "bm25":
        return BM25()
    if lowered == "perfect":
        return Perfect()
    match = _SWAP.match(text)
    slug = _SWAP_SLUG.match(lowered)
    if not match and not slug:
        raise ConfigError(
            f"unknown system {text!r}; expected BM25, Perfect, Swap[i,j,..], a name defined "
            "under rankers:, or a run or folder key under runs:",
            key=key,
        )
    body = match.group(1) if match else slug.group(1).strip("-").replace("-", ",")
    parts = [part.strip() for part in body.split(",")] if body.strip() else []
    if not parts or not all(part.isdigit() for part in parts):
        raise ConfigError(
            f"malformed swap spec {text!r}: expected Swap[p] or Swap[p,q,..] with positive integer positions",
            key=key,
        )
    positions = tuple(int(part) for part in parts)
    try:
        swap = Swap(positions)
    except ValueError as exc:
        raise ConfigError(f"malformed swap spec {text!r}: {exc}", key=key) from None
    if depth is not None and max(positions) > depth // 2:
        raise ConfigError(
            f"malformed swap spec {text!r}: positions must be at most depth/2 = {depth // 2} "
            f"(the pool has {depth} candidates)",
            key=key,
        )
    return swap


def _tie_break_rng(seed: int, draw: int, qid: str) -> np.random.Generator:
    """A generator that depends only on (seed, draw, qid), not on query order."""
    digest = hashlib.sha256(f"{seed}/{draw}/{qid}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


def oracle_ranking(
    oracle: Oracle,
    pool: Sequence[str],
    labels: Mapping[str, int],
    *,
    tie_break: str = "stable",
    rng: np.random.Generator | None = None,
) -> list[str]:
    """Reorder one query's pool (BM25 order) as ``oracle`` does.

    ``labels`` holds the human grades of judged candidates; others count as 0.
    ``tie_break='stable'`` keeps BM25 order among equal labels; ``'random'`` shuffles each
    group of equal labels with ``rng``. Swap positions beyond half of a short pool are
    left in place (there is no distinct p-th-from-bottom document to exchange with).
    """
    if tie_break not in TIE_BREAKS:
        raise ValueError(f"tie_break must be one of {TIE_BREAKS}, not {tie_break!r}")
    grades = [labels.get(docid, 0) for docid in pool]
    if tie_break == "stable":
        keys = np.arange(len(pool))
    else:
        if rng is None:
            raise ValueError("tie_break='random' needs an rng")
        keys = rng.permutation(len(pool))
    order = sorted(range(len(pool)), key=lambda i: (-grades[i], keys[i]))
    ranking = [pool[i] for i in order]
    n = len(ranking)
    for p in oracle.swaps():
        if p <= n // 2:
            ranking[p - 1], ranking[n - p] = ranking[n - p], ranking[p - 1]
    return ranking


def oracle_rankings(
    oracle: Oracle,
    pools: Mapping[str, Sequence[str]],
    qrels: Mapping[str, Mapping[str, int]],
    *,
    tie_break: str = "stable",
    seed: int = 0,
    draw: int = 0,
) -> dict[str, list[str]]:
    """Apply :func:`oracle_ranking` to every query; random draws are reproducible per query."""
    return {
        qid: oracle_ranking(
            oracle,
            pool,
            qrels.get(qid, {}),
            tie_break=tie_break,
            rng=_tie_break_rng(seed, draw, qid) if tie_break == "random" else None,
        )
        for qid, pool in pools.items()
    }
