"""Saves under fire, for ``bench/fuzz.py`` (issue 37.1): two processes save one model path over
and over (two Blender instances of one .blend) while a third reads it, and saves killed mid-write.

Every save is ``store.save_archive``, the path every model, trace and cache takes.  An archive is
whole when its data array holds one value throughout and its header names that value: a mixed
or truncated file is counted corrupt, whether a read met it during the run or it was left at the
end.  A killed save must leave the previous whole archive (or none, before the first save), and
its temporary file is removed by the next save once it is older than ``store.STALE_SECONDS``.
"""

from __future__ import annotations

import glob
import os
import signal
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from motionctl import store  # noqa: E402

FORMAT = "motionctl.fuzz/1"


def save(path: str, value: int, size: int) -> None:
    store.save_archive(path, FORMAT, {"value": value}, {"data": np.full(size, value, dtype=np.int64)})


def whole(path: str) -> bool | None:
    """True if ``path`` holds one whole archive, False if it is corrupt or mixed, None if absent."""
    try:
        with store.open_archive(path, FORMAT, "archive") as (meta, z):
            data = np.asarray(z["data"])
            return bool(len(data) and np.all(data == data[0]) and meta.get("value") == int(data[0]))
    except store.MotionFileError as exc:
        return None if "is missing" in str(exc) else False


def writer(path: str, first: int, count: int, size: int) -> int:
    """Save ``count`` archives (values first, first + 2, ...); prints the number that failed."""
    failed = 0
    for i in range(count):
        try:
            save(path, first + 2 * i, size)
        except Exception:  # noqa: BLE001 - a failed save is the finding
            failed += 1
    print(failed)
    return failed


def concurrent_saves(n: int, folder: str, kills: int = 50) -> dict:
    """{"saves", "failed", "reads", "corrupt", "kills", "whole_after_kill", "temporaries_left",
    "temporaries_cleaned"}: ``n`` saves by two processes with reads between, then ``kills`` saves
    killed at a random moment."""
    folder = os.path.join(folder, "saves")
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "model.npz")
    size = 250_000  # 2 MB: a save takes long enough for the writers to overlap
    procs = [subprocess.Popen([sys.executable, __file__, "--writer", path, str(v), str(n // 2), str(size)],
                              stdout=subprocess.PIPE, text=True) for v in (1, 2)]
    reads = corrupt = 0
    while any(p.poll() is None for p in procs):
        ok = whole(path)
        if ok is not None:
            reads += 1
            corrupt += not ok
    failed = sum(int(p.stdout.read().strip() or 0) + (p.returncode != 0) for p in procs)
    corrupt += whole(path) is not True
    rng = np.random.default_rng(0)
    killed_whole = left = 0
    big = os.path.join(folder, "big.npz")
    save(big, 0, 4_000_000)
    for k in range(kills):
        p = subprocess.Popen([sys.executable, __file__, "--writer", big, str(k + 1), "1", "4000000"],
                             stdout=subprocess.DEVNULL)
        time.sleep(float(rng.uniform(0.05, 0.6)))  # from start-up to well into the 32 MB write
        p.send_signal(signal.SIGKILL)
        p.wait()
        killed_whole += whole(big) is True
    temporaries = glob.glob(os.path.join(folder, ".big.npz.*" + store.TEMP_SUFFIX))
    left = len(temporaries)
    old = time.time() - 2 * store.STALE_SECONDS
    for t in temporaries:
        os.utime(t, (old, old))
    save(big, 0, 10)
    cleaned = left - len(glob.glob(os.path.join(folder, ".big.npz.*" + store.TEMP_SUFFIX)))
    return {"saves": 2 * (n // 2), "failed": failed, "reads": reads, "corrupt": int(corrupt), "kills": kills,
            "whole_after_kill": killed_whole, "temporaries_left": left, "temporaries_cleaned": cleaned}


if __name__ == "__main__" and sys.argv[1:2] == ["--writer"]:
    writer(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
