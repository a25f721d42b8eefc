"""Per-file caches and state: two .blend files in one folder and two unsaved sessions never share a
cache, saving moves caches beside the .blend with relative paths, reopening restores what the
panels show, nothing leaks from one file into another, and a cancelled import builds nothing."""

import os
import shutil
import tempfile
import time
from types import SimpleNamespace

import pytest
from blender_scene import room_collection

pytestmark = pytest.mark.blender
SMALL = ["demo_walk", "demo_walk_turn_left", "demo_run"]


def import_clips(bpy, folder, names):
    files = [{"name": n + ".bvh"} for n in names]
    assert bpy.ops.motionctl.import_bvh(directory=folder + os.sep, files=files) == {"FINISHED"}
    return bpy.context.scene.motionctl


def quick_fragments(st):
    pg = st.engines.fragments
    pg.trace_seconds, pg.held_out = 30.0, 0


def cache_files(folder):
    d = os.path.join(folder, "motionctl_cache")
    return sorted(os.listdir(d)) if os.path.isdir(d) else []


@pytest.mark.slow
def test_two_blend_files_in_one_folder_keep_their_own_caches(bpy_clean, demo_library, tmp_path):
    bpy = bpy_clean
    st = import_clips(bpy, demo_library, SMALL)
    quick_fragments(st)
    assert bpy.ops.motionctl.train(engine="fragments") == {"FINISHED"}
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "a.blend"))
    id_a = bpy.context.scene.motionctl.file_id
    bpy.ops.wm.read_factory_settings(use_empty=True)
    st = import_clips(bpy, demo_library, ["demo_jump", "demo_crouch"])
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "b.blend"))
    id_b = bpy.context.scene.motionctl.file_id
    assert id_a != id_b
    files = cache_files(str(tmp_path))
    assert any(f.startswith(id_a + "_database") for f in files) and any(f.startswith(id_b + "_database") for f in files)
    assert any(f.startswith(id_a + "_fragments") for f in files)
    # Reopening a.blend finds its own clips (every clip ticked trains), not b's.
    bpy.ops.wm.open_mainfile(filepath=str(tmp_path / "a.blend"))
    st = bpy.context.scene.motionctl
    assert st.file_id == id_a and st.groups[0].database.startswith("//motionctl_cache/")  # count: strings
    from motionctl.clip import MotionDatabase

    db = MotionDatabase.load(bpy.path.abspath(st.groups[0].database))
    assert sorted(c.name for c in db.clips) == sorted(SMALL)
    assert bpy.ops.motionctl.train(engine="fragments") == {"FINISHED"}


def test_two_unsaved_sessions_never_collide(bpy_clean, demo_library):
    bpy = bpy_clean
    st = import_clips(bpy, demo_library, SMALL)
    first = bpy.path.abspath(st.groups[0].database)
    bpy.ops.wm.read_factory_settings(use_empty=True)
    st = import_clips(bpy, demo_library, ["demo_jump"])
    second = bpy.path.abspath(st.groups[0].database)
    assert os.path.dirname(first) != os.path.dirname(second)
    assert first.startswith(os.path.join(tempfile.gettempdir(), "motionctl_cache"))
    assert os.path.exists(first) and os.path.exists(second)
    from motionctl.clip import MotionDatabase

    assert len(MotionDatabase.load(first).clips) == 3 and len(MotionDatabase.load(second).clips) == 1


def test_old_unsaved_caches_are_pruned_and_recent_ones_kept(bpy_clean, demo_library, ext):
    bpy = bpy_clean
    cache = ext.operators.cache

    st = import_clips(bpy, demo_library, ["demo_jump"])
    live = os.path.dirname(bpy.path.abspath(st.groups[0].database))
    root = os.path.dirname(live)
    old = os.path.join(root, "0ld5e55i0n")
    os.makedirs(old, exist_ok=True)
    with open(os.path.join(old, "0ld5e55i0n_lastrun.npz"), "wb") as f:
        f.write(b"x")
    month_ago = time.time() - 30 * 86400
    for path in (os.path.join(old, "0ld5e55i0n_lastrun.npz"), old):
        os.utime(path, (month_ago, month_ago))
    removed = cache.prune_temp()
    assert old in removed and not os.path.exists(old)
    assert os.path.isdir(live) and os.path.exists(bpy.path.abspath(st.groups[0].database))
    # a folder with one recent file among old ones is kept
    os.makedirs(old)
    for name, stamp in (("a.npz", month_ago), ("b.npz", time.time())):
        with open(os.path.join(old, name), "wb") as f:
            f.write(b"x")
        os.utime(os.path.join(old, name), (stamp, stamp))
    os.utime(old, (month_ago, month_ago))
    assert old not in cache.prune_temp() and os.path.isdir(old)


def test_saving_moves_caches_beside_the_blend_and_save_copy_keeps_the_open_files(bpy_clean, demo_library, tmp_path):
    bpy = bpy_clean
    st = import_clips(bpy, demo_library, SMALL)
    temp_db = bpy.path.abspath(st.groups[0].database)
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "saved.blend"))
    st = bpy.context.scene.motionctl
    assert st.groups[0].database.startswith("//motionctl_cache/")
    assert os.path.exists(bpy.path.abspath(st.groups[0].database)) and not os.path.exists(temp_db)
    own = (st.file_id, st.groups[0].database)
    other = tmp_path / "elsewhere"
    other.mkdir()
    bpy.ops.wm.save_as_mainfile(filepath=str(other / "copy.blend"), copy=True)
    st = bpy.context.scene.motionctl
    # count: strings
    assert (st.file_id, st.groups[0].database) == own  # the open file still uses its own caches
    copied = cache_files(str(other))
    assert len(copied) == 1 and not copied[0].startswith(own[0])
    bpy.ops.wm.open_mainfile(filepath=str(other / "copy.blend"))
    st = bpy.context.scene.motionctl
    assert st.file_id != own[0] and os.path.exists(bpy.path.abspath(st.groups[0].database))


def test_save_copy_of_an_unsaved_session_keeps_its_caches(bpy_clean, demo_library, tmp_path):
    bpy = bpy_clean
    st = import_clips(bpy, demo_library, SMALL)
    temp_db = bpy.path.abspath(st.groups[0].database)
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "copy.blend"), copy=True)
    st = bpy.context.scene.motionctl
    # count: paths
    assert bpy.path.abspath(st.groups[0].database) == temp_db and os.path.exists(temp_db)  # still usable
    assert len(cache_files(str(tmp_path))) == 1
    quick_fragments(st)
    assert bpy.ops.motionctl.train(engine="fragments") == {"FINISHED"}


def test_a_blend_copied_outside_blender_gets_its_own_caches(bpy_clean, demo_library, tmp_path):
    bpy = bpy_clean
    import_clips(bpy, demo_library, SMALL)
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "a.blend"))
    id_a = bpy.context.scene.motionctl.file_id
    bpy.ops.wm.read_factory_settings(use_empty=True)
    shutil.copy(tmp_path / "a.blend", tmp_path / "c.blend")
    bpy.ops.wm.open_mainfile(filepath=str(tmp_path / "c.blend"))
    st = bpy.context.scene.motionctl
    assert st.file_id != id_a and os.path.basename(st.groups[0].database).startswith(st.file_id)
    assert os.path.exists(bpy.path.abspath(st.groups[0].database))
    assert sum(f.startswith(id_a) for f in cache_files(str(tmp_path))) == 1  # a's own is untouched


@pytest.mark.slow
def test_reopening_restores_what_every_panel_shows(bpy_clean, demo_library, tmp_path, ext):
    bpy = bpy_clean
    state = ext.operators.state.STATE
    st = import_clips(bpy, demo_library, SMALL + ["demo_walk_turn_right"])
    quick_fragments(st)
    assert bpy.ops.motionctl.train(engine="fragments") == {"FINISHED"}
    st.engines.graph.threshold = 1.0
    assert bpy.ops.motionctl.train(engine="graph") == {"FINISHED"}
    room = room_collection(bpy, (7, 5))
    ev = st.evaluate
    ev.collection, ev.engine, ev.pairs, ev.headings, ev.lm_sample = room, "graph", 5, 12, 0.2
    assert bpy.ops.motionctl.evaluate() == {"FINISHED"}
    coverage = ev.coverage_xy
    trace = tmp_path / "t.csv"
    from motionctl.play.commands import PlayerSettings, generate_trace, write_trace

    write_trace(generate_trace(PlayerSettings(max_speed=2.0), 3.0, 10.0, seed=1), trace)
    st.engine, st.preview.trace_path = "fragments", str(trace)
    assert bpy.ops.motionctl.play_trace() == {"FINISHED"}
    assert bpy.ops.motionctl.show_coverage() == {"FINISHED"}
    assert "coverage" in state.overlays
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "scene.blend"))
    bpy.ops.wm.open_mainfile(filepath=str(tmp_path / "scene.blend"))
    # Opening a file clears what lived in memory: overlays, the evaluation, the last run.
    assert not state.overlays and state.evaluation is None and state.last_run is None
    st = bpy.context.scene.motionctl
    # exact: the float property as saved in the .blend, read back
    assert st.evaluate.coverage_xy == coverage and st.evaluate.evaluated == "graph"
    assert {m.engine for m in st.groups[0].models} == {"fragments", "graph"}
    labels = []

    class Layout:
        def label(self, text="", **_):
            labels.append(text)

        def __getattr__(self, name):
            return lambda *a, **k: self

    for name in ("MOTIONCTL_PT_controller", "MOTIONCTL_PT_engine_graph", "MOTIONCTL_PT_evaluate"):
        cls = getattr(bpy.types, name)
        cls.draw(SimpleNamespace(layout=Layout(), no_clips=cls.no_clips), bpy.context)
    assert any(t.startswith("fragments: ") for t in labels) and any(t.startswith("transitions: ") for t in labels)
    assert any(t.startswith("coverage ") for t in labels)
    # Everything the panels offer still works from the caches.
    assert bpy.ops.motionctl.show_coverage() == {"FINISHED"}
    bpy.context.view_layer.objects.active = st.groups[0].armature
    assert bpy.ops.motionctl.bake_best_path(seed=2) == {"FINISHED"}  # the embedding is rebuilt
    assert bpy.ops.motionctl.bake_run() == {"FINISHED"}  # the played run, from its cache
    assert st.groups[0].armature.animation_data.action.name.startswith(st.preview.action_name)


def test_unregister_removes_overlays_and_clears_state(bpy_clean, ext):
    import bpy

    state = ext.operators.state.STATE
    handle = bpy.types.SpaceView3D.draw_handler_add(lambda: None, (), "WINDOW", "POST_VIEW")
    state.overlays["coverage"] = handle
    state.last_run = object()
    ext.unregister()
    try:
        assert not state.overlays and state.last_run is None
        with pytest.raises(ValueError):  # the handler is gone: removing it again fails
            bpy.types.SpaceView3D.draw_handler_remove(handle, "WINDOW")
    finally:
        ext.register()


def test_a_cancelled_import_builds_nothing(bpy_clean, demo_library, ext, monkeypatch):
    bpy = bpy_clean
    original = ext.operators.background.Job._progress

    def cancel_midway(self, fraction, message):
        if fraction > 0.3:
            self.cancel()
        original(self, fraction, message)

    monkeypatch.setattr(ext.operators.background.Job, "_progress", cancel_midway)
    assert bpy.ops.motionctl.import_bvh(directory=demo_library + os.sep, files=[]) == {"CANCELLED"}
    st = bpy.context.scene.motionctl
    assert not st.groups and not st.clips and not bpy.data.armatures and not bpy.data.actions


def test_building_stopped_half_way_is_undone(bpy_clean, demo_library, ext):
    """The main-thread half of an import (armatures, actions) runs a clip per tick; Esc there
    removes everything it made."""
    from motionctl.io.library import import_library

    bpy = bpy_clean
    lib = ext.operators.library
    result = import_library([os.path.join(demo_library, n + ".bvh") for n in SMALL])
    built = {}
    steps = lib.add_library(bpy.context, result, "SCENE", built)
    next(steps), next(steps)  # two clips baked, then Esc
    steps.close()
    st = bpy.context.scene.motionctl
    assert len(st.clips) == 2 and bpy.data.armatures
    files = list(built["files"])
    lib.remove_built(bpy.context, built)
    assert not st.groups and not st.clips and not bpy.data.armatures and not bpy.data.actions
    assert not any(os.path.exists(f) for f in files)


def test_long_joint_names_import_whole(bpy_clean, tmp_path):
    """Names over Blender's 63 bytes used to crash the import half-way."""
    from bvh_fixtures import bvh_text, smooth_channels

    bpy = bpy_clean
    text = bvh_text(smooth_channels(40)).replace("JOINT Spine", "JOINT Spine_" + "x" * 80)
    (tmp_path / "long.bvh").write_text(text)
    assert bpy.ops.motionctl.import_bvh(directory=str(tmp_path) + os.sep, files=[{"name": "long.bvh"}],
                                        keep_calibration=True, axis_up="Y") == {"FINISHED"}
    ob = bpy.context.scene.motionctl.groups[0].armature
    assert list(ob["motionctl_joints"]) == [b.name for b in ob.data.bones]
