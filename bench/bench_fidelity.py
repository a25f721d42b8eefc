"""The papers' findings on placements nobody tuned for (issue 36): planning (paper 001) guiding the
character through a gate ahead of it, behind it, and after it has turned round, against greedy
control, and reaching, each over several training seeds and fresh random placements.

    .venv/bin/python bench/bench_fidelity.py [--mocap DIR] [--seeds 5] [--placements 1000] [--skip-reach]

Guidance is trained as the product trains it (``PlannerSettings`` defaults, pass bonus included)
on CMU subjects 16 and 35's walks, veers and turns (mirrored), one training per seed.  Each seed is
then asked ``--placements`` gates drawn with another generator than training's:

- ahead: the gate's centre 2.5-6 m away, within 45° of where the character faces, the gate turned
  up to 30° from facing it;
- behind: the same, but 135-225° from where it faces (it has to turn round first);
- turn_180: a gate ahead; three of the controller's own decisions, then the character turns round
  on the spot (the task state as after a 180° turn) and goes on.

Success: through the opening without touching a wall within 20 decisions (from the turn, for
turn_180).  Greedy is the same planner choosing with no future (paper 001 eq. 13).  Reach is the
reach task on the Character Creator group (bench_fitted's), success from the task's own random
starts.  Each figure is {"median", "low", "high", "n"} over the seeds (low/high: the lowest and
highest seed).  Writes bench/results/fidelity.json (figures another bench wrote are kept) and
fidelity.md.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import time

import numpy as np

from harness import add_mocap, merge_json, write_markdown  # noqa: E402  (first: the checkout on the path)

from bench_fitted import CC, NAV, passes  # noqa: E402
from harness import environment  # noqa: E402
from motionctl.engines.planning import PlannerSettings, rollout, train_planner  # noqa: E402
from motionctl.engines.planning import FittedSettings  # noqa: E402
from motionctl.io.library import import_library  # noqa: E402
from motionctl.rootframe import wrap  # noqa: E402
from motionctl.settings import to_dict  # noqa: E402

STEPS = 20  # decisions a gate may take
TURN_AFTER = 3  # decisions before the character turns round
PLACEMENT_SEED = 9001  # not a training seed
CASES = ("ahead", "behind", "turn_180")


def gates(rng, count: int, case: str) -> np.ndarray:
    """[count, 3] guidance states (θ, u, v) of gates placed as the module docstring says."""
    r = rng.uniform(2.5, 6.0, count)
    bearing = rng.uniform(-np.pi / 4, np.pi / 4, count)  # + left of the facing
    if case == "behind":
        bearing = wrap(bearing + np.pi)
    theta = wrap(bearing + rng.uniform(-np.pi / 6, np.pi / 6, count))  # θ = bearing: the gate faces the character
    return np.column_stack((theta, -r * np.sin(bearing), r * np.cos(bearing)))


def spread(values) -> dict:
    v = np.asarray(values, dtype=float)
    return {"median": float(np.median(v)), "low": float(v.min()), "high": float(v.max()), "n": int(len(v))}


def guidance_seed(clips, seed: int, placements: int, bonus: float | None = None) -> dict:
    """One guidance training (pass bonus: the product's unless given) and its successes."""
    s = PlannerSettings(task="guidance", fitted=FittedSettings(seed=seed))
    if bonus is not None:
        s.pass_bonus = bonus
    t = time.perf_counter()
    planner, _, _, _ = train_planner(clips, s)
    out = {"seed": seed, "pass_bonus": s.pass_bonus, "train_s": time.perf_counter() - t}
    rng = np.random.default_rng(PLACEMENT_SEED + seed)
    for case in CASES:
        x = gates(rng, placements, "ahead" if case == "turn_180" else case)
        g = rng.integers(0, planner.n_groups, placements)
        turn = TURN_AFTER if case == "turn_180" else None
        for label, greedy in (("", False), ("greedy_", True)):
            out[f"{label}{case}"] = float(passes(planner, x, g, STEPS, greedy, turn).mean())
    print(json.dumps(out), flush=True)
    return out


def reach_seed(clips, seed: int, placements: int) -> dict:
    s = PlannerSettings(task="reach", fitted=FittedSettings(seed=seed))
    planner, _, _, _ = train_planner(clips, s)
    rng = np.random.default_rng(PLACEMENT_SEED + seed)
    x = planner.problem.task.sample(rng, placements)
    g = rng.integers(0, planner.n_groups, placements)
    out = {"seed": seed}
    for label, greedy in (("", False), ("greedy_", True)):
        _, done, _ = rollout(planner, x, g, STEPS, greedy=greedy)
        out[f"{label}reach"] = float((done < STEPS).mean())
    print(json.dumps(out), flush=True)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_mocap(ap)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--placements", type=int, default=1000)
    ap.add_argument("--skip-reach", action="store_true", help="guidance only (reach trains ~90 s a seed)")
    ap.add_argument("--bonus", type=float, nargs="*", default=[0.0],
                    help="other pass bonuses to measure guidance with (the product's default is the figures')")
    args = ap.parse_args()
    env = environment()
    t0 = time.perf_counter()
    nav_files = [os.path.join(args.mocap, "cmu_amc", s, f"{s}_{t}.amc") for s, ts in NAV.items() for t in ts]
    nav = import_library(nav_files).groups[0].database.clips
    runs = [guidance_seed(nav, seed, args.placements) for seed in range(args.seeds)]
    other = {b: [guidance_seed(nav, seed, args.placements, b) for seed in range(args.seeds)] for b in args.bonus}
    figures = {}
    for case in CASES:
        figures[f"guidance_gate_{case}_success" if case != "turn_180" else "guidance_turn_180_success"] = \
            spread([r[case] for r in runs])
        figures[f"greedy_guidance_gate_{case}_success" if case != "turn_180" else "greedy_guidance_turn_180_success"] = \
            spread([r[f"greedy_{case}"] for r in runs])
    reach_runs = []
    if not args.skip_reach:
        cc_files = [f for f in sorted(glob.glob(os.path.join(args.mocap, "cc_base", "*.bvh"))) if any(k in f for k in CC)]
        cc = next(g for g in import_library(cc_files).groups if g.skeleton.n_joints == 100).database.clips
        reach_runs = [reach_seed(cc, seed, args.placements) for seed in range(args.seeds)]
        figures["reach_success"] = spread([r["reach"] for r in reach_runs])
        figures["greedy_reach_success"] = spread([r["greedy_reach"] for r in reach_runs])
    bonus_table = {f"{b:g}": {case: spread([r[case] for r in rs]) for case in CASES} for b, rs in
                   [(PlannerSettings().pass_bonus, runs)] + list(other.items())}
    results = merge_json("fidelity", figures,
                         command="python bench/bench_fidelity.py" + (" --skip-reach" if args.skip_reach else ""),
                         planning={"guidance_runs": runs, "reach_runs": reach_runs, "pass_bonus": bonus_table,
                                   "other_bonus_runs": {f"{b:g}": rs for b, rs in other.items()},
                                   "settings": to_dict(PlannerSettings(task="guidance")),
                                   "placements": args.placements, "steps": STEPS,
                                   "wall_seconds": time.perf_counter() - t0, "environment": env})
    write_markdown("fidelity", markdown(results))
    print(markdown(results))


def markdown(r: dict) -> str:
    rows = "\n".join(f"| {k} | {100 * v['median']:.0f}% | {100 * v['low']:.0f}-{100 * v['high']:.0f}% | {v['n']} |"
                     if v.get("high", 2) <= 1 else f"| {k} | {v['median']:.3g} | {v['low']:.3g}-{v['high']:.3g} | {v['n']} |"
                     for k, v in sorted(r["figures"].items()) if isinstance(v, dict))
    flags = "; ".join(f"{k}: **{v}**" for k, v in sorted(r["figures"].items()) if isinstance(v, bool))
    p = r.get("planning", {})
    bonus = "\n".join(f"| {b} | " + " | ".join(f"{100 * v[c]['median']:.0f}% ({100 * v[c]['low']:.0f}-{100 * v[c]['high']:.0f})"
                                                for c in CASES) + " |" for b, v in p.get("pass_bonus", {}).items())
    return f"""# The papers' findings on placements nobody tuned for (`{r['command']}`)

Commit {p.get('environment', {}).get('commit', '?')[:10]}; {p.get('placements')} placements per seed and case,
drawn apart from training; success within {p.get('steps')} decisions.  Median and the lowest-highest seed.

| figure | median | seeds' range | seeds |
| --- | ---: | ---: | ---: |
{rows}

{flags}

Guidance by pass bonus (planning's success, median and seeds' range; the first row is the product's default):

| pass bonus | gate ahead | gate behind | turned round |
| --- | ---: | ---: | ---: |
{bonus}
"""


if __name__ == "__main__":
    main()
