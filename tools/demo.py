"""The demo: a small library, a trained controller and its run, in a .blend.

    .venv/bin/python tools/demo.py --out demo_out                 # generated walks, runs, turns...
    .venv/bin/python tools/demo.py --out demo_real --mocap ../shared/mocap/cmu_amc/16

Generates (or takes) a library, imports it, trains a motion-fragment controller on (up to a
minute of) it with the engine, drives it with a generated player's trace, writes the run as BVH,
then imports the library into Blender-as-a-module with the extension's own operator and saves
``motionctl_demo.blend`` with one armature per skeleton, one action per clip and the run.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from motionctl.io import demo_data  # noqa: E402
from motionctl.io.bvh import write_bvh  # noqa: E402
from motionctl.clip import MotionDatabase  # noqa: E402
from motionctl.engines.fragments import ControllerSettings, fit  # noqa: E402
from motionctl.play.commands import EVALUATION_PLAYER, commands_from_controls, generate_trace, resample_trace, scale_player, write_trace  # noqa: E402
from motionctl.errors import MotionctlError  # noqa: E402
from motionctl.jobs import PrintProgress  # noqa: E402
from motionctl.io.library import import_library  # noqa: E402
from motionctl.play.session import Session  # noqa: E402


def train_and_run(db, out: str, seed: int, max_seconds: float) -> str:
    """Train a model controller on (up to ``max_seconds`` of) the group's clips, drive it with a
    generated evaluation trace, write the run as BVH; returns its path."""
    clips, total = [], 0.0
    for c in db.clips:
        if total + c.duration > max_seconds and clips:
            break
        clips.append(c)
        total += c.duration
    sub = MotionDatabase(db.skeleton, clips)
    settings = ControllerSettings(trace_seconds=120.0, seed=seed + 1, held_out=0)
    with PrintProgress("train", every=2) as progress:
        model = fit(sub, settings, progress=progress)
    policy_path = model.save(os.path.join(out, "model_policy.npz"))
    s = model.summary()
    print(f"model controller on {len(clips)} clips ({total:.0f} s, {s['fragments']} fragments): "
          f"{s['improvements']} improvements, converged={s['converged']}, {s['seconds']:.1f} s; policy {policy_path}")
    trace = generate_trace(scale_player(EVALUATION_PLAYER, model.top_speed), 20.0, 10.0, seed + 7)
    write_trace(trace, os.path.join(out, "evaluation_trace.csv"))
    commands = commands_from_controls(resample_trace(trace.samples, trace.rate, model.decision_rate))
    session = Session(model, model.frame_table(clips))
    clip = session.run(commands)
    clip.name = "controller_run"
    run_path = os.path.join(out, "controller_run.bvh")
    write_bvh(clip, run_path)
    print(f"ran it on a {trace.duration:.0f} s generated player trace: {len(commands)} decisions -> {run_path}")
    return run_path


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="output folder")
    ap.add_argument("--mocap", help="folder of real BVH or ASF/AMC files (default: generated demo clips)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the generated demo clips")
    ap.add_argument("--no-controller", action="store_true", help="skip training and running a fragment controller")
    ap.add_argument("--controller-seconds", type=float, default=60.0,
                    help="train the demo controller on at most this much capture (first clips of the group)")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    out = os.path.abspath(args.out)
    created = not os.path.isdir(out)
    try:
        if args.mocap and not os.path.isdir(args.mocap):
            raise MotionctlError(f"--mocap: {args.mocap} is not a folder")
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
            raise MotionctlError(f"nothing to import from {source}")
        runs = [] if args.no_controller else [train_and_run(result.groups[0].database, out, args.seed,
                                                            args.controller_seconds)]
    except MotionctlError as exc:
        if created and os.path.isdir(out) and not os.listdir(out):
            os.rmdir(out)
        print(f"error: {exc}", file=sys.stderr)
        return 2
    from tools.extension import load_extension

    ext = load_extension()
    files = [f for g in result.groups for f in g.files]
    blend = os.path.join(out, "motionctl_demo.blend")
    made = ext.operators.demo.build_demo_blend(files, blend, runs=runs)
    print(f"wrote {blend}: {len(made['armatures'])} armature(s) {made['armatures']}, {len(made['actions'])} action(s)"
          + (f", controller run action {made['runs']}" if made["runs"] else ""))
    print(f"demo finished in {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
