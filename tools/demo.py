"""The demo: a small library, a trained controller and its run, in a .blend that renders it.

    .venv/bin/python tools/demo.py --out demo_out                 # generated walks, runs, turns...
    .venv/bin/python tools/demo.py --out demo_real --mocap ../shared/mocap/cmu_amc/16
    .venv/bin/python tools/demo.py --out /tmp/demo_quick --quick  # a small run, in seconds

Checks first that everything it needs imports (Blender as a Python module above all), else stops
at once with one line saying what to install or which Python to use.  Generates (or takes) a
library, imports it, trains a motion-fragment controller on (up to a minute of) its locomotion
with the engine, drives it with a generated player's trace, writes the run as BVH, then imports
the library into Blender-as-a-module with the extension's own operator and saves
``motionctl_demo.blend`` with one armature per skeleton, one action per clip and the run, staged
to render: a mannequin, a floor, a camera following the character, Workbench (F12 shows it).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

# What the demo imports besides the standard library: (module, the package that installs it).
NEEDS = (("numpy", "numpy"), ("scipy", "scipy"), ("sklearn", "scikit-learn"), ("joblib", "joblib"),
         ("threadpoolctl", "threadpoolctl"))
BPY = {(3, 11): "5.0.1", (3, 13): "5.3.0"}  # the bpy wheel of each Python that has one (constraints.txt)
# Locomotion first: the run is meant to show a character walking, and a minute of a real folder
# may be mostly jumps (CMU subject 16 starts with ten of them).
LOCOMOTION = ({"walk"}, {"turn", "veer"}, {"run"})
QUICK = {"controller_seconds": 10.0, "run_seconds": 6.0, "trace_seconds": 30.0}


def missing(version: tuple | None = None) -> str | None:
    """None when everything the demo needs imports on this Python (``version``, default this one's
    (major, minor)); else one line saying what to install, or which Python to use (bpy has wheels
    for Python 3.11 and 3.13 only)."""
    here = tuple(version or sys.version_info[:2])
    py = f"Python {here[0]}.{here[1]}"
    for module, package in NEEDS:
        try:
            importlib.import_module(module)
        except ImportError as exc:
            return f"{package} does not import on this {py} ({exc}): pip install -c constraints.txt -e \".[test]\""
    try:
        importlib.import_module("bpy")
    except ImportError as exc:
        if here in BPY:
            return (f"the demo needs Blender as a Python module, and bpy does not import on this {py} ({exc}): "
                    f"pip install bpy=={BPY[here]}")
        return (f"the demo needs Blender as a Python module (bpy), which has no wheel for {py}: use Python 3.11 "
                f"with bpy 5.0.1 or Python 3.13 with bpy 5.3.0 (this is {sys.executable})")
    return None


def locomotion_first(clips) -> list:
    """``clips`` with walks first, then turns, then runs, then the rest (stable within each)."""
    def rank(c):
        tags = set(c.tags)
        plain = not tags & {"backward", "sidestep", "jump", "crouch"}
        return next((i for i, kinds in enumerate(LOCOMOTION) if plain and tags & kinds), len(LOCOMOTION))

    return sorted(clips, key=rank)


def train_and_run(db, out: str, seed: int, max_seconds: float, run_seconds: float = 20.0,
                  trace_seconds: float = 120.0) -> tuple:
    """Train a model controller on (up to ``max_seconds`` of) the group's clips, locomotion first,
    drive it with a generated evaluation trace of ``run_seconds``, write the run as BVH; returns
    (its path, the clips trained on)."""
    from motionctl.clip import MotionDatabase
    from motionctl.engines.fragments import ControllerSettings, fit
    from motionctl.io.bvh import write_bvh
    from motionctl.jobs import PrintProgress
    from motionctl.play.commands import (EVALUATION_PLAYER, commands_from_controls, generate_trace, resample_trace,
                                         scale_player, write_trace)
    from motionctl.play.session import Session

    clips, total = [], 0.0
    for c in locomotion_first(db.clips):
        if total + c.duration > max_seconds and clips:
            break
        clips.append(c)
        total += c.duration
    sub = MotionDatabase(db.skeleton, clips)
    settings = ControllerSettings(trace_seconds=trace_seconds, seed=seed + 1, held_out=0)
    with PrintProgress("train", every=2) as progress:
        model = fit(sub, settings, progress=progress)
    policy_path = model.save(os.path.join(out, "model_policy.npz"))
    s = model.summary()
    print(f"model controller on {len(clips)} clips ({total:.0f} s, {s['fragments']} fragments): "
          f"{s['improvements']} improvements, converged={s['converged']}, {s['seconds']:.1f} s; policy {policy_path}")
    trace = generate_trace(scale_player(EVALUATION_PLAYER, model.top_speed), run_seconds, 10.0, seed + 7)
    write_trace(trace, os.path.join(out, "evaluation_trace.csv"))
    commands = commands_from_controls(resample_trace(trace.samples, trace.rate, model.decision_rate))
    session = Session(model, model.frame_table(clips))
    clip = session.run(commands)
    clip.name = "controller_run"
    run_path = os.path.join(out, "controller_run.bvh")
    write_bvh(clip, run_path)
    print(f"ran it on a {trace.duration:.0f} s generated player trace: {len(commands)} decisions -> {run_path}")
    return run_path, [c.name for c in clips]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="output folder")
    ap.add_argument("--mocap", help="folder of real BVH or ASF/AMC files (default: generated demo clips)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the generated demo clips")
    ap.add_argument("--no-controller", action="store_true", help="skip training and running a fragment controller")
    ap.add_argument("--controller-seconds", type=float, default=None,
                    help="train the demo controller on at most this much capture, locomotion first (default 60; "
                         f"{QUICK['controller_seconds']:g} with --quick)")
    ap.add_argument("--run-seconds", type=float, default=None,
                    help=f"length of the controller's run (default 20; {QUICK['run_seconds']:g} with --quick)")
    ap.add_argument("--quick", action="store_true",
                    help="a small run in seconds (the tests): less capture and training play, a shorter run, and "
                         "only the clips trained on imported into the .blend")
    args = ap.parse_args(argv)
    print(f"checking what the demo needs on Python {sys.version.split()[0]}: bpy, numpy, scipy, scikit-learn", flush=True)
    problem = missing()  # before any work: not after minutes of training (importing bpy takes a few seconds)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    from motionctl.errors import MotionctlError
    from motionctl.io import demo_data
    from motionctl.io.library import import_library
    from motionctl.jobs import PrintProgress

    quick = QUICK if args.quick else {}
    seconds = args.controller_seconds if args.controller_seconds is not None else quick.get("controller_seconds", 60.0)
    run_seconds = args.run_seconds if args.run_seconds is not None else quick.get("run_seconds", 20.0)
    t0 = time.perf_counter()
    out = os.path.abspath(args.out)
    created = not os.path.isdir(out)
    try:
        if args.mocap and not os.path.isdir(args.mocap):
            raise MotionctlError(f"--mocap: {args.mocap} is not a folder")
        for name, v in (("--controller-seconds", seconds), ("--run-seconds", run_seconds)):
            if not v > 0:
                raise MotionctlError(f"{name} must be more than 0 seconds, got {v:g}")
        os.makedirs(out, exist_ok=True)
        if args.mocap:
            source = os.path.abspath(args.mocap)
            print(f"motion: real capture from {source}")
        else:
            source = os.path.join(out, "demo_bvh")
            paths = demo_data.write_demo_library(source, seed=args.seed)
            print(f"motion: {len(paths)} synthetic clips (seed {args.seed}) written to {source}")
        with PrintProgress("reading", every=2) as progress:
            result = import_library(source, progress=progress)
        print(result.summary())
        if not result.groups:
            raise MotionctlError(f"nothing to import from {source}")
        runs, used = [], None
        if not args.no_controller:
            run, used = train_and_run(result.groups[0].database, out, args.seed, seconds, run_seconds,
                                      quick.get("trace_seconds", 120.0))
            runs.append(run)
    except MotionctlError as exc:
        if created and os.path.isdir(out) and not os.listdir(out):
            os.rmdir(out)
        print(f"error: {exc}", file=sys.stderr)
        return 2
    from tools.extension import load_extension

    ext = load_extension()
    files = [f for g in result.groups for f, c in zip(g.files, g.database.clips)
             if not (args.quick and used is not None and c.name not in used)]
    blend = os.path.join(out, "motionctl_demo.blend")
    with PrintProgress("blend", every=2) as progress:
        made = ext.operators.demo.build_demo_blend(files, blend, runs=runs, progress=progress)
    print(f"wrote {blend}: {len(made['armatures'])} armature(s) {made['armatures']}, {len(made['actions'])} action(s)"
          + (f", controller run action {made['runs']}" if made["runs"] else "")
          + (f"; F12 renders {made['staged']} (mannequin, floor, following camera)" if made["staged"] else ""))
    print(f"demo finished in {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
