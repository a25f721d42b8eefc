"""Speed and stop: the direction task's asked speed (``GridTask`` with speeds) against hand-computed
cases, the capture's speed range and what the UI says outside it, and, on real capture, the motion
field stopping when asked and the look-ahead graph choosing by speed, where the same engines with
speed left out (the papers' tasks) do not."""

import os

import numpy as np
import pytest

from motionctl.engines.field import FieldSettings
from motionctl.engines.field import fit as fit_field
from motionctl.evaluate.scoreboard import speed_response_time, stop_response_time
from motionctl.io.library import import_library
from motionctl.play.commands import PlaySettings, speed_note, speed_range
from motionctl.play.synth import frame_table
from motionctl.play.tasks import HEADINGS, GridTask, speed_samples

WALK, RUN = 1.3, 3.0
CLIPS = ("15", "16", "35", "36", "33")  # CMU 16: two walks, two runs, a slow walk that stops
GEARS = ("15", "16", "21", "31", "58", "33", "35", "36")  # five walks (one brisk), a stop, two runs


def test_direction_task_with_speeds_keeps_the_asked_speed_and_rewards_meeting_it():
    fps = 30.0
    task = GridTask("direction", speeds=(0.0, 1.0 / fps, 2.0 / fps, 3.0 / fps), speed_weight=1.0 * fps)
    assert task.shape == (HEADINGS, 4) and task.grid().shape == (HEADINGS * 4, 2) and task.n_corners == 4
    t2 = task.step(np.array([0.5, 2.0 / fps]), np.array([0.0, 1.5 / fps, 0.2]))
    assert np.allclose(t2, [0.3, 2.0 / fps])  # the heading turns, the asked speed stays
    # 1.5 m/s when 2 m/s is asked: 0.5 m/s off at 1 per m/s, plus the heading's 0.3
    assert task.reward(t2, np.array([0.0, 1.5 / fps, 0.2])) == pytest.approx(-0.8)
    values = np.zeros(task.size)
    values[4 * 4 + 2] = 1.0  # heading sample 4, 2 m/s
    th = task.headings()[4]
    assert task.interpolate(values, np.array([th, 2.0 / fps])) == pytest.approx(1.0)
    assert task.interpolate(values, np.array([th, 2.5 / fps])) == pytest.approx(0.5)
    assert task.interpolate(values, np.array([th, 9.0 / fps])) == 0.0  # beyond the fastest: the fastest
    with pytest.raises(ValueError, match="speeds"):
        GridTask("line", speeds=(0.0, 1.0))
    with pytest.raises(ValueError, match="ascending"):
        GridTask("direction", speeds=(1.0, 0.5))


def test_speed_samples_span_standing_to_the_fastest_the_capture_does():
    speeds = np.r_[np.zeros(50), np.full(200, 1.2), np.linspace(2.5, 3.2, 100)]
    s = speed_samples(speeds, 5)
    assert s[0] == 0.0 and len(s) == 5 and np.all(np.diff(s) > 0)
    assert s[1] == pytest.approx(1.2) and 3.0 <= s[-1] <= 3.2
    assert len(speed_samples(speeds, 0)) == 0 and len(speed_samples(speeds, 1)) == 0


def test_the_ui_says_when_a_speed_is_beyond_the_capture():
    assert "fastest is 3.1 m/s" in speed_note(5.0, 0.9, 3.1)
    assert "slowest walk is 0.9" in speed_note(0.5, 0.9, 3.1)
    assert speed_note(1.3, 0.9, 3.1) == "" and speed_note(0.0, 0.9, 3.1) == ""  # standing is always asked


@pytest.fixture(scope="module")
def clips(mocap):
    files = [os.path.join(mocap, "cmu_amc", "16", f"16_{t}.amc") for t in CLIPS]
    return import_library(files).groups[0].database.clips


def test_the_capture_speed_range_is_its_walks_to_its_runs(clips):
    slow, fast = speed_range(frame_table(clips, clips[0].skeleton))
    assert 0.5 < slow < 1.3 and 2.5 < fast < 4.5


@pytest.mark.slow
def test_the_field_stops_when_asked_and_without_speed_it_does_not(clips):
    """A stop asked from a walk: the field that knows speed stands; the paper's direction task
    (heading only, keeping moving) walks on.  (Walk to run is tested on a mix with a brisk walk
    below: here the walks and runs have nothing between them, 1.0-1.1 against 2.7-2.8 m/s, and
    asked to run the field settles near 1.7 m/s.)"""
    def stop(model):
        table = model.play(clips)
        return stop_response_time(model, table, int(table.first[0] + table.length[0] // 2), WALK, play=PlaySettings())

    got = stop(fit_field(clips, FieldSettings()))
    assert np.isfinite(got["stop"]) and got["settled"] < 0.2, got
    paper = stop(fit_field(clips, FieldSettings(speed_samples=0)))
    assert not np.isfinite(paper["stop"]) and paper["settled"] > 0.5, paper


@pytest.mark.slow
def test_the_fields_speed_actions_take_a_walk_to_a_run_and_without_them_it_cannot(mocap):
    """Five walks, a stop and two runs: a walking state's k neighbours are all walks, so the field
    of the paper's k actions, asked to run, never gets there; its two speed actions (the captured
    state nearest to it moving 0.5 m/s faster or slower, blended in) reach the run and hold it, and
    stop the walk."""
    files = [os.path.join(mocap, "cmu_amc", "16", f"16_{t}.amc") for t in GEARS]
    clips = import_library(files).groups[0].database.clips

    def trials(model):
        table = model.play(clips)
        start = int(table.first[0] + table.length[0] // 2)
        run = speed_response_time(model, table, start, WALK, RUN, play=PlaySettings())
        return run, stop_response_time(model, table, start, WALK, play=PlaySettings())

    run, stop = trials(fit_field(clips, FieldSettings()))
    assert np.isfinite(run["speed"]) and run["settled"] > 0.9, run
    assert np.isfinite(stop["stop"]) and stop["settled"] < 0.2, stop
    plain, _ = trials(fit_field(clips, FieldSettings(speed_actions=0.0)))
    assert not np.isfinite(plain["speed"]) and plain["settled"] < 0.7, plain


class TwoClips:
    """A graph of two straight clips, 30 frames each, one at 1 m/s and one at 3 m/s, each able to
    follow either."""

    n = 2
    edges = np.array([[0, 0], [0, 1], [1, 0], [1, 1]])


def test_the_look_ahead_graph_chooses_by_the_asked_speed_and_without_speed_it_cannot():
    from motionctl.engines.graph.lookahead import choose, learn

    yaws = (np.zeros((2, 30)), np.array([30, 30]))
    speed = np.array([1.0, 3.0])
    warps = np.zeros(1)
    look = learn(TwoClips(), yaws, np.zeros(2), warps, clip_speed=speed, speed_count=3)
    assert len(look.speeds) == 3 and look.values.shape == (2, HEADINGS * 3)
    pick = {v: choose(look, *yaws, np.arange(2), 0.0, np.zeros(2), v, speed)[0] for v in (0.8, 1.2, 2.8, 4.0)}
    assert pick == {0.8: 0, 1.2: 0, 2.8: 1, 4.0: 1}  # count: integer clip indices
    blind = learn(TwoClips(), yaws, np.zeros(2), warps, clip_speed=speed, speed_count=0)
    assert len(blind.speeds) == 0 and blind.values.shape == (2, HEADINGS)
    assert {choose(blind, *yaws, np.arange(2), 0.0, np.zeros(2), v, speed)[0] for v in (0.8, 2.8)} == {0}


@pytest.mark.slow
def test_planning_slows_and_stops_when_asked_and_without_speed_it_does_not(clips):
    """Navigation with the asked speed in its state (our extension of paper 001's task): from a
    run asked to walk it walks, from a walk asked to stop it stands; the paper's task, which
    knows only the heading, runs on and walks on."""
    from motionctl.engines.planning import PlannerSettings
    from motionctl.engines.planning import fit as fit_planning
    from motionctl.evaluate.scoreboard import speed_response_time

    def answers(model):
        table = model.play(clips)
        walking, running = (int(table.first[c] + table.length[c] // 2) for c in (0, 2))
        play = PlaySettings()
        return (speed_response_time(model, table, running, RUN, WALK, play=play),
                stop_response_time(model, table, walking, WALK, play=play))

    model = fit_planning(clips, PlannerSettings())
    assert model.planner.problem.task.names == ("theta", "speed")
    slow, stop = answers(model)
    assert np.isfinite(slow["speed"]) and abs(slow["settled"] - 1.0) < 0.15, slow
    assert np.isfinite(stop["stop"]) and stop["settled"] < 0.2, stop
    slow, stop = answers(fit_planning(clips, PlannerSettings(follow_speed=False)))
    assert not np.isfinite(slow["speed"]) and not np.isfinite(stop["stop"]) and stop["settled"] > 0.5, (slow, stop)


def test_matching_stops_standing_and_slows_from_a_run(clips):
    """From a run asked to stop, motion matching stands, in a standing pose, not a running pose
    held still (a trajectory that stopped at a clip's end made every run clip's last second look
    like a stop) nor one gliding on at the held frame's speed; from a run asked to walk, it walks."""
    from motionctl.engines.matching import fit as fit_matching
    from motionctl.evaluate.scoreboard import run_of, speed_response_time
    from motionctl.play.commands import Command
    from motionctl.play.session import Session

    model = fit_matching(clips)
    table = model.play(clips)
    running = int(table.first[2] + table.length[2] // 2)
    slow = speed_response_time(model, table, running, RUN, WALK, play=PlaySettings())
    assert np.isfinite(slow["speed"]) and abs(slow["settled"] - 1.0) < 0.15, slow
    session = Session(model, table, frame=running, play=PlaySettings())
    yaw = session.synth.yaw
    while session.n_frames < 2 * table.fps:
        session.decide(Command(heading=yaw, speed=RUN))
    while session.n_frames < 8 * table.fps:
        session.decide(Command(heading=yaw, speed=0.0))
    clip = run_of(session).clip
    last = clip.slice(clip.n_frames - int(2 * clip.fps), clip.n_frames)
    assert np.linalg.norm(np.diff(last.root_pos[:, :2], axis=0), axis=1).sum() < 0.3  # standing: under 0.15 m/s
    pos, _ = last.world()
    feet = pos[-1][[i for i, n in enumerate(clip.skeleton.names) if n in ("lfoot", "rfoot")]]
    assert np.hypot(*(feet[0, :2] - feet[1, :2])) < 0.5  # feet together, not a stride held still


def test_a_stick_let_go_stops_facing_where_the_character_faced(mocap):
    """A trace that lets go of the stick asks every engine to stop and to keep facing the way the
    character faced (``Session._standing``): asked "face where you face now" again every decision,
    turning was free, and on clips without a stop the engines walked in circles."""
    from motionctl.engines.matching import fit as fit_matching
    from motionctl.play.commands import Trace
    from motionctl.play.session import Session
    from motionctl.rootframe import root_frame

    names = ("15", "16", "17", "19", "35", "36")  # walks, 90° turns, runs: no stop
    clips = import_library([os.path.join(mocap, "cmu_amc", "16", f"16_{t}.amc") for t in names]).groups[0].database.clips
    model = fit_matching(clips)
    samples = np.tile([0.0, 1.3, 0.0, 0.0], (80, 1))
    samples[30:60] = 0.0  # 3 s walking, 3 s let go, 2 s walking
    clip = Session(model, model.play(clips), play=PlaySettings()).play_trace(Trace(samples, 10.0, "let go"))
    _, yaw = root_frame(clip, 0.2)
    yaw = np.degrees(np.unwrap(yaw))
    let_go = slice(int(3.0 * clip.fps), int(6.0 * clip.fps))
    assert np.ptp(yaw[let_go]) < 30.0, np.ptp(yaw[let_go])
    assert np.ptp(yaw) < 45.0  # and it walks on the way it went
