"""Motion matching's database: a feature vector per captured frame, and exact nearest-neighbour
search over it.

Features (all in the frame's root frame: x right, y forward, z up), in blocks:

    foot_position        both ankles' positions                         6
    foot_velocity        both ankles' velocities                        6
    hip_velocity         the root joint's velocity                      3
    trajectory_position  where the root frame is TIMES seconds ahead    6
    trajectory_direction which way it faces then                        6

Each block is normalised by its spread (every dimension's mean removed, the block divided by the
mean of its dimensions' standard deviations) and multiplied by its weight, so a weight says how
much a block counts whatever its units (Holden's open implementation does the same).

Search: every searchable set of frames (locomotion; each action's lead-ins) has an ``Index`` that
answers the exact nearest frame one of three ways (``SEARCHES``): all distances at once
("brute"), scipy's k-d tree ("kdtree"), or bounding boxes over runs of 16 and 64 consecutive
frames ("boxes", as in Holden's implementation), skipping every box whose nearest corner is
farther than the best frame so far.  All three give the same frame (tests check this);
bench/bench_scoreboard.py measures their speed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.spatial import cKDTree

from ...body import Body, action_centres
from ...rootframe import root_frame, to_local, to_root_frame, to_world, wrap
from ...tags import ACTIONS, canonical_set

TIMES = (1 / 3, 2 / 3, 1.0)  # s: the trajectory's sample times
BLOCKS = ("foot_position", "foot_velocity", "hip_velocity", "trajectory_position", "trajectory_direction")
SIZES = (6, 6, 3, 6, 6)
POSE_DIMS = 15  # the first three blocks: what the playing frame itself says
SEARCHES = (("kdtree", "k-d Tree", "scipy's k-d tree on the normalised features (exact)"),
            ("boxes", "Bounding Boxes", "Boxes over runs of 16 and 64 frames; skips boxes farther than the best "
             "frame so far (exact)"),
            ("brute", "Every Frame", "Distances to every frame (exact; the reference)"))
END_VELOCITY = 0.2  # s: a clip's trajectory goes on past its end at its velocity over this long
ACTION_LEAD = 1.0  # s before an action's centre from which the action can be entered
ACTION_AFTER = 0.4  # s after the centre the action plays before the search resumes


def raw_features(clip, heading_smooth: float = 0.2, times=TIMES) -> np.ndarray:
    """[F, 27] features of every frame of a clip (see the module docstring), unnormalised.  Past
    the clip's end the trajectory goes on as its last 0.2 s went (a capture that stopped mid-run
    runs on, one that ended standing stands): stopped at the end, every frame within a second of
    a run clip's end looked like a stop, and a stop found a frozen running pose."""
    pos, _ = clip.world()
    ground, yaw = root_frame(clip, heading_smooth)
    feet = Body.of(clip.skeleton).feet
    ankles = [feet["L"][0], feet["R"][0]]
    n = clip.n_frames
    local = to_root_frame(pos[:, ankles + [0]], ground, yaw)  # [F, 3, 3]
    vel = np.zeros_like(pos[:, ankles + [0]])
    if n > 1:
        vel[1:] = np.diff(pos[:, ankles + [0]], axis=0) * clip.fps
        vel[0] = vel[1]
    vel[..., :2] = to_local(vel[..., :2], yaw[:, None])
    want = np.arange(n)[:, None] + np.round(np.asarray(times) * clip.fps).astype(np.int64)
    ahead = np.minimum(want, n - 1)
    over = (want - ahead).astype(float)  # frames the trajectory reaches past the clip's end
    k = max(1, min(n - 1, round(END_VELOCITY * clip.fps)))
    v_end = (ground[-1] - ground[-1 - k]) / k if n > 1 else np.zeros(2)  # per frame, over the last 0.2 s
    w_end = float(wrap(yaw[-1] - yaw[-1 - k])) / k if n > 1 else 0.0
    traj = to_local(ground[ahead] + over[..., None] * v_end - ground[:, None], yaw[:, None])  # [F, T, 2]
    dirs = to_world(np.array([0.0, 1.0]), yaw[ahead] + over * w_end - yaw[:, None])  # [F, T, 2]
    return np.concatenate((local[:, :2].reshape(n, 6), vel[:, :2].reshape(n, 6), vel[:, 2],
                           traj.reshape(n, -1), dirs.reshape(n, -1)), axis=1)


def block_of() -> np.ndarray:
    """[27] the block index of every feature dimension."""
    return np.repeat(np.arange(len(BLOCKS)), SIZES)


def normalisation(raw: np.ndarray, weights) -> tuple[np.ndarray, np.ndarray]:
    """(offset [27], scale [27]): normalised = (raw - offset) / scale, each block divided by the
    mean standard deviation of its dimensions over its weight (a weight of 0 drops the block)."""
    offset = raw.mean(axis=0)
    std = raw.std(axis=0)
    blocks = block_of()
    spread = np.array([std[blocks == b].mean() for b in range(len(BLOCKS))])
    w = np.asarray(weights, dtype=float)
    scale = np.where(w > 0, np.maximum(spread, 1e-6) / np.maximum(w, 1e-9), np.inf)[blocks]
    return offset, scale


@dataclass(eq=False)
class Rows:
    """What each frame table row can do: ``searchable`` [N] (not within the end margin of its
    clip), ``lands`` [N] (a jump may land there: searchable for ``near`` frames more, so the clip
    plays on before it ends), ``kind`` [N] (0: locomotion, k: the k-th of ``kinds``, an action clip), ``entry`` [N]
    (an action can be entered here: a lead-in before its centre), ``commit`` [N] (the row until
    which an action entered here plays before the search resumes), ``clip`` [N] and ``last`` [N] (the row's clip and that clip's last row)."""

    searchable: np.ndarray
    lands: np.ndarray
    kind: np.ndarray
    kinds: list
    entry: np.ndarray
    commit: np.ndarray
    clip: np.ndarray
    last: np.ndarray


def row_info(clips, table, end_margin: float, near: float = 0.0) -> Rows:
    """``Rows`` of a frame table built from ``clips`` (the working clips, in table order); a jump
    lands ``near`` seconds or more before the end margin (landed on its edge, the clip ended at once
    and the search jumped back: four frames played seven times a second, measured)."""
    n = table.n_frames
    clip = np.repeat(np.arange(len(table.first)), table.length)
    last = (table.first + table.length - 1)[clip]
    margin = max(1, int(round(end_margin * table.fps)))
    searchable = (last - np.arange(n)) >= margin
    lands = (last - np.arange(n)) >= margin + max(1, int(round(near * table.fps)))
    kinds = [""]
    kind = np.zeros(n, dtype=np.int64)
    entry = np.zeros(n, dtype=bool)
    commit = np.arange(n)
    lead, after = int(round(ACTION_LEAD * table.fps)), int(round(ACTION_AFTER * table.fps))
    for k, c in enumerate(clips):
        acts = sorted(canonical_set(c.tags) & ACTIONS)
        if not acts:
            continue
        if acts[0] not in kinds:
            kinds.append(acts[0])
        a, b = table.first[k], table.first[k] + table.length[k]
        kind[a:b] = kinds.index(acts[0])
        for centre in action_centres(c):
            lo, hi = max(0, centre - lead), min(c.n_frames - 1 - margin, centre + after)
            entry[a + lo:a + centre] = True
            commit[a + lo:a + centre] = a + hi
    return Rows(searchable, lands, kind, kinds, entry, commit, clip, last)


def _distances(x: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Squared distances [N] of rows ``x`` [N, D] to ``q`` [D], from the differences (exact to the
    last bit whichever search asks, so all three agree on ties)."""
    d = x - q
    return np.einsum("nd,nd->n", d, d)


class Index:
    """Exact nearest-neighbour search over rows ``rows`` of the normalised features ``x`` [N, D]."""

    SMALL, LARGE = 16, 64

    def __init__(self, x: np.ndarray, rows: np.ndarray, method: str = "boxes"):
        self.rows = np.asarray(rows, dtype=np.int64)
        self.x = np.ascontiguousarray(x[self.rows], dtype=np.float64)
        self.method = method
        if method == "kdtree":
            self.tree = cKDTree(self.x)
        elif method == "boxes":
            self.small = self._boxes(self.SMALL)
            self.large = self._boxes(self.LARGE)

    def _boxes(self, size: int):
        n = len(self.x)
        starts = np.arange(0, n, size)
        return (np.minimum.reduceat(self.x, starts, axis=0), np.maximum.reduceat(self.x, starts, axis=0), starts)

    def __len__(self) -> int:
        return len(self.rows)

    def nearest(self, q: np.ndarray, bound: float = np.inf, skip: tuple = (0, -1)) -> tuple[int, float]:
        """(table row, squared distance) of the nearest searchable frame to ``q`` [D], or (-1, bound)
        when none is nearer than ``bound`` (a squared distance); table rows ``skip`` (first, last)
        are never chosen."""
        if len(self.rows) == 0:
            return -1, bound
        lo, hi = skip
        if self.method == "kdtree":
            k = int(min(len(self.rows), max(1, hi - lo + 2)))
            d, i = self.tree.query(q, k=k, distance_upper_bound=np.sqrt(bound) if np.isfinite(bound) else np.inf)
            d, i = np.atleast_1d(d), np.atleast_1d(i)
            for dd, ii in zip(d, i):
                if np.isfinite(dd) and not lo <= self.rows[ii] <= hi:
                    return int(self.rows[ii]), float(dd * dd)
            return -1, bound
        if self.method == "boxes":
            return self._boxes_nearest(q, bound, lo, hi)
        d = _distances(self.x, q)
        d[(self.rows >= lo) & (self.rows <= hi)] = np.inf
        i = int(np.argmin(d))
        return (int(self.rows[i]), float(d[i])) if d[i] < bound else (-1, bound)

    def _boxes_nearest(self, q, bound, skip_lo: int = 0, skip_hi: int = -1):
        lo, hi, starts = self.large
        gap = np.maximum(lo - q, 0.0) + np.maximum(q - hi, 0.0)
        near = np.flatnonzero(np.einsum("bd,bd->b", gap, gap) < bound)
        if len(near) == 0:
            return -1, bound
        per = self.LARGE // self.SMALL
        small = (near[:, None] * per + np.arange(per)).ravel()
        slo, shi, sstarts = self.small
        small = small[small < len(sstarts)]
        gap = np.maximum(slo[small] - q, 0.0) + np.maximum(q - shi[small], 0.0)
        lb = np.einsum("bd,bd->b", gap, gap)
        order = np.argsort(lb, kind="stable")
        small, lb = small[order], lb[order]
        best, best_d = -1, bound
        n = len(self.x)
        done = 0
        chunk = 8
        while done < len(small) and lb[done] < best_d:
            take = small[done:done + chunk]
            take = take[lb[done:done + chunk] < best_d]
            idx = (sstarts[take][:, None] + np.arange(self.SMALL)).ravel()
            idx = idx[idx < n]
            d = _distances(self.x[idx], q)
            d[(self.rows[idx] >= skip_lo) & (self.rows[idx] <= skip_hi)] = np.inf
            i = int(np.argmin(d))
            if d[i] < best_d:
                best, best_d = int(idx[i]), float(d[i])
            done += chunk
            chunk *= 2
        return (int(self.rows[best]), best_d) if best >= 0 else (-1, bound)


__all__ = ["BLOCKS", "Index", "POSE_DIMS", "Rows", "SEARCHES", "SIZES", "TIMES", "block_of", "normalisation",
           "raw_features", "row_info"]
