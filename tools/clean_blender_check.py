"""The extension as a user gets it: installed from its zip into a Blender that has nothing but numpy.

    build/blenders/5.3.0/bin/python tools/clean_blender_check.py --zip dist/motionctl-0.1.0-linux_x64.zip \\
        --mocap ../shared/mocap --level full

Run with a Python whose environment holds only ``bpy`` (and the numpy that Blender release ships;
tools/blender_releases.py makes one per release); the zip's own wheels must bring everything else.
Validates the zip with that release's own validator, installs it into a fresh user folder with
the release's extension installer, checks the add-on is enabled and scikit-learn imports from the zip's wheels, then on real capture (CMU
subject 16's walks and turns), through the operators:

- ``smoke``: import 6 AMC clips -> train fragments -> play a trace -> bake -> build a motion graph;
- ``full``: the smoke steps, then train the planner -> evaluate the graph in a room -> bake a best
  path -> play the planner -> motion matching and Compare Engines -> retarget onto Rigify's
  metarig -> active learning.

Prints one line ``OK {json}`` (or ``FAIL {json}`` after the traceback) with the release, its
Python and numpy, the scikit-learn version the zip brought and each step's seconds; exits
non-zero on any error.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
import traceback

TRIALS = ("16_15", "16_17", "16_19", "16_21", "16_22", "16_11")  # walks and turns of CMU subject 16


class Check:
    """The steps, sharing the scene, the extension module and a user folder."""

    def __init__(self, zip_path: str, mocap: str, user: str):
        import bpy

        self.bpy, self.zip, self.mocap, self.user = bpy, os.path.abspath(zip_path), mocap, user
        self.ext = None

    @property
    def st(self):
        return self.bpy.context.scene.motionctl

    def install(self, result: dict) -> None:
        bpy = self.bpy
        import addon_utils

        # This release's own validator on the zip (it ships inside the bpy module), then its installer.
        cli = os.path.join(bpy.utils.system_resource("SCRIPTS"), "addons_core", "bl_pkg", "cli", "blender_ext.py")
        assert os.path.exists(cli), f"Blender's extension command line is missing: {cli}"
        res = subprocess.run([sys.executable, cli, "validate", self.zip], capture_output=True, text=True)
        assert res.returncode == 0, f"this release's validator refused the zip: {res.stdout}{res.stderr}"
        result["validates"] = True

        bpy.ops.extensions.package_install_files(filepath=self.zip, repo="user_default", enable_on_install=True)
        name = next((m.__name__ for m in addon_utils.modules() if m.__name__.endswith(".motionctl")), None)
        assert name is not None, "extension not installed"
        result["installs"] = True
        assert addon_utils.check(name)[1], f"{name} installed but not enabled"
        result["enables"] = True
        self.ext = sys.modules[name]
        import sklearn  # from the zip's wheels

        result["scikit_learn"] = sklearn.__version__
        for ob in list(bpy.data.objects):  # the default cube, camera and light (factory settings would
            bpy.data.objects.remove(ob)   # also reset the preferences, disabling the extension)

    def import_clips(self, result: dict) -> None:
        self.bpy.context.scene.render.fps = 30
        folder = os.path.join(self.mocap, "cmu_amc", "16")
        files = [{"name": n + ".amc"} for n in TRIALS]
        assert self.bpy.ops.motionctl.import_bvh(directory=folder + os.sep, files=files) == {"FINISHED"}
        assert len(self.st.clips) == len(TRIALS), self.st.last_import

    def train_fragments(self, result: dict) -> None:
        self.st.engines.fragments.trace_seconds, self.st.engines.fragments.held_out = 60.0, 1
        assert self.bpy.ops.motionctl.train(engine="fragments") == {"FINISHED"}

    def play_trace(self, result: dict) -> None:
        trace = os.path.join(self.user, "trace.csv")
        fr = self.ext.motionctl.engines.fragments
        fr.write_trace(fr.generate_trace(fr.PlayerSettings(max_speed=1.5), 6.0, 10.0, seed=3), trace)
        self.st.engine, self.st.preview.trace_path = "fragments", trace
        assert self.bpy.ops.motionctl.play_trace() == {"FINISHED"}

    def bake(self, result: dict) -> None:
        import numpy as np

        assert self.bpy.ops.motionctl.bake_run() == {"FINISHED"}
        ob = self.st.groups[0].armature
        assert ob.animation_data.action is not None and ob.animation_data.action.frame_range[1] > 30
        self.bpy.context.scene.frame_set(20)
        assert np.all(np.isfinite(np.array([b.head for b in ob.pose.bones])))

    def build_graph(self, result: dict) -> None:
        self.st.engines.graph.threshold = 0.3
        assert self.bpy.ops.motionctl.train(engine="graph") == {"FINISHED"}

    def train_planner(self, result: dict) -> None:
        p = self.st.engines.planning
        p.iterations, p.trajectories, p.n_trees = 4, 40, 5
        assert self.bpy.ops.motionctl.train(engine="planning") == {"FINISHED"}

    def evaluate(self, result: dict) -> None:
        bpy, scene = self.bpy, self.bpy.context.scene
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
        ev = self.st.evaluate
        ev.collection, ev.engine, ev.pairs, ev.headings, ev.lm_sample = room, "graph", 10, 12, 0.2
        assert bpy.ops.motionctl.evaluate() == {"FINISHED"}
        assert ev.nodes > 0 and ev.coverage_xy > 0, (ev.nodes, ev.coverage_xy)

    def best_path(self, result: dict) -> None:
        self.bpy.context.view_layer.objects.active = self.st.groups[0].armature
        assert self.bpy.ops.motionctl.bake_best_path(seed=1) == {"FINISHED"}

    def play_planner(self, result: dict) -> None:
        self.st.engine = "planning"
        assert self.bpy.ops.motionctl.play_trace() == {"FINISHED"}

    def matching_and_compare(self, result: dict) -> None:
        bpy, st = self.bpy, self.st
        assert bpy.ops.motionctl.train(engine="matching") == {"FINISHED"}
        st.engine = "matching"
        assert bpy.ops.motionctl.play_trace() == {"FINISHED"}
        assert bpy.ops.motionctl.compare() == {"FINISHED"}
        compared = json.loads(st.preview.compare)
        assert {r["engine"] for r in compared["rows"]} == {"fragments", "planning", "graph", "matching"}, compared

    def retarget_rigify(self, result: dict) -> None:
        import addon_utils

        bpy, st = self.bpy, self.st
        addon_utils.enable("rigify", default_set=True)  # an animator's rig: Rigify's human metarig
        assert bpy.ops.object.armature_human_metarig_add() == {"FINISHED"}
        rig = bpy.context.active_object
        st.retarget.target, st.retarget.source, st.retarget.nla = rig, "RUN", True
        assert bpy.ops.motionctl.retarget() == {"FINISHED"}
        strip = rig.animation_data.nla_tracks[0].strips[0]
        assert rig.data.bones["spine"].parent.name == "root" and strip.frame_end > 30, strip.frame_end

    def active_learning(self, result: dict) -> None:
        bpy, st = self.bpy, self.st
        st.engines.active.seed_clip = "16_15"
        assert bpy.ops.motionctl.active_start() == {"FINISHED"}
        assert bpy.ops.motionctl.active_suggest() == {"FINISHED"} and len(st.active.candidates) > 0
        assert bpy.ops.motionctl.active_auto() == {"FINISHED"} and st.active.steps == 1


SMOKE = ("install", "import_clips", "train_fragments", "play_trace", "bake", "build_graph")
FULL = SMOKE + ("train_planner", "evaluate", "best_path", "play_planner", "matching_and_compare",
                "retarget_rigify", "active_learning")
LEVELS = {"smoke": SMOKE, "full": FULL}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--zip", required=True)
    ap.add_argument("--mocap", required=True)
    ap.add_argument("--level", choices=list(LEVELS), default="full")
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

    result = {"blender": bpy.app.version_string, "python": sys.version.split()[0], "numpy": np.__version__,
              "level": args.level, "validates": False, "installs": False, "enables": False, "scikit_learn": None, "seconds": {}}
    check = Check(args.zip, args.mocap, user)
    start = time.perf_counter()
    try:
        for step in LEVELS[args.level]:
            t = time.perf_counter()
            getattr(check, step)(result)
            result["seconds"][step] = round(time.perf_counter() - t, 2)
            print(f"  {step}: {result['seconds'][step]:.1f} s", flush=True)
    except Exception:  # noqa: BLE001 - anything at all fails the check, with its traceback
        traceback.print_exc()
        result["failed_at"] = step
        result["total_seconds"] = round(time.perf_counter() - start, 2)
        print("FAIL", json.dumps(result), flush=True)
        return 1
    result["total_seconds"] = round(time.perf_counter() - start, 2)
    print("OK", json.dumps(result), flush=True)
    return 0


def leave(code: int) -> None:
    """Exit with ``code``.  Blender 4.2 and 4.3 as a Python module crash at interpreter exit once
    Rigify has been enabled (with or without motionctl: ``import bpy; addon_utils.enable("rigify")``
    alone exits with SIGSEGV), so there the process ends without the interpreter's teardown."""
    sys.stdout.flush()
    sys.stderr.flush()
    bpy = sys.modules.get("bpy")
    if bpy is not None and tuple(bpy.app.version) < (4, 4, 0):
        os._exit(code)
    sys.exit(code)


if __name__ == "__main__":
    leave(main())
