"""Array idioms the engines share: ranks within groups of counted runs, lookups in sorted keys, sums
over sliding windows, and a matrix product that rounds the same on every CPU."""

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


def window_sums(x: np.ndarray, n: int) -> np.ndarray:
    """Sums of ``x`` [F, ...] over every window of ``n`` consecutive frames (starts 0 .. F - n; one
    window of all frames when F < n), by cumulative sums."""
    n = max(1, min(n, len(x)))
    c = np.concatenate((np.zeros((1,) + x.shape[1:]), np.cumsum(x, axis=0)))
    return c[n:] - c[:-n]


def window_means(x: np.ndarray, n: int) -> np.ndarray:
    """``window_sums`` divided by the frames each window holds."""
    return window_sums(x, n) / max(1, min(n, len(x)))


def same_everywhere_matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b`` (broadcasting over leading axes) by numpy's own loops instead of BLAS.  BLAS picks
    kernels by CPU (and OpenBLAS by thread count), and they round differently: with OpenBLAS's
    SSE3 kernels instead of the AVX2 ones, the planner's step displacements and transition costs
    moved by 1e-16 and 1e-14, and its trained trees, then its figures, were those of another
    model.  Slower than BLAS: for the products that decide a training, not for playing."""
    return np.einsum("...ij,...jk->...ik", a, b)
