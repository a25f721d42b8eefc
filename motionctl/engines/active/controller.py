"""The clustered blend controller of paper 003 (sections 3 and 4.2).

A ``Cluster`` holds blendable examples sharing a start state and a ``BlendMap`` from the task
input u to blend weights (eqs. 1-2): a linear part fitted by least squares plus radial terms
R_j(u) = Π_l h(|u_l - u_jl| / α_jl) with the cubic profile h(x) = (1 - x)³ + 3x(1 - x)² on [0, 1]
(0 beyond), each scale α_jl chosen from [1, 3] times the nearest-neighbour distance by the
summed task error at samples around u_j; weights are clamped to [0, 1] and renormalised.  Its data
points are its examples (one-hot weights) and accepted pseudoexamples (any weights).

A ``Controller`` is the clusters of one task: for a state and a task input it plays the cluster
whose start state is nearest (among those within the state tolerance, the one with an example
nearest in u), blending its examples with the map's weights; where one data point meets u with a
smaller largest task error it plays that one, and where neither meets u, the blend whose
features, taken as linear in the weights, come nearest it (``blend_for``, ``simplex_weights``: our
decisions, DESIGN.md 3.4; measured, the map alone lost a third of what its examples complete on
their own, and its linear part, fitted exactly through a few close examples, blends far past
them: one example beside another cost a cluster three quarters of what it completed).  Task
inputs are normalised to [0, 1] per dimension by the task's bounds wherever distances are taken.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import nnls

from ...errors import MotionctlError
from ...body.contacts import foot_contacts, foot_skating
from .motion import Aligned, align, blend, distances, distances_to, joint_positions, source_of
from .tasks import Task

SCALES = np.linspace(1.0, 3.0, 5)  # the per-dimension scale search of section 4.2
EVAL_OFFSETS = np.array([-1.0, -0.5, 0.5, 1.0])  # evaluation samples along a dimension, in units of α
TIE = 1e-9  # relative: task errors of the scale search closer than this are equal (the smaller scale wins)
LOCALITY = 1.0  # simplex_weights: cost (squared tolerances) of a whole weight on an example a box-width from u
SUM_ROW = 1e3  # simplex_weights: the weight of the row holding the weights' sum to 1
AIM_PAST = 2  # blend_for: times a blend that misses u aims past it by what it missed (0: none)
AIM_WITHIN = 3.0  # blend_for: tolerances (the worst task metric) within which a missed u is aimed past


def profile(x: np.ndarray) -> np.ndarray:
    """h(x) = (1 - x)³ + 3x(1 - x)² for 0 <= x <= 1, 0 beyond (footnote 3)."""
    x = np.abs(x)
    y = 1 - x  # products, not np.power (fmath)
    return np.where(x <= 1.0, y * y * y + 3 * x * y * y, 0.0)


class BlendMap:
    """b(u) = a + Cᵀu + Σ_j r_j R_j(u) (eq. 2) over data points X [N, D] (normalised u) with
    weights W [N, K] and scales alpha [N, D]."""

    def __init__(self, x: np.ndarray, w: np.ndarray, alpha: np.ndarray):
        self.x, self.w, self.alpha = np.atleast_2d(x).astype(float), np.atleast_2d(w).astype(float), np.asarray(alpha, float)
        design = np.column_stack((np.ones(len(self.x)), self.x))
        self.linear = np.linalg.lstsq(design, self.w, rcond=None)[0]  # [D + 1, K]
        resid = self.w - design @ self.linear
        self.r = np.linalg.lstsq(self.basis(self.x), resid, rcond=None)[0]  # [N, K]

    def basis(self, x: np.ndarray) -> np.ndarray:
        """[B, N] R_j(x_b) (eq. 1)."""
        d = np.abs(np.atleast_2d(x)[:, None, :] - self.x[None]) / self.alpha[None]
        return np.prod(profile(d), axis=-1)

    def raw(self, x: np.ndarray) -> np.ndarray:
        x = np.atleast_2d(x)
        return self.linear[0] + x @ self.linear[1:] + self.basis(x) @ self.r

    def __call__(self, x: np.ndarray) -> np.ndarray:
        """[B, K] weights: clamped to [0, 1], renormalised (the nearest data point's when all clamp to 0)."""
        x = np.atleast_2d(x)
        w = np.clip(self.raw(x), 0.0, 1.0)
        total = w.sum(axis=1, keepdims=True)
        empty = total[:, 0] < 1e-9
        if empty.any():
            near = np.argmin(np.linalg.norm(x[empty, None] - self.x[None], axis=-1), axis=1)
            w[empty] = self.w[near]
            total[empty] = w[empty].sum(axis=1, keepdims=True)
        return w / total


def simplex_weights(task: Task, features: np.ndarray, u: np.ndarray, locality: float = LOCALITY) -> np.ndarray:
    """[B, K] blend weights (>= 0, summing to 1) whose features, taken as the weighted sum of the
    examples' ``features`` [K, D], meet task inputs ``u`` [B, D] best: the least summed task error
    plus ``locality`` times each weight squared times its example's squared distance (normalised
    u) from u, so that of the blends that meet u the one of the nearest examples is played.  Each
    query is one small non-negative least squares (``scipy.optimize.nnls``, ~50 µs; the sum to 1
    held by a heavily weighted row): exact, where projected gradient took hundreds of steps."""
    u = np.atleast_2d(u)
    k = len(features)
    far = np.sqrt(locality * np.sum((task.normalise(u)[:, None] - task.normalise(features)[None]) ** 2, axis=-1))
    a = np.vstack((features.T / task.tol[:, None], np.zeros((k, k)), np.full((1, k), SUM_ROW)))
    b = np.concatenate((np.zeros(k), [SUM_ROW]))
    w = np.empty((len(u), k))
    diag = np.arange(k)
    for i in range(len(u)):  # one compiled solve per query
        a[task.dim + diag, diag] = far[i]
        w[i] = nnls(a, np.concatenate((u[i] / task.tol, b)))[0]
    return w / np.maximum(w.sum(axis=1, keepdims=True), 1e-12)


def nearest_alpha(x: np.ndarray) -> np.ndarray:
    """[N, D] every data point's scales set to the distance to its nearest neighbour (1 alone)."""
    n = len(x)
    if n < 2:
        return np.ones_like(x)
    d = np.linalg.norm(x[:, None] - x[None], axis=-1)
    d[np.arange(n), np.arange(n)] = np.inf
    return np.repeat(np.maximum(d.min(axis=1), 1e-3)[:, None], x.shape[1], axis=1)


@dataclass(eq=False)
class Example:
    """A real example: its clip's name, key frames in it, what it does (features [D]) and its
    foot skating (share of frames, as ``body.contacts.foot_skating`` measures)."""

    clip: str
    keys: np.ndarray
    features: np.ndarray
    skating: float = 0.0


@dataclass(eq=False)
class Cluster:
    examples: list
    aligned: Aligned
    x: np.ndarray  # [N, D] normalised task inputs of the data points (examples first)
    w: np.ndarray  # [N, K]
    alpha: np.ndarray  # [N, D]
    pseudo: np.ndarray  # bool [N]
    start_state: np.ndarray
    map: BlendMap | None = None
    start_pose: tuple = field(default=None)
    point_features: np.ndarray | None = None  # [N, D] what each data point's weights play (Controller.blend_for)

    @property
    def k(self) -> int:
        return len(self.examples)

    def refit(self, alpha=None) -> None:
        self.alpha = nearest_alpha(self.x) if alpha is None else alpha
        self.map = BlendMap(self.x, self.w, self.alpha)
        self.point_features = None


class Controller:
    """Clusters of one task on one skeleton at ``fps``.

    tolerance  state distance (m, RMS) within which a start state matches
    join       alignment error (m, RMS over the phase) within which a new example joins a cluster
    """

    def __init__(self, task: Task, skeleton, fps: float, tolerance: float = 0.12, join: float = 0.12,
                 scale_search: bool = True):
        self.task, self.skeleton, self.fps = task, skeleton, float(fps)
        self.tolerance, self.join, self.scale_search = float(tolerance), float(join), scale_search
        self.clusters: list[Cluster] = []

    # --- what it knows

    @property
    def n_examples(self) -> int:
        return sum(c.k for c in self.clusters)

    @property
    def n_pseudo(self) -> int:
        return int(sum(c.pseudo.sum() for c in self.clusters))

    @property
    def starts(self) -> np.ndarray:
        return np.stack([c.start_state for c in self.clusters]).astype(np.float32)

    def example_features(self) -> np.ndarray:
        return np.array([e.features for c in self.clusters for e in c.examples]).reshape(-1, self.task.dim)

    # --- playing

    def choose(self, states: np.ndarray, u: np.ndarray, strict: bool = True) -> np.ndarray:
        """[M] the cluster each (state, u) plays (-1 when ``strict`` and no start state is within
        the tolerance): the nearest start, or among starts within the tolerance the cluster with
        an example nearest in u (section 3)."""
        states, u = np.atleast_2d(states), np.atleast_2d(u)
        if not self.clusters:
            return np.full(len(states), -1)
        d = distances(states, self.starts)
        near = np.argmin(d, axis=1)
        within = d <= self.tolerance
        x = self.task.normalise(u)
        du = np.stack([np.min(np.linalg.norm(x[:, None] - c.x[None, :c.k], axis=-1), axis=1) for c in self.clusters], 1)
        du = np.where(within, du, np.inf)
        pick = np.where(within.sum(axis=1) > 1, np.argmin(du, axis=1), near)
        return np.where(within.any(axis=1) | (not strict), pick, -1)

    def pick(self, state: np.ndarray, u: np.ndarray) -> int:
        """The cluster a playing character in ``state`` [D] plays for task input ``u`` [D]: the
        least sum of its start's distance and the largest task error of its blend at u, both in
        tolerances (``blend_for``), so a near start that does u wins and a farther one that does
        it (the synthesis inertializes the join) beats a near one that cannot: a walk asked
        to run, when the capture holds no walk that becomes a run.  (Coverage, the paper's test,
        still needs a start within the tolerance: ``choose``.)"""
        d = np.nan_to_num(distances(np.asarray(state)[None], self.starts)[0] / self.tolerance, nan=np.inf)
        best, cost = int(np.argmin(d)), np.inf  # (a state or u that is not numbers: the nearest start, or the first)
        for ci in np.argsort(d, kind="stable"):  # nearest first: a cluster no nearer than the best cost cannot win
            if d[ci] >= cost:
                break
            c = d[ci] + np.sqrt(self.blend_for(int(ci), np.asarray(u)[None])[1].max())
            best, cost = (int(ci), c) if c < cost else (best, cost)
        return best

    def best_for(self, u: np.ndarray) -> int:
        """The cluster whose blend meets task input ``u`` [D] best (its normalised task error),
        wherever it starts: a character with no state yet, at its first decision."""
        err = [np.linalg.norm(self.errors(ci, u) / self.task.tol) for ci in range(len(self.clusters))]
        return int(np.argmin(err))

    def weights(self, ci: int, u: np.ndarray) -> np.ndarray:
        """[B, K] the weights cluster ``ci`` plays at task inputs ``u`` [B, D] (``blend_for``)."""
        return self.blend_for(ci, u)[0]

    def blend_for(self, ci: int, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """([B, K] weights, [B, D] task errors) of cluster ``ci`` at task inputs ``u`` [B, D]: of
        the map's blend and the cluster's data point (an example, a pseudoexample), the one with
        the smallest largest task error, and where that misses u the blend of ``simplex_weights``
        when it does better (the map, fitted through every data point, can blend neighbours that
        each meet u alone into one that does not, and its linear part, fitted through a few close
        examples, blends far past them where u lies between examples farther apart); where that
        still misses u by at most ``AIM_WITHIN`` tolerances, up to ``AIM_PAST`` times the blend
        of ``simplex_weights`` aimed past u by what the last missed it by, when it does better (a
        blend's stride, speed and turn are not its examples' weighted sum: on subject 16's walks
        the blends the weighted sum says meet u missed it by 1.2-1.3 tolerances, mostly in stride
        and speed, and aiming past completes about a tenth more of the coverage sample)."""
        u = np.atleast_2d(u)
        c = self.clusters[ci]
        w = c.map(self.task.normalise(u))
        got = self.features(ci, w)  # what the weights played so far do, kept beside them
        err = self.task.errors(got, u)
        if c.point_features is None:  # what each data point plays (its weights' blend), once per fit
            c.point_features = self.features(ci, c.w)
        point = self.task.errors(c.point_features[None], u[:, None])  # [B, N, D]
        worst = point.max(axis=2)  # the largest error decides, as in the completion test
        best = np.argmin(worst, axis=1)
        better = worst[np.arange(len(u)), best] < err.max(axis=1)
        w, err = np.where(better[:, None], c.w[best], w), np.where(better[:, None], point[np.arange(len(u)), best], err)
        got = np.where(better[:, None], c.point_features[best], got)
        miss = np.flatnonzero((err.max(axis=1) > 1.0) & np.isfinite(u).all(axis=1))  # where neither completes u
        if c.k < 2 or not len(miss):
            return w, err

        def played_where_better(rows, aim):  # the weighted sum's blend for ``aim``, where it meets u[rows] better
            fit = simplex_weights(self.task, c.point_features[:c.k], aim)
            fit_got = self.features(ci, fit)
            fit_err = self.task.errors(fit_got, u[rows])
            keep = fit_err.max(axis=1) < err[rows].max(axis=1)
            w[rows[keep]], err[rows[keep]], got[rows[keep]] = fit[keep], fit_err[keep], fit_got[keep]

        played_where_better(miss, u[miss])
        worst = err[miss].max(axis=1)
        near = miss[(worst > 1.0) & (worst <= AIM_WITHIN ** 2)]
        aim = u[near]
        for _ in range(AIM_PAST if len(near) else 0):  # a blend's features are not its examples' weighted sum
            aim = aim + (u[near] - got[near])  # aim past u by what the best blend so far misses it by
            played_where_better(near, aim)
        return w, err

    def features(self, ci: int, w: np.ndarray, block: int = 256) -> np.ndarray:
        """[B, D] features of the cluster's blends with weights ``w`` [B, K] (blocked)."""
        w = np.atleast_2d(w)
        ex = self.clusters[ci].aligned
        return np.concatenate([self.task.features(self.skeleton, blend(ex, w[a:a + block]), self.fps)
                               for a in range(0, len(w), block)]) if len(w) else np.zeros((0, self.task.dim))

    def errors(self, ci: int, u: np.ndarray, w: np.ndarray | None = None) -> np.ndarray:
        """[B, D] task errors of the cluster at task inputs ``u`` [B, D] (its map's weights, or ``w``)."""
        u = np.atleast_2d(u)
        if w is None:
            return self.blend_for(ci, u)[1]
        return self.task.errors(self.features(ci, w), u)

    def completes(self, states: np.ndarray, u: np.ndarray) -> np.ndarray:
        """bool [M]: the controller completes each (state, u): a start matched, every error <= 1."""
        u = np.atleast_2d(u)
        ci = self.choose(states, u)
        ok = np.zeros(len(u), dtype=bool)
        for c in np.unique(ci[ci >= 0]):
            idx = np.flatnonzero(ci == c)
            ok[idx] = np.all(self.errors(int(c), u[idx]) <= 1.0, axis=1)
        return ok

    # --- learning

    def add_example(self, clip, state=None, name: str | None = None, offset: int = 0) -> tuple[int, bool]:
        """Add the example ``clip`` holds (trimmed at its task window whose start state is nearest
        ``state``, else its first), time-aligned to the clusters whose start it matches; joins the
        best-aligned one or starts a new cluster.  ``name`` and ``offset``: the clip it was cut from
        and the frame there that ``clip`` starts at (the example's keys are kept in that clip's
        frames).  Returns (cluster, created)."""
        src = source_of(clip)
        wins = self.task.windows(clip, foot_contacts(clip))
        if not wins:
            raise MotionctlError(f"clip {clip.name!r} holds no {self.task.name} example "
                                 f"({'a right heel strike to the next' if self.task.steers else 'a take-off and landing'})")
        if state is not None:
            d = distances_to(src.states[[int(k[0]) for k in wins]], state)
            keys = wins[int(np.argmin(d))]
        else:
            keys = wins[0]
        return self.add_aligned(align(src, keys), Example(name or clip.name, np.asarray(keys) + offset, np.zeros(0),
                                                           skating_of(clip, keys)))

    def add_aligned(self, ex: Aligned, record: Example) -> tuple[int, bool]:
        record.features = self.task.features(self.skeleton, blend(ex, np.ones((1, 1))), self.fps)[0]
        x = self.task.normalise(record.features)
        best, best_err = -1, np.inf
        if self.clusters:
            d = distances_to(self.starts, ex.start_state[0])
            for ci in np.flatnonzero(d <= self.join):
                err = self.alignment_error(int(ci), ex)
                if err < best_err:
                    best, best_err = int(ci), err
        if best >= 0 and best_err <= self.join:
            c = self.clusters[best]
            c.examples.append(record)
            c.aligned = Aligned.stack([c.aligned, ex])
            k = c.k
            n_real = k - 1
            w = np.zeros((len(c.x) + 1, k))
            w[:n_real, :n_real] = c.w[:n_real, :n_real]
            w[n_real, n_real] = 1.0
            w[n_real + 1:, :n_real] = c.w[n_real:, :n_real]
            c.x = np.insert(c.x, n_real, x, axis=0)
            c.w = w
            c.pseudo = np.insert(c.pseudo, n_real, False)
            self.refit(best)
            return best, False
        c = Cluster([record], Aligned.stack([ex]), x[None], np.ones((1, 1)), np.ones((1, self.task.dim)),
                    np.zeros(1, dtype=bool), ex.start_state[0].copy())
        self.clusters.append(c)
        self.refit(len(self.clusters) - 1)
        return len(self.clusters) - 1, True

    def alignment_error(self, ci: int, ex: Aligned) -> float:
        """RMS joint distance (m) over the phase between ``ex`` and the cluster's mean motion, each
        in its own root frame (how well the time alignment matched them)."""
        c = self.clusters[ci]
        mean = blend(c.aligned, np.full((1, c.k), 1.0 / c.k))
        a = joint_positions(self.skeleton, mean)[0]
        b = joint_positions(self.skeleton, blend(ex, np.ones((1, 1))))[0]
        return float(np.sqrt(np.mean(np.sum((a - b) ** 2, axis=-1))))

    def add_pseudo(self, ci: int, u: np.ndarray, w: np.ndarray) -> None:
        """Accept a pseudoexample (u, w) into cluster ``ci``'s map (section 4.3)."""
        c = self.clusters[ci]
        c.x = np.vstack((c.x, self.task.normalise(u)[None]))
        c.w = np.vstack((c.w, np.asarray(w, float)[None] / np.sum(w)))
        c.pseudo = np.append(c.pseudo, True)
        self.refit(ci)

    def refit(self, ci: int) -> None:
        """Fit the map: linear part, α from nearest neighbours, then the per-dimension scale search."""
        c = self.clusters[ci]
        c.refit()
        if not self.scale_search or len(c.x) < 2 or c.k < 2:
            return
        # Every (data point j, dimension l, scale) trial at once: its map's weights at the evaluation
        # samples along l around u_j, then one batched blend and task-error pass for all of them.
        alpha = c.alpha
        n, dim, n_s, n_e = len(c.x), self.task.dim, len(SCALES), len(EVAL_OFFSETS)
        step = alpha[:, :, None, None] * np.eye(dim)[None, :, None, :] * EVAL_OFFSETS[None, None, :, None]
        xs = np.clip(c.x[:, None, None, :] + step, 0.0, 1.0)  # [N, D, E, D]: samples along each dimension
        ws = np.empty((n, dim, n_s, n_e, c.k))
        for j in range(n):
            for ell in range(dim):
                for k, scale in enumerate(SCALES):
                    trial = alpha.copy()
                    trial[j, ell] *= scale
                    ws[j, ell, k] = BlendMap(c.x, c.w, trial)(xs[j, ell])
        us = np.broadcast_to(self.task.denormalise(xs)[:, :, None], ws.shape[:-1] + (dim,)).reshape(-1, dim)
        err = self.task.errors(self.features(ci, ws.reshape(-1, c.k)), us).sum(axis=1)
        total = err.reshape(n, dim, n_s, n_e).sum(axis=3)  # [N, D, scales]
        # The smallest scale within a hair of the least error: clamped blends make some scales tie,
        # and a tie broken by the last bits of float sums chose other scales on numpy 1.26 and 2.
        best = np.argmax(total <= total.min(axis=2, keepdims=True) * (1 + TIE) + TIE, axis=2)  # [N, D]
        c.refit(alpha * SCALES[best])


def skating_of(clip, keys) -> float:
    """Foot skating (share of frames) of a clip between its first and last key."""
    a, b = int(keys[0]), int(keys[-1]) + 1
    return foot_skating(clip.slice(a, max(b, a + 2)))["skating"]


__all__ = ["BlendMap", "Cluster", "Controller", "Example", "nearest_alpha", "profile", "skating_of"]
