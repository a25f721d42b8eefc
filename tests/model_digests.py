"""Train every registered engine on three of CMU subject 16's clips with a fixed seed and print one
JSON line {engine: SHA-1 of its saved arrays}.  ``test_reproducible`` compares them, in each suite
(Python 3.11 with numpy 1.26, Python 3.13 with numpy 2) and under OpenBLAS's SSE3 kernels, with the
digests recorded in ``model_digests.json``: the same seed must give the same model everywhere.  A
change that means to train other models records them again:

    python tests/model_digests.py MOCAP_DIR [--write]
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


def small_models(db):
    """(name, model) of every registered engine trained on ``db`` with the small settings above
    (also the seeds of bench/fuzz.py's model mutants)."""
    from motionctl.settings import from_dict, to_dict

    for name, engine in ENGINES.items():
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


def main(mocap: str) -> dict:
    return {name: digest(model) for name, model in trained(mocap)}


RECORDED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "model_digests.json")

if __name__ == "__main__":
    digests = main(sys.argv[1])
    if "--write" in sys.argv[2:]:
        with open(RECORDED, "w", encoding="utf-8") as fh:
            json.dump(digests, fh, indent=1, sort_keys=True)
            fh.write("\n")
    print(json.dumps(digests))
