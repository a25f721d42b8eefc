"""Command line: ``python -m motionctl <command>``.  Help is shown as plain text (``Parser``).

info       read files or folders and print the skeleton groups they form, and what was decided
           about each file's units, axes and floor
convert    write any readable clip (BVH or AMC) as BVH
<engine>   train | run | eval (and the engine's own sub-commands): one command per registered
           engine (``fragments``, ``plan``, ``graph``, ``field``, ``active``, ``matching`` today)

Every engine's command is generated from the registry (``motionctl.engines.ENGINES``): its word,
its ``Settings`` (each setting an option: ``--length``, ``--w-v``...), and the sub-commands and
options the engine adds itself (``Engine.cli``: ``fragments trace``; ``active run --pool DIR``, a
learning session against the pool's oracle) and its own ``eval`` figures (``Engine.evaluate``).  ``eval --env room.json``
certifies any model in a room.  ``--scheduler tcp://HOST:PORT`` (before the command, or
``MOTIONCTL_SCHEDULER``) runs the parallel pieces on a running Dask cluster.  The demo (which
writes a .blend with Blender) is ``tools/demo.py``: the engine never imports Blender.

A user error prints one line naming the file or option and exits with status 2, and nothing is
left half-written (an existing output stays as it was).  Every option is checked before any work
starts: numbers and seeds as the command line is read (``positive``, ``seed``), and each output
(``--out``, ``--json``, ``--map``) where it will be written: its folder exists, takes a new file and
has room for it (``check_output``: a model's estimated size, ``estimated_model_bytes``).  Outputs
are written through a temporary file put in place at the end (``store.atomic_file``), so a full
disk met while writing leaves the previous file.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

from . import store
from .engines.base import summary_lines
from .errors import MotionctlError, MotionFileError
from .evaluate.looks import model_looks
from .evaluate.room.settings import RoomSettings
from .io.library import ImportSettings, import_library, load_clip
from .play.commands import PlaySettings
from .settings import add_arguments, from_args

def out_path(path: str, ext: str, need: float = 0, option: str = "--out") -> str:
    """Where an output goes, with its extension added if missing, checked before any work
    (``check_output``); returns the absolute path."""
    path = os.path.abspath(path if path.endswith(ext) else path + ext)
    check_output(path, need, option)
    return path


OUTPUT_SLACK = 1 << 20  # bytes free beyond an output's estimate (a BVH, a JSON, a map)


def check_output(path: str, need: float = 0, option: str = "--out", what: str = "") -> None:
    """One MotionctlError naming ``option`` unless ``path``'s folder exists, takes a new file and has
    ``need`` bytes (and ``OUTPUT_SLACK``) free (``store.check_writable``'s probe: a read-only folder or
    a full disk said before the work, not after it); ``what`` says what the need is."""
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise MotionctlError(f"{option}: the folder {folder} does not exist")
    if os.path.isdir(path):
        raise MotionctlError(f"{option}: {path} is a folder")
    try:
        store.check_writable(path, int(need) + OUTPUT_SLACK)
    except MotionFileError as exc:
        raise MotionctlError(f"{option}: {exc}" + (f" ({what})" if what and "free" in exc.reason else "")) from None


def estimated_model_bytes(model_class, db) -> int:
    """What a model trained on library ``db`` will take on disk: its engine's measured bytes per
    second of capture (``Model.bytes_per_second``, the largest seen, with a margin) times the library's
    seconds, and at least ``store.MIN_FREE_BYTES`` (what the panel asks before training)."""
    seconds = sum(c.duration for c in db.clips)
    return int(max(store.MIN_FREE_BYTES, model_class.bytes_per_second * seconds))


# ----------------------------------------------------------------------------- library commands

def import_settings(args) -> ImportSettings:
    """The import options of the command line (``ImportSettings``' own declaration, as the panel's)."""
    return from_args(ImportSettings, args)


def cmd_info(args) -> int:
    """``info``: the skeleton groups of files or folders and each file's decisions."""
    settings = import_settings(args)
    t0 = time.perf_counter()
    result = import_library(args.paths, settings)
    print(result.summary())
    for i, g in enumerate(result.groups, 1):
        for path, c in zip(g.files, g.database.clips):
            info = result.orientations.get(path)
            print(f"  [{i}] {c.name}: {c.n_frames} frames, {c.fps:g} fps, {c.duration:.2f} s, tags {sorted(c.tags)}"
                  + (f"; {info.describe()}" if info else ""))
    print(f"read in {time.perf_counter() - t0:.2f} s")
    return 1 if result.failed else 0


def cmd_convert(args) -> int:
    """``convert``: any readable clip written as BVH."""
    from .io.bvh import write_bvh

    clip, info, notes = load_clip(args.input, import_settings(args))
    for note in notes:
        print(f"  {note}")
    out = out_path(args.output, ".bvh")
    write_bvh(clip, out)
    print(f"wrote {out}: {clip.n_frames} frames at {clip.fps:g} fps, {clip.skeleton.n_joints} joints ({info.describe()})")
    return 0


def load_group(paths, group: int | None = None, settings: ImportSettings | None = None):
    """(MotionDatabase, absolute source paths) of one skeleton group of ``paths``, read with the
    import ``settings``; each file's warnings are printed."""
    for p in paths:
        if not os.path.lexists(p):
            raise MotionctlError(f"--clips: {p}: no such file or folder")
    from .jobs import PrintProgress

    with PrintProgress("reading") as reading:  # a folder of capture can take a while: say so
        result = import_library(paths, settings, progress=reading)
    for path, info in result.orientations.items():
        for w in info.warnings:
            print(f"warning: {path}: {w}", file=sys.stderr)
    for path, msg in result.failed:
        print(f"warning: {msg}", file=sys.stderr)
    if not result.groups:
        raise MotionctlError("--clips: no readable motion files in " + ", ".join(map(str, paths)))
    if group is None:
        if len(result.groups) > 1:
            raise MotionctlError("--clips: these files form several skeleton groups; choose one with --group N:\n"
                                 + result.summary())
        group = 1
    if not 1 <= group <= len(result.groups):
        raise MotionctlError(f"--group must be between 1 and {len(result.groups)}")
    return result.groups[group - 1].database, [os.path.abspath(p) for p in paths]


def model_clips(model, args):
    """The library clips a saved model plays (``--clips``, else the sources it recorded: its header's
    ``summary.sources``, a list of paths checked on load)."""
    if args.clips:
        return load_group(args.clips, args.group, import_settings(args))[0].clips
    paths = model.info.get("sources")
    if not paths:
        raise MotionctlError("--clips: the model does not record its clips; pass them")
    gone = [p for p in paths if not os.path.lexists(p)]
    if gone:
        raise MotionctlError(f"--model: the clips it was trained on are gone ({gone[0]}"
                             f"{f' and {len(gone) - 1} more' if len(gone) > 1 else ''}); pass them with --clips")
    return load_group(paths, args.group, import_settings(args))[0].clips


# ----------------------------------------------------------------------------- engine commands

def cmd_train(engine, args) -> int:
    """``<engine> train``: fit the engine on clips and save the model (.npz)."""
    from .jobs import PrintProgress

    with PrintProgress(engine.name) as progress:
        fit_and_save(engine, args, args.clips, progress=progress)
    return 0


def fit_and_save(engine, args, paths, **fit_args):
    """Fit ``engine`` (settings from ``args``) on the clip group of ``paths``, record the sources,
    save the model to ``args.out`` and print its summary: (model, path written)."""

    settings = from_args(engine.Settings, args)
    out = out_path(args.out, ".npz")
    db, sources = load_group(paths, args.group, import_settings(args))
    need = estimated_model_bytes(engine.Model, db)  # before training: a full disk found after it cost the whole job
    check_output(out, need, what=f"{engine.Model.bytes_per_second / 1024:.0f} KB per second of capture for "
                 f"{sum(c.duration for c in db.clips):.0f} s, and at least {store.MIN_FREE_BYTES >> 20} MB")
    t0 = time.perf_counter()
    model = engine.fit(db, settings, **fit_args)
    model.info["sources"] = sources
    from .jobs import PrintProgress

    with PrintProgress("checking") as checking:  # a few seconds more: say what they are
        checking(0.0, "how a check run looks beside the capture")
        model.info.update(model_looks(model, db))
    written = model.save(out)
    print(json.dumps({k: v for k, v in model.summary().items() if k != "sources"}, default=str))
    for text, warning in summary_lines(engine, model.summary()):
        if warning:
            print(f"warning: {text}", file=sys.stderr)
    print(f"wrote {written} ({time.perf_counter() - t0:.1f} s)")
    return model, written


def read_run_trace(args, model):
    """The trace a run plays: a trace file, else a generated evaluation player."""
    from .play.commands import EVALUATION_PLAYER, generate_trace, read_trace, scale_player

    if args.trace:
        return read_trace(args.trace)
    return generate_trace(scale_player(EVALUATION_PLAYER, model.top_speed), args.trace_seconds, 10.0, args.seed)


def cmd_run(engine, args) -> int:
    """``<engine> run``: drive a saved model with a trace (or a generated player) and write BVH."""
    from .io.bvh import write_bvh
    from .engines import load_model
    from .play.session import Session

    if not args.model:
        raise MotionctlError(f"{engine.word} run: give --model (a saved model, .npz)")
    play = from_args(PlaySettings, args)
    out = out_path(args.out, ".bvh")
    model = load_model(args.model)
    if model.engine != engine.name:
        raise MotionctlError(f"--model: {args.model} is a {model.engine} model, not {engine.name}")
    clips = model_clips(model, args)
    table = model.frame_table(clips)
    trace = read_run_trace(args, model)
    check_output(out, bvh_bytes(trace.duration * table.fps, clips[0].skeleton.n_joints), what="the run as BVH")
    session = Session(model, table, play=play)
    clip = session.play_trace(trace, name=os.path.splitext(os.path.basename(out))[0])
    write_bvh(clip, out)
    print(f"wrote {out}: {len(session.steps)} decisions, {clip.n_frames} frames ({clip.duration:.2f} s, the trace "
          f"{trace.duration:.2f} s)")
    print_looks(clip, clips, trace.duration)
    return 0


BVH_NUMBER_BYTES = 12  # a BVH motion value as written ("-123.456789 ")


def bvh_bytes(frames: float, joints: int) -> float:
    """About what a BVH of ``frames`` frames of ``joints`` joints takes (3 rotations a joint, 3 positions)."""
    return frames * (3 * joints + 3) * BVH_NUMBER_BYTES


def print_looks(clip, clips, trace_seconds: float) -> None:
    """How a run looks beside its capture (``evaluate.looks``), one line, then any missed target."""
    from .evaluate.looks import PoseReference, capture_looks, looks, targets_missed, worst_line

    reference = PoseReference.of(clips)
    run, source = looks(clip, reference, trace_seconds), capture_looks(clips, reference)
    print(f"looks: feet sliding on {100 * run['skating']:.1f}% of contact frames (capture "
          f"{100 * source['skating']:.1f}%), {run['sliding_cm']:.1f} cm per step ({source['sliding_cm']:.1f}), "
          f"poses {100 * run['pose_distance']['p95']:.1f} cm from capture (p95; held-out capture "
          f"{100 * source['pose_distance']['p95']:.1f})")
    print(f"looks, {worst_line(run.get('worst', {}), source.get('worst'))}")
    for text in source["reach"]["cannot"]:
        print(f"note: the capture cannot answer every command: {text}", file=sys.stderr)
    for text in targets_missed(run, source):
        print(f"warning: {text}", file=sys.stderr)


def cmd_eval(engine, args) -> int:
    """``<engine> eval``: certify a model in a room (``--env``), else the engine's own figures."""
    from .engines import load_model
    from .evaluate import certify, read_environment

    if (args.json or args.map) and not args.env:
        raise MotionctlError(f"{'--json' if args.json else '--map'}: room metrics need a room (--env room.json)")
    model = load_model(args.model)
    if model.engine != engine.name:
        raise MotionctlError(f"--model: {args.model} is a {model.engine} model, not {engine.name}")
    if args.env:
        from .jobs import PrintProgress

        env = read_environment(args.env)
        room = from_args(RoomSettings, args)
        # The outputs, before the evaluation: a full or read-only folder found after it cost the whole run.
        json_path = out_path(args.json, ".json", JSON_BYTES, "--json") if args.json else None
        map_path = out_path(args.map, ".npy", map_bytes(env.bounds, room.cell), "--map") if args.map else None
        table = model.frame_table(model_clips(model, args)) if model.own_graph() is None else None
        with PrintProgress("evaluate") as progress:
            res = certify(model, table, env, room.embed(), pairs=room.pairs, lm_sample=room.lm_sample,
                          progress=progress)
        print_room_metrics(res, json_path)
        if map_path:
            with store.atomic_file(map_path) as fh:
                np.save(fh, res["coverage_map"])
            print(f"wrote {map_path}")
        return 0
    if engine.evaluate is not None:
        return engine.evaluate(model, args, sys.modules[__name__])
    print(json.dumps(model.summary(), default=str, indent=1))
    return 0


JSON_BYTES = 1 << 20  # room metrics as JSON: tens of KB (the distributions' samples)


def map_bytes(bounds, cell: float) -> float:
    """The XY coverage map of a room as .npy: one 8-byte count per cell."""
    x0, y0, x1, y1 = bounds
    return 8.0 * np.ceil((x1 - x0) / cell) * np.ceil((y1 - y0) / cell) + 128


ROOM_OBJECTS = frozenset({"embedding", "coverage_map", "free", "action_maps", "graph"})  # not written as JSON


def print_room_metrics(res: dict, json_path: str | None) -> None:
    """Print paper 004's metrics of an evaluation and write them as JSON if asked."""
    from .evaluate import summary_lines

    pe = res["path_efficiency"]
    print(f"{res['nodes']} embedded nodes in {res['embed_seconds']:.1f} s; metrics in {res['metric_seconds']:.1f} s")
    print(f"coverage: {100 * res['coverage_xy']:.1f}% XY, {100 * res['coverage_xya']:.1f}% XY-heading")
    print(f"path efficiency: mean {pe['mean']:.2f}, median {pe['median']:.2f} over {pe['pairs']} pairs")
    print("\n".join(summary_lines(res)))
    if res["unused_clips"]:
        print("clips that never play in this room: " + "; ".join(res["unused_clips"]))
    if json_path:  # checked before the evaluation (``cmd_eval``); written whole or not at all
        plain = {k: v for k, v in res.items() if k not in ROOM_OBJECTS}
        with store.atomic_file(json_path, "w", encoding="utf-8") as fh:
            json.dump(plain, fh, indent=1, default=lambda v: v.tolist() if isinstance(v, np.ndarray) else float(v))
        print(f"wrote {json_path}")


# ----------------------------------------------------------------------------- parser

MAX_SECONDS = 3600.0  # s: the longest generated trace an option may ask for


def positive(kind, most: float | None = None):
    """An argparse type: a positive finite number of ``kind``, at most ``most`` (a length of time or a
    count that would otherwise ask for any amount of memory: ``--trace-seconds 1e9`` asked 224 GiB)."""
    def parse(text):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not np.isfinite(value) or value <= 0:
            raise argparse.ArgumentTypeError(f"must be a positive number, got {text}")
        if most is not None and value > most:
            raise argparse.ArgumentTypeError(f"must be at most {most:g}, got {text}")
        return value
    return parse


MAX_SEED = 2**31 - 1  # as the settings' seeds


def seed(text):
    """An argparse type: a random seed, a whole number from 0 to MAX_SEED (``--seed -1`` ended in
    numpy's "expected non-negative integer" traceback)."""
    try:
        value = int(text)
    except ValueError:
        value = None
    if value is None or not 0 <= value <= MAX_SEED:
        raise argparse.ArgumentTypeError(f"must be a whole number from 0 to {MAX_SEED}, got {text!r}")
    return value


def add_settings(parser, engine) -> None:
    """An engine's settings as options of ``parser``."""
    add_arguments(parser, engine.Settings)


class EngineCommands:
    """One engine's sub-commands while the parser is built: ``train``, ``run`` and ``eval`` (the
    generic ones), and ``add(name, help=...)`` for the engine's own (``Engine.cli``)."""

    def __init__(self, engine, subparsers):
        self.engine = engine
        self._sub = subparsers
        self.train = self.run = self.eval = None

    def add(self, name: str, **kw):
        return self._sub.add_parser(name, aliases=self.engine.aliases_of(name), **kw)


def add_engine_commands(sub) -> None:
    """One sub-command per registered engine with train/run/eval (options from its Settings), then
    whatever the engine adds itself (``Engine.cli``)."""
    from .engines import ENGINES

    for engine in ENGINES.values():
        p = sub.add_parser(engine.word, help=f"{engine.label}: {engine.description}")
        commands = EngineCommands(engine, p.add_subparsers(dest=f"{engine.word}_command", required=True))

        def clip_args(q, required):
            q.add_argument("--clips", nargs="+", required=required, help="BVH/AMC files or folders")
            q.add_argument("--group", type=positive(int), help="skeleton group to use when the clips form several")
            add_import_arguments(q)

        t = commands.train = commands.add("train", help=f"train a {engine.label} model and save it (.npz)")
        clip_args(t, True)
        t.add_argument("--out", required=True, help="model file to write (.npz)")
        add_settings(t, engine)
        t.set_defaults(func=lambda a, e=engine: cmd_train(e, a))
        r = commands.run = commands.add("run", help="drive a model with a trace and write the motion as BVH")
        r.add_argument("--model", help="a saved model (.npz)")
        clip_args(r, False)
        r.add_argument("--trace", help="trace file (CSV/JSON); default: a generated evaluation player")
        r.add_argument("--trace-seconds", type=positive(float, MAX_SECONDS), default=20.0)
        r.add_argument("--seed", type=seed, default=7, help="seed of the generated player (default 7)")
        add_arguments(r.add_argument_group("play options (as the Preview panel's)"), PlaySettings)
        r.add_argument("--out", required=True, help="BVH file to write (a model .npz for an engine that learns here)")
        r.set_defaults(func=lambda a, e=engine: cmd_run(e, a))
        e = commands.eval = commands.add("eval", help="measure a model: in a room (--env), or by its own figures")
        e.add_argument(*engine.model_flags, dest="model", required=True, help="a saved model (.npz)")
        clip_args(e, False)
        e.add_argument("--env", help="room JSON: certify the model in it (paper 004's metrics)")
        add_arguments(e.add_argument_group("room options (as the Evaluate panel's)"), RoomSettings)
        e.add_argument("--json", help="write the room metrics as JSON")
        e.add_argument("--map", help="write the XY coverage map as .npy (cells x, y: ways to be there)")
        e.add_argument("--trace-seconds", type=positive(float, MAX_SECONDS), default=10.0)
        e.add_argument("--seed", type=seed, default=7, help="seed of generated evaluation traces (default 7)")
        e.set_defaults(func=lambda a, en=engine: cmd_eval(en, a))
        if engine.cli is not None:
            engine.cli(commands, sys.modules[__name__])


def add_import_arguments(parser) -> None:
    """The import options (units, axes, floor, extra roots, calibration frames, AMC rate) as a group."""
    add_arguments(parser.add_argument_group("import options (as the Library panel's)"), ImportSettings)


class Parser(argparse.ArgumentParser):
    """argparse's parser (its sub-commands' too) with help as plain text (the docstrings' ``markup``
    is taken out: a terminal showed it as it is) and an error as one line naming the option, status 2."""

    def format_help(self) -> str:
        return super().format_help().replace("``", "")

    def format_usage(self) -> str:
        return super().format_usage().replace("``", "")

    def error(self, message: str):
        self.exit(2, f"error: {message} (see {self.prog} --help)\n")


DESCRIPTION = "motionctl's command line: read motion capture, train controllers on it, run and measure them."


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``python -m motionctl``."""
    p = Parser(prog="python -m motionctl", description=DESCRIPTION)
    p.add_argument("--scheduler", default=os.environ.get("MOTIONCTL_SCHEDULER") or None,
                   help="run the parallel pieces on the Dask cluster at this address (tcp://HOST:PORT; default: "
                        "$MOTIONCTL_SCHEDULER, else this machine); needs pip install -e \".[cluster]\"")
    sub = p.add_subparsers(dest="command", required=True)
    i = sub.add_parser("info", help="print the skeleton groups of files or folders")
    i.add_argument("paths", nargs="+")
    add_import_arguments(i)
    i.set_defaults(func=cmd_info)
    c = sub.add_parser("convert", help="write a BVH or AMC clip as BVH")
    c.add_argument("input")
    c.add_argument("output")
    add_import_arguments(c)
    c.set_defaults(func=cmd_convert)
    add_engine_commands(sub)
    return p


def main(argv=None) -> int:
    """Run a command; a user error (``MotionctlError``) prints one line and returns 2."""
    args = build_parser().parse_args(argv)
    try:
        if args.scheduler:
            from .jobs import cluster, use_scheduler

            use_scheduler(args.scheduler)
            cluster()  # connect now: an unreachable scheduler fails before any work
        return args.func(args)
    except MotionctlError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except FileNotFoundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


__all__ = ["build_parser", "main"]
