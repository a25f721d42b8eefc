"""Paper 004's Tables I-III and V on real capture: motion graphs embedded in rooms and measured.

    .venv/bin/python bench/bench_evaluate.py [--mocap DIR] [--quick]

Graph: CMU subjects 16 (walks, turns, runs, jumps), 127 (runs, run-and-duck, jump-overs),
10 (soccer kicks) and 17 (sneaking), tagged from the database's own trial descriptions; action
centres found from the body (duck: lowest head, kick: farthest foot, jump: highest hips).
Environments: the 15 m x 8 m room empty, with random clutter, and cluttered like the paper's
baseline (with a chasm); then larger graphs (higher thresholds), larger and smaller editing
footprints, and a scaling run over room sizes.  Writes bench/results/evaluate.md and .json.
"""

from __future__ import annotations

import argparse
import json
import os
import time
import tracemalloc
from dataclasses import replace

import numpy as np

from harness import ROOT, add_mocap, default_mocap  # noqa: E402,F401  (first: the checkout on the path)

from harness import environment, previous as previous_figures  # noqa: E402
from motionctl.engines.fragments import ControllerSettings, PolicySettings, fit  # noqa: E402
from motionctl.engines.graph import GraphSettings, build_graph  # noqa: E402
from motionctl.evaluate import (EditModel, EmbedSettings, Environment, Obstacle, count_edges, evaluate,  # noqa: E402
                                macro_graph, random_environment)
from motionctl.evaluate.room.environment import rasterise  # noqa: E402
from motionctl.io.library import import_library  # noqa: E402
from motionctl.settings import to_dict  # noqa: E402

ACTION = "kick"  # the action whose maneuverability and efficiency the tables show (all are in the JSON)
# Min Clip 0.3 s instead of the paper's 0.5 s: coalescing reroutes every transition end inside a
# window of one minimum clip length onto one frame, and a run's half stride is about 0.35 s, so a
# 0.5 s window puts most run -> run transitions out of phase (3,248 candidates -> 46); the sweep
# in the results shows the runs coming back between 0.4 and 0.35 s.
BASELINE = GraphSettings(threshold=0.08, branching=3, min_clip=0.3)
LARGER = (GraphSettings(threshold=0.12, branching=5, min_clip=0.3), GraphSettings(threshold=0.3, branching=8, min_clip=0.3))
MIN_CLIP_SWEEP = (0.5, 0.4, 0.35, 0.3)

TAGS = {
    "16": {("15", "16", "21", "22", "31", "32", "47"): {"walk"}, ("17", "18", "19", "20", "11", "13"): {"walk", "turn"},
           ("35", "36", "45", "46", "55"): {"run"}, ("37", "39", "41", "43", "48", "50"): {"run", "turn"},
           ("01", "02", "05", "06", "09"): {"jump"}, ("33", "34"): {"walk", "stop"}, ("08", "57"): {"run", "stop"}},
    "127": {("03", "06", "07"): {"run"}, ("29", "30", "32", "37", "38"): {"run", "duck"},
            ("25", "26", "27"): {"run", "jump"}, ("09", "11"): {"run", "turn"}, ("13", "14"): {"run", "sidestep"},
            ("04",): {"walk", "run"}, ("05", "17", "18", "19", "20"): {"run", "stop"}, ("15", "16"): {"run", "turn"}},
    "10": {("01", "02", "03"): {"walk", "kick"}},
    "17": {("03",): {"walk", "sneak"}},
}


def load_clips(mocap, without=()):
    """The bench's clips, tagged; ``without``: leave out clips with any of these tags."""
    files, tags = [], {}
    for subject, groups in TAGS.items():
        for trials, t in groups.items():
            if set(t) & set(without):
                continue
            for trial in trials:
                name = f"{subject}_{trial}"
                files.append(os.path.join(mocap, "cmu_amc", subject, name + ".amc"))
                tags[name] = t
    db = import_library(files).groups[0].database
    for c in db.clips:
        c.tags = set(tags[c.name])
    return db


def _box(x0, y0, x1, y1):
    return np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], dtype=float)


def baseline_room(width=15.0, depth=8.0) -> Environment:
    """Furnished: two tables, two pillars, a partition wall from one side, a low wall to step or
    jump over and a chasm to jump (76% of the floor free for the character's centre)."""
    obstacles = [Obstacle("wall", points=_box(3, 2, 5, 3)), Obstacle("wall", points=_box(9.5, 4.8, 11.5, 5.8)),
                 Obstacle("wall", centre=(7.5, 3.2), radius=0.4), Obstacle("wall", centre=(13, 6.2), radius=0.4),
                 Obstacle("wall", points=_box(8, depth - 2.2, 8.2, depth)),
                 Obstacle("low", points=_box(10.5, 1.8, 13.5, 2.1)),
                 Obstacle("chasm", points=_box(1.5, 5.6, 6.5, 6.2))]
    return Environment((0.0, 0.0, width, depth), obstacles, "furnished (low wall, chasm)")


def congested_room(width=15.0, depth=8.0) -> Environment:
    """Congested like the paper's baseline (its most obstacle-dense room, with a cluttered
    corner): a grid of pillars 1.4 m apart, rows of shelves with 1 m aisles, a partition open at
    one end, two tables, a low wall and a chasm (54% of the floor free for the character's centre)."""
    obstacles = [Obstacle("wall", centre=(x, y), radius=0.3) for x in (1.2, 2.6, 4.0, 5.4) for y in (1.0, 2.4, 3.8)]
    obstacles += [Obstacle("wall", points=_box(9.5, y, 13.8, y + 0.6)) for y in (1.0, 2.6, 4.2, 5.8)]
    obstacles += [Obstacle("wall", points=_box(7.4, 3.0, 7.6, depth)), Obstacle("wall", points=_box(1.0, 5.4, 3.2, 6.4)),
                  Obstacle("wall", points=_box(4.2, 6.0, 6.4, 7.0)), Obstacle("low", points=_box(7.6, 1.3, 9.2, 1.6)),
                  Obstacle("chasm", points=_box(4.0, 4.7, 6.8, 5.3))]
    return Environment((0.0, 0.0, width, depth), obstacles, "congested (like the paper's baseline)")


def split_room(gap=0.3, width=15.0, depth=8.0) -> Environment:
    """A gap ``gap`` m wide across the whole room, wall to wall: crossable only in the air."""
    x = width / 2
    return Environment((0.0, 0.0, width, depth), [Obstacle("chasm", points=_box(x - gap / 2, 0, x + gap / 2, depth))],
                       f"split by a {gap} m chasm, wall to wall")


def free_fraction(env) -> float:
    return float((rasterise(env).bits == 0).mean())


def composition(graph) -> dict:
    """Seconds kept per motion type."""
    out = {}
    for c in range(graph.n):
        for t in graph.types[c]:
            out[t] = out.get(t, 0.0) + float(graph.duration[c])
    return dict(sorted(out.items()))


def run(label, graph, env, settings=None, pairs=100, lm_sample=0.1, edges=True):
    tracemalloc.start()
    res = evaluate(graph, env, settings, pairs=pairs, lm_sample=lm_sample)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    t = time.perf_counter()
    n_edges = count_edges(res["embedding"]) if edges else None
    edge_s = time.perf_counter() - t
    lm = res["maneuverability"].get(ACTION, {})
    ae = res["action_efficiency"].get(ACTION, {})
    pe = res["path_efficiency"]
    mask = res["coverage_map"] > 0
    half = mask.shape[0] // 2
    row = {"label": label, "environment": env.name, "area_m2": env.area(), "free": free_fraction(env),
           "clips": graph.n, "transitions": int(len(graph.edges)), "nodes": res["nodes"], "edges": n_edges,
           "embed_seconds": res["embed_seconds"], "metric_seconds": res["metric_seconds"], "edge_count_seconds": edge_s,
           "peak_mb": peak / 2**20, "coverage_xy": res["coverage_xy"], "coverage_xya": res["coverage_xya"],
           "coverage_left_half": float(mask[:half].mean()), "coverage_right_half": float(mask[half:].mean()),
           "largest_proven": res["largest_proven"], "largest_bound": res["largest_bound"],
           "unused_clips": res["unused_clips"],
           "lm_theory": lm.get("theoretical", {}).get("mean"), "lm_practice": lm.get("practical", {}).get("mean"),
           "lm_run_theory": lm.get("theoretical", {}).get("from", {}).get("run", {}).get("mean"),
           "lm_run_practice": lm.get("practical", {}).get("from", {}).get("run", {}).get("mean"),
           "path_mean": pe["mean"], "path_median": pe["median"], "path_pairs": pe["pairs"],
           "path_unreached": pe["unreached"], "path_failure_rate": pe["failure_rate"],
           "action_mean": ae.get("mean"), "action_median": ae.get("median"),
           "action_pairs": ae.get("pairs"), "action_unreached": ae.get("unreached"),
           "action_failure_rate": ae.get("failure_rate"),
           "action_possible_ends": {k: {m: v.get(m) for m in ("mean_found", "median_found", "pairs", "unreached")}
                                    for k, v in res["action_efficiency_possible_ends"].items()},
           "action_coverage": res["action_coverage"], "graph_transitions": int(len(graph.edges)),
           "graph_seconds": graph.stats.get("seconds_kept"),
           "actions": {k: {"coverage": res["action_coverage"].get(k), "efficiency_mean": v.get("mean"),
                           "efficiency_median": v.get("median"), "failure_rate": v.get("failure_rate")}
                       for k, v in res["action_efficiency"].items()},
           "maneuverability": {k: {"theory": v["theoretical"]["mean"], "practice": v["practical"]["mean"],
                                   "practice_median": v["practical"].get("median"),
                                   "from_run_theory": v["theoretical"]["from"].get("run", {}).get("mean"),
                                   "from_run_practice": v["practical"]["from"].get("run", {}).get("mean")}
                               for k, v in res["maneuverability"].items()},
           "path_p10": pe.get("p10"), "path_p90": pe.get("p90"), "grid_cell": res["embedding"].grid.cell}
    print(json.dumps({k: v for k, v in row.items() if k != "unused_clips"}), flush=True)
    return row


def graph_row(graph, build_s):
    return {**graph.stats, "transitions_before_scc": graph.stats["transitions"], "clips": graph.n,
            "transitions": int(len(graph.edges)), "build_seconds": build_s, "composition_seconds": composition(graph)}


def main():
    ap = argparse.ArgumentParser()
    add_mocap(ap)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--markdown-only", action="store_true", help="rewrite the .md from the .json")
    args = ap.parse_args()
    suffix = "_quick" if args.quick else ""
    out = os.path.join(ROOT, "bench", "results", f"evaluate{suffix}")
    if args.markdown_only:
        with open(out + ".json") as fh:
            results = json.load(fh)
        with open(out + ".md", "w") as fh:
            fh.write(markdown(results))
        return
    env_record = environment()
    db = load_clips(args.mocap)
    sweep = []
    for mc in MIN_CLIP_SWEEP:  # why the baseline's Min Clip is 0.3 s (see BASELINE)
        t = time.perf_counter()
        g = build_graph(db, replace(BASELINE, min_clip=mc))
        sweep.append({"min_clip": mc, **graph_row(g, time.perf_counter() - t)})
        print(json.dumps({k: sweep[-1][k] for k in ("min_clip", "clips", "seconds_kept", "composition_seconds")}), flush=True)
    t = time.perf_counter()
    graph = build_graph(db, BASELINE)
    build_s = time.perf_counter() - t
    print(f"graph: {graph.n} clips, {len(graph.edges)} transitions, {graph.stats['seconds_kept']:.0f} of "
          f"{graph.stats['seconds_total']:.0f} s kept, built in {build_s:.1f} s", flush=True)
    pairs = 20 if args.quick else 100
    rooms = [Environment((0, 0, 15, 8), [], "empty 15 x 8 m"), random_environment(15, 8, 0.08, seed=1),
             baseline_room(), congested_room()]
    rooms[1].name = "random (8% clutter)"
    congested = rooms[3]
    base_label = (f"threshold {BASELINE.threshold}, branching {BASELINE.branching}, min clip {BASELINE.min_clip} s: "
                  f"{graph.n} clips, {len(graph.edges)} transitions, {graph.stats['seconds_kept']:.0f} s")
    rows = {"table1": [run(base_label, graph, env, pairs=pairs) for env in rooms]}
    # The paper's clip length (0.5 s): about the paper's graph size, with runs and sneaks gone.
    paper_size = build_graph(db, replace(BASELINE, min_clip=0.5))
    rows["paper_clip"] = [run(f"min clip 0.5 s: {paper_size.n} clips, {len(paper_size.edges)} transitions, "
                              f"{paper_size.stats['seconds_kept']:.0f} s", paper_size, env, pairs=pairs)
                          for env in (rooms[3],)]
    # A chasm wall to wall: crossed by the graph's jumps, and not by the same capture without its jump clips.
    t = time.perf_counter()
    no_jumps = build_graph(load_clips(args.mocap, without={"jump"}), BASELINE)
    rows["no_jump_graph"] = graph_row(no_jumps, time.perf_counter() - t)
    split = split_room()
    rows["chasm"] = [run("with its jump clips", graph, split, pairs=pairs // 2),
                     run(f"without jump clips ({no_jumps.n} clips)", no_jumps, split, pairs=pairs // 2)]
    if not args.quick:
        bigger = []
        for gs in LARGER:
            g = build_graph(db, gs)
            bigger.append(run(f"threshold {gs.threshold}, branching {gs.branching}: {g.n} clips, {len(g.edges)} "
                              f"transitions, {g.stats['seconds_kept']:.0f} s", g, congested, pairs=pairs // 2))
        rows["table2"] = [dict(rows["table1"][3], label=base_label)] + bigger
        rows["table3"] = [run(f"edit size {int(100 * s)}%", graph, congested, EmbedSettings(edit=EditModel(scale=s)),
                              pairs=pairs // 2) for s in (0.75, 1.25, 1.5)]
        rows["table3"].insert(1, dict(rows["table1"][3], label="edit size 100%"))
        # Certify a fragment controller (steady: needs no player traces) on the same clips and room.
        t = time.perf_counter()
        controller = fit(db, ControllerSettings(policy=PolicySettings(kind="steady"), held_out=0))
        train_s = time.perf_counter() - t
        cg = macro_graph(controller, controller.play(db.clips))
        ctrl = run(f"fragment controller (steady, {controller.n} fragments, trained in {train_s:.0f} s): "
                   f"{cg.n} held-control clips, {len(cg.edges)} transitions", cg, congested, pairs=pairs // 2)
        rows["certify"] = [dict(rows["table1"][3], label=base_label), ctrl]
        rows["scaling"] = []
        for w, d in ((10, 10), (20, 10), (40, 10), (40, 20)):
            env = random_environment(w, d, 0.08, seed=7)
            for x in range(8, w, 8):  # partition walls with doors, like the paper's Figure 16
                env.obstacles.append(Obstacle("wall", points=np.array([[x, 0], [x + 0.2, 0], [x + 0.2, d - 3],
                                                                       [x, d - 3]])))
            env.name = f"{w} x {d} m rooms"
            rows["scaling"].append(run("scaling", graph, env, pairs=10, lm_sample=0.02))
    previous = previous_figures("evaluate")
    results = {"command": "python bench/bench_evaluate.py" + (" --quick" if args.quick else ""),
               "settings": {"graph": to_dict(BASELINE), "embed": to_dict(EmbedSettings()), "pairs": pairs},
               "environment": env_record, "graph": graph_row(graph, build_s), "min_clip_sweep": sweep,
               "previous": previous, **rows}
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out + ".json", "w") as fh:
        json.dump(results, fh, indent=1, default=float)
    md = markdown(results)
    with open(out + ".md", "w") as fh:
        fh.write(md)
    print(md)


PAPER = {"empty": "99.8 / 94.1 | 3.6 / 4.4 | 1.00 / 1.00 | 1.25 / 1.11",
         "random": "94.3 / 66.5 | 3.6 / 5.6 | 1.21 / 1.03 | 1.93 / 1.85",
         "baseline": "95.7 / 60.6 | 3.6 / 6.6 | 1.87 / 1.11 | 2.85 / 2.59"}
# Each difference from the previous figures and from the paper, in a sentence (written from the run).
NOTES = [
    "Coverage and maneuverability rose against the previous figures (furnished room: XYθ 75.2 -> 95.5%, kick LM "
    "4.5 -> 2.6 s) because the graph grew from 73 clips / 57 s to 251 clips / 114 s: the 0.3 s Min Clip keeps the "
    "runs (40 s) and gives about three times as many clip ends to branch from.",
    "Action efficiency now follows the paper's protocol (any covered end cell, failures counted at the 6x horizon): "
    "in the random room it went 1.25 -> 1.44 because 2 of 25 kicks have no path and count as 6; elsewhere the larger "
    "graph reaches kicks more directly than before despite the stricter protocol (furnished 1.39 -> 1.05).",
    "Against the paper's baseline (path 1.87 / 1.11, action 2.85 / 2.59, LM 6.6 s) our congested room is easy for the "
    "0.3 s graph (1.01 / 1.01, 1.08 / 1.04, 3.3 s), but the 0.5 s graph, about the paper's size (96 clips, 75 s), "
    "comes close to the paper: XYθ 44.7% (paper 60.6), LM 4.4 s, path mean 1.16 with a tail (p90 1.27), action "
    "2.65 / 1.23 with 7 of 25 kicks unreachable. So the gap to the paper's Table I is mostly the graph's clip length "
    "and branching, a property of the graph we choose to build, not of the room or the metrics.",
    "Table II: larger graphs raise XYθ coverage (79 -> 100%) and cut maneuverability (3.3 -> 1.0 s), the paper's "
    "ordering.  Table III: larger footprints raise XYθ coverage 77.5 -> 88.0%, also the paper's ordering.",
    "Table III's 75% row was 36.4% XYθ with \"no component larger than a node\" before: that was the seed-search bug "
    "(the search missed the largest component); the component search now proves its answer in every row here, and "
    "the 75% footprint keeps 77.5% of floor x heading in the congested room.",
    "The wall-to-wall chasm: with the jump clips both halves are covered (89.9% / 87.5%); the same capture without "
    "its jump takes stays on one half (50.0%, proven largest).  No clip is left unembeddable in the empty room "
    "(before, CMU 16's forward jumps and their run-ups had no node anywhere).",
    "The fragment controller (steady policy, same clips) now covers 99.6% of floor x heading in the congested room: "
    "its held-control clips are short and many (546), like the 0.3 s graph's.",
    "Every figure above came out identical in two full runs at this commit (only the timings differ).",
]


def _f(v, fmt):
    return "—" if v is None or (isinstance(v, float) and not np.isfinite(v)) else format(v, fmt)


def _pct(v):
    return _f(None if v is None else 100 * v, ".0f")


def _table(rs, first):
    head = (f"| {first} | free % | XY % | XYθ % | LM {ACTION} theory / practice s | LM run → {ACTION} theory / practice s | "
            "path mean / median | path failures | action mean / median | action failures | unused clips | nodes | "
            "edges | embed s | metrics s | peak MB |\n|" + " --- |" * 16)
    body = "\n".join(
        f"| {r['label'] if first != 'environment' else r['environment']} | {_pct(r.get('free'))} | "
        f"{100 * r['coverage_xy']:.1f} | {100 * r['coverage_xya']:.1f} | {_f(r['lm_theory'], '.1f')} / "
        f"{_f(r['lm_practice'], '.1f')} | {_f(r.get('lm_run_theory'), '.1f')} / {_f(r.get('lm_run_practice'), '.1f')} | "
        f"{_f(r['path_mean'], '.2f')} / {_f(r['path_median'], '.2f')} | {r['path_unreached']}/{r['path_pairs']} | "
        f"{_f(r['action_mean'], '.2f')} / {_f(r['action_median'], '.2f')} | "
        f"{_f(r['action_unreached'], 'd')}/{_f(r['action_pairs'], 'd')} | {len(r.get('unused_clips', []))} | "
        f"{r['nodes']} | {r['edges']} | {r['embed_seconds']:.1f} | {r['metric_seconds']:.1f} | {r['peak_mb']:.0f} |"
        for r in rs)
    return head + "\n" + body


def _before(now, before, first):
    """Previous figures (before issue 14) next to the new ones, row by row."""
    head = (f"| {first} | XY % before → now | XYθ % | LM {ACTION} practice s | path mean | action mean (before: ends "
            "restricted, failures dropped) | nodes |\n| --- | --- | --- | --- | --- | --- | --- |")
    lines = []
    for r, b in zip(now, before):
        lines.append(f"| {r['label'] if first != 'environment' else r['environment']} (before: "
                     f"{b['label'] if first != 'environment' else b['environment']}) | "
                     f"{100 * b['coverage_xy']:.1f} → {100 * r['coverage_xy']:.1f} | "
                     f"{100 * b['coverage_xya']:.1f} → {100 * r['coverage_xya']:.1f} | {_f(b['lm_practice'], '.1f')} → "
                     f"{_f(r['lm_practice'], '.1f')} | {_f(b['path_mean'], '.2f')} → {_f(r['path_mean'], '.2f')} | "
                     f"{_f(b['action_mean'], '.2f')} → {_f(r['action_mean'], '.2f')} | {b['nodes']} → {r['nodes']} |")
    return "\n".join([head] + lines)


def markdown(results) -> str:
    g = results["graph"]
    prev = results.get("previous") or {}
    env = results["environment"]
    comp = ", ".join(f"{k} {v:.0f}" for k, v in g["composition_seconds"].items())
    md = [f"# Motion graphs evaluated in environments (paper 004)\n\nCommand: `{results['command']}` (2 cores), commit "
          f"{env.get('commit', '?')[:7]}; package versions and settings in the JSON.\n",
          f"Graph: {g['clips']} clips, {g['transitions']} transitions, {g['seconds_kept']:.0f} of {g['seconds_total']:.0f} s "
          f"of capture kept, built in {g['build_seconds']:.1f} s (settings: {results['settings']['graph']}). Seconds per "
          f"motion type (a clip counts under each of its types): {comp}. Source takes with nothing kept: "
          f"{', '.join(g['dropped_sources']) or 'none'}. Grid 0.2 m, 18 headings, character radius 0.25 m; paths 4-7 m "
          f"apart; unreached goals count at the 6x horizon as in the paper; local maneuverability and action efficiency "
          f"for the {ACTION} action (every action's figures are in the JSON). Capture: CMU subjects 16, 127, 10 and 17 "
          "(walks, turns, runs, run-stop-run, walk-to-run, jumps, run-and-duck, run-and-jump-over, kicks, sneaking).\n",
          "## Why runs were missing: the minimum clip length\n",
          "| Min Clip s | clips | seconds kept | run s | sneak s | source takes with nothing kept |\n| --- | --- | --- | --- | --- | --- |"]
    md += [f"| {r['min_clip']} | {r['clips']} | {r['seconds_kept']:.0f} of {r['seconds_total']:.0f} | "
           f"{r['composition_seconds'].get('run', 0):.0f} | {r['composition_seconds'].get('sneak', 0):.1f} | "
           f"{len(r['dropped_sources'])} |" for r in results["min_clip_sweep"]]
    md += ["\nCoalescing (Appendix B) moves every transition end inside a window of one minimum clip length onto one "
           "frame; a run's half stride is about 0.35 s, so with the paper's 0.5 s window most run transitions are rerouted "
           "out of phase and dropped (3,248 run -> run candidates become 46), and the runs fall out of the strongly "
           "connected component.  The paper kept its runs by hand-tuned per-file desirability weights; those are now the "
           "graph's Desirability setting, but here weights alone (run 2-3) kept at most 23 s of running at 0.5 s, so the "
           "bench shortens Min Clip instead.  The product's default stays at the paper's 0.5 s; its tooltip says why to "
           "lower it.\n",
           "## Table I: environments\n", _table(results["table1"], "environment"),
           "\nPaper (Table I), XY / XYθ % | LM theory / practice s | path mean / median | action mean / median: empty "
           f"{PAPER['empty']}; random {PAPER['random']}; baseline {PAPER['baseline']} (the paper's baseline was its most "
           "congested room; ours is the congested row).  Its running -> action figures are in its Table I by action.\n"]
    if results.get("paper_clip"):
        md += ["With the paper's Min Clip of 0.5 s (a graph of about the paper's size, its runs and sneaks gone):\n",
               _table(results["paper_clip"], "graph"), ""]
    if prev.get("table1"):
        md += ["Before issue 14 (same rooms; the old baseline is the furnished room):\n",
               _before(results["table1"][:3], prev["table1"], "environment"), ""]
    ch = results["chasm"]
    md += ["## A chasm from wall to wall\n",
           "| graph | XY % | left half % | right half % | largest component proven | nodes |\n| --- | --- | --- | --- | --- | --- |"]
    md += [f"| {r['label']} | {100 * r['coverage_xy']:.1f} | {100 * r['coverage_left_half']:.1f} | "
           f"{100 * r['coverage_right_half']:.1f} | {r['largest_proven']} | {r['nodes']} |" for r in ch]
    md += [f"\n{ch[0]['environment']}: 0.8 m of floor where the character's centre may not stand (the gap widened by its "
           "0.25 m radius on each side).  With the jump clips the character reaches both halves; without them it stays "
           "on one half, and the embedding proves that half is the largest component (before the fix the seed search "
           "reported 0.1% in a room split like this).\n"]
    empty = results["table1"][0]
    md += [f"Clips never embedded even in the empty room ({len(empty['unused_clips'])}): "
           f"{'; '.join(empty['unused_clips']) or 'none'}.\n"]
    if "table2" in results:
        md += ["## Table II: larger graphs (congested room)\n", _table(results["table2"], "graph"),
               "\n## Table III: editing footprint (congested room)\n", _table(results["table3"], "footprint"),
               "\nPaper (Table II): larger graphs (190, 282, 389 clips) raise XYθ coverage and path efficiency; "
               "(Table III): larger editing footprints do the same at the cost of more edges and time.\n"]
        if prev.get("table2"):
            md += ["Before issue 14 (furnished room, 0.5 s clips):\n", _before(results["table2"], prev["table2"], "graph"),
                   "", _before(results["table3"], prev["table3"], "footprint"), ""]
        md += ["## Certifying a fragment controller (congested room, same clips)\n", _table(results["certify"], "controller"),
               "\nThe fragment controller's clips are what it plays while one of 12 controls is held for 0.5 s "
               "(fragments alone are shorter than a grid cell); the paper could not make this comparison.\n",
               "## Scaling (8% clutter, partition walls with doors every 8 m)\n",
               "| area m² | nodes | edges | embed s | metrics s | peak MB |\n| --- | --- | --- | --- | --- | --- |\n" +
               "\n".join(f"| {r['area_m2']:.0f} | {r['nodes']} | {r['edges']} | {r['embed_seconds']:.1f} | "
                         f"{r['metric_seconds']:.1f} | {r['peak_mb']:.0f} |" for r in results["scaling"]),
               "\nPaper (Table V): 612 s in total for 56 m².\n"]
    if NOTES:
        md += ["## What changed and why\n"] + [f"- {n}" for n in NOTES]
    return "\n".join(md) + "\n"

if __name__ == "__main__":
    main()
