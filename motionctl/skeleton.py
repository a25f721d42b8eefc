"""Skeletons and vectorised forward kinematics.

World frame everywhere in motionctl: Z up, metres, ground plane XY (Blender's).  A joint's
local rotation is expressed in axes parallel to the world at rest (BVH convention: the rest pose
has no rotations), so a pose is ``local_rot [F, J, 4]`` plus ``root_pos [F, 3]``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import quat

AXES = ("X", "Y", "Z", "-X", "-Y", "-Z")


def axis_conversion(forward: str = "-Z", up: str = "Y") -> np.ndarray:
    """3x3 matrix taking file vectors to motionctl's frame (forward -> +Y, up -> +Z).

    Same semantics as ``bpy_extras.io_utils.axis_conversion(from_forward, from_up)``.
    """
    def vec(a):
        if a not in AXES:
            raise ValueError(f"axis must be one of {AXES}, got {a!r}")
        v = np.zeros(3)
        v["XYZ".index(a[-1])] = -1.0 if a.startswith("-") else 1.0
        return v

    f, u = vec(forward), vec(up)
    if abs(np.sum(f * u)) > 0.5:
        raise ValueError(f"forward axis {forward!r} and up axis {up!r} must differ")
    src = np.stack((np.cross(f, u), f, u), axis=1)  # columns: right, forward, up
    return src.T  # orthonormal: maps right -> X, forward -> Y, up -> Z


# File (Y up, -Z forward) -> motionctl/Blender (Z up, Y forward): (x, y, z) -> (x, -z, y).
# The same conversion Blender's BVH importer applies with its default axis settings.
Y_UP_TO_Z_UP = axis_conversion("-Z", "Y")
Q_Y_UP_TO_Z_UP = quat.from_matrix(Y_UP_TO_Z_UP)

ROT_CHANNELS = ("Xrotation", "Yrotation", "Zrotation")
POS_CHANNELS = ("Xposition", "Yposition", "Zposition")


@dataclass(eq=False)
class Skeleton:
    """Joint hierarchy with rest offsets.

    names      joint names, parents before children
    parents    int [J], -1 for the root
    offsets    [J, 3] metres, Z up: each joint's rest position relative to its parent
               (the root's is its rest position)
    channels   per joint, the BVH channel names in file order (kept for an exact round trip)
    end_parent int [E] joint owning each end site; end_offsets [E, 3] metres
    unit_scale metres per file unit of the source file (used when writing it back)
    """

    names: tuple
    parents: np.ndarray
    offsets: np.ndarray
    channels: tuple
    end_parent: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    end_offsets: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    unit_scale: float = 1.0

    def __post_init__(self):
        self.names = tuple(self.names)
        self.parents = np.asarray(self.parents, dtype=np.int64)
        self.offsets = np.asarray(self.offsets, dtype=float).reshape(-1, 3)
        self.channels = tuple(tuple(c) for c in self.channels)
        self.end_parent = np.asarray(self.end_parent, dtype=np.int64).reshape(-1)
        self.end_offsets = np.asarray(self.end_offsets, dtype=float).reshape(-1, 3)
        n = len(self.names)
        if self.parents.shape != (n,) or self.offsets.shape != (n, 3) or len(self.channels) != n:
            raise ValueError("skeleton arrays disagree on the number of joints")
        if n == 0 or self.parents[0] != -1 or np.any(self.parents[1:] >= np.arange(1, n)) or np.any(self.parents[1:] < 0):
            raise ValueError("skeleton must have one root first and parents before children")

    @property
    def n_joints(self) -> int:
        return len(self.names)

    def index(self, name: str) -> int:
        """The index of a joint by name (KeyError naming it)."""
        try:
            return self.names.index(name)
        except ValueError:
            raise KeyError(f"no joint named {name!r}") from None

    def children(self, j: int) -> np.ndarray:
        """int [K]: the joints whose parent is ``j``."""
        return np.flatnonzero(self.parents == j)

    def chain(self, j: int) -> list:
        """Joints from the root down to ``j``, both included."""
        out = [int(j)]
        while self.parents[out[-1]] >= 0:
            out.append(int(self.parents[out[-1]]))
        return out[::-1]

    def turned(self, turns: np.ndarray, local_rot: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Rotations [F, J, 4] re-expressed for joints whose frames are turned by ``turns`` [J, 4]
        (conj(turn of the parent) x rotation x own turn), and the turns [J, 4] that re-express
        vectors given in each joint's parent's frame (offsets, translations; identity at the root)."""
        back = quat.conj(turns[np.maximum(self.parents, 0)])
        back[0] = quat.identity()
        return quat.mul(quat.mul(back, local_rot), turns), back

    def depth(self) -> np.ndarray:
        """int [J]: levels below the root (cached; a skeleton is never modified)."""
        if getattr(self, "_depth", None) is None:
            d = np.zeros(self.n_joints, dtype=np.int64)
            parents = self.parents.tolist()
            for j in range(1, self.n_joints):
                d[j] = d[parents[j]] + 1
            self._depth = d
        return self._depth

    def levels(self) -> list:
        """Joint indices per tree level, root first (for level-by-level forward kinematics)."""
        if getattr(self, "_levels", None) is None:
            d = self.depth()
            order = np.argsort(d, kind="stable")
            self._levels = np.split(order, np.flatnonzero(np.diff(d[order])) + 1)
        return self._levels

    def has_position_channels(self) -> np.ndarray:
        """bool [J]: joints whose file carries translation channels."""
        return np.array([any(c in POS_CHANNELS for c in ch) for ch in self.channels])

    def rest_positions(self) -> np.ndarray:
        """[J, 3] joint positions in the rest pose."""
        p = np.zeros((self.n_joints, 3))
        for j in range(self.n_joints):
            p[j] = self.offsets[j] + (p[self.parents[j]] if j else 0.0)
        return p

    def bone_tips(self) -> tuple[np.ndarray, np.ndarray]:
        """(joint index [B], tip offset [B, 3]) for every bone: child joints and end sites."""
        child = np.arange(1, self.n_joints)
        joint = np.concatenate((self.parents[child], self.end_parent))
        tip = np.concatenate((self.offsets[child], self.end_offsets))
        return joint, tip

    def height(self) -> float:
        """Vertical extent of the rest pose including end sites (metres)."""
        rest = self.rest_positions()
        ends = rest[self.end_parent] + self.end_offsets if len(self.end_parent) else rest[:0]
        z = np.concatenate((rest[:, 2], ends[:, 2]))
        return float(z.max() - z.min())

    def topology_key(self) -> tuple:
        return self.names, tuple(self.parents.tolist())

    def with_offsets(self, offsets: np.ndarray, end_offsets: np.ndarray | None = None) -> "Skeleton":
        """The same skeleton with other bone offsets [J, 3] (and end sites [E, 3])."""
        return Skeleton(
            self.names,
            self.parents,
            offsets,
            self.channels,
            self.end_parent,
            self.end_offsets if end_offsets is None else end_offsets,
            self.unit_scale,
        )

    def first_difference(self, other: "Skeleton") -> tuple[str, str] | None:
        """(joint name, what differs) for the first topological difference, or None."""
        for j in range(max(self.n_joints, other.n_joints)):
            if j >= self.n_joints:
                return other.names[j], "is not in the database skeleton"
            if j >= other.n_joints:
                return self.names[j], "is missing"
            if self.names[j] != other.names[j]:
                return self.names[j], f"is {other.names[j]!r} in the clip"
            if self.parents[j] != other.parents[j]:
                mine = self.names[self.parents[j]] if self.parents[j] >= 0 else "nothing"
                theirs = other.names[other.parents[j]] if other.parents[j] >= 0 else "nothing"
                return self.names[j], f"has parent {theirs!r} in the clip, {mine!r} in the database"
        return None


def forward_kinematics(
    skeleton: Skeleton,
    root_pos: np.ndarray,
    local_rot: np.ndarray,
    local_pos: np.ndarray | None = None,
    offsets: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """World joint positions [F, J, 3] and rotations [F, J, 4] for every frame at once.

    ``local_pos`` [F, J, 3], when given, replaces the rest offsets of joints that carry
    translation channels; ``offsets`` [J, 3] or per frame [F, J, 3] overrides the skeleton's
    (other bone lengths, e.g. poses of several subjects evaluated together).  Joints are composed
    one tree level at a time (all joints of a level in one call); trees deeper than
    ``DOUBLING_DEPTH`` levels (no body, but a file can say anything) by pointer doubling, in
    log(depth) passes.
    """
    offs = skeleton.offsets if offsets is None else offsets
    n_frames, n_joints = local_rot.shape[:2]
    if local_pos is not None:
        trans = local_pos
    else:
        trans = offs[None] if offs.ndim == 2 else offs
    levels = skeleton.levels()
    if len(levels) > DOUBLING_DEPTH:
        return _fk_doubling(skeleton, root_pos, local_rot, np.broadcast_to(trans, (n_frames, n_joints, 3)))
    pos = np.empty((n_frames, n_joints, 3))
    rot = np.empty((n_frames, n_joints, 4))
    rot[:, 0] = local_rot[:, 0]
    pos[:, 0] = root_pos
    for js in levels[1:]:
        p = skeleton.parents[js]
        rp = rot[:, p]
        rot[:, js] = quat.mul(rp, local_rot[:, js])
        pos[:, js] = pos[:, p] + quat.rotate(rp, np.broadcast_to(trans[:, js], (n_frames, len(js), 3)))
    return pos, rot


DOUBLING_DEPTH = 64


def _fk_doubling(skeleton: Skeleton, root_pos, local_rot, trans):
    """FK by pointer doubling: each joint keeps the transform from an ancestor to itself and
    jumps to that ancestor's ancestor each pass, until every joint reaches the world."""
    t = trans.copy()
    t[:, 0] = root_pos
    r = local_rot.copy()
    anc = skeleton.parents.copy()
    while True:
        active = np.flatnonzero(anc >= 0)
        if len(active) == 0:
            return t, r
        a = anc[active]
        ra = r[:, a]
        t[:, active] = t[:, a] + quat.rotate(ra, t[:, active])
        r[:, active] = quat.mul(ra, r[:, active])
        anc[active] = anc[a]


def end_site_positions(skeleton: Skeleton, pos: np.ndarray, rot: np.ndarray) -> np.ndarray:
    """World positions [F, E, 3] of the end sites given FK output."""
    if len(skeleton.end_parent) == 0:
        return pos[:, :0]
    p = skeleton.end_parent
    return pos[:, p] + quat.rotate(rot[:, p], np.broadcast_to(skeleton.end_offsets, rot[:, p].shape[:-1] + (3,)))
