"""Certifying a motion field in paper 004's baseline room through the common interface, beside the
motion graph of the same clips (greedy and Look Ahead: the graph is its own transition structure).

    .venv/bin/python bench/bench_field_certify.py [--mocap DIR] [--pairs 50] [--max-clips 600]

The field decides every frame, so its macro-steps stand in for clips (``evaluate.room.certify``): what
it plays while one of the certification commands is held for 0.5 s from an entry state, entries
(keyed by the nearest captured state) explored breadth-first up to ``--max-clips`` macro clips.
Writes bench/results/field_certify.md and .json.
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np

from harness import ROOT, add_mocap, default_mocap, write_json, write_markdown  # noqa: E402,F401  (first: the checkout on the path)

from bench.bench_evaluate import baseline_room, run  # noqa: E402
from bench.bench_field import load  # noqa: E402
from harness import environment  # noqa: E402
from motionctl.body import mirror_clip  # noqa: E402
from motionctl.engines import ENGINES  # noqa: E402
from motionctl.evaluate.room.certify import transition_graph  # noqa: E402
from motionctl.settings import from_flat  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    add_mocap(ap)
    ap.add_argument("--pairs", type=int, default=50)
    ap.add_argument("--max-clips", type=int, default=600)
    args = ap.parse_args()
    t_all = time.perf_counter()
    clips = load(args.mocap)
    mirrored = list(clips) + [mirror_clip(c) for c in clips]
    env = baseline_room()
    rows = []
    big = 4 * args.max_clips
    models = {}
    for label, name, data, flat, budget in (
            ("motion graph (greedy)", "graph", mirrored, {}, args.max_clips),
            ("motion field, direction task, N = 1", "field", clips, {"task": "direction"}, args.max_clips),
            (f"motion field, direction task, N = 1, budget {big}", "field", clips, {"task": "direction"}, big),
            ("motion field, passive (keeping moving)", "field", clips, {"task": "none"}, args.max_clips)):
        engine = ENGINES[name]
        t = time.perf_counter()
        key = (name, tuple(sorted(flat.items())))
        if key not in models:
            model = engine.fit(data, from_flat(engine.Settings, flat))
            models[key] = (model, model.play(data), time.perf_counter() - t)
        model, table, train_s = models[key]
        t = time.perf_counter()
        graph = transition_graph(model, table, budget)
        macro_s = time.perf_counter() - t
        row = run(f"{label}: {graph.n} clips, {len(graph.edges)} transitions", graph, env, pairs=args.pairs)
        row.update({"controller": label, "train_seconds": train_s, "macro_seconds": macro_s})
        rows.append(row)
        print(json.dumps({k: row[k] for k in ("label", "coverage_xy", "coverage_xya", "path_mean", "path_unreached",
                                              "lm_practice", "embed_seconds", "metric_seconds", "peak_mb",
                                              "macro_seconds")}, default=float), flush=True)
    out = {"command": "python bench/bench_field_certify.py", "rows": rows, "environment_room": env.name,
           "wall_seconds": time.perf_counter() - t_all, "environment": environment(),
           "settings": {"pairs": args.pairs, "max_clips": args.max_clips}}
    os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
    write_json("field_certify", out)
    write(out, args.max_clips)


def write(out, max_clips):
    """bench/results/field_certify.md from the results."""
    fmt = lambda v, f="{:.2f}": "—" if v is None or (isinstance(v, float) and not np.isfinite(v)) else f.format(v)  # noqa: E731
    md = ["# Certifying a motion field in the baseline room (paper 004's measurements, paper 002's field)\n",
          f"Command: `{out['command']}` (2 cores); wall {out['wall_seconds']:.0f} s. Room: {out['environment_room']}, "
          f"{out['rows'][0]['area_m2']:.0f} m². Data: CMU subject 16's locomotion (117 s), mirrored.\n",
          "| controller | XY % | XYθ % | path mean | pairs without a path | LM practice s | nodes | train s | "
          "macro-steps s | embed s | metrics s | peak MB |", "| --- | " + "---: | " * 11]
    for r in out["rows"]:
        md.append(f"| {r['label']} | {100 * r['coverage_xy']:.1f} | {100 * r['coverage_xya']:.1f} | "
                  f"{fmt(r['path_mean'])} | {r['path_unreached']}/{r['path_unreached'] + r['path_pairs']} | {fmt(r['lm_practice'], '{:.1f}')} | "
                  f"{r['nodes']} | {r['train_seconds']:.0f} | {r['macro_seconds']:.0f} | {r['embed_seconds']:.1f} | "
                  f"{r['metric_seconds']:.1f} | {r['peak_mb']:.0f} |")
    md.append(f"\nThe field's clips are its macro-steps: what it plays while one certification command is held "
              f"for 0.5 s from an entry state, explored breadth-first up to {max_clips} macro clips (or the budget "
              "named). Entry states are keyed by the clip and half-second of the nearest captured state, and "
              "macro-steps from one key are taken as the same: an approximation the certificate rests on. Keyed by "
              "the nearest captured state alone, the ends of the field's macro-steps almost never met an explored "
              "entry: only walking straight on (turns of -3 to +1°) closed into a strongly connected part, which "
              "embedded as a single node (0% coverage).\n")
    write_markdown("field_certify", md)
    print("\n".join(md))


if __name__ == "__main__":
    main()
