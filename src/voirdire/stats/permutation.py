"""Permutation tests within blocks (Good 2005, stratified permutation tests): values are
shuffled only among units of the same block (for the length audit, the pairs of one query and
one human grade), seeded; p-values with the add-one estimate of Phipson & Smyth (2010)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from .resample import SEED


def block_permutations(
    blocks: np.ndarray, permutations: int, seed: int = SEED, chunk: int = 250
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Index arrays, ``chunk`` permutations at a time: ``(order, drawn)`` where ``order`` lists
    the units block by block and row b of ``drawn`` holds, for each unit in that order, the unit
    whose value it receives in permutation b; every unit draws from its own block."""
    rng = np.random.default_rng(seed)
    order = np.argsort(blocks, kind="stable")
    sorted_blocks = blocks[order].astype(float)
    for start in range(0, permutations, chunk):
        size = min(chunk, permutations - start)
        keys = sorted_blocks + rng.random((size, len(blocks)))  # a random order inside each block
        yield order, order[np.argsort(keys, axis=1)]


def permutation_p(observed: np.ndarray, null: np.ndarray) -> np.ndarray:
    """Two-sided add-one permutation p (Phipson & Smyth 2010) per column; NaN where undefined."""
    hits = (np.abs(null) >= np.abs(observed) - 1e-12).sum(axis=0)
    p = (1 + hits) / (1 + len(null))
    return np.where(np.isnan(observed), np.nan, p)
