"""Files of arrays: ``.npz`` with a JSON header, written atomically, read without pickle.

Every cache motionctl writes (databases, policies, fitted models, graphs) goes through here, so
a cancelled or failed job never leaves half a file, a missing or damaged file gets one clear
error naming it, and no file can run code when loaded (``allow_pickle=False``).
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import stat
import tempfile
import time
import zipfile
import zlib
from contextlib import contextmanager

import numpy as np

from .errors import MotionFileError


MAX_FILE_BYTES = 2 << 30  # a motion file over 2 GB is refused rather than read into memory


SMALL_FILE_BYTES = 64 << 20  # a trace, timeline, room, bone map or sidecar: 64 MB is a trace of days


def file_name(path) -> str:
    """``os.fspath(path)``, or one MotionFileError when it holds a NUL byte, which names no file on
    any system (the os functions raise ValueError for it, not OSError)."""
    path = os.fspath(path)
    if "\0" in (path if isinstance(path, str) else path.decode("utf-8", "replace")):
        shown = path.replace("\0", "\\0") if isinstance(path, str) else repr(path)
        raise MotionFileError(shown, "is not a file name: it holds a NUL byte")
    return path


def read_bytes(path, limit: int = MAX_FILE_BYTES) -> bytes:
    """A regular file's bytes, or MotionFileError naming it (pipes and devices are refused:
    reading a FIFO would wait forever; so is a file over ``limit`` bytes)."""
    path = file_name(path)
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            raise MotionFileError(path, "not a regular file (a folder, pipe, device or socket)")
        if info.st_size > limit:
            raise MotionFileError(path, f"file is {info.st_size / 2**20:,.0f} MB, more than motionctl reads "
                                  f"for such a file ({limit / 2**20:,.0f} MB)")
        with open(path, "rb") as fh:
            # A buffer of the file's size: read(limit + 1) asks for the whole limit (2 GB) at once,
            # which a process with a memory cap (ulimit -v) refused for any file, however small.
            data = fh.read(info.st_size + 1)
            while len(data) <= limit:  # it grew since stat: read on, up to the limit
                more = fh.read(min(1 << 20, limit + 1 - len(data)))
                if not more:
                    break
                data += more
    except OSError as exc:
        raise MotionFileError(path, f"cannot read: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise MotionFileError(path, f"file grew past {limit / 2**20:,.0f} MB while it was read, more than motionctl "
                              "reads for such a file")
    return data


def read_text(path, limit: int = SMALL_FILE_BYTES) -> str:
    """A small user file (trace, timeline, room, bone map, sidecar) as UTF-8 text: ``read_bytes``'s
    checks, and bytes that are not UTF-8 named by line."""
    data = read_bytes(path, limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MotionFileError(path, f"not UTF-8 text (byte {exc.start} of its line is {data[exc.start]:#04x})",
                              data[:exc.start].count(b"\n") + 1) from None


def parse_json(text: str, path):
    """JSON text of ``path``: MotionFileError with the line for bad JSON, and for nesting deeper than
    Python's parser goes.  Integers of more than 18 digits become floats (inf past 1e308), so a
    400-digit number is caught by a finiteness check instead of failing as an OverflowError later."""
    try:
        return json.loads(text, parse_int=_bounded_int)
    except json.JSONDecodeError as exc:
        raise MotionFileError(path, f"invalid JSON: {exc.msg}", exc.lineno) from None
    except RecursionError:
        raise MotionFileError(path, "invalid JSON: nested too deeply") from None


def _bounded_int(text: str):
    """A JSON integer: more than 18 digits becomes a float (inf past 1e308), as ``parse_json`` reads."""
    return int(text) if len(text.lstrip("-")) <= 18 else float(text)


def read_json(path, limit: int = SMALL_FILE_BYTES):
    """``parse_json`` of ``read_text``."""
    return parse_json(read_text(path, limit), path)


def npz_path(path) -> str:
    """The file name an archive is written to: ``path`` with ``.npz`` added if missing."""
    path = os.fspath(path)
    return path if path.endswith(".npz") else path + ".npz"


TEMP_SUFFIX = ".partial"
STALE_SECONDS = 3600.0  # a temporary file this old was left by a save that was killed


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


FILE_MODE = 0o666 & ~_umask()  # what open() would have given the file


@contextmanager
def atomic_file(path, mode: str = "wb", encoding: str | None = None, newline: str | None = None):
    """Write ``path`` through a temporary file of its own beside it, put in place in one step when
    the block ends without an error: a failed or cancelled save leaves the previous file, and two
    saves of one path at once (two Blender instances of one .blend) each write their own, the last
    complete one winning (with one fixed temporary name they wrote into each other's: a third of
    concurrent saves failed and one in ten left a corrupt file).  Temporaries of ``path`` left by a
    save killed over an hour ago are removed.  Any OSError is one MotionFileError naming ``path``."""
    path = file_name(path)
    folder, name = os.path.split(os.path.abspath(path))
    tmp = None
    try:
        _remove_stale(folder, name)
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=TEMP_SUFFIX, dir=folder)
        os.chmod(tmp, FILE_MODE)
        with os.fdopen(fd, mode, encoding=encoding, newline=newline) as fh:
            yield fh
        os.replace(tmp, path)
    except OSError as exc:
        raise MotionFileError(path, f"cannot be written: {exc.strerror or exc}") from None
    finally:
        if tmp is not None and os.path.exists(tmp):
            os.remove(tmp)


MIN_FREE_BYTES = 64 << 20  # a long job is not started with less room than this where it will save


def check_writable(path, need: int = MIN_FREE_BYTES) -> None:
    """Before a long job whose result goes to ``path``: its folder exists, takes a new file and has
    ``need`` bytes free, else one MotionFileError naming ``path`` (a full or read-only disk found
    only when the job had finished cost the whole job)."""
    path = file_name(path)
    folder = os.path.dirname(os.path.abspath(path))
    try:
        fd, probe = tempfile.mkstemp(prefix=".motionctl-probe.", suffix=TEMP_SUFFIX, dir=folder)
        os.close(fd)
        os.remove(probe)
        free = shutil.disk_usage(folder).free
    except OSError as exc:
        raise MotionFileError(path, f"cannot be written: {exc.strerror or exc}") from None
    if free < need:
        raise MotionFileError(path, f"only {free / 2**20:.0f} MB free on its disk, {need / 2**20:.0f} MB needed")


def _remove_stale(folder: str, name: str) -> None:
    """Remove temporaries of ``name`` in ``folder`` older than STALE_SECONDS (a killed save's;
    also the fixed names earlier versions used)."""
    pattern = os.path.join(glob.escape(folder), glob.escape(f".{name}.") + "*" + TEMP_SUFFIX)
    old = [os.path.join(folder, name + ".partial.npz"), os.path.join(folder, name + ".partial")]
    for tmp in glob.glob(pattern) + old:
        try:
            if time.time() - os.path.getmtime(tmp) > STALE_SECONDS:
                os.remove(tmp)
        except OSError:
            pass  # gone already, or another process's to remove


def atomic_savez(path, arrays: dict) -> str:
    """Save arrays to ``path`` (.npz added if missing) through ``atomic_file``; returns the path
    written."""
    path = npz_path(path)
    with atomic_file(path) as fh:
        write_npz(fh, arrays)
    return path


def write_npz(fh, arrays: dict) -> None:
    """``np.savez``'s archive (one ``<name>.npy`` per array, stored, zip64) into the open file ``fh``,
    its zip closed whatever happens: ``np.savez`` leaves it open when a write fails, and on a full
    disk Python then printed seven lines of "Exception ignored in: ZipFile.__del__ ... seek of
    closed file" after motionctl's own one-line error."""
    from numpy.lib import format as npy

    zf = zipfile.ZipFile(fh, mode="w", compression=zipfile.ZIP_STORED, allowZip64=True)
    try:
        for name, value in arrays.items():
            with zf.open(name + ".npy", "w", force_zip64=True) as member:
                npy.write_array(member, np.asanyarray(value), allow_pickle=False)
    except BaseException:
        try:
            zf.close()  # its end record may not be written either; the file is discarded
        except (OSError, ValueError):
            pass
        raise
    zf.close()


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
    path = file_name(path)
    if not os.path.exists(path):
        raise MotionFileError(path, f"{what} file is missing")
    if not os.path.isfile(path):
        raise MotionFileError(path, f"{what} file is not a regular file")
    try:
        z = np.load(path, allow_pickle=False)
        if not isinstance(z, np.lib.npyio.NpzFile):
            raise MotionFileError(path, f"not a motionctl {what}: a single array (.npy), not an archive")
        with z:
            meta = json.loads(bytes(z["meta"]).decode("utf-8"), parse_int=_bounded_int)
            if not isinstance(meta, dict):
                raise MotionFileError(path, f"not a motionctl {what} (its header is not an object)")
            yield meta, z
    except MotionFileError:
        raise
    except (KeyError, IndexError, TypeError, ValueError, EOFError, OSError, UnicodeDecodeError, zipfile.BadZipFile,
            json.JSONDecodeError, NotImplementedError, RecursionError, zlib.error) as exc:
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
