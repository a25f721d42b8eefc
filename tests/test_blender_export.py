"""From the viewport to the game (issue 38): two real takes (CMU 16_15 and 16_58, walks of 4 s and
3 s) and a controller run (motion matching trained on them, playing a player's 4 s trace)
retargeted onto a Mixamo rig as the FBX importer leaves it, Rigify's metarig and a UE5-mannequin
-named rig, pushed to NLA, exported with each engine preset by Blender's own exporters, imported back
with Blender's own importers and compared with what Blender played before: the root bone's
displacement and yaw per frame within 1 cm / 1 degree, the scoreboard's skating measure of the feet
(ankle and toe) within a point of the original's, the takes' names and frame ranges and the bones
equal.  Measured (bench/results/export.md): under 0.001 cm and 0.001 degree, skating unchanged.
The checks can fail: an export that forgets to scale bone locations with the unit (the x0.01 root
motion of Unreal) is caught by the same comparison."""

import os
import tempfile

import numpy as np
import pytest
from rigs import EXPORT_RIGS, make_rig

SLOW_CASES = {"rigify"}  # the slow set: every case on Rigify's 160-bone metarig (Mixamo and the UE rig stay in the quick run)

pytestmark = pytest.mark.blender

PRESETS = ("UNREAL", "UNITY", "GODOT")
TAKES = ("16_15", "16_58")
RUN = "run7"  # the controller run baked beside the takes


def bake_takes(bpy, ext, mocap, kind):
    """A factory scene with the two takes retargeted onto rig ``kind`` (root bone, NLA strips)."""
    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.context.scene.render.fps = 30
    folder = os.path.join(mocap, "cmu_amc", "16")
    assert bpy.ops.motionctl.import_bvh(directory=folder + os.sep, files=[{"name": t + ".amc"} for t in TAKES]) \
        == {"FINISHED"}
    st = bpy.context.scene.motionctl
    ob = make_rig(bpy, kind)
    st.retarget.target, st.retarget.source, st.retarget.nla = ob, "GROUP", True
    assert bpy.ops.motionctl.retarget() == {"FINISHED"}
    # and a controller run: motion matching trained on the takes, playing a player's 4 s trace
    from motionctl.play.commands import PlayerSettings, generate_trace, write_trace

    assert bpy.ops.motionctl.train(engine="matching") == {"FINISHED"}
    st.engine = "matching"
    folder = os.path.join(tempfile.gettempdir(), "motionctl_export_trace")  # one folder, written again each run
    os.makedirs(folder, exist_ok=True)
    trace = os.path.join(folder, RUN + ".csv")
    write_trace(generate_trace(PlayerSettings(max_speed=1.8), 4.0, 10.0, seed=7), trace)
    st.traces.add().path = trace
    st.retarget.source = "TRACES"
    assert bpy.ops.motionctl.retarget() == {"FINISHED"}
    return ob


def played(ext, ob, takes, feet, root="root") -> dict:
    """What Blender plays of each take: {"bones", "takes": {name: frames, root and feet per frame}}."""
    G = ext.operators.gamefile
    return {"bones": [b.name for b in ob.data.bones],
            "takes": {n: dict(frames=r, **G.evaluate(ob, a, range(r[0], r[1] + 1), root, feet)) for n, a, r in takes}}


def foot_bones(ext, ob):
    rig = ext.operators.retarget.rig_from_object(ob)
    roles = ext.motionctl.retarget.find_roles(rig)
    return [[rig.names[roles[f"foot.{s}"]], rig.names[roles[f"toe.{s}"]]] for s in "LR"]


def round_trip(bpy, ext, ob, p, path, before, feet):
    """Export ``ob`` with preset ``p``, import the file back, compare; the imported data removed."""
    G = ext.operators.gamefile
    out = G.export_armature(ob, p, path)
    arm, acts = G.import_file(path)
    try:
        after = {"bones": [b.name for b in arm.data.bones], "takes": {}}
        for n, a in acts.items():
            r = (int(round(a.frame_range[0])), int(round(a.frame_range[1])))
            after["takes"][n] = dict(frames=r, **G.evaluate(arm, a, range(r[0], r[1] + 1), "root", feet))
        return ext.motionctl.retarget.export.round_trip(before, after, bpy.context.scene.render.fps), out
    finally:
        data = arm.data
        bpy.data.objects.remove(arm)
        bpy.data.armatures.remove(data)
        for a in acts.values():
            bpy.data.actions.remove(a)


@pytest.fixture(scope="module", params=EXPORT_RIGS)
def exported(request, ext, mocap, tmp_path_factory):
    """Per rig: every preset's round-trip figures and file (one bake, three exports)."""
    import bpy

    kind = request.param
    ob = bake_takes(bpy, ext, mocap, kind)
    feet = foot_bones(ext, ob)
    takes = ext.operators.gamefile.takes_of(ob)
    before = played(ext, ob, takes, feet)
    folder = tmp_path_factory.mktemp(f"export_{kind}")
    P = ext.motionctl.retarget.export.PRESETS
    out = {}
    for name in PRESETS:
        path = str(folder / f"{kind}_{name.lower()}{P[name].ext}")
        out[name] = (*round_trip(bpy, ext, ob, P[name], path, before, feet), path)
    return kind, [n for n, _, _ in takes], out


@pytest.mark.parametrize("preset", PRESETS)
def test_what_comes_back_from_the_file_is_what_the_animator_saw(exported, preset):
    kind, takes, results = exported
    rt, out, path = results[preset]
    assert os.path.exists(path) and not [f for f in os.listdir(os.path.dirname(path)) if ".part" in f]
    assert sorted(n for n, _ in out["takes"]) == sorted("rt_" + t for t in TAKES + (RUN,)) == sorted(takes)
    assert rt["names_equal"] and rt["frames_equal"], rt
    assert rt["bones_equal"], (rt["bones_added"], rt["bones_lost"])
    assert rt["travel_m"] > 2.5  # the takes walk: there is root motion to lose
    assert rt["root_cm_p95"] < 1.0 and rt["root_cm_max"] < 1.0, rt
    assert rt["yaw_deg_p95"] < 1.0 and rt["yaw_deg_max"] < 1.0, rt
    assert rt["skating"] <= rt["skating_before"] + 0.01, rt  # margin: 0.01 of a share (equal here)


def test_the_fbx_files_say_their_unit_and_hide_no_scale_or_bone(exported, ext):
    kind, takes, results = exported
    G = ext.operators.gamefile
    for preset, unit in (("UNREAL", 1.0), ("UNITY", 100.0)):
        rt, out, path = results[preset]
        facts = G.fbx_facts(path)
        # exact: the factor the exporter writes (1.0 or 100.0), read back from the file
        assert facts["unit_scale_factor"] == unit, (preset, facts["unit_scale_factor"])  # 1: cm, 100: m
        nodes = {k: v for k, v in facts["models"].items() if v[0] != "LimbNode"}
        assert len(nodes) == 1, nodes  # the armature, and no other object
        (node, (_, scaling)), = nodes.items()
        assert np.allclose(scaling, 1.0), (preset, scaling)  # no x100 / x0.01 hidden in the armature node
        assert sorted(k for k, v in facts["models"].items() if v[0] == "LimbNode") == sorted(out["bones"])
        assert sorted(facts["stacks"]) == sorted(takes)
        if preset == "UNREAL":
            assert node == "Armature"  # Unreal drops a node of that name instead of adding a bone
    if kind == "ue":
        assert ext.motionctl.retarget.export.extra_bones(results["UNREAL"][1]["bones"]) == []


def test_the_round_trip_catches_root_motion_scaled_on_the_way(bpy_clean, ext, mocap, tmp_path, monkeypatch):
    bpy = bpy_clean
    ob = bake_takes(bpy, ext, mocap, "ue")
    feet = foot_bones(ext, ob)
    G = ext.operators.gamefile
    before = played(ext, ob, G.takes_of(ob), feet)
    monkeypatch.setattr(G, "_scale_locations", lambda act, factor: None)  # the classic x0.01 root motion
    rt, _ = round_trip(bpy, ext, ob, ext.motionctl.retarget.export.PRESETS["UNREAL"], str(tmp_path / "ue.fbx"),
                       before, feet)
    assert rt["root_cm_p95"] > 100.0  # metres of travel read as centimetres


def test_presets_refuse_rigs_they_cannot_carry(bpy_clean, ext, mocap, tmp_path):
    bpy = bpy_clean
    ob = bake_takes(bpy, ext, mocap, "mixamo")
    P = ext.motionctl.retarget.export.PRESETS
    G = ext.operators.gamefile
    st = bpy.context.scene.motionctl
    st.retarget.root_motion, st.retarget.nla, st.retarget.action_prefix = "OBJECT", False, "obj_"
    arm = make_rig(bpy, "rigify")
    st.retarget.target = arm
    st.retarget.bones.clear()  # the map is made again for this rig
    assert bpy.ops.motionctl.retarget() == {"FINISHED"}  # root motion on the object
    with pytest.raises(ext.motionctl.errors.MotionctlError, match="moves the armature object"):
        G.export_armature(arm, P["GODOT"], str(tmp_path / "obj.glb"))
    with pytest.raises(ext.motionctl.errors.MotionctlError, match="Unreal reads root motion|top bones"):
        G.export_armature(arm, P["UNREAL"], str(tmp_path / "obj.fbx"))
    with pytest.raises(ext.motionctl.errors.MotionctlError, match="cannot write there"):
        G.export_armature(ob, P["UNITY"], str(tmp_path / "no_such_folder" / "a.fbx"))
    assert not list(tmp_path.iterdir())  # nothing written


def glb_start_times(path) -> list:
    """The first time (s) of every animation channel of a .glb (its samplers' input accessors' min)."""
    import json
    import struct

    data = open(path, "rb").read()
    (length,) = struct.unpack("<I", data[12:16])
    gltf = json.loads(data[20:20 + length])
    return [gltf["accessors"][s["input"]]["min"][0] for a in gltf["animations"] for s in a["samplers"]]


def test_gltf_and_fbx_takes_start_at_time_zero(bpy_clean, ext, mocap, tmp_path):
    """Issue 58.5.4: the .glb's animations started at 1/30 s (the takes' first frame, 1), the FBX's at
    0: every take of either file starts at time 0, and both read back on the takes' own frames."""
    bpy = bpy_clean
    bpy.context.scene.render.fps = 30
    folder = os.path.join(mocap, "cmu_amc", "16")
    assert bpy.ops.motionctl.import_bvh(directory=folder + os.sep, files=[{"name": t + ".amc"} for t in TAKES]) \
        == {"FINISHED"}
    rt = bpy.context.scene.motionctl.retarget
    rt.target, rt.source, rt.nla = make_rig(bpy, "ue"), "GROUP", True
    assert bpy.ops.motionctl.retarget() == {"FINISHED"}
    G, P = ext.operators.gamefile, ext.motionctl.retarget.export.PRESETS
    # whole frames (a strip's range is a float that holds them; rounded so no last bit can matter)
    takes = {n: tuple(int(round(x)) for x in r) for n, _, r in G.takes_of(rt.target)}
    assert {r[0] for r in takes.values()} == {1}  # count: frame numbers; baked from frame 1 (1/30 s in the file before)
    read = {}
    for preset in ("GODOT", "UNREAL"):
        path = str(tmp_path / f"ue{P[preset].ext}")
        G.export_armature(rt.target, P[preset], path)
        arm, acts = G.import_file(path)
        read[preset] = {n: tuple(int(round(x)) for x in a.frame_range) for n, a in acts.items()}
        data = arm.data
        bpy.data.objects.remove(arm)
        bpy.data.armatures.remove(data)
        for a in acts.values():
            bpy.data.actions.remove(a)
        if preset == "GODOT":
            starts = glb_start_times(path)
            # every channel from time 0 (within a microsecond; the fault put them at 1/30 s = 33,333 us)
            assert len(starts) > len(takes) and max(abs(t) for t in starts) < 1e-6, sorted(set(starts))
    # count: whole frames, rounded on both sides; time 0 at the scene's first frame in both formats
    assert read["GODOT"] == read["UNREAL"] == takes


def world_motion(bpy, ob, frames):
    """[F, B, 3] world heads and [F, B, 3, 3] world rotation deltas from rest of every bone (bulk reads)."""
    n = len(ob.pose.bones)
    mw = np.array(ob.matrix_world)
    rest = np.zeros(n * 16, dtype=np.float32)
    ob.data.bones.foreach_get("matrix_local", rest)
    rest = mw @ rest.reshape(n, 4, 4).transpose(0, 2, 1)
    r0 = rest[:, :3, :3] / np.linalg.norm(rest[:, :3, :3], axis=1, keepdims=True)
    heads, rots = [], []
    for f in frames:  # Blender evaluates one frame at a time
        bpy.context.scene.frame_set(int(f))
        m = np.zeros(n * 16, dtype=np.float32)
        ob.pose.bones.foreach_get("matrix", m)
        m = mw @ m.reshape(n, 4, 4).transpose(0, 2, 1)
        r = m[:, :3, :3] / np.linalg.norm(m[:, :3, :3], axis=1, keepdims=True)
        heads.append(m[:, :3, 3])
        rots.append(r @ r0.transpose(0, 2, 1))
    return np.array(heads), np.array(rots)


def _angle(a, b):
    """Degrees between rotation matrices [..., 3, 3]."""
    c = (np.trace(a @ np.swapaxes(b, -1, -2), axis1=-2, axis2=-1) - 1.0) / 2.0
    return np.degrees(np.arccos(np.clip(c, -1.0, 1.0)))


def test_bone_rolls_of_the_target_do_not_change_or_flip_the_baked_motion(bpy_clean, ext, mocap):
    """Issue 38.3: the same capture on the Mixamo rig with every bone rolled by a random angle (and the
    forearms and shins keyed as Euler angles) moves exactly as on the unrolled rig: world heads and
    world rotations from rest, forearms and shins included, with no frame-to-frame twist flips."""
    bpy = bpy_clean
    bpy.context.scene.render.fps = 30
    folder = os.path.join(mocap, "cmu_amc", "16")
    assert bpy.ops.motionctl.import_bvh(directory=folder + os.sep, files=[{"name": "16_37.amc"}]) == {"FINISHED"}
    st = bpy.context.scene.motionctl
    st.retarget.source = "CLIP"
    rng = np.random.default_rng(38)
    out = []
    for rolled in (False, True):
        ob = make_rig(bpy, "mixamo")
        if rolled:
            bpy.context.view_layer.objects.active = ob
            bpy.ops.object.mode_set(mode="EDIT")
            for eb in ob.data.edit_bones:
                eb.roll += float(rng.uniform(-np.pi, np.pi))
            bpy.ops.object.mode_set(mode="OBJECT")
            for pb in ob.pose.bones:
                if any(k in pb.name for k in ("ForeArm", "Leg")) and "Up" not in pb.name:
                    pb.rotation_mode = "XYZ"
        st.retarget.target = ob
        st.retarget.bones.clear()
        st.retarget.action_prefix = "rolled_" if rolled else "plain_"
        assert bpy.ops.motionctl.retarget() == {"FINISHED"}
        n = int(ob.animation_data.action.frame_range[1])
        out.append((world_motion(bpy, ob, range(1, n + 1)), [b.name for b in ob.data.bones]))
    ((h0, r0), names), ((h1, r1), names1) = out
    assert names == names1  # count: bone names
    assert np.abs(h1 - h0).max() < 1e-4  # metres: what test_blender_retarget asks of Blender's playback
    assert _angle(r1, r0).max() < 0.05  # degrees
    limbs = [i for i, n in enumerate(names) if any(k in n for k in ("ForeArm", "Leg")) and "Up" not in n]
    assert len(limbs) == 4
    step = _angle(r1[1:, limbs], r1[:-1, limbs])  # the running take turns forearms and shins fast, never flips
    assert step.max() < 45.0, step.max()
