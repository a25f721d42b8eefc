"""Retargeting onto three rigs built in Blender (bpy module, headless): Rigify's human metarig,
a Mixamo rig as the FBX importer leaves it, the Character Creator rig of ../shared/mocap/cc_base.

    .venv/bin/python bench/bench_retarget.py [--mocap DIR]

Sources: four CMU subject 16 takes (two walks, two runs) and a 1,000-frame motion-matching run
played from a generated player trace, all at 30 fps.  Per rig and source, with the floor pass
(default) and with the two-bone foot plant: joint-position error against the capture scaled by the
leg-length ratio (legs: hip, knee, ankle, toe; arms: shoulder, elbow, wrist and head), the planted
ankle's height against the capture's (scaled) on contact frames, skating (raw, and with the sliding
threshold scaled with the body) beside the capture's; and for the 1,000-frame run the core's time
and the bake's (action writes with foreach_set) and the largest gap between what Blender plays
back and what the core computed.  Writes bench/results/retarget.md and .json.
"""

from __future__ import annotations

import argparse
import os
import time
import tracemalloc

import numpy as np

from harness import ROOT, add_mocap, default_mocap, write_json, write_markdown  # noqa: E402,F401  (first: the checkout on the path)

TAKES = ("16_15", "16_58", "16_35", "16_37")  # walk, walk, run/jog, run veering left
TRAIN = ("16_15", "16_58", "16_35", "16_37", "16_11", "16_17", "16_19", "16_21", "16_22", "16_36")


def main():
    ap = argparse.ArgumentParser()
    add_mocap(ap)
    args = ap.parse_args()
    from harness import environment
    from rigs import RIGS, make_rig, posed_heads
    from tools.extension import load_extension

    ext = load_extension()
    import bpy

    from motionctl.clip import resample
    from motionctl.play.commands import PlayerSettings, generate_trace, resample_trace
    from motionctl.retarget import RetargetSettings, Rig, auto_map, find_roles, quality, retarget, with_root_bone
    from motionctl.play.session import Session
    from motionctl.play.commands import commands_from_controls

    rows, rigs = [], {}
    t_all = time.perf_counter()
    for kind in RIGS:
        bpy.ops.wm.read_factory_settings(use_empty=True)
        bpy.context.scene.render.fps = 30
        folder = os.path.join(args.mocap, "cmu_amc", "16")
        assert bpy.ops.motionctl.import_bvh(directory=folder + os.sep, files=[{"name": n + ".amc"} for n in TRAIN]) \
            == {"FINISHED"}
        clips = {c.name: resample(c, 30.0) for c in ext.operators.common.group_clips(bpy.context)}
        if kind == RIGS[0]:
            assert bpy.ops.motionctl.train(engine="matching") == {"FINISHED"}
            model, _ = ext.operators.common.trained_model(bpy.context, "matching")
            table = model.play(list(clips.values()))
            trace = generate_trace(PlayerSettings(max_speed=2.5), 34.0, 10.0, seed=4)
            commands = commands_from_controls(resample_trace(trace.samples, trace.rate, model.decision_rate))
            run = resample(Session(model, table, warp=1.0).run(commands, None, "matching_run"), 30.0).slice(0, 1000)
        ob = make_rig(bpy, kind, args.mocap)
        rig0 = ext.operators.retarget.rig_from_object(ob)  # Root Motion on a root bone: add it, as Retarget does
        with_root, length = with_root_bone(rig0, find_roles(rig0))
        ext.operators.retarget.add_root_bone(ob, "root", length, [with_root.names[b] for b in
                                                                  np.flatnonzero(with_root.parents == len(rig0.names))])
        rig = ext.operators.retarget.rig_from_object(ob)
        src = Rig.from_clips([run])  # as Retarget builds it (its rest: CMU stands at rest)
        mapping = auto_map(src, rig)
        roles = find_roles(rig)
        for name, clip in [(n, clips[n]) for n in TAKES] + [("matching run", run)]:
            for plant in (False, True):
                tracemalloc.start()
                t = time.perf_counter()
                res = retarget(clip, src, rig, mapping, RetargetSettings(foot_plant=plant))
                core_s = time.perf_counter() - t
                peak = tracemalloc.get_traced_memory()[1]
                tracemalloc.stop()
                t = time.perf_counter()
                act = ext.operators.retarget.bake_retargeted(ob, res, f"{name}_{plant}")
                bake_s = time.perf_counter() - t
                posed = posed_heads(bpy, ob, np.arange(1, clip.n_frames + 1))
                q = quality(res, clip, src, rig, world=posed)
                rows.append({"rig": kind, "clip": name, "frames": clip.n_frames, "foot_plant": plant,
                             "core_ms": core_s * 1e3, "core_peak_mb": peak / 2 ** 20, "bake_ms": bake_s * 1e3,
                             "keyed_bones": len(res.bones), "playback_gap_m": float(np.abs(posed - res.world).max()),
                             **q})
                bpy.data.actions.remove(act)
                r = rows[-1]
                print(f"{kind:7s} {name:13s} plant={plant!s:5s} legs {100 * r['legs_error_p95']:.1f} cm arms "
                      f"{100 * r['arms_error_p95']:.1f} cm soles {100 * r['sole_median']:+.2f} / {100 * r['sole_p95']:.2f} cm "
                      f"stance {100 * r['stance_offset_p95']:.2f} cm skating "
                      f"{100 * r['skating_scaled']:.1f}% (src {100 * r['source_skating']:.1f}%) core {core_s * 1e3:.0f} ms "
                      f"bake {bake_s * 1e3:.0f} ms", flush=True)
        rigs[kind] = {"bones": len(rig.names), "mapped": len(mapping), "roles": {k: rig.names[v] for k, v in roles.items()}}
    wall = time.perf_counter() - t_all
    res = {"command": "python bench/bench_retarget.py", "blender": bpy.app.version_string, "rows": rows, "rigs": rigs,
           "wall_seconds": wall, "environment": environment()}
    out = os.path.join(ROOT, "bench", "results")
    os.makedirs(out, exist_ok=True)
    write_json("retarget", res, folder=out)
    write_markdown("retarget", markdown(res), folder=out)
    print(f"wrote bench/results/retarget.md ({wall:.0f} s)")


def markdown(res) -> str:
    lines = [f"# Retargeting (`{res['command']}`, Blender {res['blender']} as a module, headless)", "",
             f"Commit {res['environment']['commit']}{' (dirty)' if res['environment']['dirty'] else ''}; "
             f"{res['wall_seconds']:.0f} s in all.", "",
             "Rigs: " + "; ".join(f"**{k}** {v['bones']} bones, {v['mapped']} mapped" for k, v in res["rigs"].items()) + ".",
             "", "Errors are against the capture scaled by the leg-length ratio (cm; p95 over frames and joints); "
             "`soles` is the planted feet's lowest point (heel, ball, toe tip) above the floor on the capture's "
             "contact frames (signed median / p95 of its size); `stance` is the planted ankle's height against "
             "the capture's (scaled) on contact frames; skating is "
             "the share of frames a planted foot slides faster than 0.5 m/s times the scale (the capture's at 0.5 m/s).",
             "", "| rig | clip | frames | foot plant | scale | legs cm (p95) | arms cm (p95) | leg length m | stance cm "
             "med / p95 | soles cm med / p95 | skating % (capture) | skating % raw | core ms | bake ms | playback gap mm |",
             "|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in res["rows"]:
        lines.append(f"| {r['rig']} | {r['clip']} | {r['frames']} | {'yes' if r['foot_plant'] else 'no'} | "
                     f"{r['scale']:.3f} | {100 * r['legs_error_p95']:.1f} | {100 * r['arms_error_p95']:.1f} | "
                     f"{r['leg_length']:.2f} | {100 * r['stance_offset_median']:.2f} / {100 * r['stance_offset_p95']:.2f} | "
                     f"{100 * r['sole_median']:+.2f} / {100 * r['sole_p95']:.2f} | "
                     f"{100 * r['skating_scaled']:.1f} ({100 * r['source_skating']:.1f}) | {100 * r['skating']:.1f} | "
                     f"{r['core_ms']:.0f} | {r['bake_ms']:.0f} | {1e3 * r['playback_gap_m']:.3f} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
