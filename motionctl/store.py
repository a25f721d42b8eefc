"""Files of arrays: ``.npz`` with a JSON header, written atomically, read without pickle.

Every cache motionctl writes (databases, policies, fitted models, graphs) goes through here, so
a cancelled or failed job never leaves half a file, a missing or damaged file gets one clear
error naming it, and no file can run code when loaded (``allow_pickle=False``).
"""

from __future__ import annotations

import json
import os
from contextlib import contextmanager

import numpy as np

from .errors import MotionFileError


def read_bytes(path) -> bytes:
    """A file's bytes, or MotionFileError naming it."""
    path = os.fspath(path)
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError as exc:
        raise MotionFileError(path, f"cannot read: {exc.strerror}") from None


def atomic_savez(path, arrays: dict) -> None:
    """Save arrays to ``path`` via a temporary file, so a failure never leaves half a file."""
    path = os.fspath(path)
    if not path.endswith(".npz"):
        path += ".npz"
    tmp = path + ".partial.npz"
    try:
        np.savez(tmp, **arrays)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def save_archive(path, fmt: str, meta: dict, arrays: dict) -> None:
    """Arrays plus a JSON ``meta`` header tagged with ``fmt`` (e.g. "motionctl.policy/1")."""
    header = dict(meta, format=fmt)
    atomic_savez(path, {"meta": np.frombuffer(json.dumps(header).encode("utf-8"), dtype=np.uint8), **arrays})


@contextmanager
def open_archive(path, fmt: str, what: str):
    """Yield (meta, arrays) of an archive written by ``save_archive``; any problem -> one clear
    MotionFileError naming the file ("<what> file is missing", "damaged ...", wrong format)."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise MotionFileError(path, f"{what} file is missing")
    try:
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(bytes(z["meta"]).decode("utf-8"))
            if meta.get("format") != fmt:
                raise MotionFileError(path, f"not a motionctl {what} (format {meta.get('format')!r})")
            yield meta, z
    except MotionFileError:
        raise
    except (KeyError, ValueError, OSError, json.JSONDecodeError) as exc:
        raise MotionFileError(path, f"damaged {what} file ({exc})") from None
