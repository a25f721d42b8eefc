"""What an animator sees, measured (``evaluate.looks``, ``body.contacts``) and delivered (``play.feet``,
``synth.correct``, ``synth.retime``): the metrics call clean capture clean and a broken run broken,
both ways, and the synthesis keeps planted feet planted while the root goes where it is told."""

from __future__ import annotations

import os
from dataclasses import replace

import numpy as np
import pytest

from motionctl import quat
from motionctl.body import Body
from motionctl.body.contacts import foot_points, foot_skating, point_contacts, skating_of
from motionctl.clip import resample
from motionctl.engines import ENGINES
from motionctl.evaluate.looks import PoseReference, capture_looks, command_error, looks, targets_missed
from motionctl.io.library import import_library
from motionctl.play.feet import FeetSettings, Legs, heel_raise, leg_globals
from motionctl.play.synth import SynthState, frame_table, pieces_to_steps, synthesize, to_clip

# the slow set: every engine but matching, whose fit on the mix is the quickest
SLOW_CASES = {"fragments", "active", "field", "planning", "graph"}

TRIALS = ("16_15", "16_21", "16_31", "16_11", "16_17", "16_35")  # walks, a veer, a turn, a run


@pytest.fixture(scope="module")
def clips(mocap):
    files = [os.path.join(mocap, "cmu_amc", "16", f"{t}.amc") for t in TRIALS]
    return import_library(files).groups[0].database.clips


def drifted(clip, speed: float):
    """The clip with its root (and so the whole body, feet too) pushed sideways at ``speed`` m/s."""
    root = clip.root_pos.copy()
    root[:, 0] += speed * np.arange(clip.n_frames) / clip.fps
    return replace(clip, root_pos=root, name=clip.name + "_drift")


def test_clean_capture_scores_clean_and_the_same_capture_drifting_scores_broken(clips):
    clean = skating_of(clips)
    assert clean["skating"] <= 0.05  # the calibration the docstring states
    assert 0.5 < clean["planted"] < 0.8  # walking: each foot on the floor about two thirds of the time
    slow, fast = skating_of([drifted(c, 0.5) for c in clips]), skating_of([drifted(c, 1.0) for c in clips])
    assert slow["skating"] > clean["skating"] + 0.2  # margin: 0.38 against 0.21 here
    assert fast["skating"] > 0.9
    # margin: 51.8 against 26.4 here
    assert fast["sliding_cm"] > 5 * clean["sliding_cm"]  # a dragged foot travels over each contact
    assert fast["planted"] > 0.4  # a foot dragged over the floor is still on it: the measure sees it


def test_a_walk_played_backwards_glides_backwards_and_the_capture_does_not(clips):
    """``backward_seconds``: the captured walks, veer, turn and run never travel against their
    facing; the same walk played in reverse (the hips going back, the body facing forward, as a
    reversal answered by gliding would) does for nearly its whole length; turned round by 180
    degrees in the world it still walks forwards."""
    from motionctl.evaluate.looks import backward_seconds

    for c in clips:
        assert backward_seconds(c) < 0.1, c.name  # margin: 0 s for every one of them here
    walk = clips[0]
    back = replace(walk, root_pos=walk.root_pos[::-1].copy(), local_rot=walk.local_rot[::-1].copy(), name="back")
    assert backward_seconds(back) > 0.8 * walk.n_frames / walk.fps  # margin: 3.73 of 3.93 s here
    spin = quat.about_axis(2, np.full(walk.n_frames, np.pi))
    turned = replace(walk, root_pos=walk.root_pos * [-1.0, -1.0, 1.0],
                     local_rot=np.concatenate((quat.mul(spin, walk.local_rot[:, 0])[:, None], walk.local_rot[:, 1:]), axis=1))
    assert backward_seconds(turned) < 0.1  # margin: 0 s here


def test_contacts_hold_through_a_stance_and_leave_in_swing(clips):
    walk = resample(clips[0], 30.0)
    c = point_contacts(foot_points(walk), walk.fps).any(axis=-1)
    runs = np.diff(np.r_[0, c[:, 0].astype(int), 0])
    starts, ends = np.flatnonzero(runs == 1), np.flatnonzero(runs == -1)
    assert len(starts) >= 3  # one contact per stride of the left foot
    assert np.median((ends - starts) / walk.fps) == pytest.approx(0.7, abs=0.25)  # a stance, not a frame
    assert not np.all(c.any(axis=1)) or np.mean(c.all(axis=1)) < 0.5  # double support is the exception


@pytest.fixture(scope="module")
def reference(clips):
    return PoseReference.of(clips[:5])  # the walks (the one run has no other run to be near)


def test_held_out_capture_is_near_capture_and_broken_poses_are_not(clips, reference):
    held = reference.held_out()
    assert 0.005 < np.percentile(held, 50) < 0.04 and np.percentile(held, 95) < 0.1
    # margin: 0.163 against 0.050 here
    assert np.percentile(PoseReference.of(clips).held_out(), 95) > np.percentile(held, 95)  # the lone run
    walk = clips[0]
    own = reference.distance(walk)
    assert np.percentile(own, 95) < 1e-3  # a captured clip is its own nearest pose
    # a pose no clip holds: every arm joint turned a third of a turn
    odd = walk.local_rot.copy()
    arms = [j for j, n in enumerate(walk.skeleton.names) if "humerus" in n.lower() or "radius" in n.lower()]
    odd[:, arms] = quat.mul(quat.about_axis(0, np.full(len(arms), 2.0)), odd[:, arms])
    # margin: 0.54 against 0.10 here
    assert np.percentile(reference.distance(replace(walk, local_rot=odd)), 50) > 2 * np.percentile(held, 95)
    # a frozen pose gliding: a mid-stride frame held while the root moves on: its poses do not move as
    # any captured pose does (twice the held-out median away) and its feet slide
    frozen = replace(walk, local_rot=np.repeat(walk.local_rot[walk.n_frames // 2][None], walk.n_frames, 0))
    # margin: 0.054 against 0.046 here (15%)
    assert np.percentile(reference.distance(frozen), 50) > 2 * np.percentile(held, 50)
    assert foot_skating(frozen)["skating"] > 0.5
    # a crouched glide: the run's hips lowered 15 cm, the legs bent to keep the feet down
    low = replace(walk, root_pos=walk.root_pos - [0.0, 0.0, 0.15])
    looked = looks(low, reference)
    src = capture_looks(clips[:5], reference)
    assert looked["root_height"]["p95"] < src["root_height"]["p5"]  # margin: 0.83 m against 0.94 m here


def test_targets_name_what_a_broken_run_misses(clips, reference):
    src = capture_looks(clips[:5], reference)
    good = looks(clips[0], reference, clips[0].duration)
    assert targets_missed(good, src) == []
    bad = looks(drifted(clips[0], 1.0), reference, clips[0].duration + 1.0)
    missed = targets_missed(bad, src)
    assert any("slide" in m for m in missed) and any("lasts" in m for m in missed)
    glide = looks(drifted(clips[0], 0.3), reference, clips[0].duration)  # under the skating threshold
    assert any("cm per step" in m for m in targets_missed(glide, src))
    root = clips[0].root_pos.copy()
    root[:, 2] += 0.3  # the whole body hovering 30 cm up: no foot ever down, so nothing "slides"
    hover = looks(replace(clips[0], root_pos=root), reference, clips[0].duration)
    assert hover["skating"] == 0.0 and any("on the floor" in m for m in targets_missed(hover, src))


def test_command_error_is_zero_for_the_capsule_and_grows_off_it(clips):
    from motionctl.clip import Clip
    from motionctl.evaluate.looks import capsule
    from motionctl.rootframe import root_frame

    sk = clips[0].skeleton
    times, controls = np.array([0.0, 1.0]), np.array([[0.0, 1.0, 0.0, 0.0], [0.0, 1.0, 0.5, 0.0]])
    ground, yaw = capsule(times, controls, 30.0, 60, (0.0, 0.0), 0.0)
    still = Clip("still", sk, 30.0, np.zeros((1, 3)), quat.identity((1, sk.n_joints)))
    rest_yaw = root_frame(still, 0.0)[1][0]  # which way the skeleton faces at rest
    rot = quat.identity((60, sk.n_joints))
    rot[:, 0] = quat.about_axis(2, yaw - rest_yaw)
    clip = Clip("c", sk, 30.0, np.column_stack((ground, np.ones(60))), rot)
    err = command_error(clip, times, controls)
    assert err["position_m"]["p95"] < 0.02 and err["heading_deg"]["p95"] < 2.0
    off = replace(clip, root_pos=clip.root_pos + [0.3, 0.0, 0.0])
    assert command_error(off, times, controls)["position_m"]["p50"] == pytest.approx(0.3, abs=0.01)


# --------------------------------------------------------------------------- the synthesis

@pytest.fixture(scope="module")
def walk_table(clips):
    return frame_table([resample(clips[0], 30.0)])


def play_pieces(table, speed_factor: float, turn: float, feet):
    n = int(table.length[0])
    pieces = np.array([[0, s, min(5, n - s)] for s in range(0, n - 1, 5)])
    speed = np.linalg.norm(np.diff(table.ground, axis=0), axis=1).mean() * table.fps
    ctrl = np.tile([0.0, speed * speed_factor, turn, 0.0], (len(pieces), 1))
    root, rot, _, counts, _ = synthesize(table, pieces_to_steps(pieces, ctrl), SynthState(np.zeros(2), 0.0), 3, 1.0, feet)
    return to_clip(table, root, rot), counts


@pytest.mark.parametrize("factor, turn", [(1.15, 0.0), (1.0, 0.3), (1.2, 0.3), (0.85, -0.2)])
def test_planted_feet_stay_planted_where_the_root_goes_otherwise(walk_table, factor, turn):
    dragged, _ = play_pieces(walk_table, factor, turn, None)
    planted, _ = play_pieces(walk_table, factor, turn, FeetSettings())
    src = foot_skating(walk_table.clips[0])
    assert foot_skating(planted)["skating"] <= src["skating"] + 0.05  # margin: 0.013 against 0.05 at the nearest
    # margin: 1.6 cm against 8.6 cm at the nearest
    assert foot_skating(planted)["sliding_cm"] < foot_skating(dragged)["sliding_cm"]
    # the root still went (about) as fast as it was told
    speed = np.linalg.norm(np.diff(planted.root_pos[:, :2], axis=0), axis=1).sum() / planted.duration
    asked = np.linalg.norm(np.diff(dragged.root_pos[:, :2], axis=0), axis=1).sum() / dragged.duration
    assert speed == pytest.approx(asked, rel=0.1)


def test_a_faster_control_plays_the_capture_faster_not_longer_strides(walk_table):
    _, counts_same = play_pieces(walk_table, 1.0, 0.0, FeetSettings())
    _, counts_fast = play_pieces(walk_table, 1.2, 0.0, FeetSettings())
    # margin: 100 frames against 0.9 x 119 = 107 here
    assert counts_fast.sum() < 0.9 * counts_same.sum()  # the same steps in fewer frames


def test_heel_raise_turns_the_foot_about_its_toe_to_reach():
    hip = np.array([[0.0, 0.0, 0.9]])
    toe = np.array([[0.0, -0.45, 0.02]])
    v = np.array([[0.0, -0.15, 0.06]])  # toe to ankle: the ankle behind and above the toe
    ankle, q = heel_raise(hip, toe, v, np.array([0.88]))
    assert np.linalg.norm(ankle - hip) == pytest.approx(0.88, abs=1e-6)
    # margin: 0.17 m against 0.08 m
    assert ankle[0, 2] > toe[0, 2] + v[0, 2]  # the heel went up
    assert np.linalg.norm(ankle - toe) == pytest.approx(np.linalg.norm(v), abs=1e-9)  # about the toe
    assert np.allclose(quat.rotate(q, v), ankle - toe, atol=1e-9)


def test_leg_chains_match_forward_kinematics(clips):
    c = resample(clips[0], 30.0)
    table = frame_table([c])
    legs = Legs.of(c.skeleton)
    pos, _, toe = leg_globals(legs, table.local_rot, table.height)
    world, _ = c.world()
    from motionctl.rootframe import to_root_frame

    rel = to_root_frame(world, table.ground, table.yaw)
    assert np.allclose(pos[:, :, -1], rel[:, legs.chains[:, -1]], atol=1e-6)
    assert np.allclose(toe, rel[:, legs.toes], atol=1e-6)


def test_a_trained_models_summary_shows_how_it_looks_and_warns_when_worse(clips):
    """The summary box (engines.base.summary_lines): the check run's skating, sliding and pose
    distance beside the capture's; a warning line only when a target is missed."""
    from motionctl.engines import ENGINES
    from motionctl.engines.base import summary_lines
    from motionctl.evaluate.looks import model_looks

    engine = ENGINES["graph"]
    model = engine.fit(clips, engine.Settings())
    info = model_looks(model, clips)
    run, capture = info["looks"]["run"], info["looks"]["capture"]
    assert run["run_seconds"] == pytest.approx(run["trace_seconds"], abs=0.05)
    # margin: 0.012 against 0.061 here
    assert run["skating"] <= capture["skating"] + 0.05 and info["looks_missed"] == []
    lines = summary_lines(engine, dict(model.summary(), **info))
    texts = [t for t, w in lines if not w]
    assert any(t.startswith("feet sliding: ") and "(capture " in t for t in texts)
    assert any(t.startswith("pose distance p95: ") for t in texts)
    assert not any(w and t.startswith("looks worse") for t, w in lines)
    broken = dict(info, looks_missed=["feet slide on 40% of contact frames (capture 1%)"])
    assert [t for t, w in summary_lines(engine, broken) if w and t.startswith("looks worse")] == [
        "looks worse than the capture: feet slide on 40% of contact frames (capture 1%)"]


# Issue 34's mix, as the Library panel lists it: walks, veers, 90° turns, two runs, a forward jump.
MIX = ("05", "11", "13", "15", "16", "17", "19", "21", "23", "31", "35", "36")


@pytest.fixture(scope="module")
def mix(mocap):
    files = [os.path.join(mocap, "cmu_amc", "16", f"16_{t}.amc") for t in MIX]
    return import_library(files).groups[0].database.clips


# Fragments is tested at its defaults: at its quick settings (30 s of training play, not 210) its
# check walk's poses are 9.6 cm from the capture (p95; with OpenBLAS's AVX-512 and AVX2 kernels
# alike) against 9.45 allowed, at its defaults 9.1; planted feet add most of it for every engine
# (fragments 5.6 cm p95 unplanted; the graph's 2.3 -> 4.9).  The defaults' fit takes 24 s here, the
# quick one 19 s.
AT_DEFAULTS = {"fragments"}


# Judged by its worst second too (issue 59), fragments misses on this walk: measured at its defaults
# (at this stop's foot locking; at 68731a3 before it: 12%, 67%, 6 frames, 10 cm), it slides on 10% of
# contact frames (the capture 1%), on 67% in its worst second (3.8-4.8 s; the capture's worst 10%),
# and its poses are 11 cm from capture (p95; held-out 6); no toe outruns the capture's any more.
# Issue 59's item 3 is to fix it.  The
# graph's toe outran them on 1 frame at a switch until its turning stick was asked ahead (c09f94a):
# now its worst second slides 3.4% (15.4% allowed), its fastest toe 6.0 m/s (7.2).
WORST_SECOND_MISSED = pytest.mark.xfail(strict=True, reason="issue 59: the worst second (41% of contact frames sliding at 3.6-4.7 s)")


@pytest.mark.parametrize("name", [pytest.param(e, marks=WORST_SECOND_MISSED) if e == "fragments" else e
                                  for e in sorted(ENGINES)])
def test_every_engine_looks_like_its_capture(mix, name):
    """Each engine (at its quick settings, as the contract test trains it, fragments at its
    defaults, see AT_DEFAULTS; the defaults are measured by bench/bench_looks.py) on a dozen of
    subject 16's clips ticked as an animator would, playing the summary box's check walk (left,
    then right) as Play Trace plays it: its feet slide no more than 5 points above the capture's, no
    slow glide, a foot down as often, poses within 1.5 times the held-out capture's distance, and the
    run exactly as long as its trace, over the run and in its worst second (``targets_missed`` is
    empty)."""
    from motionctl.evaluate.looks import model_looks
    from motionctl.settings import from_flat

    engine = ENGINES[name]
    settings = engine.Settings() if name in AT_DEFAULTS else from_flat(engine.Settings, engine.quick)
    info = model_looks(engine.fit(mix, settings), mix)
    run = info["looks"]["run"]
    assert info["looks_missed"] == [], info["looks_missed"]
    assert run["run_seconds"] == pytest.approx(run["trace_seconds"], abs=1e-6)
    assert 0.3 < run["planted"] and run["root_height"]["p5"] > 0.85  # walking upright, feet down


def dragged_stance(walk_table, n: int, speed: float, settings, lifted=slice(0, 0)):
    """A capture's first (standing) pose held for ``n`` frames while its root is dragged forward at
    ``speed`` m/s, both feet 'planted' but for the frames ``lifted``, locked by ``plant``: (the
    ankles' and the toes' world ground velocities [n - 1, 2, 2])."""
    from motionctl.play.feet import plant
    from motionctl.rootframe import to_world

    fps = walk_table.fps
    rot = np.repeat(walk_table.local_rot[:1], n, axis=0)
    height = np.repeat(walk_table.height[:1], n)
    contact = np.ones((n, 2), dtype=bool)
    contact[lifted] = False
    ground = np.column_stack((np.zeros(n), speed * np.arange(n) / fps))
    yaw = np.zeros(n)
    out, _ = plant(walk_table.legs, fps, rot, height, contact, ground, yaw, ground, yaw, None, settings)
    pos, _, toe = leg_globals(walk_table.legs, out, height)
    return tuple(np.diff(ground[:, None] + to_world(p[..., :2], yaw[:, None]), axis=0) * fps
                 for p in (pos[:, :, -1], toe))


def largest_change(v):
    """The largest change of a velocity [n, 2, 2] from one frame to the next (m/s)."""
    return float(np.linalg.norm(np.diff(v, axis=0), axis=-1).max())


def test_a_foot_let_go_mid_contact_is_locked_again_where_it_is(walk_table):
    """A standing pose dragged forward at 1 m/s with both feet 'planted' for 2 s: each lock lets go
    once pulled past ``unlock_radius`` and, after springing back for ``relock_after``, holds the
    foot where it is again, so the feet stand still more of the time instead of sliding from the
    first release to the contact's end."""
    never, _ = dragged_stance(walk_table, 60, 1.0, FeetSettings(relock_after=1e9))
    again, _ = dragged_stance(walk_table, 60, 1.0, FeetSettings())
    still = lambda v: float(np.mean(np.linalg.norm(v, axis=-1) < 0.1))  # noqa: E731
    assert still(again) > 1.5 * still(never)  # margin: 0.186 against 0.127 (0.085 never: 22 frames against 10)
    # and no relock pops the foot: it eases in from where the spring has the foot (until c09f94a
    # a relock jumped the ankle to its pose for a frame and back: 6.0 m/s; now 1.7)
    assert largest_change(again) < 3.0


def test_a_foot_landing_while_its_release_springs_back_does_not_pop(walk_table):
    """A standing pose dragged forward at 0.5 m/s, its feet 'planted' but lifted for 10 frames: each
    lock lets go with its gap, which springs back, and the next lock eases in from where the spring
    has the foot (until c09f94a the landing jumped it from there to its pose in one frame: 2.4 m/s
    of velocity change in a frame)."""
    v, _ = dragged_stance(walk_table, 60, 0.5, FeetSettings(), lifted=slice(20, 30))
    assert largest_change(v) < 1.5  # margin: 0.62 m/s here
    assert np.mean(np.linalg.norm(v[30:], axis=-1) < 0.1) > 0.3  # and the new lock holds: 48% still here


def test_a_raised_heel_lets_go_without_the_toe_jumping(walk_table):
    """A standing pose dragged forward at 1 m/s, its feet 'planted' for the whole second: each
    locked foot, pulled out of the leg's reach, rises on its toe (``heel_raise``), and when the lock
    fails the heel comes down over ``HEEL_HALFLIFE`` rather than in one frame (at 384a62f and
    before, the toe's velocity changed by 3.4 m/s in a frame here, now 1.9; fragments' toes
    outran any captured toe so, 8.4 m/s against 7.2 on the mix's 1.0 rad/s turn, now 6.1)."""
    only_reach = FeetSettings(unlock_radius=10.0, relock_after=1e9)  # only the reach lets go
    _, toe = dragged_stance(walk_table, 30, 1.0, only_reach)
    # margin: 1.93 m/s here against 2.5 (the heel comes down over HEEL_HALFLIFE, 0.02 s: at this
    # 30 fps within a frame or two; over 0.05 s the feet slid more on the stress bench's turns)
    assert largest_change(toe) < 2.5


def toe_velocity_change(clip) -> np.ndarray:
    """[2] each toe's largest change of world velocity from one frame to the next (m/s), the run's
    first and last three frames left out (where a run of pieces starts and ends)."""
    pos, _ = clip.world()
    feet = Body.of(clip.skeleton).feet
    v = np.diff(pos[:, [feet["L"][1], feet["R"][1]]], axis=0) * clip.fps
    return np.linalg.norm(np.diff(v, axis=0), axis=-1)[3:-3].max(axis=0)


@pytest.mark.parametrize("trial", ["16_15", "16_11"])
@pytest.mark.parametrize("turn", [0.0, 0.3])
def test_a_toe_leaving_the_floor_leaves_as_captured(clips, trial, turn, monkeypatch):
    """A captured walk played at its own speed: a locked foot rolling off its toe (still a contact:
    the detector lets go late, when the toe already moves at about 1.8 m/s) follows the capture's
    toe as it rises, so the lock lets go of a foot already moving, and the toe's velocity changes
    from frame to frame no more than the capture's (a toe held still to the contact's end jumped to
    its pose's 2 m/s in one frame: every engine's switches popped on the toe; stress bench, motion
    matching on the others library, switch-jump p90 2.85 m/s against the capture's 1.29)."""
    import motionctl.play.feet as feet

    table = frame_table([resample(clips[TRIALS.index(trial)], 30.0)])
    captured = toe_velocity_change(table.clips[0])
    played, _ = play_pieces(table, 1.0, turn, FeetSettings())
    # margin: 1.13x the capture's at the most here; 1.5-1.8x with the toe held (below)
    assert np.all(toe_velocity_change(played) <= 1.25 * captured)
    monkeypatch.setattr(feet, "LEAVING", (1e9, 2e9, 3e9))  # never followed
    held, _ = play_pieces(table, 1.0, turn, FeetSettings())
    # margin: 1.5-1.8x the capture's here: the test sees the pop it guards against
    assert np.any(toe_velocity_change(held) > 1.25 * captured)
