import os

import numpy as np
import pytest

from bvh_fixtures import JOINTS, bvh_text, smooth_channels
from conftest import mocap_files
from motionctl import quat
from motionctl.io import bvh
from motionctl.errors import MotionFileError
from motionctl.skeleton import Skeleton, forward_kinematics


def write(tmp_path, text, name="clip.bvh", mode="w"):
    p = tmp_path / name
    if mode == "wb":
        p.write_bytes(text)
    else:
        p.write_text(text, newline="")
    return str(p)


@pytest.mark.parametrize("n_frames", [1, 2, 37])
@pytest.mark.parametrize("style", ["tabs_lf", "spaces_crlf", "exponents"])
def test_any_channel_layout_round_trips_channel_for_channel(tmp_path, n_frames, style):
    values = smooth_channels(n_frames, seed=n_frames)
    kw = {"tabs_lf": {}, "spaces_crlf": {"newline": "\r\n", "indent": "  "}, "exponents": {"number": "{:.9e}"}}[style]
    path = write(tmp_path, bvh_text(values, **kw))
    # Random rotations are no body to detect axes from: give the file's (BVH's usual) axes.
    clip = bvh.read_bvh(path, unit_scale=0.01, axis_up="Y", axis_forward="-Z")
    assert clip.n_frames == n_frames and clip.fps == 30.0
    assert clip.skeleton.channels == tuple(j[3] for j in JOINTS)
    assert clip.local_pos is not None  # "Arm" carries position channels
    out = tmp_path / "out.bvh"
    bvh.write_bvh(clip, out)
    again = bvh.read_bvh(out, unit_scale=0.01, axis_up="Y", axis_forward="-Z")
    assert np.allclose(bvh.clip_channels(again), values, atol=1e-6)
    assert np.allclose(bvh.clip_channels(clip), values, atol=1e-6)


def test_end_sites_and_offsets_are_read_in_metres_z_up(tmp_path):
    clip = bvh.read_bvh(write(tmp_path, bvh_text(smooth_channels(3))), unit_scale=0.01, axis_up="Y", axis_forward="-Z")
    sk = clip.skeleton
    # File (x, y, z) -> (x, -z, y), then centimetres -> metres.
    assert np.allclose(sk.offsets[1], [0.0, 0.0, 0.10])
    assert np.allclose(sk.offsets[4], [-0.02, -0.005, -0.09])
    assert list(sk.end_parent) == [3, 4]
    assert np.allclose(sk.end_offsets[1], [0.0, -0.01, -0.08])


def test_forward_kinematics_matches_a_hand_computed_chain():
    sk = Skeleton(["a", "b", "c"], [-1, 0, 1], [[0, 0, 1], [0, 0, 1], [1, 0, 0]], [(), (), ()])
    local = quat.identity((1, 3))
    local[0, 0] = quat.about_axis(0, np.pi / 2)  # root: +90 deg about X: (0,0,1) -> (0,-1,0)
    local[0, 1] = quat.about_axis(2, np.pi / 2)  # b: +90 deg about Z: (1,0,0) -> (0,1,0)
    pos, rot = forward_kinematics(sk, np.array([[2.0, 0.0, 0.0]]), local)
    # b = a + Rx(90) (0,0,1) = (2, -1, 0); c = b + Rx(90) Rz(90) (1,0,0) = b + Rx(90) (0,1,0) = b + (0,0,1)
    assert np.allclose(pos[0], [[2, 0, 0], [2, -1, 0], [2, -1, 1]], atol=1e-12)
    assert np.allclose(quat.to_matrix(rot[0, 2]), quat.to_matrix(quat.mul(local[0, 0], local[0, 1])))


@pytest.mark.parametrize("unit,scale", [("m", 1.0), ("cm", 0.01), ("inch", 0.0254), ("cmu", 0.0254 / 0.45)])
def test_unit_scale_is_detected_from_the_body_height(tmp_path, demo_library, unit, scale):
    clip = bvh.read_bvh(os.path.join(demo_library, "demo_walk.bvh"))
    out = tmp_path / f"walk_{unit}.bvh"
    bvh.write_bvh(clip, out, unit_scale=scale)
    back = bvh.read_bvh(out)
    assert back.skeleton.unit_scale == pytest.approx(scale)
    assert np.allclose(back.root_pos, clip.root_pos, atol=1e-5)
    assert np.allclose(bvh.read_bvh(out, unit_scale=2 * scale).root_pos, 2 * clip.root_pos, atol=1e-5)


def test_axis_options_rotate_the_file_frame(tmp_path, demo_library):
    path = os.path.join(demo_library, "demo_walk.bvh")
    a = bvh.read_bvh(path, unit_scale=0.05)
    b = bvh.read_bvh(path, unit_scale=0.05, axis_forward="Y", axis_up="Z")  # treat the file as Z up
    pa, _ = a.world()
    pb, _ = b.world()
    # Default maps file (x, y, z) -> (x, -z, y); (Y fwd, Z up) keeps it: pb = (x, y, z).
    assert np.allclose(pb[..., 0], pa[..., 0]) and np.allclose(pb[..., 1], pa[..., 2]) and np.allclose(pb[..., 2], -pa[..., 1])


# ----------------------------------------------------------------- malformed files

GOOD = bvh_text(smooth_channels(6))
N_CHANNELS = sum(len(j[3]) for j in JOINTS)


def _edit_frame(text, k, fn):
    lines = text.split("\n")
    i = lines.index("MOTION") + 3 + k
    lines[i] = " ".join(fn(lines[i].split()))
    return "\n".join(lines)


def _expected_line(text, where):
    """1-based line: ("frame", k) is frame k's line, ("grep", s) the first line containing s."""
    lines = text.split("\n")
    if where[0] == "frame":
        return lines.index("MOTION") + 4 + where[1]
    return next(i for i, ln in enumerate(lines, 1) if where[1] in ln)


@pytest.mark.parametrize(
    "case,mutate,where,message",
    [
        ("truncated", lambda t: t[: t.rindex("\n", 0, len(t) - 1) + 40], ("frame", 5), "truncated MOTION block"),
        ("missing_lines", lambda t: "\n".join(t.split("\n")[:-3]) + "\n", ("frame", 3), "truncated MOTION block"),
        ("wrong_count", lambda t: _edit_frame(t, 2, lambda v: v[:-1]), ("frame", 2),
         f"frame 2 has {N_CHANNELS - 1} values, expected {N_CHANNELS}"),
        ("non_numeric", lambda t: _edit_frame(t, 4, lambda v: v[:3] + ["abc"] + v[4:]), ("frame", 4), "non-numeric value 'abc'"),
        ("malformed_number", lambda t: _edit_frame(t, 1, lambda v: ["1.2.3"] + v[1:]), ("frame", 1), "non-numeric value '1.2.3'"),
        ("frames_mismatch", lambda t: t.replace("Frames: 6", "Frames: 4"), ("frame", 4), "'Frames: 4' does not match the 6"),
        ("missing_brace", lambda t: t.replace("\t}\n\tJOINT Leg", "\tJOINT Leg", 1), ("grep", "MOTION"), "missing '}'"),
        ("extra_brace", lambda t: t.replace("MOTION", "}\nMOTION"), ("grep", "}\nMOTION"), "unbalanced '}'"),
        ("no_motion", lambda t: t[: t.index("MOTION")], None, "no MOTION section"),
        ("bad_channel", lambda t: t.replace("Xrotation Zrotation Yrotation", "Xrotation Zrotation Wrotation"),
         ("grep", "Wrotation"), "unknown channel 'Wrotation'"),
        ("bad_offset", lambda t: t.replace("OFFSET 0.000000 10.000000", "OFFSET 0.000000 ten"), ("grep", "ten"),
         "non-numeric value 'ten'"),
        ("bad_frame_count", lambda t: t.replace("Frames: 6", "Frames: six"), ("grep", "Frames:"), "non-numeric frame count"),
        ("empty", lambda t: "", None, "empty file"),
        ("zero_frames", lambda t: t.split("MOTION")[0] + "MOTION\nFrames: 0\nFrame Time: 0.03\n", None, "holds no motion"),
    ],
)
def test_malformed_bvh_raises_an_error_naming_file_and_line(tmp_path, case, mutate, where, message):
    text = mutate(GOOD)
    path = write(tmp_path, text, name=f"{case}.bvh")
    with pytest.raises(MotionFileError) as err:
        bvh.read_bvh(path)
    assert message in str(err.value)
    assert str(err.value).startswith(path)
    if where is not None:
        expected = _expected_line(text, where) if where[1] != "}\nMOTION" else _expected_line(text, ("grep", "MOTION")) - 1
        assert err.value.line == expected, (str(err.value), expected)  # count: line numbers


def test_wrong_count_error_points_at_the_short_line(tmp_path):
    text = _edit_frame(GOOD, 2, lambda vals: vals[:-1])
    path = write(tmp_path, text)
    with pytest.raises(MotionFileError) as err:
        bvh.read_bvh(path)
    assert len(text.split("\n")[err.value.line - 1].split()) == N_CHANNELS - 1


def test_classic_mac_line_endings_are_read(tmp_path):
    path = write(tmp_path, GOOD.replace("\n", "\r").encode(), mode="wb")
    assert bvh.read_bvh(path).n_frames == 6


# ----------------------------------------------------------------- real capture

@pytest.mark.mocap
@pytest.mark.parametrize("path", mocap_files(".bvh"), ids=os.path.basename)
def test_real_bvh_round_trips_through_our_writer(tmp_path, path):
    clip = bvh.read_bvh(path)
    out = tmp_path / "rt.bvh"
    bvh.write_bvh(clip, out)
    back = bvh.read_bvh(out)
    # count: names and channel names
    assert back.skeleton.names == clip.skeleton.names and back.skeleton.channels == clip.skeleton.channels
    # exact: the reader rounds a frame time within 1e-3 of a whole fps to it (30, 120 round-trip)
    assert back.n_frames == clip.n_frames and back.fps == clip.fps
    # exact: a unit from orient's UNITS table (discrete), detected again
    assert back.skeleton.unit_scale == clip.skeleton.unit_scale
    assert np.abs(back.root_pos - clip.root_pos).max() < 1e-6
    assert np.abs(back.skeleton.offsets - clip.skeleton.offsets).max() < 1e-6
    dots = np.abs(np.sum(back.local_rot * clip.local_rot, axis=-1))
    assert 2 * np.arccos(np.clip(dots.min(), 0, 1)) < 1e-6  # radians
    # Written channels are a fixed point: write(read(write(clip))) == write(clip).
    assert np.abs(bvh.clip_channels(back) - bvh.clip_channels(clip)).max() < 1e-6
