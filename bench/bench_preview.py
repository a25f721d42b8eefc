"""Live-preview and baking costs in Blender (bpy module, headless).

    .venv/bin/python bench/bench_preview.py [--mocap DIR]

Per tick of the Drive operator: controller decision (when due) + synthesis + pose write with one
bulk foreach_set on a 31-bone CMU armature; then the same with a depsgraph update, which Blender
does when it redraws.  Baking: 1,000 frames x 31 bones into a slotted action.
Writes bench/results/preview.md and bench/results/preview.json.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from harness import ROOT, add_mocap, default_mocap, write_json, write_markdown  # noqa: E402,F401  (first: the checkout on the path)


def main():
    ap = argparse.ArgumentParser()
    add_mocap(ap)
    ap.add_argument("--ticks", type=int, default=3000)
    args = ap.parse_args()
    from harness import environment
    from tools.extension import load_extension

    ext = load_extension()
    import bpy

    from motionctl.play.session import Session

    pv = ext.operators.preview
    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.context.scene.render.fps = 60
    folder = os.path.join(args.mocap, "cmu_amc", "16")
    names = ["16_15.amc", "16_17.amc", "16_19.amc", "16_35.amc", "16_37.amc", "16_05.amc", "16_33.amc"]
    bpy.ops.motionctl.import_bvh(directory=folder + os.sep, files=[{"name": n} for n in names])
    st = bpy.context.scene.motionctl
    st.engines.fragments.held_out = 0
    st.engines.fragments.trace_seconds = 120
    t = time.perf_counter()
    bpy.ops.motionctl.train(engine="fragments")
    train_s = time.perf_counter() - t
    st.engine = "fragments"
    model, table, ob = pv.playable(bpy.context)
    writer = ext.operators.armature.PoseWriter(ob)
    session = Session(model, table, warp=1.0)
    rng = np.random.default_rng(0)
    held_sets = [{"forward"}, {"forward", "run"}, {"left"}, {"forward", "turn_left"}, {"back"}, set()]
    costs, costs_dg = [], []
    for k in range(args.ticks):
        held = held_sets[(k // 90) % len(held_sets)]
        t = time.perf_counter()
        command = pv.command_from_keys(held, 1.3, 3.5, 1.0, airborne=bool(rng.random() < 0.01))
        root, rot = session.tick(1 / 60, command)
        writer.write(rot, root)
        t1 = time.perf_counter()
        bpy.context.view_layer.update()
        t2 = time.perf_counter()
        costs.append(t1 - t)
        costs_dg.append(t2 - t)
    costs, costs_dg = np.array(costs) * 1e3, np.array(costs_dg) * 1e3
    decisions = len(session.controls)

    clip = session.clip("driven")
    clip = clip.slice(0, 1000)
    t = time.perf_counter()
    ext.operators.armature.bake_clip(ob, clip, "bench_bake")
    bake_ms = (time.perf_counter() - t) * 1e3

    res = {
        "command": "python bench/bench_preview.py", "blender": bpy.app.version_string, "bones": len(ob.data.bones),
        "fragments": model.n, "train_seconds": train_s, "environment": environment(), "ticks": args.ticks, "decisions": decisions,
        "tick_ms_mean": float(costs.mean()), "tick_ms_p99": float(np.percentile(costs, 99)),
        "tick_ms_max": float(costs.max()),
        "tick_with_depsgraph_ms_mean": float(costs_dg.mean()), "tick_with_depsgraph_ms_p99": float(np.percentile(costs_dg, 99)),
        "max_updates_per_second": float(1e3 / np.percentile(costs_dg, 99)),
        "bake_1000_frames_ms": bake_ms,
    }
    os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
    write_json("preview", res)
    md = f"""# Live preview and baking (`{res['command']}`, Blender {res['blender']} as a module, headless)

Controller: model, trained in the Controller panel's job on {len(names)} CMU clips of subject 16
({model.n} fragments; {train_s:.1f} s including the fragment build). Armature: {res['bones']} bones.

| per Drive tick ({args.ticks} ticks, {decisions} controller decisions) | mean ms | p99 ms | max ms |
| --- | ---: | ---: | ---: |
| keys to a command + decision (when due) + synthesis + bulk pose write | {res['tick_ms_mean']:.3f} | {res['tick_ms_p99']:.3f} | {res['tick_ms_max']:.3f} |
| the same plus a depsgraph update | {res['tick_with_depsgraph_ms_mean']:.3f} | {res['tick_with_depsgraph_ms_p99']:.3f} | — |

At the 99th percentile a tick with the depsgraph update allows {res['max_updates_per_second']:.0f} updates per
second (target: at least 60).  Baking 1,000 frames x {res['bones']} bones into an action: {bake_ms:.1f} ms.
"""
    write_markdown("preview", md)
    print(md)


if __name__ == "__main__":
    main()
