"""What the animator bakes, measured as an animator would look at it (issue 34): each engine at its
defaults, trained on a mix of CMU subject 16's clips as the Library panel would tick them, playing
traces as Play Trace does; every run measured by ``motionctl.evaluate.looks``.

    .venv/bin/python bench/bench_looks.py [--mocap DIR] [--engines a,b] [--sets mix,locomotion]
                                          [--out NAME] [--save-runs DIR]

Sets: ``mix``: a dozen clips (walks 16_15 16_16 16_21 16_31, veers 16_11 16_13 16_23, turns 16_17
16_19, runs 16_35 16_36, a forward jump 16_05); ``locomotion``: bench_field's 49 clips.
Traces (10 s at 10 Hz): ``straight`` (walk forward at 1.3 m/s), ``turning`` (walk at 1.3 m/s,
turning left at 0.6 rad/s for 5 s then right), ``pad`` (the evaluation game-pad player, seeded,
scaled to the model's top speed).  Per run: skating (share of contact frames sliding), sliding cm
per contact, planted share, pose distance p50/p95 against the capture (and the held-out capture's),
root height p5/p95, run and trace seconds, heading and position error to the capsule, decision ms.
Writes bench/results/<out>.json and .md; ``--save-runs`` writes each run as BVH for rendering.
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np

from harness import ROOT, add_mocap, environment, write_json, write_markdown  # noqa: E402  (first: the checkout on the path)

from motionctl.engines import ENGINES  # noqa: E402
from motionctl.evaluate.looks import PoseReference, capture_looks, command_error, looks, targets_missed  # noqa: E402
from motionctl.io.library import import_library  # noqa: E402
from motionctl.play.commands import (EVALUATION_PLAYER, Trace, generate_trace, scale_player)  # noqa: E402
from motionctl.play.session import Session  # noqa: E402
from motionctl.play.commands import PlaySettings  # noqa: E402

MIX = ["16_15", "16_16", "16_21", "16_31", "16_11", "16_13", "16_23", "16_17", "16_19", "16_35", "16_36", "16_05"]
LOCOMOTION = ["08"] + [f"{i:02d}" for i in range(11, 59)]
SECONDS = 10.0
RATE = 10.0


def clip_set(mocap: str, name: str) -> list:
    trials = sorted(MIX) if name == "mix" else [f"16_{t}" for t in LOCOMOTION]  # as the Library panel lists them
    files = [os.path.join(mocap, "cmu_amc", "16", f"{t}.amc") for t in trials]
    return import_library(files).groups[0].database.clips


def traces(model) -> dict:
    n = int(SECONDS * RATE)
    straight = np.tile([0.0, 1.3, 0.0, 0.0], (n, 1))
    turning = straight.copy()
    turning[: n // 2, 2], turning[n // 2:, 2] = 0.6, -0.6
    pad = generate_trace(scale_player(EVALUATION_PLAYER, model.top_speed), SECONDS, RATE, seed=3).samples
    return {"straight": Trace(straight, RATE, "straight"), "turning": Trace(turning, RATE, "turning"),
            "pad": Trace(pad, RATE, "pad")}


def play(model, table, trace: Trace, play_settings):
    """A trace played as Play Trace plays it: (clip, ms per decision, decisions).  (A checkout from
    before issue 34 played one decision per command at the model's rate: that is what it measures.)"""
    if hasattr(Session, "play_trace"):
        session = Session(model, table, play=play_settings)
        t = time.perf_counter()
        clip = session.play_trace(trace)
    else:
        from motionctl.play.commands import commands_from_controls, resample_trace
        session = Session(model, table, warp=play_settings.warp)
        t = time.perf_counter()
        clip = session.run(commands_from_controls(resample_trace(trace.samples, trace.rate, model.decision_rate)))
    ms = (time.perf_counter() - t) * 1e3 / max(len(session.steps), 1)
    return clip, ms, len(session.steps)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_mocap(ap)
    ap.add_argument("--engines", default=",".join(ENGINES))
    ap.add_argument("--sets", default="mix,locomotion")
    ap.add_argument("--out", default="looks")
    ap.add_argument("--save-runs", default="")
    args = ap.parse_args()
    settings = PlaySettings()
    rows, sources = [], {}
    t_all = time.perf_counter()
    for set_name in args.sets.split(","):
        clips = clip_set(args.mocap, set_name)
        ref = PoseReference.of(clips)
        src = capture_looks(clips, ref)
        sources[set_name] = src
        print(json.dumps({"set": set_name, "source": src}), flush=True)
        for name in args.engines.split(","):
            engine = ENGINES[name]
            t = time.perf_counter()
            model = engine.fit(clips, engine.Settings())
            train = time.perf_counter() - t
            table = model.play(clips)
            for tname, trace in traces(model).items():
                clip, ms, decisions = play(model, table, trace, settings)
                row = {"set": set_name, "engine": name, "trace": tname, "train_seconds": train, "ms_per_decision": ms,
                       "decisions": decisions, **looks(clip, ref, trace.duration)}
                row.update(command_error(clip, trace.clock(), trace.samples))
                row["missed"] = targets_missed(row, src)
                rows.append(row)
                print(json.dumps({k: row[k] for k in ("set", "engine", "trace", "skating", "sliding_cm", "planted",
                                                      "pose_distance", "root_height", "run_seconds", "heading_deg",
                                                      "position_m", "ms_per_decision")}), flush=True)
                if args.save_runs:
                    from motionctl.io.bvh import write_bvh
                    os.makedirs(args.save_runs, exist_ok=True)
                    write_bvh(clip, os.path.join(args.save_runs, f"{set_name}_{name}_{tname}.bvh"))
    results = {"command": "python bench/bench_looks.py " + " ".join(f"--{k.replace('_', '-')} {v}" for k, v in vars(args).items() if v and k != "mocap"),
               "sets": {"mix": MIX, "locomotion": [f"16_{t}" for t in LOCOMOTION]}, "traces_seconds": SECONDS,
               "play": {k: getattr(settings, k) for k in vars(settings)}, "warp": settings.warp,
               "source": sources, "rows": rows, "wall_seconds": time.perf_counter() - t_all, "environment": environment()}
    out = os.path.join(ROOT, "bench", "results")
    write_json(args.out, results, folder=out)
    write_markdown(args.out, markdown(results), folder=out)


def markdown(r: dict) -> list:
    lines = [f"# How the runs look (`{r['command']}`)", "",
             "Each engine at its defaults (Root Follows Control {:.1f}); 10 s traces played as Play Trace does.  "
             "skating: share of contact frames whose foot slides > 0.5 m/s (capture in the last row); sliding: cm per "
             "contact (median); pose: distance to the nearest captured pose, cm (p50 / p95; capture: held-out); hips: "
             "root height p5-p95 (m); heading / position: error to the command's capsule (p95).".format(r["warp"]), ""]
    for set_name, src in r["source"].items():
        lines += [f"## {set_name}", "", "| engine | trace | skating % | sliding cm | planted % | pose cm | hips m | run s | "
                  "heading ° | position m | ms/decision |", "| --- | --- |" + " ---: |" * 9]
        for x in (x for x in r["rows"] if x["set"] == set_name):
            pd = x["pose_distance"]
            lines.append(f"| {x['engine']} | {x['trace']} | {100 * x['skating']:.1f} | {x['sliding_cm']:.1f} | "
                         f"{100 * x['planted']:.0f} | {100 * pd['p50']:.1f} / {100 * pd['p95']:.1f} | "
                         f"{x['root_height']['p5']:.2f}-{x['root_height']['p95']:.2f} | {x['run_seconds']:.2f} | "
                         f"{x['heading_deg']['p95']:.1f} | {x['position_m']['p95']:.2f} | {x['ms_per_decision']:.2f} |")
        pd = src["pose_distance"]
        lines += [f"| capture | — | {100 * src['skating']:.1f} | {src['sliding_cm']:.1f} | {100 * src['planted']:.0f} | "
                  f"{100 * pd['p50']:.1f} / {100 * pd['p95']:.1f} | {src['root_height']['p5']:.2f}-"
                  f"{src['root_height']['p95']:.2f} | — | — | — | — |", ""]
    return lines


if __name__ == "__main__":
    main()
