"""Clip preparation for planning controllers (paper 001, section 4).

Clips are cut into steps at foot strikes (or at given segments); action clips (pick, reach,
punch...) also yield one action segment around each action centre; a jump clip's steps through
its flight are left out (no planning task asks a jump, and asked to stop on a mix of subject 16's
clips with a forward jump, navigation played one).  Every segment gets its
``dx`` (root displacement and heading change in its start frame), its transition rewards to every
other segment from joint differences in the blend region, and a place in one or more
parameterised groups: segments with similar motion and nearby dx, whose blends the controller
can play.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ... import quat
from ...arrays import same_everywhere_matmul
from ...body import Body, ContactSettings, action_centres, foot_contacts
from ...body.contacts import true_runs
from ..base import rest_frames, working_set
from ...errors import MotionctlError
from ...rootframe import displacement, to_local
from ...settings import internal, setting
from ...play.synth import frame_table
from ...tags import FOOT_ACTIONS, HAND_ACTIONS, JUMPS, canonical_set

ACTION_TAGS = HAND_ACTIONS | FOOT_ACTIONS  # clips that yield an action segment around each action centre
MIN_FLIGHT = 0.1  # s with both feet off the ground: a jump clip's flight


def _flight(contacts: np.ndarray, frames: int) -> np.ndarray:
    """bool [F]: frames in a run of at least ``frames`` with neither foot planted (a jump's flight)."""
    out = np.zeros(len(contacts), dtype=bool)
    for a, b in true_runs(~contacts.any(axis=1)):  # a few flights per clip
        out[a:b] = b - a >= frames
    return out


@dataclass
class SegmentSettings:
    """fps: working rate; min/max step length (s); action window around an action centre (s);
    blend frames compared for transition rewards; group size (members per parameterised group)."""

    fps: float = internal(30.0, min=10.0, max=240.0)
    mirror: bool = setting(True, "Mirror Clips", "Add left/right mirrored clips (turns both ways, either hand)",
                           group="Steps")
    min_step: float = internal(0.25, min=0.01, max=10.0)
    max_step: float = internal(1.2, min=0.01, max=10.0)
    action_before: float = internal(0.8, min=0.0, max=10.0)
    action_after: float = internal(0.6, min=0.0, max=10.0)
    blend_frames: int = internal(5, min=1, max=120)
    group_size: int = setting(3, "Group Size", "Steps per blended group (1: every step alone)", min=1, max=6,
                              group="Steps")
    family_threshold: float = internal(0.08, min=0.0, max=10.0)  # pose distance (m, RMS over joints) joining a motion family: left and right steps stay apart
    position_weight: float = internal(1.0, min=0.0, max=1000.0)
    rotation_weight: float = internal(1.0, min=0.0, max=1000.0)
    transition_scale: float = internal(50.0, min=0.0, max=1e6)  # a wrong-foot transition (~0.07 m²) then costs ~3.5, like a 200° heading error
    contacts: ContactSettings = field(default_factory=ContactSettings)


@dataclass(eq=False)
class SegmentSet:
    """Segments of working-rate clips.

    clip, start, end  int [S]: source clip (index into ``clips``) and frame range [start, end)
    kind              int [S]: 0 locomotion, 1 action (reach/pick)
    dx                [S, 3]: (dx right, dy forward, dyaw) over the segment, in its start frame
    reach             [S, 2]: for actions, the hand's target point in the segment's end frame
    transition        [S, S]: R_t(a, a') = -scale x blend-region joint differences
    """

    settings: SegmentSettings
    clips: list
    clip: np.ndarray
    start: np.ndarray
    end: np.ndarray
    kind: np.ndarray
    dx: np.ndarray
    reach: np.ndarray
    transition: np.ndarray
    table: object = None

    @property
    def n(self) -> int:
        return len(self.clip)

    @property
    def duration(self) -> np.ndarray:
        return (self.end - self.start) / self.settings.fps

    def speed(self) -> np.ndarray:
        """[S] each segment's ground speed (m/s): its displacement over the frames it spans."""
        frames = np.maximum(self.end - self.start - 1, 1)
        return np.hypot(self.dx[:, 0], self.dx[:, 1]) * self.settings.fps / frames


def strike_frames(contacts: np.ndarray) -> np.ndarray:
    """Frames where either foot touches down (contact starts), sorted."""
    c = contacts.astype(np.int8)
    starts = np.flatnonzero(np.any(np.diff(c, axis=0) == 1, axis=1)) + 1
    return starts


def cut_segments(clips, settings: SegmentSettings | None = None) -> SegmentSet:
    """Cut clips (one skeleton) into steps and action segments, with dx and transition rewards."""
    s = settings or SegmentSettings()
    work = working_set(clips, s.fps, s.mirror)
    if not work:
        raise MotionctlError("no clips to cut into segments: select at least one")
    table = frame_table(work, work[0].skeleton)
    rows = []  # (clip, start, end, kind, reach_frame, hand)
    lo, hi = int(round(s.min_step * s.fps)), int(round(s.max_step * s.fps))
    for i, c in enumerate(work):
        if "segments" in c.annotations:
            bounds = np.asarray(c.annotations["segments"], dtype=np.int64).reshape(-1, 2)
            rows += [(i, int(a), int(b), 0, -1) for a, b in bounds if b - a >= 2]
            continue
        contacts = foot_contacts(c, s.contacts)
        cuts = _regular_cuts(np.concatenate(([0], strike_frames(contacts), [c.n_frames])), lo, hi)
        steps = [(a, b) for a, b in zip(cuts[:-1].tolist(), cuts[1:].tolist()) if b - a >= 2]
        if canonical_set(c.tags) & JUMPS:  # no task asks a jump: its flight is no step (a stop played one)
            flight = _flight(contacts, int(round(MIN_FLIGHT * s.fps)))
            steps = [(a, b) for a, b in steps if not flight[a:b].any()]
        rows += [(i, int(a), int(b), 0, -1) for a, b in steps]
        if canonical_set(c.tags) & ACTION_TAGS:
            for centre in action_centres(c):
                a = max(0, int(centre - s.action_before * s.fps))
                b = min(c.n_frames, int(centre + s.action_after * s.fps))
                if b - a >= 2:
                    rows.append((i, a, b, 1, int(centre)))
    rows = np.array(rows, dtype=np.int64)
    clip_i, start, end, kind, centre = rows.T
    first = table.first[clip_i]
    dx = displacement(table.ground, table.yaw, first + start, first + end - 1)
    reach = np.zeros((len(rows), 2))
    act = np.flatnonzero(kind == 1)
    for k in act:  # one per action segment: few
        c = work[clip_i[k]]
        pos, _ = c.world()
        hands = Body.of(c.skeleton).hands
        f = centre[k]
        hand = max(hands, key=lambda j: -pos[f, j, 2]) if canonical_set(c.tags) & {"pick"} else \
            max(hands, key=lambda j: np.linalg.norm(pos[f, j, :2] - pos[f, 0, :2]))
        row = first[k] + end[k] - 1
        reach[k] = to_local(pos[f, hand, :2] - table.ground[row], table.yaw[row])
    trans = transition_rewards(table, first + start, first + end, table.first[clip_i] + table.length[clip_i], s)
    return SegmentSet(s, work, clip_i, start, end, kind, dx, reach, trans, table)


def _regular_cuts(cuts: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """Merge cuts closer than ``lo`` frames and split gaps longer than ``hi``."""
    cuts = np.unique(cuts)
    out = [int(cuts[0])]
    for c in cuts[1:-1]:
        if c - out[-1] >= lo and cuts[-1] - c >= lo:
            out.append(int(c))
    out.append(int(cuts[-1]))
    final = [out[0]]
    for a, b in zip(out[:-1], out[1:]):
        n = int(np.ceil((b - a) / hi))
        final += [a + (b - a) * k // n for k in range(1, n)] + [b]
    return np.array(final)


def root_frame_poses(table, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Joint positions [K, J, 3] and world-free rotations [K, J, 4] of table rows in their root frame."""
    from ...skeleton import forward_kinematics

    root = np.zeros((len(rows), 3))
    root[:, 2] = table.height[rows]
    return forward_kinematics(table.skeleton, root, table.local_rot[rows], offsets=table.offsets[rows])


def transition_rewards(table, seg_start: np.ndarray, seg_end: np.ndarray, clip_end: np.ndarray,
                       s: SegmentSettings) -> np.ndarray:
    """R_t [S, S]: minus the weighted squared joint position and orientation differences between
    the frames that would follow segment a in its clip and the first frames of segment a'
    (the blend region), averaged over joints and frames; 0 for a' = a's natural successor.

    Orientations enter as two points on each joint's local x and y axes (10 cm out), whose
    squared distance grows with the squared rotation angle, so the whole cost is a squared
    Euclidean distance and all pairs come from one matrix product."""
    k = s.blend_frames
    n = len(seg_start)
    offs = np.arange(k)
    after = np.minimum(seg_end[:, None] + offs[None], clip_end[:, None] - 1)  # a's continuation
    head = np.minimum(seg_start[:, None] + offs[None], seg_end[:, None] - 1)  # a''s first frames
    fa = _pose_features(table, after.ravel(), s).reshape(n, -1)
    fb = _pose_features(table, head.ravel(), s).reshape(n, -1)
    joints = table.local_rot.shape[1]
    cost = (np.sum(fa**2, 1)[:, None] - 2 * same_everywhere_matmul(fa, fb.T) + np.sum(fb**2, 1)[None]) / (k * joints)
    return -s.transition_scale * np.maximum(cost, 0.0)


def _pose_features(table, rows: np.ndarray, s: SegmentSettings) -> np.ndarray:
    """[K, J * 9]: joint positions and points on each joint's x and y axes, root frame, weighted;
    each joint's axes as its rotation followed by its ``engines.base.rest_frames`` turn gives them
    (the same whatever frame the file's joint rests in)."""
    pos, rot = root_frame_poses(table, rows)
    rot = quat.mul(rot, rest_frames(table))
    ax = quat.rotate(rot, np.broadcast_to([0.1, 0.0, 0.0], rot.shape[:-1] + (3,)))
    ay = quat.rotate(rot, np.broadcast_to([0.0, 0.1, 0.0], rot.shape[:-1] + (3,)))
    w_p, w_r = np.sqrt(s.position_weight), np.sqrt(s.rotation_weight)
    return np.concatenate((w_p * pos, w_r * ax, w_r * ay), axis=-1).reshape(len(rows), -1)


# ----------------------------------------------------------------------------- groups

@dataclass(eq=False)
class Groups:
    """Parameterised groups: ``members[g]`` segment ids, ``transition[g, g']`` the average
    transition reward between members (paper 001's group transition cost)."""

    members: list
    transition: np.ndarray
    kind: np.ndarray

    @property
    def n(self) -> int:
        return len(self.members)


def group_segments(seg: SegmentSet, size: int | None = None) -> Groups:
    """Group segments automatically: motion families (similar start and end poses, same kind)
    by average-linkage clustering, then within each family overlapping runs of ``size`` members
    along the main direction of their dx, so neighbouring groups share a segment and together
    cover the family's range of dx.  size = 1 gives the non-parametric controller."""
    from scipy.cluster.hierarchy import fcluster, linkage

    size = size or seg.settings.group_size
    table = seg.table
    first = table.first[seg.clip]
    # Body joints only (bones over 5 cm): fingers, toes and face joints would swamp the distance.
    body = np.flatnonzero(np.linalg.norm(table.skeleton.offsets, axis=1) > 0.05)
    p0, _ = root_frame_poses(table, first + seg.start)
    p1, _ = root_frame_poses(table, first + seg.end - 1)
    p0, p1 = p0[:, body], p1[:, body]
    feats = np.concatenate((p0.reshape(seg.n, -1), p1.reshape(seg.n, -1)), axis=1) / np.sqrt(2 * len(body))
    members = []
    for kind in np.unique(seg.kind):
        ids = np.flatnonzero(seg.kind == kind)
        if len(ids) == 1:
            labels = np.array([1])
        else:
            # Families join only similar segments: in a diverse library many stay alone (their
            # groups are single clips), blending dissimilar motions would look wrong and mislead
            # the planner about what the blend can reach.
            z = linkage(feats[ids], "average")
            labels = fcluster(z, seg.settings.family_threshold, criterion="distance")
        for lab in np.unique(labels):
            fam = ids[labels == lab]
            if size <= 1 or len(fam) <= size:
                members += [[int(i)] for i in fam] if size <= 1 else [fam.tolist()]
                continue
            d = seg.dx[fam] / np.maximum(seg.dx[fam].std(axis=0), 1e-6)
            d = d - d.mean(axis=0)
            axis = np.linalg.svd(d, full_matrices=False)[2][0]
            order = fam[np.argsort(d @ axis, kind="stable")]
            step = max(1, size - 1)
            for a in range(0, len(order) - 1, step):
                g = order[a:a + size]
                if len(g) >= 2 or len(order) == 1:
                    members.append(g.tolist())
    g = len(members)
    trans = np.empty((g, g))
    for i, mi in enumerate(members):
        trans[i] = [seg.transition[np.ix_(mi, mj)].mean() for mj in members]
    kind = np.array([int(seg.kind[m[0]]) for m in members])
    return Groups(members, trans, kind)


def simplex_samples(m: int, count: int, seed: int = 0) -> np.ndarray:
    """[K, m] blend weights covering the simplex: its vertices, edge midpoints, the centre, then
    uniform (Dirichlet(1)) samples up to ``count``."""
    if m == 1:
        return np.ones((1, 1))
    pts = [np.eye(m)]
    if m > 1:
        mids = [(np.eye(m)[i] + np.eye(m)[j]) / 2 for i in range(m) for j in range(i + 1, m)]
        pts.append(np.array(mids))
    pts.append(np.full((1, m), 1.0 / m))
    base = np.concatenate(pts)
    extra = max(0, count - len(base))
    rng = np.random.default_rng(seed + m)
    return np.concatenate((base, rng.dirichlet(np.ones(m), extra))) if extra else base[:max(count, m)]
