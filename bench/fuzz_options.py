"""Command lines under fire, for ``bench/fuzz.py`` (issue 57): every option checked before any work,
one line and status 2 for a bad one, and nothing half-written.

Each case is a real command line (``python -m motionctl ...``, run in-process by ``cli.main``) of
one of ``COMMANDS``: a generated trace, a run of a saved model (its clips from the model's own
record, or ``--clips``), a conversion, ``info``, an evaluation in a room writing ``--json`` and
``--map``, a short training.  Mutations: an option's value replaced by a hostile one (``-1``,
``nan``, ``1e999``, a word, a whole number written ``7.0``, 2^31...), an option dropped, repeated or
unknown, a setting of the engine with a hostile value, and the output sent where it cannot go: a
missing folder, a folder that is a file, the output folder itself, a read-only folder, a full disk
(ENOSPC on the first write, or no room said by the disk) — as ``tests/disks.py`` makes them, on any
system and as any user.  Every output already holds a previous file.  Outcomes:

  ok      status 0
  error   status 2, one ``error:`` line on stderr, every previous output as it was, no new file
  crash   an exception out of ``main``, another status, a traceback or "Exception ignored" printed,
          more than one error line, or an output written half or changed on an error: a bug
"""

from __future__ import annotations

import contextlib
import errno
import gc
import io
import json
import os
import shutil
import sys
import tempfile
import traceback

import numpy as np

OUTPUTS = ("t.csv", "r.bvh", "c.bvh", "m.json", "m.npy", "m.npz")  # what the commands below write
PREVIOUS = b"a previous output"
# {folder}: the seed folder (models, rooms); {out}: the case's output folder; {clips}: the capture.
COMMANDS = (["fragments", "trace", "--seconds", "2", "--seed", "3", "--out", "{out}/t.csv"],
            ["matching", "run", "--model", "{folder}/matching.npz", "--trace-seconds", "2", "--seed", "7",
             "--out", "{out}/r.bvh"],
            ["matching", "run", "--model", "{folder}/matching.npz", "--clips", "{clips}", "--trace-seconds", "1",
             "--warp", "0.5", "--out", "{out}/r"],
            ["convert", "{bvh}", "{out}/c.bvh"],
            ["info", "{bvh}"],
            ["matching", "eval", "--model", "{folder}/matching.npz"],
            ["graph", "eval", "--model", "{folder}/graph.npz", "--env", "{folder}/room0.json", "--headings", "8",
             "--pairs", "2", "--lm-sample", "0.05", "--json", "{out}/m.json", "--map", "{out}/m.npy"],
            ["matching", "train", "--clips", "{clips}", "--out", "{out}/m.npz"])
HOSTILE = ["-1", "0", "-0", "nan", "inf", "-inf", "1e999", "1e308", "1e-320", "abc", "", "7.0", "0.5",
           "2147483648", "99999999999999999999", "-5", "1e30", "{", "--", "ö", "\x00"]
PLACES = ("missing", "file", "folder", "read-only", "full", "no-room")  # where an output may be sent


def seed_options(folder: str, mocap: str) -> list:
    """The command templates as seed files (JSON) in ``folder``; their names."""
    from fuzz_surfaces import LIBRARY

    names = []
    clips = [os.path.join(mocap, *p) for p in LIBRARY]
    bvh = os.path.join(mocap, "cmu31", "cmu_02_01_walk_mbnames.bvh")
    for k, argv in enumerate(COMMANDS):
        doc = {"argv": argv, "clips": clips, "bvh": bvh, "place": None}
        with open(os.path.join(folder, f"options{k}.json"), "w", encoding="utf-8") as fh:
            json.dump(doc, fh)
        names.append(f"options{k}.json")
    return names


def engine_options(word: str) -> list:
    """The flags of an engine command's settings (``--k``, ``--length``...)."""
    from motionctl.engines import ENGINES
    from motionctl.settings import options

    for e in ENGINES.values():
        if e.word == word:
            return ["--" + o.name.replace("_", "-") for o in options(e.Settings)]
    return []


def mutate_options(data: bytes, rng) -> bytes:
    """One to three mutations of a command line (see the module docstring)."""
    doc = json.loads(data)
    argv = list(doc["argv"])
    for _ in range(int(rng.integers(1, 4))):
        op = int(rng.integers(0, 7))
        flags = [i for i, a in enumerate(argv) if a.startswith("--")]
        if op <= 1 and flags:  # a value replaced by a hostile one
            i = flags[int(rng.integers(0, len(flags)))]
            if i + 1 < len(argv) and not argv[i + 1].startswith("--"):
                argv[i + 1] = HOSTILE[int(rng.integers(0, len(HOSTILE)))]
        elif op == 2 and flags:  # an option dropped, with its value
            i = flags[int(rng.integers(0, len(flags)))]
            del argv[i:i + (2 if i + 1 < len(argv) and not argv[i + 1].startswith("--") else 1)]
        elif op == 3 and flags:  # an option given twice
            i = flags[int(rng.integers(0, len(flags)))]
            argv += argv[i:i + 2]
        elif op == 4:  # a setting of the engine, or an unknown option
            names = engine_options(argv[0]) if len(argv) > 1 and argv[1] in ("train", "run") else []
            flag = names[int(rng.integers(0, len(names)))] if names and rng.random() < 0.8 else "--bogus"
            argv += [flag, HOSTILE[int(rng.integers(0, len(HOSTILE)))]]
        elif op == 5:  # the outputs sent where they cannot go
            doc["place"] = PLACES[int(rng.integers(0, len(PLACES)))]
        elif op == 6 and len(argv) > 2:  # a word of the command line dropped
            del argv[int(rng.integers(2, len(argv)))]
    doc["argv"] = argv
    return json.dumps(doc).encode()


def _argv(doc: dict, folder: str, out: str) -> list:
    clips = doc.get("clips") or []
    argv = []
    for a in doc["argv"]:
        if a == "{clips}":
            argv += clips
        else:
            argv.append(a.replace("{folder}", folder).replace("{out}", out).replace("{bvh}", doc.get("bvh", "")))
    return argv


@contextlib.contextmanager
def _place(place: str | None, out: str):
    """The output folder as ``place`` makes it (see ``PLACES``); yields the folder the command gets."""
    from motionctl import store

    real_mkstemp, real_fdopen, real_usage = tempfile.mkstemp, os.fdopen, shutil.disk_usage
    target = out
    if place == "missing":
        target = os.path.join(out, "no", "such")
    elif place == "file":  # a file where the output's folder belongs
        target = os.path.join(os.path.dirname(out), "afile")
        with open(target, "wb") as fh:
            fh.write(b"x")
    elif place == "folder":
        for name in OUTPUTS:  # each output's name is a folder
            os.replace(os.path.join(out, name), os.path.join(out, name + ".was"))
            os.mkdir(os.path.join(out, name))
    elif place == "read-only":
        def refused(*args, dir=None, **kw):
            if dir is not None and os.path.abspath(dir) == os.path.abspath(out):
                raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))
            return real_mkstemp(*args, dir=dir, **kw)
        tempfile.mkstemp = refused
    elif place == "full":
        class Full:
            def __init__(self, fh):
                self.fh = fh

            def write(self, data):
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

            def __getattr__(self, name):
                return getattr(self.fh, name)

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                return self.fh.__exit__(*exc)
        store.os.fdopen = lambda fd, *a, **kw: Full(real_fdopen(fd, *a, **kw))
    elif place == "no-room":
        store.shutil.disk_usage = lambda p: real_usage(p)._replace(free=1 << 16)
    try:
        yield target
    finally:
        tempfile.mkstemp, store.os.fdopen, store.shutil.disk_usage = real_mkstemp, real_fdopen, real_usage
        if place == "folder":
            for name in OUTPUTS:
                if os.path.isdir(os.path.join(out, name)):
                    shutil.rmtree(os.path.join(out, name))
                    os.replace(os.path.join(out, name + ".was"), os.path.join(out, name))


def run_options_case(data: bytes, folder: str, scratch: str) -> tuple[str, str]:
    """(outcome, detail) of one command line (see the module docstring)."""
    from motionctl.cli import main

    doc = json.loads(data)
    out = os.path.join(scratch, "out")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    for name in OUTPUTS:
        with open(os.path.join(out, name), "wb") as fh:
            fh.write(PREVIOUS)
    before = sorted(os.listdir(out))
    stdout, stderr, ignored = io.StringIO(), io.StringIO(), []
    hook, sys.unraisablehook = sys.unraisablehook, ignored.append
    status, cwd = None, os.getcwd()
    os.chdir(out)  # an output named by a hostile word ("0", "-0") lands here, not in the checkout
    try:
        with _place(doc.get("place"), out) as target:
            argv = _argv(doc, folder, target)
            with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
                try:
                    status = main(argv)
                except SystemExit as exc:
                    status = exc.code
        gc.collect()
    except MemoryError:
        return "memory", f"MemoryError ({' '.join(doc['argv'])})\n{traceback.format_exc(limit=-4)}"
    except Exception as exc:  # noqa: BLE001 - anything out of main is what we look for
        return "crash", f"{type(exc).__name__}: {exc} ({' '.join(doc['argv'])})\n{traceback.format_exc(limit=-4)}"
    finally:
        sys.unraisablehook = hook
        os.chdir(cwd)
    err = stderr.getvalue()
    words = " ".join(doc["argv"]) + f" [{doc.get('place')}]"
    errors = [ln for ln in err.splitlines() if ln.startswith("error:")]
    if ignored or "Traceback" in err or "Exception ignored" in err:
        return "crash", f"printed a traceback or 'Exception ignored' ({words}): {err[-400:]}"
    if status == 0:
        return "ok", ""
    if status != 2 or len(errors) != 1:
        return "crash", f"status {status}, {len(errors)} error lines ({words}): {err[-400:]}"
    after = sorted(os.listdir(out))
    changed = [n for n in OUTPUTS if os.path.isfile(os.path.join(out, n)) and
               open(os.path.join(out, n), "rb").read() != PREVIOUS]
    if after != before or changed:
        return "crash", f"an error left its outputs changed ({words}): {sorted(set(after) ^ set(before)) or changed}"
    return "error", errors[0][:300]


__all__ = ["COMMANDS", "mutate_options", "run_options_case", "seed_options"]
_ = np  # numpy is the workers' (imported here so a case's import time is not counted)
