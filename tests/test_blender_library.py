"""Blender side of the library, headless in the bpy module: registration, import, cross-checks."""

import os

import numpy as np
import pytest

from conftest import mocap_files
from motionctl.io import asfamc
from motionctl.io import bvh

pytestmark = pytest.mark.blender


def heads(ob, names):
    mw = np.array(ob.matrix_world)
    h = np.array([ob.pose.bones[n].head for n in names], dtype=float)
    return h @ mw[:3, :3].T + mw[:3, 3]


def blender_import(bpy, path, scale):
    bpy.ops.import_anim.bvh(filepath=path, global_scale=scale, rotate_mode="NATIVE")
    return bpy.context.view_layer.objects.active


def our_import(bpy, path, **kw):
    kw.setdefault("floor", "keep")  # Blender's importer and read_bvh keep the file's floor
    bpy.ops.motionctl.import_bvh(directory=os.path.dirname(path) + os.sep, files=[{"name": os.path.basename(path)}], **kw)
    return bpy.context.scene.motionctl.groups[-1].armature


def sample_frames(n):
    return np.unique(np.linspace(0, n - 1, 5).astype(int))


def test_register_unregister_twice(ext):
    import bpy

    for _ in range(2):
        ext.unregister()
        assert not hasattr(bpy.types.Scene, "motionctl")
        ext.register()
    assert hasattr(bpy.types, "MOTIONCTL_PT_library") and hasattr(bpy.types, "MOTIONCTL_UL_clips")
    assert bpy.types.MOTIONCTL_PT_library.bl_category == "Motion"
    assert bpy.ops.motionctl.import_bvh.idname() == "MOTIONCTL_OT_import_bvh"


def test_import_folder_builds_armature_actions_and_clip_list(bpy_clean, demo_library):
    bpy = bpy_clean
    assert bpy.ops.motionctl.import_bvh(directory=demo_library + os.sep, files=[]) == {"FINISHED"}
    st = bpy.context.scene.motionctl
    assert len(st.groups) == 1 and len(st.clips) == 15
    ob = st.groups[0].armature
    assert ob.type == "ARMATURE" and len(ob.data.bones) == 31
    walk = next(c for c in st.clips if c.name == "demo_walk")
    assert walk.tags == "walk" and walk.fps == 120 and walk.frames == 480 and walk.duration == pytest.approx(4.0)
    assert all(c.action is not None and c.action.use_fake_user for c in st.clips)
    # Selecting a clip plays it on the armature.
    st.clip_index = [c.name for c in st.clips].index("demo_jump")
    assert ob.animation_data.action.name == "demo_jump"
    # Default timing resamples to the scene rate: 3 s of jump at the scene's fps.
    fps = bpy.context.scene.render.fps
    assert ob.animation_data.action.frame_range[1] - ob.animation_data.action.frame_range[0] == pytest.approx(3 * fps - 1, abs=1)
    assert os.path.exists(st.groups[0].database)


def test_baked_action_reproduces_core_joint_positions(bpy_clean, demo_library):
    bpy = bpy_clean
    path = os.path.join(demo_library, "demo_run_turn_left.bvh")
    ob = our_import(bpy, path, timing="NATIVE")
    clip = bvh.read_bvh(path)
    pos, _ = clip.world()
    for f in sample_frames(clip.n_frames):
        bpy.context.scene.frame_set(int(f) + 1)
        assert np.abs(heads(ob, clip.skeleton.names) - pos[f]).max() < 1e-4


def test_root_motion_on_object_option_keeps_world_positions(bpy_clean, demo_library, ext):
    bpy = bpy_clean
    path = os.path.join(demo_library, "demo_walk_turn_right.bvh")
    ob = our_import(bpy, path, timing="NATIVE")
    clip = bvh.read_bvh(path)
    ext.operators.armature.bake_clip(ob, clip, "obj_root", root_motion="OBJECT")
    pos, _ = clip.world()
    for f in sample_frames(clip.n_frames):
        bpy.context.scene.frame_set(int(f) + 1)
        assert np.abs(heads(ob, clip.skeleton.names) - pos[f]).max() < 1e-4
    assert np.allclose(ob.location, pos[f, 0] - np.array(ob.data.bones[0].head_local), atol=1e-4)


def test_bad_file_reaches_the_user_as_a_message(bpy_clean, tmp_path):
    bad = tmp_path / "bad.bvh"
    bad.write_text("HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0 0\n  CHANNELS 3 Xrotation Yrotation Zrotation\n}\n"
                   "MOTION\nFrames: 2\nFrame Time: 0.1\n1 2 3\n4 5\n")
    with pytest.raises(RuntimeError, match=r"bad\.bvh:11: .*truncated"):
        bpy_clean.ops.motionctl.import_bvh(directory=str(tmp_path) + os.sep, files=[{"name": "bad.bvh"}])
    assert len(bpy_clean.context.scene.motionctl.clips) == 0
    assert not any(o.type == "ARMATURE" for o in bpy_clean.data.objects)


@pytest.mark.slow
def test_demo_command_writes_a_blend_that_opens(ext, tmp_path):
    import bpy

    from tools.demo import main

    assert main(["--out", str(tmp_path)]) == 0
    blend = tmp_path / "motionctl_demo.blend"
    bpy.ops.wm.open_mainfile(filepath=str(blend))
    arms = [o for o in bpy.data.objects if o.type == "ARMATURE"]
    assert len(arms) == 1 and len(arms[0].data.bones) == 31
    names = {a.name for a in bpy.data.actions}
    assert {"demo_walk", "demo_jump", "demo_crouch", "demo_sidestep_left", "controller_run"} <= names
    assert len(names) == 16 and len(bpy.context.scene.motionctl.clips) == 15
    # The controller's run is what the armature plays, over the whole scene range.
    run = bpy.data.actions["controller_run"]
    assert arms[0].animation_data.action == run  # count: the same action
    assert (bpy.context.scene.frame_start, bpy.context.scene.frame_end) == tuple(int(x) for x in run.frame_range)
    assert (tmp_path / "model_policy.npz").exists() and (tmp_path / "evaluation_trace.csv").exists()


@pytest.mark.mocap
@pytest.mark.parametrize("path", mocap_files(".bvh"), ids=os.path.basename)
def test_real_bvh_matches_blenders_own_importer_within_1mm(bpy_clean, path):
    bpy = bpy_clean
    clip = bvh.read_bvh(path)
    theirs = blender_import(bpy, path, clip.skeleton.unit_scale)
    ours = our_import(bpy, path, timing="NATIVE", keep_calibration=True)
    names = list(ours["motionctl_joints"])
    idx = [clip.skeleton.names.index(n) for n in names]
    pos, _ = clip.world()
    worst_fk = worst_arm = 0.0
    for f in sample_frames(clip.n_frames):
        bpy.context.scene.frame_set(int(f) + 1)
        worst_fk = max(worst_fk, np.abs(heads(theirs, clip.skeleton.names) - pos[f]).max())
        worst_arm = max(worst_arm, np.abs(heads(ours, names) - pos[f][idx]).max())
    assert worst_fk < 1e-3 and worst_arm < 1e-3, (worst_fk, worst_arm)


@pytest.mark.mocap
@pytest.mark.parametrize("path", mocap_files(".amc", "cmu_amc"), ids=os.path.basename)
def test_real_amc_written_as_bvh_matches_blenders_importer_within_1mm(bpy_clean, tmp_path, path):
    bpy = bpy_clean
    clip = asfamc.read_amc(path, asfamc.read_asf(asfamc.find_asf_for(path)))
    out = tmp_path / (clip.name + ".bvh")
    bvh.write_bvh(clip, out)
    theirs = blender_import(bpy, str(out), clip.skeleton.unit_scale)
    pos, _ = clip.world()
    worst = 0.0
    for f in sample_frames(clip.n_frames):
        bpy.context.scene.frame_set(int(f) + 1)
        worst = max(worst, np.abs(heads(theirs, clip.skeleton.names) - pos[f]).max())
    assert worst < 1e-3, worst


def test_manifest_passes_blenders_extension_validator(ext):
    import subprocess
    import sys

    import bpy

    cli = os.path.join(bpy.utils.system_resource("SCRIPTS"), "addons_core", "bl_pkg", "cli", "blender_ext.py")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run([sys.executable, cli, "validate", root], capture_output=True, text=True)
    assert out.returncode == 0 and "Success" in out.stdout, out.stdout + out.stderr
