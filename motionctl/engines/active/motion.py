"""Motion for the active-learning controller (paper 003, section 3): states, examples and
time-aligned blends.

A *state* is the next ``STATE_FRAMES`` poses of the playing motion as a point cloud (every joint,
each frame) in the root frame of the first of them, so it is invariant to ground translation and
heading; two states are compared by the RMS distance of their points (metres), as Kovar et al.'s
point clouds are.

An *example* is a piece of a working clip cut between phase keys (for a walk: right heel strike,
left heel strike, right heel strike; for a jump: start, take-off, landing, settled).  It is
resampled to ``PHASE`` samples of a common phase by those keys (piecewise-linear time warp), so
examples of one cluster blend pose for pose: rotations (the root's relative to its heading)
averaged and renormalised, heights and the root path in the start's root frame interpolated,
lengths and key times averaged by the same weights (Kovar & Gleicher's registration, with foot
contacts for the registration curve).  A blend is played as frames through ``to_frames``.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from ... import quat
from ...rootframe import heading, root_frame, to_local
from ...skeleton import forward_kinematics

STATE_FRAMES = 10
PHASE = 49  # samples of the common phase: key phases 0, 1/2, 1 and 0, 1/3, 2/3, 1 fall on samples


@dataclass(eq=False)
class Source:
    """A working clip in root-frame terms: rot [F, J, 4] (the root's relative to the heading),
    height [F], ground [F, 2], yaw [F], world joint positions pos [F, J, 3] and states [F, D]."""

    name: str
    fps: float
    rot: np.ndarray
    height: np.ndarray
    ground: np.ndarray
    yaw: np.ndarray
    pos: np.ndarray
    states: np.ndarray

    @property
    def n_frames(self) -> int:
        return len(self.height)


HEADING_SMOOTH = 0.2  # s: the root frame's heading smoothing (rootframe.root_frame)


def source_of(clip, heading_smooth: float = HEADING_SMOOTH) -> Source:
    """A clip as a Source (its states computed for every frame)."""
    ground, yaw = root_frame(clip, heading_smooth)
    rot = clip.local_rot.copy()
    rot[:, 0] = quat.mul(heading(-yaw), clip.local_rot[:, 0])
    pos, _ = clip.world()
    return Source(clip.name, clip.fps, rot, clip.root_pos[:, 2].copy(), ground, yaw, pos, states_of(pos, ground, yaw))


def states_of(pos: np.ndarray, ground: np.ndarray, yaw: np.ndarray) -> np.ndarray:
    """[F, D] float32: for every frame f, joints of frames f..f+9 (the last frame repeated past the
    end) in frame f's root frame, flattened."""
    n = len(pos)
    idx = np.minimum(np.arange(n)[:, None] + np.arange(STATE_FRAMES)[None], n - 1)
    pts = pos[idx]  # [F, S, J, 3]
    out = np.empty(pts.shape, dtype=np.float32)
    out[..., :2] = to_local(pts[..., :2] - ground[:, None, None, :], yaw[:, None, None])
    out[..., 2] = pts[..., 2]
    return out.reshape(n, -1)


def distances(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """[M, N] RMS point distance (m) between states a [M, D] and b [N, D] (one BLAS pass)."""
    a, b = np.atleast_2d(np.asarray(a, np.float32)), np.atleast_2d(np.asarray(b, np.float32))
    d2 = np.einsum("nd,nd->n", a, a)[:, None] - 2.0 * (a @ b.T) + np.einsum("nd,nd->n", b, b)[None]
    return np.sqrt(np.maximum(d2, 0.0) / (a.shape[1] // 3))


def distances_to(states: np.ndarray, s: np.ndarray) -> np.ndarray:
    """[N] distance of each row of ``states`` [N, D] to one state ``s`` [D]."""
    return distances(states, s)[:, 0]


@dataclass(eq=False)
class Aligned:
    """Examples on the common phase grid, stacked (K examples; P = PHASE samples).

    rot [K, P, J, 4] signs aligned to example 0, height [K, P], ground [K, P, 2] and yaw [K, P]
    relative to each example's start root frame, length [K] frames, keys [K, nk] key times
    (frames from the start), start/end states [K, D].
    """

    rot: np.ndarray
    height: np.ndarray
    ground: np.ndarray
    yaw: np.ndarray
    length: np.ndarray
    keys: np.ndarray
    start_state: np.ndarray
    end_state: np.ndarray

    @property
    def n(self) -> int:
        return len(self.length)

    @classmethod
    def stack(cls, parts: list) -> Aligned:
        a = cls(*(np.concatenate([getattr(p, f.name) for p in parts]) for f in fields(cls)))
        dots = np.sum(a.rot * a.rot[:1], axis=-1, keepdims=True)
        a.rot = a.rot * np.where(dots < 0, -1.0, 1.0)
        return a

    def arrays(self, prefix: str) -> dict:
        return {prefix + f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_arrays(cls, z, prefix: str) -> Aligned:
        return cls(*(np.asarray(z[prefix + f.name]) for f in fields(cls)))


def key_phases(n_keys: int) -> np.ndarray:
    return np.linspace(0.0, 1.0, n_keys)


def align(src: Source, keys) -> Aligned:
    """One example: ``src`` between absolute key frames ``keys`` (first = start, last = end),
    resampled to the phase grid (an Aligned of one)."""
    keys = np.asarray(keys, dtype=float)
    t = np.interp(np.linspace(0.0, 1.0, PHASE), key_phases(len(keys)), keys)
    i0 = np.clip(np.floor(t).astype(np.int64), 0, src.n_frames - 1)
    i1 = np.minimum(i0 + 1, src.n_frames - 1)
    f = t - i0
    rot = quat.slerp(src.rot[i0], src.rot[i1], f[:, None])
    height = (1 - f) * src.height[i0] + f * src.height[i1]
    g = (1 - f)[:, None] * src.ground[i0] + f[:, None] * src.ground[i1]
    y = (1 - f) * src.yaw[i0] + f * src.yaw[i1]
    a, b = int(keys[0]), int(round(keys[-1]))
    end = min(b, src.n_frames - 1)
    return Aligned(rot[None], height[None], to_local(g - src.ground[a], src.yaw[a])[None], (y - src.yaw[a])[None],
                   np.array([keys[-1] - keys[0]]), (keys - keys[0])[None], src.states[a][None], src.states[end][None])


@dataclass(eq=False)
class Blend:
    """Blends on the phase grid for B weight vectors: rot [B, P, J, 4], height [B, P],
    ground [B, P, 2], yaw [B, P], length [B], keys [B, nk]."""

    rot: np.ndarray
    height: np.ndarray
    ground: np.ndarray
    yaw: np.ndarray
    length: np.ndarray
    keys: np.ndarray


def blend(ex: Aligned, w: np.ndarray) -> Blend:
    """Time-aligned blends of the examples ``ex`` with weights ``w`` [B, K] (rows sum to 1)."""
    w = np.atleast_2d(np.asarray(w, dtype=float))
    rot = quat.normalize(np.einsum("bk,kpjq->bpjq", w, ex.rot))
    return Blend(rot, w @ ex.height, np.einsum("bk,kpc->bpc", w, ex.ground), w @ ex.yaw, w @ ex.length, w @ ex.keys)


def joint_positions(skeleton, bl: Blend, joints=None) -> np.ndarray:
    """[B, P, J', 3] positions of ``joints`` (all by default) in each grid sample's root frame;
    only the joints on their chains to the root are composed (the ankles of a walk: 9 of 31)."""
    b, p, j = bl.rot.shape[:3]
    if joints is None:
        root = np.zeros((b * p, 3))
        root[:, 2] = bl.height.reshape(-1)
        pos, _ = forward_kinematics(skeleton, root, bl.rot.reshape(b * p, j, 4))
        return pos.reshape(b, p, j, 3)
    need = set()
    for k in joints:
        while k >= 0 and k not in need:
            need.add(int(k))
            k = int(skeleton.parents[k])
    rot, pos = {}, {}
    depth = skeleton.depth()
    for k in sorted(need, key=lambda q: depth[q]):
        parent = int(skeleton.parents[k])
        if parent < 0:
            rot[k] = bl.rot[:, :, k]
            pos[k] = np.zeros((b, p, 3))
            pos[k][..., 2] = bl.height
        else:
            rot[k] = quat.mul(rot[parent], bl.rot[:, :, k])
            pos[k] = pos[parent] + quat.rotate(rot[parent], np.broadcast_to(skeleton.offsets[k], (b, p, 3)))
    return np.stack([pos[int(k)] for k in joints], axis=2)


def to_frames(bl: Blend, n_keys: int):
    """One blend (B = 1) as played frames after its start pose: (rot [n, J, 4], height [n],
    motion [n, 3]) for frames 1..n (n = its rounded length): frame 0 is the pose the character
    is already in."""
    n = max(1, int(round(float(bl.length[0]))))
    t = np.arange(0, n + 1, dtype=float) * (bl.length[0] / n)
    phase = np.interp(t, bl.keys[0], key_phases(n_keys)) * (PHASE - 1)
    i0 = np.minimum(np.floor(phase).astype(np.int64), PHASE - 2)
    f = phase - i0
    rot = quat.slerp(bl.rot[0, i0], bl.rot[0, i0 + 1], f[:, None])
    height = (1 - f) * bl.height[0, i0] + f * bl.height[0, i0 + 1]
    g = (1 - f)[:, None] * bl.ground[0, i0] + f[:, None] * bl.ground[0, i0 + 1]
    y = (1 - f) * bl.yaw[0, i0] + f * bl.yaw[0, i0 + 1]
    motion = np.column_stack((to_local(np.diff(g, axis=0), y[:-1]), np.diff(y)))
    return rot[1:], height[1:], motion


__all__ = [
    "PHASE",
    "STATE_FRAMES",
    "Aligned",
    "Blend",
    "Source",
    "align",
    "blend",
    "distances",
    "distances_to",
    "joint_positions",
    "source_of",
    "states_of",
    "to_frames",
]
