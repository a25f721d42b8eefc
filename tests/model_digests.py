"""Train every registered engine on three of CMU subject 16's clips with a fixed seed and print one
JSON line {engine: SHA-1 of its saved arrays} (and, with ``--runs DIR``, what each plays for a fixed trace).  ``test_reproducible`` compares them, in each suite
(Python 3.11 with numpy 1.26, Python 3.13 with numpy 2) and under OpenBLAS's SSE3 kernels, with the
digests recorded in ``model_digests.json``: the same seed must give the same model everywhere.  A
change that means to train other models records them again:

    python tests/model_digests.py MOCAP_DIR [--write] [--runs DIR]
"""

import functools
import hashlib
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from motionctl.engines import ENGINES  # noqa: E402
from motionctl.io.library import import_library  # noqa: E402

SMALL = {"fragments": {"trace_seconds": 30, "held_out": 0},
         "planning": {"fitted": {"iterations": 5, "frozen_iterations": 2, "trajectories": 40, "n_trees": 4}},
         "active": {"budget": 4}}


def digest(model) -> str:
    h = hashlib.sha1()
    for name, value in sorted(model.arrays()[1].items()):
        a = np.ascontiguousarray(np.asarray(value))
        h.update(f"{name}:{a.dtype.str}:{a.shape}".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def small_models(db, names=None):
    """(name, model) of every registered engine (or those ``names``) trained on ``db`` with the
    small settings above (also the seeds of bench/fuzz.py's model mutants)."""
    from motionctl.settings import from_dict, to_dict

    for name, engine in ENGINES.items():
        if names is not None and name not in names:
            continue
        settings = engine.Settings()
        if name in SMALL:
            flat = to_dict(settings)
            for key, value in SMALL[name].items():
                flat[key] = {**flat[key], **value} if isinstance(value, dict) else value
            settings = from_dict(engine.Settings, flat)
        yield name, engine.fit(db, settings)


@functools.lru_cache(maxsize=2)
def small_library(mocap: str):
    """Three of CMU subject 16's clips (a walk, a veer, a run-and-stop) as one database."""
    files = [os.path.join(mocap, "cmu_amc", "16", f"16_{t}.amc") for t in ("11", "15", "35")]
    return import_library(files).groups[0].database


@functools.lru_cache(maxsize=2)
def trained(mocap: str) -> tuple:
    """((name, model), ...) trained once per process on the (shared) small library: the fuzz test's
    seed models and the reproducibility test's digests are the same models (each suite trained them twice)."""
    return tuple(small_models(small_library(mocap)))


def run_of(model, clips) -> dict:
    """What ``model`` plays on ``clips`` for a fixed 6 s trace (a turning stick, left then right, then
    let go): {"root": [F, 3], "rot": [F, J, 4]}.  A near tie in a choice changes it wholesale; blends
    computed with BLAS (active learning's) differ in their last bits between kernels, which no
    choice depends on: runs are compared within a tolerance, models bit for bit."""
    from motionctl.play.commands import PlaySettings, Trace
    from motionctl.play.session import Session

    samples = np.tile([0.0, 1.3, 0.0, 0.0], (60, 1))
    samples[:25, 2], samples[25:50, 2], samples[50:] = 0.6, -0.6, 0.0
    clip = Session(model, model.play(clips), play=PlaySettings()).play_trace(Trace(samples, 10.0, "digest"))
    return {"root": clip.root_pos, "rot": clip.local_rot}


def main(mocap: str, runs: str | None = None) -> dict:
    """{engine: model digest, "graph:mix": the digest of a larger graph}; with ``runs`` a folder, each
    engine's ``run_of`` is saved there as <engine>.npz (only the models are recorded: what a run
    plays changes with the play layer; runs are compared between kernels in one go)."""
    clips = small_library(mocap).clips
    out = {}
    for name, model in trained(mocap):
        out[name] = digest(model)
        if runs:
            np.savez(os.path.join(runs, f"{name}.npz"), **run_of(model, clips))
    out["graph:mix"] = digest(ENGINES["graph"].fit(mix_library(mocap)))
    return out


MIX = ("11", "13", "15", "16", "17", "19", "21", "23", "31", "35", "36")


def mix_library(mocap: str):
    """Eleven of subject 16's walks, turns and runs: a graph whose frame costs hold near ties (built
    on an AVX-512 CPU, it had 101 clips where AVX2 CPUs built 109, before its choices were made on
    costs with the same bits everywhere)."""
    return import_library([os.path.join(mocap, "cmu_amc", "16", f"16_{t}.amc") for t in MIX]).groups[0].database


RECORDED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "model_digests.json")

if __name__ == "__main__":
    digests = main(sys.argv[1], sys.argv[sys.argv.index("--runs") + 1] if "--runs" in sys.argv else None)
    if "--write" in sys.argv[2:]:
        with open(RECORDED, "w", encoding="utf-8") as fh:
            json.dump({k: v for k, v in digests.items() if ":" not in k}, fh, indent=1, sort_keys=True)
            fh.write("\n")
    print(json.dumps(digests))
