"""Paper 001's Figures 4, 6 and 11 on real capture: planning controllers learned by extra-trees
fitted iteration against a degree-2 polynomial value function (Treuille et al.) and greedy
control, parametric (blended groups) and non-parametric (one segment per group).

    .venv/bin/python bench/bench_fitted.py [--mocap DIR] [--seeds 5]

Navigation and guidance: CMU subjects 16 and 35 (walks, veers, 90-degree turns), mirrored.
Reach: the Character Creator group (walks, turns, side-steps, backward walks, the pick-up 02_06
and the punches 02_05).  Metrics as in the paper: learning time, training-set size, storage,
Bellman residual on 1,000 random states (and on the states the policy visits), average 10-step
reward from 1,000 random starts; plus, for reach and guidance, how often the task is done from
random starts, and for navigation how often a character facing away is still facing away.  Each
row is trained with several seeds and reported as mean ± standard deviation.
Writes bench/results/fitted.md and bench/results/fitted.json.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import tempfile
import time
from dataclasses import replace

import numpy as np

from harness import ROOT, add_mocap, default_mocap, write_json, write_markdown  # noqa: E402,F401  (first: the checkout on the path)

from harness import environment, previous as previous_figures  # noqa: E402
from motionctl.engines.planning import (FittedSettings, PlannerSettings, PlanningController,  # noqa: E402
                                        bellman_residual, decision_time, rollout, train_planner)
from motionctl.io.library import import_library  # noqa: E402
from motionctl.settings import to_dict  # noqa: E402

NAV = {"16": ["15", "17", "11", "21", "13"], "35": ["01", "02"]}
CC = ["07_02", "07_03", "07_06", "05_01", "06_10", "06_11", "06_08", "06_09", "06_06", "02_05", "02_06", "03_01"]
SEEDS = (0, 1, 2, 3, 4)
FLIP_STEPS = 10


def measure(name, clips, task, parametric=True, regressor="trees", steps=10, success_steps=20, seed=0, pass_bonus=0.0):
    """One training from scratch and its figures (see the module docstring).  The guidance rows use
    paper 001's reward (no pass bonus) unless told otherwise."""
    s = PlannerSettings(task=task, parametric=parametric, pass_bonus=pass_bonus,
                        fitted=FittedSettings(regressor=regressor, seed=seed))
    t = time.perf_counter()
    planner, fit, seg, groups = train_planner(clips, s)
    seconds = time.perf_counter() - t
    with tempfile.TemporaryDirectory() as tmp:
        model = PlanningController(s, {}, [c.name for c in seg.clips], seg.settings.fps, 0.2, planner)
        storage = os.path.getsize(model.save(os.path.join(tmp, "p.npz")))
    rng = np.random.default_rng(1234)
    x = planner.problem.task.sample(rng, 1000)
    g = rng.integers(0, planner.n_groups, 1000)
    # The residual with the blend samples the values were trained on (the planner plays 40 per group,
    # and a max over more blends is higher), on random states and on the states the policy visits.
    trained = replace(planner, problem=fit.problem)
    vx, vg = policy_states(planner, x, g, steps)
    pick = np.random.default_rng(5).choice(len(vx), min(1000, len(vx)), replace=False)  # 1,000 of them, like the random
    vx, vg = vx[pick], vg[pick]
    res = bellman_residual(trained, x, g)
    visited = bellman_residual(trained, vx, vg)
    out = {"name": name, "task": task, "parametric": parametric, "regressor": regressor, "seed": seed,
           "seconds": seconds, "samples": fit.samples, "segments": seg.n, "groups": groups.n,
           "storage_kb": storage / 1024, "residual_ms": res["mean_squared"], "residual_mean_abs": res["mean_absolute"],
           "residual_visited_ms": visited["mean_squared"],
           "residual_runtime_blends_ms": bellman_residual(planner, x, g)["mean_squared"],
           "iterations": fit.iterations, "frozen_at": fit.frozen_at, "n_min": fit.n_min,
           "decision_ms": decision_time(planner) * 1e3}
    for label, greedy in (("", False), ("greedy_", True)):
        total, done, _ = rollout(planner, x, g, steps, greedy=greedy)
        out[label + "reward10"] = float(total.mean())
        if task == "navigation":
            out[label + "flip_left_off"] = flip_left_off(planner, greedy)
        elif task == "guidance":
            # Done means through the gate or into a wall; count only clean passes, by where the start is.
            passed = passes(planner, x, g, success_steps, greedy)
            out[label + "success"] = float(passed.mean())
            where = _start_place(planner.problem.task, x)
            for place in ("opening", "wall", "beyond"):
                out[f"{label}success_{place}"] = float(passed[where == place].mean())
                out[f"starts_{place}"] = float((where == place).mean())
        else:
            _, done, _ = rollout(planner, x, g, success_steps, greedy=greedy)
            out[label + "success"] = float((done < success_steps).mean())
    print(json.dumps(out), flush=True)
    return out


def policy_states(planner, x0, g0, steps):
    """(x, g) of every state the policy passes through in ``steps`` decisions from (x0, g0) until done."""
    x, g = np.array(x0, dtype=float), np.array(g0)
    alive = np.ones(len(x), dtype=bool)
    xs, gs = [], []
    for _ in range(steps):
        xs.append(x[alive])
        gs.append(g[alive])
        _, g2, k2 = planner.decide_many(g, x)
        nxt, _, term = planner.step(x, g2, k2)
        alive &= ~term
        x, g = np.where(alive[:, None], nxt, x), np.where(alive, g2, g)
    return np.concatenate(xs), np.concatenate(gs)


def flip_left_off(planner, greedy, count=1000):
    """Navigation: the share of starts facing away from the desired direction (θ = ±180°, every group)
    still more than 90° off after FLIP_STEPS decisions."""
    rng = np.random.default_rng(7)
    x = np.where(rng.random(count) < 0.5, np.pi, -np.pi)[:, None] * (1 - 1e-6)
    g = rng.integers(0, planner.n_groups, count)
    _, _, (gs, ks) = rollout(planner, x, g, FLIP_STEPS, greedy=greedy)
    for t in range(FLIP_STEPS):
        x, _, _ = planner.step(x, gs[t], ks[t])
    return float(np.mean(np.abs(x[:, 0]) > np.pi / 2))


def _start_place(task, x):
    """Where each guidance start stands along the gate line: before the opening, before a wall, beyond the walls."""
    a, _ = task._in_gate_frame(x)
    return np.where(np.abs(a) < task.half_width, "opening", np.where(np.abs(a) < task.half_width + task.wall,
                                                                      "wall", "beyond"))


def passes(planner, x0, g0, steps, greedy, turn_after=None):
    """Guidance: starts that walk through the opening without touching a wall within ``steps``
    decisions; with ``turn_after``, the character turns round on the spot after that many
    decisions and has ``steps`` more."""
    task = planner.problem.task
    x, g = np.array(x0, dtype=float), np.array(g0)
    alive = np.ones(len(x), dtype=bool)
    ok = np.zeros(len(x), dtype=bool)
    for t in range(steps + (turn_after or 0)):
        if turn_after is not None and t == turn_after:
            x = task.apply(x, np.array([0.0, 0.0, np.pi]))
        _, g2, k2 = planner.decide_many(g, x, greedy=greedy)
        nxt, _, _ = planner.step(x, g2, k2)
        ok |= alive & task.passed(nxt)
        alive &= ~(task.passed(nxt) | task.near_wall(nxt))
        x = np.where(alive[:, None], nxt, x)
        g = np.where(alive, g2, g)
    return ok


METRICS = ("seconds", "samples", "storage_kb", "residual_ms", "residual_visited_ms", "residual_runtime_blends_ms",
           "reward10", "greedy_reward10", "success", "greedy_success", "flip_left_off", "greedy_flip_left_off",
           "success_opening", "success_wall", "success_beyond", "greedy_success_opening", "greedy_success_wall",
           "greedy_success_beyond", "starts_opening", "starts_wall", "starts_beyond",
           "frozen_at", "iterations", "decision_ms")


def summarise(runs):
    """Mean and standard deviation over seeds of every metric the runs have."""
    out = {k: runs[0][k] for k in ("name", "task", "parametric", "regressor", "segments", "groups")}
    out["seeds"] = [r["seed"] for r in runs]
    for k in METRICS:
        vals = [r[k] for r in runs if r.get(k) is not None]
        if vals:
            out[k] = float(np.mean(vals))
            out[k + "_sd"] = float(np.std(vals))
    return out


def main():
    ap = argparse.ArgumentParser()
    add_mocap(ap)
    ap.add_argument("--seeds", type=int, default=len(SEEDS), help="training seeds per row (0, 1, ...)")
    ap.add_argument("--markdown-only", action="store_true", help="rewrite fitted.md from fitted.json")
    args = ap.parse_args()
    if args.markdown_only:
        with open(os.path.join(ROOT, "bench", "results", "fitted.json")) as fh:
            results = json.load(fh)
        write_markdown("fitted", markdown(results, {r["name"]: r for r in results.get("previous", [])}))
        return
    env = environment()  # the commit whose code runs, recorded before anything else can change
    nav_files = [os.path.join(args.mocap, "cmu_amc", s, f"{s}_{t}.amc") for s, ts in NAV.items() for t in ts]
    nav = import_library(nav_files).groups[0].database.clips
    cc_files = [f for f in sorted(glob.glob(os.path.join(args.mocap, "cc_base", "*.bvh"))) if any(k in f for k in CC)]
    cc = next(g for g in import_library(cc_files).groups if g.skeleton.n_joints == 100).database.clips
    rows, runs = [], []
    for task, clips in (("navigation", nav), ("reach", cc), ("guidance", nav)):
        for regressor, label in (("trees", "extra-trees"), ("poly", "polynomial (Treuille et al.)")):
            for parametric in (True, False):
                name = f"{task}: {label}, {'parametric' if parametric else 'non-parametric'}"
                these = [measure(name, clips, task, parametric, regressor, seed=seed) for seed in range(args.seeds)]
                runs += these
                rows.append(summarise(these))
    # Guidance as the product trains it: with a reward for passing (PlannerSettings.pass_bonus).
    bonus = PlannerSettings().pass_bonus
    name = f"guidance: extra-trees, parametric, pass bonus {bonus:g} (the product's default)"
    these = [measure(name, nav, "guidance", seed=seed, pass_bonus=bonus) for seed in range(args.seeds)]
    runs += these
    rows.append(summarise(these))
    previous = {r["name"]: r for r in (previous_figures("fitted") or {"rows": []})["rows"]}
    results = {"command": "python bench/bench_fitted.py", "rows": rows, "runs": runs, "settings": to_dict(PlannerSettings()),
               "environment": env, "previous": list(previous.values()),
               "paper": {"navigation_trees": {"time_s": 3, "samples": 15960, "residual": 48.45, "reward": -231},
                         "navigation_parametric": {"time_s": 5, "samples": 13752, "residual": 29.63, "reward": -161},
                         "navigation_polynomial": {"time_s": 7, "samples": 15920, "residual": 6490.31, "reward": -328},
                         "grasping": {"time_s": 1200, "groups": 17, "samples": 178007}}}
    os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
    write_json("fitted", results)
    write_markdown("fitted", markdown(results, previous))
    print(markdown(results, previous))


def _pm(r, k, fmt="{:.2f}", scale=1.0):
    if k not in r:
        return "—"
    return (fmt + " ± " + fmt).format(scale * r[k], scale * r[k + "_sd"])


def markdown(results, previous) -> str:
    def fmt(r):
        succ = "—"
        if "success" in r:
            succ = f"{_pm(r, 'success', '{:.0f}', 100)}% / {_pm(r, 'greedy_success', '{:.0f}', 100)}%"
        elif "flip_left_off" in r:
            succ = (f"{_pm(r, 'flip_left_off', '{:.0f}', 100)}% / {_pm(r, 'greedy_flip_left_off', '{:.0f}', 100)}% "
                    "still > 90° off")
        p = previous.get(r["name"])
        before = "—" if p is None else (f"{p['residual_ms']:.4g}; {p['reward10']:.2f}" +
                                         (f"; {100 * p['success']:.0f}%" if "success" in p else ""))
        return (f"| {r['name']} | {r['seconds']:.1f} | {r['segments']} / {r['groups']} | {r['samples']:.0f} | "
                f"{r['storage_kb']:.0f} | {_pm(r, 'residual_ms', '{:.3g}')} | {_pm(r, 'residual_visited_ms', '{:.3g}')} | "
                f"{_pm(r, 'reward10')} | {_pm(r, 'greedy_reward10')} | {succ} | {before} | {r['decision_ms']:.2f} |")

    guid = [r for r in results["rows"] if r["task"] == "guidance"]
    places = "\n".join(
        f"| {r['name']} | {_pm(r, 'success_opening', '{:.0f}', 100)}% / {_pm(r, 'greedy_success_opening', '{:.0f}', 100)}% | "
        f"{_pm(r, 'success_wall', '{:.0f}', 100)}% / {_pm(r, 'greedy_success_wall', '{:.0f}', 100)}% | "
        f"{_pm(r, 'success_beyond', '{:.0f}', 100)}% / {_pm(r, 'greedy_success_beyond', '{:.0f}', 100)}% |" for r in guid)
    g0 = guid[0] if guid else {}
    seeds = len(results["rows"][0]["seeds"]) if results["rows"] else 0
    return f"""# Planning controllers by extra-trees fitted iteration (paper 001)

Command: `{results['command']}` on this machine (2 cores), commit {results['environment']['commit'][:10]}.  Every
row trains from scratch on real capture (mirrored) with {seeds} seeds (0, 1, ...): figures are mean ± standard
deviation over the seeds.  Metrics on 1,000 random starts (seeded).  Rewards are the summed R_s + R_t over 10
steps (higher is better).  Residual = mean squared Bellman residual (eq. 8) with the trees (or polynomials)
themselves and the blend samples they were trained on, at random states and at the states the policy visits in
10 steps from the random starts.  Success = task done within 20 steps, planning / greedy (reach: object within
the hand's reach at the end of a reach clip; guidance: through the opening without touching a wall);
navigation: share of starts facing away (180°) still more than 90° off after {FLIP_STEPS} decisions.
"Before" = residual; 10-step reward; success of the single seed-0 run before issue 14's fixes.

| controller | learning s | segments / groups | training samples | storage KB | Bellman residual (random) | residual (visited) | 10-step reward | greedy 10-step reward | success planning / greedy | before | ms per decision |
| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- | ---: |
{chr(10).join(fmt(r) for r in results['rows'])}

Guidance success by where the start stands along the gate line ({100 * g0.get('starts_opening', 0):.0f}% of starts
in front of the opening, {100 * g0.get('starts_wall', 0):.0f}% in front of a wall, {100 * g0.get('starts_beyond', 0):.0f}%
beyond the walls' ends), planning / greedy:

| controller | before the opening | before a wall | beyond the walls |
| --- | ---: | ---: | ---: |
{places}

Differences from the figures before issue 14 ("before"), and from the paper:
- Reach and non-parametric navigation: the trees froze while value was still spreading out from the rewards
  (reach at iteration 5, navigation at 6), so they had no splits where value later arrived; they now freeze
  only once the mean value stops growing (or at the 30-iteration cap), and plan far better than greedy.
- Reach: "before" was one seed, and rollouts clamped targets into the training box, which moved targets
  beyond it closer; targets beyond the box are now only seen at its edge when deciding, never moved.
- Guidance: the gate was never closer than 0.5 m ahead in the training box and every step clamped the state
  into it, so a head-on pass needed a longer step than any captured (0% before).  What is left of the gap to
  100% is eq. 12's reward: from beyond the walls' ends (a third of random starts) walking along the wall costs
  more (|θ| near 90°) than waiting in front of it (the lateral term falls with distance²), so the planner
  waits; with a reward for passing (the product's default) those starts pass half the time.
- Residuals: measured with the blend samples the values were trained on (before: 40 run-time blends against
  values trained on 8, whose max is higher), on random states and on the states the policy visits.  The
  polynomial diverges on non-parametric groups as in the paper's Figure 6 (trees stay small); on reach and
  guidance it diverges in both set-ups.
- Navigation, parametric against non-parametric: the paper's blended groups earned more (-161 vs -231),
  ours earn less (-3.17 vs -2.67), and greedy control shows the same gap, so it is the groups, not the
  learning.  A group's transition reward is the mean over its members (paper 001), so the free natural
  continuation of a step costs -0.18 between groups; measured over 10 steps from 1,000 starts (seed 0),
  the parametric planner keeps a better heading (R_s -1.75 vs -2.04) but pays more for transitions (R_t
  -1.42 vs -0.63).
- The paper's rewards and transition weights are not published, so its absolute residuals and rewards are
  not comparable; the ordering is what is compared: trees below the polynomial in residual and above it in
  reward, as in the paper.

Paper anchors (navigation, Figures 6 and 11): extra-trees 3 s, 15,960 samples, residual 48.45, reward -231;
parametric 5 s, 13,752 samples, residual 29.63, reward -161; polynomial 7 s, residual 6,490, reward -328;
grasping learned in 20 minutes (Figure 4).  The paper's reward scales are its own (unpublished γ, λ and
transition weights), so compare the ordering and ratios, not the numbers.
"""


if __name__ == "__main__":
    main()
