"""The motion field on mixes of clips nobody tuned for (issue 34): random mixes of 4-8 of CMU
subject 16's locomotion clips (seeded), plus the contract test's walk-and-turns and the issue's
dozen (walks, veers, turns, two runs, a jump); for each, the field trained at several settings and
looked at as its summary box looks at it (``evaluate.looks.model_looks``: a 10 s walk turning left
then right, played as Play Trace plays it, against the mix's own capture).

    .venv/bin/python bench/bench_field_mixes.py [--mocap DIR] [--seeds 1,2,3,4] [--mixes 4]
                                                [--settings 15:0.1,6:0.1,6:0.03] [--agility 60]

Settings are ``k:delta`` (neighbours blended, drift correction): the paper's 15:0.1, and ours.
A mix passes when ``targets_missed`` is empty (skating at most 5 points above the capture's, no
slow glide, a foot down at least half as often as the capture, poses p95 within 1.5 times the
held-out capture's, the run as long as its trace).  ``--agility N``: what each setting costs in
control, N direction changes timed on the 49 locomotion clips.  Writes bench/results/field_mixes.json
and .md.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from harness import add_mocap, environment, write_json, write_markdown  # noqa: E402  (first: the checkout on the path)

from motionctl.engines import ENGINES  # noqa: E402
from motionctl.evaluate.looks import model_looks  # noqa: E402
from motionctl.io.library import import_library  # noqa: E402
from motionctl.settings import from_flat  # noqa: E402

LOCOMOTION = ["08"] + [f"{i:02d}" for i in range(11, 59)]
FIXED = [["15", "17", "19", "21"], ["05", "11", "13", "15", "16", "17", "19", "21", "23", "31", "35", "36"]]


def mixes(seeds, per_seed: int) -> list:
    out = [list(m) for m in FIXED]
    for seed in seeds:
        rng = np.random.default_rng(seed)
        out += [sorted(rng.choice(LOCOMOTION, size=int(rng.integers(4, 9)), replace=False)) for _ in range(per_seed)]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_mocap(ap)
    ap.add_argument("--seeds", default="1,2,3,4")
    ap.add_argument("--mixes", type=int, default=4, help="random mixes per seed")
    ap.add_argument("--settings", default="15:0.1,6:0.1,6:0.03")
    ap.add_argument("--agility", type=int, default=60, help="direction changes timed on the 49 locomotion clips "
                    "at each setting (0: none)")
    args = ap.parse_args()
    engine = ENGINES["field"]
    settings = [(int(k), float(d)) for k, d in (s.split(":") for s in args.settings.split(","))]
    rows, t0 = [], time.perf_counter()
    for trials in mixes([int(s) for s in args.seeds.split(",")], args.mixes):
        files = [os.path.join(args.mocap, "cmu_amc", "16", f"16_{t}.amc") for t in trials]
        clips = import_library(files).groups[0].database.clips
        for k, delta in settings:
            model = engine.fit(clips, from_flat(engine.Settings, {"k": k, "delta": delta}))
            info = model_looks(model, clips)
            row = {"clips": [f"16_{t}" for t in trials], "k": k, "delta": delta, **info["looks"],
                   "missed": info["looks_missed"]}
            rows.append(row)
            run, cap = row["run"], row["capture"]
            print(f"{','.join(trials)} k {k} δ {delta}: skating {100 * run['skating']:.1f}% (capture "
                  f"{100 * cap['skating']:.1f}%), planted {run['planted']:.2f} ({cap['planted']:.2f}), pose p95 "
                  f"{100 * run['pose_distance']['p95']:.1f} cm ({100 * cap['pose_distance']['p95']:.1f}) "
                  f"{'MISSES ' + '; '.join(row['missed']) if row['missed'] else 'passes'}", flush=True)
    agility = []
    if args.agility:  # what fewer neighbours cost: the time to face a new direction on the locomotion clips
        from bench_field import agility as response, load

        clips = load(args.mocap)
        rng, trials = np.random.default_rng(0), None
        for k, delta in settings:
            model = engine.fit(clips, from_flat(engine.Settings, {"k": k, "delta": delta}))
            table = model.play(clips)
            if trials is None:
                trials = [(int(rng.integers(0, table.n_frames - 3)),
                           float(rng.uniform(np.radians(30), np.pi)) * float(rng.choice([-1, 1])), 0.0)
                          for _ in range(args.agility)]
            agility.append({"k": k, "delta": delta, **response(model, table, trials)})
            print(agility[-1], flush=True)
    results = {"command": "python bench/bench_field_mixes.py --seeds {} --mixes {} --settings {} --agility {}".format(
                   args.seeds, args.mixes, args.settings, args.agility),
               "rows": rows, "agility": agility, "wall_seconds": time.perf_counter() - t0, "environment": environment()}
    write_json("field_mixes", results)
    write_markdown("field_mixes", markdown(results, settings))


def markdown(r: dict, settings) -> list:
    lines = [f"# The motion field on mixes nobody tuned for (`{r['command']}`)", "",
             "Each mix: the field trained at k neighbours and drift correction δ, then a 10 s walk turning left then "
             "right played as Play Trace plays it (`evaluate.looks.model_looks`). skating %, a foot down (planted) "
             "and pose distance p95 (cm) of the run, the capture's in brackets (pose: held-out capture).", ""]
    head = "| clips |" + "".join(f" k {k}, δ {d} |" for k, d in settings)
    lines += [head, "| --- |" + " --- |" * len(settings)]
    by_mix = {}
    for x in r["rows"]:
        by_mix.setdefault(",".join(x["clips"]), {})[(x["k"], x["delta"])] = x
    for mix, cells in by_mix.items():
        out = []
        for key in settings:
            x = cells[key]
            run, cap = x["run"], x["capture"]
            out.append(f"{'✓' if not x['missed'] else '✗'} {100 * run['skating']:.1f} ({100 * cap['skating']:.1f}), "
                       f"{100 * run['planted']:.0f}% ({100 * cap['planted']:.0f}%), "
                       f"{100 * run['pose_distance']['p95']:.1f} ({100 * cap['pose_distance']['p95']:.1f})")
        lines.append(f"| {mix.replace('16_', '')} | " + " | ".join(out) + " |")
    passed = [sum(not c[key]["missed"] for c in by_mix.values()) for key in settings]
    lines += ["", "Mixes passing every target: " + ", ".join(f"k {k}, δ {d}: {p} of {len(by_mix)}"
                                                            for (k, d), p in zip(settings, passed)) + ".",
              f"Wall {r['wall_seconds']:.0f} s."]
    if r["agility"]:
        lines += ["", "What it costs: the direction task's time to face a new direction (30-180°) on bench_field's 49 "
                  "locomotion clips, the same changes at each setting, played as the Preview panel plays it.", "",
                  "| k, δ | median s | p90 s | reached within 6 s | changes |", "| --- | ---: | ---: | ---: | ---: |"]
        lines += [f"| {a['k']}, {a['delta']} | {a['median_s']:.2f} | {a['p90_s']:.2f} | {100 * a['reached']:.0f}% | "
                  f"{a['trials']} |" for a in r["agility"]]
    return lines


if __name__ == "__main__":
    main()
