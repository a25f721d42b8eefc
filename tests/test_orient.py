"""Units, up axis and floor detected from the motion: real clips written as other exporters would
(rest pose lying along X, Z up, centimetres/inches/decimetres, the floor elsewhere) come back
upright, human-sized and standing on z = 0, each decision reported."""

import os
from dataclasses import replace

import numpy as np
import pytest

from motionctl import quat
from motionctl.io.bvh import write_bvh
from motionctl.io.library import ImportSettings, import_library
from motionctl.clip import world_with_ends
from motionctl.io.orient import guess_unit_scale, orient
from motionctl.skeleton import Skeleton

pytestmark = pytest.mark.mocap

SOURCES = ["cmu31/cmu_02_01_walk_mbnames.bvh", "cc_base/cc_cmu_07_02_walk.bvh", "cmu_amc/16/16_15.amc"]


def rest_rotated(clip, r: np.ndarray):
    """The same world motion on a rest pose turned by rotation matrix ``r`` (as Rokoko-style rigs
    rest with their bones along X): offsets R·o, local rotations R·L·Rᵀ, the root's L·Rᵀ."""
    q = quat.from_matrix(r)
    sk = clip.skeleton
    skel = Skeleton(sk.names, sk.parents, sk.offsets @ r.T, sk.channels, sk.end_parent, sk.end_offsets @ r.T,
                    sk.unit_scale)
    rot = quat.mul(quat.mul(q, clip.local_rot), quat.conj(q))
    rot[:, 0] = quat.mul(clip.local_rot[:, 0], quat.conj(q))
    return replace(clip, skeleton=skel, local_rot=rot, tags=set(clip.tags))


def imported(paths):
    res = import_library(paths)
    assert not res.failed, res.failed
    (group,) = res.groups
    (clip,) = group.database.clips
    return clip, res.orientations[group.files[0]]


@pytest.fixture(scope="module")
def references(mocap):
    """Each source clip (first 3 s) imported with the defaults: the motion every variant must match."""
    out = {}
    for name in SOURCES:
        clip, _ = imported([os.path.join(mocap, name)])
        out[name] = clip.slice(0, min(clip.n_frames, int(3 * clip.fps)))
    return out


TURN_X_ALONG_UP = np.array([[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [-1.0, 0.0, 0.0]])  # the body's up becomes -X
VARIANTS = [
    # (rest rotation, file up, file forward, metres per file unit, root offset in metres)
    ("rest along X, cm", TURN_X_ALONG_UP, "Y", "-Z", 0.01, (0.0, 0.0, 0.0)),
    ("Z up, inches", None, "Z", "Y", 0.0254, (0.0, 0.0, 0.0)),
    ("Z up, rest along X, dm, 1 m below the floor", TURN_X_ALONG_UP, "Z", "Y", 0.1, (2.0, -1.0, -1.0)),
    ("-Y up, cm, 0.5 m above", None, "-Y", "Z", 0.01, (0.0, 0.0, 0.5)),
    ("X up, metres, shifted", TURN_X_ALONG_UP, "X", "Y", 1.0, (3.0, 1.0, -0.3)),
]


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("label, rest, up, forward, unit, offset", VARIANTS, ids=[v[0] for v in VARIANTS])
def test_variant_comes_in_upright_human_sized_on_the_floor(tmp_path, references, source, label, rest, up, forward,
                                                           unit, offset):
    ref = references[source]
    clip = ref if rest is None else rest_rotated(ref, rest)
    clip = replace(clip, root_pos=clip.root_pos + np.asarray(offset), tags=set(clip.tags))
    path = tmp_path / "variant.bvh"
    write_bvh(clip, path, unit_scale=unit, axis_forward=forward, axis_up=up)
    got, info = imported([str(path)])
    # Each decision taken from the motion and reported.
    assert {"unit", "up", "floor"} <= info.detected
    assert info.up == up and info.unit_scale == pytest.approx(unit)  # count: axis names (the unit goes through approx)
    assert f"up axis {up}" in info.describe() and info.unit in info.describe()
    pos, ref_pos = world_with_ends(got), world_with_ends(ref)
    heights = pos[..., 2].max(axis=1) - pos[..., 2].min(axis=1)
    assert 1.4 <= np.percentile(heights, 75) <= 2.0
    lowest = pos[..., 2].min(axis=1)
    assert np.mean(np.abs(lowest) < 0.03) > 0.8  # feet on the floor (within 3 cm in 80% of frames)
    head = [i for i, n in enumerate(got.skeleton.names) if "head" in n.lower()][0]
    # margin: 0.4 m at the nearest
    assert np.all(pos[:, head, 2] > pos[:, 0, 2])  # upright: the head above the hips in every frame
    # The very same motion: heights of every joint in every frame, and the ground path up to a turn.
    assert np.abs(pos[..., 2] - ref_pos[..., 2]).max() < 0.01
    step = np.linalg.norm(np.diff(pos[:, 0, :2], axis=0), axis=1)
    ref_step = np.linalg.norm(np.diff(ref_pos[:, 0, :2], axis=0), axis=1)
    assert np.abs(step - ref_step).max() < 1e-3


def test_user_overrides_are_kept(tmp_path, references):
    ref = references["cmu31/cmu_02_01_walk_mbnames.bvh"]
    path = tmp_path / "walk_cm.bvh"
    write_bvh(ref, path, unit_scale=0.01)
    res = import_library([str(path)], ImportSettings(unit_scale=0.02, axis_up="Y", axis_forward="-Z", floor="keep"))
    info = res.orientations[str(path)]
    assert info.detected == set() and info.unit_scale == 0.02 and info.floor == 0.0
    (clip,) = res.groups[0].database.clips
    assert np.allclose(clip.root_pos, 2 * ref.root_pos, atol=1e-5)  # twice the size, as asked


def test_ambiguous_motion_keeps_the_files_convention():
    """A body whose extent is the same along every axis gives no evidence: BVH's Y stays up."""
    sk = Skeleton(["a", "b", "c", "d"], [-1, 0, 0, 0], [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], [()] * 4)
    _, _, _, _, info = orient(sk, np.zeros((5, 3)), quat.identity((5, 4)))
    assert info.up == "Y"


@pytest.mark.parametrize("height, scale", [(1.7, 1.0), (170.0, 0.01), (67.0, 0.0254), (30.0, 0.0254 / 0.45),
                                           (17.0, 0.1), (1700.0, 0.001), (5.6, 0.3048)])
def test_unit_guess_makes_a_human(height, scale):
    assert guess_unit_scale(height) == pytest.approx(scale)
