"""The papers' findings on cases nobody tuned for (issue 36), the motion-graph and reproducibility
parts (planning's are bench_fidelity.py's; active learning's bench_active.py's): each writes its
figures into bench/results/fidelity.json beside the others'.

    .venv/bin/python bench/bench_fidelity_graph.py [--mocap DIR] [--mixes 5] [--rooms 5] [--skip-threads]

- ``graph_capture_kept``: the share of the capture's seconds a graph built at the product's
  defaults keeps, on CMU subject 16's locomotion (the scoreboard's 49 clips) and on ``--mixes``
  random dozens of them (each a fresh draw: walks, veers, turns, runs and stops in any proportion).
- ``graph_coverage_with_jumps`` / ``graph_coverage_without_jumps``: XY coverage (paper 004) of
  the 49 clips with and without subject 16's nine jump takes, in ``--rooms`` random rooms (8%
  clutter and a 0.5 m chasm wall to wall), paired room by room.
- Chasms: rooms split wall to wall by a chasm of each width, with a run-up of 7.5 m and of 2 m
  on each side; the widest crossed, against the widest ``evaluate.jump_reach`` says a jump clears.
- ``same_model_across_threads``: every engine's small model (tests/model_digests.py) trained in
  fresh processes with BLAS, OpenMP and motionctl's pools on 1 and on 2 threads, and compared bit
  for bit with each other and with the digests recorded on the machine that wrote them.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

from harness import ROOT, add_mocap, merge_json, write_markdown  # noqa: E402  (first: the checkout on the path)

from bench_active import JUMPS  # noqa: E402
from bench_fidelity import spread  # noqa: E402
from bench_field import TRIALS as LOCOMOTION  # noqa: E402  (the scoreboard's 49 clips of subject 16)
from harness import environment  # noqa: E402
from motionctl.engines.graph import GraphSettings, build_graph  # noqa: E402
from motionctl.evaluate import Environment, Obstacle, coverage, embed, jump_reach, random_environment  # noqa: E402
from motionctl.io.library import import_library  # noqa: E402
from motionctl.settings import to_dict  # noqa: E402

MIX_SEED = 36  # the mixes' draw, apart from any training seed
WIDTHS = (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)


def library(mocap, trials):
    return import_library([os.path.join(mocap, "cmu_amc", "16", f"16_{t}.amc") for t in trials]).groups[0].database


def kept(mocap, mixes: int) -> dict:
    rng = np.random.default_rng(MIX_SEED)
    draws = [list(LOCOMOTION)] + [sorted(rng.choice(LOCOMOTION, 12, replace=False).tolist()) for _ in range(mixes)]
    rows = []
    for trials in draws:
        g = build_graph(library(mocap, trials))
        st = g.stats
        rows.append({"clips": trials, "kept_s": st["seconds_kept"], "total_s": st["seconds_total"],
                     "share": st["seconds_kept"] / st["seconds_total"], "dropped_sources": st["dropped_sources"],
                     "build_s": st["build_seconds"]})
        print(f"kept {100 * rows[-1]['share']:.1f}% of {st['seconds_total']:.1f} s ({len(trials)} clips)", flush=True)
    return {"figure": spread([r["share"] for r in rows]), "rows": rows}


def split_room(gap: float, run_up: float, depth: float = 6.0) -> Environment:
    """A chasm ``gap`` m wide wall to wall, ``run_up`` m of floor on each side."""
    x0, x1 = run_up, run_up + gap
    chasm = Obstacle("chasm", points=np.array([[x0, 0], [x1, 0], [x1, depth], [x0, depth]]))
    return Environment((0.0, 0.0, 2 * run_up + gap, depth), [chasm], f"chasm {gap:g} m, run-up {run_up:g} m")


def crossed(graph, env: Environment, run_up: float) -> bool:
    m = coverage(embed(graph, env))["map"] > 0
    xs = (np.nonzero(m.any(axis=1))[0] + 0.5) * (env.bounds[2] - env.bounds[0]) / m.shape[0]
    return bool(xs.min() < run_up and xs.max() > env.bounds[2] - run_up)


def jumps(mocap, rooms: int) -> dict:
    with_j = build_graph(library(mocap, LOCOMOTION + JUMPS))
    without = build_graph(library(mocap, LOCOMOTION))
    pairs = []
    for seed in range(rooms):
        env = random_environment(15.0, 8.0, 0.08, seed=seed, chasm=True)
        row = {"room_seed": seed}
        for label, g in (("with", with_j), ("without", without)):
            t = time.perf_counter()
            c = coverage(embed(g, env))
            row[label] = c["xy"]
            row[label + "_xya"] = c["xya"]
            row[label + "_s"] = time.perf_counter() - t
        pairs.append(row)
        print(f"room {seed}: coverage {100 * row['with']:.1f}% with jumps, {100 * row['without']:.1f}% without", flush=True)
    reach = jump_reach(with_j)
    chasms = []
    for run_up in (7.5, 2.0):
        for gap in WIDTHS:
            chasms.append({"gap_m": gap, "run_up_m": run_up, "crossed": crossed(with_j, split_room(gap, run_up), run_up)})
            print(f"chasm {gap} m, run-up {run_up} m: {'crossed' if chasms[-1]['crossed'] else 'not crossed'}", flush=True)
    return {"with": spread([p["with"] for p in pairs]), "without": spread([p["without"] for p in pairs]),
            "with_minus_without": spread([p["with"] - p["without"] for p in pairs]), "rooms": pairs,
            "graphs": {"with": with_j.stats, "without": without.stats}, "jump_reach": reach, "chasms": chasms}


def threads(mocap) -> dict:
    """Every engine's digests trained in fresh processes on 1 and on 2 threads."""
    script = os.path.join(ROOT, "tests", "model_digests.py")
    runs = {}
    for n in (1, 2):
        env = {**os.environ, "OMP_NUM_THREADS": str(n), "OPENBLAS_NUM_THREADS": str(n), "MKL_NUM_THREADS": str(n),
               "MOTIONCTL_JOBS": str(n)}
        out = subprocess.run([sys.executable, script, mocap], env=env, capture_output=True, text=True, check=True)
        runs[n] = json.loads(out.stdout.strip().splitlines()[-1])
    recorded = json.load(open(os.path.join(ROOT, "tests", "model_digests.json")))
    same = runs[1] == runs[2]
    return {"same": same, "same_as_recorded": runs[1] == recorded, "digests": {str(k): v for k, v in runs.items()},
            "differ": sorted(k for k in runs[1] if runs[1][k] != runs[2].get(k))}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_mocap(ap)
    ap.add_argument("--mixes", type=int, default=5)
    ap.add_argument("--rooms", type=int, default=5)
    ap.add_argument("--skip-threads", action="store_true")
    args = ap.parse_args()
    t0 = time.perf_counter()
    part = {"kept": kept(args.mocap, args.mixes), "jumps": jumps(args.mocap, args.rooms)}
    figures = {"graph_capture_kept": part["kept"]["figure"], "graph_coverage_with_jumps": part["jumps"]["with"],
               "graph_coverage_without_jumps": part["jumps"]["without"]}
    if not args.skip_threads:
        part["threads"] = threads(args.mocap)
        figures["same_model_across_threads"] = part["threads"]["same"]
    part.update(settings=to_dict(GraphSettings()), wall_seconds=time.perf_counter() - t0, environment=environment(),
                command="python bench/bench_fidelity_graph.py" + (" --skip-threads" if args.skip_threads else ""))
    merge_json("fidelity", figures, graph=part)
    write_markdown("fidelity_graph", markdown(part, figures))
    print(markdown(part, figures))


def markdown(p: dict, figures: dict) -> str:
    k, j = p["kept"], p["jumps"]
    kept_rows = "\n".join(f"| {len(r['clips'])} | {r['kept_s']:.1f} of {r['total_s']:.1f} | {100 * r['share']:.1f}% | "
                          f"{', '.join(r['dropped_sources']) or 'none'} |" for r in k["rows"])
    rooms = "\n".join(f"| {r['room_seed']} | {100 * r['with']:.1f}% | {100 * r['without']:.1f}% |" for r in j["rooms"])
    reach = "\n".join(f"| {r['take']} | {r['flight_m']:.2f} | {r['chasm_m']:.2f} | {r['run_up_m']:.2f} |" for r in j["jump_reach"])
    widest = {u: max([c["gap_m"] for c in j["chasms"] if c["run_up_m"] == u and c["crossed"]], default=0.0)
              for u in sorted({c["run_up_m"] for c in j["chasms"]}, reverse=True)}
    chasm = "\n".join(f"| {u:g} | {w:g} |" for u, w in widest.items())
    t = p.get("threads")
    threads = (f"Same model on 1 and 2 threads (every engine, fresh processes): **{t['same']}**; the same as the "
               f"digests recorded in tests/model_digests.json: {t['same_as_recorded']}." if t else "")
    g = figures["graph_capture_kept"]
    return f"""# Motion graphs and reproducibility on cases nobody tuned for (`{p['command']}`)

Commit {p['environment'].get('commit', '?')[:10]}; wall {p['wall_seconds']:.0f} s.

## Capture kept at the defaults (subject 16's locomotion: all 49 clips, then random dozens)

Median {100 * g['median']:.1f}% ({100 * g['low']:.1f}-{100 * g['high']:.1f}%, {g['n']} libraries).

| clips | seconds kept | share | takes dropped |
| ---: | ---: | ---: | --- |
{kept_rows}

## Coverage with and without the nine jump takes (random rooms, 8% clutter, a 0.5 m chasm)

| room seed | with jumps | without |
| ---: | ---: | ---: |
{rooms}

## Which jumps clear which chasms (``graph eval`` prints this table's columns for a room)

| take | flight m | widest chasm m | run-up m |
| --- | ---: | ---: | ---: |
{reach}

Measured: the widest chasm (of {', '.join(f'{w:g}' for w in WIDTHS)} m) crossed in a room split wall to wall:

| run-up each side m | widest crossed m |
| ---: | ---: |
{chasm}

{threads}
"""


if __name__ == "__main__":
    main()
