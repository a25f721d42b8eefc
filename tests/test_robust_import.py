"""Real users' files: every way a file can be wrong gives motionctl's own error naming the file and
line, a folder import never falls over on one bad file, and nothing hangs."""

import json
import os
import time

import numpy as np
import pytest

from bvh_fixtures import bvh_text, smooth_channels
from motionctl.io import asfamc
from motionctl.io import bvh
from motionctl.errors import MotionFileError
from motionctl.io.library import MAX_NAME_BYTES, ImportSettings, import_library
from motionctl.clip import MotionDatabase

WALK = "cmu31/cmu_02_01_walk_mbnames.bvh"


def file_error(fn, *args, match=None):
    with pytest.raises(MotionFileError, match=match) as err:
        fn(*args)
    return err.value


def real(mocap, name):
    with open(os.path.join(mocap, name), "rb") as fh:
        return fh.read()


@pytest.mark.parametrize("old, new, match", [
    (b"CHANNELS 6", b"CHANNELS 1e999", "not a finite number"),  # was OverflowError
    (b"CHANNELS 6", b"CHANNELS 7e3", "bad channel count"),
    (b"OFFSET 0.00000 0.00000 0.00000", b"OFFSET nan 0 0", "not a finite number"),
    (b"OFFSET 0.00000 0.00000 0.00000", b"OFFSET inf 0 0", "not a finite number"),
    (b"Frame Time: .0083333", b"Frame Time: inf", "Frame Time"),
    (b"Frame Time: .0083333", b"Frame Time: 1e-300", "Frame Time"),
])
def test_bvh_header_values_out_of_range_are_named(mocap, old, new, match):
    data = real(mocap, WALK)
    assert old in data
    err = file_error(bvh.parse_bvh, data.replace(old, new, 1), "bad.bvh", match=match)
    assert err.path == "bad.bvh" and err.line is not None


def test_overflowing_frame_value_names_its_line(mocap):
    data = real(mocap, WALK)
    head, _, body = data.partition(b"Frame Time: .0083333\n")
    lines = body.split(b"\n")
    lines[5] = b" ".join([b"1e999"] + lines[5].split()[1:])
    err = file_error(bvh.parse_bvh, head + b"Frame Time: .0083333\n" + b"\n".join(lines), "x.bvh",
                     match="not a finite number")
    assert err.line == head.count(b"\n") + 1 + 6


def test_deep_nesting_parses_without_recursion_limits():
    depth = 5000
    text = "HIERARCHY\nROOT r\n{\nOFFSET 0 0 0\nCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n"
    text += "JOINT j\n{\nOFFSET 0 0.001 0\nCHANNELS 3 Zrotation Xrotation Yrotation\n" * depth
    text += "End Site\n{\nOFFSET 0 0.001 0\n}\n" + "}\n" * (depth + 1)
    text += "MOTION\nFrames: 2\nFrame Time: 0.04\n" + ("0 " * (6 + 3 * depth) + "\n") * 2
    clip = bvh.parse_bvh(text.encode(), "deep.bvh", unit_scale=1.0, axis_up="Y")
    assert clip.skeleton.n_joints == depth + 1 and np.all(np.isfinite(clip.world()[0]))  # count: integers (joints)
    assert clip.skeleton.names[2] == "j.001"


def test_many_joints_of_one_name_are_renamed_in_linear_time():
    n = 20000
    text = "HIERARCHY\nROOT r\n{\nOFFSET 0 0 0\nCHANNELS 3 Xposition Yposition Zposition\n"
    text += "JOINT same\n{\nOFFSET 0 1 0\nEnd Site\n{\nOFFSET 0 1 0\n}\n}\n" * n + "}\n"
    text += "MOTION\nFrames: 1\nFrame Time: 0.04\n0 0 0\n"
    clip = bvh.parse_bvh(text.encode(), "same.bvh", unit_scale=1.0, axis_up="Y")
    names = clip.skeleton.names
    assert len(set(names)) == n + 1 and names[-1] == f"same.{n - 1:03d}"  # count: integers and names


ASF_CYCLE = """:version 1.10
:units
  length 1
  angle deg
:root
   order TX TY TZ RX RY RZ
   axis XYZ
   position 0 0 0
   orientation 0 0 0
:bonedata
  begin
     id 1
     name a
     direction 0 1 0
     length 1
     axis 0 0 0 XYZ
  end
  begin
     id 2
     name b
     direction 0 1 0
     length {length}
     axis 0 0 {axis} XYZ
  end
:hierarchy
  begin
    root a
    {extra}
  end
"""


@pytest.mark.parametrize("length, axis, extra, match", [
    ("1", "0", "b a\n    a b", "second parent"),  # a cycle: used to hang
    ("1", "0", "", "not connected to the root"),  # a bone left out
    ("nan", "0", "a b", "not a finite number"),
    ("1", "inf", "a b", "not a finite number"),
    ("-2", "0", "a b", "must not be negative"),
])
def test_asf_cycles_and_bad_values_are_errors_not_hangs(length, axis, extra, match):
    text = ASF_CYCLE.format(length=length, axis=axis, extra=extra)
    t0 = time.perf_counter()
    err = file_error(asfamc.parse_asf, text.encode(), "s.asf", match=match)
    assert err.line is not None and time.perf_counter() - t0 < 5


def test_asf_bone_defined_twice_and_zero_unit():
    twice = ASF_CYCLE.format(length="1", axis="0", extra="a b").replace("name b", "name a")
    assert "defined twice" in str(file_error(asfamc.parse_asf, twice.encode(), "s.asf"))
    zero = ASF_CYCLE.format(length="1", axis="0", extra="a b").replace("length 1\n  angle", "length 0\n  angle")
    assert "must be positive" in str(file_error(asfamc.parse_asf, zero.encode(), "s.asf"))


def test_amc_nan_value_names_frame_and_line(mocap):
    asf = asfamc.read_asf(os.path.join(mocap, "cmu_amc", "16", "16.asf"))
    lines = real(mocap, "cmu_amc/16/16_15.amc").split(b"\n")
    i = next(k for k, ln in enumerate(lines) if ln.startswith(b"lowerback")) + 30  # frame 2's lowerback
    words = lines[i].split()
    lines[i] = b" ".join([words[0], b"nan"] + words[2:])
    err = file_error(asfamc.parse_amc, b"\n".join(lines), "16_15.amc", asf, match="not a finite number")
    assert err.line == i + 1 and "frame 2" in err.reason  # count: line numbers


@pytest.mark.parametrize("content, match", [(b"", "damaged"), (b"PK\x03\x04garbage", "damaged"), ("npy", "single array")])
def test_damaged_cache_files_give_one_clear_error(tmp_path, content, match):
    path = tmp_path / "db.npz"
    if content == "npy":
        with open(path, "wb") as fh:
            np.save(fh, np.arange(5))
    else:
        path.write_bytes(content)
    err = file_error(MotionDatabase.load, str(path), match=match)
    assert err.path == str(path)


def test_truncated_cache_file(tmp_path, demo_library):
    db = import_library([demo_library]).groups[0].database
    path = tmp_path / "db.npz"
    db.save(path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3])
    file_error(MotionDatabase.load, str(path), match="damaged")


def test_a_bad_file_never_stops_a_folder_import(tmp_path, demo_library):
    folder = tmp_path / "mixed"
    folder.mkdir()
    for name in ("demo_walk.bvh", "demo_run.bvh"):
        (folder / name).write_bytes(open(os.path.join(demo_library, name), "rb").read())
    (folder / "broken.bvh").write_bytes(b"HIERARCHY\nROOT a\n{\nOFFSET 0 0 0\n")
    (folder / "notes.txt").write_text("hello")
    (folder / "bad_sidecar.bvh").write_bytes(open(os.path.join(demo_library, "demo_walk.bvh"), "rb").read())
    (folder / "bad_sidecar.json").write_text("{not json")
    res = import_library([str(folder)])
    assert len(res.groups) == 1 and len(res.groups[0].database.clips) == 2
    failed = dict(res.failed)
    assert "missing '}'" in failed[str(folder / "broken.bvh")] and ":5:" in failed[str(folder / "broken.bvh")]
    assert "invalid JSON" in failed[str(folder / "bad_sidecar.bvh")]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_fifo_named_bvh_is_skipped_not_read(tmp_path, demo_library):
    (tmp_path / "pipe.bvh").parent.mkdir(exist_ok=True)
    os.mkfifo(tmp_path / "pipe.bvh")
    (tmp_path / "walk.bvh").write_bytes(open(os.path.join(demo_library, "demo_walk.bvh"), "rb").read())
    res = import_library([str(tmp_path)])  # would block forever if the pipe were opened
    assert len(res.groups) == 1
    assert dict(res.skipped)[str(tmp_path / "pipe.bvh")].startswith("not a regular file")
    file_error(bvh.read_bvh, str(tmp_path / "pipe.bvh"), match="not a regular file")
    # Named by itself (``motionctl info pipe.bvh``) it is a failure the report names, not a silent skip.
    named = import_library([str(tmp_path / "pipe.bvh")])
    assert dict(named.failed)[str(tmp_path / "pipe.bvh")].startswith("not a regular file")


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root reads any folder")
def test_unreadable_subfolder_is_reported(tmp_path, demo_library):
    sub = tmp_path / "locked"
    sub.mkdir()
    (tmp_path / "walk.bvh").write_bytes(open(os.path.join(demo_library, "demo_walk.bvh"), "rb").read())
    sub.chmod(0)
    try:
        res = import_library([str(tmp_path)])
    finally:
        sub.chmod(0o755)
    assert any("cannot read folder" in msg for _, msg in res.failed)


def test_unreadable_subfolder_is_reported_via_walk_error(tmp_path, demo_library, monkeypatch):
    """Root can read anything, so the walk's error callback is driven directly."""
    import motionctl.io.library as library

    real_walk = os.walk

    def walk(top, onerror=None, **kw):
        err = PermissionError(13, "Permission denied")
        err.filename = os.path.join(top, "locked")
        onerror(err)
        yield from real_walk(top, onerror=onerror, **kw)

    monkeypatch.setattr(library.os, "walk", walk)
    (tmp_path / "walk.bvh").write_bytes(open(os.path.join(demo_library, "demo_walk.bvh"), "rb").read())
    res = import_library([str(tmp_path)])
    assert len(res.groups) == 1
    assert dict(res.failed)[str(tmp_path / "locked")] == "cannot read folder: Permission denied"


def test_joint_names_longer_than_blender_allows_are_shortened_uniquely(tmp_path):
    values = smooth_channels(3)
    text = bvh_text(values)
    long = "Spine_" + "x" * 80
    text = text.replace("JOINT Spine", f"JOINT {long}").replace("JOINT Leg", f"JOINT {long}y")
    path = tmp_path / "long.bvh"
    path.write_text(text)
    res = import_library([str(path)], ImportSettings(keep_calibration=True))  # random motion looks like a T-pose
    names = res.groups[0].skeleton.names
    assert all(len(n.encode()) <= MAX_NAME_BYTES for n in names) and len(set(names)) == len(names)
    assert any("shortened" in n for n in res.groups[0].notes)


def test_sidecar_in_another_encoding_is_an_error_naming_it(tmp_path, demo_library):
    (tmp_path / "walk.bvh").write_bytes(open(os.path.join(demo_library, "demo_walk.bvh"), "rb").read())
    (tmp_path / "walk.json").write_bytes(json.dumps({"description": "marche"}).encode("utf-16"))
    res = import_library([str(tmp_path)])
    assert "walk.json" in dict(res.failed)[str(tmp_path / "walk.bvh")]
