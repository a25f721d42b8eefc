"""Anyone's capture read right without being told: real clips written in the conventions other
exporters use (tests/conventions.py: a still root at the origin with the body metres away, a root
carrying the motion, Z-up and Y-up, centimetres and inches, a head with no end site) come in
upright, on the floor, moving and 1.5-1.9 m tall at the defaults, from the library and the command
line; weak or implausible evidence is said in one line; a motionless library is refused at
training; retargeted feet stand on the target's own floor; long jobs tell the time left."""

import io
import os
import time

import numpy as np
import pytest
from conventions import CONVENTIONS, body_figures, with_extra_root, write_convention

from motionctl import cli, quat
from motionctl.engines.base import clips_of
from motionctl.errors import MotionctlError
from motionctl.jobs import Eta, PrintProgress, clock
from motionctl.io.library import ImportSettings, import_library, load_clip
from motionctl.io.orient import orient
from motionctl.retarget import Rig, RetargetSettings, auto_map, quality, retarget
from motionctl.skeleton import Skeleton

SOURCES = ["cmu_amc/16/16_15.amc", "cc_base/cc_cmu_07_02_walk.bvh"]


@pytest.fixture(scope="module")
def sources(mocap):
    out = {}
    for rel in SOURCES:
        clip = load_clip(os.path.join(mocap, rel), ImportSettings())[0]
        out[rel] = clip.slice(0, min(clip.n_frames, int(4 * clip.fps)))
    return out


def imported(path, **settings):
    res = import_library([str(path)], ImportSettings(**settings))
    assert not res.failed, res.failed
    ((clip,),) = [g.database.clips for g in res.groups]
    return clip, res.orientations[str(path)], res


@pytest.mark.mocap
@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("name", list(CONVENTIONS))
def test_every_convention_comes_in_upright_on_the_floor_moving_and_human_sized(tmp_path, sources, source, name):
    clip = sources[source]
    ref = body_figures(clip)
    path = tmp_path / "take.bvh"
    write_convention(clip, name, path)
    got, info, res = imported(path)
    fig = body_figures(got)
    assert fig["upright"] > 0.95 and abs(fig["feet_off_floor"]) < 0.03, (fig, info.describe())
    assert fig["travel"] == pytest.approx(ref["travel"], rel=0.02) and fig["travel"] > 1.0
    assert 1.5 <= fig["stature"] <= 1.9 and 1.5 <= info.height <= 1.9
    # count: joint names
    assert got.skeleton.names[0] == clip.skeleton.names[0]  # an extra root is folded into the hips
    assert info.warnings == [] and info.confidence > 0.8 and {"unit", "up", "floor"} <= info.detected
    # count: axis names (the unit goes through approx)
    assert info.up == CONVENTIONS[name][1] and info.unit_scale == pytest.approx(CONVENTIONS[name][3])
    if "root" in name:
        assert any("folded into" in n for n in res.groups[0].notes)


@pytest.mark.mocap
def test_the_command_line_reads_a_still_root_and_has_the_panels_import_options(tmp_path, sources, capsys):
    clip = sources["cmu_amc/16/16_15.amc"]
    path = tmp_path / "still.bvh"
    write_convention(clip, "still root at the origin, body 3 m away", path)
    assert cli.main(["info", str(path)]) == 0
    out = capsys.readouterr().out
    assert "up axis Y (detected: head above feet in 100% of frames" in out and "folded into 'root'" in out
    assert "WARNING" not in out
    # Every import option of the panel is a command-line option, from the same declaration.
    from motionctl.settings import options

    helptext = cli.build_parser()._subparsers._group_actions[0].choices["info"].format_help()
    for o in options(ImportSettings):
        assert "--" + o.name.replace("_", "-") in helptext, o.name
    # The same file with folding turned off: the root never moves, and training says so.
    assert cli.main(["matching", "train", "--clips", str(path), "--no-fold-roots", "--out",
                     str(tmp_path / "m.npz")]) == 2
    err = capsys.readouterr().err
    assert "never move" in err and "--fold-roots" in err and not (tmp_path / "m.npz").exists()
    assert cli.main(["matching", "train", "--clips", str(path), "--out", str(tmp_path / "m.npz")]) == 0


UNIT_WORDS = {0.01: "centimetres", 0.0254: "inches"}


@pytest.mark.mocap
@pytest.mark.parametrize("name", list(CONVENTIONS))
def test_the_command_line_reads_every_convention_at_its_defaults(tmp_path, sources, capsys, name):
    """The command line, told nothing, reads each convention as the panel does (up axis, units, a
    human height, no warning) and trains on it."""
    clip = sources["cmu_amc/16/16_15.amc"]
    path = tmp_path / "take.bvh"
    write_convention(clip, name, path)
    assert cli.main(["info", str(path)]) == 0
    out = capsys.readouterr().out
    _, up, _, unit = CONVENTIONS[name]
    assert f"units {UNIT_WORDS[unit]} (detected), up axis {up} (detected)" in out and "WARNING" not in out, out
    height = float(out.split("m tall")[0].split("-")[-1])
    assert 1.5 <= height <= 1.9
    assert cli.main(["matching", "train", "--clips", str(path), "--out", str(tmp_path / "m.npz")]) == 0
    assert (tmp_path / "m.npz").exists()


@pytest.mark.mocap
def test_weak_or_implausible_evidence_is_said_in_one_line(tmp_path, sources):
    clip = sources["cmu_amc/16/16_15.amc"]
    path = tmp_path / "cm.bvh"
    write_convention(clip, "Z up, centimetres", path)
    _, info, _ = imported(path, unit_scale=1.0)  # centimetres read as metres: a 160 m body
    assert any("m tall" in w and "--unit-scale" in w for w in info.warnings), info.warnings
    assert "WARNING" in info.describe()
    _, info, _ = imported(path, axis_up="Y", axis_forward="-Z")  # the wrong up axis, as told: lying down
    assert any("does not stand" in w and "--axis-up" in w for w in info.warnings), info.warnings
    # A rig whose body says nothing about up (no head, equal subtrees, no motion).
    sk = Skeleton(["a", "b", "c", "d"], [-1, 0, 0, 0], [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], [()] * 4)
    *_, weak = orient(sk, np.zeros((5, 3)), quat.identity((5, 4)))
    assert weak.up == "Y" and weak.confidence <= 0.5 and any("--axis-up" in w for w in weak.warnings)


@pytest.mark.mocap
def test_stature_counts_the_head_top_when_the_head_has_no_end_site(tmp_path, sources):
    clip = sources["cmu_amc/16/16_15.amc"]
    for name, lo, hi in (("Y up, inches", 1.58, 1.63), ("head with no end site, centimetres", 1.62, 1.70)):
        write_convention(clip, name, tmp_path / "h.bvh")
        _, info, _ = imported(tmp_path / "h.bvh")
        assert lo <= info.height <= hi, (name, info.height)  # margin: 1.60 m here, 2.5 cm inside either bound


@pytest.mark.mocap
def test_training_refuses_a_library_that_never_moves(sources):
    clip = sources["cmu_amc/16/16_15.amc"]
    still = with_extra_root(clip, (3.0, 0.0, 1.0), moving=False)  # the body moves under a still root
    with pytest.raises(MotionctlError, match="never move.*Fold Extra Roots"):
        clips_of([still])
    assert clips_of([clip]) == [clip]  # count: the same clip objects


@pytest.mark.mocap
def test_retargeted_feet_stand_on_the_targets_own_floor(mocap, sources):
    """Between motionctl skeletons (CMU's ASF, the cgspeed BVH, Character Creator): the planted
    feet's lowest point on the floor, whichever rig's ankles stand higher; and the default Root Bone
    mode works on a skeleton with no root above its hips (CMU's)."""
    cg = load_clip(os.path.join(mocap, "cmu31", "cmu_02_01_walk_mbnames.bvh"), ImportSettings())[0]
    rigs = {"cmu16": sources["cmu_amc/16/16_15.amc"], "cc": sources["cc_base/cc_cmu_07_02_walk.bvh"], "cgspeed": cg}
    for a, src_clip in rigs.items():
        for b, tgt_clip in rigs.items():
            if a == b:
                continue
            src, tgt = Rig.from_skeleton(src_clip.skeleton), Rig.from_skeleton(tgt_clip.skeleton, name=b)
            res = retarget(src_clip, src, tgt, auto_map(src, tgt), RetargetSettings(foot_plant=True))
            q = quality(res, src_clip, src, tgt)
            assert abs(q["sole_median"]) < 0.01 and q["sole_p95"] < 0.025, (a, b, q["sole_median"], q["sole_p95"])
            assert res.added_root is not None and res.added_root[0] in res.locations  # the root bone Bake adds
            travel = np.linalg.norm(res.locations[res.added_root[0]][-1] - res.locations[res.added_root[0]][0])
            assert travel * tgt.scale > 1.0


def test_the_time_left_follows_the_pace_so_far():
    eta = Eta(t0=100.0)
    assert eta.text(now=101.0) == "0:01 elapsed, time left unknown"  # too early to say
    eta.update(0.25, now=110.0)
    assert eta.left(now=110.0) == pytest.approx(30.0) and eta.text(now=110.0) == "0:10 elapsed, about 0:30 left"
    eta.update(0.1, now=111.0)  # progress never goes back
    assert eta.fraction == 0.25 and clock(3725) == "1:02:05"


def test_a_long_step_keeps_printing_the_clock():
    out = io.StringIO()
    with PrintProgress("train", stream=out, stalled=0.3) as progress:
        progress(0.5, "solving")
        time.sleep(1.0)  # a step that reports nothing for a while
    lines = [line for line in out.getvalue().splitlines() if "solving" in line]
    assert len(lines) >= 3 and "elapsed" in lines[-1]
    n = len(out.getvalue().splitlines())
    time.sleep(0.5)
    assert len(out.getvalue().splitlines()) == n  # the ticker stopped with the job


def test_the_hips_are_found_below_a_root_with_helper_children():
    """A game rig's root has the pelvis and helper chains (ik_foot_root, ik_hand_root) as children:
    the body (and its up axis, height and floor) is the pelvis and below, not the root."""
    from motionctl.body import Body

    par = {"pelvis": "root", "spine_01": "pelvis", "spine_02": "spine_01", "neck_01": "spine_02", "head": "neck_01",
           "thigh_l": "pelvis", "calf_l": "thigh_l", "foot_l": "calf_l", "ball_l": "foot_l", "thigh_r": "pelvis",
           "calf_r": "thigh_r", "foot_r": "calf_r", "ball_r": "foot_r", "ik_foot_root": "root",
           "ik_foot_l": "ik_foot_root", "ik_foot_r": "ik_foot_root", "ik_hand_root": "root",
           "ik_hand_gun": "ik_hand_root", "ik_hand_l": "ik_hand_gun", "ik_hand_r": "ik_hand_gun"}
    names = ["root"] + list(par)
    sk = Skeleton(names, [-1] + [names.index(par[n]) for n in names[1:]], np.ones((len(names), 3)),
                  [()] * len(names))
    assert names[Body.of(sk).hips] == "pelvis"
    assert {names[j] for j in Body.of(sk).joints}.isdisjoint({"root", "ik_foot_root", "ik_hand_gun"})
