"""Parse speed of our BVH and ASF/AMC readers against Blender's own BVH importer, plus the
joint-position cross-check, on every file of ../shared/mocap.

    .venv/bin/python bench/bench_io.py [--mocap DIR]

Writes bench/results/io.md and bench/results/io.json.
"""

from __future__ import annotations

import argparse
import glob
import os
import time

import numpy as np

from harness import ROOT, add_mocap, default_mocap, write_json, write_markdown  # noqa: E402,F401  (first: the checkout on the path)

from motionctl.io import asfamc, bvh  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    add_mocap(ap)
    args = ap.parse_args()
    bvhs = sorted(glob.glob(os.path.join(args.mocap, "**", "*.bvh"), recursive=True))
    amcs = sorted(glob.glob(os.path.join(args.mocap, "**", "*.amc"), recursive=True))
    bvh_bytes = sum(os.path.getsize(p) for p in bvhs)
    amc_bytes = sum(os.path.getsize(p) for p in amcs)

    t = time.perf_counter()
    clips = [bvh.read_bvh(p) for p in bvhs]
    ours_bvh = time.perf_counter() - t

    t = time.perf_counter()
    cache = {}
    for p in amcs:
        a = asfamc.find_asf_for(p)
        if a not in cache:
            cache[a] = asfamc.read_asf(a)
        asfamc.read_amc(p, cache[a])
    ours_amc = time.perf_counter() - t

    import bpy

    theirs = 0.0
    worst = 0.0
    for p, clip in zip(bvhs, clips):
        bpy.ops.wm.read_factory_settings(use_empty=True)
        t = time.perf_counter()
        bpy.ops.import_anim.bvh(filepath=p, global_scale=clip.skeleton.unit_scale, rotate_mode="NATIVE")
        theirs += time.perf_counter() - t
        ob = bpy.context.view_layer.objects.active
        pos, _ = clip.world()
        for f in np.unique(np.linspace(0, clip.n_frames - 1, 5).astype(int)):
            bpy.context.scene.frame_set(int(f) + 1)
            mw = np.array(ob.matrix_world)
            h = np.array([ob.pose.bones[n].head for n in clip.skeleton.names]) @ mw[:3, :3].T + mw[:3, 3]
            worst = max(worst, float(np.abs(h - pos[f]).max()))

    res = {
        "bvh_files": len(bvhs), "bvh_mb": bvh_bytes / 1e6,
        "ours_bvh_s": ours_bvh, "ours_bvh_mb_s": bvh_bytes / 1e6 / ours_bvh,
        "blender_bvh_s": theirs, "blender_bvh_mb_s": bvh_bytes / 1e6 / theirs,
        "amc_files": len(amcs), "amc_mb": amc_bytes / 1e6,
        "ours_amc_s": ours_amc, "ours_amc_mb_s": amc_bytes / 1e6 / ours_amc,
        "max_joint_difference_m": worst,
        "command": "python bench/bench_io.py",
    }
    from harness import environment

    res["environment"] = environment()
    os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
    write_json("io", res)
    md = f"""# Reading motion files (`{res['command']}`)

| reader | files | MB | seconds | MB/s |
| --- | ---: | ---: | ---: | ---: |
| motionctl BVH (`motionctl.io.bvh.read_bvh`) | {res['bvh_files']} | {res['bvh_mb']:.1f} | {ours_bvh:.2f} | {res['ours_bvh_mb_s']:.1f} |
| Blender `bpy.ops.import_anim.bvh` (bpy {bpy.app.version_string}) | {res['bvh_files']} | {res['bvh_mb']:.1f} | {theirs:.2f} | {res['blender_bvh_mb_s']:.1f} |
| motionctl ASF/AMC (`motionctl.io.asfamc.read_amc`) | {res['amc_files']} | {res['amc_mb']:.1f} | {ours_amc:.2f} | {res['ours_amc_mb_s']:.1f} |

Blender's time includes building its armature and keyframes; ours is the parse into arrays.
Largest world joint-position difference between our reader + FK and Blender's importer over
5 frames of every BVH file: {worst * 1000:.4f} mm.
"""
    write_markdown("io", md)
    print(md)


if __name__ == "__main__":
    main()
