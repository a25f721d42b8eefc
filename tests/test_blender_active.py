"""The Active Learning panel's loop in Blender on real capture (CMU subject 16 walks): Start from a
seed clip, Suggest (the ghost in the start pose at the 3D cursor, the request marker where the
cycle should end), answer with a library clip, reject, preview and accept a pseudoexample, Auto
(the oracle), play the taught controller, and continue it after the .blend is reopened."""

import json
import os

import numpy as np
import pytest

pytestmark = pytest.mark.blender

WALKS = ("16_15", "16_17", "16_19", "16_25")


@pytest.fixture
def walks(bpy_clean, mocap):
    bpy = bpy_clean
    bpy.context.scene.render.fps = 30
    folder = os.path.join(mocap, "cmu_amc", "16")
    files = [{"name": n + ".amc"} for n in WALKS]
    assert bpy.ops.motionctl.import_bvh(directory=folder + os.sep, files=files) == {"FINISHED"}
    st = bpy.context.scene.motionctl
    s = st.engines.active
    s.task, s.seed_clip, s.mirror = "walk", "16_15", True
    bpy.context.scene.cursor.location = (2.0, 1.0, 0.0)
    return bpy


def saved_summary(bpy, st):
    """The group's Active Learning model entry: its file exists; its summary."""
    entry = next(m for m in st.groups[0].models if m.engine == "active")
    assert os.path.isfile(bpy.path.abspath(entry.path))
    return json.loads(entry.summary)


@pytest.mark.slow
def test_the_loop_in_the_panel_on_real_walks(walks, ext, tmp_path):
    bpy = walks
    st = bpy.context.scene.motionctl
    a = st.active
    teaching = ext.operators.engines.active.teaching_session  # the panel's live session, by clip group
    heads = ext.operators.armature.bone_world_heads

    with pytest.raises(RuntimeError, match="press Start"):  # nothing started yet: a clear error
        bpy.ops.motionctl.active_suggest()
    assert bpy.ops.motionctl.active_start() == {"FINISHED"}
    assert a.examples == 1 and [e.name for e in a.examples_list] == ["16_15"]
    assert saved_summary(bpy, st)["examples"] == 1

    # Suggest: requests listed worst first; the ghost stands in the start pose at the cursor and
    # the marker is where the requested cycle ends.
    assert bpy.ops.motionctl.active_suggest() == {"FINISHED"}
    session = teaching(st.groups[0].name)
    assert len(a.candidates) == len(session.candidates) > 3
    ghost, marker = bpy.data.objects["motionctl ghost"], bpy.data.objects["motionctl request"]
    assert ghost.type == "ARMATURE" and not ghost.hide_viewport and ghost.animation_data is None
    cand = session.candidates[0]
    root = heads(ghost)[0]
    assert np.allclose(root, (2.0, 1.0, cand.pose[1]), atol=1e-3)
    feet_z = heads(ghost)[:, 2].min()
    assert 0.0 < feet_z < 0.2  # standing on the floor, not floating
    for k in (0, 3):
        a.candidate_index = k
        point, _ = session.task.mark(session.candidates[k].u)
        assert np.allclose(marker.location[:2], np.add((2.0, 1.0), point), atol=1e-4)
    assert marker["motionctl_request"] == session.candidates[3].describe(session.task)  # count: strings

    # Answer with a library clip (and a clip that is not in the library: a clear error).
    a.candidate_index = 0
    a.answer_clip = "no such clip"
    with pytest.raises(RuntimeError, match="Answer With"):
        bpy.ops.motionctl.active_answer()
    a.answer_clip = "16_17"
    assert bpy.ops.motionctl.active_answer() == {"FINISHED"}
    assert a.examples == 2 and "16_17" in a.last_step and len(a.candidates) == 0
    assert saved_summary(bpy, st)["examples"] == 2
    with pytest.raises(RuntimeError, match="press Suggest"):  # the requests are stale: Suggest again
        bpy.ops.motionctl.active_answer()

    # Reject: the request leaves the list, nothing is added.
    assert bpy.ops.motionctl.active_suggest() == {"FINISHED"}
    n, steps = len(a.candidates), a.steps
    gains = [c.gain for c in a.candidates]  # the list holds what each answer is expected to add, asked first the most
    assert any(g > 0 for g in gains) and all(0.0 <= g <= 100.0 for g in gains)
    assert gains[0] > 0
    assert bpy.ops.motionctl.active_reject() == {"FINISHED"}
    assert len(a.candidates) < n and a.steps == steps + 1 and a.examples == 2  # count: integers

    # A pseudoexample: previewed on the ghost as an action, then accepted into the map.
    k = next(i for i, c in enumerate(a.candidates) if c.has_pseudo)
    a.candidate_index = k
    assert "skating" in a.candidates[k].pseudo
    assert bpy.ops.motionctl.active_preview_pseudo() == {"FINISHED"}
    act = ghost.animation_data.action
    assert act.name == "motionctl pseudoexample" and act.frame_range[1] - act.frame_range[0] > 20
    assert bpy.ops.motionctl.active_accept_pseudo() == {"FINISHED"}
    assert a.pseudoexamples == 1 and any(e.pseudo for e in a.examples_list)

    # Auto: two oracle steps over the ticked clips.
    a.auto_steps = 2
    steps = a.steps
    assert bpy.ops.motionctl.active_auto() == {"FINISHED"}
    assert a.steps == steps + 2 and a.examples >= 2  # count: integers
    img = bpy.data.images.get("motionctl active " + st.groups[0].name)
    assert img is not None and img.size[0] > 0 and "coverage" in img["motionctl_caption"]

    # The taught controller is the group's Active Learning model: Play Trace drives it.
    from motionctl.play.commands import PlayerSettings, generate_trace, write_trace

    write_trace(generate_trace(PlayerSettings(max_speed=1.5), 4.0, 10.0, seed=1), tmp_path / "p.csv")
    st.engine, st.preview.trace_path, st.preview.action_name = "active", str(tmp_path / "p.csv"), "taught"
    assert bpy.ops.motionctl.play_trace() == {"FINISHED"}
    assert st.groups[0].armature.animation_data.action.name == "taught"

    # Saved with the .blend; reopened, Continue Saved picks up where it stopped.
    examples, pseudo = a.examples, a.pseudoexamples
    path = str(tmp_path / "taught.blend")
    bpy.ops.wm.save_as_mainfile(filepath=path)
    bpy.ops.wm.open_mainfile(filepath=path)
    st = bpy.context.scene.motionctl
    assert teaching(st.groups[0].name) is None
    assert bpy.ops.motionctl.active_start(resume=True) == {"FINISHED"}
    assert (st.active.examples, st.active.pseudoexamples) == (examples, pseudo)  # count: integers
    assert teaching(st.groups[0].name).pool.used.sum() >= 1  # the examples it holds are not offered again
    assert bpy.ops.motionctl.active_suggest() == {"FINISHED"} and len(st.active.candidates) > 0
