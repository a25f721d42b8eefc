"""Extra-trees value functions: fitting with scikit-learn, storing as plain arrays, evaluating.

Each group's value function is a scikit-learn ``ExtraTreesRegressor`` while training.  For
storage and run time its trees are flattened into arrays (children, split feature, threshold,
leaf value): saved in ``.npz`` with no pickle (a model file can never run code), and evaluated by
a vectorised numpy descent over all points and trees at once.  Frozen-structure refits keep the
trees and recompute each leaf's value as the mean of the targets that land in it (``apply()``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(eq=False)
class FlatForest:
    """Trees of one ensemble as arrays; node ids are global, ``roots[t]`` the first of tree t.

    left, right int [N] children (-1 at leaves); feature int [N]; threshold [N]; value [N].
    """

    roots: np.ndarray
    left: np.ndarray
    right: np.ndarray
    feature: np.ndarray
    threshold: np.ndarray
    value: np.ndarray

    @classmethod
    def from_sklearn(cls, model) -> "FlatForest":
        """The trees of a fitted ExtraTreesRegressor as flat arrays."""
        roots, lefts, rights, feats, thrs, vals = [], [], [], [], [], []
        offset = 0
        for est in model.estimators_:
            t = est.tree_
            n = t.node_count
            roots.append(offset)
            leaf = t.children_left == -1
            lefts.append(np.where(leaf, -1, t.children_left + offset))
            rights.append(np.where(leaf, -1, t.children_right + offset))
            feats.append(np.where(leaf, 0, t.feature))
            thrs.append(t.threshold)
            vals.append(t.value.reshape(n, -1)[:, 0])
            offset += n
        return cls(np.array(roots), np.concatenate(lefts), np.concatenate(rights), np.concatenate(feats),
                   np.concatenate(thrs), np.concatenate(vals))

    @classmethod
    def constant(cls, value: float = 0.0) -> "FlatForest":
        """A one-leaf forest predicting ``value`` everywhere."""
        return cls(np.array([0]), np.array([-1]), np.array([-1]), np.array([0]), np.array([0.0]), np.array([value]))

    @property
    def n_trees(self) -> int:
        return len(self.roots)

    def leaves(self, x: np.ndarray) -> np.ndarray:
        """int [P, T]: the leaf each point lands in, per tree."""
        x = np.asarray(x, dtype=float)
        node = np.broadcast_to(self.roots, (len(x), self.n_trees)).copy()
        rows = np.arange(len(x))[:, None]
        active = self.left[node] >= 0
        while active.any():
            pi, ti = np.nonzero(active)
            nd = node[pi, ti]
            go_left = x[pi, self.feature[nd]] <= self.threshold[nd]
            node[pi, ti] = np.where(go_left, self.left[nd], self.right[nd])
            active[pi, ti] = self.left[node[pi, ti]] >= 0
        del rows
        return node

    def predict(self, x: np.ndarray) -> np.ndarray:
        """[P] the ensemble mean."""
        if len(x) == 0:
            return np.zeros(0)
        return self.value[self.leaves(x)].mean(axis=1)

    def refit_leaves(self, x: np.ndarray, y: np.ndarray) -> None:
        """Frozen structure: each leaf's value becomes the mean target of the points in it
        (leaves no point reaches keep their value)."""
        leaves = self.leaves(x)
        sums = np.bincount(leaves.ravel(), weights=np.repeat(y, self.n_trees), minlength=len(self.value))
        counts = np.bincount(leaves.ravel(), minlength=len(self.value))
        hit = counts > 0
        self.value = self.value.copy()
        self.value[hit] = sums[hit] / counts[hit]

    def arrays(self, prefix: str) -> dict:
        """{name: array} for an archive, names prefixed with ``prefix``."""
        return {f"{prefix}_{k}": getattr(self, k) for k in ("roots", "left", "right", "feature", "threshold", "value")}

    @classmethod
    def from_arrays(cls, z, prefix: str) -> "FlatForest":
        """A forest stored by ``arrays``."""
        return cls(*(np.asarray(z[f"{prefix}_{k}"]) for k in ("roots", "left", "right", "feature", "threshold", "value")))

    def n_leaves(self) -> int:
        return int(np.count_nonzero(self.left < 0))


def fit_extra_trees(x: np.ndarray, y: np.ndarray, n_min: int, n_trees: int, seed: int):
    """One ExtraTreesRegressor: random cut per feature, best by variance reduction (eq. 7),
    nodes with at most n_min samples are leaves."""
    from sklearn.ensemble import ExtraTreesRegressor

    model = ExtraTreesRegressor(n_estimators=n_trees, min_samples_split=max(2, n_min + 1), max_features=None,
                                bootstrap=False, random_state=seed, n_jobs=1)
    model.fit(x, y)
    return model


def choose_n_min(samples, candidates, n_trees: int, seed: int) -> tuple[int, dict]:
    """Paper 001's pruning over per-group training sets [(x, y), ...]: for every n_min, fit each
    group's trees on a random 2/3 of its samples and sum the squared errors on the other 1/3;
    the n_min with the lowest total wins.  Returns (n_min, {n_min: held-out MSE})."""
    rng = np.random.default_rng(seed)
    splits = []
    for x, y in samples:
        idx = rng.permutation(len(x))
        cut = (2 * len(x)) // 3
        if cut >= 2 and len(x) - cut >= 1:
            splits.append((x[idx[:cut]], y[idx[:cut]], x[idx[cut:]], y[idx[cut:]]))
    if not splits:
        return int(min(candidates)), {}
    from ...jobs import parallel_map

    def held_out_error(n_min):
        sse, count = 0.0, 0
        for k, (xt, yt, xv, yv) in enumerate(splits):
            m = fit_extra_trees(xt, yt, int(n_min), n_trees, seed + k)
            sse += float(np.sum((m.predict(xv) - yv) ** 2))
            count += len(yv)
        return sse / count

    errors = dict(zip((int(c) for c in candidates), parallel_map(held_out_error, candidates)))
    best = min(errors, key=lambda k: (errors[k], k))
    return best, errors


class PolynomialValue:
    """The baseline of Treuille et al.: V(x) = a degree-2 polynomial, by least squares."""

    def __init__(self, degree: int = 2):
        self.degree = degree
        self.coef = None

    def _design(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        cols = [np.ones(len(x))]
        n = x.shape[1]
        for i in range(n):
            cols.append(x[:, i])
        if self.degree >= 2:
            for i in range(n):
                for j in range(i, n):
                    cols.append(x[:, i] * x[:, j])
        return np.column_stack(cols)

    def fit(self, x, y) -> "PolynomialValue":
        """Least-squares fit to states x [N, n] and targets y [N]; returns self."""
        self.coef, *_ = np.linalg.lstsq(self._design(x), y, rcond=None)
        return self

    def predict(self, x) -> np.ndarray:
        """[N] values at states x [N, n] (0 before fitting)."""
        if self.coef is None:
            return np.zeros(len(x))
        return self._design(x) @ self.coef


@dataclass(eq=False)
class ValueGrid:
    """A value function tabulated on a regular grid (nearest cell), for fast look-ups inside the
    planning max.  ``values`` [G, *shape]; ``low``/``high`` the grid's bounds per dimension."""

    low: np.ndarray
    high: np.ndarray
    shape: tuple
    values: np.ndarray

    @classmethod
    def tabulate(cls, functions, low, high, shape) -> "ValueGrid":
        """Tabulate ``functions`` (one per group, points [P, n] -> [P]) on a regular grid of ``shape`` cells
        over [low, high]."""
        low, high = np.asarray(low, float), np.asarray(high, float)
        axes = [low[d] + (np.arange(n) + 0.5) * (high[d] - low[d]) / n for d, n in enumerate(shape)]
        pts = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, len(shape))
        vals = np.stack([f(pts).reshape(shape) for f in functions])
        return cls(low, high, tuple(shape), vals)

    def cells(self, x: np.ndarray) -> np.ndarray:
        """int [P, n] grid cell of each point [P, n] (clipped to the grid)."""
        frac = (np.asarray(x) - self.low) / (self.high - self.low)
        idx = np.floor(frac * np.array(self.shape)).astype(np.int64)
        return np.clip(idx, 0, np.array(self.shape) - 1)

    def lookup(self, group: np.ndarray, x: np.ndarray) -> np.ndarray:
        """V[group[i]](x[i]) for points x [P, n]."""
        idx = self.cells(x)
        return self.values[(np.asarray(group),) + tuple(idx.T)]
