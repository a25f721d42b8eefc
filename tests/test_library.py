import os
import shutil

import numpy as np
import pytest

from motionctl.io import bvh
from motionctl.io.library import ImportSettings, _canonical, conform, fold_extra_root, import_library, read_clip


@pytest.mark.slow
@pytest.mark.mocap
def test_real_folder_groups_by_skeleton_and_drops_no_file(mocap):
    result = import_library(mocap)
    n_motion = sum(f.lower().endswith((".bvh", ".amc")) for _, _, fs in os.walk(mocap) for f in fs)
    assert result.failed == []
    assert sum(len(g.files) for g in result.groups) == n_motion
    by_joints = {g.skeleton.n_joints: g for g in result.groups}
    assert sorted(by_joints) == [31, 100]
    cmu, cc = by_joints[31], by_joints[100]
    # Both CMU BVH naming conventions and every ASF/AMC subject land in one 120 fps group.
    assert any("MotionBuilder" in (_canonical(read_clip(f, ImportSettings())[0].skeleton)[0] or "")
               for f in cmu.files if f.endswith(".bvh"))
    assert cmu.database.fps == 120 and cc.database.fps == 60
    # The Character Creator clip with an extra root joins its group, folded.
    assert any("02_03" in f for f in cc.files)
    assert any("extra root 'RL_BoneRoot' folded" in n for n in cc.notes)
    text = result.summary()
    assert "2 skeleton group(s)" in text and "0 failed" in text
    trimmed = {n.split(":")[0] for g in result.groups for n in g.notes if "calibration" in n}
    assert {"cmu_02_01_walk_mbnames.bvh", "09_10.amc", "cc_cmu_07_03_walk.bvh"} <= trimmed
    assert not any(t.startswith(("16_", "cc_cmu_05")) for t in trimmed)


@pytest.mark.mocap
def test_keep_calibration_option_keeps_the_t_pose(mocap):
    path = os.path.join(mocap, "cmu31", "cmu_02_01_walk_mbnames.bvh")
    trimmed = import_library(path).groups[0].database.clips[0]
    kept = import_library(path, ImportSettings(keep_calibration=True)).groups[0].database.clips[0]
    assert kept.n_frames == trimmed.n_frames + 1 and trimmed.frame_offset == 1


@pytest.mark.mocap
@pytest.mark.parametrize("name", ["cmu31/cmu_01_01_forward_jumps_turn_around.bvh", "cmu31/cmu_02_01_walk_mbnames.bvh"])
def test_conforming_to_another_convention_keeps_world_positions(mocap, name):
    from motionctl.io import asfamc

    ref = asfamc.read_asf(os.path.join(mocap, "cmu_amc", "16", "16.asf")).skeleton
    clip, _ = read_clip(os.path.join(mocap, name), ImportSettings())
    conv, names = _canonical(clip.skeleton)
    moved, _ = conform(clip, ref, names)
    assert moved.skeleton.names == ref.names  # count: joint names
    order = [names.index(n) for n in _canonical(ref)[1]]
    assert np.abs(moved.world()[0] - clip.world()[0][:, order]).max() < 1e-9


@pytest.mark.mocap
def test_folding_an_extra_root_keeps_world_positions(mocap):
    path = os.path.join(mocap, "cc_base", "cc_cmu_02_03_run_jog.bvh")
    clip = bvh.read_bvh(path, fold_roots=False)
    assert clip.skeleton.names[0] == "RL_BoneRoot"
    folded = fold_extra_root(clip)
    assert folded.skeleton.n_joints == clip.skeleton.n_joints - 1
    assert np.abs(folded.world()[0] - clip.world()[0][:, 1:]).max() < 1e-9
    read = bvh.read_bvh(path)  # folded when read, by default
    # count: joint names (the positions against a literal)
    assert read.skeleton.names == folded.skeleton.names and np.abs(read.world()[0] - folded.world()[0]).max() < 1e-9


def test_unreadable_file_in_a_folder_is_reported_not_dropped(tmp_path, demo_library):
    for f in ("demo_walk.bvh", "demo_run.bvh"):
        shutil.copy(os.path.join(demo_library, f), tmp_path / f)
    (tmp_path / "broken.bvh").write_text("HIERARCHY\nROOT Hips\n{\n OFFSET 0 0\n")
    (tmp_path / "notes.txt").write_text("hello")
    result = import_library(str(tmp_path))
    assert [os.path.basename(p) for p, _ in result.failed] == ["broken.bvh"]
    assert "broken.bvh:5" in result.failed[0][1] or "broken.bvh:4" in result.failed[0][1]
    assert len(result.groups) == 1 and len(result.groups[0].database.clips) == 2
    assert [os.path.basename(p) for p, _ in result.skipped] == ["notes.txt"]
    assert "FAILED" in result.summary() and "broken.bvh" in result.summary()


def test_mixed_frame_rates_are_resampled_into_one_group(tmp_path, demo_library):
    from motionctl.clip import resample

    clip = bvh.read_bvh(os.path.join(demo_library, "demo_walk.bvh"))
    bvh.write_bvh(clip, tmp_path / "a.bvh")
    bvh.write_bvh(resample(clip, 60.0), tmp_path / "b.bvh")
    bvh.write_bvh(clip, tmp_path / "c.bvh")
    (group,) = import_library(str(tmp_path)).groups
    assert group.database.fps == 120.0
    assert any("resampled from 60 to 120 fps" in n for n in group.notes)


@pytest.mark.mocap
def test_an_amc_read_on_another_subjects_asf_says_so(mocap, tmp_path):
    """16_15.amc in a folder whose only ASF is not 16.asf: it is read on that one (the only
    choice) and the import summary says which and why it matters, instead of nothing."""
    import shutil

    shutil.copy(os.path.join(mocap, "cmu_amc", "16", "16_15.amc"), tmp_path / "16_15.amc")
    shutil.copy(os.path.join(mocap, "cmu_amc", "16", "16.asf"), tmp_path / "other.asf")
    lib = import_library([str(tmp_path / "16_15.amc")])
    assert len(lib.groups) == 1 and "no 16.asf beside it: read on other.asf" in lib.summary()
    shutil.copy(tmp_path / "other.asf", tmp_path / "16.asf")
    os.remove(tmp_path / "other.asf")
    assert "asf beside it" not in import_library([str(tmp_path / "16_15.amc")]).summary()
