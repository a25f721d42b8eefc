"""Blender side of the fragment controller, headless: train (and cancel) as a job, play a trace,
bake, errors as messages, the mannequin, and installing the built extension."""

import os
import subprocess
import sys
import time

import numpy as np
import pytest

from motionctl.fragments import PlayerSettings, generate_trace, write_trace

pytestmark = pytest.mark.blender
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLIPS = {"demo_walk", "demo_run", "demo_walk_turn_left", "demo_sidestep_left", "demo_jump"}


@pytest.fixture
def library(bpy_clean, demo_library):
    bpy = bpy_clean
    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.context.scene.render.fps = 60
    assert bpy.ops.motionctl.import_bvh(directory=demo_library + os.sep, files=[]) == {"FINISHED"}
    st = bpy.context.scene.motionctl
    for c in st.clips:
        c.use = c.name in CLIPS
    pg = st.controller
    pg.trace_seconds = 60.0
    pg.held_out = 1
    return bpy


def heads(ob):
    names = list(ob["motionctl_joints"])
    mw = np.array(ob.matrix_world)
    h = np.array([ob.pose.bones[n].head for n in names])
    return h @ mw[:3, :3].T + mw[:3, 3]


def test_panels_and_operators_are_registered(ext):
    import bpy

    for name in ("MOTIONCTL_PT_controller", "MOTIONCTL_PT_preview", "MOTIONCTL_UL_traces"):
        assert hasattr(bpy.types, name)
    for op in ("train_controller", "drive", "play_trace", "bake_run", "add_mannequin", "cancel_job", "trace_add"):
        assert hasattr(bpy.ops.motionctl, op)
    props = bpy.context.scene.motionctl.controller.bl_rna.properties
    for p in ("omega", "delta", "w_v", "w_t", "w_a", "discount"):
        assert props[p].description, p  # every weight explains itself in a tooltip


def test_train_runs_to_completion_then_warm_starts(library):
    bpy = library
    assert bpy.ops.motionctl.train_controller() == {"FINISHED"}
    pg = bpy.context.scene.motionctl.controller
    assert os.path.exists(pg.policy_path) and pg.result_converged and not pg.result_warm
    assert pg.result_fragments > 500 and 0 < pg.result_percent <= 100.0 + 1e-6
    first = pg.result_improvements
    pg.w_t = 8.0  # retune one weight: the fragment model is reused and the values warm-start
    assert bpy.ops.motionctl.train_controller() == {"FINISHED"}
    assert pg.result_warm and pg.result_converged and pg.result_improvements <= first


def test_cancel_mid_job_keeps_the_previous_result(library, ext, monkeypatch):
    bpy = library
    assert bpy.ops.motionctl.train_controller() == {"FINISHED"}
    pg = bpy.context.scene.motionctl.controller
    before = open(pg.policy_path, "rb").read()
    improvements = pg.result_improvements
    pg.kind = "steady"
    pg.w_v = 5.0
    calls = [0]
    original = ext.operators.jobs.Job._progress

    def progress_then_cancel(self, fraction, message):  # the Cancel button, pressed mid-job
        calls[0] += 1
        if calls[0] == 3:
            self.cancel()
        original(self, fraction, message)

    monkeypatch.setattr(ext.operators.jobs.Job, "_progress", progress_then_cancel)
    assert bpy.ops.motionctl.train_controller() == {"CANCELLED"}
    assert open(pg.policy_path, "rb").read() == before and pg.result_improvements == improvements
    assert "cancelled" in bpy.context.scene.motionctl.job_message


def test_a_worker_thread_job_stops_within_a_second_of_cancel(library, ext):
    bpy = library
    ops = ext.operators
    st = bpy.context.scene.motionctl
    group = st.groups[0]
    inputs = ops.controller.TrainInputs(group.database, {c.name: [] for c in st.clips}, ops.controller.controller_settings(st.controller),
                                        [], PlayerSettings(), 60.0, 0, os.path.join(str(ops.common.cache_dir()), "never.npz"))
    ops.controller._MODELS.clear()
    job = ops.jobs.Job("Train", ops.controller.train_job, {"inputs": inputs})
    job.start()
    while job.drain() is None and not job.done:
        time.sleep(0.01)
    t = time.perf_counter()
    job.cancel()
    job.thread.join(timeout=5.0)
    assert not job.thread.is_alive() and job.cancelled and job.error is None
    assert time.perf_counter() - t < 1.0
    assert not os.path.exists(inputs.out_path)


def test_played_trace_bakes_to_the_synthesized_motion(library, ext, tmp_path):
    bpy = library
    assert bpy.ops.motionctl.train_controller() == {"FINISHED"}
    trace = generate_trace(PlayerSettings(max_speed=3.0), 8.0, 10.0, seed=5)
    path = tmp_path / "play.csv"
    write_trace(trace, path)
    st = bpy.context.scene.motionctl
    st.preview.trace_path = str(path)
    st.preview.action_name = "played"
    assert bpy.ops.motionctl.play_trace() == {"FINISHED"}
    ob = st.groups[0].armature
    assert ob.animation_data.action.name == "played"
    policy, fs = ext.operators.preview.policy_and_fragments(bpy.context)
    clip, _, _ = ext.motionctl.fragments.controller.run_policy(policy, fs, trace, warp=st.preview.warp)
    pos, _ = clip.world()
    assert int(ob.animation_data.action.frame_range[1]) == clip.n_frames  # 60 fps scene, start frame 1
    for f in (0, 17, 240, clip.n_frames - 1):
        bpy.context.scene.frame_set(f + 1)
        assert np.abs(heads(ob) - pos[f]).max() < 1e-4


def test_preview_session_streams_poses_and_records_a_trace(library, ext):
    bpy = library
    assert bpy.ops.motionctl.train_controller() == {"FINISHED"}
    pv = ext.operators.preview
    policy, fs = pv.policy_and_fragments(bpy.context)
    session = pv.PreviewSession(policy, fs, warp=1.0)
    ob = bpy.context.scene.motionctl.groups[0].armature
    writer = ext.operators.armature.PoseWriter(ob)
    held = {"forward"}
    for k in range(120):  # two seconds at 60 ticks per second
        if k == 60:
            held = {"forward", "run", "turn_left"}
        control = pv.control_from_keys(held, 1.3, 3.5, 1.0, airborne=False)
        root, rot = session.tick(1 / 60, control)
        writer.write(rot, root)
    assert len(session.controls) == 20  # a decision every 0.1 s
    assert np.allclose(session.controls[0], [0, 1.3, 0, 0]) and np.allclose(session.controls[-1], [0, 3.5, 1.0, 0])
    bpy.context.view_layer.update()
    assert np.allclose(heads(ob)[0], root, atol=1e-4)  # the armature shows the streamed pose
    trace = session.trace()
    assert trace.rate == 10 and len(trace.samples) == 20
    clip = session.clip("driven")
    assert clip.n_frames == 20 * fs.n_frames
    # Overlay geometry is plain arrays.
    assert pv.trail_vertices(session.trail).shape[1] == 3
    arrow = pv.control_arrow(root, 0.0, np.array([0, 2.0, 0, 0]))
    assert arrow.shape == (6, 3) and np.allclose(arrow[1, :2] - arrow[0, :2], [0, 1.0])


def test_bad_inputs_reach_the_user_as_messages(library, ext, tmp_path):
    bpy = library
    ext.operators.preview._LAST_RUN.clear()
    st = bpy.context.scene.motionctl
    for c in st.clips:
        c.use = False
    with pytest.raises(RuntimeError, match="no clips selected"):
        bpy.ops.motionctl.train_controller()
    for c in st.clips:
        c.use = c.name in CLIPS
    bad = tmp_path / "bad.csv"
    bad.write_text("vx,vy,turn,airborne\n0,1,0,0\n0,1,0\n")
    st.preview.trace_path = str(bad)
    with pytest.raises(RuntimeError, match="train a controller first"):
        bpy.ops.motionctl.play_trace()
    assert bpy.ops.motionctl.train_controller() == {"FINISHED"}
    with pytest.raises(RuntimeError, match=r"bad\.csv:3: 3 values"):
        bpy.ops.motionctl.play_trace()
    st.controller.trace_source = "FILES"
    st.controller.traces.add().path = str(bad)
    with pytest.raises(RuntimeError, match=r"bad\.csv:3"):
        bpy.ops.motionctl.train_controller()
    with pytest.raises(RuntimeError, match="drive the character or play a trace first"):
        bpy.ops.motionctl.bake_run()
    # No armature: an empty scene with no library.
    bpy.ops.wm.read_factory_settings(use_empty=True)
    with pytest.raises(RuntimeError, match="import clips first"):
        bpy.ops.motionctl.add_mannequin()
    with pytest.raises(RuntimeError, match="train a controller first"):
        bpy.ops.motionctl.drive()


def test_mannequin_is_skinned_to_the_armature(library):
    bpy = library
    ob = bpy.context.scene.motionctl.groups[0].armature
    bpy.context.view_layer.objects.active = ob
    assert bpy.ops.motionctl.add_mannequin() == {"FINISHED"}
    body = next(o for o in bpy.data.objects if o.name.endswith("_mannequin"))
    assert body.parent == ob and body.modifiers["Armature"].object == ob
    assert {g.name for g in body.vertex_groups} <= set(ob["motionctl_joints"])
    def deformed():
        deps = bpy.context.evaluated_depsgraph_get()
        ev = body.evaluated_get(deps)
        mesh = ev.to_mesh()
        co = np.array([v.co for v in mesh.vertices])
        ev.to_mesh_clear()
        return co

    bpy.context.scene.frame_set(1)
    a = deformed()
    bpy.context.scene.frame_set(180)  # the first clip (demo_crouch) is crouching by now
    b = deformed()
    assert np.abs(a - b).max() > 0.05  # the body moves with the clip


def test_built_extension_installs_and_registers_in_a_fresh_user_folder(tmp_path):
    out = tmp_path / "dist"
    subprocess.run([sys.executable, os.path.join(ROOT, "tools", "build_extension.py"), "--out", str(out), "--no-wheels"],
                   check=True, capture_output=True)
    (zip_path,) = out.glob("*.zip")
    script = f"""
import bpy
bpy.ops.extensions.package_install_files(filepath={str(zip_path)!r}, repo="user_default", enable_on_install=True)
import addon_utils
mods = [m for m in addon_utils.modules() if m.__name__.endswith("motionctl")]
assert mods, "extension not found after install"
assert hasattr(bpy.ops.motionctl, "train_controller") and hasattr(bpy.types, "MOTIONCTL_PT_controller")
print("INSTALLED", mods[0].__name__)
"""
    env = dict(os.environ, BLENDER_USER_RESOURCES=str(tmp_path / "user"))
    res = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, cwd=str(tmp_path))
    assert res.returncode == 0, res.stdout + res.stderr
    assert "INSTALLED bl_ext.user_default.motionctl" in res.stdout


@pytest.mark.parametrize("task", ["NAVIGATION", "GUIDANCE"])
def test_planning_engine_trains_and_drives_from_scene_objects(library, ext, task):
    bpy = library
    st = bpy.context.scene.motionctl
    pg = st.controller
    for c in st.clips:
        c.use = c.name in {"demo_walk", "demo_walk_turn_left", "demo_walk_slow"}
    pg.engine = "PLANNING"
    pg.task = task
    pg.plan_iterations = 4
    pg.trajectories = 40
    pg.n_trees = 5
    assert bpy.ops.motionctl.train_controller() == {"FINISHED"}
    assert pg.trained_engine == "PLANNING" and pg.result_groups > 0 and os.path.exists(pg.policy_path)
    pv = ext.operators.preview
    planner, clips = pv.policy_and_fragments(bpy.context)

    class Op:  # stands in for the modal operator's state
        pass

    op = Op()
    session = pv.planning_session(bpy.context, planner, clips, op)
    ob = st.groups[0].armature
    writer = ext.operators.armature.PoseWriter(ob)
    for _ in range(90):
        root, rot = session.tick(1 / 60)
        writer.write(rot, root)
    assert len(session.roots) >= 2 and session.x is not None
    assert session.arrow_vertices().shape == (6, 3)
    if task == "GUIDANCE":
        assert bpy.data.objects.get("motionctl_gate") is not None and len(session.x) == 3
    with pytest.raises(RuntimeError, match="planner"):
        st.preview.trace_path = __file__
        bpy.ops.motionctl.play_trace()
