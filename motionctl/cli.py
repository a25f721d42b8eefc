"""Command line: ``python -m motionctl <command>``.

demo     generate (or take) a library, import it, save a .blend with armatures and actions
info     read files or folders and print the skeleton groups they form
convert  write any readable clip (BVH or AMC) as BVH

Everything but the .blend step is the engine's.  The demo's .blend is written by the
extension's own operators running in Blender-as-a-module (``bpy``), loaded from this
repository the way Blender loads an extension; the engine modules themselves never import bpy.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time

from . import demo_data
from .library import ImportSettings, import_library, read_clip


def load_extension():
    """The repository's Blender extension package (registered), for commands that need Blender."""
    name = "motionctl_extension"
    if name in sys.modules:
        return sys.modules[name]
    try:
        import importlib

        importlib.import_module("bpy")
    except ImportError:
        raise SystemExit("this command needs Blender's Python module: pip install bpy==5.0.1 (Python 3.11)") from None
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    spec = importlib.util.spec_from_file_location(name, os.path.join(root, "__init__.py"), submodule_search_locations=[root])
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    module.register()
    return module


def cmd_demo(args) -> int:
    t0 = time.perf_counter()
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    if args.mocap:
        source = os.path.abspath(args.mocap)
        print(f"motion: real capture from {source}")
    else:
        source = os.path.join(out, "demo_bvh")
        paths = demo_data.write_demo_library(source, seed=args.seed)
        print(f"motion: {len(paths)} synthetic clips (seed {args.seed}) written to {source}")
    result = import_library(source)
    print(result.summary())
    if not result.groups:
        print("nothing to import", file=sys.stderr)
        return 1
    files = [f for g in result.groups for f in g.files]
    ext = load_extension()
    blend = os.path.join(out, "motionctl_demo.blend")
    made = ext.operators.demo.build_demo_blend(files, blend)
    print(f"wrote {blend}: {len(made['armatures'])} armature(s) {made['armatures']}, {len(made['actions'])} action(s)")
    print(f"demo finished in {time.perf_counter() - t0:.1f} s")
    return 0


def cmd_info(args) -> int:
    settings = ImportSettings(unit_scale=args.unit_scale, keep_calibration=args.keep_calibration)
    t0 = time.perf_counter()
    result = import_library(args.paths, settings)
    print(result.summary())
    for i, g in enumerate(result.groups, 1):
        for c in g.database.clips:
            print(f"  [{i}] {c.name}: {c.n_frames} frames, {c.fps:g} fps, {c.duration:.2f} s, tags {sorted(c.tags)}")
    print(f"read in {time.perf_counter() - t0:.2f} s")
    return 1 if result.failed else 0


def cmd_convert(args) -> int:
    from .bvh import write_bvh

    clip = read_clip(args.input, ImportSettings(unit_scale=args.unit_scale))
    write_bvh(clip, args.output)
    print(f"wrote {args.output}: {clip.n_frames} frames at {clip.fps:g} fps, {clip.skeleton.n_joints} joints")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m motionctl", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    d = sub.add_parser("demo", help="import a library and write a .blend with armatures and actions")
    d.add_argument("--out", required=True, help="output folder")
    d.add_argument("--mocap", help="folder of real BVH or ASF/AMC files (default: generated demo clips)")
    d.add_argument("--seed", type=int, default=0, help="seed of the generated demo clips")
    d.set_defaults(func=cmd_demo)
    i = sub.add_parser("info", help="print the skeleton groups of files or folders")
    i.add_argument("paths", nargs="+")
    i.add_argument("--unit-scale", type=float, help="metres per file unit (default: automatic)")
    i.add_argument("--keep-calibration", action="store_true", help="keep leading T-pose frames")
    i.set_defaults(func=cmd_info)
    c = sub.add_parser("convert", help="write a BVH or AMC clip as BVH")
    c.add_argument("input")
    c.add_argument("output")
    c.add_argument("--unit-scale", type=float)
    c.set_defaults(func=cmd_convert)
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)
