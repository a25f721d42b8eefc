"""The export presets' rig checks and the round-trip figures (motionctl.retarget.export; no Blender):
the figures see a root motion scaled by 0.01, a yaw turned, a take renamed or a bone added; a rig
without a root bone is refused for Unreal and one without the humanoid chain for Unity."""

import numpy as np
import pytest

from motionctl import quat
from motionctl.errors import MotionctlError
from motionctl.retarget.export import (PRESETS, UE5_BODY, UE5_PARENTS, extra_bones, preset, rig_problems,
                                       root_errors, round_trip)


def walk(frames=90, fps=30.0, speed=1.2, turn=0.5):
    t = np.arange(frames) / fps
    yaw = turn * t
    pos = np.stack((np.zeros(frames), -speed * t, np.zeros(frames)), axis=1)
    rot = quat.from_axis_angle(np.array([0.0, 0.0, 1.0]), yaw)
    step = (np.sin(2 * np.pi * t)[:, None] > 0)  # one foot planted, then the other
    feet = np.zeros((frames, 2, 2, 3))
    feet[:, 0, :, 1] = np.where(step, -speed * np.floor(t)[:, None], pos[:, 1:2])
    feet[:, 1, :, 1] = np.where(~step, -speed * np.floor(t)[:, None], pos[:, 1:2])
    return {"frames": (1, frames), "root_pos": pos, "root_rot": rot, "feet": feet}


def test_the_figures_see_scaled_root_motion_turned_yaw_renamed_takes_and_added_bones():
    take = walk()
    bones = ["root", "pelvis"]
    same = round_trip({"bones": bones, "takes": {"a": take}}, {"bones": bones, "takes": {"a": take}}, 30.0)
    assert same["root_cm_p95"] == 0 and same["yaw_deg_p95"] == 0 and same["names_equal"] and same["bones_equal"]
    # exact: the same take's points measured on both sides (it round-trips unchanged)
    assert same["skating"] == same["skating_before"]
    shrunk = dict(take, root_pos=take["root_pos"] * 0.01)
    assert root_errors(take["root_pos"], take["root_rot"], shrunk["root_pos"], shrunk["root_rot"])["root_cm_p95"] > 50
    turned = dict(take, root_rot=quat.mul(quat.from_axis_angle(np.array([0.0, 0.0, 1.0]), np.linspace(0, 0.1, 90)),
                                          take["root_rot"]))
    assert root_errors(take["root_pos"], take["root_rot"], turned["root_pos"], turned["root_rot"])["yaw_deg_max"] == \
        pytest.approx(np.degrees(0.1), rel=1e-6)
    other = round_trip({"bones": bones, "takes": {"a": take}}, {"bones": bones + ["root_end"], "takes": {"b": take}},
                       30.0)
    assert not other["names_equal"] and not other["bones_equal"] and other["bones_added"] == ["root_end"]
    # exact: inf is the sentinel for nothing to compare
    assert other["root_cm_p95"] == float("inf")  # nothing to compare is a failure, not a pass


def test_rigs_a_preset_cannot_carry_are_refused_in_one_sentence_each():
    names = list(UE5_BODY)
    parents = [names.index(UE5_PARENTS[n]) if n in UE5_PARENTS else -1 for n in names]
    roles = {"hips": 1, "spine": 2, "head": 8, **{f"{r}.{s.upper()}": names.index(f"{b}_{s}") for s in "lr" for r, b in (
        ("upper_arm", "upperarm"), ("forearm", "lowerarm"), ("hand", "hand"), ("thigh", "thigh"), ("shin", "calf"),
        ("foot", "foot"))}}
    for p in PRESETS.values():
        assert rig_problems(p, names, parents, roles) == [], p.name
    assert extra_bones(names) == [] and extra_bones(names + ["ik_foot_root"]) == ["ik_foot_root"]
    no_root = [p - 1 if p > 0 else -1 for p in parents[1:]]
    no_root_roles = {k: v - 1 for k, v in roles.items()}
    (why,) = rig_problems(PRESETS["UNREAL"], names[1:], no_root, no_root_roles)
    assert "one top bone named 'root'" in why and "pelvis" in why
    flat = [0 if p > 0 else p for p in parents]  # every bone straight under the root: no chain
    (why,) = rig_problems(PRESETS["UNITY"], names, flat, roles)
    assert "humanoid" in why and "calf_l is not below thigh_l" in why
    missing = {k: v for k, v in roles.items() if k != "head"}
    assert "needs bones for head" in rig_problems(PRESETS["UNITY"], names, parents, missing)[0]
    with pytest.raises(MotionctlError, match="no export preset 'unity3d'"):
        preset("unity3d")


def test_a_glb_says_its_animation_names_and_anything_else_is_refused(tmp_path):
    import json
    import struct

    from motionctl.retarget.export import glb_animation_names

    doc = json.dumps({"asset": {"version": "2.0"}, "animations": [{"name": "walk"}, {"name": "run.001"}]}).encode()
    doc += b" " * (-len(doc) % 4)
    path = tmp_path / "a.glb"
    path.write_bytes(b"glTF" + struct.pack("<II", 2, 20 + len(doc)) + struct.pack("<II", len(doc), 0x4E4F534A) + doc)
    assert glb_animation_names(str(path)) == ["walk", "run.001"]
    (tmp_path / "b.glb").write_bytes(b"Kaydara FBX Binary  \x00")
    with pytest.raises(MotionctlError, match="b.glb: not a glTF binary"):
        glb_animation_names(str(tmp_path / "b.glb"))
