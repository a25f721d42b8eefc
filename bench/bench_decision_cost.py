"""What a decision costs, and how much of it is keeping the feet planted (issue 34): each engine at
its defaults, trained on bench_looks' mix of CMU subject 16's clips, plays the 10 s turning trace
as Play Trace plays it, with Plant Feet on and off (three runs each, the median run reported).  A
decision's time is split into the engine's own choice (``Model.decide``), the feet's locking
(``play.feet.plant``) and the rest of the synthesis (pieces, blends, the root's correction).

    .venv/bin/python bench/bench_decision_cost.py [--mocap DIR] [--engines a,b]

Run it on an idle machine: it measures time.  Writes bench/results/decision_cost.json and .md.
"""

from __future__ import annotations

import argparse
import time

from harness import add_mocap, environment, write_json, write_markdown  # noqa: E402  (first: the checkout on the path)

from bench_looks import clip_set, traces  # noqa: E402
from motionctl.engines import ENGINES  # noqa: E402
from motionctl.play import synth  # noqa: E402
from motionctl.play.commands import PlaySettings  # noqa: E402
from motionctl.play.session import Session  # noqa: E402

RUNS = 3


class Timed:
    """A callable that adds its wall time to ``self.seconds``."""

    def __init__(self, fn):
        self.fn, self.seconds = fn, 0.0

    def __call__(self, *args, **kwargs):
        t = time.perf_counter()
        try:
            return self.fn(*args, **kwargs)
        finally:
            self.seconds += time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_mocap(ap)
    ap.add_argument("--engines", default=",".join(ENGINES))
    args = ap.parse_args()
    clips = clip_set(args.mocap, "mix")
    plant = synth.plant
    rows = []
    try:
        for name in args.engines.split(","):
            engine = ENGINES[name]
            model = engine.fit(clips, engine.Settings())
            table = model.play(clips)
            trace = traces(model)["turning"]
            decide = model.decide
            for feet in (False, True):
                runs = []
                for _ in range(RUNS):
                    model.decide, synth.plant = Timed(decide), Timed(plant)
                    session = Session(model, table, play=PlaySettings(plant_feet=feet))
                    t = time.perf_counter()
                    session.play_trace(trace)
                    wall = time.perf_counter() - t
                    n = len(session.steps)
                    runs.append({"ms": 1e3 * wall / n, "decide_ms": 1e3 * model.decide.seconds / n,
                                 "feet_ms": 1e3 * synth.plant.seconds / n, "decisions": n})
                run = sorted(runs, key=lambda r: r["ms"])[RUNS // 2]
                run["synthesis_ms"] = run["ms"] - run["decide_ms"] - run["feet_ms"]
                rows.append({"engine": name, "plant_feet": feet, **run})
                print(rows[-1], flush=True)
            model.decide = decide
    finally:
        synth.plant = plant
    results = {"command": f"python bench/bench_decision_cost.py --engines {args.engines}", "runs": RUNS,
               "rows": rows, "environment": environment()}
    write_json("decision_cost", results)
    lines = ["# What a decision costs (`" + results["command"] + "`)", "",
             "10 s turning trace, each engine at its defaults on bench_looks' mix; ms per decision (median of "
             f"{RUNS} runs), split into the engine's choice, the rest of the synthesis and the feet's locking.", "",
             "| engine | Plant Feet | ms per decision | engine's choice | synthesis | feet | decisions |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        lines.append(f"| {r['engine']} | {'on' if r['plant_feet'] else 'off'} | {r['ms']:.2f} | {r['decide_ms']:.2f} | "
                     f"{r['synthesis_ms']:.2f} | {r['feet_ms']:.2f} | {r['decisions']} |")
    write_markdown("decision_cost", lines)


if __name__ == "__main__":
    main()
