"""Turning any controller's decisions into one continuous pose stream (DESIGN.md 3.6).

Every frame of the source clips is stored in its own root frame: joint rotations (the root's
relative to the heading), the root height, and the root motion (dx, dy, dyaw) since the previous
frame.  A decision plays a piece of a clip; pieces are laid end to end, so each new piece starts
from the current root frame (alignment is automatic), the first frames of a new piece are
crossfaded with the frames that would have followed the previous piece in its own clip, and the
root motion is integrated into world positions and headings.  Optionally the root is warped to
follow the control signal exactly, as the paper's game does.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import quat
from .motion import Clip, root_frame
from .skeleton import Skeleton


@dataclass(eq=False)
class FrameTable:
    """Per-frame root-frame data of a list of clips (all at one frame rate), concatenated.

    local_rot [N, J, 4] (root rotation relative to the heading), height [N], motion [N, 3]
    (dx right, dy forward, dyaw; frame 0 of a clip repeats frame 1's), ground [N, 2], yaw [N],
    offsets [N, J, 3] / end_offsets [N, E, 3] each frame's clip's bone offsets, first [K] the
    first row of each clip, length [K] its frame count.
    """

    skeleton: Skeleton
    fps: float
    local_rot: np.ndarray
    height: np.ndarray
    motion: np.ndarray
    ground: np.ndarray
    yaw: np.ndarray
    offsets: np.ndarray
    end_offsets: np.ndarray
    first: np.ndarray
    length: np.ndarray
    names: list


def frame_table(clips, skeleton: Skeleton | None = None, heading_smooth: float = 0.2) -> FrameTable:
    if not clips:
        raise ValueError("no clips")
    fps = clips[0].fps
    rots, heights, motions, grounds, yaws, offs, ends = [], [], [], [], [], [], []
    for c in clips:
        if abs(c.fps - fps) > 1e-6:
            raise ValueError(f"clip {c.name!r} is at {c.fps} fps, the others at {fps}")
        ground, yaw = root_frame(c, heading_smooth)
        rel = c.local_rot.copy()
        rel[:, 0] = quat.mul(quat.about_axis(2, -yaw), c.local_rot[:, 0])
        m = np.zeros((c.n_frames, 3))
        if c.n_frames > 1:
            d = ground[1:] - ground[:-1]
            cs, sn = np.cos(yaw[:-1]), np.sin(yaw[:-1])
            m[1:, 0] = cs * d[:, 0] + sn * d[:, 1]
            m[1:, 1] = -sn * d[:, 0] + cs * d[:, 1]
            m[1:, 2] = np.diff(yaw)
            m[0] = m[1]
        rots.append(rel)
        heights.append(c.root_pos[:, 2])
        motions.append(m)
        grounds.append(ground)
        yaws.append(yaw)
        offs.append(np.broadcast_to(c.skeleton.offsets, (c.n_frames,) + c.skeleton.offsets.shape))
        ends.append(np.broadcast_to(c.skeleton.end_offsets, (c.n_frames,) + c.skeleton.end_offsets.shape))
    lengths = np.array([c.n_frames for c in clips])
    first = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    return FrameTable(skeleton or clips[0].skeleton, fps, np.concatenate(rots), np.concatenate(heights),
                      np.concatenate(motions), np.concatenate(grounds), np.concatenate(yaws), np.concatenate(offs),
                      np.concatenate(ends), first, lengths, [c.name for c in clips])


@dataclass
class SynthState:
    """Where the stream is: world ground position, heading, and the piece last played."""

    ground: np.ndarray
    yaw: float
    clip: int = -1
    end: int = -1  # frame after the last one played in that clip


def _blend_rows(table: FrameTable, clip: np.ndarray, frame: np.ndarray):
    """Rows of the table for (clip, frame) pairs; frames past the clip's end repeat its last frame
    with the root standing still."""
    last = table.length[clip] - 1
    past = frame > last
    rows = table.first[clip] + np.minimum(frame, last)
    return rows, past


def synthesize_pieces(table: FrameTable, pieces, state: SynthState | None = None, crossfade: int = 3,
                      controls: np.ndarray | None = None, warp: float = 0.0):
    """Play pieces (clip index, start frame, frame count) one after another.

    crossfade  frames over which a new piece fades in from the previous piece's continuation
    controls   [P, 4] control signal per piece (vx, vy, turn, airborne) for root warping
    warp       0: root motion from the data; 1: root follows the control exactly
    Returns (root_pos [N, 3], local_rot [N, J, 4], state after the last frame).
    """
    pieces = np.asarray(pieces, dtype=np.int64).reshape(-1, 3)
    state = state or SynthState(np.zeros(2), 0.0)
    counts = pieces[:, 2]
    total = int(counts.sum())
    piece_of = np.repeat(np.arange(len(pieces)), counts)
    within = np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts)
    rows, _ = _blend_rows(table, pieces[piece_of, 0], pieces[piece_of, 1] + within)
    rot = table.local_rot[rows].copy()
    height = table.height[rows].copy()
    motion = table.motion[rows].copy()
    prev_clip = np.concatenate(([state.clip], pieces[:-1, 0]))
    prev_end = np.concatenate(([state.end], pieces[:-1, 1] + pieces[:-1, 2]))
    seamless = (prev_clip == pieces[:, 0]) & (prev_end == pieces[:, 1])
    _crossfade(table, rot, height, motion, within, prev_clip[piece_of], prev_end[piece_of], seamless[piece_of], crossfade)
    if controls is not None and warp > 0:
        c = np.asarray(controls, dtype=float)[piece_of]
        dt = 1.0 / table.fps
        motion = (1 - warp) * motion + warp * np.column_stack((c[:, 0] * dt, c[:, 1] * dt, c[:, 2] * dt))
    last = pieces[-1]
    return _integrate(rot, height, motion, state, int(last[0]), int(last[1] + last[2]))


def _crossfade(table, rot, height, motion, within, prev_clip, prev_end, seamless, crossfade) -> None:
    """Fade the first ``crossfade`` frames of each piece in from the frames that would have
    followed the previous piece in its own clip (in place)."""
    if crossfade <= 0:
        return
    fade = (within < crossfade) & ~seamless & (prev_clip >= 0)
    if not fade.any():
        return
    prow, past = _blend_rows(table, prev_clip[fade], prev_end[fade] + within[fade])
    w_new = (within[fade] + 1) / (crossfade + 1)
    rot[fade] = quat.slerp(table.local_rot[prow], rot[fade], w_new[:, None])
    height[fade] = (1 - w_new) * table.height[prow] + w_new * height[fade]
    old_motion = np.where(past[:, None], 0.0, table.motion[prow])
    motion[fade] = (1 - w_new)[:, None] * old_motion + w_new[:, None] * motion[fade]


def _integrate(rot, height, motion, state: SynthState, last_clip: int, last_end: int):
    """Integrate root motion: heading by a cumulative sum, then steps rotated into the world."""
    yaw = state.yaw + np.cumsum(motion[:, 2])
    yaw_before = np.concatenate(([state.yaw], yaw[:-1]))
    cs, sn = np.cos(yaw_before), np.sin(yaw_before)
    step = np.column_stack((cs * motion[:, 0] - sn * motion[:, 1], sn * motion[:, 0] + cs * motion[:, 1]))
    ground = state.ground + np.cumsum(step, axis=0)
    root_pos = np.column_stack((ground, height))
    rot = rot.copy()
    rot[:, 0] = quat.mul(quat.about_axis(2, yaw), rot[:, 0])
    rot = quat.make_continuous(rot, axis=0)
    return root_pos, rot, SynthState(ground[-1].copy(), float(yaw[-1]), last_clip, last_end)


def blend_frames(table: FrameTable, members) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Time-aligned blend of clip pieces [(clip, start, count, weight), ...] (weights sum to 1):
    each member is time-warped to the blend's length (the weighted mean of the lengths), then
    rotations are averaged (sign-aligned, normalised), heights and root motion interpolated with
    each member's motion rescaled so its total displacement is kept.  Returns (rot, height, motion)."""
    members = [(int(c), int(s), int(n), float(w)) for c, s, n, w in members if w > 1e-9]
    total_w = sum(m[3] for m in members)
    n_out = max(2, int(round(sum(n * w for _, _, n, w in members) / total_w)))
    rot = np.zeros((n_out, table.local_rot.shape[1], 4))
    height = np.zeros(n_out)
    motion = np.zeros((n_out, 3))
    ref = None
    for c, s, n, w in members:
        t = np.linspace(0.0, n - 1, n_out)
        i0 = np.floor(t).astype(np.int64)
        i1 = np.minimum(i0 + 1, n - 1)
        f = t - i0
        r0, r1 = table.first[c] + s + i0, table.first[c] + s + i1
        q = quat.slerp(table.local_rot[r0], table.local_rot[r1], f[:, None])
        if ref is None:
            ref = q
        q = q * np.where(np.sum(q * ref, axis=-1, keepdims=True) < 0, -1.0, 1.0)
        rot += (w / total_w) * q
        height += (w / total_w) * ((1 - f) * table.height[r0] + f * table.height[r1])
        motion += (w / total_w) * table.motion[r0] * (n / n_out)
    return quat.normalize(rot), height, motion


def synthesize_blends(table: FrameTable, blends, state: SynthState | None = None, crossfade: int = 3):
    """Play blended pieces one after another (each a list of (clip, start, count, weight));
    the continuation used for crossfades is the heaviest member's.  Returns like
    ``synthesize_pieces``."""
    state = state or SynthState(np.zeros(2), 0.0)
    rots, heights, motions, within, prev_clip, prev_end, seamless = [], [], [], [], [], [], []
    pc, pe = state.clip, state.end
    for blend in blends:
        rot, height, motion = blend_frames(table, blend)
        heavy = max(blend, key=lambda m: m[3])
        n = len(height)
        rots.append(rot)
        heights.append(height)
        motions.append(motion)
        within.append(np.arange(n))
        single = sum(1 for m in blend if m[3] > 1e-9) == 1
        seamless.append(np.full(n, single and pc == heavy[0] and pe == heavy[1]))
        prev_clip.append(np.full(n, pc))
        prev_end.append(np.full(n, pe))
        pc, pe = int(heavy[0]), int(heavy[1] + heavy[2])
    rot, height, motion = np.concatenate(rots), np.concatenate(heights), np.concatenate(motions)
    _crossfade(table, rot, height, motion, np.concatenate(within), np.concatenate(prev_clip), np.concatenate(prev_end),
               np.concatenate(seamless), crossfade)
    return _integrate(rot, height, motion, state, pc, pe)


def to_clip(table: FrameTable, root_pos: np.ndarray, local_rot: np.ndarray, name: str = "synth", tags=()) -> Clip:
    return Clip(name, table.skeleton, table.fps, root_pos, local_rot, tags=set(tags) | {"synthesized"})


def synthesize_clip(table: FrameTable, pieces, crossfade: int = 3, controls=None, warp: float = 0.0,
                    name: str = "synth", start_yaw: float = 0.0) -> Clip:
    """A whole sequence of pieces as one Clip starting at the origin facing ``start_yaw``."""
    root, rot, _ = synthesize_pieces(table, pieces, SynthState(np.zeros(2), start_yaw), crossfade, controls, warp)
    return to_clip(table, root, rot, name)


class Synthesizer:
    """Streaming synthesis for live preview: ``play`` one piece, get its world frames."""

    def __init__(self, table: FrameTable, crossfade: int = 3, warp: float = 0.0, start=(0.0, 0.0), start_yaw=0.0):
        self.table = table
        self.crossfade = crossfade
        self.warp = warp
        self.state = SynthState(np.asarray(start, dtype=float), float(start_yaw))

    def play(self, clip: int, start: int, count: int, control=None):
        controls = None if control is None else np.asarray(control, dtype=float)[None]
        root, rot, self.state = synthesize_pieces(self.table, [(clip, start, count)], self.state, self.crossfade,
                                                  controls, self.warp)
        return root, rot
