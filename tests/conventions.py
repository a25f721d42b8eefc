"""BVH files in the conventions other studios' exporters use, built from real capture: a still root
at the origin with the body metres away (DCC tools' ``joint_Root``), a root that carries the motion
with the body at a constant offset below it, Z-up and Y-up axes, centimetres and inches, a head
joint with no end site.  Each is the same motion, so what motionctl reads back can be compared
with the capture itself (tests/test_conventions.py, bench/bench_conventions.py)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from motionctl import quat
from motionctl.io.bvh import write_bvh
from motionctl.skeleton import Skeleton

POSITION = ("Xposition", "Yposition", "Zposition")
ROTATION = ("Zrotation", "Yrotation", "Xrotation")


def with_extra_root(clip, offset, moving: bool, name: str = "joint_Root"):
    """The clip under a new root joint.  ``moving`` False: the root stays at the origin and the hips,
    moved by ``offset`` (metres, Z up), carry all the motion; True: the root carries the motion and
    the hips sit still at ``offset`` from it (in the root's frame)."""
    sk = clip.skeleton
    offset = np.asarray(offset, dtype=float)
    names = [name] + list(sk.names)
    parents = np.concatenate(([-1], np.where(sk.parents >= 0, sk.parents + 1, 0)))
    offsets = np.vstack((np.zeros(3), sk.offsets))
    channels = [POSITION + ROTATION] + [POSITION + ROTATION] + list(sk.channels[1:])
    new = Skeleton(names, parents, offsets, channels, sk.end_parent + 1, sk.end_offsets, sk.unit_scale)
    f = clip.n_frames
    rot = np.concatenate((quat.identity((f, 1)), clip.local_rot), axis=1)
    local_pos = np.broadcast_to(offsets, (f, len(names), 3)).copy()
    if clip.local_pos is not None:
        local_pos[:, 2:] = clip.local_pos[:, 1:]
    if moving:  # the root moves and turns as the hips did; the hips sit still at the offset below it
        root = clip.root_pos - quat.rotate(clip.local_rot[:, 0], offset)
        rot[:, 0] = clip.local_rot[:, 0]
        rot[:, 1] = quat.identity()
        local_pos[:, 1] = offset
    else:
        root = np.zeros((f, 3))
        local_pos[:, 1] = clip.root_pos + offset
    return replace(clip, skeleton=new, root_pos=root, local_rot=rot, local_pos=local_pos, tags=set(clip.tags))


def without_head_end(clip):
    """The clip with the head's end site removed (a head that ends at its joint)."""
    sk = clip.skeleton
    head = next(j for j, n in enumerate(sk.names) if n.lower() == "head" or n.lower().endswith("_head"))
    keep = sk.end_parent != head
    new = Skeleton(sk.names, sk.parents, sk.offsets, sk.channels, sk.end_parent[keep], sk.end_offsets[keep],
                   sk.unit_scale)
    return replace(clip, skeleton=new, tags=set(clip.tags))


# name -> (how the clip is changed, up axis, forward axis, metres per file unit)
CONVENTIONS = {
    "still root at the origin, body 3 m away": (lambda c: with_extra_root(c, (3.0, 0.0, 1.0), False), "Y", "-Z", 0.01),
    "root carries the motion, body 0.4 m below": (lambda c: with_extra_root(c, (0.2, 0.1, -0.4), True), "Y", "-Z",
                                                   0.01),
    "Z up, centimetres": (lambda c: c, "Z", "Y", 0.01),
    "Y up, inches": (lambda c: c, "Y", "-Z", 0.0254),
    "Z up, inches, still root": (lambda c: with_extra_root(c, (-2.0, 1.5, 0.0), False), "Z", "Y", 0.0254),
    "head with no end site, centimetres": (without_head_end, "Y", "-Z", 0.01),
}


def write_convention(clip, name: str, path) -> None:
    """Write ``clip`` as BVH in convention ``name``."""
    change, up, forward, unit = CONVENTIONS[name]
    write_bvh(change(clip), path, unit_scale=unit, axis_forward=forward, axis_up=up)


def body_figures(clip) -> dict:
    """What an animator checks on an imported clip (Z up, metres): the share of frames with the head
    above the hips above the feet, how high the feet stay off the floor (10th percentile of their
    lowest point), how far the root travels, and the stature (floor to head top, 75th percentile)."""
    from motionctl.io.orient import feet_off_floor, head_joint, leg_ends, sample_points, stature

    sk = clip.skeleton
    points = sample_points(sk, clip.root_pos, clip.local_rot, clip.local_pos)
    head = head_joint(sk)
    feet = leg_ends(sk)
    z = points[..., 2]
    upright = float(np.mean((z[:, head] > z[:, 0]) & (z[:, 0] > z[:, feet].max(axis=1))))
    travel = float(np.linalg.norm(clip.root_pos[:, :2] - clip.root_pos[:1, :2], axis=1).max())
    return {"upright": upright, "feet_off_floor": feet_off_floor(sk, clip.root_pos, clip.local_rot, clip.local_pos),
            "travel": travel, "stature": stature(sk, z), "root": sk.names[0]}
