"""Which way the body faces is read from the hips and spine (``rootframe``); the import summary says
what shows it and warns where the body does not (issue 58): real capture walking ahead, backwards
and sideways (Character Creator exports of CMU 06), standing, and the same walk with left and right
swapped in its joint names."""

import os
from dataclasses import replace

import pytest

from motionctl.io.bvh import write_bvh
from motionctl.io.library import ImportSettings, load_clip
from motionctl.skeleton import Skeleton

pytestmark = pytest.mark.mocap


def summary(path):
    _, _, notes = load_clip(path, ImportSettings())
    facing = [n for n in notes if n.startswith("facing from")]
    assert len(facing) == 1, notes
    return facing[0], [n for n in notes if n.startswith("WARNING") and ("hips" in n or "feet" in n)]


def test_a_walk_ahead_shows_its_facing_and_is_not_warned(mocap):
    note, warned = summary(os.path.join(mocap, "cc_base", "cc_cmu_07_02_walk.bvh"))
    assert not warned
    assert "feet point within 60° of it on 100%" in note and "travels ahead on 100%" in note, note


@pytest.mark.parametrize("take, says", [("cc_cmu_06_06_walk_backward_dribbling.bvh", "travel backwards"),
                                        ("cc_cmu_06_08_sidestep_dribbling.bvh", "travel sideways"),
                                        ("cc_cmu_02_05_punch_strike.bvh", "hips travel on 0%")])
def test_backwards_sideways_and_standing_takes_are_warned(mocap, take, says):
    note, warned = summary(os.path.join(mocap, "cc_base", take))
    assert len(warned) == 1 and says in warned[0], warned
    assert "feet point within 60° of it on 100%" in note  # the body still shows it: hips, spine and feet agree


def test_left_and_right_swapped_in_the_names_is_warned(mocap, tmp_path):
    clip, _, _ = load_clip(os.path.join(mocap, "cc_base", "cc_cmu_07_02_walk.bvh"), ImportSettings())
    sk = clip.skeleton
    swap = {"_L_": "_R_", "_R_": "_L_"}
    names = [next((n.replace(a, b) for a, b in swap.items() if a in n), n) for n in sk.names]
    assert names != sk.names
    other = replace(clip, skeleton=Skeleton(names, sk.parents, sk.offsets, sk.channels, sk.end_parent, sk.end_offsets,
                                             sk.unit_scale), tags=set(clip.tags))
    write_bvh(other, tmp_path / "swapped.bvh")
    note, warned = summary(str(tmp_path / "swapped.bvh"))
    assert any("left and right may be swapped" in w for w in warned), (note, warned)
