"""The extension as a user gets it: installed from its zip into a Blender that has nothing but numpy.

    .venv-blender/bin/python tools/clean_blender_check.py --zip dist/motionctl-0.1.0-linux_x64.zip \\
        --mocap ../shared/mocap --user /tmp/motionctl_user

Run with a Python whose environment holds only ``bpy`` (and the numpy Blender ships); the zip's
own wheels must bring everything else.  Installs the zip into a fresh user folder, enables it,
then on real capture: import (in the background job's synchronous form) -> train fragments ->
train the planner -> build a motion graph -> evaluate it in a room -> play a trace -> bake ->
bake a best path -> motion matching and Compare Engines -> retarget onto a Rigify metarig ->
active learning; prints a JSON line of timings and exits non-zero on any error.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import tempfile
import time
import traceback

TRIALS = ("16_15", "16_17", "16_19", "16_21", "16_22", "16_11")  # walks and turns of CMU subject 16


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--zip", required=True)
    ap.add_argument("--mocap", required=True)
    ap.add_argument("--user", default=None, help="Blender user folder (default: a new temporary one)")
    args = ap.parse_args(argv)
    for name in ("scipy", "sklearn", "joblib"):
        if importlib.util.find_spec(name) is not None:
            print(f"FAIL: {name} is importable before the extension is installed: not a clean Blender", flush=True)
            return 1
    user = args.user or tempfile.mkdtemp(prefix="motionctl_user_")
    if os.environ.get("BLENDER_USER_RESOURCES") != user:
        os.environ["BLENDER_USER_RESOURCES"] = user  # read when bpy starts: must be set before the import
    import bpy
    import numpy as np

    times = {}
    t = time.perf_counter()

    def lap(name):
        nonlocal t
        now = time.perf_counter()
        times[name] = round(now - t, 2)
        t = now
        print(f"  {name}: {times[name]:.1f} s", flush=True)

    try:
        bpy.ops.extensions.package_install_files(filepath=os.path.abspath(args.zip), repo="user_default",
                                                 enable_on_install=True)
        import addon_utils

        assert any(m.__name__.endswith(".motionctl") for m in addon_utils.modules()), "extension not installed"
        import sklearn  # noqa: F401  (from the zip's wheels)
        lap("install")
        for ob in list(bpy.data.objects):  # the default cube, camera and light (factory settings would
            bpy.data.objects.remove(ob)   # also reset the preferences, disabling the extension)
        scene = bpy.context.scene
        scene.render.fps = 30
        folder = os.path.join(args.mocap, "cmu_amc", "16")
        assert bpy.ops.motionctl.import_bvh(directory=folder + os.sep, files=[{"name": n + ".amc"} for n in TRIALS]) \
            == {"FINISHED"}
        st = scene.motionctl
        assert len(st.clips) == len(TRIALS), st.last_import
        lap("import")
        st.engines.fragments.trace_seconds, st.engines.fragments.held_out = 60.0, 1
        assert bpy.ops.motionctl.train(engine="fragments") == {"FINISHED"}
        lap("train fragments")
        p = st.engines.planning
        p.iterations, p.trajectories, p.n_trees = 4, 40, 5
        assert bpy.ops.motionctl.train(engine="planning") == {"FINISHED"}
        lap("train planner")
        st.engines.graph.threshold = 0.3
        assert bpy.ops.motionctl.train(engine="graph") == {"FINISHED"}
        lap("build graph")
        room = bpy.data.collections.new("room")
        scene.collection.children.link(room)
        bpy.ops.mesh.primitive_plane_add(size=1, location=(4, 3, 0))
        floor = bpy.context.active_object
        floor.name, floor.scale = "floor", (8, 6, 1)
        bpy.ops.mesh.primitive_cube_add(size=1, location=(4, 3, 0.5))
        box = bpy.context.active_object
        box["motionctl_kind"] = "wall"
        for ob in (floor, box):
            for c in list(ob.users_collection):
                c.objects.unlink(ob)
            room.objects.link(ob)
        ev = st.evaluate
        ev.collection, ev.engine, ev.pairs, ev.headings, ev.lm_sample = room, "graph", 10, 12, 0.2
        assert bpy.ops.motionctl.evaluate() == {"FINISHED"}
        assert ev.nodes > 0 and ev.coverage_xy > 0, (ev.nodes, ev.coverage_xy)
        lap("evaluate")
        trace = os.path.join(user, "trace.csv")
        ext = sys.modules[next(m.__name__ for m in addon_utils.modules() if m.__name__.endswith(".motionctl"))]
        fr = ext.motionctl.engines.fragments
        fr.write_trace(fr.generate_trace(fr.PlayerSettings(max_speed=1.5), 6.0, 10.0, seed=3), trace)
        st.engine, st.preview.trace_path = "fragments", trace
        assert bpy.ops.motionctl.play_trace() == {"FINISHED"}
        lap("play trace")
        assert bpy.ops.motionctl.bake_run() == {"FINISHED"}
        ob = st.groups[0].armature
        assert ob.animation_data.action is not None and ob.animation_data.action.frame_range[1] > 30
        lap("bake")
        bpy.context.view_layer.objects.active = ob
        assert bpy.ops.motionctl.bake_best_path(seed=1) == {"FINISHED"}
        lap("best path")
        scene.frame_set(20)
        heads = np.array([b.head for b in ob.pose.bones])
        assert np.all(np.isfinite(heads))
        st.engine = "planning"
        assert bpy.ops.motionctl.play_trace() == {"FINISHED"}
        lap("play the planner")
        assert bpy.ops.motionctl.train(engine="matching") == {"FINISHED"}
        st.engine = "matching"
        assert bpy.ops.motionctl.play_trace() == {"FINISHED"}
        assert bpy.ops.motionctl.compare() == {"FINISHED"}
        compared = json.loads(st.preview.compare)
        assert {r["engine"] for r in compared["rows"]} == {"fragments", "planning", "graph", "matching"}, compared
        lap("motion matching and Compare Engines")
        addon_utils.enable("rigify", default_set=True)  # an animator's rig: Rigify's human metarig
        assert bpy.ops.object.armature_human_metarig_add() == {"FINISHED"}
        rig = bpy.context.active_object
        st.retarget.target, st.retarget.source, st.retarget.nla = rig, "RUN", True
        assert bpy.ops.motionctl.retarget() == {"FINISHED"}
        strip = rig.animation_data.nla_tracks[0].strips[0]
        assert rig.data.bones["spine"].parent.name == "root" and strip.frame_end > 30, strip.frame_end
        lap("retarget onto a Rigify metarig")
        st.engines.active.seed_clip = "16_15"
        assert bpy.ops.motionctl.active_start() == {"FINISHED"}
        assert bpy.ops.motionctl.active_suggest() == {"FINISHED"} and len(st.active.candidates) > 0
        assert bpy.ops.motionctl.active_auto() == {"FINISHED"} and st.active.steps == 1
        lap("active learning")
    except Exception:  # noqa: BLE001 - anything at all fails the check, with its traceback
        traceback.print_exc()
        print("FAIL", json.dumps(times), flush=True)
        return 1
    print("OK", json.dumps(times), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
