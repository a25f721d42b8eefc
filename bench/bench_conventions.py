"""Capture in other studios' conventions: does the body come in upright, on the floor, moving and
human-sized, and does every engine then play the same?

    .venv/bin/python bench/bench_conventions.py [--mocap DIR] [--reader CHECKOUT] [--engines ...] [--quick]

Engines (``rows``): CMU subject 16's walk, two 90-degree turns and a walk (ASF/AMC, the first 6 s
of each) written as BVH in every way of ``tests/conventions.py``'s ``CORPUS`` (random rest
orientations, Maya-style joint orients, Mixamo, Unreal, Character Creator and Rigify names, Z up,
+Z forward, centimetres, metres, inches, two other Euler orders, an extra still root, a root that
carries the motion, zero-length and missing end sites, 60, 30 and 24 fps), read back at the
defaults, and every engine trained at its defaults (its seed) on each and played on the same
commands: each row gives the share of frames with the head over 0.2 m above the hips, the largest
world distance from what the same engine plays on the file as read (mm, over the frames both
play), and the 95th percentile over frames of the mean distance between the two runs' joints in
the root frame (m).  ``--quick``: the engines' quick settings.

Import (``import``):
Each real source clip (CMU subject 16's walk through its ASF/AMC, a Character Creator walk) is
written as BVH in each convention of ``tests/conventions.py`` (a still root at the origin with the
body metres away, a root carrying the motion with the body at an offset, Z-up and Y-up axes,
centimetres and inches, a head with no end site), imported with ``import_library``'s defaults, and
measured: share of frames upright, feet off the floor, root travel, stature, and what was decided
and said.  ``--reader`` imports with another checkout's motionctl (e.g. the commit before a change)
and measures with this one, for a before/after table.  Writes bench/results/conventions.md/.json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

from harness import ROOT, add_mocap, default_mocap  # noqa: E402,F401  (first: the checkout on the path)

from harness import environment  # noqa: E402
from conventions import CONVENTIONS, CORPUS, body_figures, write_convention, write_variant  # noqa: E402
import numpy as np  # noqa: E402
from motionctl.clip import MotionDatabase  # noqa: E402
from motionctl.engines import ENGINES, train_to_file  # noqa: E402
from motionctl.io.library import ImportSettings, import_library, load_clip  # noqa: E402
from motionctl.play.commands import Command, trace_of_commands  # noqa: E402
from motionctl.play.session import Session  # noqa: E402
from motionctl.rootframe import positions_in_root_frame  # noqa: E402
from motionctl.settings import from_flat  # noqa: E402

TRIALS = ("15", "17", "19", "21")  # CMU 16: walk, 90 degrees left, 90 degrees right, walk

SOURCES = {"CMU 16_15 (ASF/AMC)": "cmu_amc/16/16_15.amc", "CC_Base walk": "cc_base/cc_cmu_07_02_walk.bvh"}
READ = """import json, sys
sys.path.insert(0, sys.argv[1])
from motionctl.io.library import import_library
res = import_library([sys.argv[2]])
(group,) = res.groups
group.database.save(sys.argv[3])
info = res.orientations[sys.argv[2]]
print(json.dumps({"up": info.up, "unit": info.unit, "notes": group.notes, "height": info.height,
                  "warnings": list(getattr(info, "warnings", []))}))
"""


def read_with(checkout: str, path: str, out: str) -> dict:
    """Import ``path`` with the motionctl of ``checkout`` (a subprocess); the database goes to ``out``."""
    res = subprocess.run([sys.executable, "-c", READ, checkout, path, out], capture_output=True, text=True)
    if res.returncode:
        raise RuntimeError(res.stderr[-2000:])
    return json.loads(res.stdout.strip().splitlines()[-1])


def trace(seconds: float = 10.0, rate: float = 10.0):
    """A walk ahead, a left turn, a right jog, a stop, a quarter each (the contract's commands), timed."""
    n = int(seconds * rate)
    commands = [Command([[0, 1.2, 0, 0], [0, 1.0, 0.8, 0], [0.8, 2.0, -0.5, 0], [0, 0, 0, 0]][k * 4 // n])
                for k in range(n)]
    return trace_of_commands(np.arange(n) / rate, commands)


def engine_rows(mocap: str, engines, quick: bool, tmp: str) -> list:
    """One row per engine and corpus variant (module docstring)."""
    files = [os.path.join(mocap, "cmu_amc", "16", f"16_{t}.amc") for t in TRIALS]
    clips = [c.slice(0, min(c.n_frames, int(6 * c.fps))) for c in import_library(files).groups[0].database.clips]
    libraries = {}
    for v, name in enumerate(CORPUS):
        paths = []
        for c in clips:
            paths.append(os.path.join(tmp, f"v{v}_{c.name}.bvh"))
            write_variant(c, name, paths[-1])
        libraries[name] = import_library(paths).groups[0].database.clips
    rows = []
    for engine in engines:
        e = ENGINES[engine]
        settings = from_flat(e.Settings, e.quick) if quick else e.Settings()
        base = None
        for name, library in libraries.items():
            t0 = time.perf_counter()
            model, _ = train_to_file(engine, library, settings, os.path.join(tmp, "model.npz"))
            run = Session(model, model.frame_table(library)).play_trace(trace())
            pos = run.world()[0]
            local = positions_in_root_frame(run)
            extra = pos.shape[1] - len(clips[0].skeleton.names)  # an extra root the import kept
            pos, local = pos[:, extra:], local[:, extra:]
            if base is None:
                base = (pos, local)
            n = min(len(pos), len(base[0]))
            head = clips[0].skeleton.names.index("head")
            row = {"engine": engine, "variant": name,
                   "head_above_hips_share": float(np.mean(pos[:, head, 2] > pos[:, 0, 2] + 0.2)),
                   "world_error_mm": float(1000 * np.abs(pos[:n] - base[0][:n]).max()),
                   "pose_distance_p95": float(np.percentile(np.linalg.norm(local[:n] - base[1][:n], axis=-1).mean(axis=1), 95)),
                   "frames": int(len(pos)), "base_frames": int(len(base[0])), "seconds": round(time.perf_counter() - t0, 1)}
            rows.append(row)
            print(f"{engine:10s} {name:42s} head up {100 * row['head_above_hips_share']:5.1f}%  world "
                  f"{row['world_error_mm']:9.3f} mm  pose p95 {100 * row['pose_distance_p95']:6.2f} cm  "
                  f"frames {row['frames']}/{row['base_frames']}  {row['seconds']} s", flush=True)
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_mocap(ap)
    ap.add_argument("--reader", default=ROOT, help="the checkout whose motionctl reads the files (default: this one)")
    ap.add_argument("--engines", nargs="*", default=sorted(ENGINES), choices=sorted(ENGINES))
    ap.add_argument("--quick", action="store_true", help="the engines' quick settings (default: their defaults)")
    ap.add_argument("--out", default=None, help="results path without extension (default: bench/results/"
                    "conventions, or conventions_quick with --quick)")
    args = ap.parse_args(argv)
    args.out = args.out or os.path.join(ROOT, "bench", "results", "conventions_quick" if args.quick else "conventions")
    with tempfile.TemporaryDirectory() as tmp:
        rows = engine_rows(args.mocap, args.engines, args.quick, tmp)
    imported = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, rel in SOURCES.items():
            clip = load_clip(os.path.join(args.mocap, rel), ImportSettings())[0]
            imported.append({"source": label, "convention": "the capture itself", **body_figures(clip)})
            for name in CONVENTIONS:
                path = os.path.join(tmp, "take.bvh")
                write_convention(clip, name, path)
                out = os.path.join(tmp, "db.npz")
                said = read_with(os.path.abspath(args.reader), path, out)
                (got,) = MotionDatabase.load(out).clips
                row = {"source": label, "convention": name, **body_figures(got), **said}
                imported.append(row)
                print(f"{label:22s} {name:42s} upright {100 * row['upright']:5.1f}%  feet {100 * row['feet_off_floor']:+6.1f}"
                      f" cm  travel {row['travel']:5.2f} m  stature {row['stature']:5.2f} m  up {said['up']} "
                      f"{said['unit']}  {'; '.join(said['warnings'])}", flush=True)
    lines = ["# The same motion in every convention: what every engine plays", "",
             "Settings: " + ("each engine's quick settings" if args.quick else "each engine at its defaults") + ", its seed. "
             "CMU 16_15, 16_17, 16_19, 16_21 (6 s each) written each way, read at the defaults, trained "
             "and played on 10 s of commands (walk, turn left, jog right, stop). Head up: share of frames with the "
             "head over 0.2 m above the hips. World: largest distance of any joint from the run on the file "
             "as read. Pose p95: 95th percentile over frames of the joints' mean distance in the root frame.", "",
             "| engine | variant | head up | world (mm) | pose p95 (cm) | frames |", "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['engine']} | {r['variant']} | {100 * r['head_above_hips_share']:.1f}% | "
                     f"{r['world_error_mm']:.3f} | {100 * r['pose_distance_p95']:.2f} | {r['frames']}/{r['base_frames']} |")
    lines += ["", "# Capture in other conventions, read at the defaults", "",
             f"Reader: `{os.path.relpath(args.reader, ROOT) if args.reader != ROOT else 'this checkout'}`. "
             "Upright: frames with the head above the hips above the feet. Feet: the feet's lowest point "
             "above the floor (10th percentile over frames). Travel: farthest the root gets from its start. "
             "Stature: floor to head top (75th percentile), measured by this checkout on what was read; "
             "height reported: what the reader said.", "",
             "| source | convention | upright | feet above floor | root travel | stature | up, unit read | height reported | said |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in imported:
        said = "; ".join(r.get("warnings", []) + [n for n in r.get("notes", []) if "folded" in n]) or ""
        lines.append(f"| {r['source']} | {r['convention']} | {100 * r['upright']:.0f}% | {100 * r['feet_off_floor']:+.1f} cm "
                     f"| {r['travel']:.2f} m | {r['stature']:.2f} m | {r.get('up', '')} {r.get('unit', '')} | "
                     f"{'%.2f m' % r['height'] if 'height' in r else ''} | {said.replace('|', '/')} |")
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out + ".md", "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
    with open(args.out + ".json", "w", encoding="utf-8") as fh:
        json.dump({"command": "python bench/bench_conventions.py" + (" --quick" if args.quick else ""),
                   "environment": environment(), "settings": "quick" if args.quick else "defaults",
                   "engines": args.engines, "rows": rows, "import": imported}, fh, indent=1, default=str)
    print(f"wrote {args.out}.md and .json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
