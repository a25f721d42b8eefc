import os
import re

import numpy as np
import pytest

from conftest import mocap_files
from motionctl import quat
from motionctl.io import asfamc
from motionctl.errors import MotionFileError
from motionctl.skeleton import Y_UP_TO_Z_UP, end_site_positions

AMC_FILES = mocap_files(".amc", "cmu_amc")

TINY_ASF = """# test skeleton
:version 1.10
:name TEST
:units
  mass 1.0
  length 0.45
  angle deg
:root
   order TX TY TZ RX RY RZ
   axis XYZ
   position 0 0 0
   orientation 0 0 0
:bonedata
  begin
     id 1
     name upper
     direction 0 1 0
     length 10
     axis 0 0 30 XYZ
    dof {dof}
  end
  begin
     id 2
     name lower
     direction 1 0 0
     length 5
     axis 0 0 0 XYZ
    dof rx
  end
:hierarchy
  begin
    root upper
    upper lower
  end
"""


def tiny_amc(frames, upper="10 20", lower="5"):
    out = [":FULLY-SPECIFIED", ":DEGREES"]
    for f in range(1, frames + 1):
        out += [str(f), "root 1 2 3 0 0 0", f"upper {upper}", f"lower {lower}"]
    return "\n".join(out) + "\n"


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


@pytest.mark.parametrize("dof", ["rz rx", "rx rz"])
def test_dof_order_and_axis_are_honoured(tmp_path, dof):
    asf = asfamc.read_asf(write(tmp_path, "t.asf", TINY_ASF.format(dof=dof)))
    clip = asfamc.read_amc(write(tmp_path, "t_01.amc", tiny_amc(2, upper="10 20")), asf)
    # Values follow the dof order; the first listed dof is applied first: M = R_second R_first.
    (a1, v1), (a2, v2) = zip(dof.split(), (10.0, 20.0))
    axis_id = {"rx": 0, "ry": 1, "rz": 2}
    m = quat.mul(quat.about_axis(axis_id[a2], np.radians(v2)), quat.about_axis(axis_id[a1], np.radians(v1)))
    c = quat.about_axis(2, np.radians(30))
    expected_y_up = quat.mul(quat.mul(c, m), quat.conj(c))
    conv = quat.from_matrix(Y_UP_TO_Z_UP)
    expected = quat.mul(quat.mul(conv, expected_y_up), quat.conj(conv))
    j = clip.skeleton.index("upper")
    assert np.allclose(np.abs(np.sum(clip.local_rot[0, j] * expected)), 1.0, atol=1e-12)
    # Lengths: 1 unit = 1/0.45 inch; the child joint sits at the bone's end.
    assert np.allclose(np.linalg.norm(clip.skeleton.offsets[clip.skeleton.index("lower")]), 10 * 0.0254 / 0.45)
    assert np.allclose(clip.root_pos[0], np.array([1, 2, 3]) @ Y_UP_TO_Z_UP.T * 0.0254 / 0.45)


@pytest.mark.parametrize(
    "case,asf_text,amc_text,line,message",
    [
        ("unknown_bone", None, tiny_amc(3).replace("lower 5", "elbow 5", 1), 6, "unknown bone 'elbow'"),
        ("unknown_bone_later", None, "\n".join(tiny_amc(3).split("\n")[:9] + ["elbow 5"] + tiny_amc(3).split("\n")[10:]),
         10, "unknown bone 'elbow'"),
        ("missing_frame", None, "\n".join(tiny_amc(4).split("\n")[:10] + tiny_amc(4).split("\n")[14:]), 11,
         "missing frame: expected frame 3, found 4"),
        ("wrong_value_count", None, tiny_amc(3).replace("upper 10 20", "upper 10", 1), 5, "bone 'upper' has 1 values"),
        ("wrong_value_count_later", None, "\n".join(tiny_amc(3).split("\n")[:8] + ["upper 1 2 3"] + tiny_amc(3).split("\n")[9:]),
         9, "bone 'upper' has 3 values, expected 2"),
        ("missing_bone_in_frame", None, "\n".join(tiny_amc(3).split("\n")[:9] + tiny_amc(3).split("\n")[10:]), 10,
         "frame 2 is missing bone 'lower'"),
        ("truncated", None, tiny_amc(3).rsplit("\n", 2)[0] + "\n", None, "missing bone 'lower'"),
        ("non_numeric", None, tiny_amc(3).replace("lower 5\n3", "lower x5\n3"), 10, "non-numeric value 'x5'"),
        ("asf_unknown_bone", TINY_ASF.format(dof="rx").replace("upper lower", "upper hand"), None,
         TINY_ASF.split("\n").index("    upper lower") + 1,
         "hierarchy names unknown bone 'hand'"),
    ],
)
def test_malformed_asf_amc_raise_errors_naming_file_and_line(tmp_path, case, asf_text, amc_text, line, message):
    asf_path = write(tmp_path, "t.asf", asf_text or TINY_ASF.format(dof="rz rx"))
    with pytest.raises(MotionFileError) as err:
        asf = asfamc.read_asf(asf_path)
        asfamc.read_amc(write(tmp_path, "t_01.amc", amc_text), asf)
    assert message in str(err.value), str(err.value)
    if line is not None:
        assert err.value.line == line, str(err.value)


@pytest.mark.mocap
@pytest.mark.parametrize("path", AMC_FILES, ids=os.path.basename)
def test_every_real_amc_reads_with_all_its_frames_and_bone_lengths(path):
    asf = asfamc.read_asf(asfamc.find_asf_for(path))
    clip = asfamc.read_amc(path, asf)
    text = open(path, "rb").read().decode("latin-1")
    n_frames = len(re.findall(r"^\s*\d+\s*$", text, flags=re.M))
    assert clip.n_frames == n_frames and clip.skeleton.n_joints == 31
    assert np.all(np.isfinite(clip.local_rot))
    # Every bone keeps its ASF length in every frame (joint b to the next joint or end site).
    pos, rot = clip.world()
    ends = end_site_positions(clip.skeleton, pos, rot)
    sk = clip.skeleton
    for j in range(1, sk.n_joints):
        name = sk.names[j]
        kids = sk.children(j)
        tip = pos[:, kids[0]] if len(kids) else ends[:, list(sk.end_parent).index(j)]
        length = np.linalg.norm(tip - pos[:, j], axis=1)
        assert np.allclose(length, asf.bones[name].length * asf.length_unit, atol=1e-9), name


WALKS = ["16/16_15", "16/16_16", "16/16_21", "16/16_22", "16/16_31", "16/16_32", "35/35_01", "35/35_05", "35/35_10", "49/49_01"]


@pytest.mark.mocap
@pytest.mark.parametrize("trial", WALKS)
def test_real_walks_touch_the_ground_at_walking_speed(mocap, trial):
    path = os.path.join(mocap, "cmu_amc", trial + ".amc")
    asf = asfamc.read_asf(asfamc.find_asf_for(path))
    clip = asfamc.read_amc(path, asf)
    pos, rot = clip.world()
    ends = end_site_positions(clip.skeleton, pos, rot)
    toes = [list(clip.skeleton.end_parent).index(clip.skeleton.index(n)) for n in ("ltoes", "rtoes")]
    lowest = ends[:, toes, 2].min(axis=1)
    # Some foot is on the floor (z = 0) within a few centimetres at any time of a walk.
    assert abs(np.median(lowest)) < 0.04 and lowest.max() < 0.08
    speed = np.linalg.norm(np.diff(clip.root_pos[:, :2], axis=0), axis=1).sum() / clip.duration
    assert 0.5 < speed < 2.5
