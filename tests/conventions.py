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


def rerested(clip, turns):
    """The clip on a skeleton whose joints rest in other orientations, every world joint position
    unchanged: joint j's frame turned by ``turns[j]`` (quaternions [J, 4]), its children's offsets
    and its rotations re-expressed to match (an exporter's joint orients, a rig built another way).
    A joint whose file has no rotation channels (CMU's hip joints) cannot rest turned from its
    parent: it takes its parent's turn."""
    sk = clip.skeleton
    turns = np.array(turns, dtype=float)
    for j in range(1, sk.n_joints):  # parents first
        if not any(c.endswith("rotation") for c in sk.channels[j]):
            turns[j] = turns[sk.parents[j]]
    rot, back = sk.turned(turns, clip.local_rot)
    offsets = quat.rotate(back, sk.offsets)
    end_offsets = quat.rotate(quat.conj(turns[sk.end_parent]), sk.end_offsets)
    new = Skeleton(sk.names, sk.parents, offsets, sk.channels, sk.end_parent, end_offsets, sk.unit_scale)
    local_pos = None
    if clip.local_pos is not None:
        local_pos = quat.rotate(np.broadcast_to(back, clip.local_pos.shape[:2] + (4,)), clip.local_pos)
    return replace(clip, skeleton=new, local_rot=rot, local_pos=local_pos, tags=set(clip.tags))


def random_turns(n_joints: int, seed: int) -> np.ndarray:
    """[J, 4] uniformly random rotations (``rerested``'s random rest orientations)."""
    q = np.random.default_rng(seed).normal(size=(n_joints, 4))
    return q / np.linalg.norm(q, axis=1, keepdims=True)


def along_x_turns(clip) -> np.ndarray:
    """[J, 4] the turns that lay every bone along its joint's local +X (a Maya-style rig's joint
    orients): each joint's frame turned so its first child (or end site) lies on +X."""
    sk = clip.skeleton
    out = quat.identity((sk.n_joints,))
    for j in range(sk.n_joints):
        kids = np.flatnonzero(sk.parents == j)
        tip = sk.offsets[kids[0]] if len(kids) else next(
            (sk.end_offsets[e] for e in np.flatnonzero(sk.end_parent == j)), None)
        if tip is not None and np.linalg.norm(tip) > 1e-9:
            out[j] = quat.between(np.array([1.0, 0.0, 0.0]), tip)
    return out


# CMU's ASF joint names in the naming other tools export (sided names: the left side's).
_CENTRE = ("root", "lowerback", "upperback", "thorax", "lowerneck", "upperneck", "head")
_SIDED = ("hipjoint", "femur", "tibia", "foot", "toes", "clavicle", "humerus", "radius", "wrist", "hand", "fingers",
          "thumb")
NAMINGS = {
    "Mixamo": (("mixamorig:Hips", "mixamorig:Spine", "mixamorig:Spine1", "mixamorig:Spine2", "mixamorig:Neck",
                "mixamorig:Neck1", "mixamorig:Head"),
               lambda side, n: f"mixamorig:{'Left' if side == 'l' else 'Right'}{n}",
               ("HipJoint", "UpLeg", "Leg", "Foot", "ToeBase", "Shoulder", "Arm", "ForeArm", "Hand", "HandMiddle1",
                "HandMiddle2", "HandThumb1")),
    "Unreal": (("pelvis", "spine_01", "spine_02", "spine_03", "neck_01", "neck_02", "head"),
               lambda side, n: f"{n}_{side}",
               ("hipjoint", "thigh", "calf", "foot", "ball", "clavicle", "upperarm", "lowerarm", "hand", "middle_01",
                "middle_02", "thumb_01")),
    "Character Creator": (("CC_Base_Hip", "CC_Base_Waist", "CC_Base_Spine01", "CC_Base_Spine02", "CC_Base_NeckTwist01",
                           "CC_Base_NeckTwist02", "CC_Base_Head"),
                          lambda side, n: f"CC_Base_{side.upper()}_{n}",
                          ("HipJoint", "Thigh", "Calf", "Foot", "ToeBase", "Clavicle", "Upperarm", "Forearm", "Hand",
                           "Mid1", "Mid2", "Thumb1")),
    "Rigify": (("DEF-spine", "DEF-spine.001", "DEF-spine.002", "DEF-spine.003", "DEF-spine.004", "DEF-spine.005",
                "DEF-head"),
               lambda side, n: f"DEF-{n}.{side.upper()}",
               ("pelvis", "thigh", "shin", "foot", "toe", "shoulder", "upper_arm", "forearm", "hand", "f_middle.01",
                "f_middle.02", "thumb.01")),
}


def renamed(clip, naming: str):
    """The clip with CMU's joint names given in another tool's naming (``NAMINGS``)."""
    centre, sided, words = NAMINGS[naming]
    table = dict(zip(_CENTRE, centre))
    for side in "lr":
        table.update({side + a: sided(side, b) for a, b in zip(_SIDED, words)})
    sk = clip.skeleton
    new = Skeleton([table[n] for n in sk.names], sk.parents, sk.offsets, sk.channels, sk.end_parent, sk.end_offsets,
                   sk.unit_scale)
    return replace(clip, skeleton=new, tags=set(clip.tags))


def reordered(clip, order: str = "XYZ"):
    """The clip with every joint's rotation channels written in another Euler order."""
    sk = clip.skeleton
    rot = tuple(f"{a}rotation" for a in order)
    channels = [tuple(c for c in ch if c.endswith("position")) + (rot if any(c.endswith("rotation") for c in ch) else ())
                for ch in sk.channels]
    new = Skeleton(sk.names, sk.parents, sk.offsets, channels, sk.end_parent, sk.end_offsets, sk.unit_scale)
    return replace(clip, skeleton=new, tags=set(clip.tags))


def flat_ends(clip):
    """The clip with every end site of zero length (an exporter that writes the last joint's tip at
    the joint)."""
    sk = clip.skeleton
    new = Skeleton(sk.names, sk.parents, sk.offsets, sk.channels, sk.end_parent, np.zeros_like(sk.end_offsets),
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
    from motionctl.body import Body
    from motionctl.io.orient import feet_off_floor, sample_points, stature

    sk = clip.skeleton
    points = sample_points(sk, clip.root_pos, clip.local_rot, clip.local_pos)
    head = Body.of(sk).head
    feet = Body.of(sk).leg_ends
    z = points[..., 2]
    upright = float(np.mean((z[:, head] > z[:, 0]) & (z[:, 0] > z[:, feet].max(axis=1))))
    travel = float(np.linalg.norm(clip.root_pos[:, :2] - clip.root_pos[:1, :2], axis=1).max())
    return {"upright": upright, "feet_off_floor": feet_off_floor(sk, clip.root_pos, clip.local_rot, clip.local_pos),
            "travel": travel, "stature": stature(sk, z), "root": sk.names[0]}


# The conformance corpus (issue 58): the same motion written every way a file can represent the
# body.  name -> (how the clip is changed, write_bvh's keywords, frame rate or None for the clip's).
_RATE = None
CORPUS = {
    "as read": (lambda c: c, {}, _RATE),
    "random rest orientations": (lambda c: rerested(c, random_turns(c.skeleton.n_joints, 11)), {}, _RATE),
    "Maya-style joint orients (bones along X)": (lambda c: rerested(c, along_x_turns(c)), {}, _RATE),
    "Mixamo names": (lambda c: renamed(c, "Mixamo"), {}, _RATE),
    "Unreal names": (lambda c: renamed(c, "Unreal"), {}, _RATE),
    "Character Creator names": (lambda c: renamed(c, "Character Creator"), {}, _RATE),
    "Rigify DEF- names": (lambda c: renamed(c, "Rigify"), {}, _RATE),
    "Z up": (lambda c: c, {"axis_up": "Z", "axis_forward": "Y"}, _RATE),
    "Y up, +Z forward": (lambda c: c, {"axis_forward": "Z"}, _RATE),
    "centimetres": (lambda c: c, {"unit_scale": 0.01}, _RATE),
    "metres": (lambda c: c, {"unit_scale": 1.0}, _RATE),
    "inches": (lambda c: c, {"unit_scale": 0.0254}, _RATE),
    "channels XYZ": (lambda c: reordered(c, "XYZ"), {}, _RATE),
    "channels YXZ": (lambda c: reordered(c, "YXZ"), {}, _RATE),
    "extra still root": (lambda c: with_extra_root(c, (3.0, 0.0, 1.0), False), {}, _RATE),
    "root carries the motion": (lambda c: with_extra_root(c, (0.2, 0.1, -0.4), True), {}, _RATE),
    "zero-length end sites": (flat_ends, {}, _RATE),
    "no head end site": (without_head_end, {}, _RATE),
    "60 fps": (lambda c: c, {}, 60.0),
    "30 fps": (lambda c: c, {}, 30.0),
    "24 fps": (lambda c: c, {}, 24.0),
}
# What the file holds differs: another frame rate (other frames sampled, the floor found on them),
# toe tips written at the toes (the foot's front, which the contact detector reads), no head top (the
# mirror image's head then turns by the clip's mean pose alone, not onto its mirrored end site: 11-15
# degrees apart on CMU 16, and the motion field plays another run).  The rest carry the same body to
# the BVH text's precision.
NOT_THE_SAME_DATA = {"60 fps", "30 fps", "24 fps", "zero-length end sites", "no head end site"}


def write_variant(clip, name: str, path) -> None:
    """Write ``clip`` as BVH the way corpus entry ``name`` represents it."""
    from motionctl.clip import resample

    change, options, rate = CORPUS[name]
    write_bvh(change(clip if rate is None else resample(clip, rate)), path, **options)
