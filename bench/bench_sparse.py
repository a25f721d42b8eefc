"""Sparse fragment transitions against the dense table: paper 000's Table 1 on the real 11 minutes (issue 17).

    .venv/bin/python bench/bench_sparse.py [--successors 200 500] [--mocap DIR]

Clips: every real clip of ../shared/mocap on one skeleton (the 31-joint CMU clips and the
Character Creator clips retargeted onto it: ``bench/scale_library.real_clips``), not mirrored
(about 13,000 fragments, so the dense table still fits).  Set-up: bench_fragments' "metres,
evaluated on smooth": the user model learns from 3.5 minutes each of the abrupt and game-pad
players, the controllers are evaluated on 12 traces of 10 s of the smooth player.  Every
controller, trained on the dense table or on each fragment's best K successors (plus the hub
columns its training adds: ``FragmentModel.train``; they accumulate over the controllers trained
on one model), is scored the same way: % of the dense off-line optimum, with the full dense MotionQuality.  Also: how many of
each fragment's exact K best successors the nearest-neighbour search found, the time and memory
of each, and the neighbour-search options measured (scipy cKDTree, scikit-learn NearestNeighbors,
our blocked matrix products).  Writes bench/results/sparse.md and sparse.json.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
import tracemalloc

import numpy as np

from harness import ROOT, add_mocap, default_mocap, write_json, write_markdown  # noqa: E402,F401  (first: the checkout on the path)

from bench.bench_fragments import style_traces  # noqa: E402
from harness import environment  # noqa: E402
from bench.scale_library import real_clips  # noqa: E402
from motionctl.engines.fragments import (ControllerSettings, FragmentModel, PolicySettings,  # noqa: E402
                                         evaluate_controllers, learn_user_model)
from motionctl.engines.fragments.quality import KNN_OVERSAMPLE, knn_features, pose_features  # noqa: E402

KINDS = ("model", "steady", "spread", "greedy")
THRESHOLD = 8.0


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def build(clips, settings, k):
    settings.quality.successors = k
    tracemalloc.start()
    t = time.perf_counter()
    m = FragmentModel.build(clips, settings.fragments, settings.quality)
    dt = time.perf_counter() - t
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    print(f"build K={k or 'dense'}: {dt:.1f} s, {peak:.0f} MB traced, RSS {rss_mb():.0f} MB", flush=True)
    return m, dt, peak


def train_all(model, settings, bins, t_model):
    tables, runs = {}, {}
    for kind in KINDS:
        for thr in ((None, THRESHOLD) if kind == "model" else (None,)):
            name = kind + ("-t" if thr else "")
            settings.policy = PolicySettings(kind=kind, threshold=thr)
            t = time.perf_counter()
            res = model.train(settings, bins, t_model, None)
            runs[name] = {"seconds": time.perf_counter() - t, "improvements": res.improvements,
                          "converged": bool(res.converged), "hubs": res.hubs}
            tables[name] = res.table
            print(f"  {name}: {runs[name]['seconds']:.1f} s, {res.improvements} improvements, {res.hubs} hubs",
                  flush=True)
    settings.policy = PolicySettings()
    return tables, runs


def search_options(model, settings, k, n_query=2000, seed=0):
    """The neighbour-search libraries on the same job: each fragment's ``KNN_OVERSAMPLE * k``
    nearest successors by the Euclidean distance of the ω-weighted pose features."""
    from scipy.spatial import cKDTree
    from sklearn.decomposition import PCA
    from sklearn.neighbors import NearestNeighbors

    fs = model.fragments
    pred, act = pose_features(fs, settings.quality.deltas)
    q, d = knn_features(pred, act, settings.quality.omegas)
    rows = np.random.default_rng(seed).choice(fs.n, min(n_query, fs.n), replace=False)
    m = KNN_OVERSAMPLE * k
    out = []

    def blocked():
        d2 = np.einsum("ij,ij->i", d, d)[None] - 2.0 * (q[rows] @ d.T)
        return np.argpartition(d2, m - 1, axis=1)[:, :m]

    t = time.perf_counter()
    exact = blocked()
    out.append({"method": "blocked matrix products + argpartition (numpy, ours)",
                "per_query_ms": 1e3 * (time.perf_counter() - t) / len(rows), "build_s": 0.0, "recall": 1.0})
    t = time.perf_counter()
    nn = NearestNeighbors(n_neighbors=m, algorithm="brute").fit(d)
    b = time.perf_counter() - t
    t = time.perf_counter()
    got = nn.kneighbors(q[rows], return_distance=False)
    out.append({"method": "scikit-learn NearestNeighbors (brute)", "build_s": b,
                "per_query_ms": 1e3 * (time.perf_counter() - t) / len(rows), "recall": recall(got, exact)})
    sub = rows[:200]
    t = time.perf_counter()
    tree = cKDTree(d)
    b = time.perf_counter() - t
    t = time.perf_counter()
    got = tree.query(q[sub], m)[1]
    out.append({"method": f"scipy cKDTree ({d.shape[1]} dims)", "build_s": b,
                "per_query_ms": 1e3 * (time.perf_counter() - t) / len(sub), "recall": recall(got, exact[:200])})
    pca = PCA(32, random_state=0).fit(d)
    t = time.perf_counter()
    tree = cKDTree(pca.transform(d))
    b = time.perf_counter() - t
    t = time.perf_counter()
    got = tree.query(pca.transform(q[sub]), m)[1]
    out.append({"method": "scipy cKDTree on 32 principal components", "build_s": b,
                "per_query_ms": 1e3 * (time.perf_counter() - t) / len(sub), "recall": recall(got, exact[:200])})
    for o in out:
        print(f"  {o['method']}: {o['per_query_ms']:.3f} ms/query, recall {o['recall']:.3f}", flush=True)
    return out


def recall(got, exact) -> float:
    return float(np.mean([len(np.intersect1d(a, b)) / len(b) for a, b in zip(got, exact)]))


def main():
    ap = argparse.ArgumentParser()
    add_mocap(ap)
    ap.add_argument("--successors", type=int, nargs="+", default=[200, 500])
    ap.add_argument("--eval-traces", type=int, default=12)
    args = ap.parse_args()
    env = environment()
    clips, sources = real_clips(args.mocap)
    settings = ControllerSettings()
    settings.fragments.mirror = False
    dense, dense_s, dense_mb = build(clips, settings, 10**9)  # more than there are fragments: dense
    fs = dense.fragments
    rate, top = fs.decision_rate, fs.top_speed()
    train = style_traces(("abrupt", "gamepad"), top, rate, 210.0, 1)
    evals = style_traces(("smooth",), top, rate, 10.0, 101, args.eval_traces)
    bins = dense.make_bins(settings, train)
    t_model = learn_user_model(train, bins, settings.smoothing)
    print(f"{fs.n} fragments, {bins.n} bins", flush=True)
    results = {}
    tables, runs = train_all(dense, settings, bins, t_model)
    mq = dense.motion_quality(settings.quality)
    res = evaluate_controllers(dense, tables, bins, evals, settings.quality, {"opt": None, "opt-t": THRESHOLD})
    results["dense"] = {"build_seconds": dense_s, "build_traced_mb": dense_mb, "runs": runs,
                        "table1": {k: {"mean": v["mean"], "std": v["std"]} for k, v in res.items()}}
    searches = None
    for k in args.successors:
        sp, s_s, s_mb = build(clips, settings, k)
        exact = np.argpartition(-mq, k - 1, axis=1)[:, :k]
        found = float(np.mean([len(np.intersect1d(a, b)) / k for a, b in zip(exact, sp.successors)]))
        tabs, sruns = train_all(sp, settings, bins, t_model)
        # Scored like the dense ones: the dense model's full MotionQuality and its optimum.
        r = evaluate_controllers(dense, tabs, bins, evals, settings.quality, {"opt": None})
        # The optimum restricted to the kept successors, as % of the dense optimum.
        ro = evaluate_controllers(sp, {}, bins, evals, settings.quality, {"opt": None})
        sparse_opt = [100.0 * a / b for a, b in zip(ro["opt"]["quality"], r["opt"]["quality"])]
        results[f"K={k}"] = {"build_seconds": s_s, "build_traced_mb": s_mb, "runs": sruns,
                             "recall_of_exact_top_k": found,
                             "table1": {n: {"mean": v["mean"], "std": v["std"]} for n, v in r.items() if n != "opt"},
                             "sparse_opt_percent_of_dense": {"mean": float(np.mean(sparse_opt)),
                                                              "std": float(np.std(sparse_opt))},
                             "diff_points": {n: r[n]["mean"] - res[n]["mean"] for n in tabs}}
        print(json.dumps(results[f"K={k}"]["diff_points"]), flush=True)
        if searches is None:
            searches = search_options(sp, settings, 500)
        del sp
    out = {"command": "python bench/bench_sparse.py " + " ".join(sys.argv[1:]), "sources": sources,
           "fragments": fs.n, "bins": bins.n, "evaluation_traces": len(evals), "results": results,
           "searches": searches, "process_peak_rss_mb": rss_mb(), "environment": env}
    write_json("sparse", out)
    write_md(out)


def write_md(out):
    env = out["environment"]
    names = ["model", "steady", "spread", "greedy", "model-t"]
    lines = ["# Sparse fragment transitions against the dense table (paper 000's Table 1, issue 17)", "",
             f"Command: `{out['command']}`, commit {env.get('commit', '?')[:10]}{' (dirty)' if env.get('dirty') else ''}.",
             "",
             f"Data: every real clip of ../shared/mocap on one skeleton "
             f"({', '.join(f'{k}: {v:.1f} min' for k, v in out['sources'].items())}), not mirrored: "
             f"{out['fragments']} fragments, {out['bins']} bins.  Trained on the abrupt and game-pad players, "
             f"evaluated on {out['evaluation_traces']} traces of 10 s of the smooth player; every controller "
             "scored as % of the dense off-line optimum with the full dense MotionQuality.", "",
             "| table | " + " | ".join(names) + " | sparse opt | exact top-K found | build s | train model s | hubs |",
             "| --- |" + " --- |" * (len(names) + 5)]
    for key, r in out["results"].items():
        t = r["table1"]
        cells = [f"{t[n]['mean']:.1f} ± {t[n]['std']:.1f}" + (f" ({r['diff_points'][n]:+.1f})" if "diff_points" in r
                                                              else "") for n in names]
        so = r.get("sparse_opt_percent_of_dense")
        opt = f"{so['mean']:.1f} ± {so['std']:.1f}" if so else "100"
        found = f"{100 * r['recall_of_exact_top_k']:.1f}%" if "recall_of_exact_top_k" in r else "—"
        lines.append(f"| {key} | " + " | ".join(cells) + f" | {opt} | {found} | {r['build_seconds']:.1f} | "
                     f"{r['runs']['model']['seconds']:.1f} | {max(x.get('hubs', 0) for x in r['runs'].values())} |")
    lines += ["", "Neighbour search for the candidates (2 x K = 1,000 per fragment, Euclidean on the ω-weighted "
              "pose features; recall against the exact Euclidean candidates):", "",
              "| method | build s | ms per fragment | recall |", "| --- | --- | --- | --- |"]
    lines += [f"| {s['method']} | {s['build_s']:.2f} | {s['per_query_ms']:.3f} | {s['recall']:.3f} |"
              for s in out["searches"] or []]
    lines += ["", f"Process peak RSS {out['process_peak_rss_mb']:.0f} MB."]
    write_markdown("sparse", lines)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
