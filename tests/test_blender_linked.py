"""A studio's character linked from its own .blend, the way mocap add-ons most often break: Preview
(Play Trace), Bake and Retarget refuse a linked armature in one line that says what to do (it would
lose its action when the file is saved), and work on a library override of it, whose local action
survives a save and a reload."""

import pytest
from blender_scene import use_demo_clips
from rigs import make_rig

from motionctl.play.commands import PlayerSettings, generate_trace, write_trace

pytestmark = pytest.mark.blender


def link(bpy, path, name):
    """Link object ``name`` from the .blend at ``path`` into the scene and make it active."""
    with bpy.data.libraries.load(path, link=True) as (_, dst):
        dst.objects = [name]
    ob = dst.objects[0]
    bpy.context.scene.collection.objects.link(ob)
    bpy.context.view_layer.objects.active = ob
    assert ob.library is not None and ob.override_library is None
    return ob


def refused(bpy, op) -> str:
    """The one-line message of an operator that refuses (bpy raises it as a RuntimeError)."""
    with pytest.raises(RuntimeError) as err:
        op()
    msg = bpy.context.scene.motionctl.job_message
    assert msg in str(err.value) and "\n" not in msg and "bug" not in msg, (msg, str(err.value))
    return msg


def override(bpy, ob):
    ov = ob.override_hierarchy_create(bpy.context.scene, bpy.context.view_layer, do_fully_editable=True)
    bpy.context.view_layer.objects.active = ov
    assert ov.override_library is not None and ov.data.library is not None  # the bones stay the library's
    return ov


def test_linked_armatures_are_refused_in_one_line_and_overrides_animated(bpy_clean, ext, demo_library, tmp_path):
    bpy = bpy_clean
    st = use_demo_clips(bpy, demo_library, {"demo_walk", "demo_walk_turn_left", "demo_run"}, fps=30)
    assert bpy.ops.motionctl.train(engine="matching") == {"FINISHED"}
    st.engine = "matching"
    write_trace(generate_trace(PlayerSettings(max_speed=1.5), 4.0, 10.0, seed=4), tmp_path / "trace.csv")
    st.preview.trace_path = str(tmp_path / "trace.csv")
    assert bpy.ops.motionctl.play_trace() == {"FINISHED"}  # a run to bake later
    character = make_rig(bpy, "mixamo")
    character.name = "studio_character"
    local = st.groups[0].armature
    library = str(tmp_path / "characters.blend")
    bpy.ops.wm.save_as_mainfile(filepath=library, copy=True)  # the studio's library file

    # Linked: every step that would write an action refuses, naming the object, the file and the fix.
    linked = link(bpy, library, local.name)
    assert linked is not local
    for op, what in ((bpy.ops.motionctl.play_trace, "Play Trace"), (bpy.ops.motionctl.bake_run, "Bake")):
        msg = refused(bpy, op)
        assert what in msg and "linked from 'characters.blend'" in msg and "library override" in msg, msg
    assert linked.animation_data.action.library is not None  # still the library's own action
    rig = link(bpy, library, "studio_character")
    st.retarget.target, st.retarget.source, st.retarget.root_motion = rig, "CLIP", "OBJECT"
    st.clip_index = [c.name for c in st.clips].index("demo_walk")
    msg = refused(bpy, bpy.ops.motionctl.retarget)
    assert "'studio_character' is linked" in msg and "library override" in msg, msg

    # Library overrides: a local action on the override, kept over a save and a reload.
    ov = override(bpy, linked)
    assert bpy.ops.motionctl.play_trace() == {"FINISHED"}
    act = ov.animation_data.action
    assert act is not None and act.library is None and act.frame_range[1] - act.frame_range[0] > 60
    assert bpy.ops.motionctl.bake_run() == {"FINISHED"}
    rig_ov = override(bpy, rig)
    st.retarget.target = rig_ov
    st.retarget.root_motion = "BONE"  # would add a root bone to bones that belong to the library
    msg = refused(bpy, bpy.ops.motionctl.retarget)
    assert "come from a library" in msg and "'characters.blend'" in msg, msg
    assert rig_ov.data.bones.get("root") is None
    st.retarget.root_motion = "OBJECT"
    assert bpy.ops.motionctl.retarget() == {"FINISHED"}
    rt_action = rig_ov.animation_data.action
    assert rt_action is not None and rt_action.library is None and rt_action.name == "rt_demo_walk"
    shot = str(tmp_path / "shot.blend")
    kept = {ov.name: ov.animation_data.action.name, rig_ov.name: rt_action.name}
    bpy.ops.wm.save_as_mainfile(filepath=shot)
    bpy.ops.wm.open_mainfile(filepath=shot)
    for ob_name, act_name in kept.items():
        ob = bpy.data.objects[ob_name]
        assert ob.override_library is not None and ob.animation_data.action.name == act_name
