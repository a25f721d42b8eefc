"""Fuzzing the readers: mutants of real BVH and ASF/AMC files must fail with motionctl's own error.

    .venv/bin/python bench/fuzz.py [--bvh 100000] [--asf 20000] [--seed 0] [--mocap DIR]

Seeds are real files from ``$MOTIONCTL_MOCAP_DIR`` (default ../shared/mocap), shortened to their
first frames so a case takes milliseconds.  Each mutant gets one to three mutations (bytes
flipped, lines deleted, duplicated or swapped, truncation, hostile tokens such as ``nan``,
``1e999``, ``{``, a joint renamed to another's name, a bone given a second parent, deep
nesting, hundreds of joints with one name) and goes through the whole per-file import: parse,
units and axes, calibration trimming, floor, names, grouping.  Outcomes:

  ok         a clip came out, every value finite
  error      MotionFileError naming the file and the line
  no_line    MotionFileError without a line (only for errors about the whole file)
  crash      any other exception: a bug
  nonfinite  a clip came out holding NaN or inf: a bug
  warned     accepted, but numpy cast a NaN, an infinity or a number too large for an integer on
             the way (garbage used silently): a bug
  slow       took longer than the time limit (1 s): a bug

The other surfaces (``fuzz_surfaces``: saved models of the six engines, traces, timelines, rooms,
bone-map presets, exported .glb files, command lines) count their model cases per engine: the
model cases go round the engines' seeds, so ``--models 60000`` is 10,000 a engine.

Writes fuzz.md and fuzz.json into --out (bench/results by default; the 60,000-model run is in
bench/results/fuzz_models).  The test suite runs a few thousand cases of the same generator
(tests/test_fuzz.py).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback
from collections import Counter

import numpy as np

from harness import ROOT, add_mocap, default_mocap  # noqa: E402,F401  (first: the checkout on the path)

from motionctl.io.asfamc import parse_amc, parse_asf  # noqa: E402
from motionctl.io.bvh import parse_bvh_oriented  # noqa: E402
from motionctl.errors import MotionFileError  # noqa: E402
from motionctl.io.library import ImportSettings, group_clips, prepare_clip  # noqa: E402
from fuzz_saves import concurrent_saves  # noqa: E402
from fuzz_surfaces import (PLAY_SECONDS, SURFACES, Context, mutate_file, run_file_case, seed_bytes,  # noqa: E402
                           seed_files)

TIME_LIMIT = 1.0
HOSTILE = [b"nan", b"NaN", b"inf", b"-inf", b"1e999", b"-1e999", b"1e308", b"1e-320", b"0", b"-0", b"1e30",
           b"99999999999999999999999", b"-5", b"{", b"}", b"JOINT", b"ROOT", b"End", b"Site", b"CHANNELS", b"OFFSET",
           b"MOTION", b"Frames:", b"Frame Time:", b"\x00", b"\xff\xfe", b"\xc3\xa9", b"-", b".", b"1.2.3", b"e5",
           b"begin", b"end", b"root", b":hierarchy", b":bonedata", b"dof", b"length", b"axis", b"rx", b"tx", b"l",
           b"#", b"\r", b"\t", b"  ", b"\n\n", b"Xrotation", b"Zposition", b"6", b"3", b"1000000", b"-1"]


def mocap_dir(arg=None) -> str:
    d = arg or default_mocap()
    if not os.path.isdir(d):
        raise SystemExit(f"no capture folder at {d}: set MOTIONCTL_MOCAP_DIR")
    return d


def short_bvh(data: bytes, frames: int) -> bytes:
    """The file with only its first ``frames`` frames (the Frames: line fixed)."""
    head, _, body = data.partition(b"MOTION")
    lines = body.replace(b"\r\n", b"\n").split(b"\n")
    i = next(k for k, ln in enumerate(lines) if ln.strip().lower().startswith(b"frame time"))
    n = int(next(ln for ln in lines if ln.strip().lower().startswith(b"frames:")).split(b":")[1])
    keep = lines[i + 1:i + 1 + min(frames, n)]
    return head + b"MOTION\nFrames: %d\n" % len(keep) + lines[i] + b"\n" + b"\n".join(keep) + b"\n"


def short_amc(data: bytes, frames: int) -> bytes:
    lines = data.split(b"\n")
    out, count = [], 0
    for ln in lines:
        if ln.strip().isdigit():
            count += 1
            if count > frames:
                break
        out.append(ln)
    return b"\n".join(out) + b"\n"


def seeds(mocap: str, frames: int = 40):
    """(bvh seeds [(name, bytes)], asf/amc seeds [(name, asf bytes, amc bytes)])."""
    bvh = []
    for sub, names in (("cmu31", ("cmu_02_01_walk_mbnames.bvh", "cmu_131_01_start_walk_stop.bvh",
                                  "cmu_01_01_forward_jumps_turn_around.bvh")),
                       ("cc_base", ("cc_cmu_07_02_walk.bvh", "cc_cmu_02_03_run_jog.bvh"))):
        for n in names:
            with open(os.path.join(mocap, sub, n), "rb") as fh:
                bvh.append((n, short_bvh(fh.read(), frames)))
    amc = []
    for subject, trial in (("16", "15"), ("127", "29"), ("10", "01")):
        folder = os.path.join(mocap, "cmu_amc", subject)
        with open(os.path.join(folder, f"{subject}.asf"), "rb") as fh:
            asf = fh.read()
        with open(os.path.join(folder, f"{subject}_{trial}.amc"), "rb") as fh:
            amc.append((f"{subject}_{trial}", asf, short_amc(fh.read(), frames)))
    return bvh, amc


# ----------------------------------------------------------------------------- mutations

def _lines(data):
    return data.split(b"\n")


def mutate(data: bytes, rng: np.random.Generator, kind: str) -> bytes:
    """One to three random mutations of a file's bytes; ``kind`` ("bvh", "asf", "amc") adds
    format-aware ones."""
    for _ in range(int(rng.integers(1, 4))):
        data = _mutate_once(data, rng, kind)
    return data


def _mutate_once(data: bytes, rng, kind: str) -> bytes:
    lines = _lines(data)
    op = int(rng.integers(0, 14))
    if op == 0 and data:  # flip bytes
        b = bytearray(data)
        for _ in range(int(rng.integers(1, 8))):
            b[int(rng.integers(0, len(b)))] = int(rng.integers(0, 256))
        return bytes(b)
    if op == 1 and len(lines) > 1:  # delete a line
        del lines[int(rng.integers(0, len(lines)))]
    elif op == 2:  # duplicate a line
        i = int(rng.integers(0, len(lines)))
        lines.insert(i, lines[i])
    elif op == 3 and len(lines) > 1:  # swap two lines
        i, j = rng.integers(0, len(lines), 2)
        lines[i], lines[j] = lines[j], lines[i]
    elif op == 4:  # truncate
        return data[: int(rng.integers(0, len(data) + 1))]
    elif op in (5, 6):  # a hostile token replaces one, or goes between two
        i = int(rng.integers(0, len(lines)))
        words = lines[i].split(b" ")
        k = int(rng.integers(0, len(words) + 1))
        tok = HOSTILE[int(rng.integers(0, len(HOSTILE)))]
        if op == 5 and k < len(words):
            words[k] = tok
        else:
            words.insert(k, tok)
        lines[i] = b" ".join(words)
    elif op == 7:  # replace a number with a hostile number
        i = int(rng.integers(0, len(lines)))
        words = lines[i].split()
        nums = [k for k, w in enumerate(words) if w[:1].isdigit() or w[:1] == b"-"]
        if nums:
            words[nums[int(rng.integers(0, len(nums)))]] = HOSTILE[int(rng.integers(0, 12))]
            lines[i] = b" ".join(words)
    elif op == 8:  # one name takes another's (duplicate joints / bones)
        names = [ln.split()[-1] for ln in lines if ln.strip().split()[:1] in ([b"JOINT"], [b"name"])]
        if len(names) > 1:
            a, b = rng.choice(len(names), 2, replace=False)
            return data.replace(names[a], names[b], 1 + int(rng.integers(0, 3)))
    elif op == 9 and kind == "bvh":  # deep nesting or many joints of one name
        i = next((k for k, ln in enumerate(lines) if ln.strip().startswith(b"JOINT")), None)
        if i is not None:
            n = int(rng.integers(50, 3000))
            if rng.random() < 0.5:
                block = [b"JOINT deep", b"{", b"OFFSET 0 1 0", b"CHANNELS 3 Zrotation Xrotation Yrotation"] * n
                block += [b"End Site", b"{", b"OFFSET 0 1 0", b"}"] + [b"}"] * n
            else:
                block = [b"JOINT same", b"{", b"OFFSET 0 1 0", b"End Site", b"{", b"OFFSET 0 1 0", b"}", b"}"] * n
            lines[i:i] = block
    elif op == 10 and kind == "asf":  # a second parent or a cycle in the hierarchy
        i = next((k for k, ln in enumerate(lines) if ln.strip().lower() == b":hierarchy"), None)
        names = [ln.split()[-1] for ln in lines if ln.strip().split()[:1] == [b"name"]]
        if i is not None and len(names) > 1:
            a, b = rng.choice(len(names), 2, replace=False)
            lines.insert(i + 2, names[a] + b" " + names[b])
    elif op == 11:  # CR line endings, or none
        return data.replace(b"\n", b"\r" if rng.random() < 0.5 else b" ")
    elif op == 12:  # repeat a block of lines
        i = int(rng.integers(0, len(lines)))
        j = min(len(lines), i + int(rng.integers(1, 30)))
        lines[i:i] = lines[i:j] * int(rng.integers(1, 20))
    elif op == 13:  # a channel count or frame count changed
        for k, ln in enumerate(lines):
            s = ln.strip().lower()
            words = ln.split()
            if (s.startswith(b"channels") or s.startswith(b"frames:")) and len(words) > 1 and rng.random() < 0.2:
                words[1] = HOSTILE[int(rng.integers(0, len(HOSTILE)))] if rng.random() < 0.3 else \
                    str(int(rng.integers(-2, 12))).encode()
                lines[k] = b" ".join(words)
                break
    return b"\n".join(lines)


# ----------------------------------------------------------------------------- one case

SETTINGS = ImportSettings()


def import_bytes(kind: str, data: bytes, asf: bytes | None = None):
    """The whole per-file import of a file's bytes: read, prepare, group.  kind "bvh", or "amc"
    with the ASF's bytes."""
    if kind == "bvh":
        clip, info = parse_bvh_oriented(data, "mutant.bvh")
    else:
        skeleton = parse_asf(asf, "mutant.asf", SETTINGS.unit_scale)
        clip, info = parse_amc(data, "mutant.amc", skeleton, SETTINGS.amc_fps, tags=False)
    clip, info, _ = prepare_clip(clip, info, SETTINGS, "mutant")
    return group_clips([("mutant", clip)], {})


def run_case(kind: str, data: bytes, asf: bytes | None = None) -> tuple[str, float, str]:
    """(outcome, CPU seconds, detail) of one mutant; see the module docstring for the outcomes."""
    t0 = time.process_time()  # the case's own work, whatever else the machine is doing
    try:
        groups = import_bytes(kind, data, asf)
        outcome, detail = "ok", ""
        for c in groups[0].database.clips:
            arrays = [c.root_pos, c.local_rot, c.skeleton.offsets] + ([c.local_pos] if c.local_pos is not None else [])
            if not all(np.all(np.isfinite(a)) for a in arrays):
                outcome, detail = "nonfinite", "a clip holds NaN or inf"
    except MotionFileError as exc:
        outcome, detail = ("error" if exc.line is not None else "no_line"), exc.reason
    except Exception as exc:  # noqa: BLE001 - anything else is what we look for
        outcome, detail = "crash", f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=-3)}"
    seconds = time.process_time() - t0
    if seconds > TIME_LIMIT and outcome in ("ok", "error", "no_line"):
        outcome, detail = "slow", f"{seconds:.2f} s ({outcome}: {detail})"
    return outcome, seconds, detail


def cases(bvh_seeds, amc_seeds, n_bvh: int, n_asf: int, seed: int):
    """(kind, label, mutant bytes, asf bytes or None): BVH mutants, then ASF/AMC mutants (half of
    them mutate the ASF, half the AMC)."""
    rng = np.random.default_rng(seed)
    for _ in range(n_bvh):
        name, data = bvh_seeds[int(rng.integers(0, len(bvh_seeds)))]
        yield "bvh", name, mutate(data, rng, "bvh"), None
    for k in range(n_asf):
        name, asf, amc = amc_seeds[int(rng.integers(0, len(amc_seeds)))]
        if k % 2:
            yield "amc", name + ".asf", amc, mutate(asf, rng, "asf")
        else:
            yield "amc", name + ".amc", mutate(amc, rng, "amc"), asf


# ----------------------------------------------------------------------------- every surface

READERS = ("bvh", "asf_amc")
ALL = READERS + SURFACES
SLOW_S = {"bvh": TIME_LIMIT, "asf_amc": TIME_LIMIT}  # a reader case; any other surface: FILE_SLOW_S
FILE_SLOW_S = 10.0  # a whole use of a model or small file (load, then play or rasterise)
HANG_S = 60.0  # a case still running after this is killed and counted as a hang
MEMORY_BYTES = 1 << 30  # a case may grow the worker's address space by this much (a MemoryError past it)
CHUNK = 400  # cases per worker process (a fresh process: no case inherits another's heap)


def mutant(surface: str, k: int, seed: int, reader_seeds, files: dict) -> tuple[str, bytes, bytes | None]:
    """(seed label, mutant bytes, ASF bytes for an AMC mutant) of case ``k``: the same on every run."""
    rng = np.random.default_rng([seed, ALL.index(surface), k])
    if surface == "bvh":
        name, data = reader_seeds[0][int(rng.integers(0, len(reader_seeds[0])))]
        return name, mutate(data, rng, "bvh"), None
    if surface == "asf_amc":
        name, asf, amc = reader_seeds[1][int(rng.integers(0, len(reader_seeds[1])))]
        if k % 2:
            return name + ".asf", amc, mutate(asf, rng, "asf")
        return name + ".amc", mutate(amc, rng, "amc"), asf
    seeds = files[surface]  # models: round the engines, the same count each
    name, data = seeds[k % len(seeds)] if surface == "models" else seeds[int(rng.integers(0, len(seeds)))]
    return name, mutate_file(surface, data, rng), None


def cap_memory() -> None:
    """Let this process grow by at most ``MEMORY_BYTES`` (a mutant asking for gigabytes meets a
    MemoryError, not the machine's limit)."""
    import resource

    with open("/proc/self/status", encoding="ascii") as fh:
        vm = next(int(ln.split()[1]) * 1024 for ln in fh if ln.startswith("VmSize:"))
    resource.setrlimit(resource.RLIMIT_AS, (vm + MEMORY_BYTES, resource.RLIM_INFINITY))


def worker(surface: str, start: int, stop: int, seed: int, mocap: str, folder: str) -> None:
    """Run cases [start, stop) of ``surface`` in this process, one JSON line per case on stdout
    ({"k"} when it starts, then {"k", "outcome", "s", "detail"})."""
    import warnings

    warnings.simplefilter("ignore")  # NaN and overflow are looked for in the outputs; casts in ``cast_warned``
    files, ctx = {}, None
    if surface not in READERS:
        names = json.load(open(os.path.join(folder, "seeds.json"), encoding="utf-8"))[surface]
        files = seed_bytes(folder, {surface: names})
        ctx = Context(mocap, folder)
    reader_seeds = seeds(mocap)
    scratch = os.path.join(folder, f"scratch{os.getpid()}")
    os.makedirs(scratch, exist_ok=True)
    cap_memory()
    out = os.fdopen(os.dup(1), "w")  # the protocol's own channel; anything else printed goes to stderr
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    for k in range(start, stop):
        out.write(json.dumps({"k": k}) + "\n")
        out.flush()
        try:
            label, data, asf = mutant(surface, k, seed, reader_seeds, files)
        except Exception:  # noqa: BLE001 - the generator's own bug: stop the bench, not a finding
            sys.stderr.write(f"the mutant generator failed on {surface} case {k}:\n{traceback.format_exc()}")
            sys.exit(3)
        t0 = time.process_time()  # CPU time: the case's own work (two workers share the machine's cores)
        with cast_warned() as casts:
            if surface in READERS:
                outcome, _, detail = run_case("bvh" if surface == "bvh" else "amc", data, asf)
            else:
                outcome, detail = run_file_case(surface, data, ctx, scratch)
        seconds = time.process_time() - t0
        if casts and outcome == "ok":
            outcome, detail = "warned", casts[0]
        if seconds > SLOW_S.get(surface, FILE_SLOW_S) and outcome in ("ok", "error", "no_line", "late"):
            outcome, detail = "slow", f"{seconds:.2f} s ({outcome}: {detail})"
        out.write(json.dumps({"k": k, "outcome": outcome, "s": seconds, "seed": label, "detail": detail[:600]}) + "\n")
        out.flush()


class cast_warned:
    """Within the block, the texts of numpy's warnings that it cast NaN, an infinity or a number too
    large into an integer (``invalid value encountered in cast``): an accepted input that did so was
    used as garbage (a room's 1e30 m circle was rasterised so, with exit status 0)."""

    def __enter__(self):
        import warnings

        self._catch = warnings.catch_warnings(record=True)
        self.seen = self._catch.__enter__()
        warnings.simplefilter("ignore")
        warnings.filterwarnings("always", message=".*(invalid value|overflow) encountered in cast",
                                category=RuntimeWarning)
        self.casts = []
        return self.casts

    def __exit__(self, *exc):
        self.casts += [f"{w.filename}:{w.lineno}: {w.message}" for w in self.seen]
        return self._catch.__exit__(*exc)


def run_isolated(jobs, seed: int, mocap: str, folder: str, workers: int, on_result) -> None:
    """Run every (surface, start, stop) job in worker processes, ``workers`` at a time (one thread
    of BLAS each); a worker silent for ``HANG_S`` is killed and its case counted as a hang, one that
    dies counts its case as a crash, and the rest of its job goes on in a new worker."""
    import select
    import subprocess

    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    queue, running = list(jobs), {}

    def spawn(job):
        surface, start, stop = job
        cmd = [sys.executable, os.path.abspath(__file__), "--worker", surface, str(start), str(stop), "--seed",
               str(seed), "--mocap", mocap, "--folder", folder]
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        running[p.stdout.fileno()] = {"p": p, "job": job, "current": None, "last": time.monotonic(), "buf": b""}

    while queue or running:
        while queue and len(running) < workers:
            spawn(queue.pop(0))
        ready, _, _ = select.select(list(running), [], [], 1.0)
        now = time.monotonic()
        for fd in list(running):
            w = running[fd]
            chunk = os.read(fd, 1 << 16) if fd in ready else None  # every line the worker has written
            if chunk:
                w["last"] = now
                *lines, w["buf"] = (w["buf"] + chunk).split(b"\n")
                for line in lines:
                    try:
                        msg = json.loads(line)
                    except ValueError:  # not the protocol's (cannot happen since stdout is stderr; kept safe)
                        continue
                    if "outcome" in msg:
                        w["current"] = None
                        on_result(w["job"][0], msg)
                    else:
                        w["current"] = msg["k"]
                continue
            hung = w["current"] is not None and now - w["last"] > HANG_S
            if chunk is None and not hung:
                continue
            if hung:
                w["p"].kill()
            w["p"].wait()
            w["p"].stdout.close()
            del running[fd]
            surface, _, stop = w["job"]
            if w["p"].returncode == 3:
                raise SystemExit(w["p"].stderr.read().decode(errors="replace")[-3000:])
            err = w["p"].stderr.read().decode(errors="replace")
            w["p"].stderr.close()
            if w["current"] is not None:  # killed, or died in a case
                err = "" if hung else err[-600:]
                on_result(surface, {"k": w["current"], "outcome": "hang" if hung else "crash",
                                    "s": now - w["last"], "seed": "", "detail": "killed after %g s" % HANG_S
                                    if hung else f"worker died (status {w['p'].returncode}): {err}"})
                if w["current"] + 1 < stop:
                    queue.insert(0, (surface, w["current"] + 1, stop))
            elif w["p"].returncode != 0:
                raise SystemExit(f"a {surface} worker failed before its first case:\n{err[-2000:]}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    counts_default = {"bvh": 100_000, "asf": 20_000, "models": 60_000, "traces": 5_000, "timelines": 5_000,
                      "rooms": 5_000, "presets": 5_000, "glb": 2_000, "options": 2_000}
    for name, n in counts_default.items():
        ap.add_argument(f"--{name}", type=int, default=n, help=f"mutants (default {n:,})")
    ap.add_argument("--saves", type=int, default=1000, help="concurrent saves of one path (default 1,000)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--mocap")
    ap.add_argument("--folder", help="where seed files and mutants go (default: a temporary folder)")
    ap.add_argument("--reuse-seeds", action="store_true", help="use the seed files a run left in --folder (no "
                    "training: for trying the generators; a recorded run makes its own)")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    ap.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        worker(args.worker[0], int(args.worker[1]), int(args.worker[2]), args.seed, args.mocap, args.folder)
        return 0
    import tempfile

    from harness import environment

    env = environment()  # the commit whose code runs
    mocap = mocap_dir(args.mocap)
    folder = args.folder or tempfile.mkdtemp(prefix="motionctl_fuzz_")
    wanted = {"bvh": args.bvh, "asf_amc": args.asf, **{s: getattr(args, s) for s in SURFACES}}
    t0 = time.perf_counter()
    reuse = args.reuse_seeds and os.path.exists(os.path.join(folder, "seeds.json"))
    if any(wanted[s] for s in SURFACES) and not reuse:
        names = seed_files(mocap, folder)
        with open(os.path.join(folder, "seeds.json"), "w", encoding="utf-8") as fh:
            json.dump(names, fh)
    counts = {s: Counter() for s in ALL}
    engines = {}  # models: {seed file: Counter of outcomes}
    examples, slowest, done = {}, Counter(), [0]
    total = sum(wanted.values())

    def on_result(surface, msg):
        counts[surface][msg["outcome"]] += 1
        if surface == "models":
            engines.setdefault(os.path.splitext(msg["seed"] or "?")[0], Counter())[msg["outcome"]] += 1
        slowest[surface] = max(slowest[surface], msg["s"])
        if msg["outcome"] in BUGS + ("no_line",) and len(examples.setdefault(surface, {}).get(msg["outcome"], [])) < 5:
            examples[surface].setdefault(msg["outcome"], []).append({"case": msg["k"], "seed": msg["seed"],
                                                                     "detail": msg["detail"]})
        done[0] += 1
        if done[0] % 5000 == 0:
            print(f"  {done[0]}/{total} cases, {time.perf_counter() - t0:.0f} s", flush=True)

    jobs = [(s, a, min(a + CHUNK * (10 if s in READERS else 1), n)) for s, n in wanted.items()
            for a in range(0, n, CHUNK * (10 if s in READERS else 1))]
    run_isolated(jobs, args.seed, mocap, folder, args.workers, on_result)
    saves = concurrent_saves(args.saves, folder) if args.saves else {}
    seconds = time.perf_counter() - t0
    result = {"command": "bench/fuzz.py " + " ".join(argv or sys.argv[1:]), "commit": env["commit"], "seed": args.seed,
              "seconds": seconds, "counts": {k: dict(v) for k, v in counts.items() if wanted[k]},
              "models_by_engine": {k: dict(v) for k, v in sorted(engines.items())},
              "slowest_case_s": {k: slowest[k] for k in ALL if wanted[k]}, "examples": examples, "saves": saves,
              "environment": env,
              "settings": {"seed": args.seed, **wanted, "saves": args.saves, "workers": args.workers,
                           "reader_time_limit_s": TIME_LIMIT, "slow_s": FILE_SLOW_S, "hang_s": HANG_S,
                           "memory_bytes": MEMORY_BYTES, "play_seconds": PLAY_SECONDS}}
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "fuzz.json"), "w", encoding="utf-8") as fh:
        json.dump(result, fh, indent=1)
    md = report(result)
    with open(os.path.join(args.out, "fuzz.md"), "w", encoding="utf-8") as fh:
        fh.write(md)
    print(md)
    for surface, by in examples.items():
        for outcome, ex in by.items():
            print(f"\n{surface} {outcome}:")
            for e in ex:
                print(f"  case {e['case']} ({e['seed']}): {e['detail']}")
    bad = sum(counts[s][o] for s in counts for o in BUGS) + saves.get("corrupt", 0) + saves.get("failed", 0)
    return 1 if bad else 0


BUGS = ("crash", "nonfinite", "warned", "slow", "hang", "memory")
LABELS = {"bvh": "BVH", "asf_amc": "ASF/AMC", "models": "models (6 engines)", "traces": "traces (CSV, JSON)",
          "timelines": "timelines", "rooms": "rooms", "presets": "bone-map presets", "glb": "exported .glb",
          "options": "command lines"}


def report(result: dict) -> str:
    outcomes = ("ok", "error", "no_line", "late") + BUGS
    counts, total = result["counts"], sum(sum(c.values()) for c in result["counts"].values())
    md = ["# Fuzzing every way data gets in", "",
          f"`{result['command']}` at {result['commit'][:10]}: {total:,} mutants of real files in "
          f"{result['seconds']:.0f} s, each in a worker process that may grow by at most "
          f"{result['settings']['memory_bytes'] >> 20} MiB; a case is slow past {TIME_LIMIT:g} CPU s (readers) or "
          f"{FILE_SLOW_S:g} CPU s (a model or small file used), killed as a hang past {HANG_S:g} s.", "",
          "| surface | mutants | " + " | ".join(outcomes) + " | slowest case (CPU) |", "|---" * (len(outcomes) + 3) + "|"]
    for s, c in counts.items():
        md.append(f"| {LABELS[s]} | {sum(c.values()):,} | " + " | ".join(f"{c.get(o, 0):,}" for o in outcomes) +
                  f" | {1000 * result['slowest_case_s'][s]:.0f} ms |")
        if s == "models":
            for engine, e in result.get("models_by_engine", {}).items():
                md.append(f"| - {engine} | {sum(e.values()):,} | " + " | ".join(f"{e.get(o, 0):,}" for o in outcomes) +
                          " | |")
    md += ["", "ok: read and used (played, rasterised, retargeted) with every value finite; error: refused with "
           "motionctl's own error naming the file (with the line for the readers); no_line: the same without a "
           "line (errors about the whole file); late: motionctl's own error while using what had loaded; "
           "crash (any other exception, or a worker that died; for a command line also another exit status, a "
           "traceback or 'Exception ignored' printed, or an output changed by a failed command), nonfinite, warned "
           "(accepted after numpy cast NaN, inf or an overflowing number to an integer), slow, hang and memory (a "
           "MemoryError past the cap): bugs."]
    saves = result.get("saves")
    if saves:
        md += ["", f"Concurrent saves: {saves['saves']:,} saves of one path by two processes while a third read it "
               f"({saves['reads']:,} reads): {saves['failed']} failed, {saves['corrupt']} reads or final files "
               f"corrupt or mixed; {saves['kills']} saves killed mid-write: the file left was a whole archive "
               f"{saves['whole_after_kill']} times, {saves['temporaries_left']} temporaries left, "
               f"{saves['temporaries_cleaned']} cleaned by the next save once stale."]
    return "\n".join(md) + "\n"


if __name__ == "__main__":
    sys.exit(main())
