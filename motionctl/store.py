"""Files of arrays: ``.npz`` with a JSON header, written atomically, read without pickle.

Every cache motionctl writes (databases, policies, fitted models, graphs) goes through here, so
a cancelled or failed job never leaves half a file, a missing or damaged file gets one clear
error naming it, and no file can run code when loaded (``allow_pickle=False``).
"""

from __future__ import annotations

import json
import os
import stat
import zipfile
from contextlib import contextmanager

import numpy as np

from .errors import MotionFileError


MAX_FILE_BYTES = 2 << 30  # a motion file over 2 GB is refused rather than read into memory


def read_bytes(path) -> bytes:
    """A regular file's bytes, or MotionFileError naming it (pipes and devices are refused:
    reading a FIFO would wait forever)."""
    path = os.fspath(path)
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            raise MotionFileError(path, "not a regular file (a folder, pipe, device or socket)")
        if info.st_size > MAX_FILE_BYTES:
            raise MotionFileError(path, f"file is {info.st_size / 2**30:.1f} GB, more than motionctl reads")
        with open(path, "rb") as fh:
            return fh.read()
    except OSError as exc:
        raise MotionFileError(path, f"cannot read: {exc.strerror or exc}") from None


def npz_path(path) -> str:
    """The file name an archive is written to: ``path`` with ``.npz`` added if missing."""
    path = os.fspath(path)
    return path if path.endswith(".npz") else path + ".npz"


def atomic_savez(path, arrays: dict) -> str:
    """Save arrays to ``path`` (.npz added if missing) via a temporary file, so a failure never
    leaves half a file; returns the path written."""
    path = npz_path(path)
    tmp = path + ".partial.npz"
    try:
        np.savez(tmp, **arrays)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    return path


def save_archive(path, fmt: str, meta: dict, arrays: dict) -> str:
    """Arrays plus a JSON ``meta`` header tagged with ``fmt`` (e.g. "motionctl.fragments/1");
    returns the path written (.npz added if missing)."""
    header = dict(meta, format=fmt)
    return atomic_savez(path, {"meta": np.frombuffer(json.dumps(header, default=_plain).encode("utf-8"), dtype=np.uint8),
                               **arrays})


def _plain(value):
    """JSON for numpy scalars and arrays in headers (settings and summaries may hold them)."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    raise TypeError(f"{type(value).__name__} is not JSON")


@contextmanager
def _opened(path, what: str):
    """Yield (meta, arrays) of any motionctl archive; any problem -> one MotionFileError."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise MotionFileError(path, f"{what} file is missing")
    if not os.path.isfile(path):
        raise MotionFileError(path, f"{what} file is not a regular file")
    try:
        z = np.load(path, allow_pickle=False)
        if not isinstance(z, np.lib.npyio.NpzFile):
            raise MotionFileError(path, f"not a motionctl {what}: a single array (.npy), not an archive")
        with z:
            meta = json.loads(bytes(z["meta"]).decode("utf-8"))
            if not isinstance(meta, dict):
                raise MotionFileError(path, f"not a motionctl {what} (its header is not an object)")
            yield meta, z
    except MotionFileError:
        raise
    except (KeyError, IndexError, TypeError, ValueError, EOFError, OSError, UnicodeDecodeError, zipfile.BadZipFile,
            json.JSONDecodeError) as exc:
        # A truncated, empty or hand-edited file: numpy, zipfile and json each have their own
        # ways to say so; the user gets one message naming the file.
        raise MotionFileError(path, f"damaged {what} file ({type(exc).__name__}: {exc})") from None


@contextmanager
def open_archive(path, fmt: str, what: str):
    """Yield (meta, arrays) of an archive written by ``save_archive`` with format ``fmt``; any
    problem -> one clear MotionFileError naming the file ("<what> file is missing", "damaged
    ...", wrong format)."""
    with _opened(path, what) as (meta, z):
        if meta.get("format") != fmt:
            raise MotionFileError(path, f"not a motionctl {what} (format {meta.get('format')!r})")
        yield meta, z


def archive_format(path, what: str = "model") -> str:
    """The format tag an archive was written with ("motionctl.fragments/1", ...)."""
    with _opened(path, what) as (meta, _):
        return str(meta.get("format", ""))
