"""The readers' less travelled paths, each with what it must do (issue 57's coverage of motionctl/io):
BVH names and channels, several roots, settings that are not axes or floors; ASF units, root
order, bones without names or with a dof twice; AMC rates, radians, frames listing other bones;
the orientation's account of itself; the library's settings, a file
that cannot be read, a subject's skeleton that cannot be read, a clip of calibration frames only,
feet that never reach the floor, two clips of one name."""

import math
import os

import numpy as np
import pytest

from bvh_fixtures import bvh_text, smooth_channels
from motionctl.errors import MotionctlError, MotionFileError
from motionctl.io import asfamc
from motionctl.io.bvh import parse_bvh_oriented
from test_asfamc import TINY_ASF, tiny_amc, write

BVH = bvh_text(smooth_channels(6))


def bvh_error(text: str, **kw) -> MotionFileError:
    with pytest.raises(MotionFileError) as err:
        parse_bvh_oriented(text.encode(), "t.bvh", **kw)
    return err.value


# ----------------------------------------------------------------------------- BVH

def test_joints_of_one_name_get_blenders_suffixes_past_any_taken():
    """Three joints named Spine (one file already holds a Spine.001): Spine, Spine.001 for the
    file's own, then .002 and .003, as Blender names duplicates."""
    text = BVH.replace("JOINT Arm", "JOINT Spine.001").replace("JOINT Hand", "JOINT Spine").replace("JOINT Leg",
                                                                                                  "JOINT Spine")
    clip, _ = parse_bvh_oriented(text.encode(), "t.bvh")
    assert clip.skeleton.names == ("Root", "Spine", "Spine.001", "Spine.002", "Spine.003")


@pytest.mark.parametrize("edit, line, what", [
    (("CHANNELS 3 Xrotation Zrotation Yrotation", "CHANNELS 3 Xrotation Xrotation Yrotation"), 9,
     "channel Xrotation listed twice on joint 'Spine'"),
    (("MOTION", "ROOT Other\n{\nOFFSET 0 0 0\nCHANNELS 0\n}\nMOTION"), 35, "several ROOT joints"),
    (("MOTION", "}\nMOTION"), 35, "unbalanced '}' after the hierarchy"),
    (("MOTION", "Joint\nMOTION"), 35, "unexpected 'Joint' after the hierarchy")])
def test_a_hierarchy_that_breaks_the_format_names_its_line(edit, line, what):
    err = bvh_error(BVH.replace(*edit, 1))
    assert err.line == line and what in err.reason


@pytest.mark.parametrize("kw, what", [({"axis_up": "Q"}, "axis must be one of"),
                                      ({"floor": "sideways"}, "floor must be one of ('auto', 'keep', 'lowest')")])
def test_an_axis_or_floor_that_is_not_one_is_one_error_naming_the_file(kw, what):
    err = bvh_error(BVH, **kw)
    assert err.path == "t.bvh" and what in err.reason


def test_the_floor_is_said_detected_only_when_it_was_and_a_frame_time_near_a_whole_rate_rounds():
    _, keep = parse_bvh_oriented(BVH.encode(), "t.bvh", floor="keep")
    clip, auto = parse_bvh_oriented(bvh_text(smooth_channels(6), frame_time=1 / 120.00001).encode(), "t.bvh",
                                    floor="auto")
    assert "floor" not in keep.detected and "floor" in auto.detected and clip.fps == 120.0
    clip, _ = parse_bvh_oriented(bvh_text(smooth_channels(6), frame_time=1 / 29.97).encode(), "t.bvh")
    assert clip.fps == pytest.approx(29.97, rel=1e-6)


# ----------------------------------------------------------------------------- ASF / AMC

@pytest.mark.parametrize("edit, what", [
    (("order TX TY TZ RX RY RZ", "order TX TY TZ RX RX RZ"), "root order must list each of TX TY TZ RX RY RZ once"),
    (("name lower", "name"), "bone name missing"),
    (("dof rx\n", "dof rx rx\n"), "a dof is listed twice"),
    (("length 0.45", "length 1e-12"), "length unit 1e-12 gives")])
def test_an_asf_that_breaks_the_format_names_its_line(tmp_path, edit, what):
    text = TINY_ASF.format(dof="rz rx").replace(*edit, 1)
    with pytest.raises(MotionFileError, match=what) as err:
        asfamc.read_asf(write(tmp_path, "t.asf", text))
    lines = [ln.strip() for ln in text.split("\n")]
    assert err.value.line == lines.index(edit[1].strip()) + 1


def test_a_unit_scale_given_overrides_the_asfs_length_unit(tmp_path):
    path = write(tmp_path, "t.asf", TINY_ASF.format(dof="rz rx"))
    assert asfamc.read_asf(path).length_unit == pytest.approx(0.0254 / 0.45)
    asf = asfamc.read_asf(path, unit_scale=0.01)
    clip = asfamc.read_amc(write(tmp_path, "t_01.amc", tiny_amc(2)), asf)
    assert np.allclose(np.linalg.norm(clip.skeleton.offsets[clip.skeleton.index("lower")]), 10 * 0.01)


@pytest.mark.parametrize("fps", [0.0, float("nan"), 1e5])
def test_an_amc_rate_out_of_range_is_refused(tmp_path, fps):
    asf = asfamc.read_asf(write(tmp_path, "t.asf", TINY_ASF.format(dof="rz rx")))
    with pytest.raises(MotionFileError, match="frame rate .* is not between 0.1 and 10000 fps"):
        asfamc.read_amc(write(tmp_path, "t_01.amc", tiny_amc(2)), asf, fps=fps)


def test_amc_radians_floor_and_axis_settings(tmp_path):
    """``:RADIANS`` values read as radians; floor "auto" is said detected; an axis that is not one
    is one error naming the file."""
    asf = asfamc.read_asf(write(tmp_path, "t.asf", TINY_ASF.format(dof="rz rx")))
    deg = asfamc.read_amc(write(tmp_path, "d_01.amc", tiny_amc(2, upper="10 20")), asf)
    rad_text = tiny_amc(2, upper=f"{math.radians(10)!r} {math.radians(20)!r}", lower=f"{math.radians(5)!r}")
    rad = asfamc.read_amc(write(tmp_path, "r_01.amc", rad_text.replace(":DEGREES", ":RADIANS")), asf)
    assert np.allclose(deg.local_rot, rad.local_rot, atol=1e-12)
    _, info = asfamc.read_amc_oriented(write(tmp_path, "a_01.amc", tiny_amc(2)), asf, floor="auto")
    assert "floor" in info.detected
    with pytest.raises(MotionFileError, match="axis must be one of"):
        asfamc.read_amc(write(tmp_path, "b_01.amc", tiny_amc(2)), asf, axis_up="W")


def test_amc_frames_that_list_other_bones_are_refused_naming_the_first_frame(tmp_path):
    """Every frame lists the same bones; a frame whose bone names are another's (swapped) cannot be
    placed by line, so the first frame is named."""
    asf = asfamc.read_asf(write(tmp_path, "t.asf", TINY_ASF.format(dof="rx")))
    text = tiny_amc(3, upper="10", lower="5").replace("2\nroot 1 2 3 0 0 0\nupper 10\nlower 5",
                                                       "2\nroot 1 2 3 0 0 0\nlower 10\nupper 5")
    with pytest.raises(MotionFileError) as err:
        asfamc.read_amc(write(tmp_path, "t_01.amc", text), asf)
    assert "frame" in err.value.reason and err.value.line is not None


def test_the_subjects_asf_is_found_beside_an_amc(tmp_path):
    write(tmp_path, "07.asf", TINY_ASF.format(dof="rx"))
    assert asfamc.find_asf_for(str(tmp_path / "07_01.amc")) == str(tmp_path / "07.asf")
    other = tmp_path / "other"
    other.mkdir()
    write(other, "any.asf", TINY_ASF.format(dof="rx"))
    assert asfamc.find_asf_for(str(other / "09_02.amc")) == str(other / "any.asf")  # the only one there
    write(other, "second.asf", TINY_ASF.format(dof="rx"))
    assert asfamc.find_asf_for(str(other / "09_02.amc")) is None  # two: which is not known
    assert asfamc.find_asf_for(str(tmp_path / "gone" / "09_02.amc")) is None  # no folder


# ----------------------------------------------------------------------------- orientation, roots

def test_an_orientation_describes_its_levelled_floor_notes_and_warnings():
    from motionctl.io.orient import Orientation, guess_unit_scale

    info = Orientation(unit=0.01, up="Y", forward="-Z", floor=0.02, detected={"up"}, evidence="head above feet")
    info.tilt, info.notes, info.warnings = 2.5, ["extra root folded"], ["the body comes out 5 m tall"]
    text = info.describe()
    assert "floor levelled by 2.5°" in text and "; extra root folded" in text and "; WARNING: the body" in text
    assert guess_unit_scale(float("nan")) == 1.0 and guess_unit_scale(-3.0) == 1.0


def test_folding_a_root_that_is_not_a_single_parent_is_refused():
    from motionctl.io.roots import fold_root
    from motionctl.skeleton import Skeleton

    sk = Skeleton(("a", "b", "c"), np.array([-1, 0, 0]), np.zeros((3, 3)), (("Xrotation",),) * 3)
    with pytest.raises(ValueError, match="root 'a' has 2 children"):
        fold_root(sk, np.zeros((2, 3)), np.tile([1.0, 0, 0, 0], (2, 3, 1)))


# ----------------------------------------------------------------------------- the library

@pytest.mark.parametrize("values, what", [({"axis_forward": "Y"}, "axis_forward needs axis_up"),
                                          ({"axis_up": "Z", "axis_forward": "-Z"}, "must differ")])
def test_import_settings_that_contradict_each_other_are_refused(values, what):
    from motionctl.io.library import ImportSettings
    from motionctl.settings import from_flat

    with pytest.raises(MotionctlError, match=what):
        from_flat(ImportSettings, values)


def test_a_library_names_what_it_could_not_read_and_keeps_the_rest(tmp_path, demo_library):
    """A subject's ASF that cannot be read fails each of its AMCs naming it (read once); a clip of
    calibration frames only is refused; two clips of one name get distinct names."""
    from motionctl.io.library import import_library

    broken = tmp_path / "subject"
    broken.mkdir()
    write(broken, "05.asf", TINY_ASF.format(dof="rx").replace("length 0.45", "length -1"))
    for t in ("01", "02"):
        write(broken, f"05_{t}.amc", tiny_amc(3, upper="10", lower="5"))
    lonely = tmp_path / "lonely"
    lonely.mkdir()
    write(lonely, "06_01.amc", tiny_amc(3, upper="10", lower="5"))
    write(lonely, "07.asf", TINY_ASF.format(dof="rx"))
    write(lonely, "08.asf", TINY_ASF.format(dof="rx"))
    twin = tmp_path / "twin"
    twin.mkdir()
    src = os.path.join(demo_library, "demo_walk.bvh")
    (twin / "demo_walk.bvh").write_bytes(open(src, "rb").read())
    result = import_library([str(broken), str(lonely), src, str(twin / "demo_walk.bvh")])
    failed = dict(result.failed)
    assert "its skeleton cannot be read" in failed[str(broken / "05_01.amc")]
    assert "its skeleton cannot be read" in failed[str(broken / "05_02.amc")]
    assert "no ASF skeleton found beside this AMC" in failed[str(lonely / "06_01.amc")]
    names = [c.name for g in result.groups for c in g.database.clips]
    assert len(names) == 2 and len(set(names)) == 2 and "demo_walk" in names
    with pytest.raises(FileNotFoundError, match="no such file or folder"):
        import_library([str(tmp_path / "nowhere.bvh")])
