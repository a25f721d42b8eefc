"""Every engine on 5, 11, 30 and 60 minutes of capture; the same jobs on a 2-worker Dask cluster (issue 17).

    .venv/bin/python bench/bench_scale.py [--sizes 5 11 30 60] [--engines fragments graph field matching]
                                          [--cluster-minutes 5] [--job-timeout 30] [--mocap DIR]

The library of each size is ``bench/scale_library.py``'s: the real capture (about 11 minutes),
then mirrored, time-warped and re-proportioned copies.  DERIVED DATA, for time and memory only.
Each job runs in its own process (``--job``), so its peak memory (ru_maxrss) is its own:
- fragments: cut, the best ``--successors`` successors per fragment, and the model controller's
  policy (150 bins, the built-in players' user model);
- graph: construction (paper 004's, min clip 0.3 s), embedding in an empty 15 x 8 m room and
  every metric (100 Monte-Carlo pairs, 10% of nodes for maneuverability);
- field: the database, its transition cache (k = 15 neighbours) and value iteration over anchors
  (direction task);
- matching: features, normalisation and the search index.
The engines' own mirroring is off: the library already holds mirrored copies beyond 11 minutes.
Each job gets ``--job-timeout`` minutes (the 30-minute target) and the memory guard at the 16 GB
target (MOTIONCTL_MEMORY_GB); a job over time is reported as such, with what it finished (the
graph's construction).  Then the growth exponent of each job (log-log fit over the sizes), the
jobs at ``--cluster-minutes`` on a ``dask.distributed.LocalCluster`` of 2 worker processes against
local threads, and an extrapolation to 9 hours on 16 workers.  Writes bench/results/scale.md and scale.json.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import time

import numpy as np

from harness import ROOT, add_mocap, default_mocap  # noqa: E402,F401  (first: the checkout on the path)

from harness import environment  # noqa: E402
from bench.scale_library import DERIVED_NOTE, library  # noqa: E402

ENGINES = ("fragments", "graph", "field", "matching")
SUCCESSORS = 500
ROOM = (15.0, 8.0)
MEMORY_TARGET_GB = 16.0


def digest(*arrays) -> str:
    h = hashlib.blake2b(digest_size=10)
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


def run_job(engine: str, clips, successors: int = SUCCESSORS) -> dict:
    """Train ``engine`` on ``clips``; returns its figures and a digest of what it made."""
    from motionctl.jobs import PrintProgress

    progress = PrintProgress(engine, every=20.0, stalled=60.0)
    t = time.perf_counter()
    if engine == "fragments":
        from motionctl.engines.fragments import ControllerSettings, fit

        s = ControllerSettings(held_out=0)
        s.fragments.mirror = False
        s.quality.successors = successors
        m = fit(clips, s, progress=progress)
        out = {k: m.summary()[k] for k in ("fragments", "improvements", "converged", "hubs")}
        out["digest"] = digest(m.table)
    elif engine == "graph":
        from motionctl.engines.graph import GraphSettings, build_graph
        from motionctl.evaluate import Environment, evaluate

        g = build_graph(clips, GraphSettings(min_clip=0.3), progress=progress)
        built = time.perf_counter() - t
        partial = {"build_seconds": built, "graph_clips": g.n, "transitions": len(g.edges),
                   "candidates": g.stats["candidates"],
                   "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
        print("PARTIAL " + json.dumps(partial), flush=True)
        res = evaluate(g, Environment((0.0, 0.0) + ROOM, [], "empty 15 x 8 m"), pairs=100, lm_sample=0.1,
                       progress=progress)
        out = {"build_seconds": built, "evaluate_seconds": time.perf_counter() - t - built,
               "embed_seconds": float(res["embed_seconds"]), "metric_seconds": float(res["metric_seconds"]),
               "graph_clips": g.n,
               "transitions": len(g.edges), "candidates": g.stats["candidates"], "nodes": int(res["nodes"]),
               "coverage_xy": float(res["coverage_xy"]), "digest": digest(g.edges, g.start)}
    elif engine == "field":
        from motionctl.engines.field import FieldSettings, fit

        m = fit(clips, FieldSettings(mirror=False), progress=progress)
        out = {k: m.summary().get(k) for k in ("states", "anchors", "sweeps", "cache_seconds", "learn_seconds")}
        out["digest"] = digest(m.values)
    elif engine == "matching":
        from motionctl.engines.matching import MatchingSettings, fit

        m = fit(clips, MatchingSettings(mirror=False), progress=progress)
        m.index(0)  # the search structure the first decision would build
        out = {"frames": m.summary()["frames"], "digest": digest(m.features)}
    else:
        raise SystemExit(f"unknown engine {engine}")
    out["seconds"] = time.perf_counter() - t
    return out


def child(args) -> None:
    t = time.perf_counter()
    clips, info = library(args.minutes, args.mocap)
    lib_s = time.perf_counter() - t
    base_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if args.scheduler:
        from motionctl.jobs import use_scheduler

        use_scheduler(args.scheduler)
    out = run_job(args.job, clips, args.successors)
    out.update({"engine": args.job, "minutes": info["minutes"], "clips": info["clips"], "library_seconds": lib_s,
                "library_rss_mb": base_mb, "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                "scheduler": bool(args.scheduler)})
    print("RESULT " + json.dumps(out), flush=True)


def spawn(engine, minutes, mocap, scheduler=None, successors=SUCCESSORS, timeout_min=30.0, environ=None) -> dict:
    """Run one job in its own process, at most ``timeout_min`` minutes (the target), with the
    memory guard at the 16 GB target; a job over time keeps what it printed before (PARTIAL)."""
    cmd = [sys.executable, os.path.abspath(__file__), "--job", engine, "--minutes", str(minutes), "--mocap", mocap,
           "--successors", str(successors)] + (["--scheduler", scheduler] if scheduler else [])
    print(f"== {engine}, {minutes} min{' on the cluster' if scheduler else ''}", flush=True)
    env = dict(environ or os.environ, MOTIONCTL_MEMORY_GB=str(MEMORY_TARGET_GB))
    t = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60 * timeout_min, env=env)
    except subprocess.TimeoutExpired as e:
        text = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        sys.stdout.write(text[-2000:])
        part = [x for x in text.splitlines() if x.startswith("PARTIAL ")]
        out = {"engine": engine, "minutes": minutes, "error": f"over {timeout_min:g} min (stopped)",
               "seconds_over": time.perf_counter() - t}
        if part:
            out.update(json.loads(part[-1][8:]))
        return out
    sys.stdout.write(proc.stdout[-2000:])
    if proc.returncode != 0:
        sys.stdout.write(proc.stderr[-4000:])
        return {"engine": engine, "minutes": minutes, "error": proc.stderr.strip().splitlines()[-1][:300]}
    line = [x for x in proc.stdout.splitlines() if x.startswith("RESULT ")][-1]
    return json.loads(line[7:])


def exponent(minutes, values) -> float | None:
    x, y = np.log(np.asarray(minutes, float)), np.log(np.maximum(np.asarray(values, float), 1e-9))
    return float(np.polyfit(x, y, 1)[0]) if len(x) >= 2 else None


def main():
    ap = argparse.ArgumentParser()
    add_mocap(ap)
    ap.add_argument("--sizes", type=float, nargs="+", default=[5, 11, 30, 60])
    ap.add_argument("--engines", nargs="+", default=list(ENGINES))
    ap.add_argument("--cluster-minutes", type=float, default=5.0)
    ap.add_argument("--job-timeout", type=float, default=30.0, help="minutes per job (the target)")
    ap.add_argument("--successors", type=int, default=SUCCESSORS)
    ap.add_argument("--job")
    ap.add_argument("--minutes", type=float)
    ap.add_argument("--scheduler")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "scale"))
    ap.add_argument("--merge", help="an earlier scale.json: keep its jobs that this run does not repeat (each job "
                                    "records its commit)")
    args = ap.parse_args()
    if args.job:
        return child(args)
    env = environment()
    commit = short_commit(env)
    runs, cluster_runs = merged(args)
    for m in args.sizes:  # the report is rewritten after every job, so a stopped run keeps what it measured
        for e in args.engines:
            runs.append(dict(spawn(e, m, args.mocap, successors=args.successors, timeout_min=args.job_timeout),
                             commit=commit))
            report(runs, cluster_runs, args, env)
        if args.cluster_minutes and abs(m - args.cluster_minutes) < 1e-6:
            from distributed import LocalCluster

            before = dict(os.environ)  # LocalCluster sets OMP_NUM_THREADS=1 and others in this process:
            with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as lc:
                for e in args.engines:
                    cluster_runs.append(dict(spawn(e, m, args.mocap, lc.scheduler_address, args.successors,
                                                   args.job_timeout, before), commit=commit))
                    report(runs, cluster_runs, args, env)
            os.environ.clear()  # the local jobs after it keep this machine's BLAS threads
            os.environ.update(before)


def short_commit(env: dict) -> str:
    """The commit a results environment records, short, marked when the tree was dirty."""
    return env.get("commit", "?")[:10] + ("+dirty" if env.get("dirty") else "")


def merged(args) -> tuple[list, list]:
    """(runs, cluster runs) kept from ``--merge``'s file: every job this run does not repeat."""
    if not args.merge:
        return [], []
    with open(args.merge) as fh:
        old = json.load(fh)
    commit = short_commit(old["environment"])
    args.merged_commands = old.get("commands", [old["command"]])
    again = {(e, round(m)) for e in args.engines for m in args.sizes}
    everything = [dict(r, commit=r.get("commit", commit)) for r in old["runs"]]
    runs = [r for r in everything if (r["engine"], round(r["minutes"])) not in again]
    # Local runs this one repeats stay as the cluster runs' partners (same commit).
    args.superseded = old.get("superseded", []) + [r for r in everything if r not in runs and "error" not in r]
    rerun_cluster = args.cluster_minutes and args.cluster_minutes in args.sizes
    cluster_runs = [dict(r, commit=r.get("commit", commit)) for r in old["cluster_runs"]
                    if not (rerun_cluster and r["engine"] in args.engines)]
    if not rerun_cluster and old["cluster_runs"]:
        args.cluster_minutes = old["cluster_runs"][0]["minutes"]
    return runs, cluster_runs


def report(runs, cluster_runs, args, env) -> None:
    ok = [r for r in runs if "error" not in r]
    growth = {}
    for e in [e for e in ENGINES if any(r["engine"] == e for r in runs)]:  # merged ones too
        rs = sorted((r for r in ok if r["engine"] == e), key=lambda r: r["minutes"])
        if len(rs) >= 2:
            m = [r["minutes"] for r in rs]
            growth[e] = {"time": exponent(m, [r["seconds"] for r in rs]),
                         "memory": exponent(m, [max(r["peak_rss_mb"] - r["library_rss_mb"], 1.0) for r in rs])}
    built = sorted((r for r in runs if r["engine"] == "graph" and "build_seconds" in r), key=lambda r: r["minutes"])
    if len(built) >= 2:  # construction finishes even where the room metrics run over
        growth.setdefault("graph", {})["build_time"] = exponent([r["minutes"] for r in built],
                                                                [r["build_seconds"] for r in built])
    local = {(r["engine"], r.get("commit")): r for r in ok + getattr(args, "superseded", [])
             if abs(r["minutes"] - args.cluster_minutes) < 1.0}
    versus = []
    for c in cluster_runs:
        loc = local.get((c["engine"], c.get("commit")))  # the local run of the same code
        if loc is None or "error" in c:
            versus.append({"engine": c["engine"], "error": c.get("error", "no local run at that size")})
            continue
        versus.append({"engine": c["engine"], "local_seconds": loc["seconds"], "cluster_seconds": c["seconds"],
                       "ratio": c["seconds"] / loc["seconds"], "same_result": c["digest"] == loc["digest"]})
    # 9 hours on 16 workers: time grows as minutes^exponent; the parallel share speeds up by 16/2.
    extra = {}
    for e, g in growth.items():
        if "time" not in g:
            continue
        big = max((r for r in ok if r["engine"] == e), key=lambda r: r["minutes"])
        t9 = big["seconds"] * (540.0 / big["minutes"]) ** g["time"]
        mem9 = (big["peak_rss_mb"] - big["library_rss_mb"]) * (540.0 / big["minutes"]) ** g["memory"]
        extra[e] = {"one_machine_seconds": t9, "sixteen_workers_seconds_if_parallel": t9 * 2 / 16,
                    "memory_gb_one_machine": mem9 / 1024}
    command = "python bench/bench_scale.py " + " ".join(sys.argv[1:])
    commands = getattr(args, "merged_commands", []) + [command]
    out = {"command": command, "commands": commands, "note": DERIVED_NOTE, "runs": runs,
           "job_timeout_minutes": args.job_timeout, "memory_guard_gb": MEMORY_TARGET_GB,
           "superseded": getattr(args, "superseded", []),
           "cluster": versus, "cluster_runs": cluster_runs, "growth": growth, "nine_hours": extra,
           "successors": args.successors, "environment": env}
    with open(args.out + ".json", "w") as fh:
        json.dump(out, fh, indent=1)
    lines = ["# Every engine on an hour of capture (issue 17)", "",
             "Commands: " + "; then ".join(f"`{c}`" for c in commands) + f" (the last at commit "
             f"{env.get('commit', '?')[:10]}{' (dirty)' if env.get('dirty') else ''}; each job's commit is in the "
             f"table), {env.get('cores')} cores.", "",
             f"**Library: {DERIVED_NOTE}** (`bench/scale_library.py` prints its composition).", "",
             "| engine | minutes | seconds | peak RSS MB (library alone) | figures | commit |",
             "| --- | --- | --- | --- | --- | --- |"]
    for r in runs:
        if "error" in r:
            done = ", ".join(f"{k} {v:.3g}" if isinstance(v, float) else f"{k} {v}" for k, v in r.items()
                             if k not in ("engine", "minutes", "error", "seconds_over", "commit"))
            lines.append(f"| {r['engine']} | {r['minutes']:g} | {r['error']} | | {done} | {r.get('commit', '')} |")
            continue
        fig = ", ".join(f"{k} {v:.3g}" if isinstance(v, float) else f"{k} {v}" for k, v in r.items()
                        if k not in ("engine", "minutes", "seconds", "peak_rss_mb", "library_rss_mb", "digest",
                                     "scheduler", "library_seconds", "clips", "commit"))
        lines.append(f"| {r['engine']} | {r['minutes']:.1f} | {r['seconds']:.1f} | {r['peak_rss_mb']:.0f} "
                     f"({r['library_rss_mb']:.0f}) | {fig} | {r.get('commit', '')} |")
    lines += ["", "Growth exponents (time and memory above the library's, fitted over the sizes):", "",
              "| engine | time | memory |", "| --- | --- | --- |"]
    lines += [f"| {e} | {g['time']:.2f} | {g['memory']:.2f} |" for e, g in growth.items() if "time" in g]
    if "build_time" in growth.get("graph", {}):
        lines += ["", f"Graph construction alone (every size that finished it): time exponent "
                      f"{growth['graph']['build_time']:.2f}."]
    lines += ["", f"## On a 2-worker LocalCluster, {args.cluster_minutes:.0f} minutes", "",
              "| engine | local threads s | cluster s | ratio | same result |", "| --- | --- | --- | --- | --- |"]
    for v in versus:
        lines.append(f"| {v['engine']} | failed: {v['error']} | | | |" if "error" in v else
                     f"| {v['engine']} | {v['local_seconds']:.1f} | {v['cluster_seconds']:.1f} | {v['ratio']:.2f} | "
                     f"{'yes' if v['same_result'] else 'no'} |")
    lines += ["", "## Nine hours, extrapolated from the exponents", "",
              "| engine | one machine like this, h | 16 workers if every piece parallelises, h | memory GB |",
              "| --- | --- | --- | --- |"]
    lines += [f"| {e} | {x['one_machine_seconds'] / 3600:.1f} | {x['sixteen_workers_seconds_if_parallel'] / 3600:.1f} | "
              f"{x['memory_gb_one_machine']:.1f} |" for e, x in extra.items()]
    with open(args.out + ".md", "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
