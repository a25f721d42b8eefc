"""Batch export for game engines from the command line: clips (BVH or ASF/AMC), or traces played
through a controller trained on them, retargeted onto the character of a .blend and written one
file per take for Unreal (FBX, cm), Unity (FBX, m) or Godot (.glb).

    .venv/bin/python tools/export_game.py --blend hero.blend --armature Hero --preset unreal \\
        --out game/anims ../shared/mocap/cmu_amc/16/16_15.amc ../shared/mocap/cmu_amc/16/16_58.amc
    .venv/bin/python tools/export_game.py --blend hero.blend --armature Hero --preset godot --out anims \\
        --engine matching --trace run1.csv --trace run2.csv CLIPS...   # the clips train the controller

Blender (the bpy module) runs headless with the extension registered; the work is the Retarget
panel's Batch Export operator (``motionctl.export_batch``), so the files are the panel's.  Bad input
(a missing file, a folder that cannot be written, a clip that does not read) is one line naming
it, and exit status 2; an interrupted run leaves no half-written file (each is written beside its
name and moved into place).
"""

from __future__ import annotations

import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from motionctl.errors import MotionctlError  # noqa: E402
from motionctl.retarget.export import PRESETS  # noqa: E402


def parse(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("clips", nargs="+", help="BVH or ASF/AMC clips (with --trace: the controller's library)")
    ap.add_argument("--blend", required=True, help="the .blend with the character's armature")
    ap.add_argument("--armature", required=True, help="the armature object's name")
    ap.add_argument("--preset", required=True, choices=[p.lower() for p in PRESETS], help="the game engine")
    ap.add_argument("--out", required=True, help="folder for the files (made if missing)")
    ap.add_argument("--trace", action="append", default=[], dest="traces",
                    help="a trace file (CSV/JSON) to play through a controller trained on the clips (repeat it)")
    ap.add_argument("--engine", default="matching", help="the controller trained on the clips for --trace")
    ap.add_argument("--root-motion", default="BONE", choices=("BONE", "IN_PLACE"))
    ap.add_argument("--prefix", default="", help="prefix of the takes' names")
    ap.add_argument("--fps", type=int, default=0, help="frames per second (default: the .blend's)")
    return ap.parse_args(argv)


def main(argv=None) -> int:
    args = parse(argv)
    try:
        for path in [args.blend, *args.clips, *args.traces]:
            if not os.path.isfile(path):
                raise MotionctlError(f"{os.path.abspath(path)}: no such file")
        run(args, args.out)
    except MotionctlError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted: the files written so far are whole", file=sys.stderr)
        return 130
    return 0


def run(args, out: str) -> None:
    from tools.extension import load_extension

    ext = load_extension()
    import bpy

    try:  # the extension's own copy of the package raises its own MotionctlError
        out = ext.operators.export.writable_folder(out, "output folder")
    except ext.motionctl.errors.MotionctlError as exc:
        raise MotionctlError(str(exc)) from None
    assert bpy.ops.wm.open_mainfile(filepath=os.path.abspath(args.blend)) == {"FINISHED"}
    ob = bpy.data.objects.get(args.armature)
    if ob is None or ob.type != "ARMATURE":
        raise MotionctlError(f"{args.blend}: no armature object named {args.armature!r}")
    scene = bpy.context.scene
    if args.fps:
        scene.render.fps, scene.render.fps_base = args.fps, 1.0
    folders: dict = {}
    for path in args.clips:
        folders.setdefault(os.path.dirname(os.path.abspath(path)), []).append(os.path.basename(path))
    st = scene.motionctl
    before = {g.name for g in st.groups}  # an animator's .blend may hold clips imported before: not ours
    for folder, names in folders.items():
        bpy.ops.motionctl.import_bvh(directory=folder + os.sep, files=[{"name": n} for n in names])
    summary = st.last_import
    groups = [g.name for g in st.groups if g.name not in before]
    got = {c.name for c in st.clips if c.group in groups}
    failed = [p for p in args.clips if os.path.splitext(os.path.basename(p))[0] not in got]
    if failed:
        raise MotionctlError(f"{os.path.abspath(failed[0])}: could not be read ({summary})")
    if len(groups) != 1:
        raise MotionctlError(f"the clips are on {len(groups)} different skeletons: export them one skeleton at a time")
    st.group = groups[0]  # the group the batch (and a controller for --trace) works on
    rt = st.retarget
    rt.target, rt.root_motion, rt.action_prefix, rt.nla = ob, args.root_motion, args.prefix, False
    rt.export_preset, rt.export_folder = args.preset.upper(), out
    if args.traces:
        st.engine = args.engine
        if bpy.ops.motionctl.train(engine=args.engine) != {"FINISHED"}:
            raise MotionctlError(f"training {args.engine} on the clips failed: {st.job_message}")
        st.traces.clear()
        for t in args.traces:
            st.traces.add().path = os.path.abspath(t)
        rt.source = "TRACES"
    else:
        rt.source = "GROUP"
    try:
        bpy.ops.motionctl.export_batch()
    except RuntimeError as exc:  # the operator's report: one line naming what failed
        raise MotionctlError(str(exc).replace("Error: ", "").strip()) from None
    print(f"{PRESETS[args.preset.upper()].label}: wrote {out}")


if __name__ == "__main__":
    sys.exit(main())
