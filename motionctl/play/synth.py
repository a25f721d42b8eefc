"""Turning any controller's decisions into one continuous pose stream (DESIGN.md 3.6).

Every frame of the source clips is stored in its own root frame (``FrameTable``): joint rotations
(the root's relative to the heading), the root height, and the root motion (dx, dy, dyaw) since
the previous frame.  A decision is a ``Step``: pieces of clips with blend weights (one piece for
fragments and graphs, a blend for planning groups), or frames the engine made itself (a motion
field).  Steps are laid end to end, so each new one starts from the current root frame
(alignment is automatic); the first frames of a new piece are crossfaded with the frames that
would have followed the previous piece in its own clip, and the root motion is integrated into
world positions and headings.  Optionally the root is warped to follow the control exactly, as
paper 000's game does.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .. import quat
from ..arrays import ranks
from ..clip import Clip
from ..errors import MotionctlError
from ..rootframe import displacement, heading, integrate, root_frame, to_world
from ..skeleton import Skeleton


@dataclass(eq=False)
class FrameTable:
    """Per-frame root-frame data of a list of clips (all at one frame rate), concatenated.

    local_rot [N, J, 4] (root rotation relative to the heading), height [N], motion [N, 3]
    (dx right, dy forward, dyaw; frame 0 of a clip repeats frame 1's), ground [N, 2], yaw [N],
    offsets [N, J, 3] / end_offsets [N, E, 3] each frame's clip's bone offsets, first [K] the
    first row of each clip, length [K] its frame count, names [K] the clips' names, tags [K]
    their tags and ``clips`` the clips themselves.
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
    tags: list = field(default_factory=list)
    clips: list = field(default_factory=list)  # the clips it was built from (what a model binds to)

    @property
    def n_frames(self) -> int:
        return len(self.height)


def frame_table(clips, skeleton: Skeleton | None = None, heading_smooth: float = 0.2) -> FrameTable:
    """The FrameTable of ``clips`` (one frame rate); headings smoothed over ``heading_smooth`` s."""
    if not clips:
        raise MotionctlError("no clips to play: select at least one")
    fps = clips[0].fps
    rots, heights, motions, grounds, yaws, offs, ends = [], [], [], [], [], [], []
    for c in clips:
        if abs(c.fps - fps) > 1e-6:
            raise MotionctlError(f"clip {c.name!r} is at {c.fps} fps, the others at {fps}")
        ground, yaw = root_frame(c, heading_smooth)
        rel = c.local_rot.copy()
        rel[:, 0] = quat.mul(heading(-yaw), c.local_rot[:, 0])
        m = np.zeros((c.n_frames, 3))
        if c.n_frames > 1:
            m[1:] = displacement(ground, yaw, np.arange(c.n_frames - 1), np.arange(1, c.n_frames))
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
                      np.concatenate(ends), first, lengths, [c.name for c in clips], [set(c.tags) for c in clips],
                      list(clips))


@dataclass(eq=False)
class Frames:
    """Frames an engine made itself (a motion field's integrated poses), in root-frame terms:
    local_rot [n, J, 4] (root relative to the heading), height [n], motion [n, 3]."""

    local_rot: np.ndarray
    height: np.ndarray
    motion: np.ndarray

    def __len__(self) -> int:
        return len(self.height)


@dataclass(eq=False)
class Step:
    """What one decision plays: ``members`` [M, 4] rows (clip, start frame, frame count, weight)
    blended time-aligned (one row for a plain piece), or ``frames`` made by the engine; ``control``
    [4] the control it answers, for root warping; ``edit`` [3] an end correction (dx right, dy
    forward in the step's start frame, dyaw) spread over the step as paper 004's editing does
    (eq. 16: frame i moves by i/n of it); ``switch``: for engine frames, whether they jump to other
    data (motion matching's search) rather than continue (None: every frame is a new blend, as a
    motion field's): what the metrics count as switches."""

    members: np.ndarray = field(default_factory=lambda: np.zeros((0, 4)))
    frames: Frames | None = None
    control: np.ndarray | None = None
    edit: np.ndarray | None = None
    switch: bool | None = None

    def __post_init__(self):
        self.members = np.asarray(self.members, dtype=float).reshape(-1, 4)
        if self.frames is None and len(self.members) == 0:
            raise ValueError("a step plays clip pieces or frames")

    @classmethod
    def piece(cls, clip: int, start: int, count: int, control=None) -> "Step":
        """One piece of a clip at full weight."""
        return cls(np.array([[clip, start, count, 1.0]]), control=control)

    @property
    def single(self) -> bool:
        """One piece at full weight (played frame for frame, seamless with its own continuation)."""
        return self.frames is None and int(np.count_nonzero(self.members[:, 3] > 1e-9)) == 1

    def heaviest(self) -> tuple[int, int, int]:
        """(clip, start, count) of the heaviest member: whose continuation the next step fades from."""
        row = self.members[int(np.argmax(self.members[:, 3]))]
        return int(row[0]), int(row[1]), int(row[2])


@dataclass
class SynthState:
    """Where the stream is: world ground position [2], heading, and the piece last played (its
    clip and the frame after it, for crossfades; -1 for none)."""

    ground: np.ndarray
    yaw: float
    clip: int = -1
    end: int = -1


def _rows(table: FrameTable, clip: np.ndarray, frame: np.ndarray):
    """Rows of the table for (clip, frame) pairs; frames past the clip's end repeat its last frame
    (their root motion counts as standing still: ``past``)."""
    last = table.length[clip] - 1
    past = frame > last
    return table.first[clip] + np.minimum(frame, last), past


def blend_frames(table: FrameTable, members) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Time-aligned blend of clip pieces [(clip, start, count, weight), ...]: each member is
    time-warped to the blend's length (the weighted mean of the lengths), then rotations are
    averaged (sign-aligned, normalised), heights and root motion interpolated with each member's
    motion rescaled so its total displacement is kept.  Returns (rot [n, J, 4], height [n],
    motion [n, 3])."""
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


def synthesize(table: FrameTable, steps, state: SynthState | None = None, crossfade: int = 3, warp: float = 0.0):
    """Play ``steps`` one after another from ``state`` (default: the origin facing yaw 0).

    crossfade  frames over which a new piece fades in from the previous piece's continuation
    warp       0: root motion from the data; 1: the root follows each step's control exactly
    Returns (root_pos [N, 3], local_rot [N, J, 4], state after the last frame, frames per step [S],
    heading [N] after each frame).
    Single pieces are gathered for all steps at once; blends and engine frames one step each.
    """
    steps = list(steps)
    state = state or SynthState(np.zeros(2), 0.0)
    single = np.array([s.single for s in steps], dtype=bool)
    counts = np.array([int(s.heaviest()[2]) if s.single else 0 for s in steps], dtype=np.int64)
    parts = {}
    for i in np.flatnonzero(~single):  # blends and engine frames: their own lengths
        s = steps[i]
        parts[i] = (s.frames.local_rot, s.frames.height, s.frames.motion) if s.frames is not None else \
            blend_frames(table, s.members)
        counts[i] = len(parts[i][1])
    total = int(counts.sum())
    step_of = np.repeat(np.arange(len(steps)), counts)
    within = ranks(counts)
    n_joints = table.local_rot.shape[1]
    rot, height, motion = np.empty((total, n_joints, 4)), np.empty(total), np.empty((total, 3))
    heavy = np.array([s.heaviest() if s.frames is None else (-1, -1, 0) for s in steps], dtype=np.int64).reshape(-1, 3)
    if single.any():
        sel = single[step_of]
        rows, _ = _rows(table, heavy[step_of[sel], 0], heavy[step_of[sel], 1] + within[sel])
        rot[sel], height[sel], motion[sel] = table.local_rot[rows], table.height[rows], table.motion[rows]
    offsets = np.cumsum(counts) - counts
    for i, (r, h, m) in parts.items():
        rot[offsets[i]:offsets[i] + counts[i]] = r
        height[offsets[i]:offsets[i] + counts[i]] = h
        motion[offsets[i]:offsets[i] + counts[i]] = m
    # Continuations: each step fades in from the frames after the previous step's heaviest piece.
    prev_clip = np.concatenate(([state.clip], heavy[:-1, 0]))
    prev_end = np.concatenate(([state.end], heavy[:-1, 1] + heavy[:-1, 2]))
    seamless = single & (prev_clip == heavy[:, 0]) & (prev_end == heavy[:, 1])
    _crossfade(table, rot, height, motion, within, prev_clip[step_of], prev_end[step_of], seamless[step_of], crossfade)
    if warp > 0:
        ctrl = np.array([s.control if s.control is not None else np.full(4, np.nan) for s in steps]).reshape(-1, 4)
        has = np.isfinite(ctrl[:, 0])[step_of]
        c = ctrl[step_of[has]]
        dt = 1.0 / table.fps
        motion[has] = (1 - warp) * motion[has] + warp * np.column_stack((c[:, 0] * dt, c[:, 1] * dt, c[:, 2] * dt))
    last = heavy[-1]
    end_clip, end_frame = (int(last[0]), int(last[1] + last[2])) if last[0] >= 0 else (-1, -1)
    edits = np.array([s.edit if s.edit is not None else np.zeros(3) for s in steps], dtype=float).reshape(-1, 3)
    root, rot, new_state, facing = _integrate(rot, height, motion, state, end_clip, end_frame,
                                              (edits, step_of, within, counts) if np.any(edits) else None)
    return root, rot, new_state, counts, facing


def _crossfade(table, rot, height, motion, within, prev_clip, prev_end, seamless, crossfade) -> None:
    """Fade the first ``crossfade`` frames of each step in from the frames that would have
    followed the previous step's piece in its own clip (in place)."""
    if crossfade <= 0:
        return
    fade = (within < crossfade) & ~seamless & (prev_clip >= 0)
    if not fade.any():
        return
    prow, past = _rows(table, prev_clip[fade], prev_end[fade] + within[fade])
    w_new = (within[fade] + 1) / (crossfade + 1)
    rot[fade] = quat.slerp(table.local_rot[prow], rot[fade], w_new[:, None])
    height[fade] = (1 - w_new) * table.height[prow] + w_new * height[fade]
    old_motion = np.where(past[:, None], 0.0, table.motion[prow])
    motion[fade] = (1 - w_new)[:, None] * old_motion + w_new[:, None] * motion[fade]


def _integrate(rot, height, motion, state: SynthState, last_clip: int, last_end: int, edits=None):
    """Integrate root motion into world ground positions and headings; the root's rotation is
    turned from its heading-relative form into the world.  ``edits`` (per-step end corrections,
    the frame's step, index within it, steps' lengths) are spread as in ``Step``: the natural
    path keeps its shape, turned by the earlier steps' corrections, while each step's own
    correction is added in proportion along it."""
    if edits is None:
        ground, yaw = integrate(motion, state.ground, state.yaw)
        facing = yaw
    else:
        e, step_of, within, counts = edits
        before = np.cumsum(e[:, 2]) - e[:, 2]  # yaw corrections of the earlier steps
        yaw = state.yaw + np.cumsum(motion[:, 2]) + before[step_of]
        yaw_before = np.concatenate(([state.yaw], yaw[:-1] + (before[step_of[1:]] - before[step_of[:-1]])))
        starts = np.cumsum(counts) - counts
        start_yaw = yaw_before[np.minimum(starts, len(yaw) - 1)]
        ramp = to_world(e[:, :2] / np.maximum(counts, 1)[:, None], start_yaw)[step_of]
        ground = state.ground + np.cumsum(to_world(motion[:, :2], yaw_before) + ramp, axis=0)
        facing = yaw + (within + 1) / counts[step_of] * e[step_of, 2]
        yaw = facing
    root_pos = np.column_stack((ground, height))
    rot = rot.copy()
    rot[:, 0] = quat.mul(heading(facing), rot[:, 0])
    rot = quat.make_continuous(rot, axis=0)
    return root_pos, rot, SynthState(ground[-1].copy(), float(yaw[-1]), last_clip, last_end), facing


def to_clip(table: FrameTable, root_pos: np.ndarray, local_rot: np.ndarray, name: str = "synth", tags=()) -> Clip:
    """Synthesized root positions [N, 3] and rotations [N, J, 4] as a Clip on the table's skeleton."""
    return Clip(name, table.skeleton, table.fps, root_pos, local_rot, tags=set(tags) | {"synthesized"})


def pieces_to_steps(pieces, controls=None) -> list:
    """Steps of plain pieces [K, 3] (clip, start, count), with a control [K, 4] each if given."""
    pieces = np.asarray(pieces, dtype=np.int64).reshape(-1, 3)
    ctrl = [None] * len(pieces) if controls is None else np.asarray(controls, dtype=float)
    return [Step.piece(int(c), int(s), int(n), ctrl[k]) for k, (c, s, n) in enumerate(pieces)]


def synthesize_clip(table: FrameTable, pieces, crossfade: int = 3, controls=None, warp: float = 0.0,
                    name: str = "synth", start_yaw: float = 0.0) -> Clip:
    """A whole sequence of pieces (clip, start, count) as one Clip from the origin facing ``start_yaw``."""
    root, rot, _, _, _ = synthesize(table, pieces_to_steps(pieces, controls), SynthState(np.zeros(2), start_yaw),
                                    crossfade, warp)
    return to_clip(table, root, rot, name)


__all__ = ["FrameTable", "Frames", "Step", "SynthState", "blend_frames", "frame_table", "pieces_to_steps",
           "synthesize", "synthesize_clip", "to_clip"]
