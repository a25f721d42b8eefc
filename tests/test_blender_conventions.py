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
