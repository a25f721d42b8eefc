"""Paper 000's Table 1 on real CMU capture, plus speed and memory of the fragment controllers.

    .venv/bin/python bench/bench_fragments.py [--mocap DIR] [--quick]

Clips: CMU subjects 16, 09, 35 and 127 (ASF/AMC): walks, veers, 90-degree turns, runs, stops,
jumps, backward and sideways walking, side-steps, mirrored; about the paper's five minutes.
Traces: seven minutes from two generated training players, two minutes (12 x 10 s) from a
third, differently tuned evaluation player, as in the paper's set-up.
Writes bench/results/fragments.md and bench/results/fragments.json.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
import tracemalloc

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from bench.record import environment  # noqa: E402
from motionctl.engines.fragments import (EVALUATION_PLAYER, TRAINING_PLAYERS, ControllerSettings,  # noqa: E402
                                         FragmentController, FragmentModel, PolicySettings, evaluate_controllers,
                                         learn_user_model, player_traces, scale_player)
from motionctl.jobs import PrintProgress  # noqa: E402
from motionctl.library import import_library  # noqa: E402
from motionctl.session import Command, State  # noqa: E402
from motionctl.settings import to_dict  # noqa: E402

CLIPS = {
    "16": ["01", "05", "08", "09", "11", "12", "13", "15", "17", "18", "19", "20", "21", "23", "25", "27", "29", "33",
           "34", "35", "37", "39", "41", "43", "45", "48", "50", "52", "55", "57"],
    "09": ["01", "05", "12"],
    "35": ["01", "02", "03", "05", "10", "17", "20"],
    "127": ["04", "05", "09", "11", "13", "14", "15", "16", "17", "18", "19", "20", "21", "22", "25", "27", "33"],
}
QUICK = {"16": ["11", "15", "17", "35", "37", "05"], "09": ["12"], "127": ["13", "14", "21"]}


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def timed(label, fn, *a, **kw):
    tracemalloc.start()
    t = time.perf_counter()
    out = fn(*a, **kw)
    dt = time.perf_counter() - t
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"{label}: {dt:.1f} s, peak {peak / 2**20:.0f} MB traced, process peak RSS {peak_rss_mb():.0f} MB", flush=True)
    return out, dt, peak / 2**20


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mocap", default=os.environ.get("MOTIONCTL_MOCAP_DIR", os.path.join(ROOT, "..", "shared", "mocap")))
    ap.add_argument("--quick", action="store_true", help="a few clips, for a fast check of the script")
    ap.add_argument("--eval-traces", type=int, default=12)
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    args = ap.parse_args()
    chosen = QUICK if args.quick else CLIPS
    files = [os.path.join(args.mocap, "cmu_amc", s, f"{s}_{t}.amc") for s, ts in chosen.items() for t in ts]
    lib = import_library(files)
    assert len(lib.groups) == 1 and not lib.failed, lib.summary()
    db = lib.groups[0].database
    seconds = db.n_frames / db.fps
    print(f"{len(db.clips)} clips, {seconds:.0f} s of capture (mirrored: {2 * seconds:.0f} s)")

    settings = ControllerSettings()
    model, t_build, mem_build = timed("fragments + motion distances", FragmentModel.build, db, settings.fragments,
                                      settings.quality, PrintProgress("build", every=5))
    fs = model.fragments
    print(f"{fs.n} fragments, {fs.decision_rate:g} decisions/s")
    top_speed = fs.top_speed()
    train = player_traces([scale_player(p, top_speed) for p in TRAINING_PLAYERS], 210.0, fs.decision_rate, seed=1)
    evals = player_traces([scale_player(EVALUATION_PLAYER, top_speed)], 10.0, fs.decision_rate, seed=7,
                          count=args.eval_traces)
    bins = model.make_bins(settings, train)
    t_model = learn_user_model(train, bins, settings.smoothing)

    runs = {}
    tables = {}
    for kind in ("model", "steady", "spread", "greedy"):
        for thr in (None, 8.0):
            if kind == "greedy" and thr is not None:
                continue
            name = kind + ("-t" if thr else "")
            settings.policy = PolicySettings(kind=kind, threshold=thr)
            res, dt, mem = timed(f"train {name}", model.train, settings, bins, t_model, None,
                                 PrintProgress(name, every=10))
            tables[name] = res.table
            runs[name] = {"seconds": dt, "improvements": res.improvements, "products": res.sweeps,
                          "converged": res.converged, "traced_peak_mb": mem}
            if name == "model":
                model_values = res.values
                controller = FragmentController(settings, {}, [c.name for c in fs.clips], fs.fps,
                                                settings.fragments.heading_smooth, res.table, res.values, bins,
                                                fs.clip, fs.start, fs.n_frames, fs.top_speed(75))

    table1, t_eval, _ = timed("evaluate (opt, opt-t and all controllers)", evaluate_controllers, model, tables, bins,
                              evals, settings.quality, {"opt": None, "opt-t": 8.0}, PrintProgress("eval", every=10))

    # Retuning: change one weight, warm-start from the previous values.
    settings.policy = PolicySettings(kind="model")
    settings.quality.w_t = 8.0
    res_warm, t_warm, _ = timed("retrain model after w_t 6 -> 8 (warm start)", model.train, settings, bins, t_model,
                                model_values)
    res_cold, t_cold, _ = timed("retrain model after w_t 6 -> 8 (cold start)", model.train, settings, bins, t_model)
    settings.quality.w_t = 6.0

    # Run-time decisions through the common engine interface: a State and a Command in, a Step out
    # (bin lookup plus table lookup inside).
    rng = np.random.default_rng(0)
    controls = np.concatenate([t.samples for t in evals])
    prev = rng.integers(0, fs.n, len(controls))
    states = [State(np.zeros(2), 0.0, int(p)) for p in prev]
    commands = [Command(c) for c in controls]
    t = time.perf_counter()
    for st, c in zip(states, commands):
        controller.decide(st, c)
    per_decision_us = (time.perf_counter() - t) / len(controls) * 1e6

    # Paired comparison on the same traces (the controllers' spreads overlap).
    def paired(a, b):
        d = np.array(table1[a]["percent"]) - np.array(table1[b]["percent"])
        return {"mean": float(d.mean()), "stderr": float(d.std(ddof=1) / np.sqrt(len(d))), "wins": int((d > 0).sum()),
                "traces": len(d)}

    pairs = {f"{a} - {b}": paired(a, b) for a, b in (("model", "steady"), ("model", "spread"), ("model", "greedy"),
                                                     ("model", "model-t"), ("opt", "opt-t"))}
    results = {
        "command": "python bench/bench_fragments.py" + (" --quick" if args.quick else ""),
        "clips": len(db.clips), "capture_seconds": seconds, "fragments": fs.n, "bins": bins.n,
        "training_trace_seconds": sum(t.duration for t in train), "evaluation_traces": len(evals),
        "evaluation_trace_seconds": sum(t.duration for t in evals),
        "build_seconds": t_build, "build_traced_peak_mb": mem_build,
        "controllers": runs, "table1": {k: {"mean": v["mean"], "std": v["std"], "percent": v["percent"]}
                                        for k, v in table1.items()},
        "paired_differences": pairs,
        "evaluation_seconds": t_eval,
        "model_total_seconds": t_build + runs["model"]["seconds"],
        "warm_retrain_seconds": t_warm, "warm_retrain_improvements": res_warm.improvements,
        "cold_retrain_seconds": t_cold, "cold_retrain_improvements": res_cold.improvements,
        "per_decision_microseconds": per_decision_us, "process_peak_rss_mb": peak_rss_mb(),
        "settings": to_dict(ControllerSettings()), "environment": environment(),
    }
    os.makedirs(args.out, exist_ok=True)
    suffix = "_quick" if args.quick else ""
    with open(os.path.join(args.out, f"fragments{suffix}.json"), "w") as fh:
        json.dump(results, fh, indent=1)
    paper = {"model": (90, 1.9, 45, 4.1), "steady": (84, 2.6, 41, 5.1), "spread": (81, 2.4, 48, 7.1),
             "greedy": (46, 2.8, None, None), "opt": (None, None, 91, 2.3)}
    rows = []
    for k in ("model", "steady", "spread", "greedy", "opt"):
        reg = table1.get(k) if k != "opt" else None
        thr = table1.get(k + "-t")
        p = paper[k]
        cell = lambda v: f"{v['mean']:.1f} ± {v['std']:.1f}" if v else "—"  # noqa: E731
        pc = lambda m, s: f"{m} ± {s}" if m is not None else "—"  # noqa: E731
        rows.append(f"| {k} | {cell(reg)} | {cell(thr)} | {pc(p[0], p[1])} | {pc(p[2], p[3])} |")
    ctl = "\n".join(f"| {k} | {v['seconds']:.1f} | {v['improvements']} | {v['products']} | {v['converged']} | "
                    f"{v['traced_peak_mb']:.0f} |" for k, v in runs.items())
    md = f"""# Motion-fragment controllers on real capture (paper 000, Table 1)

Command: `{results['command']}` on this machine (2 cores).

Data: {len(db.clips)} CMU clips (subjects 16, 09, 35, 127; ASF/AMC), {seconds:.0f} s of capture, mirrored to
{2 * seconds:.0f} s; {fs.n} fragments of 0.1 s every 0.05 s at 60 Hz; {bins.n} control bins (paper layout,
ring radii fitted to the data). User model from {results['training_trace_seconds'] / 60:.1f} min of traces by two
generated players; evaluation on {len(evals)} traces ({results['evaluation_trace_seconds']:.0f} s) by a third player.

## Table 1: quality as % of the off-line optimum (mean ± std over evaluation traces)

| method | ours: regular | ours: thresholded (top 8%) | paper: regular | paper: thresholded |
| --- | --- | --- | --- | --- |
{chr(10).join(rows)}

Paired differences on the same traces (percentage points, mean ± standard error, traces where the first wins):

| pair | difference | wins |
| --- | --- | --- |
{chr(10).join(f"| {k} | {v['mean']:+.1f} ± {v['stderr']:.1f} | {v['wins']}/{v['traces']} |" for k, v in pairs.items())}

## Speed and memory

| step | seconds |
| --- | ---: |
| cut fragments + motion distances ({fs.n}² pairs x 3 offsets) | {t_build:.1f} |
| model controller: fragments + distances + solve | {results['model_total_seconds']:.1f} |
| evaluation: opt and opt-t by dynamic programming, all controllers | {t_eval:.1f} |
| retrain model after w_t 6 -> 8, warm start ({res_warm.improvements} improvements) | {t_warm:.1f} |
| same, cold start ({res_cold.improvements} improvements) | {t_cold:.1f} |
| one run-time decision (``decide``: bin + table lookup) | {per_decision_us:.1f} µs |

Process peak RSS over the whole run: {results['process_peak_rss_mb']:.0f} MB (fragment build traced peak
{mem_build:.0f} MB). The paper: 22 s per value-iteration step and several hours per controller at 5,934 fragments.

| controller | solve s | policy improvements | evaluation products | converged | traced peak MB |
| --- | ---: | ---: | ---: | --- | ---: |
{ctl}
"""
    with open(os.path.join(args.out, f"fragments{suffix}.md"), "w") as fh:
        fh.write(md)
    print(md)


if __name__ == "__main__":
    main()
