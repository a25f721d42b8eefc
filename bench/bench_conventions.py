"""Capture in other studios' conventions, read at the defaults: does the body come in upright, on the
floor, moving and human-sized?

    .venv/bin/python bench/bench_conventions.py [--mocap DIR] [--reader CHECKOUT]

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

from harness import ROOT, add_mocap, default_mocap  # noqa: E402,F401  (first: the checkout on the path)

from harness import environment  # noqa: E402
from conventions import CONVENTIONS, body_figures, write_convention  # noqa: E402
from motionctl.clip import MotionDatabase  # noqa: E402
from motionctl.io.library import ImportSettings, load_clip  # noqa: E402

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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_mocap(ap)
    ap.add_argument("--reader", default=ROOT, help="the checkout whose motionctl reads the files (default: this one)")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "conventions"))
    args = ap.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, rel in SOURCES.items():
            clip = load_clip(os.path.join(args.mocap, rel), ImportSettings())[0]
            rows.append({"source": label, "convention": "the capture itself", **body_figures(clip)})
            for name in CONVENTIONS:
                path = os.path.join(tmp, "take.bvh")
                write_convention(clip, name, path)
                out = os.path.join(tmp, "db.npz")
                said = read_with(os.path.abspath(args.reader), path, out)
                (got,) = MotionDatabase.load(out).clips
                row = {"source": label, "convention": name, **body_figures(got), **said}
                rows.append(row)
                print(f"{label:22s} {name:42s} upright {100 * row['upright']:5.1f}%  feet {100 * row['feet_off_floor']:+6.1f}"
                      f" cm  travel {row['travel']:5.2f} m  stature {row['stature']:5.2f} m  up {said['up']} "
                      f"{said['unit']}  {'; '.join(said['warnings'])}", flush=True)
    lines = ["# Capture in other conventions, read at the defaults", "",
             f"Reader: `{os.path.relpath(args.reader, ROOT) if args.reader != ROOT else 'this checkout'}`. "
             "Upright: frames with the head above the hips above the feet. Feet: the feet's lowest point "
             "above the floor (10th percentile over frames). Travel: farthest the root gets from its start. "
             "Stature: floor to head top (75th percentile), measured by this checkout on what was read; "
             "height reported: what the reader said.", "",
             "| source | convention | upright | feet above floor | root travel | stature | up, unit read | height reported | said |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        said = "; ".join(r.get("warnings", []) + [n for n in r.get("notes", []) if "folded" in n]) or ""
        lines.append(f"| {r['source']} | {r['convention']} | {100 * r['upright']:.0f}% | {100 * r['feet_off_floor']:+.1f} cm "
                     f"| {r['travel']:.2f} m | {r['stature']:.2f} m | {r.get('up', '')} {r.get('unit', '')} | "
                     f"{'%.2f m' % r['height'] if 'height' in r else ''} | {said.replace('|', '/')} |")
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out + ".md", "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
    with open(args.out + ".json", "w", encoding="utf-8") as fh:
        json.dump({"command": "python bench/bench_conventions.py", "environment": environment(), "rows": rows}, fh,
                  indent=1, default=str)
    print(f"wrote {args.out}.md and .json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
