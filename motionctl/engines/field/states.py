"""Motion states and the field's flow (paper 002 section 3, DESIGN.md 3.3).

A motion state m = (x, v) is a pose and the velocity to the next frame, in root-frame terms (root
position and yaw factored out): the pose ``rot`` [J, 4] (the root's rotation relative to the
heading, every other joint's local rotation) and ``height``; the velocity ``motion`` (dx right,
dy forward, dyaw, per frame), ``lift`` (height change) and ``turn`` [J, 4] (rotation deltas:
the next pose is ``turn * rot``).  The database holds one state per frame of the working clips
(all but each clip's last two frames) and ``y``, the velocity one frame later.

Distance is Euclidean on ``features``: root velocity (m/s) weighted by the field's Speed in
Neighbours (the paper's 0.5 by default here, the engine's setting otherwise), root tilt weighted
0.5, every joint's rotation applied to two unit vectors weighted by its bone's length in metres,
and the same pose terms after the velocity step.  Neighbours are found in a k-d tree over the features'
principal components (99.5% of the variance) and re-ranked by the exact feature distance among
3k candidates.  A state's k actions lead to next states close together, so they share one pool of
6k candidates found around their mean (one tree query where there were k) and are ranked in it
by exact distance.  Measured on 6,852 states (bench/results/field.md, "neighbour search").
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ... import quat
from ...arrays import same_everywhere_matmul
from ...errors import MotionctlError
from ...rootframe import heading
from ..base import rest_frames

ROOT_WEIGHT = 0.5  # the paper's weight of the root terms (the root's velocity: FieldSettings.velocity_weight)
SIMILARITY_EPS = 1e-6  # added to squared distances: a state in the database is its own neighbour
CANDIDATES = 3  # exact re-ranking among this many times k tree candidates
POOL = 6  # a decision's k next states share this many times k candidates
PCA_VARIANCE = 0.995
REACH_WEIGHT = 6.0  # the root's speed (per m/s) in the distance that finds a speed action's state
REACH_PULL = 0.25  # share of the way a speed action pulls the pose toward its state's successor
REACH_BEHIND = 0.15  # s: a speed action's state is never up to this far behind the character in its clip
REACH_STRENGTH = 3.0  # a speed action's state's weight in its blend (the k neighbours' weights sum to 1)


@dataclass(eq=False)
class States:
    """A batch of motion states (see the module docstring): rot [n, J, 4], height [n], motion
    [n, 3], lift [n], turn [n, J, 4]."""

    rot: np.ndarray
    height: np.ndarray
    motion: np.ndarray
    lift: np.ndarray
    turn: np.ndarray

    def __len__(self) -> int:
        return len(self.height)

    def take(self, idx) -> States:
        return States(self.rot[idx], self.height[idx], self.motion[idx], self.lift[idx], self.turn[idx])

    def with_rows(self, idx, part: States) -> States:
        """A copy with rows ``idx`` replaced by ``part``'s."""
        out = self.copy()
        for name in ("rot", "height", "motion", "lift", "turn"):
            getattr(out, name)[idx] = getattr(part, name)
        return out

    def copy(self) -> States:
        return States(self.rot.copy(), self.height.copy(), self.motion.copy(), self.lift.copy(), self.turn.copy())

    def is_finite(self) -> bool:
        return all(np.isfinite(a).all() for a in (self.rot, self.height, self.motion, self.lift, self.turn))


def velocity_between(rot0, height0, rot1, height1, motion):
    """(motion, lift, turn) taking poses (rot0, height0) to (rot1, height1) with root motion ``motion``."""
    turn = quat.mul(rot1, quat.conj(rot0))
    turn = turn * np.where(turn[..., :1] < 0, -1.0, 1.0)  # the short way round (w >= 0)
    return np.asarray(motion, dtype=float), np.asarray(height1) - np.asarray(height0), turn


def blend_velocities(a: np.ndarray, motion, lift, turn):
    """Σ a_i v_i over the last neighbour axis: a [n, k] weights summing to 1, motion [n, k, 3],
    lift [n, k], turn [n, k, J, 4] (rotation deltas with w >= 0, as ``velocity_between`` gives
    them, averaged as normalised sums)."""
    t = np.einsum("nk,nkjc->njc", a, turn)
    return np.einsum("nk,nkc->nc", a, motion), np.einsum("nk,nk->n", a, lift), quat.normalize(t)


def joint_weights(skeleton) -> np.ndarray:
    """[J] each joint's weight: the length of the longest bone it turns (metres); the root's 0.5."""
    joint, tip = skeleton.bone_tips()
    w = np.zeros(skeleton.n_joints)
    np.maximum.at(w, joint, np.linalg.norm(tip, axis=1))
    w[0] = ROOT_WEIGHT
    return w


def _axes(rot: np.ndarray, weights: np.ndarray, frames: np.ndarray | None = None) -> np.ndarray:
    """[n, J*6] each joint's rotation (followed by its ``frames`` turn, ``engines.base.rest_frames``) applied to the
    unit x and y vectors, times its weight."""
    if frames is not None:
        rot = quat.mul(rot, np.tile(frames, (rot.shape[1] // len(frames), 1)))
    m = quat.to_matrix(rot, columns=2)  # [n, J, 3, 2]: the rotated unit vectors
    return (m.reshape(m.shape[:-2] + (6,)) * weights[:, None]).reshape(len(rot), -1)


def features(states: States, weights: np.ndarray, fps: float, velocity_weight: float = ROOT_WEIGHT,
             frames: np.ndarray | None = None) -> np.ndarray:
    """[n, D] float32: root velocity (m/s) x ``velocity_weight``, the weighted pose terms, and the
    pose terms after the velocity step (its root turned by the step's yaw, so turning shows); each
    joint's rotation followed by its ``frames`` turn (``engines.base.rest_frames``)."""
    keep = weights > 0
    w = weights[keep]
    nxt = quat.mul(states.turn, states.rot)
    nxt[:, 0] = quat.mul(heading(states.motion[:, 2]), nxt[:, 0])
    vel = velocity_weight * fps * np.column_stack((states.motion[:, :2], states.lift))
    both = np.concatenate((states.rot[:, keep], nxt[:, keep]), axis=1)  # one pass over both poses
    turns = None if frames is None else frames[keep]
    return np.concatenate((vel, _axes(both, np.r_[w, w], turns)), axis=1).astype(np.float32)


def advance(states: States, motion, lift, turn) -> States:
    """x ⊕ v: the poses after one frame at velocity (motion, lift, turn); the velocity is kept."""
    rot = quat.normalize(quat.mul(turn, states.rot))
    return States(rot, states.height + lift, np.asarray(motion), np.asarray(lift), turn)


def pull(states: States, target: States, delta: float) -> States:
    """Drift correction: every part of ``states`` moved a share ``delta`` toward ``target``."""
    if delta <= 0:
        return states
    mix = 1.0 - delta
    j = states.rot.shape[1]
    both = quat.slerp(np.concatenate((states.rot, states.turn), axis=1),
                      np.concatenate((target.rot, target.turn), axis=1), delta)  # one pass over both
    return States(both[:, :j], mix * states.height + delta * target.height, mix * states.motion + delta * target.motion,
                  mix * states.lift + delta * target.lift, both[:, j:])


def similarity(d2: np.ndarray) -> np.ndarray:
    """Similarity weights w_i ∝ 1/d_i² over the last axis, normalised."""
    w = 1.0 / (np.maximum(d2, 0.0) + SIMILARITY_EPS)
    return w / w.sum(axis=-1, keepdims=True)


def actions(w: np.ndarray, strength: float = REACH_STRENGTH) -> np.ndarray:
    """[..., k, k] the k actions of similarity weights w [..., k]: action j is w with its j-th
    weight set to 1 (``strength`` for a neighbour of weight 0: a speed action's), renormalised
    (prefers neighbour j)."""
    k = w.shape[-1]
    a = np.repeat(w[..., None, :], k, axis=-2)
    idx = np.arange(k)
    a[..., idx, idx] = np.where(w > 0, 1.0, strength)
    return a / a.sum(axis=-1, keepdims=True)


class Search:
    """k-nearest database states by exact feature distance (see the module docstring)."""

    def __init__(self, feats: np.ndarray, variance: float = PCA_VARIANCE, max_dims: int = 64):
        from scipy.spatial import cKDTree

        self.feats = np.ascontiguousarray(feats, dtype=np.float32)
        self.mean = self.feats.mean(axis=0)
        centred = self.feats - self.mean
        _, s, vt = np.linalg.svd(centred.astype(np.float64), full_matrices=False)
        share = np.cumsum(s**2) / max(float(np.sum(s**2)), 1e-30)
        d = int(min(max_dims, np.searchsorted(share, variance) + 1, vt.shape[0]))
        self.basis = np.ascontiguousarray(vt[:d].T, dtype=np.float32)
        self.tree = cKDTree(centred @ self.basis)
        f64 = self.feats.astype(np.float64)
        self.sqnorm = np.einsum("nd,nd->n", f64, f64)

    @property
    def n(self) -> int:
        return len(self.feats)

    def candidates(self, q: np.ndarray, c: int, block: int = 4096) -> np.ndarray:
        """[n, c] database rows near feature rows ``q`` [n, D] by the principal components alone."""
        q = np.asarray(q, dtype=np.float32).reshape(-1, self.feats.shape[1])
        c = min(c, self.n)
        out = np.empty((len(q), c), dtype=np.int64)
        for a in range(0, len(q), block):
            _, cand = self.tree.query((q[a:a + block] - self.mean) @ self.basis, c)
            out[a:a + block] = np.asarray(cand, dtype=np.int64).reshape(-1, c)
        return out

    def query(self, q: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(index [n, k] nearest first, squared distance [n, k]) of feature rows ``q`` [n, D]."""
        q = np.asarray(q, dtype=np.float32).reshape(-1, self.feats.shape[1])
        k = min(k, self.n)
        return rerank(self.feats, q, self.candidates(q, CANDIDATES * k), k)

    def pools(self, q: np.ndarray, group: int, k: int) -> np.ndarray:
        """[n / group, POOL * k] candidate rows shared by each run of ``group`` consecutive feature
        rows of ``q`` (the k actions of one state: their next states lie close together), found
        around the run's mean."""
        q = np.asarray(q, dtype=np.float32).reshape(-1, group, self.feats.shape[1])
        return self.candidates(q.mean(axis=1), POOL * k)

    def in_pools(self, q: np.ndarray, pools: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """``query`` among shared candidates: ``q`` [n, D] in runs of n / len(pools) rows, each run
        ranked by exact distance (float64) against its pool [c] of ``pools`` [g, c]."""
        g, c = pools.shape
        q = np.asarray(q, dtype=np.float64).reshape(g, -1, self.feats.shape[1])
        cand = self.feats[pools].astype(np.float64)  # [g, c, D]
        d2 = (np.einsum("gmd,gmd->gm", q, q)[..., None] - 2.0 * same_everywhere_matmul(q, cand.transpose(0, 2, 1))
              + self.sqnorm[pools][:, None, :])
        d2 = np.maximum(d2, 0.0).reshape(-1, c)
        idx = np.repeat(pools, q.shape[1], axis=0)
        if k == 1:  # the nearest (on a tie, the first in the pool)
            order = np.argmin(d2, axis=1)[:, None]
        else:
            order = np.lexsort((idx, d2), axis=1)[:, :min(k, c)]
        return np.take_along_axis(idx, order, 1), np.take_along_axis(d2, order, 1)


def rerank(feats: np.ndarray, q: np.ndarray, cand: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The k of candidate rows ``cand`` [n, c] nearest to ``q`` [n, D] by exact distance (ties to
    the lower index), nearest first."""
    diff = feats[cand] - q[:, None, :]
    d2 = np.einsum("ncd,ncd->nc", diff, diff).astype(np.float64)
    order = np.lexsort((cand, d2), axis=1)[:, :k]
    return np.take_along_axis(cand, order, 1), np.take_along_axis(d2, order, 1)


@dataclass(eq=False)
class Database:
    """The motion database of a FrameTable's clips (see the module docstring): ``x`` the states,
    ``y`` (motion, lift, turn) the next velocities, ``row`` each state's table row, ``clip`` and
    ``frame`` where it is, ``weights`` the joints' weights, ``feats`` and ``search``."""

    x: States
    y: tuple
    row: np.ndarray
    clip: np.ndarray
    frame: np.ndarray
    weights: np.ndarray
    fps: float
    feats: np.ndarray
    search: Search
    skeleton: object = None
    contact: np.ndarray | None = None  # [S, 2] the feet each state's capture plants
    velocity_weight: float = ROOT_WEIGHT  # of the root's velocity in ``features``
    reach_step: float = 0.0  # m/s: a speed action reaches this much slower or faster (0: none)
    reach_search: Search | None = None  # over the states' features with the speed at REACH_WEIGHT
    frames: np.ndarray | None = None  # [J, 4] the table's rest_frames, which features follow

    @classmethod
    def build(cls, table, velocity_weight: float = ROOT_WEIGHT, reach_step: float = 0.0) -> Database:
        lengths = np.asarray(table.length)
        if np.all(lengths < 3):
            raise MotionctlError("a motion field needs clips of at least 3 frames")
        clip = np.concatenate([np.full(max(n - 2, 0), c) for c, n in enumerate(lengths)]).astype(np.int64)
        frame = np.concatenate([np.arange(max(n - 2, 0)) for n in lengths]).astype(np.int64)
        row = table.first[clip] + frame
        rot, h, mo = table.local_rot, table.height, table.motion
        x = States(rot[row], h[row], *velocity_between(rot[row], h[row], rot[row + 1], h[row + 1], mo[row + 1]))
        y = velocity_between(rot[row + 1], h[row + 1], rot[row + 2], h[row + 2], mo[row + 2])
        weights = joint_weights(table.skeleton)
        frames = rest_frames(table)
        feats = features(x, weights, table.fps, velocity_weight, frames)
        reach = Search(features(x, weights, table.fps, REACH_WEIGHT, frames)) if reach_step > 0 else None
        return cls(x, y, row, clip, frame, weights, float(table.fps), feats, Search(feats), table.skeleton,
                   table.contact[row], float(velocity_weight), float(reach_step), reach, frames)

    def planted(self, nb: np.ndarray, w: np.ndarray) -> np.ndarray:
        """[n, 2] the feet planted in states with neighbours ``nb`` [n, k] and weights ``w``: as in
        the captured states weighing at least half."""
        return np.einsum("nk,nkf->nf", w, self.contact[nb].astype(np.float64)) >= 0.5

    @property
    def n(self) -> int:
        return len(self.row)

    def features(self, states: States) -> np.ndarray:
        return features(states, self.weights, self.fps, self.velocity_weight, self.frames)

    def neighbours(self, states: States, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(index [n, k], similarity weights [n, k]) of each state's k nearest database states."""
        idx, d2 = self.search.query(self.features(states), k)
        return idx, similarity(d2)

    def reach(self, states: States, at: np.ndarray | None = None) -> np.ndarray:
        """[n, 2] each state's speed actions' database states (none: [n, 0]): the nearest, with
        the root's speed weighing REACH_WEIGHT per m/s, to the state moving ``reach_step`` m/s
        slower (at least standing) and faster along its own direction (forward when standing).  A
        walk's k neighbours all walk (the pose outweighs the speed), so without these the flow
        cannot leave a steady speed for the capture's stops, speed-ups and slow-downs.  ``at`` [n]
        (each state's nearest database state): a speed action's state is never one of the
        REACH_BEHIND seconds of its clip up to it, whose successor lies behind the character: pulled
        toward it, the flow went back as far as it went on, and a field held one pose for ever
        (a start-walk-stop clip's last step, where the capture slows: "faster" was the step before)."""
        if not self.n_reach:
            return np.zeros((len(states), 0), dtype=np.int64)
        ground = states.motion[:, :2] * self.fps
        speed = np.hypot(*ground.T)
        way = np.where(speed[:, None] > 1e-6, ground / np.maximum(speed, 1e-6)[:, None], [0.0, 1.0])
        f = features(states, self.weights, self.fps, REACH_WEIGHT, self.frames)
        out = np.empty((len(states), 2), dtype=np.int64)
        for j, target in enumerate((np.maximum(speed - self.reach_step, 0.0), speed + self.reach_step)):
            f[:, :2] = REACH_WEIGHT * way * target[:, None]
            out[:, j] = self.reach_search.query(f, 1)[0][:, 0]
        if at is not None:  # behind the character in its clip: carry on instead
            lag = self.frame[at][:, None] - self.frame[out]
            behind = (self.clip[out] == self.clip[at][:, None]) & (lag >= 0) & (lag < REACH_BEHIND * self.fps)
            out = np.where(behind, self.successor[at][:, None], out)
        return out

    @property
    def n_reach(self) -> int:
        """How many speed actions each state has (``reach``): 2, or 0 without them."""
        return 2 if self.reach_search is not None else 0

    def with_reach(self, states: States, nb: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(nb [n, k + 2], w [n, k + 2]): the k neighbours and weights with the speed actions'
        states after them, at weight 0 (they join the flow only when their action is chosen)."""
        extra = self.reach(states, nb[:, 0])
        return (np.concatenate((nb, extra.astype(nb.dtype)), axis=1),
                np.concatenate((w, np.zeros(extra.shape, dtype=w.dtype)), axis=1))

    def flow(self, states: States, nb: np.ndarray, a: np.ndarray) -> tuple[States, np.ndarray]:
        """(next states, the frame's root motion [n, 3]) under action ``a`` [n, k] over
        neighbours ``nb`` [n, k] before drift correction: x' = x ⊕ Σ a_i v_i, v' = Σ a_i y_i."""
        motion, lift, turn = blend_velocities(a, self.x.motion[nb], self.x.lift[nb], self.x.turn[nb])
        moved = advance(states, motion, lift, turn)
        velocity = blend_velocities(a, self.y[0][nb], self.y[1][nb], self.y[2][nb])
        return States(moved.rot, moved.height, *velocity), motion

    def integrate(self, states: States, nb: np.ndarray, a: np.ndarray, delta: float, k: int, group: int = 1,
                  toward: np.ndarray | None = None):
        """One frame of the flow for each state under action ``a`` [n, k] over its neighbours
        ``nb`` [n, k] (``flow``), then the drift correction toward the nearest database state by
        ``delta``; rows whose ``toward`` [n] names a database state (not -1: a speed action's
        successor) are first pulled toward it by REACH_PULL.  Runs of ``group`` consecutive rows
        (one state's actions) look for neighbours among one shared pool of candidates
        (``Search.pools``).
        Returns (next states, the frame's root motion [n, 3], the next states' neighbours [n, k]
        and similarity weights [n, k])."""
        nxt, motion = self.flow(states, nb, a)
        if toward is not None and np.any(toward >= 0):
            rows = np.flatnonzero(toward >= 0)
            nxt = nxt.with_rows(rows, pull(nxt.take(rows), self.x.take(toward[rows]), REACH_PULL))
        k = min(k, self.n)
        f = self.features(nxt)
        pools = self.search.pools(f, group, k)
        nearest, _ = self.search.in_pools(f, pools, 1)
        nxt = pull(nxt, self.x.take(nearest[:, 0]), delta)
        nb2, d2 = self.search.in_pools(self.features(nxt), pools, k)
        return nxt, motion, nb2, similarity(d2)

    def play_actions(self, states: States, nb: np.ndarray, w: np.ndarray, delta: float, k: int):
        """Every one of the K actions (``actions``) from each of ``states`` (n, with neighbours
        ``nb`` [n, K] and similarity weights ``w`` [n, K]: the k neighbours and any speed
        actions' states, ``with_reach``) played one frame through ``integrate``: what value
        iteration caches and what a decision compares.  Returns ``integrate``'s results with n*K
        rows, the actions of state i at rows i*K to i*K + K - 1 (their next neighbours: k)."""
        n, kk = nb.shape
        acts = actions(w).reshape(n * kk, kk)
        rep = np.repeat(np.arange(n), kk)
        toward = np.full((n, kk), -1, dtype=np.int64)
        toward[:, min(k, self.n):] = self.successor[nb[:, min(k, self.n):]]
        return self.integrate(states.take(rep), nb[rep], acts, delta, k, group=kk, toward=toward.reshape(-1))

    @functools.cached_property
    def successor(self) -> np.ndarray:
        """[S] each state's next state in its clip (a clip's last state: itself)."""
        same = np.r_[self.clip[1:] == self.clip[:-1], False]
        return np.arange(self.n) + same


__all__ = ["Database", "Search", "States", "actions", "advance", "blend_velocities", "features", "joint_weights",
           "pull", "rerank", "similarity", "velocity_between"]
