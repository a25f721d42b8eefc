"""Two array idioms the engines share: ranks within groups of counted runs, and lookups in sorted keys."""

from __future__ import annotations

import numpy as np


def ranks(counts: np.ndarray) -> np.ndarray:
    """0, 1, ..., counts[i] - 1 for each i, concatenated (the position of each item within its run)."""
    counts = np.asarray(counts)
    return np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)


def find_sorted(keys: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(position, found) of each of ``q`` in the sorted ``keys``; positions are valid indices (0 when
    ``keys`` is empty), meaningful only where found."""
    q = np.asarray(q)
    if len(keys) == 0:
        return np.zeros(q.shape, dtype=np.int64), np.zeros(q.shape, dtype=bool)
    pos = np.minimum(np.searchsorted(keys, q), len(keys) - 1)
    return pos, keys[pos] == q
