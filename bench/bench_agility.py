"""Paper 002's claim, the motion field more agile than a graph-based controller, at equal warp
budgets (issue 35.4):

    .venv/bin/python bench/bench_agility.py [--mocap DIR] [--rates 90,180]

Both controllers may turn the facing beyond what their capture turns: the field by up to Turn Warp
per second every frame, the graph's Look Ahead by up to Max Warp over a clip, and at most Warp Rate
per second of the clip.  Without the rate bound a graph of short clips (one frame, at its shortest)
spends 45° in a frame, and the comparison measures how fast it may spin rather than how it plans.
Each row is the scoreboard's (``bench_scoreboard.score``: the same capture, trials and play
settings) at one budget, with the warps the graph actually played in the scoreboard's direction
trials (°/s: the warp over its clip's length).  Writes bench/results/agility.json and .md.
"""

from __future__ import annotations

import argparse
import tempfile
import time

import numpy as np

from harness import add_mocap, write_json, write_markdown  # noqa: E402  (first: the checkout on the path)

import bench_scoreboard as sb  # noqa: E402
from motionctl.evaluate.scoreboard import response_time  # noqa: E402
from motionctl.settings import from_flat  # noqa: E402


def warps_played(clips, source_table, flat: dict) -> np.ndarray:
    """deg/s of every warp a graph with settings ``flat`` plays in the scoreboard's direction
    trials (the warp over its clip's length)."""
    engine = sb.ENGINES["graph"]
    model = engine.fit(clips, from_flat(engine.Settings, flat))
    table = model.play(clips)
    out, decide = [], model.decide

    def recorded(state, command):
        step, nxt = decide(state, command)
        out.append(abs(float(step.edit[2])) / float(model.graph.duration[nxt]))
        return step, nxt
    model.decide = recorded
    for f in sb.starts_in(source_table, table):
        for a in sb.ANGLES:
            response_time(model, table, f, float(np.radians(a)), play=sb.PLAY)
    return np.degrees(np.array(out))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_mocap(ap)
    ap.add_argument("--rates", default="90,180", help="warp budgets to compare, °/s")
    args = ap.parse_args()
    t0 = time.perf_counter()
    clips, source_table, reference = sb.capture(args.mocap)
    rates = [float(r) for r in args.rates.split(",")]
    configs = [("graph", "unbounded", {"warp_rate": 0.0})]
    for r in rates:
        configs += [("field", r, {"turn_warp": float(np.radians(r))}), ("graph", r, {"warp_rate": float(np.radians(r))})]
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for name, rate, flat in configs:
            key = f"{name}:agility_{rate}"
            sb.VARIANTS[key] = (f"{name} at {rate}", flat)
            row = sb.score(key, clips, source_table, False, folder, reference)
            st = sb.stats(row)
            out = {"engine": name, "budget_deg_s": rate, "settings": flat, "direction_s": st["direction_s"],
                   "pad_direction_s": st["pad_direction_s"], "skating": row["skating"],
                   "pose_distance_p95": row["pose_distance_p95"], "jump_deg_s": st["jump_deg_s"]}
            if name == "graph":
                w = warps_played(clips, source_table, flat)
                moved = w[w > 1e-6]
                out["warp_deg_s"] = {"share_warped": float(np.mean(w > 1e-6)), "median": float(np.median(moved)),
                                     "p90": float(np.percentile(moved, 90)), "max": float(moved.max()),
                                     "n": int(len(w))} if len(moved) else {"share_warped": 0.0}
            rows.append(out)
            print(out, flush=True)
    results = {"command": "python bench/bench_agility.py" + (f" --rates {args.rates}" if args.rates != "90,180" else ""),
               "rows": rows, "wall_seconds": time.perf_counter() - t0}
    write_json("agility", results)
    lines = ["# Field against graph at equal warp budgets (`python bench/bench_agility.py`)", "",
             "The scoreboard's capture, direction trials and play settings (`bench/bench_scoreboard.py`); the budget "
             "is the field's Turn Warp and the graph's Warp Rate (its Max Warp, 45° per clip, as well).  Direction: "
             "median / p90 of the trials reached (s) and the share reached; warps played: the graph's, in those trials "
             f"(°/s over each warped clip).  Wall {results['wall_seconds']:.0f} s.", "",
             "| engine | budget °/s | direction s | pad: direction | skating % | pose cm (p95) | warps played °/s median / p90 / max |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        w = r.get("warp_deg_s", {})
        played = f"{w['median']:.0f} / {w['p90']:.0f} / {w['max']:.0f}" if "median" in w else "—"
        lines.append(f"| {r['engine']} | {r['budget_deg_s']} | {sb.rfmt(r['direction_s'])} | {sb.rfmt(r['pad_direction_s'])} "
                     f"| {100 * r['skating']:.1f} | {100 * r['pose_distance_p95']:.1f} | {played} |")
    write_markdown("agility", "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
