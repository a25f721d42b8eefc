"""The other ways data gets in (issues 37 and 57), for ``bench/fuzz.py``: saved models of every engine,
traces, timelines, rooms, bone-map presets, exported .glb files and command lines.  Each mutant is
written to a file, opened with the product's own reader and then used as the product uses it:

  models     ``load_model``, the library's frame table, a generated player at the model's top speed (as
             ``run`` makes one), a short run of a fixed stick (20 decisions); the cases go round the six
             engines' seeds in turn, so each gets the same count
  traces     ``read_trace`` (CSV and JSON), then played from its start (``Session.play``, its
             clock and goals, at most ``PLAY_SECONDS`` of it) on a motion-matching model
  timelines  ``load_timeline`` (a run's commands on its clock, as the Compare box saves them),
             then replayed the way Compare does (``scoreboard.replay``, at most ``PLAY_SECONDS``)
  rooms      ``read_environment``, then rasterised onto the grid a room is certified on
  presets    ``load_preset``, checked against the capture's skeleton and a renamed rig, and a
             second of capture retargeted with it
  glb        ``glb_animation_names``: the export check's read-back of a glTF binary's JSON chunk
  options    a command line run by ``cli.main`` (``fuzz_options``: hostile option values, outputs
             sent to a missing, read-only or full place)

Seeds are real: models trained on three of CMU subject 16's clips (``tests/model_digests.py``'s
small settings), traces and a timeline from a run on them, the rooms the tests certify, a preset
``auto_map`` makes.  Mutations: bytes and lines (``fuzz.mutate``), and structure: a model's arrays
(NaN, inf, huge or negative entries, another dtype, shape or length, missing, foreign or swapped
arrays) and its JSON header (any value replaced by a hostile one, keys dropped, and a field near
the top, where the fields the program reads live, given another kind: a whole number written 7.0,
a number as a word, a value in a list, a word where a list belongs, 10^12, 1e308, -5); a JSON
file's values replaced, nested thousands deep or repeated.  Outcomes as for the readers, plus ``late``
(motionctl's own error, but raised while playing what had loaded: not a bug, counted apart), and
``warned`` (accepted, but numpy said it cast a NaN, an infinity or a number too large for an
integer on the way: garbage used silently, as a room with a 1e30 m circle was: a bug).
"""

from __future__ import annotations

import copy
import io
import json
import os
import re
import traceback
import zipfile
from pathlib import Path

import numpy as np

PLAY_SECONDS = 4.0  # the longest a trace or timeline is played here (the seeds last 3 s; a user's may be longer: Esc)
SURFACES = ("models", "traces", "timelines", "rooms", "presets", "glb", "options")
JSON_HOSTILE = [None, True, False, "", "x", "nan", "1e999", -1, 0, 1, 2, 10**30, 10**400, -10**30, 0.5, -0.5,
                1e308, -1e308, 1e-320, float("nan"), float("inf"), float("-inf"), [], {}, [1, 2], [[1, 2, 3]],
                {"a": 1}, "\u00e9\x00", 2**63, -2**63, 2**31, 7, "abc", -5, 10**12, 7.0, 1e30, -1e30, [[1]]]
LIBRARY = [("cmu_amc", "16", f"16_{t}.amc") for t in ("11", "15", "35")]  # ``model_digests.small_library``'s
STICK = [[0.0, 1.2, 0.0, 0.0]] * 6 + [[0.0, 1.0, 0.8, 0.0]] * 6 + [[1.0, 0.5, 0.0, 0.0]] * 4 + [[0.0, 0.0, 0.0, 0.0]] * 4


# ----------------------------------------------------------------------------- seeds

def seed_files(mocap: str, folder: str, engines=None) -> dict:
    """Write every seed file into ``folder``; {surface: [file names]}.  Trains the small models of
    every engine, or of ``engines`` (which must hold the graph and matching, whose models the
    timeline and command-line seeds use: the quick test's choice, seconds where all six take minutes)."""
    from motionctl.evaluate.room.environment import environment_to_dict, random_environment
    from motionctl.evaluate.scoreboard import timeline
    from motionctl.play.commands import EVALUATION_PLAYER, generate_trace, save_timeline, write_trace
    from motionctl.play.session import Session
    from motionctl.retarget.mapping import auto_map, save_preset

    os.makedirs(folder, exist_ok=True)
    db = small_library(mocap)
    out = {s: [] for s in SURFACES}
    sources = [os.path.join(mocap, *p) for p in LIBRARY]
    models = _digests().trained(mocap) if engines is None else _digests().small_models(db, engines)
    for name, model in models:
        model.info["sources"] = sources  # what ``train`` records, for ``run`` without --clips
        out["models"].append(os.path.basename(model.save(os.path.join(folder, f"{name}.npz"))))
    trace = generate_trace(EVALUATION_PLAYER, 3.0, seed=3)
    for ext in ("csv", "json"):
        write_trace(trace, os.path.join(folder, f"trace.{ext}"))
        out["traces"].append(f"trace.{ext}")
    matching = load(os.path.join(folder, "matching.npz"))
    session = Session(matching, matching.frame_table(db.clips))
    session.play_trace(trace)
    times, commands = timeline(session)
    out["timelines"].append(os.path.basename(save_timeline(os.path.join(folder, "timeline.json"), times, commands,
                                                           {"seconds": trace.duration, "engine": "matching"})))
    for k, (w, d, clutter, chasm) in enumerate(((6, 5, 0.0, False), (8, 6, 0.3, True), (10, 8, 0.2, False))):
        env = random_environment(w, d, clutter, seed=k, chasm=chasm)
        with open(os.path.join(folder, f"room{k}.json"), "w", encoding="utf-8") as fh:
            json.dump(environment_to_dict(env), fh)
        out["rooms"].append(f"room{k}.json")
    source, target = rigs(db)
    save_preset(os.path.join(folder, "preset.json"), auto_map(source, target), source, target)
    out["presets"].append("preset.json")
    with open(os.path.join(folder, "export.glb"), "wb") as fh:
        fh.write(glb_bytes({"asset": {"version": "2.0"}, "animations": [{"name": "walk"}, {"name": "run.001"}]}))
    out["glb"].append("export.glb")
    from fuzz_options import seed_options

    out["options"] = seed_options(folder, mocap)
    return out


def seed_bytes(folder: str, names: dict) -> dict:
    """{surface: [(file name, bytes)]} of the seed files ``names`` ({surface: [file names]}) in ``folder``."""
    return {surface: [(name, Path(folder, name).read_bytes()) for name in files] for surface, files in names.items()}


def glb_bytes(doc, binary: bytes = b"\x00" * 16, length: int | None = None) -> bytes:
    """A glTF 2.0 binary: its JSON chunk (``length`` to say another size) and a BIN chunk."""
    import struct

    text = json.dumps(doc, allow_nan=True).encode()
    text += b" " * (-len(text) % 4)
    chunks = struct.pack("<II", len(text) if length is None else length, 0x4E4F534A) + text
    chunks += struct.pack("<II", len(binary), 0x004E4942) + binary
    return b"glTF" + struct.pack("<II", 2, 12 + len(chunks)) + chunks


def small_library(mocap: str):
    return _digests().small_library(mocap)


def _digests():
    """tests/model_digests.py: the small library and models the reproducibility test trains."""
    import sys

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))
    import model_digests

    return model_digests


def load(path):
    from motionctl.engines import load_model

    return load_model(path)


def rigs(db):
    """(the capture's rig, the same skeleton renamed as a game rig would name it)."""
    from motionctl.retarget.mapping import Rig

    source = Rig.from_skeleton(db.clips[0].skeleton)
    target = Rig([f"rig:{n}" for n in source.names], source.parents, source.heads, source.rest, name="game",
                 tails=source.tails)
    return source, target


# ----------------------------------------------------------------------------- mutations

def mutate_file(surface: str, data: bytes, rng) -> bytes:
    """A mutant of a seed file's bytes."""
    from fuzz import mutate

    r = rng.random()
    if surface == "models":
        return mutate(data, rng, "npz") if r < 0.15 else mutate_model(data, rng)
    if surface == "options":
        from fuzz_options import mutate_options

        return mutate_options(data, rng)
    if surface == "glb":
        return mutate(data, rng, "glb") if r < 0.3 else mutate_glb(data, rng)
    if data[:1] in (b"{", b"[") and r < 0.6:
        return mutate_json(data, rng)
    return mutate(data, rng, "csv" if surface == "traces" else "json")


def _hostile(rng):
    """A hostile value, a fresh copy: a shared {} filled by op 6 made a document hold itself."""
    return copy.deepcopy(JSON_HOSTILE[int(rng.integers(0, len(JSON_HOSTILE)))])


def _nodes(doc, path=()):
    """Every (path, value) in a JSON document, containers included."""
    yield path, doc
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _nodes(v, path + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc[:50]):
            yield from _nodes(v, path + (i,))


def _set(doc, path, value):
    if not path:
        return value
    parent = doc
    for p in path[:-1]:
        parent = parent[p]
    parent[path[-1]] = value
    return doc


def mutate_doc(doc, rng):
    """One to three structural mutations of parsed JSON."""
    for _ in range(int(rng.integers(1, 4))):
        nodes = list(_nodes(doc))
        path, value = nodes[int(rng.integers(0, len(nodes)))]
        op = int(rng.integers(0, 8))
        if op == 7:  # a field near the top (where the fields read live) given another kind, or a size
            near = [(p, v) for p, v in nodes if 1 <= len(p) <= 3 and not isinstance(v, (dict, list))]
            if near:
                path, value = near[int(rng.integers(0, len(near)))]
                doc = _set(doc, path, _other_kind(value, rng))
        elif op <= 2:  # a hostile value
            doc = _set(doc, path, _hostile(rng))
        elif op == 3 and path:  # a key or an item gone
            parent = doc
            for p in path[:-1]:
                parent = parent[p]
            del parent[path[-1]]
        elif op == 4:  # nested deep: a mark the text gets in its place (json itself would recurse)
            doc = _set(doc, path, f"{DEEP}{int(rng.integers(2, 5000))}:{json.dumps(value, allow_nan=True)}")
        elif op == 5 and isinstance(value, list) and value:  # repeated (many points, rows, obstacles)
            doc = _set(doc, path, value * int(rng.integers(2, 3000)))
        elif op == 6 and isinstance(value, dict):  # a foreign key
            value[str(_hostile(rng))] = _hostile(rng)
    return doc


def _other_kind(value, rng):
    """``value`` as another kind: 7 -> 7.0, a number -> its text or a list of it, a word -> a list of
    its letters' word, or one of the sizes and signs that broke the loaders (10^12, 1e308, -5)."""
    choices = [[value], str(value), "abc", -5, 10**12, 1e308, None, {"a": value}]
    if isinstance(value, int) and not isinstance(value, bool):
        choices += [float(value)] * 4
    return copy.deepcopy(choices[int(rng.integers(0, len(choices)))])


DEEP = "\x01deep"


def dump(doc) -> bytes:
    """JSON text of a mutated document (NaN and Infinity as Python's json writes them), each deep
    mark replaced by its value nested in as many lists (in one pass: a document repeated thousands of
    times holds thousands of marks)."""
    def nested(m):
        depth, _, value = json.loads(m.group(0))[len(DEEP):].partition(":")
        return "[" * int(depth) + value + "]" * int(depth)

    return DEEP_MARK.sub(nested, json.dumps(doc, allow_nan=True)).encode()


DEEP_MARK = re.compile(re.escape(json.dumps(DEEP)[:-1]) + r'(?:[^"\\]|\\.)*"')


def mutate_json(data: bytes, rng) -> bytes:
    return dump(mutate_doc(json.loads(data), rng))


def mutate_glb(data: bytes, rng) -> bytes:
    """A .glb whose JSON chunk is mutated as JSON, or given bytes that are not UTF-8 or JSON, or a
    length past the file's end."""
    import struct

    length = struct.unpack("<I", data[12:16])[0]
    doc = json.loads(data[20:20 + length])
    op = int(rng.integers(0, 4))
    if op <= 1:
        return glb_bytes(mutate_doc(doc, rng))
    text = bytearray(data[20:20 + length])
    if op == 2:  # bytes of the chunk changed (a bad JSON chunk: not UTF-8, not JSON)
        for _ in range(int(rng.integers(1, 6))):
            text[int(rng.integers(0, len(text)))] = int(rng.integers(0, 256))
        return data[:20] + bytes(text) + data[20 + length:]
    return data[:12] + struct.pack("<I", [0, length + 1, 2**32 - 1, 7][int(rng.integers(0, 4))]) + data[16:]


def mutate_model(data: bytes, rng) -> bytes:
    """A model file with one to three of its arrays (or its JSON header) damaged, written back as
    np.savez writes it."""
    with np.load(io.BytesIO(data), allow_pickle=False) as z:
        arrays = {k: np.asarray(z[k]) for k in z.files}
    header = True  # the header is mutated at most once (then it may be nested past json's reach)
    for _ in range(int(rng.integers(1, 4))):
        names = sorted(arrays)
        name = names[int(rng.integers(0, len(names)))]
        if name == "meta" or rng.random() < 0.25:
            if header and "meta" in arrays:
                doc = json.loads(bytes(arrays["meta"]).decode("utf-8"))
                arrays["meta"] = np.frombuffer(dump(mutate_doc(doc, rng)), dtype=np.uint8)
                header = False
            continue
        arrays[name] = _mutate_array(arrays, name, rng)
        if arrays[name] is None:
            del arrays[name]
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def _mutate_array(arrays, name, rng):
    a = arrays[name]
    op = int(rng.integers(0, 12))
    if op <= 3 and a.size:  # hostile entries
        a = a.copy()
        flat = a.reshape(-1)
        k = rng.integers(0, a.size, int(rng.integers(1, 4)))
        if a.dtype.kind == "f":
            with np.errstate(over="ignore"):  # 1e300 into float32 is inf: hostile either way
                flat[k] = [np.nan, np.inf, -np.inf, 1e300, -1e300, 0.0, -1.0, 1e9][int(rng.integers(0, 8))]
        elif a.dtype.kind in "iu":
            info = np.iinfo(a.dtype)
            flat[k] = [info.max, info.min, 0, 10**6 % (info.max or 1), info.max // 2][int(rng.integers(0, 5))]
            if info.min < 0 and rng.random() < 0.5:
                flat[k] = -1
        elif a.dtype.kind == "b":
            flat[k] = ~flat[k]
        return a
    if op == 4:  # another dtype
        to = [np.float32, np.float64, np.int32, np.int64, np.uint8, np.bool_, np.complex64, "U3", np.float16]
        with np.errstate(all="ignore"):
            try:
                return a.astype(to[int(rng.integers(0, len(to)))])
            except (ValueError, TypeError, OverflowError):
                return a
    if op == 5:  # another shape
        choice = int(rng.integers(0, 5))
        if choice == 0:
            return a.reshape(-1)
        if choice == 1:
            return a[None]
        if choice == 2 and a.ndim > 1:  # its axes swapped (an earlier mutation may have emptied it)
            return a.reshape(a.shape[0], -1).T.copy() if a.size else np.swapaxes(a, 0, -1).copy()
        if choice == 3:
            return np.asarray(a.reshape(-1)[0] if a.size else 0)  # a scalar
        return a[..., :1] if a.ndim else a
    if op == 6:  # shorter, empty or longer
        if a.ndim == 0:
            return a
        n = a.shape[0]
        return [a[: max(n - 1, 0)], a[:0], np.concatenate([a, a[: max(1, n // 3)]]), a[: n // 2]][int(rng.integers(0, 4))]
    if op == 7:
        return None  # missing
    if op == 8:  # an array another version would hold, or one of a family one past its end
        arrays["g999_dx" if rng.random() < 0.5 else "extra_" + name] = np.zeros(3)
        return a
    if op == 9:  # swapped with another array
        other = sorted(k for k in arrays if k not in ("meta", name))
        if other and name != "meta":
            o = other[int(rng.integers(0, len(other)))]
            arrays[o], a = a, arrays[o]
        return a
    if op == 10 and a.dtype.kind in "iu" and a.size > 1:  # shuffled (an index table out of order)
        return rng.permutation(a.reshape(-1)).reshape(a.shape)
    if op == 11 and a.dtype.kind == "f" and a.size:  # scaled far out
        with np.errstate(all="ignore"):
            return (a * [1e6, -1.0, 1e-12, 1e30][int(rng.integers(0, 4))]).astype(a.dtype)
    return a


# ----------------------------------------------------------------------------- one case

class Context:
    """What a worker keeps between cases: the library, a model to play traces on, the rigs."""

    def __init__(self, mocap: str, folder: str):
        self.folder = folder
        self.db = small_library(mocap)
        self.matching = load(os.path.join(folder, "matching.npz"))
        self.table = self.matching.frame_table(self.db.clips)
        self.source, self.target = rigs(self.db)
        self.clip = self.db.clips[0].slice(0, 30)


def use(surface: str, path: str, ctx: Context) -> str:
    """Open ``path`` as the product does and use it; returns "" or the reason an output is not
    finite.  Raises what the product raises, with ``loaded`` set on the exception once the file
    was read (an error after that is ``late``)."""
    from motionctl.play.session import Session

    stage = "load"
    try:
        if surface == "models":
            from motionctl.play.commands import EVALUATION_PLAYER, commands_from_controls, generate_trace, scale_player

            model = load(path)
            stage = "use"
            generate_trace(scale_player(EVALUATION_PLAYER, model.top_speed), 2.0, 10.0, 7)  # what ``run`` plays
            if not all(isinstance(p, str) for p in model.info.get("sources") or []):  # what ``run`` reads
                return "its sources are not paths"
            table = model.frame_table(ctx.db.clips)
            clip = Session(model, table, start=(1.0, 2.0), start_yaw=0.5).run(commands_from_controls(np.array(STICK)))
            return _finite_clip(clip)
        if surface in ("traces", "timelines"):
            from motionctl.evaluate.scoreboard import replay
            from motionctl.play.commands import load_timeline, read_trace

            if surface == "traces":
                trace = read_trace(path)
                stage = "use"
                clip = Session(ctx.matching, ctx.table).play(trace.clock(), trace.commands(),
                                                               min(trace.duration, PLAY_SECONDS))
            else:
                times, commands, meta = load_timeline(path)
                stage = "use"
                clip = replay(ctx.matching, ctx.table, times, commands, min(float(times[-1]) + 1.0, PLAY_SECONDS)).clip()
            return _finite_clip(clip)
        if surface == "rooms":
            from motionctl.evaluate.room.environment import rasterise, read_environment

            env = read_environment(path)
            stage = "use"
            grid = rasterise(env)
            arrays = [np.asarray(v) for v in vars(grid).values() if isinstance(v, np.ndarray) and v.dtype.kind == "f"]
            return "" if all(np.all(np.isfinite(a)) for a in arrays) else "a grid holds NaN or inf"
        if surface == "presets":
            from motionctl.retarget.mapping import check_mapping, load_preset
            from motionctl.retarget.solve import retarget

            mapping = load_preset(path)
            stage = "use"
            check_mapping(mapping, ctx.source, ctx.target)
            res = retarget(ctx.clip, ctx.source, ctx.target, mapping)
            arrays = [np.asarray(v) for v in vars(res).values() if isinstance(v, np.ndarray) and v.dtype.kind == "f"]
            return "" if all(np.all(np.isfinite(a)) for a in arrays) else "a retargeted pose holds NaN or inf"
        if surface == "glb":
            from motionctl.retarget.export import glb_animation_names

            names = glb_animation_names(path)
            stage = "use"
            return "" if all(isinstance(n, str) for n in names) else "an animation name is not text"
        raise ValueError(f"no surface {surface!r}")
    except BaseException as exc:
        exc.fuzz_stage = stage
        raise


def _finite_clip(clip) -> str:
    arrays = [clip.root_pos, clip.local_rot] + ([clip.local_pos] if clip.local_pos is not None else [])
    if not all(np.all(np.isfinite(a)) for a in arrays):
        return "the run holds NaN or inf"
    return ""


def run_file_case(surface: str, data: bytes, ctx: Context, scratch: str) -> tuple[str, str]:
    """(outcome, detail) of one mutant: ok, error, late, crash, nonfinite, memory."""
    from motionctl.errors import MotionctlError

    if surface == "options":
        from fuzz_options import run_options_case

        return run_options_case(data, ctx.folder, scratch)
    ext = {"models": ".npz", "rooms": ".json", "presets": ".json", "timelines": ".json", "glb": ".glb"}.get(surface)
    if ext is None:
        ext = ".json" if data[:1] in (b"{", b"[") else ".csv"
    path = os.path.join(scratch, "mutant" + ext)
    with open(path, "wb") as fh:
        fh.write(data)
    try:
        bad = use(surface, path, ctx)
        return ("nonfinite", bad) if bad else ("ok", "")
    except MemoryError:
        return "memory", traceback.format_exc(limit=-3)
    except MotionctlError as exc:
        text = str(exc)
        if getattr(exc, "fuzz_stage", "load") == "load" and "mutant" not in text:
            return "crash", f"error without the file's name: {text}"
        return ("error" if getattr(exc, "fuzz_stage", "load") == "load" else "late"), text
    except zipfile.BadZipFile as exc:
        return "crash", f"BadZipFile: {exc}"
    except Exception as exc:  # noqa: BLE001 - anything else is what we look for
        return "crash", f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=-4)}"
