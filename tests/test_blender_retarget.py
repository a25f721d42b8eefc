"""The Retarget panel on real rigs built in Blender (Rigify's metarig from its own operator, a
Mixamo rig as the FBX importer leaves it, the Character Creator rig from ../shared/mocap/cc_base
through Blender's BVH importer): CMU subject 16 walking baked onto each, then read back as Blender
evaluates the action.

Tolerances (bench/results/retarget.md measures them on four takes and a controller run):
- hips, knees, ankles and toes within 10% of the target's leg length of the capture scaled by the
  leg-length ratio (p95; 1.7-8.8 cm measured, at most 8.9% of the leg);
- shoulders, elbows, wrists and head within 20% of it (6.8-19.3 cm, at most 19.5% on Rigify's
  metarig, whose torso is longer than CMU subject 16's: arms keep the target's own proportions);
- planted feet on the floor: their lowest point (heel, ball, toe tip, from the rig's own bones)
  within 1 cm of it in the median over the capture's contact frames (at most 0.1 cm measured), 6 cm
  at the 95th percentile (2.6-5.4 cm: heel strikes and toe-offs, two feet down at once);
- skating (share of contact frames sliding, thresholds scaled with the body) at most 6 points above the
  capture's without Foot Plant (rigify's other proportions: 5% on 16_15; 0 with it, bench_retarget)."""

import json
import os

import numpy as np
import pytest
from rigs import RIGS, make_rig, posed_heads

pytestmark = pytest.mark.blender


@pytest.fixture
def walks(bpy_clean, mocap):
    bpy = bpy_clean
    bpy.context.scene.render.fps = 30
    folder = os.path.join(mocap, "cmu_amc", "16")
    assert bpy.ops.motionctl.import_bvh(directory=folder + os.sep,
                                        files=[{"name": "16_15.amc"}, {"name": "16_58.amc"}]) == {"FINISHED"}
    return bpy


def core_result(ext, bpy, ob, clip_name, **settings):
    """The core's retarget of a group clip onto ``ob`` as it is now (after the bake: with its root bone)."""
    R = ext.motionctl.retarget
    st = bpy.context.scene.motionctl
    clip = next(c for c in ext.operators.common.group_clips(bpy.context) if c.name == clip_name)
    clip = ext.motionctl.clip.resample(clip, bpy.context.scene.render.fps)
    rig = ext.operators.retarget.rig_from_object(ob)
    src = R.Rig.from_skeleton(clip.skeleton)
    mapping = {p.target: p.source for p in st.retarget.bones}
    return R.retarget(clip, src, rig, mapping, R.RetargetSettings(**settings)), clip, src, rig


@pytest.mark.parametrize("kind", RIGS)
def test_a_capture_on_each_rig_keeps_its_joints_and_feet(walks, ext, mocap, kind):
    bpy = walks
    st = bpy.context.scene.motionctl
    ob = make_rig(bpy, kind, mocap)
    st.retarget.target = ob
    assert bpy.ops.motionctl.retarget_auto_map() == {"FINISHED"}
    mapped = {p.target for p in st.retarget.bones}
    assert len(mapped) >= 21  # hips, spine, chest, neck, head, both arms and legs
    st.clip_index = [c.name for c in st.clips].index("16_15")
    st.retarget.source = "CLIP"
    assert bpy.ops.motionctl.retarget() == {"FINISHED"}
    act = ob.animation_data.action
    assert act.name == "rt_16_15" and ob.data.bones.get("root") is not None  # none of the three had one
    hips = ext.motionctl.retarget.find_roles(ext.operators.retarget.rig_from_object(ob))["hips"]
    assert ob.data.bones[hips].parent.name == "root"
    res, clip, src, rig = core_result(ext, bpy, ob, "16_15")
    posed = posed_heads(bpy, ob, np.arange(1, clip.n_frames + 1))
    assert np.abs(posed - res.world).max() < 1e-4  # Blender plays back what the core computed
    # the root bone added lies level along the body's facing at rest (it was along +Y: 180 degrees off)
    ahead = np.array(ob.matrix_world.to_3x3() @ ob.data.bones["root"].matrix_local.to_3x3().col[1])
    facing = ext.motionctl.body.roles.rest_facing(rig, ext.motionctl.retarget.find_roles(rig))
    assert np.degrees(np.arccos(np.clip(ahead @ facing / np.linalg.norm(ahead), -1, 1))) < 1.0
    # and the take starts where the character stands (it started 1.79 m away, where the capture did)
    assert np.linalg.norm(posed[0, hips][:2] - np.array(ob.matrix_world.translation)[:2]) < 0.1
    q = ext.motionctl.retarget.quality(res, clip, src, rig, world=posed)
    assert q["legs_error_p95"] < 0.10 * q["leg_length"]  # margin: 0.068 against 0.099 here
    assert q["arms_error_p95"] < 0.20 * q["leg_length"]  # margin: 0.195 against 0.198 here (1.7%)
    assert abs(q["sole_median"]) < 0.01 and q["sole_p95"] < 0.06
    assert q["skating_scaled"] <= q["source_skating"] + 0.06  # margin: 0.051 against 0.060 here
    report = json.loads(st.retarget.report)[0]
    assert report["action"] == "rt_16_15" and report["sole_p95"] == pytest.approx(q["sole_p95"], abs=1e-4)


def test_rotation_modes_are_written_as_blender_reads_them(ext):
    import mathutils

    rng = np.random.default_rng(3)
    q = ext.motionctl.quat.normalize(rng.normal(size=(20, 4)))
    for mode in ("QUATERNION", "AXIS_ANGLE", "XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX"):
        _, v = ext.operators.retarget.rotation_channels(q, mode)
        if mode == "QUATERNION":
            back = v
        elif mode == "AXIS_ANGLE":
            back = np.array([mathutils.Quaternion(a[1:], a[0])[:] for a in v])
        else:
            back = np.array([mathutils.Euler(a, mode).to_quaternion()[:] for a in v])
        assert np.abs(np.abs(np.sum(back * q, axis=1)) - 1).max() < 1e-6, mode


def test_a_controller_run_on_a_mixamo_rig_with_root_motion_on_the_object(walks, ext, tmp_path):
    from motionctl.play.commands import PlayerSettings, generate_trace, write_trace

    bpy = walks
    st = bpy.context.scene.motionctl
    assert bpy.ops.motionctl.train(engine="matching") == {"FINISHED"}
    st.engine = "matching"
    write_trace(generate_trace(PlayerSettings(max_speed=2.0), 6.0, 10.0, seed=2), tmp_path / "player.csv")
    st.preview.trace_path = str(tmp_path / "player.csv")
    assert bpy.ops.motionctl.play_trace() == {"FINISHED"}
    ob = make_rig(bpy, "mixamo")
    st.retarget.target, st.retarget.source, st.retarget.root_motion = ob, "RUN", "OBJECT"
    st.retarget.foot_plant = True
    assert bpy.ops.motionctl.retarget() == {"FINISHED"}
    assert ob.data.bones.get("root") is None  # the object carries the root motion: no bone added
    act = ob.animation_data.action
    paths = {fc.data_path for fc in ext.operators.compat.action_fcurves(act)}
    assert {"location", "rotation_euler"} <= paths
    clip = ext.operators.preview.last_run(bpy.context)
    clip = ext.motionctl.clip.resample(clip, 30.0)
    R = ext.motionctl.retarget
    rig_before = ext.operators.retarget.rig_from_object(ob)  # the object is animated now: read its rest
    bpy.context.scene.frame_set(0)
    ob.animation_data.action = None
    ob.location, ob.rotation_euler = (0, 0, 0), (np.pi / 2, 0, 0)
    bpy.context.view_layer.update()
    rig = ext.operators.retarget.rig_from_object(ob)
    ob.animation_data.action = act
    assert rig_before.names == rig.names  # count: bone names
    src = R.Rig.from_skeleton(clip.skeleton)
    res = R.retarget(clip, src, rig, R.auto_map(src, rig), R.RetargetSettings(root_motion="OBJECT", foot_plant=True))
    posed = posed_heads(bpy, ob, np.arange(1, clip.n_frames + 1))
    assert np.abs(posed - res.world).max() < 1e-4
    walked = np.linalg.norm(np.diff(posed[:, 0, :2], axis=0), axis=1).sum()
    # margin: 6.6 m against 3 m here
    assert walked > 0.5 * clip.duration  # it walked, carried by the object
    # every trace of the Preview panel through the controller, each its own action
    for seed in (5, 6):
        write_trace(generate_trace(PlayerSettings(max_speed=2.0), 3.0, 10.0, seed=seed), tmp_path / f"take{seed}.csv")
        st.traces.add().path = str(tmp_path / f"take{seed}.csv")
    st.retarget.source = "TRACES"
    assert bpy.ops.motionctl.retarget() == {"FINISHED"}
    takes = [a for a in bpy.data.actions if a.name in ("rt_take5", "rt_take6")]
    assert len(takes) == 2 and all(a.frame_range[1] - a.frame_range[0] > 60 for a in takes)


def test_ticked_clips_bake_to_nla_strips_and_presets_round_trip(walks, ext, mocap, tmp_path):
    bpy = walks
    st = bpy.context.scene.motionctl
    ob = make_rig(bpy, "rigify")
    st.retarget.target = ob
    assert bpy.ops.motionctl.retarget_auto_map() == {"FINISHED"}
    auto = {p.target: p.source for p in st.retarget.bones}
    path = str(tmp_path / "rigify.json")
    assert bpy.ops.motionctl.retarget_save_map(filepath=path) == {"FINISHED"}
    st.retarget.bones[0].source = "lhumerus"  # an edit, then the preset back
    assert bpy.ops.motionctl.retarget_load_map(filepath=path) == {"FINISHED"}
    assert {p.target: p.source for p in st.retarget.bones} == auto  # count: bone names
    st.retarget.source, st.retarget.nla, st.retarget.root_motion = "GROUP", True, "IN_PLACE"
    ob.location = (2.0, 1.0, 0.0)  # where the animator put the character
    bpy.context.view_layer.update()
    assert bpy.ops.motionctl.retarget() == {"FINISHED"}
    ad = ob.animation_data
    assert ad.action is None and len(ad.nla_tracks) == 1
    strips = list(ad.nla_tracks[0].strips)
    assert [s.action.name for s in strips] == ["rt_16_15", "rt_16_58"]
    # exact: whole frames (NLA strips start and end on frames)
    assert strips[1].frame_start == strips[0].frame_end + 1  # one after another
    bpy.context.scene.frame_set(int(strips[1].frame_start) + 20)
    hips = ob.pose.bones["spine"]
    assert np.hypot(*(np.array(ob.matrix_world @ hips.head)[:2] - (2.0, 1.0))) < 0.3  # in place, where it stood


def test_a_new_target_gets_its_own_bone_map(walks, ext):
    """Issue 58.5.3: choosing a second character as Target drops the first one's bone map (the
    next Retarget maps the new rig automatically); choosing the same target again keeps the map."""
    bpy = walks
    rt = bpy.context.scene.motionctl.retarget
    first, second = make_rig(bpy, "ue"), make_rig(bpy, "mixamo")
    rt.target, rt.source = first, "CLIP"
    assert bpy.ops.motionctl.retarget_auto_map() == {"FINISHED"}
    rt.bones[0].source = "lhumerus"  # an edit
    rt.target = first
    assert len(rt.bones) >= 21 and rt.bones[0].source == "lhumerus"  # the same target: the map kept
    rt.target = second
    assert len(rt.bones) == 0  # the UE rig's bones are not the Mixamo rig's
    assert bpy.ops.motionctl.retarget() == {"FINISHED"}
    mapped = {p.target for p in rt.bones}
    assert len(mapped) >= 21 and mapped <= set(second.data.bones.keys())


def test_cancel_and_bad_input_leave_the_rig_as_it_was(walks, ext, mocap, tmp_path, monkeypatch):
    bpy = walks
    st = bpy.context.scene.motionctl
    ob = make_rig(bpy, "cc", mocap)
    st.retarget.target = ob
    st.retarget.source = "GROUP"
    n_bones, n_actions = len(ob.data.bones), len(bpy.data.actions)
    original = ext.operators.background.Job._progress

    def cancel_after_first(self, fraction, message):  # Esc, pressed while the second clip is made
        if fraction > 0:
            self.cancel()
        original(self, fraction, message)

    monkeypatch.setattr(ext.operators.background.Job, "_progress", cancel_after_first)
    assert bpy.ops.motionctl.retarget() == {"CANCELLED"}
    monkeypatch.undo()
    assert len(ob.data.bones) == n_bones and len(bpy.data.actions) == n_actions  # no root bone, no action
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]")
    with pytest.raises(RuntimeError, match="bad.json: not a bone-map preset"):
        bpy.ops.motionctl.retarget_load_map(filepath=str(bad))
    st.retarget.bones.clear()
    p = st.retarget.bones.add()
    p.target, p.source = "CC_Base_L_Thigh", "no_such_joint"
    with pytest.raises(RuntimeError, match="has no joint 'no_such_joint'"):
        bpy.ops.motionctl.retarget()
    st.retarget.target = None
    with pytest.raises(RuntimeError, match="choose a target armature"):
        bpy.ops.motionctl.retarget()
    assert len(bpy.data.actions) == n_actions
