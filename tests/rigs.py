"""Target rigs for retargeting, built in Blender the way animators get them: Rigify's human
metarig from Rigify's own operator (a hand-built rig with its bone names when Rigify is missing),
a Mixamo-named rig as an FBX import leaves it (centimetres, Y-up data under a 90° object rotation,
scale 0.01, T-pose), and the Character Creator rig imported from ../shared/mocap/cc_base with
Blender's own BVH importer (Euler bones, a rest pose with every bone pointing up)."""

from __future__ import annotations

import math
import os

import numpy as np

RIGS = ("rigify", "mixamo", "cc")
EXPORT_RIGS = ("mixamo", "rigify", "ue")  # the game-export round trips (no Character Creator: a BVH rig)


def _active(bpy, ob):
    for o in bpy.context.view_layer.objects:
        o.select_set(False)
    bpy.context.view_layer.objects.active = ob
    ob.select_set(True)


def rigify_metarig(bpy):
    """Rigify's human metarig (its own operator), or a hand-built rig with its bone names."""
    import addon_utils

    try:
        addon_utils.enable("rigify", default_set=True)
        assert bpy.ops.object.armature_human_metarig_add() == {"FINISHED"}
        return bpy.context.active_object
    except Exception:  # noqa: BLE001 - Rigify missing from this Blender: its names by hand
        return _build(bpy, "metarig", _RIGIFY_BONES, scale=1.0, rotate_x=0.0)


def mixamo_rig(bpy):
    """A Mixamo character's armature as Blender's FBX importer leaves it."""
    bones = [(("mixamorig:" + n) if n else n, ("mixamorig:" + p) if p else None, h, t)
             for n, p, h, t in _MIXAMO_BONES]
    return _build(bpy, "Armature", bones, scale=0.01, rotate_x=math.pi / 2, y_up=True, cm=True)


def cc_rig(bpy, mocap: str):
    """The Character Creator rig of ../shared/mocap/cc_base through Blender's BVH importer."""
    import addon_utils

    addon_utils.enable("io_anim_bvh", default_set=True)
    path = os.path.join(mocap, "cc_base", "cc_cmu_05_01_walk.bvh")
    assert bpy.ops.import_anim.bvh(filepath=path, global_scale=0.01) == {"FINISHED"}
    ob = bpy.context.active_object
    ob.animation_data_clear()  # its own take: we bake ours
    for pb in ob.pose.bones:
        pb.rotation_euler = (0.0, 0.0, 0.0)
        pb.location = (0.0, 0.0, 0.0)
    return ob


def ue_mannequin_rig(bpy):
    """A rig named like Unreal Engine 5's mannequin (its body bones: root, pelvis, spine_01..05,
    neck_01, head, clavicle/upperarm/lowerarm/hand and thigh/calf/foot/ball, _l and _r), in metres,
    facing -Y, arms in an A-pose, its ``root`` bone at the ground under the pelvis."""
    return _build(bpy, "SK_Mannequin", _UE_BONES, scale=1.0, rotate_x=0.0)


def make_rig(bpy, kind: str, mocap: str | None = None):
    if kind == "cc":
        ob = cc_rig(bpy, mocap)
    else:
        ob = {"rigify": rigify_metarig, "mixamo": mixamo_rig, "ue": ue_mannequin_rig}[kind](bpy)
    bpy.context.view_layer.update()
    return ob


def _build(bpy, name, bones, scale, rotate_x, y_up=False, cm=False):
    arm = bpy.data.armatures.new(name)
    ob = bpy.data.objects.new(name, arm)
    bpy.context.collection.objects.link(ob)
    _active(bpy, ob)
    bpy.ops.object.mode_set(mode="EDIT")
    made = {}
    unit = 100.0 if cm else 1.0
    for n, parent, head, tail in bones:
        b = arm.edit_bones.new(n)
        h, t = np.array(head) * unit, np.array(tail) * unit
        if y_up:  # Z-up metres -> the FBX data's Y-up (the object's +90° about X turns it back)
            h, t = h[[0, 2, 1]] * [1, 1, -1], t[[0, 2, 1]] * [1, 1, -1]
        b.head, b.tail = h.tolist(), t.tolist()
        if parent:
            b.parent = made[parent]
            b.use_connect = bool(np.allclose(made[parent].tail, b.head))
        made[n] = b
    bpy.ops.object.mode_set(mode="OBJECT")
    ob.rotation_euler = (rotate_x, 0.0, 0.0)
    ob.scale = (scale, scale, scale)
    return ob


def _limbs(prefix_l, prefix_r, spec):
    out = []
    for side, x in ((prefix_l, 1.0), (prefix_r, -1.0)):
        for n, p, h, t in spec:
            out.append((side(n), side(p) if p and not p.startswith("=") else (p[1:] if p else None),
                        (h[0] * x, h[1], h[2]), (t[0] * x, t[1], t[2])))
    return out


# A 1.85 m Mixamo character facing -Y (Blender's front) in a T-pose; the legs a bit longer than
# CMU subject 16's relative to its height.
_MIXAMO_BONES = [
    ("Hips", None, (0, 0, 1.02), (0, 0, 1.12)),
    ("Spine", "Hips", (0, 0, 1.12), (0, 0, 1.24)),
    ("Spine1", "Spine", (0, 0, 1.24), (0, 0, 1.36)),
    ("Spine2", "Spine1", (0, 0, 1.36), (0, 0, 1.50)),
    ("Neck", "Spine2", (0, 0, 1.56), (0, 0, 1.64)),
    ("Head", "Neck", (0, 0, 1.64), (0, 0, 1.80)),
    ("HeadTop_End", "Head", (0, 0, 1.80), (0, 0, 1.85)),
] + _limbs(lambda n: "Left" + n if n else n, lambda n: "Right" + n if n else n, [
    ("Shoulder", "=Spine2", (0.03, 0, 1.50), (0.16, 0, 1.50)),
    ("Arm", "Shoulder", (0.16, 0, 1.50), (0.44, 0, 1.50)),
    ("ForeArm", "Arm", (0.44, 0, 1.50), (0.70, 0, 1.50)),
    ("Hand", "ForeArm", (0.70, 0, 1.50), (0.78, 0, 1.50)),
    ("HandIndex1", "Hand", (0.78, 0, 1.50), (0.82, 0, 1.50)),
    ("UpLeg", "=Hips", (0.10, 0, 1.00), (0.10, 0, 0.55)),
    ("Leg", "UpLeg", (0.10, 0, 0.55), (0.10, 0.0, 0.09)),
    ("Foot", "Leg", (0.10, 0.0, 0.09), (0.10, -0.12, 0.02)),
    ("ToeBase", "Foot", (0.10, -0.12, 0.02), (0.10, -0.20, 0.02)),
    ("Toe_End", "ToeBase", (0.10, -0.20, 0.02), (0.10, -0.23, 0.02)),
])

# Rigify's metarig names (used only when Rigify itself is missing): arms in its slight A-pose.
_RIGIFY_BONES = [
    ("spine", None, (0, 0.05, 1.01), (0, 0.02, 1.16)),
    ("spine.001", "spine", (0, 0.02, 1.16), (0, 0, 1.29)),
    ("spine.002", "spine.001", (0, 0, 1.29), (0, 0.01, 1.47)),
    ("spine.003", "spine.002", (0, 0.01, 1.47), (0, 0.01, 1.66)),
    ("spine.004", "spine.003", (0, 0.01, 1.66), (0, -0.01, 1.72)),
    ("spine.005", "spine.004", (0, -0.01, 1.72), (0, -0.02, 1.78)),
    ("spine.006", "spine.005", (0, -0.02, 1.78), (0, -0.02, 1.98)),
] + _limbs(lambda n: n + ".L" if n else n, lambda n: n + ".R" if n else n, [
    ("shoulder", "=spine.003", (0.02, -0.07, 1.60), (0.17, 0.02, 1.60)),
    ("upper_arm", "shoulder", (0.19, 0.03, 1.58), (0.44, 0.09, 1.45)),
    ("forearm", "upper_arm", (0.44, 0.09, 1.45), (0.66, 0.05, 1.31)),
    ("hand", "forearm", (0.66, 0.05, 1.31), (0.72, 0.04, 1.26)),
    ("thigh", "=spine", (0.10, 0.01, 1.07), (0.10, -0.03, 0.54)),
    ("shin", "thigh", (0.10, -0.03, 0.54), (0.10, 0.02, 0.09)),
    ("foot", "shin", (0.10, 0.02, 0.09), (0.10, -0.09, 0.02)),
    ("toe", "foot", (0.10, -0.09, 0.02), (0.10, -0.16, 0.02)),
    ("heel.02", "foot", (0.06, 0.05, 0.0), (0.14, 0.05, 0.0)),
])


# UE5 mannequin body bones (1.8 m, A-pose arms 45 degrees down, bones chained head to tail).
_UE_BONES = [
    ("root", None, (0, 0, 0), (0, 0.2, 0)),
    ("pelvis", "root", (0, 0, 0.97), (0, 0, 1.05)),
    ("spine_01", "pelvis", (0, 0, 1.05), (0, 0.01, 1.13)),
    ("spine_02", "spine_01", (0, 0.01, 1.13), (0, 0.01, 1.22)),
    ("spine_03", "spine_02", (0, 0.01, 1.22), (0, 0.01, 1.31)),
    ("spine_04", "spine_03", (0, 0.01, 1.31), (0, 0.01, 1.40)),
    ("spine_05", "spine_04", (0, 0.01, 1.40), (0, 0.01, 1.50)),
    ("neck_01", "spine_05", (0, 0.01, 1.52), (0, 0.0, 1.60)),
    ("head", "neck_01", (0, 0.0, 1.60), (0, 0.0, 1.80)),
] + _limbs(lambda n: n + "_l" if n else n, lambda n: n + "_r" if n else n, [
    ("clavicle", "=spine_05", (0.03, 0.0, 1.46), (0.17, 0.02, 1.46)),
    ("upperarm", "clavicle", (0.17, 0.02, 1.46), (0.37, 0.03, 1.26)),
    ("lowerarm", "upperarm", (0.37, 0.03, 1.26), (0.55, 0.0, 1.08)),
    ("hand", "lowerarm", (0.55, 0.0, 1.08), (0.61, -0.01, 1.02)),
    ("thigh", "=pelvis", (0.09, 0.0, 0.95), (0.10, -0.02, 0.52)),
    ("calf", "thigh", (0.10, -0.02, 0.52), (0.11, 0.02, 0.09)),
    ("foot", "calf", (0.11, 0.02, 0.09), (0.11, -0.11, 0.02)),
    ("ball", "foot", (0.11, -0.11, 0.02), (0.11, -0.19, 0.02)),
])


def posed_heads(bpy, ob, frames) -> np.ndarray:
    """[F, B, 3] world heads of every pose bone (data.bones order) as Blender evaluates the
    armature's animation at ``frames``."""
    scene = bpy.context.scene
    out = []
    for f in frames:
        scene.frame_set(int(f))
        mw = np.array(ob.matrix_world)
        h = np.array([pb.head for pb in ob.pose.bones])
        out.append(h @ mw[:3, :3].T + mw[:3, 3])
    return np.array(out)
