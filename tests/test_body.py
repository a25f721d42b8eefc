"""The body as a value (issue 58, item 4): ``Body.of(skeleton)`` is found once per skeleton, and what
it says of the body (hips, legs, head, feet, hands, chest, thighs, the facing bones, the mirror map,
the height along the bones, the floor) is the same whatever rest orientations or names a file gives
the joints: CMU 16's walk re-rested at random and with every bone along its joint's X, and named as
Mixamo, Unreal, Character Creator and Rigify name them.  Only ``rest_forward``, the rest pose's own
facing, may differ, and nothing that plays reads it where the body's bones can say."""

import os

import numpy as np
import pytest
from conventions import NAMINGS, along_x_turns, random_turns, renamed, rerested

from motionctl.body import Body
from motionctl.io.library import import_library
from motionctl.io.orient import sample_points

pytestmark = pytest.mark.mocap


@pytest.fixture(scope="module")
def walk(mocap):
    return import_library([os.path.join(mocap, "cmu_amc", "16", "16_15.amc")]).groups[0].database.clips[0]


def variants(clip):
    yield "random rest", rerested(clip, random_turns(clip.skeleton.n_joints, 3))
    yield "bones along X", rerested(clip, along_x_turns(clip))
    for naming in NAMINGS:
        yield naming, renamed(clip, naming)


def figures(body: Body) -> dict:
    pelvis, legs, spine = body.facing
    return {"hips": body.hips, "joints": body.joints.tolist(), "upper": body.upper.tolist(), "head": body.head,
            "leg_ends": body.leg_ends.tolist(), "feet": body.feet, "thighs": body.thighs, "hands": body.hands,
            "chest": body.chest, "head_or_top": body.head_or_top, "mirror": body.mirror.tolist(),
            "facing": (pelvis, legs, spine is None)}


def test_a_skeleton_has_one_body(walk):
    body = Body.of(walk.skeleton)
    assert Body.of(walk.skeleton) is body
    # exact: names, the joints found by names and topology (no float decides them)
    assert walk.skeleton.names[body.hips] == "root" and walk.skeleton.names[body.head] == "head"
    assert {walk.skeleton.names[a] for a, _ in body.feet.values()} == {"lfoot", "rfoot"}  # exact: names


@pytest.mark.parametrize("name", ["random rest", "bones along X", *NAMINGS])
def test_the_body_is_the_same_however_the_file_writes_it(walk, name):
    base = Body.of(walk.skeleton)
    other_clip = dict(variants(walk))[name]
    other = Body.of(other_clip.skeleton)
    # (the one float test inside, the pelvis's spine offset against 1e-9 of the skeleton's size, has 8 orders to spare)
    # exact: joint indices found by names and topology
    assert figures(other) == figures(base)
    assert other.bone_height == pytest.approx(base.bone_height, rel=1e-12)  # lengths only: equal to rounding
    z, z_other = (sample_points(c.skeleton, c.root_pos, c.local_rot)[..., 2] for c in (walk, other_clip))
    assert other.floor(z_other) == pytest.approx(base.floor(z), abs=1e-9)  # the same points, to rounding


def test_the_rest_pose_height_follows_the_file_but_the_body_height_does_not(walk):
    """Why the graph weighs its root by ``bone_height``: the rest pose's height changes by tens of
    centimetres when the joints rest otherwise."""
    other = rerested(walk, random_turns(walk.skeleton.n_joints, 3)).skeleton
    assert abs(other.height() - walk.skeleton.height()) > 0.05  # measured 0.5-1 m apart
    assert Body.of(other).bone_height == pytest.approx(Body.of(walk.skeleton).bone_height, rel=1e-12)
    assert 1.5 < Body.of(walk.skeleton).bone_height < 2.0  # CMU 16: 1.82 m along the bones


def test_the_floor_is_under_the_stance_feet_not_the_lowest_glitch(walk):
    """The one floor statistic: a marker that dips 30 cm through the floor on a few frames does not
    move it, while the lowest point does."""
    body = Body.of(walk.skeleton)
    z = sample_points(walk.skeleton, walk.root_pos, walk.local_rot)[..., 2]
    glitch = z.copy()
    glitch[:5, body.feet["L"][1]] -= 0.3
    assert abs(body.floor(glitch) - body.floor(z)) < 1e-3
    assert glitch.min() < z.min() - 0.2  # margin: the lowest point moved 0.24 m, against 0.2
