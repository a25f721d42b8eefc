"""Extra roots: a joint above the body that exporters add (``joint_Root`` from DCC tools, Character
Creator's ``RL_BoneRoot``, a game rig's ``root``), folded into the body so root motion lives where
every engine reads it: on the first joint, the hips.

A root with a single child is folded by composing its transform into the child's: every other
joint keeps its world position and rotation in every frame, and the child becomes the root with
the root's and its own motion.  ``extra_root`` says whether a root is such a joint and what it
did (never moved, carried all the motion with the body at a constant offset, or carried the ground
motion while the body moved under it), for the import report.
"""

from __future__ import annotations

import numpy as np

from .. import quat
from ..skeleton import Skeleton, forward_kinematics

STILL_ANGLE = np.radians(0.5)  # a root turning less than this never turned
STILL_SHARE = 1e-3             # ... nor moved, when its travel is below this share of the body's size


def _still_rotation(rot: np.ndarray) -> bool:
    return bool(np.all(quat.angle(quat.mul(quat.conj(rot[:1]), rot)) < STILL_ANGLE))


def extra_root(skeleton: Skeleton, root_pos: np.ndarray, local_rot: np.ndarray, local_pos=None) -> str | None:
    """Why the root is an extra joint above the body ("never moved", "carried the motion: the body
    at a constant offset", "carried the ground motion"), or None when it is not one: a root with a
    single child, above a body (some joint below it branches: a chain is left alone).  Units are the file's: tolerances scale with the body."""
    if skeleton.n_joints < 3 or len(skeleton.children(0)) != 1 or skeleton.children(0)[0] != 1:
        return None
    if np.bincount(skeleton.parents[1:], minlength=skeleton.n_joints).max() < 2:
        return None  # a chain, not a body below a root
    size = max(float(np.linalg.norm(skeleton.offsets, axis=1).sum()), 1e-9)
    root_still = float(np.ptp(root_pos, axis=0).max()) < STILL_SHARE * size and _still_rotation(local_rot[:, 0])
    if root_still:
        return "never moved"
    child_pos = skeleton.offsets[1] if local_pos is None else local_pos[:, 1]
    child_still = float(np.ptp(np.atleast_2d(child_pos), axis=0).max()) < STILL_SHARE * size and \
        _still_rotation(local_rot[:, 1])
    if child_still:
        return "carried the motion: the body at a constant offset"
    return "carried the ground motion"


def fold_root(skeleton: Skeleton, root_pos: np.ndarray, local_rot: np.ndarray, local_pos=None):
    """Remove a root that has one child, composing its motion into that child.
    Returns (skeleton, root_pos [F, 3], local_rot [F, J-1, 4], local_pos or None)."""
    sk = skeleton
    kids = sk.children(0)
    if len(kids) != 1 or kids[0] != 1:
        raise ValueError(f"root {sk.names[0]!r} has {len(kids)} children")
    pos, rot = forward_kinematics(sk, root_pos, local_rot, local_pos)
    keep = np.arange(1, sk.n_joints)
    parents = np.where(sk.parents[keep] > 0, sk.parents[keep] - 1, -1)
    ends = sk.end_parent >= 1
    channels = [sk.channels[k] for k in keep]
    if not any(c.endswith("position") for c in channels[0]):  # the new root moves: it needs position channels
        channels[0] = ("Xposition", "Yposition", "Zposition") + tuple(channels[0])
    new_sk = Skeleton([sk.names[k] for k in keep], parents, sk.offsets[keep], channels, sk.end_parent[ends] - 1,
                      sk.end_offsets[ends], sk.unit_scale)
    rot_out = local_rot[:, keep].copy()
    rot_out[:, 0] = rot[:, 1]
    pos_out = None if local_pos is None else local_pos[:, keep].copy()
    return new_sk, pos[:, 1].copy(), rot_out, pos_out
