"""The Library panel reads other studios' conventions at its defaults (tests/conventions.py): a still
root at the origin in a Z-up file in inches comes in as a standing, walking body on the floor with
no extra bone; with Fold Extra Roots off, training refuses the motionless result in one line."""

import os

import numpy as np
import pytest
from conventions import CONVENTIONS, write_convention

from motionctl.io.library import ImportSettings, load_clip
from motionctl.settings import options

pytestmark = [pytest.mark.blender, pytest.mark.mocap]


def world_heads(bpy, ob, frame):
    bpy.context.scene.frame_set(frame)
    mw = np.array(ob.matrix_world)
    return {b.name: mw[:3, :3] @ np.array(b.head) + mw[:3, 3] for b in ob.pose.bones}


def test_the_panel_reads_a_still_root_z_up_inches_file_at_its_defaults(bpy_clean, ext, mocap, tmp_path):
    bpy = bpy_clean
    clip = load_clip(os.path.join(mocap, "cmu_amc", "16", "16_15.amc"), ImportSettings())[0].slice(0, 360)
    write_convention(clip, "Z up, inches, still root", tmp_path / "take.bvh")
    props = bpy.ops.motionctl.import_bvh.get_rna_type().properties
    for o in options(ImportSettings):  # the import options are generated from the same declaration as the CLI's
        assert o.name in props and props[o.name].description, o.name
    bpy.context.scene.render.fps = 30
    assert bpy.ops.motionctl.import_bvh(directory=str(tmp_path) + os.sep, files=[{"name": "take.bvh"}]) == {"FINISHED"}
    st = bpy.context.scene.motionctl
    ob = st.groups[0].armature
    assert "joint_Root" not in ob.data.bones and ob.data.bones[0].name == "root"
    assert "folded into 'root'" in st.last_import and "up axis Z" in st.last_import and "WARNING" not in st.last_import
    first, last = world_heads(bpy, ob, 1), world_heads(bpy, ob, 100)
    assert np.linalg.norm((last["root"] - first["root"])[:2]) > 1.0  # it walks
    for h in (first, last):
        # margin: 0.55 m between the head and the hips, 0.8 m to the feet
        assert h["head"][2] > h["root"][2] > max(h["lfoot"][2], h["rfoot"][2])  # it stands
        assert min(h["ltoes"][2], h["rtoes"][2]) < 0.15  # on the floor
    # Folding off: the still root stays the root, the body never moves, and training says why.
    assert bpy.ops.motionctl.import_bvh(directory=str(tmp_path) + os.sep, files=[{"name": "take.bvh"}],
                                        fold_roots=False) == {"FINISHED"}
    st.group = st.groups[-1].name
    assert st.groups[-1].armature.data.bones[0].name == "joint_Root"
    for c in st.clips:
        c.use = c.group == st.group
    with pytest.raises(RuntimeError, match="never move"):
        bpy.ops.motionctl.train(engine="matching")
    assert "Fold Extra Roots" in st.job_message and "\n" not in st.job_message


def test_the_panel_reads_every_convention_standing_and_walking(bpy_clean, ext, mocap, tmp_path):
    bpy = bpy_clean
    clip = load_clip(os.path.join(mocap, "cmu_amc", "16", "16_15.amc"), ImportSettings())[0].slice(0, 240)
    bpy.context.scene.render.fps = 30
    for i, name in enumerate(CONVENTIONS):
        write_convention(clip, name, tmp_path / f"take{i}.bvh")
        assert bpy.ops.motionctl.import_bvh(directory=str(tmp_path) + os.sep, files=[{"name": f"take{i}.bvh"}]) \
            == {"FINISHED"}
        ob = bpy.context.scene.motionctl.groups[-1].armature
        assert ob.data.bones[0].name == "root", name  # any extra root folded
        first, last = world_heads(bpy, ob, 1), world_heads(bpy, ob, 60)
        assert np.linalg.norm((last["root"] - first["root"])[:2]) > 0.8, name
        for h in (first, last):
            # margin: 0.55 m between the head and the hips, 0.77 m to the feet
            assert h["head"][2] > h["root"][2] > max(h["lfoot"][2], h["rfoot"][2]), name
            assert min(h["ltoes"][2], h["rtoes"][2]) < 0.15, name


BAKED = ("as read", "random rest orientations", "Maya-style joint orients (bones along X)", "Mixamo names", "Z up",
         "inches", "extra still root", "channels YXZ")


def test_bake_writes_the_same_world_motion_whatever_the_file_says(bpy_clean, ext, mocap, tmp_path):
    """Issue 58: what Bake writes onto the imported armature, in the world, is the same for the same
    motion written any way (a run of motion matching, mirroring on, baked by the panel's own
    ``bake_clip``): within 1 mm of the original's on every frame."""
    from conventions import write_variant

    from motionctl.engines import ENGINES, train_to_file
    from motionctl.io.library import import_library
    from motionctl.play.commands import Command, trace_of_commands
    from motionctl.play.session import Session
    from motionctl.settings import from_flat

    bpy = bpy_clean
    bpy.context.scene.render.fps = 30
    clips = [load_clip(os.path.join(mocap, "cmu_amc", "16", f"16_{t}.amc"), ImportSettings())[0] for t in ("15", "17")]
    trace = trace_of_commands(np.arange(40) / 10.0, [Command([0, 1.2, 0.6 if k >= 20 else 0.0, 0]) for k in range(40)])
    e = ENGINES["matching"]
    baked = {}
    for i, name in enumerate(BAKED):
        files = []
        for c in clips:
            files.append(f"{i}_{c.name}.bvh")
            write_variant(c.slice(0, int(5 * c.fps)), name, tmp_path / files[-1])
        assert bpy.ops.motionctl.import_bvh(directory=str(tmp_path) + os.sep, files=[{"name": f} for f in files]) \
            == {"FINISHED"}
        ob = bpy.context.scene.motionctl.groups[-1].armature
        library = import_library([str(tmp_path / f) for f in files]).groups[0].database.clips
        model, _ = train_to_file("matching", library, from_flat(e.Settings, dict(e.quick)), str(tmp_path / "m.npz"))
        run = Session(model, model.frame_table(library)).play_trace(trace)
        ext.operators.armature.bake_clip(ob, run, f"bake_{i}", scene_fps=30.0)
        world = []
        for f in range(1, int(ob.animation_data.action.frame_range[1]) + 1, 7):
            bpy.context.scene.frame_set(f)
            mw = np.array(ob.matrix_world)
            world.append(np.array([ob.pose.bones[n].head for n in ob["motionctl_joints"]]) @ mw[:3, :3].T + mw[:3, 3])
        baked[name] = np.array(world)
        err = np.abs(baked[name] - baked["as read"]).max()
        assert err < 1e-3, f"{name}: {1000 * err:.2f} mm"  # margin: measured 0.000 mm (the text's 1e-8 m), against 1 mm
