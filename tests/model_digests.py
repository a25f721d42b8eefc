"""Train every registered engine on three of CMU subject 16's clips with a fixed seed and print one
JSON line {engine: SHA-1 of its saved arrays}.  ``test_reproducible`` runs it under both supported
Python/numpy stacks and compares: the same seed must give the same model on either.

    python tests/model_digests.py MOCAP_DIR
"""

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


def main(mocap: str) -> dict:
    from motionctl.settings import from_dict, to_dict

    files = [os.path.join(mocap, "cmu_amc", "16", f"16_{t}.amc") for t in ("11", "15", "35")]
    db = import_library(files).groups[0].database
    out = {}
    for name, engine in ENGINES.items():
        settings = engine.Settings()
        if name in SMALL:
            flat = to_dict(settings)
            for key, value in SMALL[name].items():
                flat[key] = {**flat[key], **value} if isinstance(value, dict) else value
            settings = from_dict(engine.Settings, flat)
        out[name] = digest(engine.fit(db, settings))
    return out


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1])))
