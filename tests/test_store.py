"""Saving files: each save through a temporary file of its own, put in place in one step."""

import os
import stat
import threading
import time

import numpy as np
import pytest

from motionctl import store
from motionctl.errors import MotionFileError

from disks import full_disk, read_only


def test_concurrent_saves_of_one_path_never_fail_or_leave_a_mixed_file(tmp_path):
    """Two writers (two Blender instances of one .blend) save one model path over and over: every
    save returns normally, and the file left is one writer's whole archive."""
    path = str(tmp_path / "model.npz")
    errors = []

    def writer(value: int):
        for _ in range(40):
            try:
                store.save_archive(path, "motionctl.test/1", {"writer": value},
                                   {"data": np.full(20000, value, dtype=np.int32)})
            except Exception as exc:  # noqa: BLE001  (any failure is the finding)
                errors.append(exc)

    threads = [threading.Thread(target=writer, args=(v,)) for v in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:2]
    with np.load(path, allow_pickle=False) as z:
        data = z["data"]
        meta = bytes(z["meta"]).decode()
    assert len(np.unique(data)) == 1 and f'"writer": {data[0]}' in meta
    assert os.listdir(tmp_path) == ["model.npz"]  # no temporary left behind


def test_a_killed_saves_temporary_is_removed_by_the_next_save_and_a_live_one_is_not(tmp_path):
    path = tmp_path / "take.csv"
    stale = tmp_path / ".take.csv.abc123.partial"
    fresh = tmp_path / ".take.csv.def456.partial"
    old_style = tmp_path / "take.csv.partial"
    for f in (stale, fresh, old_style):
        f.write_text("half a file")
    hour_ago = time.time() - 2 * store.STALE_SECONDS
    os.utime(stale, (hour_ago, hour_ago))
    os.utime(old_style, (hour_ago, hour_ago))
    with store.atomic_file(path, "w") as fh:
        fh.write("vx,vy,turn,airborne\n")
    assert sorted(os.listdir(tmp_path)) == sorted([fresh.name, path.name])  # another save may still own it
    assert path.read_text() == "vx,vy,turn,airborne\n"
    mode = stat.S_IMODE(os.stat(path).st_mode)
    # count: integer file modes
    assert mode == store.FILE_MODE  # as open() would make it, not the temporary's private 0600


def test_a_failed_save_keeps_the_previous_file_and_names_the_path(tmp_path):
    path = tmp_path / "model.npz"
    store.atomic_savez(str(path), {"a": np.arange(3)})
    with pytest.raises(RuntimeError):
        with store.atomic_file(path) as fh:
            fh.write(b"half")
            raise RuntimeError("cancelled")
    with np.load(path) as z:
        assert z["a"].tolist() == [0, 1, 2]
    assert os.listdir(tmp_path) == ["model.npz"]


def test_a_read_only_folder_is_one_line_naming_the_file(tmp_path, monkeypatch):
    folder = tmp_path / "locked"
    folder.mkdir()
    how = read_only(folder, monkeypatch)
    try:
        with pytest.raises(MotionFileError, match=r"locked/model\.npz: cannot be written: Permission denied"):
            store.atomic_savez(str(folder / "model.npz"), {"a": np.arange(3)})
        with pytest.raises(MotionFileError, match=r"locked/model\.npz: cannot be written: Permission denied"):
            store.check_writable(folder / "model.npz")
    finally:
        folder.chmod(0o700)
    assert how in ("chmod", "simulated") and os.listdir(folder) == []


def test_a_full_disk_keeps_the_previous_file_and_prints_nothing_more(tmp_path, monkeypatch):
    """ENOSPC in the middle of a model's archive: one MotionFileError naming the file, the previous
    file as it was, no temporary left, and no "Exception ignored in: ZipFile.__del__ ... seek of
    closed file" when the abandoned zip is collected (np.savez left it open)."""
    import gc
    import sys

    path = tmp_path / "model.npz"
    path.write_bytes(b"the previous model")
    ignored = []
    monkeypatch.setattr(sys, "unraisablehook", ignored.append)
    full_disk(monkeypatch)
    with pytest.raises(MotionFileError, match=r"model\.npz: cannot be written: No space left on device"):
        store.save_archive(path, "motionctl.test/1", {"a": 1}, {"x": np.zeros(100_000)})
    gc.collect()
    assert not ignored, [str(u.exc_value) for u in ignored]
    assert path.read_bytes() == b"the previous model" and os.listdir(tmp_path) == ["model.npz"]


def test_an_archive_reads_back_as_numpy_wrote_it(tmp_path):
    """``write_npz`` writes np.savez's archive: the same arrays, dtypes and shapes, read by np.load."""
    arrays = {"meta": np.frombuffer(b'{"a": 1}', dtype=np.uint8), "f": np.linspace(0, 1, 7).reshape(7, 1),
              "i": np.arange(5, dtype=np.int32), "b": np.array([True, False]), "s": np.float64(2.5)}
    path = store.atomic_savez(tmp_path / "a", arrays)
    assert path.endswith("a.npz")
    with np.load(path, allow_pickle=False) as z:
        assert sorted(z.files) == sorted(arrays)
        for k, v in arrays.items():
            assert z[k].dtype == np.asarray(v).dtype and np.array_equal(z[k], v)


def test_a_missing_folder_is_one_line_naming_the_file(tmp_path):
    target = tmp_path / "gone" / "run.bvh"
    with pytest.raises(MotionFileError) as err:
        with store.atomic_file(target, "w") as fh:
            fh.write("HIERARCHY\n")
    assert str(target) in str(err.value) and "\n" not in str(err.value)


def test_a_file_name_holding_a_nul_byte_is_one_error_naming_it(tmp_path):
    """The os functions raise ValueError, not OSError, for a NUL byte: every way the store reads or
    writes a path says so in one MotionFileError, and nothing is written."""
    bad = str(tmp_path / "run\0.bvh")

    def write():
        with store.atomic_file(bad, "w") as fh:
            fh.write("HIERARCHY\n")

    for call in (write, lambda: store.check_writable(bad), lambda: store.read_bytes(bad),
                 lambda: store.open_archive(bad, "motionctl.test", "model").__enter__()):
        with pytest.raises(MotionFileError, match="NUL byte") as err:
            call()
        assert "\0" not in str(err.value) and "\n" not in str(err.value)
    assert os.listdir(tmp_path) == []


def test_a_long_job_checks_where_it_will_save_before_it_starts(tmp_path):
    """A folder that is gone (or a disk that is full) is said before training, not after it: here
    training could not even start (no clips), and the file's problem is what is reported."""
    from motionctl.engines import train_to_file

    with pytest.raises(MotionFileError, match=r"gone/model\.npz: cannot be written"):
        train_to_file("graph", [], None, str(tmp_path / "gone" / "model.npz"))
    with pytest.raises(MotionFileError, match=r"MB free on its disk"):
        store.check_writable(tmp_path / "model.npz", need=1 << 60)
    store.check_writable(tmp_path / "model.npz")
    assert os.listdir(tmp_path) == []  # the probe leaves nothing


@pytest.mark.parametrize("edit, value", [("threshold", -1.0), ("threshold", "high"), ("branching", 1e300),
                                         ("policy", "sideways"), ("min_clip", 5.0),
                                         ("desirability", ["run", 2])])
def test_a_model_whose_settings_were_edited_out_of_range_is_refused_on_load(demo_library, tmp_path, edit, value):
    """A hand-edited (or another version's) header: one MotionFileError naming the file at load,
    not a TypeError or a run that never ends while driving."""
    import json

    from motionctl.engines import load_model, train_to_file
    from motionctl.engines.graph import GraphSettings
    from motionctl.io import bvh

    clips = [bvh.read_bvh(os.path.join(demo_library, "demo_walk.bvh"))]
    _, path = train_to_file("graph", clips, GraphSettings(threshold=1.0), str(tmp_path / "graph.npz"))
    load_model(path)  # as saved: fine
    with np.load(path, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    meta = json.loads(bytes(arrays["meta"]).decode())
    meta["settings"][edit] = value
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    np.savez(path, **arrays)
    # Of the wrong kind (a word for a number): the header's shape names it; out of range: the setting's own range.
    with pytest.raises(MotionFileError, match=rf"graph\.npz: its (settings are not valid|header's 'settings\.{edit}')"):
        load_model(path)


def test_a_zip_with_an_unknown_compression_or_a_deeply_nested_header_is_one_clear_error(tmp_path):
    """Byte-level damage that numpy and json report in their own ways (NotImplementedError for a
    compression method zipfile does not know, RecursionError for a header nested 100,000 deep)."""
    path = store.save_archive(tmp_path / "m.npz", "motionctl.test/1", {"a": 1}, {"x": np.arange(5.0)})
    data = bytearray(open(path, "rb").read())
    i = data.index(b"PK\x03\x04")  # the first local header: its compression method at byte 8
    data[i + 8:i + 10] = (99).to_bytes(2, "little")
    j = data.index(b"PK\x01\x02")  # and the central directory's copy, at byte 10
    data[j + 10:j + 12] = (99).to_bytes(2, "little")
    bad = tmp_path / "method.npz"
    bad.write_bytes(bytes(data))
    with pytest.raises(MotionFileError, match="method.npz: damaged"):
        with store.open_archive(bad, "motionctl.test/1", "test model") as (meta, z):
            z["x"]
    nested = tmp_path / "nested.npz"
    header = "[" * 100000 + "]" * 100000
    np.savez(nested, meta=np.frombuffer(header.encode(), dtype=np.uint8))
    with pytest.raises(MotionFileError, match="nested.npz: damaged"):
        with store.open_archive(nested, "motionctl.test/1", "test model"):
            pass


def test_reading_a_small_file_asks_for_its_size_not_the_limit(tmp_path):
    """Under a memory cap (``ulimit -v``) a 40-byte file reads: read(limit + 1) asked for the whole 2 GB
    limit at once, a MemoryError for every file (found by bench/fuzz.py's capped workers)."""
    import subprocess
    import sys

    from conftest import ROOT

    small = tmp_path / "small.bvh"
    small.write_bytes(b"HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0 0\n}\n")
    code = ("import resource, sys; sys.path.insert(0, %r); from motionctl import store; "
            "vm = next(int(l.split()[1]) * 1024 for l in open('/proc/self/status') if l.startswith('VmSize:')); "
            "resource.setrlimit(resource.RLIMIT_AS, (vm + (256 << 20), resource.RLIM_INFINITY)); "
            "print(len(store.read_bytes(%r)))" % (ROOT, str(small)))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == str(small.stat().st_size), out.stderr[-500:]


def test_a_file_that_grows_past_the_limit_while_read_is_refused(tmp_path, monkeypatch):
    """Its size is taken before reading; what it holds past the limit by the time it is read is refused."""
    path = tmp_path / "take.csv"
    path.write_bytes(b"x" * 100)
    real_stat = os.stat
    monkeypatch.setattr(store.os, "stat", lambda p, *a, **kw: os.stat_result((*real_stat(p)[:6], 0, *real_stat(p)[7:]))
                        if os.fspath(p) == str(path) else real_stat(p, *a, **kw))
    assert store.read_bytes(path, limit=200) == b"x" * 100  # said 0 bytes, holds 100: read on
    with pytest.raises(MotionFileError, match="grew past"):
        store.read_bytes(path, limit=50)
