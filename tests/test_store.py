"""Saving files: each save through a temporary file of its own, put in place in one step."""

import os
import stat
import threading
import time

import numpy as np
import pytest

from motionctl import store
from motionctl.errors import MotionFileError


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


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_folder_is_one_line_naming_the_file(tmp_path):
    folder = tmp_path / "locked"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        with pytest.raises(MotionFileError, match=r"locked/model\.npz: cannot be written: Permission denied"):
            store.atomic_savez(str(folder / "model.npz"), {"a": np.arange(3)})
    finally:
        folder.chmod(0o700)


def test_a_missing_folder_is_one_line_naming_the_file(tmp_path):
    target = tmp_path / "gone" / "run.bvh"
    with pytest.raises(MotionFileError) as err:
        with store.atomic_file(target, "w") as fh:
            fh.write("HIERARCHY\n")
    assert str(target) in str(err.value) and "\n" not in str(err.value)


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
    with pytest.raises(MotionFileError, match=r"graph\.npz: its settings are not valid"):
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
