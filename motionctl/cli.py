"""Command line: ``python -m motionctl <command>``.

demo       generate (or take) a library, import it, train a fragment controller, run it on a
           generated player trace, and save a .blend with armatures, clip actions and the run
info       read files or folders and print the skeleton groups they form
convert    write any readable clip (BVH or AMC) as BVH
fragments  train | eval | run | trace: motion-fragment controllers (paper 000)
graph      build | evaluate: motion graphs and what they can do in an environment (paper 004)

Everything but the .blend step is the engine's.  The demo's .blend is written by the
extension's own operators running in Blender-as-a-module (``bpy``), loaded from this
repository the way Blender loads an extension; the engine modules themselves never import bpy.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import sys
import time

from . import demo_data
from .library import ImportSettings, import_library, read_clip


def load_extension():
    """The repository's Blender extension package (registered), for commands that need Blender."""
    name = "motionctl_extension"
    if name in sys.modules:
        return sys.modules[name]
    try:
        importlib.import_module("bpy")
    except ImportError:
        raise SystemExit("this command needs Blender's Python module: pip install bpy==5.0.1 (Python 3.11)") from None
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    spec = importlib.util.spec_from_file_location(name, os.path.join(root, "__init__.py"), submodule_search_locations=[root])
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    module.register()
    return module


def cmd_demo(args) -> int:
    t0 = time.perf_counter()
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    if args.mocap:
        source = os.path.abspath(args.mocap)
        print(f"motion: real capture from {source}")
    else:
        source = os.path.join(out, "demo_bvh")
        paths = demo_data.write_demo_library(source, seed=args.seed)
        print(f"motion: {len(paths)} synthetic clips (seed {args.seed}) written to {source}")
    result = import_library(source)
    print(result.summary())
    if not result.groups:
        print("nothing to import", file=sys.stderr)
        return 1
    runs = []
    if not args.no_controller:
        runs.append(demo_controller(result.groups[0].database, out, args.seed, args.controller_seconds))
    files = [f for g in result.groups for f in g.files]
    ext = load_extension()
    blend = os.path.join(out, "motionctl_demo.blend")
    made = ext.operators.demo.build_demo_blend(files, blend, runs=runs)
    print(f"wrote {blend}: {len(made['armatures'])} armature(s) {made['armatures']}, {len(made['actions'])} action(s)"
          + (f", controller run action {made['runs']}" if made["runs"] else ""))
    print(f"demo finished in {time.perf_counter() - t0:.1f} s")
    return 0


def demo_controller(db, out: str, seed: int, max_seconds: float) -> str:
    """Train a model controller on (up to ``max_seconds`` of) the group's clips, run it on a
    generated evaluation trace, and write the run as BVH; returns its path."""
    import numpy as np

    from .bvh import write_bvh
    from .fragments import FragmentModel, write_trace
    from .fragments.controller import ControllerSettings, run_policy, train_to_file
    from .jobs import PrintProgress
    from .motion import MotionDatabase

    clips, total = [], 0.0
    for c in db.clips:
        if total + c.duration > max_seconds and clips:
            break
        clips.append(c)
        total += c.duration
    sub = MotionDatabase(db.skeleton, clips)
    settings = ControllerSettings()
    model = FragmentModel.build(sub, settings.fragments, settings.quality, PrintProgress("fragments", every=2))
    fs = model.fragments
    top = float(np.percentile(np.linalg.norm(fs.control[:, :2], axis=1), 95))
    train = generated_traces("training", 120.0, fs.decision_rate, seed + 1, top)
    policy_path = os.path.join(out, "model_policy.npz")
    trained = train_to_file(sub, train, policy_path, settings, model, progress=PrintProgress("train", every=2))
    r = trained.result
    print(f"model controller on {len(clips)} clips ({total:.0f} s, {fs.n} fragments): {r.improvements} improvements, "
          f"converged={r.converged}, {r.seconds:.1f} s; policy {policy_path}")
    trace = generated_traces("evaluation", 20.0, fs.decision_rate, seed + 7, top)[0]
    write_trace(trace, os.path.join(out, "evaluation_trace.csv"))
    clip, path, _ = run_policy(trained.policy, fs, trace, name="controller_run")
    run_path = os.path.join(out, "controller_run.bvh")
    write_bvh(clip, run_path)
    print(f"ran it on a {trace.duration:.0f} s generated player trace: {len(path) - 1} decisions -> {run_path}")
    return run_path


def cmd_info(args) -> int:
    settings = ImportSettings(unit_scale=args.unit_scale, keep_calibration=args.keep_calibration)
    t0 = time.perf_counter()
    result = import_library(args.paths, settings)
    print(result.summary())
    for i, g in enumerate(result.groups, 1):
        for c in g.database.clips:
            print(f"  [{i}] {c.name}: {c.n_frames} frames, {c.fps:g} fps, {c.duration:.2f} s, tags {sorted(c.tags)}")
    print(f"read in {time.perf_counter() - t0:.2f} s")
    return 1 if result.failed else 0


def cmd_convert(args) -> int:
    from .bvh import write_bvh

    clip = read_clip(args.input, ImportSettings(unit_scale=args.unit_scale))
    write_bvh(clip, args.output)
    print(f"wrote {args.output}: {clip.n_frames} frames at {clip.fps:g} fps, {clip.skeleton.n_joints} joints")
    return 0


# ----------------------------------------------------------------------------- fragments

def load_group(paths, group: int | None = None, settings: ImportSettings | None = None):
    """(MotionDatabase, source paths) of one skeleton group of ``paths``."""
    result = import_library(paths, settings)
    for path, msg in result.failed:
        print(f"warning: {msg}", file=sys.stderr)
    if not result.groups:
        raise SystemExit("no readable motion files in " + ", ".join(map(str, paths)))
    if group is None:
        if len(result.groups) > 1:
            raise SystemExit("these files form several skeleton groups; choose one with --group N:\n" + result.summary())
        group = 1
    if not 1 <= group <= len(result.groups):
        raise SystemExit(f"--group must be between 1 and {len(result.groups)}")
    g = result.groups[group - 1]
    return g.database, [os.path.abspath(p) for p in paths]


def controller_settings(args):
    from .fragments import ControllerSettings, FragmentSettings, QualitySettings
    from .policy import PolicySettings

    return ControllerSettings(
        FragmentSettings(length=args.length, stride=args.stride, mirror=not args.no_mirror),
        QualitySettings(omegas=tuple(args.omega), deltas=tuple(args.delta), stutter_window=args.stutter,
                        w_v=args.w_v, w_t=args.w_t, w_a=args.w_a),
        PolicySettings(kind=args.kind, discount=args.discount, threshold=args.threshold),
        bins=args.bins, smoothing=args.smoothing,
    )


def read_traces(paths):
    from .fragments import read_trace

    return [read_trace(p) for p in paths]


def generated_traces(kind: str, seconds: float, rate: float, seed: int, top_speed: float, count: int = 1):
    from .fragments import EVALUATION_PLAYER, TRAINING_PLAYERS, player_traces, scale_player

    players = TRAINING_PLAYERS if kind == "training" else (EVALUATION_PLAYER,)
    return player_traces([scale_player(p, top_speed) for p in players], seconds, rate, seed, count)


def cmd_fragments_train(args) -> int:
    import numpy as np

    from .fragments import FragmentModel
    from .fragments.controller import train_to_file
    from .jobs import PrintProgress

    t0 = time.perf_counter()
    db, sources = load_group(args.clips, args.group)
    settings = controller_settings(args)
    model = FragmentModel.build(db, settings.fragments, settings.quality, PrintProgress("fragments"))
    fs = model.fragments
    print(f"{len(db.clips)} clips -> {fs.n} fragments ({'with' if settings.fragments.mirror else 'without'} mirrors)")
    if args.traces:
        traces = read_traces(args.traces)
    else:
        top = float(np.percentile(np.linalg.norm(fs.control[:, :2], axis=1), 95))
        traces = generated_traces("training", args.trace_seconds, fs.decision_rate, args.seed, top)
        print(f"training traces: {len(traces)} generated players x {args.trace_seconds:g} s")
    trained = train_to_file(db, traces, args.out, settings, model, sources=sources, progress=PrintProgress("train"))
    r = trained.result
    print(f"{settings.policy.kind} controller: {r.improvements} improvements, converged={r.converged}, "
          f"{r.seconds:.1f} s solve; wrote {args.out} ({time.perf_counter() - t0:.1f} s total)")
    return 0


def _policy_source(policy, args):
    paths = args.clips or policy.info.get("sources")
    if not paths:
        raise SystemExit("the policy does not record its clips; pass them with --clips")
    return load_group(paths, args.group)[0]


def cmd_fragments_eval(args) -> int:
    import numpy as np

    from .fragments import ControlBins, FragmentModel, QualitySettings, evaluate_controllers
    from .fragments.controller import fragments_for_policy
    from .jobs import PrintProgress
    from .policy import Policy

    policy = Policy.load(args.policy)
    db = _policy_source(policy, args)
    fs = fragments_for_policy(policy, db)
    q = QualitySettings(**{k: tuple(v) if isinstance(v, list) else v
                           for k, v in policy.info.get("settings", {}).get("quality", {}).items()})
    model = FragmentModel.build(db, fs.settings, q, PrintProgress("fragments"))
    if args.traces:
        traces = read_traces(args.traces)
    else:
        top = float(np.percentile(np.linalg.norm(fs.control[:, :2], axis=1), 95))
        traces = generated_traces("evaluation", args.trace_seconds, fs.decision_rate, args.seed, top, args.count)
    bins = ControlBins(policy.centres, "policy", q)
    kind = policy.info.get("kind", "policy")
    res = evaluate_controllers(model, {kind: policy.table}, bins, traces, q, {"opt": None}, PrintProgress("eval"))
    r = res[kind]
    print(f"{kind}: {r['mean']:.1f}% of the off-line optimum (std {r['std']:.1f}) over {len(traces)} traces")
    return 0


def cmd_fragments_run(args) -> int:
    import numpy as np

    from .bvh import write_bvh
    from .fragments import read_trace
    from .fragments.controller import fragments_for_policy, run_policy
    from .policy import Policy

    policy = Policy.load(args.policy)
    db = _policy_source(policy, args)
    fs = fragments_for_policy(policy, db)
    if args.trace:
        trace = read_trace(args.trace)
    else:
        top = float(np.percentile(np.linalg.norm(fs.control[:, :2], axis=1), 95))
        trace = generated_traces("evaluation", args.trace_seconds, fs.decision_rate, args.seed, top)[0]
    clip, path, _ = run_policy(policy, fs, trace, warp=args.warp, name=os.path.splitext(os.path.basename(args.out))[0])
    write_bvh(clip, args.out)
    print(f"wrote {args.out}: {len(path) - 1} decisions, {clip.n_frames} frames ({clip.duration:.1f} s)")
    return 0


def cmd_fragments_trace(args) -> int:
    from .fragments import EVALUATION_PLAYER, TRAINING_PLAYERS, generate_trace, scale_player, write_trace

    players = {p.name: p for p in TRAINING_PLAYERS + (EVALUATION_PLAYER,)}
    trace = generate_trace(scale_player(players[args.player], args.max_speed), args.seconds, args.rate, args.seed)
    write_trace(trace, args.out)
    print(f"wrote {args.out}: {len(trace.samples)} samples at {trace.rate:g} Hz from player {args.player!r}")
    return 0


def add_fragment_commands(sub) -> None:
    f = sub.add_parser("fragments", help="motion-fragment controllers (paper 000)")
    fsub = f.add_subparsers(dest="fragments_command", required=True)

    def clip_args(p, required):
        p.add_argument("--clips", nargs="+", required=required, help="BVH/AMC files or folders")
        p.add_argument("--group", type=int, help="skeleton group to use when the clips form several")

    t = fsub.add_parser("train", help="train a controller and save its policy (.npz)")
    clip_args(t, True)
    t.add_argument("--out", required=True, help="policy file to write (.npz)")
    t.add_argument("--traces", nargs="*", default=[], help="training traces (CSV/JSON); default: generated players")
    t.add_argument("--trace-seconds", type=float, default=210.0, help="seconds per generated training player")
    t.add_argument("--seed", type=int, default=1)
    t.add_argument("--kind", default="model", choices=["model", "steady", "spread", "greedy"])
    t.add_argument("--threshold", type=float, default=None, help="keep only the top P%% transitions (paper: 8)")
    t.add_argument("--discount", type=float, default=0.999, help="lambda")
    t.add_argument("--bins", default="paper", choices=["paper", "kmeans"])
    t.add_argument("--smoothing", type=float, default=1.0, help="user-model pseudo-counts per row")
    t.add_argument("--length", type=float, default=0.1, help="fragment length (s)")
    t.add_argument("--stride", type=float, default=0.05, help="seconds between fragment starts")
    t.add_argument("--no-mirror", action="store_true", help="do not add mirrored clips")
    t.add_argument("--omega", type=float, nargs="+", default=[0.8, 0.5, 0.3])
    t.add_argument("--delta", type=int, nargs="+", default=[1, 2, 3])
    t.add_argument("--stutter", type=float, default=0.25, help="stutter window (s)")
    t.add_argument("--w-v", type=float, default=10.0)
    t.add_argument("--w-t", type=float, default=6.0)
    t.add_argument("--w-a", type=float, default=20.0)
    t.set_defaults(func=cmd_fragments_train)

    e = fsub.add_parser("eval", help="percent of the off-line optimum on evaluation traces")
    e.add_argument("--policy", required=True)
    clip_args(e, False)
    e.add_argument("--traces", nargs="*", default=[])
    e.add_argument("--trace-seconds", type=float, default=10.0)
    e.add_argument("--count", type=int, default=12, help="generated evaluation traces")
    e.add_argument("--seed", type=int, default=7)
    e.set_defaults(func=cmd_fragments_eval)

    r = fsub.add_parser("run", help="drive a policy with a trace and write the motion as BVH")
    r.add_argument("--policy", required=True)
    clip_args(r, False)
    r.add_argument("--trace", help="trace file (CSV/JSON); default: a generated evaluation trace")
    r.add_argument("--trace-seconds", type=float, default=20.0)
    r.add_argument("--seed", type=int, default=7)
    r.add_argument("--warp", type=float, default=0.0, help="0: root motion from the data, 1: follow the control")
    r.add_argument("--out", required=True, help="BVH file to write")
    r.set_defaults(func=cmd_fragments_run)

    g = fsub.add_parser("trace", help="write a generated player trace (CSV or JSON)")
    g.add_argument("--player", default="evaluator", choices=["steady", "twitchy", "evaluator"])
    g.add_argument("--seconds", type=float, default=60.0)
    g.add_argument("--rate", type=float, default=10.0)
    g.add_argument("--max-speed", type=float, default=3.5)
    g.add_argument("--seed", type=int, default=0)
    g.add_argument("--out", required=True)
    g.set_defaults(func=cmd_fragments_trace)


# ----------------------------------------------------------------------------- motion graphs

def cmd_graph_build(args) -> int:
    from .graph import GraphSettings, build_graph
    from .jobs import PrintProgress

    db, _ = load_group(args.clips, args.group)
    settings = GraphSettings(threshold=args.threshold, min_clip=args.min_clip, max_clip=args.max_clip,
                             branching=args.branching)
    t0 = time.perf_counter()
    graph = build_graph(db, settings, PrintProgress("graph"))
    graph.save(args.out)
    st = graph.stats
    print(f"{graph.n} clips, {len(graph.edges)} transitions; {st['seconds_kept']:.1f} of {st['seconds_total']:.1f} s "
          f"kept ({st['seconds_dropped']:.1f} s dropped); wrote {args.out} in {time.perf_counter() - t0:.1f} s")
    if st.get("dropped_sources"):
        print("dropped entirely: " + ", ".join(st["dropped_sources"]))
    return 0


def cmd_graph_evaluate(args) -> int:
    import json

    import numpy as np

    from .evaluate import EditModel, EmbedSettings, evaluate, read_environment
    from .graph import MotionGraph
    from .jobs import PrintProgress

    graph = MotionGraph.load(args.graph)
    env = read_environment(args.env)
    settings = EmbedSettings(cell=args.cell, headings=args.headings, radius=args.radius,
                             edit=EditModel(scale=args.edit_scale))
    res = evaluate(graph, env, settings, pairs=args.pairs, lm_sample=args.lm_sample, progress=PrintProgress("evaluate"))
    pe = res["path_efficiency"]
    print(f"{res['nodes']} embedded nodes in {res['embed_seconds']:.1f} s; metrics in {res['metric_seconds']:.1f} s")
    print(f"coverage: {100 * res['coverage_xy']:.1f}% XY, {100 * res['coverage_xya']:.1f}% XY-heading")
    print(f"path efficiency: mean {pe['mean']:.2f}, median {pe['median']:.2f} over {pe['pairs']} pairs")
    for kind, cov in res["action_coverage"].items():
        ae = res["action_efficiency"].get(kind, {})
        print(f"{kind}: coverage {100 * cov:.1f}%, action efficiency median {ae.get('median', float('nan')):.2f}")
    for kind, lm in res["maneuverability"].items():
        print(f"{kind}: local maneuverability {lm['theoretical']['mean']:.2f} s in theory, "
              f"{lm['practical']['mean']:.2f} s in this room")
    if args.json:
        plain = {k: v for k, v in res.items() if k not in ("embedding", "coverage_map", "free", "action_maps")}
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(plain, fh, indent=1, default=lambda v: v.tolist() if isinstance(v, np.ndarray) else float(v))
    if args.map:
        np.save(args.map, res["coverage_map"])
    return 0


def add_graph_commands(sub) -> None:
    g = sub.add_parser("graph", help="motion graphs and their evaluation in an environment (paper 004)")
    gsub = g.add_subparsers(dest="graph_command", required=True)
    b = gsub.add_parser("build", help="build a motion graph from clips and save it (.npz)")
    b.add_argument("--clips", nargs="+", required=True, help="BVH/AMC files or folders (tags from sidecar JSON)")
    b.add_argument("--group", type=int, help="skeleton group to use when the clips form several")
    b.add_argument("--threshold", type=float, default=0.08, help="highest frame difference accepted for a transition")
    b.add_argument("--branching", type=int, default=3, help="most transitions kept from one clip end (0: all)")
    b.add_argument("--min-clip", type=float, default=0.5, help="seconds: closer transitions are merged")
    b.add_argument("--max-clip", type=float, default=1.5, help="seconds: longer clips are split")
    b.add_argument("--out", required=True)
    b.set_defaults(func=cmd_graph_build)
    e = gsub.add_parser("evaluate", help="embed a graph in an environment (JSON) and print its metrics")
    e.add_argument("--graph", required=True)
    e.add_argument("--env", required=True, help="environment JSON (bounds and obstacles)")
    e.add_argument("--cell", type=float, default=0.2)
    e.add_argument("--headings", type=int, default=18)
    e.add_argument("--radius", type=float, default=0.25, help="character radius (m)")
    e.add_argument("--edit-scale", type=float, default=1.0, help="editing footprint size (1 = 100%%)")
    e.add_argument("--pairs", type=int, default=100, help="Monte-Carlo path pairs 4-7 m apart")
    e.add_argument("--lm-sample", type=float, default=0.1, help="fraction of nodes sampled for maneuverability")
    e.add_argument("--json", help="write the metrics as JSON")
    e.add_argument("--map", help="write the XY coverage map as .npy")
    e.set_defaults(func=cmd_graph_evaluate)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m motionctl", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    d = sub.add_parser("demo", help="import a library and write a .blend with armatures and actions")
    d.add_argument("--out", required=True, help="output folder")
    d.add_argument("--mocap", help="folder of real BVH or ASF/AMC files (default: generated demo clips)")
    d.add_argument("--seed", type=int, default=0, help="seed of the generated demo clips")
    d.add_argument("--no-controller", action="store_true", help="skip training and running a fragment controller")
    d.add_argument("--controller-seconds", type=float, default=60.0,
                   help="train the demo controller on at most this much capture (first clips of the group)")
    d.set_defaults(func=cmd_demo)
    i = sub.add_parser("info", help="print the skeleton groups of files or folders")
    i.add_argument("paths", nargs="+")
    i.add_argument("--unit-scale", type=float, help="metres per file unit (default: automatic)")
    i.add_argument("--keep-calibration", action="store_true", help="keep leading T-pose frames")
    i.set_defaults(func=cmd_info)
    c = sub.add_parser("convert", help="write a BVH or AMC clip as BVH")
    c.add_argument("input")
    c.add_argument("output")
    c.add_argument("--unit-scale", type=float)
    c.set_defaults(func=cmd_convert)
    add_fragment_commands(sub)
    add_graph_commands(sub)
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)
