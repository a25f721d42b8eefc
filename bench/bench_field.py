"""Paper 002 on real capture: motion fields learned for the direction and line tasks, their
agility against clip-based controllers on the same data, foot skating, and pushes.

    .venv/bin/python bench/bench_field.py [--mocap DIR] [--changes 200] [--quick]

Data: all of CMU subject 16's locomotion (16_08, 16_11 - 16_58: walks, veers, 90-degree turns,
slow walk and stop, runs, sudden stops; 117 s), mirrored.  Measures:
- neighbour search: exact blocked BLAS distances, a k-d tree over the full features, and ours (a
  k-d tree over the principal components, exact re-ranking of 3k candidates): time per query in
  a batch (training) and for one decision's 16 queries, and agreement with the exact 15 nearest;
  and what a decision and the transition cache do (a state's k next states ranked in one shared
  pool of candidates);
- learning time, sweeps, peak traced memory and stored bytes for the direction and line tasks at
  anchor spacings N = 1, 10, 20, 30; time per decision;
- agility (the paper's protocol): direction changes of 30-180 degrees either way from random
  states; response = time until the heading is within 5 degrees of the new direction and stays
  there 0.3 s (line task: and within 0.1 m of a line up to 1 m to the side), for the field at
  every N and for the fragment controller, the greedy motion-graph walk and the graph's Look
  Ahead controller (paper 002's comparison: value iteration over the graph's clips with the
  field's reward and discount, each clip warped up to ±45°, and at ±30, 15, 0° to show what the
  warping buys) on the same mirrored clips;
- foot skating of each controller's runs against the source capture's own;
- pushes of increasing size while walking: the share after which the character is back within
  the data (its distance to the nearest captured state under the 95th percentile of undisturbed
  driving) and on task (heading within 10 degrees) within 2 s.
Writes bench/results/field.md and bench/results/field.json.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import time
import tracemalloc

import numpy as np

from harness import ROOT, add_mocap, default_mocap, write_json, write_markdown  # noqa: E402,F401  (first: the checkout on the path)

from harness import environment  # noqa: E402
from motionctl import quat  # noqa: E402
from motionctl.body import mirror_clip  # noqa: E402
from motionctl.clip import resample  # noqa: E402
from motionctl.engines import ENGINES  # noqa: E402
from motionctl.engines.field import FieldSettings, fit  # noqa: E402
from motionctl.engines.field.states import POOL, actions  # noqa: E402
from motionctl.body.contacts import foot_skating, skating_of  # noqa: E402
from motionctl.evaluate.scoreboard import response_time, spread  # noqa: E402
from motionctl.io.library import import_library  # noqa: E402
from motionctl.rootframe import wrap  # noqa: E402
from motionctl.play.session import Session  # noqa: E402
from motionctl.play.commands import Command  # noqa: E402
from motionctl.settings import from_flat, to_dict  # noqa: E402
from motionctl.play.synth import frame_table  # noqa: E402

TRIALS = ["08"] + [f"{i:02d}" for i in range(11, 59)]
SPACINGS = (1, 10, 20, 30)


def load(mocap):
    files = [os.path.join(mocap, "cmu_amc", "16", f"16_{t}.amc") for t in TRIALS]
    return import_library(files).groups[0].database.clips


def search_table(db, rng, n_batch=5000):
    """Neighbour-search options timed on states near the data (database states with noise)."""
    from scipy.spatial import cKDTree

    feats = db.search.feats
    q = feats[rng.integers(0, len(feats), n_batch)] + rng.normal(0, 0.01, (n_batch, feats.shape[1])).astype(np.float32)
    k = FieldSettings().k
    n2 = np.einsum("ij,ij->i", feats, feats)

    def brute(rows):
        d = n2[None] - 2 * rows @ feats.T
        p = np.argpartition(d, k, axis=1)[:, :k]
        return np.take_along_axis(p, np.argsort(np.take_along_axis(d, p, 1), 1), 1)

    out = []
    t = time.perf_counter()
    exact = np.concatenate([brute(q[a:a + 1024]) for a in range(0, n_batch, 1024)])
    out.append({"method": "exact: blocked BLAS distances (float32)", "batch_us": 1e6 * (time.perf_counter() - t) / n_batch})
    tree = cKDTree(feats)
    t = time.perf_counter()
    _, full = tree.query(q[:500], k)
    out.append({"method": "k-d tree over the full features", "batch_us": 1e6 * (time.perf_counter() - t) / 500,
                "agreement": float(np.mean([len(set(a) & set(b)) / k for a, b in zip(full, exact[:500])]))})
    t = time.perf_counter()
    ours, _ = db.search.query(q, k)
    out.append({"method": f"ours: k-d tree over {db.search.basis.shape[1]} principal components, exact re-rank",
                "batch_us": 1e6 * (time.perf_counter() - t) / n_batch,
                "agreement": float(np.mean([len(set(a) & set(b)) / k for a, b in zip(ours, exact)]))})
    out[0]["agreement"] = 1.0
    # one decision: 16 queries
    few = q[:16]
    for row, fn in ((out[0], lambda: brute(few)), (out[1], lambda: tree.query(few, k)),
                    (out[2], lambda: db.search.query(few, k))):
        t = time.perf_counter()
        for _ in range(50):
            fn()
        row["decision_ms"] = 1e3 * (time.perf_counter() - t) / 50
    # What a decision does: the k actions' next states of a state share one pool of candidates
    n_src = 300
    src = db.x.take(rng.choice(db.n, n_src, replace=False))
    own, sim = db.neighbours(src, k)
    acts = actions(sim).reshape(n_src * k, k)
    rep = np.repeat(np.arange(n_src), k)
    f = db.features(db.flow(src.take(rep), own[rep], acts)[0])
    exact = np.concatenate([brute(f[a:a + 1024]) for a in range(0, len(f), 1024)])
    pooled, _ = db.search.in_pools(f, db.search.pools(f, k, k), k)
    row = {"method": f"ours at a decision: the k actions' next states ranked in one shared pool of {POOL * k}",
           "agreement": float(np.mean([len(set(a) & set(b)) / k for a, b in zip(pooled, exact)])),
           "batch_us": 0.0}
    t = time.perf_counter()
    for a in range(0, len(f), 128 * k):
        db.search.in_pools(f[a:a + 128 * k], db.search.pools(f[a:a + 128 * k], k, k), k)
    row["batch_us"] = 1e6 * (time.perf_counter() - t) / len(f)
    t = time.perf_counter()
    for a in range(50):
        one = f[(a % n_src) * k:(a % n_src + 1) * k]
        pools = db.search.pools(one, k, k)
        db.search.in_pools(one, pools, 1)
        db.search.in_pools(one, pools, k)
    row["decision_ms"] = 1e3 * (time.perf_counter() - t) / 50
    out.append(row)
    return out


def learn(clips, task, n, cache):
    tracemalloc.start()
    t = time.perf_counter()
    model = fit(clips, FieldSettings(task=task, compression=n), cache=cache)
    seconds = time.perf_counter() - t
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    s = model.summary()
    return model, {"task": task, "N": n, "seconds": seconds, "cache_seconds": s["cache_seconds"],
                   "learn_seconds": s["learn_seconds"], "sweeps": s["sweeps"], "anchors": s["anchors"],
                   "value_bytes": s["value_bytes"], "traced_peak_mb": peak / 2**20}


def agility(model, table, trials, line=False):
    times = []
    for frame, angle, offset in trials:
        times.append(response_time(model, table, frame, angle, line=line, line_offset=offset))
    t = np.array(times)
    ok = np.isfinite(t)
    s = spread(t)  # inf when not reached
    return {"median_s": s["median"], "p90_s": s["p90"], "reached": float(ok.mean()),
            "mean_reached_s": float(t[ok].mean()) if ok.any() else None, "trials": len(t)}


def driven_skating(model, table, rng, seconds=20.0, runs=4):
    """Skating of runs that change direction every 2 s (random turns), one Session each."""
    res = []
    for _ in range(runs):
        session = Session(model, table, frame=int(rng.integers(0, table.n_frames - 3)))
        heading = session.synth.yaw
        n = int(seconds * model.decision_rate)
        per = max(1, int(2.0 * model.decision_rate))
        for i in range(n):
            if i % per == 0:
                heading = session.synth.yaw + rng.uniform(-np.pi, np.pi)
            session.decide(Command(heading=heading))
        res.append(foot_skating(session.clip()))
    return {k: float(np.mean([r[k] for r in res])) for k in res[0]}


def passive_runs(clips, rng, seconds=30.0, n_db=40, n_noise=10):
    """The passive field (keeping moving; and the paper's pure flow) trained without every tenth
    clip, played for ``seconds`` from random database states, from poses of the held-out clips and
    of their mirror images, and from database states with noise on every joint: per kind of
    start, the share still walking (over 0.3 m/s in the last 5 s), skating, and whether the root
    height stays within the data's."""
    held = clips[::10]
    names = {c.name for c in held}
    train = [c for c in clips if c.name not in names]
    out = {"held_out": sorted(names), "rows": []}
    for keep in (0.5, 0.0):
        model = fit(train, FieldSettings(task="none", keep_moving=keep))
        table = model.play(train)
        db = model.db
        if keep:
            s = model.summary()
            out.update({"dead_ends": s["dead_ends"], "dead_end_clips": s["dead_end_clips"], "states": s["states"]})
            dead = model.dead_ends()
        else:
            dead = np.zeros(db.n, bool)
        starts = [("database state" + (", dead end" if dead[i] else ""), model.memory_at(i))
                  for i in rng.choice(db.n, n_db, replace=False)]
        for c in held:
            for kind, src in (("held-out clip", c), ("mirrored held-out clip", mirror_clip(c))):
                t = frame_table([resample(src, model.fps)], src.skeleton)
                f = int(rng.integers(1, t.n_frames - 2))
                starts.append((kind, model.memory_from_poses(t.local_rot[f], t.height[f], t.local_rot[f + 1],
                                                             t.height[f + 1], t.motion[f + 1])))
        for i in rng.choice(db.n, n_noise, replace=False):
            x = db.x.take([int(i)])
            x.rot = quat.normalize(x.rot + 0.03 * rng.normal(size=x.rot.shape))
            starts.append(("database state + noise on every joint", model.memory_of(x)))
        h = table.height
        per = {}
        for kind, memory in starts:
            session = Session(model, table)
            session.memory = memory
            run = session.run([Command()] * int(seconds * model.fps))
            last = int(5 * model.fps)
            speed = float(np.linalg.norm(run.root_pos[-1, :2] - run.root_pos[-last, :2]) / 5.0)
            z = run.root_pos[:, 2]
            per.setdefault(kind, []).append({"speed": speed, **foot_skating(run),
                                             "height_ok": bool(h.min() - 0.1 < z.min() and z.max() < h.max() + 0.1)})
        for kind, rows in per.items():
            out["rows"].append({"keep_moving": keep, "start": kind, "runs": len(rows),
                                "walking": float(np.mean([r["speed"] > 0.3 for r in rows])),
                                "median_speed": float(np.median([r["speed"] for r in rows])),
                                **{k: float(np.mean([r[k] for r in rows])) for k in ("skating", "sliding_cm", "planted")},
                                "height_ok": float(np.mean([r["height_ok"] for r in rows]))})
    return out


def pushes(model, table, rng, sizes=(0.5, 1.0, 2.0, 3.0, 4.0), per=30):
    db = model.db

    def dist(session):
        m = session.memory
        return float(np.linalg.norm(db.features(m.state)[0] - db.feats[m.nb[0]]))

    # undisturbed driving: the data's distance distribution
    base = []
    for _ in range(10):
        s = Session(model, table, frame=int(rng.integers(0, table.n_frames - 3)))
        h = s.synth.yaw
        for _ in range(60):
            s.decide(Command(heading=h))
            base.append(dist(s))
    limit = float(np.percentile(base, 95))
    out = []
    for size in sizes:
        ok = 0
        times = []
        for _ in range(per):
            s = Session(model, table, frame=int(rng.integers(0, table.n_frames - 3)))
            h = s.synth.yaw
            for _ in range(15):
                s.decide(Command(heading=h))
            ang = rng.uniform(-np.pi, np.pi)
            s.push(size * np.array([np.cos(ang), np.sin(ang)]))
            back = None
            for i in range(60):
                s.decide(Command(heading=h))
                if dist(s) <= limit and abs(wrap(s.synth.yaw - h)) < np.radians(10):
                    back = (i + 1) / model.decision_rate
                    break
            ok += back is not None
            if back is not None:
                times.append(back)
        out.append({"push_m_s": size, "recovered": ok / per, "median_s": float(np.median(times)) if times else None})
    return {"distance_p95": limit, "rows": out}


def main():
    ap = argparse.ArgumentParser()
    add_mocap(ap)
    ap.add_argument("--changes", type=int, default=200)
    ap.add_argument("--line-changes", type=int, default=100)
    ap.add_argument("--quick", action="store_true", help="a few clips and trials (a smoke run)")
    args = ap.parse_args()
    t_all = time.perf_counter()
    clips = load(args.mocap)
    if args.quick:
        clips = clips[:8]
        args.changes, args.line_changes = 12, 6
    rng = np.random.default_rng(0)
    results = {"command": "python bench/bench_field.py" + (" --quick" if args.quick else ""),
               "clips": [c.name for c in clips], "seconds_of_capture": float(sum(c.duration for c in clips)),
               "settings": to_dict(FieldSettings())}
    print(f"{len(clips)} clips, {results['seconds_of_capture']:.1f} s", flush=True)

    cache, learned, models = {}, [], {}
    for n in SPACINGS:  # the line task reuses the direction task's transition cache at each N
        for task in ("direction", "line"):
            model, row = learn(clips, task, n, cache)
            learned.append(row)
            models[(task, n)] = model
            print(json.dumps(row), flush=True)
    results["learning"] = learned
    field = models[("direction", 1)]
    table = field.play(clips)
    for m in models.values():
        m.play(clips)
    results["search"] = search_table(field.db, rng)
    print(json.dumps(results["search"]), flush=True)

    # decision cost
    s = Session(field, table, frame=10)
    t = time.perf_counter()
    for i in range(300):
        field.decide(s.state, Command(heading=0.3 * np.sin(i / 30)))
    results["decision_ms"] = 1e3 * (time.perf_counter() - t) / 300
    t = time.perf_counter()
    for i in range(300):
        s.decide(Command(heading=0.3 * np.sin(i / 30)))
    results["session_decision_ms"] = 1e3 * (time.perf_counter() - t) / 300

    # agility: the same trials for every controller (starting rows of the field's table; each
    # controller starts at its own table's nearest row of the same clip and frame)
    def trials(n, line):
        out = []
        for _ in range(n):
            f = int(rng.integers(0, table.n_frames - 3))
            a = float(rng.uniform(np.radians(30), np.pi)) * float(rng.choice([-1, 1]))
            out.append((f, a, float(rng.uniform(-1, 1)) if line else 0.0))
        return out

    dir_trials, line_trials = trials(args.changes, False), trials(args.line_changes, True)
    results["agility"] = []
    for n in SPACINGS:
        row = {"controller": f"motion field, N = {n}", "task": "direction", **agility(models[("direction", n)], table,
                                                                                       dir_trials)}
        results["agility"].append(row)
        print(json.dumps(row), flush=True)
    for n in SPACINGS:
        row = {"controller": f"motion field, N = {n}", "task": "line", **agility(models[("line", n)], table,
                                                                                  line_trials, line=True)}
        results["agility"].append(row)
        print(json.dumps(row), flush=True)
    # the line task's weight on the distance, and its keep-moving term, at N = 10
    sweep_trials = line_trials[:50]
    for w, keep in ((0.5, False), (0.5, True), (2.0, True), (4.0, True)):
        model = fit(clips, FieldSettings(task="line", compression=10, line_weight=w, keep_moving_on_task=keep),
                    cache=cache)
        model.play(clips)
        row = {"controller": f"motion field, N = 10, w_L = {w}" + ("" if keep else ", no keep-moving term"),
               "task": "line", "stored_kb": model.summary()["value_bytes"] / 1024,
               **agility(model, table, sweep_trials, line=True)}
        results["agility"].append(row)
        print(json.dumps(row), flush=True)
    others = {}
    mirrored = list(clips) + [mirror_clip(c) for c in clips]  # the graph does not mirror by itself
    for label, name, data, flat in (
            ("fragment controller", "fragments", clips, {"held_out": 0}),
            ("motion graph, greedy", "graph", mirrored, {}),
            *[(f"motion graph, look ahead, warp ±{w}°", "graph", mirrored,
               {"policy": "lookahead", "max_warp": float(np.radians(w))}) for w in (45, 30, 15, 0)]):
        engine = ENGINES[name]
        t = time.perf_counter()
        model = engine.fit(data, from_flat(engine.Settings, flat))
        others[label] = (model, model.play(data), time.perf_counter() - t)
    for label, (model, tab, secs) in others.items():
        # the same clip and frame of each trial, mapped onto this controller's table by clip name
        mapped = [(map_frame(table, tab, f), a, o) for f, a, o in dir_trials]
        row = {"controller": label, "task": "direction", "train_seconds": secs,
               "stored_kb": model.summary().get("value_bytes", 0) / 1024, **agility(model, tab, mapped)}
        results["agility"].append(row)
        print(json.dumps(row), flush=True)

    # skating
    sk = [{"controller": "source capture", **skating_of(clips)}]
    sk.append({"controller": "motion field, N = 1 (direction)", **driven_skating(field, table, rng)})
    results["passive"] = passive_runs(clips, rng)
    print(json.dumps(results["passive"]), flush=True)
    for x in results["passive"]["rows"]:
        if x["start"] == "database state" and x["keep_moving"]:
            sk.append({"controller": "motion field, passive (keeping moving), 30 s from database states",
                       **{k: x[k] for k in ("skating", "sliding_cm", "planted")}})
    for label, (model, tab, _) in others.items():
        sk.append({"controller": label, **driven_skating(model, tab, rng)})
    results["skating"] = sk
    print(json.dumps(sk), flush=True)
    results["pushes"] = pushes(field, table, rng)
    print(json.dumps(results["pushes"]), flush=True)
    results["wall_seconds"] = time.perf_counter() - t_all
    results["environment"] = environment()
    write(results, args.quick)


def map_frame(src_table, dst_table, frame):
    """Table row ``frame`` of one controller's table as the same clip and frame in another's."""
    clip = int(np.searchsorted(src_table.first, frame, side="right") - 1)
    name = src_table.names[clip]
    within = frame - src_table.first[clip]
    if name not in dst_table.names:
        return 0
    c = dst_table.names.index(name)
    scale = dst_table.fps / src_table.fps
    return int(dst_table.first[c] + min(int(within * scale), dst_table.length[c] - 3))


def write(r, quick):
    os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
    name = "field_quick" if quick else "field"
    write_json(f"{name}", r)
    L = ["# Motion fields on real capture (paper 002)\n", f"Command: `{r['command']}` (2 cores); wall {r['wall_seconds']:.0f} s.\n",
         (f"Data: {len(r['clips'])} clips of CMU subject 16 ({r['seconds_of_capture']:.0f} s of locomotion), "
          f"mirrored; k = {FieldSettings().k}, δ = {FieldSettings().delta}, γ = {FieldSettings().discount}.\n"),
         "## Learning\n", "| task | N | anchors | seconds (cache + value iteration) | sweeps | traced peak MB | values KB |",
         "| --- | ---: | ---: | --- | ---: | ---: | ---: |"]
    for x in r["learning"]:
        L.append(f"| {x['task']} | {x['N']} | {x['anchors']} | {x['seconds']:.1f} ({x['cache_seconds']:.1f} + "
                 f"{x['learn_seconds']:.1f}) | {x['sweeps']} | {x['traced_peak_mb']:.0f} | {x['value_bytes'] / 1024:.0f} |")
    L.append("\nThe transition cache depends on N, not on the task: the line task reuses the direction task's "
             "(its seconds are value iteration only).")
    L.append(f"\nOne decision (`FieldModel.decide`: k actions played, one shared pool of candidates): "
             f"{r['decision_ms']:.2f} ms; through "
             f"`Session.decide` with synthesis: {r['session_decision_ms']:.2f} ms.\n")
    L += ["## Neighbour search\n", "| method | µs per query (batch) | ms per decision (16 queries; the pool: one pool, two rankings) | agreement with exact 15 |",
          "| --- | ---: | ---: | ---: |"]
    for x in r["search"]:
        L.append(f"| {x['method']} | {x['batch_us']:.1f} | {x['decision_ms']:.2f} | {100 * x['agreement']:.2f}% |")
    L += ["\n## Agility (response time to a new direction)\n",
          "| controller | task | median s | p90 s | reached within 6 s | trials | values KB |",
          "| --- | --- | ---: | ---: | ---: | ---: | ---: |"]
    kb = {(x["task"], x["N"]): x["value_bytes"] / 1024 for x in r["learning"]}
    for x in r["agility"]:
        n = re.search(r"N = (\d+)", x["controller"])
        size = x["stored_kb"] if "stored_kb" in x else kb.get((x["task"], int(n.group(1)) if n else None), 0.0)
        L.append(f"| {x['controller']} | {x['task']} | {x['median_s']:.2f} | {x['p90_s']:.2f} | "
                 f"{100 * x['reached']:.0f}% | {x['trials']} | {size:.0f} |")
    L += ["\n## Foot skating\n", "| motion | skating frames | sliding cm per contact | feet on the floor |", "| --- | ---: | ---: | ---: |"]
    for x in r["skating"]:
        L.append(f"| {x['controller']} | {100 * x['skating']:.1f}% | {x['sliding_cm']:.1f} | {100 * x['planted']:.0f}% |")
    ps = r["passive"]
    L += ["\n## Passive flow, 30 s from any start\n",
          (f"Trained without {', '.join(ps['held_out'])} (held out). Keeping moving (0.5 m/s), {ps['dead_ends']} of "
           f"{ps['states']} states are dead ends, where the capture ends standing and no captured motion leaves: "
           f"{', '.join(ps['dead_end_clips'])}. Walking: over 0.3 m/s in the last 5 s.\n"),
          "| keep moving m/s | start | runs | walking | median speed m/s | skating | sliding cm per contact | feet on the floor | height in the data's range |",
          "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for x in ps["rows"]:
        L.append(f"| {x['keep_moving']:.1f} | {x['start']} | {x['runs']} | {100 * x['walking']:.0f}% | "
                 f"{x['median_speed']:.2f} | {100 * x['skating']:.1f}% | {x['sliding_cm']:.1f} | {100 * x['planted']:.0f}% | "
                 f"{100 * x['height_ok']:.0f}% |")
    p = r["pushes"]
    L += ["\n## Pushes while walking\n", (f"Back in the data: distance to the nearest captured state under "
          f"{p['distance_p95']:.3f} (95th percentile of undisturbed driving) and heading within 10°.\n"),
          "| push m/s | recovered within 2 s | median s |", "| ---: | ---: | ---: |"]
    for x in p["rows"]:
        med = f"{x['median_s']:.2f}" if x["median_s"] is not None else "—"
        L.append(f"| {x['push_m_s']:.1f} | {100 * x['recovered']:.0f}% | {med} |")
    write_markdown(f"{name}", L)
    print("\n".join(L))


if __name__ == "__main__":
    main()
