"""Armatures from motionctl skeletons, and clips baked into actions with bulk ``foreach_set``.

Shared by every engine: importing a library, baking a driven run, baking a controller's output.
Bones follow the Skeleton: one bone per joint, head at the joint's rest position, tail towards
its children (or end site).  A joint's local rotation L (rest-aligned axes) becomes the pose
bone's basis ``r⁻¹ L r`` with r the bone's rest rotation, so world joint positions are the core's.
"""

from __future__ import annotations

import bpy
import numpy as np

from ..motionctl import quat
from ..motionctl.clip import Clip, resample
from ..motionctl.skeleton import Skeleton
from .compat import assign_action, emptied_action, new_action, new_fcurve

LINEAR = 1  # keyframe interpolation enum value


def build_armature(context, skeleton: Skeleton, name: str):
    """A new armature object in the active collection whose bones follow ``skeleton``."""
    arm = bpy.data.armatures.new(name)
    ob = bpy.data.objects.new(name, arm)
    context.collection.objects.link(ob)
    ob["motionctl_joints"] = list(skeleton.names)
    rest = skeleton.rest_positions()
    tip_joint, tip_off = skeleton.bone_tips()
    mean_len = np.mean(np.linalg.norm(tip_off, axis=1)[np.linalg.norm(tip_off, axis=1) > 1e-6]) if len(tip_off) else 0.1
    prev_active = context.view_layer.objects.active
    prev_mode = prev_active.mode if prev_active is not None else "OBJECT"
    if prev_active is not None and prev_mode != "OBJECT":
        bpy.ops.object.mode_set(mode="OBJECT")
    context.view_layer.objects.active = ob
    bpy.ops.object.mode_set(mode="EDIT")
    try:
        bones = []
        for j, jname in enumerate(skeleton.names):
            b = arm.edit_bones.new(jname)
            sel = tip_joint == j
            offs = tip_off[sel][np.linalg.norm(tip_off[sel], axis=1) > 1e-6]
            head = rest[j]
            if len(offs):
                tail = head + offs.mean(axis=0)
                if np.linalg.norm(tail - head) < 1e-4:
                    tail = head + offs[0]
            else:
                # Zero-length joint: continue the parent's direction (or point up).
                p = skeleton.parents[j]
                d = rest[j] - rest[p] if p >= 0 else np.zeros(3)
                d = d / np.linalg.norm(d) if np.linalg.norm(d) > 1e-6 else np.array([0.0, 0.0, 1.0])
                tail = head + d * 0.5 * mean_len
            b.head = head.tolist()
            b.tail = tail.tolist()
            if j > 0:
                b.parent = bones[skeleton.parents[j]]
            bones.append(b)
    finally:
        bpy.ops.object.mode_set(mode="OBJECT")
    return ob


def rest_rotations(ob) -> np.ndarray:
    """[J, 4] armature-space rest rotations of the bones, in joint order."""
    arm = ob.data
    names = list(ob.get("motionctl_joints", [b.name for b in arm.bones]))
    buf = np.zeros(len(arm.bones) * 16, dtype=np.float32)
    arm.bones.foreach_get("matrix_local", buf)
    mats = buf.reshape(-1, 4, 4).transpose(0, 2, 1)  # foreach_get is column-major
    order = [arm.bones.find(n) for n in names]
    return quat.from_matrix(mats[order, :3, :3].astype(float))


def rest_heads(ob) -> np.ndarray:
    arm = ob.data
    names = list(ob.get("motionctl_joints", [b.name for b in arm.bones]))
    return np.array([arm.bones[n].head_local for n in names], dtype=float)


def pose_channels(ob, clip: Clip, root_motion: str = "BONE"):
    """Pose-bone values for every frame: basis quaternions [F, J, 4] (sign-continuous) and the
    locations [F, J, 3] of joints that move (the root, and joints with position channels).

    ``root_motion``: "BONE" keeps the root translation on the root bone; "OBJECT" returns it
    separately (world positions [F, 3]) for the armature object and leaves the bone in place.
    """
    r = rest_rotations(ob)
    r_inv = quat.conj(r)
    basis = quat.make_continuous(quat.mul(quat.mul(r_inv, clip.local_rot), r), axis=0)
    heads = rest_heads(ob)
    sk = clip.skeleton
    loc = np.zeros(clip.local_rot.shape[:2] + (3,))
    if clip.local_pos is not None:
        loc[:, 1:] = quat.rotate(r_inv[1:], clip.local_pos[:, 1:] - sk.offsets[1:])
    moving = sk.has_position_channels().copy()
    moving[0] = True
    object_loc = None
    if root_motion == "OBJECT":
        object_loc = clip.root_pos - heads[0]
    else:
        loc[:, 0] = quat.rotate(r_inv[0], clip.root_pos - heads[0])
    return basis, loc, moving, object_loc


def set_keys(fc, times: np.ndarray, values: np.ndarray) -> None:
    kp = fc.keyframe_points
    kp.add(len(times))
    co = np.empty(2 * len(times), dtype=np.float32)
    co[0::2] = times
    co[1::2] = values
    kp.foreach_set("co", co)
    kp.foreach_set("interpolation", np.full(len(times), LINEAR, dtype=np.int32))
    fc.update()


def bake_clip(ob, clip: Clip, action_name: str, frame_start: int = 1, scene_fps: float | None = None,
              root_motion: str = "BONE", assign: bool = True, into=None):
    """Bake ``clip`` onto armature ``ob`` as a new action (``into``: refill that action instead).

    scene_fps  when given, the clip is first resampled to it (slerp) and keyed on every frame;
               None keys one frame per captured frame (Blender's BVH importer does the same).
    """
    if scene_fps is not None and abs(scene_fps - clip.fps) > 1e-6:
        clip = resample(clip, scene_fps)
    names = list(ob.get("motionctl_joints", []))
    if names != list(clip.skeleton.names):
        raise ValueError(f"armature {ob.name!r} does not have the joints of clip {clip.name!r}")
    basis, loc, moving, object_loc = pose_channels(ob, clip, root_motion)
    times = frame_start + np.arange(clip.n_frames, dtype=np.float64)
    act, slot, channels = new_action(action_name) if into is None else emptied_action(into)
    for j, jname in enumerate(names):
        esc = bpy.utils.escape_identifier(jname)
        for i in range(4):
            set_keys(new_fcurve(channels, f'pose.bones["{esc}"].rotation_quaternion', i, jname), times, basis[:, j, i])
        if moving[j]:  # with root motion on the object the root bone is keyed at rest (zeros)
            for i in range(3):
                set_keys(new_fcurve(channels, f'pose.bones["{esc}"].location', i, jname), times, loc[:, j, i])
    if object_loc is not None:
        for i in range(3):
            set_keys(new_fcurve(channels, "location", i, "Object Transforms"), times, object_loc[:, i])
    act["motionctl_fps"] = float(clip.fps)
    act["motionctl_clip"] = clip.name
    if assign:
        assign_action(ob, act, slot)
    return act


def bone_world_heads(ob, depsgraph=None) -> np.ndarray:
    """[J, 3] world positions of the pose bones' heads (evaluated), in joint order."""
    names = list(ob.get("motionctl_joints", [b.name for b in ob.pose.bones]))
    mw = np.array(ob.matrix_world)
    heads = np.array([ob.pose.bones[n].head for n in names], dtype=float)
    return heads @ mw[:3, :3].T + mw[:3, 3]


class PoseWriter:
    """Poses an armature from joint rotations every tick (live preview): rest data is read once,
    then each write is one bulk ``foreach_set`` plus the root bone's location."""

    def __init__(self, ob):
        self.ob = ob
        names = list(ob.get("motionctl_joints", []))
        self.r = rest_rotations(ob)
        self.r_inv = quat.conj(self.r)
        self.head0 = rest_heads(ob)[0]
        pb = ob.pose.bones
        self.order = np.array([pb.find(n) for n in names])
        self.root = pb[names[0]]
        self.flat = np.zeros((len(pb), 4), dtype=np.float32)
        self.flat[:, 0] = 1.0

    def basis(self, local_rot: np.ndarray) -> np.ndarray:
        return quat.mul(quat.mul(self.r_inv, local_rot), self.r)

    def write(self, local_rot: np.ndarray, root_pos: np.ndarray) -> None:
        self.flat[self.order] = self.basis(local_rot)
        self.ob.pose.bones.foreach_set("rotation_quaternion", self.flat.ravel())
        self.root.location = quat.rotate(self.r_inv[0], np.asarray(root_pos) - self.head0).tolist()
        self.ob.update_tag(refresh={"DATA"})
