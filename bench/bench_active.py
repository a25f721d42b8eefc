"""Active learning (paper 003, Table 1 and Figure 6) on real capture: coverage against the number
of examples for active selection, random selection from the pool, random selection from the pool's
examples a request inside the task box can be answered with (``answerable``: what random picks
hold that no request gets) and a uniform grid plan over the task inputs ("manual"), each over
several seeds.

    .venv/bin/python bench/bench_active.py [--mocap DIR] [--seeds 5] [--budget 30] [--quick]
    .venv/bin/python bench/bench_active.py --steps     # the panel's seconds per step at ~30 examples
    .venv/bin/python bench/bench_active.py --unseen 2026:7,77:11   # walk, on seeds this run never uses

Data: CMU subject 16.  Walk task: every clip the CMU index describes as a walk (walk, veer, 90°
turn, slow walk and stop: 16_11-16_34, 16_47, 16_58), mirrored: 93 gait cycles.  Jump task: the
jumps 16_01-16_07, 16_09, 16_10 (in place, high, forward), mirrored: 18 jumps.

Coverage (DESIGN.md 3.4): the share of one fixed random sample of (state, u) (states: the pool's
example start states; u uniform in the task's bounds) that a controller completes: a cluster start
within the state tolerance and every task error within its tolerance.  Raw, and normalised by what
any controller of the run (every method, seed and step) or any single pool example completes (the
paper's "any controller" normalisation).  Writes bench/results/active.md, .json and active.png.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import tracemalloc

import numpy as np

from harness import ROOT, add_mocap, default_mocap  # noqa: E402,F401  (first: the checkout on the path)

from harness import environment, merge_json  # noqa: E402
from motionctl.engines.active import ActiveSettings  # noqa: E402
from motionctl.engines.active.controller import Controller  # noqa: E402
from motionctl.engines.active.learning import (  # noqa: E402
    CoverageSample, Learner, Oracle, Pool, active_step, answerable, baseline, coverage)
from motionctl.engines.active.session import IDLE_STEPS, working  # noqa: E402
from motionctl.engines.active.tasks import task_named  # noqa: E402
from motionctl.io.library import import_library  # noqa: E402

WALKS = [f"{i}" for i in range(11, 35)] + ["47", "58"]
JUMPS = ["01", "02", "03", "04", "05", "06", "07", "09", "10"]
RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")


def load(mocap, trials):
    files = [os.path.join(mocap, "cmu_amc", "16", f"16_{t}.amc") for t in trials]
    return import_library(files).groups[0].database.clips


def fresh(pool: Pool, seed_i: int, settings: ActiveSettings) -> Controller:
    pool.used[:] = False
    pool.used[seed_i] = True
    ctrl = Controller(pool.task, pool.clips[0].skeleton, settings.fps, settings.tolerance, settings.join)
    pool.give(ctrl, seed_i, pool.states[seed_i])
    return ctrl


def run_active(pool, seed_i, seed, budget, sample, settings, max_steps):
    ctrl = fresh(pool, seed_i, settings)
    learner = Learner(ctrl, Oracle(pool, settings.tolerance), np.random.default_rng(seed))
    curve, steps, idle = [coverage(ctrl, sample)], [], 0
    for step in range(max_steps):
        if ctrl.n_examples >= budget or idle >= IDLE_STEPS:
            break
        before = ctrl.n_examples
        e = active_step(learner, step, None)
        idle = idle + 1 if e.action == "rejected" else 0
        steps.append({"action": e.action, "metric": e.metric, "candidate": e.candidate, "answer": e.answer,
                      "seconds": e.seconds, "rejected": e.rejected, "examples": ctrl.n_examples,
                      "pseudo": ctrl.n_pseudo, "clusters": len(ctrl.clusters)})
        if ctrl.n_examples > before:
            curve.append(coverage(ctrl, sample))
        elif e.action == "pseudoexample":
            curve[-1] = coverage(ctrl, sample)  # the pseudoexample's gain counts at this example count
    return curve, steps, ctrl


def run_baseline(pool, seed_i, seed, budget, sample, settings, how):
    ctrl = fresh(pool, seed_i, settings)
    t = time.perf_counter()
    curve = [coverage(ctrl, sample)] + baseline(ctrl, pool, budget, how, seed, sample, Oracle(pool, settings.tolerance))
    return curve, time.perf_counter() - t, ctrl


def task_bench(name, clips, seeds, budget, n_sample):
    settings = ActiveSettings(task=name)
    task = task_named(name)
    work = working(clips, settings)
    pool = Pool.of(work, task, work[0].skeleton, settings.fps)
    sample = CoverageSample.draw(pool, n_sample, 0)
    pool_ok = pool.completes(sample.states, sample.u, settings.tolerance)
    rng = np.random.default_rng(123)
    seed_examples = rng.choice(pool.n, seeds, replace=False)
    runs = {"active": [], "random": [], "answerable": [], "grid": []}
    for k, seed_i in enumerate(seed_examples):
        t = time.perf_counter()
        curve, steps, ctrl = run_active(pool, int(seed_i), k, budget, sample, settings, 3 * budget)
        runs["active"].append({"seed_example": int(seed_i), "curve": curve, "steps": steps,
                               "seconds": time.perf_counter() - t, "clusters": len(ctrl.clusters),
                               "pseudo": ctrl.n_pseudo})
        print(f"{name} seed {k}: active {len(curve)} examples, coverage {curve[-1].mean():.3f}, "
              f"{time.perf_counter() - t:.1f} s", flush=True)
        for how in ("random", "answerable", "grid"):
            curve, secs, ctrl = run_baseline(pool, int(seed_i), k, budget, sample, settings, how)
            runs[how].append({"seed_example": int(seed_i), "curve": curve, "seconds": secs, "clusters": len(ctrl.clusters)})
            print(f"{name} seed {k}: {how} {len(curve)} examples, coverage {curve[-1].mean():.3f}", flush=True)
    anyone = pool_ok.copy()
    for rs in runs.values():
        for r in rs:
            for c in r["curve"]:
                anyone |= c
    share = float(anyone.mean())
    table = {}
    for how, rs in runs.items():
        raw = np.full((len(rs), budget), np.nan)
        for i, r in enumerate(rs):
            m = np.array([c.mean() for c in r["curve"]])[:budget]
            raw[i, :len(m)] = m
        table[how] = {"raw_mean": np.nanmean(raw, 0).tolist(), "raw_min": np.nanmin(raw, 0).tolist(),
                      "raw_max": np.nanmax(raw, 0).tolist(), "normalised_mean": (np.nanmean(raw, 0) / share).tolist(),
                      "normalised_min": (np.nanmin(raw, 0) / share).tolist(),
                      "normalised_max": (np.nanmax(raw, 0) / share).tolist(),
                      "reached": [int(np.sum(np.isfinite(raw[:, n]))) for n in range(budget)]}
        for r in rs:
            r["curve"] = [float(c.mean()) for c in r["curve"]]
    step_secs = [s["seconds"] for r in runs["active"] for s in r["steps"]]
    info = {"task": name, "pool_examples": pool.n, "sample": n_sample, "pool_completes": float(pool_ok.mean()),
            "any_completes": share, "bounds": [task.low.tolist(), task.high.tolist()], "tolerances": task.tol.tolist(),
            "step_seconds_median": float(np.median(step_secs)) if step_secs else None,
            "step_seconds_max": float(np.max(step_secs)) if step_secs else None,
            "answerable_examples": int(answerable(pool).sum()),
            "pseudo_accepted": [r["pseudo"] for r in runs["active"]],
            "rejected_requests": [int(sum(s["rejected"] for s in r["steps"])) for r in runs["active"]],
            "table": table, "runs": runs}
    return info


COLOURS = {"active": (0.85, 0.15, 0.1), "random": (0.1, 0.35, 0.85), "answerable": (0.45, 0.7, 0.95),
           "grid": (0.1, 0.6, 0.2)}


def plot(results, path):
    """Normalised coverage (%) against examples, one panel per task: mean (thick) and the seeds'
    min and max (thin); red active, blue random, light blue random among the examples a request can
    be answered with, green grid.  Axes: 0-100% in steps of 20, one tick per 5 examples (no text:
    the results page says what is what)."""
    from bench.readme_figures import Canvas, write_png
    w, h, m = 420, 300, 30
    panels = []
    for res in results:
        cv = Canvas(w, h)
        budget = len(res["table"]["active"]["normalised_mean"])

        def xy(n, c, budget=budget):
            return np.column_stack((m + (np.asarray(n) - 1) / max(budget - 1, 1) * (w - 2 * m),
                                    h - m - np.clip(c, 0, 1) * (h - 2 * m)))

        for g in np.linspace(0, 1, 6):
            a = xy([1, budget], [g, g])
            cv.lines(a[:1], a[1:], (0.85, 0.85, 0.85), 1.0)
        for n in range(5, budget + 1, 5):
            a = xy([n, n], [0, 0.03])
            cv.lines(a[:1], a[1:], (0.3, 0.3, 0.3), 1.0)
        a = xy([1, 1, budget], [1, 0, 0])
        cv.lines(a[:-1], a[1:], (0.2, 0.2, 0.2), 1.5)
        for how, colour in COLOURS.items():
            t = res["table"][how]
            n = np.arange(1, budget + 1)
            for key, width in (("normalised_min", 1.0), ("normalised_max", 1.0), ("normalised_mean", 3.0)):
                v = np.array(t[key], dtype=float)
                ok = np.isfinite(v)
                pts = xy(n[ok], v[ok])
                if len(pts) > 1:
                    cv.lines(pts[:-1], pts[1:], colour, width)
        panels.append(cv.result())
    write_png(path, np.concatenate(panels, axis=1))


def write_md(results, env, path, wall, peak):
    lines = ["# Active learning (paper 003): coverage against examples", "",
             f"`.venv/bin/python bench/bench_active.py` on commit {env.get('commit', '?')}; wall {wall:.0f} s, "
             f"traced peak {peak / 1e6:.0f} MB.", "",
             "Coverage = share of a fixed random sample of (start state, task input) completed (start matched within "
             "0.12 m, every task error within tolerance). *Normalised* divides by the share that any controller of "
             "this run (any method, seed, step) or any single pool example completes (paper 003's normalisation).",
             "Mean [min, max] over seeds; each seed starts every method from the same seed example.", "",
             "![coverage](active.png)", "",
             "Picture: normalised coverage (0-100%, grid every 20%) against examples (ticks every 5), walk left, "
             "jump right; red active, blue random, light blue random among the examples a request inside the box can "
             "be answered with, green grid plan; thick the mean, thin the seeds' min and max.", ""]
    for res in results:
        lines += [f"## {res['task']}", "",
                  f"Pool {res['pool_examples']} examples; sample {res['sample']}; bounds {res['bounds']}, tolerances "
                  f"{res['tolerances']}. Single pool examples complete {100 * res['pool_completes']:.1f}% of the "
                  f"sample; any controller or example {100 * res['any_completes']:.1f}%.", "",
                  f"Random (answerable): random selection from the {res['answerable_examples']} of the pool's "
                  f"{res['pool_examples']} examples that a request inside the box can be answered with (what each "
                  "does within the performer's three tolerances of the box in every metric).", "",
                  "| examples | active | random | random (answerable) | grid (manual) |",
                  "| ---: | --- | --- | --- | --- |"]
        budget = len(res["table"]["active"]["raw_mean"])
        for n in sorted({min(k, budget) for k in (5, 10, 20, 30, budget)}):
            row = [f"{n}"]
            for how in ("active", "random", "answerable", "grid"):
                t = res["table"][how]
                i = n - 1
                if t["reached"][i] == 0:
                    row.append("—")
                    continue
                row.append(f"{100 * t['normalised_mean'][i]:.0f}% [{100 * t['normalised_min'][i]:.0f}, "
                           f"{100 * t['normalised_max'][i]:.0f}] (raw {100 * t['raw_mean'][i]:.1f}%, "
                           f"{t['reached'][i]} seeds)")
            lines.append("| " + " | ".join(row) + " |")
        lines += ["", f"Active step: median {res['step_seconds_median']:.2f} s, max {res['step_seconds_max']:.2f} s. "
                  f"Pseudoexamples accepted per seed: {res['pseudo_accepted']}. Requests the oracle rejected per "
                  f"seed: {res['rejected_requests']}.", ""]
    lines += ["Paper 003 Table 1 (catching, normalised): active 57% with 30 samples; manual plans 38%, 56%, 48%, 48% "
              "with 36, 44, 54, 41.", ""]
    with open(path, "w") as f:
        f.write("\n".join(lines))


def interactive_steps(clips, examples: int = 30, rounds: int = 5) -> dict:
    """Seconds per call of the Active Learning panel's loop (``ActiveSession``, what each button
    runs) once the controller holds about ``examples`` examples: Auto steps to get there, then
    ``rounds`` of Suggest (with its pseudoexample proposals), Answer (with the clip the oracle
    would choose for the first request it can answer), Suggest, Reject, Suggest, Accept
    Pseudoexample."""
    from motionctl.engines.active.session import ActiveSession

    times = {k: [] for k in ("auto", "suggest", "answer", "reject", "accept_pseudo", "start", "save")}
    t = time.perf_counter()
    session = ActiveSession(clips, ActiveSettings(task="walk"))
    times["start"].append(time.perf_counter() - t)
    by_name = {c.name: c for c in clips}
    out_path = os.path.join(RESULTS, "active_steps_model.npz")
    while session.ctrl.n_examples < examples and len(session.logs) < 3 * examples:
        times["auto"].append(session.auto().seconds)
    for _ in range(rounds):
        for call in ("answer", "reject", "accept_pseudo"):
            t = time.perf_counter()
            cands = session.suggest()
            times["suggest"].append(time.perf_counter() - t)
            if call == "answer":
                answers = ((k, session.oracle.answer(c)) for k, c in enumerate(cands))
                k, i = next(((k, i) for k, i in answers if i is not None), (None, None))
                if k is None:
                    continue
                name = session.pool.name(i)
                base = name[:-len("_mirror")] if name.endswith("_mirror") else name
                t = time.perf_counter()
                session.answer(k, by_name[base], mirrored=base != name)
            elif call == "reject":
                t = time.perf_counter()
                session.reject(0)
            else:
                k = next((k for k, c in enumerate(cands) if c.pseudo is not None), None)
                if k is None:
                    continue
                t = time.perf_counter()
                session.accept_pseudo(k)
            times[call].append(time.perf_counter() - t)
            if call != "reject":  # what the panel does after a step: summary, picture, the model file
                t = time.perf_counter()
                model = session.model()
                model.picture()
                model.save(out_path)
                times["save"].append(time.perf_counter() - t)
    os.remove(out_path)
    out = {k: {"n": len(v), "median": float(np.median(v)) if v else None, "max": float(np.max(v)) if v else None}
           for k, v in times.items()}
    out.update(examples=session.ctrl.n_examples, pseudoexamples=session.ctrl.n_pseudo,
               clusters=len(session.ctrl.clusters), candidates=len(session.candidates))
    return out


def write_steps_md(res, env, path) -> None:
    lines = ["# Active Learning panel: seconds per step", "",
             f"commit {env.get('commit', '?')}; CMU 16 walks mirrored; `ActiveSession`, the calls the panel's buttons "
             f"run, with {res['examples']} examples, {res['pseudoexamples']} pseudoexamples in {res['clusters']} "
             "cluster(s).", "", "| call | n | median s | max s |", "| --- | ---: | ---: | ---: |"]
    for k in ("start", "auto", "suggest", "answer", "reject", "accept_pseudo", "save"):
        r = res[k]
        if r["n"]:
            lines.append(f"| {k} | {r['n']} | {r['median']:.2f} | {r['max']:.2f} |")
    lines += ["", "A step the animator takes is Suggest, then Answer, Reject or Accept, then (not after a Reject) save: "
              "the model with its summary (coverage on the 4,000-sample set and what the library completes), its "
              "picture and its file, as the panel does after every step (paper 003: 5-30 s per step).", ""]
    with open(path, "w") as f:
        f.write("\n".join(lines))


def fidelity_figures(walk: dict, budget: int) -> None:
    """Issue 36's figures into bench/results/fidelity.json: the walk task's coverage at ``budget``
    examples against the reachable part of the task box (what any controller of the run or any pool
    example completes: computed on the sample, not assumed), active, random, random among the
    examples a request can be answered with, and active's paired differences from both, each
    {median, low, high, n} over the seeds."""
    from bench_fidelity import spread

    reach = walk["any_completes"]

    def at_n(method, n):  # a run that stopped short counts at its last example count
        return [r["curve"][min(n, len(r["curve"])) - 1] / reach for r in walk["runs"][method]]

    at = {m: at_n(m, budget) for m in ("active", "random", "answerable")}
    budgets = sorted({5, 10, 20, budget} & set(range(1, budget + 1)))
    figures = {f"active_coverage_reachable_{budget}": spread(at["active"]),
               f"random_coverage_reachable_{budget}": spread(at["random"]),
               f"random_answerable_coverage_reachable_{budget}": spread(at["answerable"]),
               **{f"active_minus_random_{n}": spread(np.subtract(at_n("active", n), at_n("random", n))) for n in budgets},
               **{f"active_minus_random_answerable_{n}": spread(np.subtract(at_n("active", n), at_n("answerable", n)))
                  for n in budgets},
               "active_reachable_share": {"median": reach, "low": reach, "high": reach, "n": 1}}
    merge_json("fidelity", figures, active={"command": "python bench/bench_active.py", "budget": budget,
                                            "reachable": reach, "at_budget": at, "environment": environment(),
                                            "seed_examples": [r["seed_example"] for r in walk["runs"]["active"]]})


def unseen_bench(clips, sets, seeds, budget, n_sample) -> dict:
    """Active against random on the walk task from seed examples and coverage samples the default
    run does not use: per set (rng seed, sample seed), ``seeds`` seed examples drawn by that rng and
    a sample drawn with that seed; the learners' and random orders' seeds 100 + k.  Raw coverage,
    paired per seed."""
    settings = ActiveSettings(task="walk")
    work = working(clips, settings)
    pool = Pool.of(work, task_named("walk"), work[0].skeleton, settings.fps)
    out = {"sets": [], "budgets": sorted({5, 10, 20, budget} & set(range(1, budget + 1)))}
    for rng_seed, sample_seed in sets:
        sample = CoverageSample.draw(pool, n_sample, sample_seed)
        runs = []
        for k, seed_i in enumerate(np.random.default_rng(rng_seed).choice(pool.n, seeds, replace=False)):
            curves = {"active": run_active(pool, int(seed_i), 100 + k, budget, sample, settings, 3 * budget)[0],
                      "random": run_baseline(pool, int(seed_i), 100 + k, budget, sample, settings, "random")[0]}
            runs.append({"seed_example": int(seed_i), **{m: [float(c.mean()) for c in cs] for m, cs in curves.items()}})
            print(f"set {rng_seed}:{sample_seed} seed example {seed_i}: active {runs[-1]['active'][-1]:.4f} "
                  f"random {runs[-1]['random'][-1]:.4f}", flush=True)
        out["sets"].append({"rng": rng_seed, "sample_seed": sample_seed, "runs": runs})
    return out


def paired(runs, n) -> np.ndarray:
    """Active minus random, raw points, per seed at ``n`` examples (a run that stopped short at its last)."""
    return np.array([100 * (r["active"][min(n, len(r["active"])) - 1] - r["random"][min(n, len(r["random"])) - 1])
                     for r in runs])


def write_unseen_md(res, env, path, wall) -> None:
    lines = ["# Active learning on seeds `bench_active.py` does not use (walk)", "",
             f"`.venv/bin/python bench/bench_active.py --unseen ...` on commit {env.get('commit')}; wall {wall:.0f} s.", "",
             "Active minus random, raw coverage points, paired per seed (seed examples drawn by each set's rng, "
             "the coverage sample by its sample seed; learner and random order seeds 100 + k).", "",
             "| examples | " + " | ".join(f"set {s['rng']}:{s['sample_seed']} (seed examples "
                                          f"{', '.join(str(r['seed_example']) for r in s['runs'])})" for s in res["sets"])
             + " | all: mean ± sd, behind |", "| ---: |" + " --- |" * (len(res["sets"]) + 1)]
    for n in res["budgets"]:
        every = np.concatenate([paired(s["runs"], n) for s in res["sets"]])
        lines.append(f"| {n} | " + " | ".join(", ".join(f"{d:+.2f}" for d in paired(s["runs"], n)) for s in res["sets"])
                     + f" | {every.mean():+.2f} ± {every.std(ddof=1):.2f}, {int((every < 0).sum())} of {len(every)} |")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_mocap(p)
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--budget", type=int, default=30)
    p.add_argument("--jump-budget", type=int, default=10)
    p.add_argument("--sample", type=int, default=4000)
    p.add_argument("--quick", action="store_true", help="2 seeds, budget 8, 1000 samples")
    p.add_argument("--steps", action="store_true", help="only the panel's seconds per step, with about 30 examples "
                   "(bench/results/active_steps.md and .json)")
    p.add_argument("--unseen", default="", help="walk only, on seed examples and samples the default run does not "
                   "use: RNG:SAMPLE_SEED pairs, comma-separated (bench/results/active_unseen.md and .json)")
    args = p.parse_args(argv)
    if args.unseen:
        t0 = time.perf_counter()
        sets = [tuple(int(v) for v in part.split(":")) for part in args.unseen.split(",")]
        res = unseen_bench(load(args.mocap, WALKS), sets, args.seeds, args.budget, args.sample)
        env = environment()
        os.makedirs(RESULTS, exist_ok=True)
        with open(os.path.join(RESULTS, "active_unseen.json"), "w") as f:
            json.dump({"environment": env, "settings": vars(args), "wall_seconds": time.perf_counter() - t0,
                       "results": res}, f, indent=1, default=float)
        write_unseen_md(res, env, os.path.join(RESULTS, "active_unseen.md"), time.perf_counter() - t0)
        print(open(os.path.join(RESULTS, "active_unseen.md")).read())
        return 0
    if args.steps:
        t0 = time.perf_counter()
        tracemalloc.start()
        res = interactive_steps(load(args.mocap, WALKS))
        peak = tracemalloc.get_traced_memory()[1]
        env = environment()
        os.makedirs(RESULTS, exist_ok=True)
        with open(os.path.join(RESULTS, "active_steps.json"), "w") as f:
            json.dump({"environment": env, "settings": vars(args), "wall_seconds": time.perf_counter() - t0,
                       "traced_peak_bytes": peak, "results": res}, f, indent=1, default=float)
        write_steps_md(res, env, os.path.join(RESULTS, "active_steps.md"))
        print(open(os.path.join(RESULTS, "active_steps.md")).read())
        return 0
    if args.quick:
        args.seeds, args.budget, args.jump_budget, args.sample = 2, 8, 5, 1000
    t0 = time.perf_counter()
    tracemalloc.start()
    results = [task_bench("walk", load(args.mocap, WALKS), args.seeds, args.budget, args.sample),
               task_bench("jump", load(args.mocap, JUMPS), args.seeds, args.jump_budget, args.sample)]
    peak = tracemalloc.get_traced_memory()[1]
    wall = time.perf_counter() - t0
    env = environment()
    os.makedirs(RESULTS, exist_ok=True)
    stem = "active_quick" if args.quick else "active"
    with open(os.path.join(RESULTS, stem + ".json"), "w") as f:
        json.dump({"environment": env, "settings": vars(args), "wall_seconds": wall, "traced_peak_bytes": peak,
                   "results": results}, f, indent=1, default=float)
    plot(results, os.path.join(RESULTS, stem + ".png"))
    write_md(results, env, os.path.join(RESULTS, stem + ".md"), wall, peak)
    if not args.quick:
        fidelity_figures(results[0], args.budget)
    print(open(os.path.join(RESULTS, stem + ".md")).read())
    return 0


if __name__ == "__main__":
    sys.exit(main())
