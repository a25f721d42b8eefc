"""Turning any controller's decisions into one continuous pose stream (DESIGN.md 3.6).

Every frame of the source clips is stored in its own root frame (``FrameTable``): joint rotations
(the root's relative to the heading), the root height, and the root motion (dx, dy, dyaw) since
the previous frame.  A decision is a ``Step``: pieces of clips with blend weights (one piece for
fragments and graphs, a blend for planning groups), or frames the engine made itself (a motion
field).  Steps are laid end to end, so each new one starts from the current root frame
(alignment is automatic); where a step does not continue the piece before, it is inertialized
(``play.blend``: the pose and its velocity stay continuous, the difference decays over ``blend``
seconds), and the root motion is integrated into world positions and headings.  Optionally the root is warped to follow the control exactly, as
paper 000's game does.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .. import fmath, quat
from ..arrays import ranks
from ..clip import Clip
from ..errors import MotionctlError
from ..body.contacts import foot_points, point_contacts, rest_heights
from ..rootframe import displacement, heading, integrate, root_frame, to_local, to_world
from ..skeleton import Skeleton
from .blend import Inertia, inertialize
from .feet import HEEL_LIFT, FeetSettings, FeetState, Legs, body_scales, leg_globals, plant

BLEND = 0.3  # s: how long a switch's offset takes to decay (``play.blend``)


@dataclass(eq=False)
class FrameTable:
    """Per-frame root-frame data of a list of clips (all at one frame rate), concatenated.

    local_rot [N, J, 4] (root rotation relative to the heading), height [N], motion [N, 3]
    (dx right, dy forward, dyaw; frame 0 of a clip repeats frame 1's), ground [N, 2], yaw [N],
    offsets [N, J, 3] / end_offsets [N, E, 3] each frame's clip's bone offsets, first [K] the
    first row of each clip, length [K] its frame count, names [K] the clips' names, tags [K]
    their tags and ``clips`` the clips themselves; contact [N, 2] the feet's contacts
    (``body.contacts.foot_contacts``) and ``legs`` the skeleton's legs (``play.feet.Legs``), for
    foot locking; ankles [N, 2, 2] where each foot's ankle is over the ground (as ``ground``).
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
    contact: np.ndarray | None = None
    legs: Legs | None = None
    ankles: np.ndarray | None = None  # [N, 2, 2] each foot's ankle over the ground (world x, y, scaled as ground)

    def __post_init__(self):
        if self.contact is None:
            self.contact = np.zeros((len(self.height), 2), dtype=bool)

    @property
    def n_frames(self) -> int:
        return len(self.height)


def frame_table(clips, skeleton: Skeleton | None = None, heading_smooth: float = 0.2) -> FrameTable:
    """The FrameTable of ``clips`` (one frame rate); headings smoothed over ``heading_smooth`` s;
    each clip's root height and travel scaled to ``skeleton``'s legs (``body_scales``)."""
    if not clips:
        raise MotionctlError("no clips to play: select at least one")
    fps = clips[0].fps
    rots, heights, motions, grounds, yaws, offs, ends, contacts, feet_pts, ankles = [], [], [], [], [], [], [], [], [], []
    legs = Legs.of(skeleton or clips[0].skeleton)
    scales = body_scales(clips, skeleton or clips[0].skeleton, legs)
    for c, k in zip(clips, scales):
        if abs(c.fps - fps) > 1e-6:
            raise MotionctlError(f"clip {c.name!r} is at {c.fps} fps, the others at {fps}")
        ground, yaw = root_frame(c, heading_smooth)
        ground = ground * k  # exact for 1: one performer plays bit for bit as before
        rel = c.local_rot.copy()
        rel[:, 0] = quat.mul(heading(-yaw), c.local_rot[:, 0])
        m = np.zeros((c.n_frames, 3))
        if c.n_frames > 1:
            m[1:] = displacement(ground, yaw, np.arange(c.n_frames - 1), np.arange(1, c.n_frames))
            m[0] = m[1]
        rots.append(rel)
        heights.append(c.root_pos[:, 2] * k)
        motions.append(m)
        grounds.append(ground)
        yaws.append(yaw)
        offs.append(np.broadcast_to(c.skeleton.offsets, (c.n_frames,) + c.skeleton.offsets.shape))
        ends.append(np.broadcast_to(c.skeleton.end_offsets, (c.n_frames,) + c.skeleton.end_offsets.shape))
        pts = foot_points(c)
        contacts.append(point_contacts(pts, c.fps).any(axis=-1) if c.n_frames >= 2 else np.ones((c.n_frames, 2), bool))
        feet_pts.append(pts[:, :, :2])  # ankle and toe
        ankles.append(pts[:, :, 0, :2] * k)
    lengths = np.array([c.n_frames for c in clips])
    first = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    if legs is not None:  # how high over its toe an ankle stands with its heel down
        planted = rest_heights(np.concatenate(feet_pts))  # [2, 2]
        legs.heel_up = planted[:, 0] - planted[:, 1] + HEEL_LIFT
        legs.rest = planted
    return FrameTable(skeleton or clips[0].skeleton, fps, np.concatenate(rots), np.concatenate(heights),
                      np.concatenate(motions), np.concatenate(grounds), np.concatenate(yaws), np.concatenate(offs),
                      np.concatenate(ends), first, lengths, [c.name for c in clips], [set(c.tags) for c in clips],
                      list(clips), np.concatenate(contacts), legs, np.concatenate(ankles))


@dataclass(eq=False)
class Frames:
    """Frames an engine made itself (a motion field's integrated poses), in root-frame terms:
    local_rot [n, J, 4] (root relative to the heading), height [n], motion [n, 3]; contact [n, 2]
    the feet the capture had planted in them (None: none, and no foot locking)."""

    local_rot: np.ndarray
    height: np.ndarray
    motion: np.ndarray
    contact: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.height)


@dataclass(eq=False)
class Step:
    """What one decision plays: ``members`` [M, 4] rows (clip, start frame, frame count, weight)
    blended time-aligned (one row for a plain piece), or ``frames`` made by the engine; ``control``
    [4] the control it answers, for root warping; ``edit`` [3] an end correction (dx right, dy
    forward in the step's start frame, dyaw) spread over the step as paper 004's eq. 16 does (frame
    i moves by i/n of it; one that only turns, a facing warp, turns the path too); ``switch``: for
    engine frames, whether they jump to other data (motion matching's search) rather than continue
    (None: every frame is a new blend, as a motion field's): what the metrics count as switches;
    ``joins``: engine frames that start new motion rather than go on from the last frame played
    (active learning's blends), inertialized into as a jump between clips."""

    members: np.ndarray = field(default_factory=lambda: np.zeros((0, 4)))
    frames: Frames | None = None
    control: np.ndarray | None = None
    edit: np.ndarray | None = None
    switch: bool | None = None
    joins: bool = False

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
    clip and the frame after it, to tell a step that continues it; -1 for none); where the
    capture's own root motion would have put it (``data_ground``, ``data_yaw``; None: where it is)
    and the feet's locks (``feet``), for foot locking; the last frame and the offset a switch left
    (``inertia``, ``play.blend``)."""

    ground: np.ndarray
    yaw: float
    clip: int = -1
    end: int = -1
    data_ground: np.ndarray | None = None
    data_yaw: float | None = None
    feet: FeetState | None = None
    lag: np.ndarray | None = None
    phase: float = 0.0
    inertia: Inertia | None = None


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
    motion rescaled so its total displacement is kept, and a foot is planted where the members
    planting it weigh at least half.  Returns (rot [n, J, 4], height [n], motion [n, 3], contact
    [n, 2])."""
    members = [(int(c), int(s), int(n), float(w)) for c, s, n, w in members if w > 1e-9]
    total_w = sum(m[3] for m in members)
    n_out = max(2, int(round(sum(n * w for _, _, n, w in members) / total_w)))
    rot = np.zeros((n_out, table.local_rot.shape[1], 4))
    height = np.zeros(n_out)
    motion = np.zeros((n_out, 3))
    vote = np.zeros((n_out, 2))
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
        vote += (w / total_w) * np.where(f[:, None] < 0.5, table.contact[r0], table.contact[r1])
    return quat.normalize(rot), height, motion, vote >= 0.5


def synthesize(table: FrameTable, steps, state: SynthState | None = None, blend: float = BLEND, warp: float = 0.0,
               feet: FeetSettings | None = None):
    """Play ``steps`` one after another from ``state`` (default: the origin facing yaw 0).

    blend      seconds over which a switch's offset decays (``play.blend``); 0: none (cuts)
    warp       0: root motion from the data; 1: the root follows each step's control exactly
    feet       lock the feet the capture planted (``play.feet``), or None
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
        if s.frames is not None:
            f = s.frames
            parts[i] = (f.local_rot, f.height, f.motion, UNKNOWN if f.contact is None else f.contact)
        else:
            parts[i] = blend_frames(table, s.members)
        counts[i] = len(parts[i][1])
    total = int(counts.sum())
    step_of = np.repeat(np.arange(len(steps)), counts)
    within = ranks(counts)
    n_joints = table.local_rot.shape[1]
    rot, height, motion = np.empty((total, n_joints, 4)), np.empty(total), np.empty((total, 3))
    contact = np.empty((total, 2), dtype=bool)
    heavy = np.array([s.heaviest() if s.frames is None else (-1, -1, 0) for s in steps], dtype=np.int64).reshape(-1, 3)
    if single.any():
        sel = single[step_of]
        rows, _ = _rows(table, heavy[step_of[sel], 0], heavy[step_of[sel], 1] + within[sel])
        rot[sel], height[sel], motion[sel] = table.local_rot[rows], table.height[rows], table.motion[rows]
        contact[sel] = table.contact[rows]
    offsets = np.cumsum(counts) - counts
    for i, (r, h, m, c) in parts.items():
        rot[offsets[i]:offsets[i] + counts[i]] = r
        height[offsets[i]:offsets[i] + counts[i]] = h
        motion[offsets[i]:offsets[i] + counts[i]] = m
        if c is UNKNOWN:
            contact[offsets[i]:offsets[i] + counts[i]] = False
        else:
            contact[offsets[i]:offsets[i] + counts[i]] = c
    # Switches: clip pieces that do not continue the previous step's piece in its clip, and engine
    # frames that say they join new motion (others are their own to keep continuous: a motion
    # field blends every frame, matching inertializes its jumps)
    prev_clip = np.concatenate(([state.clip], heavy[:-1, 0]))
    prev_end = np.concatenate(([state.end], heavy[:-1, 1] + heavy[:-1, 2]))
    switch = (heavy[:, 0] >= 0) & ~(single & (prev_clip == heavy[:, 0]) & (prev_end == heavy[:, 1]))
    joins = np.array([s.frames is not None and s.joins for s in steps], dtype=bool)
    switch |= joins
    rates = np.ones(len(steps))
    phase = state.phase
    ctrl = np.array([s.control if s.control is not None else np.full(4, np.nan) for s in steps]).reshape(-1, 4)
    if warp > 0 and feet is not None:  # clip pieces and blends; engine frames keep their own timing
        rates = np.where([s.frames is None for s in steps], playback_rates(motion, ctrl, counts, table.fps, warp, feet),
                         1.0)
    if np.any(rates != 1.0) or phase != 0.0:
        after = _after(table, steps, single, heavy, rot, height, motion, contact, counts)
        rot, height, motion, contact, counts, phase = retime(rot, height, motion, contact, counts, rates, phase, after)
        step_of = np.repeat(np.arange(len(steps)), counts)
        within = ranks(counts)
    # engine frames without contacts (after any retiming: per step)
    known = np.repeat([s.frames is None or s.frames.contact is not None for s in steps], counts)
    inertia = inertialize(rot, height, motion, counts, switch, state.inertia, table.fps, blend, joins)
    data_motion, lag = motion, (np.zeros(3) if state.lag is None else state.lag)
    edits = np.array([s.edit if s.edit is not None else np.zeros(3) for s in steps], dtype=float).reshape(-1, 3)
    if warp > 0:
        motion, lag, edits[:, 2] = correct(motion, ctrl, counts, table.fps, warp, lag, feet, edits[:, 2])
    last = heavy[-1]
    end_clip, end_frame = (int(last[0]), int(last[1] + last[2])) if last[0] >= 0 else (-1, -1)
    ground, facing = _path(motion, state, (edits, step_of, within, counts) if np.any(edits) else None)
    d_ground0 = state.ground if state.data_ground is None else state.data_ground
    d_yaw0 = state.yaw if state.data_yaw is None else state.data_yaw
    data_ground, data_yaw = integrate(data_motion, d_ground0, d_yaw0)
    feet_state = state.feet
    if feet is not None and table.legs is not None:
        if not known.all():  # engine frames that do not say: the feet they show planted
            contact = _own_contacts(table, rot, height, data_ground, data_yaw, contact, known, state.feet)
        rot, feet_state = plant(table.legs, table.fps, rot, height, contact, data_ground, data_yaw, ground, facing,
                                state.feet, feet)
    new_state = SynthState(ground[-1].copy(), float(facing[-1]), end_clip, end_frame, data_ground[-1].copy(),
                           float(data_yaw[-1]), feet_state, lag, phase, inertia)
    root = np.column_stack((ground, height))
    rot[:, 0] = quat.mul(heading(facing), rot[:, 0])
    return root, quat.make_continuous(rot, axis=0), new_state, counts, facing


def playback_rates(motion: np.ndarray, controls: np.ndarray, counts: np.ndarray, fps: float, warp: float,
                   feet: FeetSettings) -> np.ndarray:
    """[S] how fast to play each step so the capture's ground speed meets its control's (paper
    000's game adjusts the playback rate so): the speeds' ratio, toward 1 by ``warp``, within
    ``1 / feet.max_rate`` and ``feet.max_rate``; 1 where either barely moves or there is no control.
    A faster step keeps its strides (and so its planted feet) and quickens their rhythm."""
    counts = np.asarray(counts, dtype=np.int64)
    starts = np.cumsum(counts) - counts
    n = np.maximum(counts, 1)
    travel = np.add.reduceat(motion[:, :2], np.minimum(starts, max(len(motion) - 1, 0)), axis=0) \
        if len(motion) else np.zeros((len(counts), 2))
    data = np.hypot(travel[:, 0], travel[:, 1]) * fps / n
    asked = np.hypot(controls[:, 0], controls[:, 1])
    ok = np.isfinite(asked) & (data > MIN_RATE_SPEED) & (np.nan_to_num(asked) > MIN_RATE_SPEED) & (counts > 0)
    ratio = np.where(ok, np.nan_to_num(asked) / np.maximum(data, 1e-9), 1.0)
    rate = np.clip(ratio, 1.0 / feet.max_rate, feet.max_rate)
    return np.where(ok, fmath.power(rate, warp), 1.0)


def _after(table, steps, single, heavy, rot, height, motion, contact, counts):
    """Each step's frame after its last: a single piece's continuation in its clip (the table row
    after it), else its own last frame repeated (standing still)."""
    ends = np.cumsum(counts) - 1
    last = np.maximum(ends, 0)
    a_rot, a_h, a_m, a_c = rot[last].copy(), height[last].copy(), np.zeros((len(counts), 3)), contact[last].copy()
    if single.any():
        idx = np.flatnonzero(single)
        rows, past = _rows(table, heavy[idx, 0], heavy[idx, 1] + heavy[idx, 2])
        a_rot[idx], a_h[idx], a_c[idx] = table.local_rot[rows], table.height[rows], table.contact[rows]
        a_m[idx] = np.where(past[:, None], 0.0, table.motion[rows])
    return a_rot, a_h, a_m, a_c


def retime(rot, height, motion, contact, counts, rates, phase: float, after):
    """Steps' frames played at ``rates`` [S] (>1: faster): each step's frames sampled every
    ``rate`` frames from ``phase`` (the position of the first, carried from the step before), the
    poses interpolated (slerp) between a frame and the next (``after`` [S]: the frame after each
    step's last), the root motion as the travel between the sampled positions.  Returns the new
    (rot, height, motion, contact, counts) and the phase the next step starts at.  Every step keeps
    at least one frame."""
    counts = np.asarray(counts, dtype=np.int64)
    n_steps = len(counts)
    out_counts = np.empty(n_steps, dtype=np.int64)
    starts_p = np.empty(n_steps)
    p = float(phase)
    for i in range(n_steps):  # one scalar update per step: where its first sample falls
        starts_p[i] = p
        m = max(1, int(np.ceil((counts[i] - p) / rates[i] - 1e-9)))
        out_counts[i] = m
        p = min(max(p + m * rates[i] - counts[i], 0.0), rates[i] - 1e-9)
    step_of = np.repeat(np.arange(n_steps), out_counts)
    k = ranks(out_counts)
    tau = starts_p[step_of] + k * rates[step_of]  # position within the step's frames
    n = counts[step_of]
    base = (np.cumsum(counts) - counts)[step_of]
    j = np.clip(np.floor(tau).astype(np.int64), 0, np.maximum(n - 1, 0))
    f = np.clip(tau - j, 0.0, 1.0)
    total = len(height)
    ext_rot = np.concatenate((rot, after[0]))
    ext_h = np.concatenate((height, after[1]))
    ext_m = np.concatenate((motion, after[2]))
    ext_c = np.concatenate((contact, after[3]))
    a = base + j
    b = np.where(j + 1 < n, a + 1, total + step_of)
    new_rot = quat.slerp(ext_rot[a], ext_rot[b], f[:, None])
    new_h = (1 - f) * ext_h[a] + f * ext_h[b]
    new_c = np.where(f[:, None] < 0.5, ext_c[a], ext_c[b])
    # travel between consecutive samples: the cumulative motion within each step, interpolated
    cum = np.cumsum(motion, axis=0)
    seg0 = np.concatenate((np.zeros((1, 3)), cum))[np.cumsum(counts) - counts]  # cum before each step
    def travelled(x):  # displacement from the frame before the step to position x
        jj = np.floor(x).astype(np.int64)
        jj = np.clip(jj, -1, np.maximum(n - 1, 0))
        within_cum = np.where((jj >= 0)[:, None], cum[np.maximum(base + jj, 0)] - seg0[step_of], 0.0)
        nxt = np.where(jj + 1 < n, base + jj + 1, total + step_of)
        return within_cum + (x - jj)[:, None] * ext_m[nxt]
    new_m = travelled(tau) - travelled(tau - rates[step_of])
    return new_rot, new_h, new_m, new_c, out_counts, float(p)


def correct(motion: np.ndarray, controls: np.ndarray, counts: np.ndarray, fps: float, warp: float, lag: np.ndarray,
            feet: FeetSettings | None, turns: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Root motion [N, 3] of steps of ``counts`` frames moved toward their ``controls`` [S, 4]
    (rows of nan: none; a nan turn: the turning left to the engine), the lag left [3] (dx, dy in
    the last frame's root frame, dyaw), and the engines' facing warps ``turns`` [S] (``Step.edit``'s
    yaw) left to add after: where the root follows a control's turn a warp would turn the character
    twice, so only what the planted feet cannot give of the turn is taken from it (without feet:
    ``1 - warp`` of it is left).

    Without ``feet`` every frame moves as its control says (``warp``: the share of the control's
    motion, the rest the capture's).  With ``feet``, each step's correction (the lag carried in,
    plus what the control asks over the step minus what the capture does; ``warp`` of it) is
    spread evenly over its frames, so the capture's own rhythm within a step stays, and limited to
    what planted feet can take (``FeetSettings.max_speed``, ``max_turn``: the leg of a locked foot
    bends or stretches to absorb it), the rest carried as lag to later steps (at most ``max_lag``,
    ``max_lag_turn``).  One short loop over the steps: a live session synthesizes one at a time."""
    motion = motion.copy()
    lag = np.asarray(lag, dtype=float).copy()
    dt = 1.0 / fps
    turns, forced = np.zeros(len(counts)) if turns is None else np.array(turns, dtype=float), np.isfinite(controls[:, 2])
    if feet is None:  # every frame exactly as the control says (the feet slide where they must)
        has = np.repeat(np.isfinite(controls[:, 0]), counts)
        c = np.repeat(controls, counts, axis=0)[has]
        c[:, 2] = np.where(np.isfinite(c[:, 2]), c[:, 2], motion[has, 2] / dt)
        motion[has] = (1 - warp) * motion[has] + warp * c[:, :3] * dt
        return motion, np.zeros(3), np.where(forced, (1 - warp) * turns, turns)
    start = 0
    for i, n in enumerate(np.asarray(counts, dtype=np.int64)):
        a, start = start, start + n
        c = controls[i]
        seg = motion[a:start]
        if n == 0 or not np.isfinite(c[0]):
            lag[:2] = to_local(lag[:2], seg[:, 2].sum()) if n else lag[:2]
            continue
        need = lag + n * dt * np.nan_to_num(c[:3]) - seg.sum(axis=0)
        if not np.isfinite(c[2]):  # a turn left to the engine (a heading to face): no yaw correction
            need[2] = 0.0
        give = warp * need
        speed = np.hypot(*seg[:, :2].sum(axis=0)) / (n * dt)
        limit = (feet.max_speed + feet.speed_share * speed) * n * dt
        size = np.hypot(*give[:2])
        if size > limit:
            give[:2] *= limit / size
        give[2] = np.clip(give[2], -feet.max_turn * n * dt, feet.max_turn * n * dt)
        if forced[i]:  # the engine's warp gives what the feet could not, never more
            short = warp * need[2] - give[2]
            give[2] += float(np.clip(turns[i], min(short, 0.0), max(short, 0.0)))
            turns[i] = 0.0
        seg += give / n
        lag = need - give
        lag[:2] = to_local(lag[:2], seg[:, 2].sum())
        size = np.hypot(*lag[:2])
        if size > feet.max_lag:
            lag[:2] *= feet.max_lag / size
        lag[2] = np.clip(lag[2], -feet.max_lag_turn, feet.max_lag_turn)
    return motion, lag, turns


UNKNOWN = object()  # engine frames without contacts


def _own_contacts(table, rot, height, data_ground, data_yaw, contact, known, feet_state):
    """``contact`` with the frames not ``known`` filled by the contact detector run on the frames
    themselves (their ankles and toes, as their own root motion moves them; the detector's
    hysteresis starts from the last frame's contacts)."""
    pos, _, toe = leg_globals(table.legs, rot, height)
    pts = np.stack((pos[:, :, -1], toe), axis=2)  # [n, 2, 2, 3]
    pts[..., :2] = data_ground[:, None, None] + to_world(pts[..., :2], data_yaw[:, None, None])
    if len(pts) < 2:
        out = np.broadcast_to(feet_state.contact if feet_state is not None else np.zeros(2, bool), (len(pts), 2))
    else:
        out = point_contacts(pts, table.fps, rest=table.legs.rest).any(axis=-1)
    return np.where(known[:, None], contact, out)


MIN_RATE_SPEED = 0.2  # m/s: slower than this, a step's speed is not matched by its playback rate


def _path(motion, state: SynthState, edits=None) -> tuple[np.ndarray, np.ndarray]:
    """(ground [N, 2], facing [N]): root motion integrated into world ground positions and
    headings.  ``edits`` (per-step end corrections, the frame's step, index within it, steps'
    lengths) are spread as in ``Step``: each step's own correction added in proportion along its
    natural path, so it ends where the edit says; one that only turns (a facing warp) turns the way
    the root goes as it turns the facing (else a 137-degree warp glided the hips backwards)."""
    if edits is None:
        return integrate(motion, state.ground, state.yaw)
    e, step_of, within, counts = edits
    before = np.cumsum(e[:, 2]) - e[:, 2]  # yaw corrections of the earlier steps
    yaw = state.yaw + np.cumsum(motion[:, 2]) + before[step_of]
    facing = yaw + (within + 1) / counts[step_of] * e[step_of, 2]
    turning = ~np.any(e[:, :2], axis=1)[step_of] | (within == counts[step_of] - 1)  # a last frame: its whole edit
    yaw_before = np.concatenate(([state.yaw], np.where(turning, facing, yaw)[:-1]))
    start_yaw = yaw_before[np.minimum(np.cumsum(counts) - counts, len(yaw) - 1)]
    ramp = to_world(e[:, :2] / np.maximum(counts, 1)[:, None], start_yaw)[step_of]
    ground = state.ground + np.cumsum(to_world(motion[:, :2], yaw_before) + ramp, axis=0)
    return ground, facing


def to_clip(table: FrameTable, root_pos: np.ndarray, local_rot: np.ndarray, name: str = "synth", tags=()) -> Clip:
    """Synthesized root positions [N, 3] and rotations [N, J, 4] as a Clip on the table's skeleton."""
    return Clip(name, table.skeleton, table.fps, root_pos, local_rot, tags=set(tags) | {"synthesized"})


def pieces_to_steps(pieces, controls=None) -> list:
    """Steps of plain pieces [K, 3] (clip, start, count), with a control [K, 4] each if given."""
    pieces = np.asarray(pieces, dtype=np.int64).reshape(-1, 3)
    ctrl = [None] * len(pieces) if controls is None else np.asarray(controls, dtype=float)
    return [Step.piece(int(c), int(s), int(n), ctrl[k]) for k, (c, s, n) in enumerate(pieces)]


def synthesize_clip(table: FrameTable, pieces, blend: float = BLEND, controls=None, warp: float = 0.0,
                    name: str = "synth", start_yaw: float = 0.0, feet: FeetSettings | None = None) -> Clip:
    """A whole sequence of pieces (clip, start, count) as one Clip from the origin facing ``start_yaw``."""
    root, rot, _, _, _ = synthesize(table, pieces_to_steps(pieces, controls), SynthState(np.zeros(2), start_yaw),
                                    blend, warp, feet)
    return to_clip(table, root, rot, name)


__all__ = ["FrameTable", "Frames", "Step", "SynthState", "blend_frames", "correct", "playback_rates", "retime", "frame_table", "pieces_to_steps",
           "synthesize", "synthesize_clip", "to_clip"]
