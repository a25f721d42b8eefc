"""Tasks and value functions of a motion field (paper 002 sections 4-5, DESIGN.md 3.3).

A task state T is sampled on a grid: the direction task's θ_c (desired minus facing direction, 18
samples over (-π, π], periodic), the line task's (θ_c, d_L) with d_L the signed distance to the
line (positive to its right), 13 samples over [-2, 2] m (clamped beyond).  One frame's root
motion (dx, dy, dyaw) moves T: θ_c' = θ_c - dyaw, d_L' = d_L + cos θ_c·dx + sin θ_c·dy.  The
reward of reaching T' is -|θ_c'| (direction) or -|θ_c'| - w_L·|d_L'| (line), plus (a setting, on
by default) a term for keeping moving: -(1 - s/s_min) for a frame's root speed s below s_min, 0
above.  Without it the line task settled into the stop clips' standing frames short of the line
(bench/results/field.md).  The passive task ("none") has one task state and that term alone, so
the flow does not settle into the standing frames that end the capture (with s_min = 0 there is
no value function: the paper's pure passive flow).

Values live at anchor states (every N-th state of each clip, and each clip's last; N = 1: every
state), and a state between anchors takes (1 - i/N)·V_0 + (i/N)·V_N.  Fitted value iteration
caches once, for every anchor and action, the next state's neighbours and weights (``Cache``:
[A, k, k]) and the frame's root motion; then each sweep is a sparse product (neighbours and
anchor interpolation), a multilinear interpolation over T, a reward, a max over actions, in
float32 blocks, until the largest change of a sweep falls below a tolerance.  With the asked
speed in T, the future is read as the player sees it: free to ask another speed at any frame
(``GridTask.expect``); the values stored are those expectations, what a decision reads.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
from scipy import sparse

from ...errors import MotionctlError
from ...jobs import check_stop, converging
from ...play.tasks import GridTask

@dataclass
class Anchors:
    """Where values are stored: ``rows`` [A] the anchor states; per database state, the anchors
    before and after it (``lo``, ``hi`` [S], indices into ``rows``) and its share ``t`` [S]
    of the way from one to the other."""

    rows: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    t: np.ndarray

    @classmethod
    def every(cls, clip: np.ndarray, frame: np.ndarray, n: int) -> Anchors:
        """Anchors every ``n`` states of each clip and at each clip's last state."""
        last = np.r_[clip[1:] != clip[:-1], True]
        is_anchor = (frame % n == 0) | last
        rows = np.flatnonzero(is_anchor)
        pos = np.cumsum(is_anchor) - 1  # the anchor at or before each state
        lo = pos.copy()
        hi = np.where(is_anchor, pos, pos + 1)
        span = np.maximum(frame[rows[hi]] - frame[rows[lo]], 1)
        t = np.where(is_anchor, 0.0, (frame - frame[rows[lo]]) / span)
        return cls(rows, lo, hi, t.astype(np.float32))

    @property
    def n(self) -> int:
        return len(self.rows)

    def matrix(self, states: int) -> sparse.csr_matrix:
        """[S, A] the interpolation V_states = C @ V_anchors."""
        r = np.arange(states)
        data = np.concatenate((1 - self.t, self.t))
        return sparse.csr_matrix((data, (np.r_[r, r], np.r_[self.lo, self.hi])), shape=(states, self.n),
                                 dtype=np.float32)

    def values_at(self, v: np.ndarray, states: np.ndarray) -> np.ndarray:
        """[..., G] values at database states ``states`` [...] from anchor values ``v`` [A, G]."""
        t = self.t[states][..., None]
        return (1 - t) * v[self.lo[states]] + t * v[self.hi[states]]


@dataclass
class Cache:
    """Every anchor's K actions played once: the next states' neighbours ``nb`` and weights ``w``
    [A, K, k], and the frame's root motion [A, K, 3]."""

    nb: np.ndarray
    w: np.ndarray
    motion: np.ndarray
    seconds: float = 0.0


def transitions(db, rows: np.ndarray, k: int, delta: float, progress=None, should_stop=None,
                block: int = 128) -> Cache:
    """The Cache of database states ``rows``: each one's neighbours (and its speed actions'
    states, ``Database.with_reach``), its K actions, each played through ``db.integrate`` (in
    blocks of states)."""
    t0 = time.perf_counter()
    k = min(k, db.n)
    kk = k + db.n_reach  # K actions
    nb = np.empty((len(rows), kk, k), dtype=np.int32)
    w = np.empty((len(rows), kk, k), dtype=np.float32)
    motion = np.empty((len(rows), kk, 3), dtype=np.float32)
    for a in range(0, len(rows), block):
        check_stop(should_stop, "caching transitions")
        r = rows[a:a + block]
        here = db.x.take(r)
        own, sim = db.with_reach(here, *db.neighbours(here, k))
        m = len(r)
        _, mo, nb2, w2 = db.play_actions(here, own, sim, delta, k)
        nb[a:a + m] = nb2.reshape(m, kk, k)
        w[a:a + m] = w2.reshape(m, kk, k)
        motion[a:a + m] = mo.reshape(m, kk, 3)
        if progress is not None:
            progress(min(a + block, len(rows)) / len(rows), f"cached {min(a + block, len(rows))} of {len(rows)} states")
    return Cache(nb, w, motion, time.perf_counter() - t0)


@dataclass
class Learned:
    """A value function over anchors [A, G] and how it was learned."""

    values: np.ndarray
    sweeps: int
    residuals: list = field(default_factory=list)
    seconds: float = 0.0


def value_iteration(task: GridTask, cache: Cache, anchors: Anchors, states: int, gamma: float, tol: float,
                    max_sweeps: int, progress=None, should_stop=None, block: int = 1024) -> Learned:
    """V(s) <- max_a R(s, a) + γ V(I(s, a)) over anchors x task grid until a sweep changes no
    value by more than ``tol`` (see the module docstring).  Starts from V = 0."""
    t0 = time.perf_counter()
    a_n, k, kn = cache.nb.shape  # anchors, actions, next neighbours
    if a_n != anchors.n:
        raise MotionctlError("the transition cache does not match the anchors")
    g_n = task.size
    # Next-state values as one sparse product: rows (anchor, action), columns anchors.
    rows = np.repeat(np.arange(a_n * k), kn)
    nbrs = cache.nb.reshape(-1).astype(np.int64)
    mix = sparse.csr_matrix((cache.w.reshape(-1), (rows, nbrs)), shape=(a_n * k, states), dtype=np.float32)
    to_anchor = mix @ anchors.matrix(states)  # [A*k, A]
    grid = task.grid()
    c = task.n_corners
    reward = np.empty((a_n * k, g_n), dtype=np.float32)
    idx = np.empty((a_n * k, g_n * c), dtype=np.int32)
    wts = np.empty((a_n * k, g_n, c), dtype=np.float32)
    flat_motion = cache.motion.reshape(-1, 1, 3).astype(np.float64)
    for a in range(0, a_n * k, block * k):  # in blocks: the task grid x actions is large
        rr = slice(a, min(a + block * k, a_n * k))
        nxt = task.step(grid[None, :, :], flat_motion[rr])  # [m, G, n]
        reward[rr] = task.reward(nxt, flat_motion[rr])
        i, w = task.corners(nxt)
        local = (np.arange(rr.start, rr.stop) - rr.start)[:, None] * g_n  # rows of the block's product
        idx[rr] = i.reshape(len(i), -1) + local
        wts[rr] = w
    v = np.zeros((a_n, g_n), dtype=np.float32)
    learned = Learned(v, 0)
    done = 0.0  # share reported
    for sweep in range(1, max_sweeps + 1):
        check_stop(should_stop, "value iteration")
        seen = task.expect(v)  # the future as seen with the player free to ask another speed
        new = np.empty_like(v)
        for a in range(0, a_n, block):
            b = min(a + block, a_n)
            rr = slice(a * k, b * k)
            vm = to_anchor[rr] @ seen  # [m*k, G]
            future = np.take(vm.ravel(), idx[rr]).reshape(-1, g_n, c)
            q = reward[rr] + gamma * np.einsum("rgc,rgc->rg", future, wts[rr])
            new[a:b] = q.reshape(b - a, k, g_n).max(axis=1)
        change = float(np.max(np.abs(new - v)))
        v = new
        learned.residuals.append(change)
        if change < tol:
            break
        if progress is not None and sweep % 10 == 0:
            done = max(done, converging(learned.residuals, tol, max_sweeps))
            progress(min(0.99, done), f"sweep {sweep}: largest change {change:.4g}")
    if progress is not None:
        progress(1.0, f"converged after {sweep} sweeps" if change < tol else f"{sweep} sweeps, the most allowed")
    learned.values, learned.sweeps = task.expect(v), sweep  # what a decision reads as the future
    learned.seconds = time.perf_counter() - t0
    return learned


__all__ = ["Anchors", "Cache", "Learned", "transitions", "value_iteration"]
