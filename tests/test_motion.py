import json
import os

import numpy as np
import pytest

from motionctl import quat

from motionctl.io import bvh
from motionctl.io.demo_data import Gait, synthesize
from motionctl.body import detect_calibration_frames, foot_contacts, mirror_joint_map
from motionctl.clip import Clip, MotionDatabase, resample
from motionctl.errors import MotionFileError, SkeletonMismatchError
from motionctl.rootframe import root_frame, root_motion
from motionctl.tags import tags_from_name


def straight_clip(forward=1.2, lateral=0.0, turn=0.0, seconds=3.0, fps=120.0, run=False):
    n = int(seconds * fps)
    return synthesize(Gait(np.full(n, forward), np.full(n, lateral), np.full(n, turn), np.zeros(n), run), fps,
                      heading0=0.7)


@pytest.mark.parametrize("forward,lateral,turn", [(1.3, 0.0, 0.0), (3.0, 0.0, 1.0), (0.0, 0.6, 0.0), (1.2, 0.0, -0.8)])
def test_root_motion_recovers_generated_speed_and_turn_rate(forward, lateral, turn):
    clip = straight_clip(forward, lateral, turn, run=forward > 2)
    rm = root_motion(clip)[1:] * clip.fps
    core = slice(len(rm) // 4, 3 * len(rm) // 4)  # away from the smoothing edges
    assert np.mean(rm[core, 1]) == pytest.approx(forward, abs=0.06)
    assert np.mean(rm[core, 0]) == pytest.approx(lateral, abs=0.06)
    assert np.mean(rm[core, 2]) == pytest.approx(turn, abs=0.05)


def test_root_frame_heading_is_invariant_to_world_rotation():
    clip = straight_clip(1.0, turn=0.5)
    spin = quat.about_axis(2, 1.1)
    turned = Clip("t", clip.skeleton, clip.fps, quat.rotate(spin, clip.root_pos), clip.local_rot.copy())
    turned.local_rot[:, 0] = quat.mul(spin, clip.local_rot[:, 0])
    _, yaw_a = root_frame(clip)
    _, yaw_b = root_frame(turned)
    assert np.allclose(np.unwrap(yaw_b - yaw_a), 1.1, atol=1e-9)
    assert np.allclose(root_motion(turned), root_motion(clip), atol=1e-9)


def test_resample_keeps_duration_and_interpolates_by_slerp():
    clip = straight_clip(1.3, seconds=2.0, fps=120.0)
    half = resample(clip, 60.0)
    assert half.n_frames == 120 and half.fps == 60.0
    assert np.allclose(half.local_rot, clip.local_rot[::2], atol=1e-12)
    up = resample(half, 120.0)
    assert np.allclose(up.local_rot[::2], half.local_rot, atol=1e-12)
    # Odd frames are slerp midpoints: on the geodesic, halfway between their neighbours.
    a, mid, b = up.local_rot[0:-2:2], up.local_rot[1::2], up.local_rot[2::2]
    d_am = quat.angle(quat.mul(quat.conj(a), mid))
    d_mb = quat.angle(quat.mul(quat.conj(mid), b))
    d_ab = quat.angle(quat.mul(quat.conj(a), b))
    assert np.allclose(d_am, d_ab / 2, atol=1e-7) and np.allclose(d_mb, d_ab / 2, atol=1e-7)
    assert np.allclose(up.root_pos[1::2], 0.5 * (half.root_pos[:-1] + half.root_pos[1:]))


def test_foot_contacts_alternate_during_a_walk_and_vanish_in_flight():
    walk = straight_clip(1.3)
    c = foot_contacts(walk)
    assert 0.4 < c.mean() < 0.8
    assert np.any(c[:, 0] & ~c[:, 1]) and np.any(c[:, 1] & ~c[:, 0])
    n = 360
    jump = synthesize(Gait(np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n)), 120.0, jump=(1.3, 0.45, 0.3))
    air = jump.annotations["airborne"]
    contacts = foot_contacts(jump)
    assert not contacts[air][5:-5].any()
    assert contacts[~air].mean() > 0.9


def test_calibration_frame_is_detected_and_trimmed(demo_library):
    clip = bvh.read_bvh(os.path.join(demo_library, "demo_walk.bvh"))
    assert detect_calibration_frames(clip) == 0
    tpose = clip.slice(0, 1)
    tpose.local_rot[:] = quat.identity(tpose.local_rot.shape[:-1])
    tpose.root_pos[:] += [3.0, 0.0, 0.0]
    both = Clip("c", clip.skeleton, clip.fps, np.concatenate((tpose.root_pos, clip.root_pos)),
                np.concatenate((tpose.local_rot, clip.local_rot)))
    assert detect_calibration_frames(both) == 1


def test_tags_from_file_name_and_sidecar(tmp_path, demo_library):
    assert tags_from_name("cc_cmu_06_10_walk_dribbling_90deg_left_turns") >= {"walk", "left"}
    clip = bvh.read_bvh(os.path.join(demo_library, "demo_jump.bvh"))
    side = json.load(open(os.path.join(demo_library, "demo_jump.json")))
    assert clip.tags == set(side["tags"])
    assert list(clip.annotations["action_centres"]) == side["action_centres"]
    bad = tmp_path / "x.bvh"
    bad.write_bytes(open(os.path.join(demo_library, "demo_jump.bvh"), "rb").read())
    (tmp_path / "x.json").write_text("{tags: [")
    with pytest.raises(MotionFileError, match=r"x\.json:1: invalid JSON"):
        bvh.read_bvh(bad)


def test_mirror_map_pairs_left_and_right_joints():
    names = ["Hips", "LHipJoint", "LeftHip", "RHipJoint", "RightHip", "lowerback", "lhand", "rhand", "lfemur", "rfemur",
             "CC_Base_L_Thigh", "CC_Base_R_Thigh", "root", "lowerneck"]
    m = mirror_joint_map(names)
    pairs = {names[i]: names[m[i]] for i in range(len(names))}
    assert pairs["LeftHip"] == "RightHip" and pairs["LHipJoint"] == "RHipJoint" and pairs["lhand"] == "rhand"
    assert pairs["lfemur"] == "rfemur" and pairs["CC_Base_L_Thigh"] == "CC_Base_R_Thigh"
    assert pairs["root"] == "root" and pairs["lowerback"] == "lowerback" and pairs["lowerneck"] == "lowerneck"
    assert np.all(m[m] == np.arange(len(names)))  # count: integer indices


def test_database_save_load_round_trip_and_errors(tmp_path, demo_library):
    clips = [bvh.read_bvh(os.path.join(demo_library, f)) for f in ("demo_walk.bvh", "demo_jump.bvh")]
    db = MotionDatabase(clips[0].skeleton, clips)
    assert db.n_frames == sum(c.n_frames for c in clips)
    assert db.locate(clips[0].n_frames + 5) == (1, 5)
    path = tmp_path / "db.npz"
    db.save(path)
    back = MotionDatabase.load(path)
    assert [c.name for c in back.clips] == [c.name for c in clips]  # count: clip names
    assert [c.tags for c in back.clips] == [c.tags for c in clips]  # count: tag sets
    assert np.array_equal(back.local_rot, db.local_rot) and np.array_equal(back.root_pos, db.root_pos)
    assert np.array_equal(back.clips[1].annotations["action_centres"], clips[1].annotations["action_centres"])
    # count: joint and channel names
    assert back.skeleton.names == db.skeleton.names and back.skeleton.channels == db.skeleton.channels
    with pytest.raises(MotionFileError, match="missing"):
        MotionDatabase.load(tmp_path / "nope.npz")
    (tmp_path / "junk.npz").write_bytes(b"not a zip")
    with pytest.raises(MotionFileError, match="junk.npz"):
        MotionDatabase.load(tmp_path / "junk.npz")


def test_database_refuses_a_clip_on_another_skeleton_naming_the_joint(demo_library):
    clip = bvh.read_bvh(os.path.join(demo_library, "demo_walk.bvh"))
    db = MotionDatabase(clip.skeleton, [clip])
    names = list(clip.skeleton.names)
    names[7] = "RightThigh"
    other = Clip("x", clip.skeleton.__class__(names, clip.skeleton.parents, clip.skeleton.offsets, clip.skeleton.channels),
                 clip.fps, clip.root_pos, clip.local_rot)
    with pytest.raises(SkeletonMismatchError, match="'RightHip'") as err:
        db.add(other)
    assert err.value.joint == "RightHip"
