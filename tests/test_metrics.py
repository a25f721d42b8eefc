"""The one metrics module every benchmark and the Compare box use (DESIGN.md 3.7): responses timed
on motion whose answer is known, switches and velocity jumps, path distance, and replaying a run's
commands on their clock."""

from dataclasses import replace

import numpy as np
import pytest

from motionctl.io.demo_data import Gait, synthesize
from motionctl.errors import MotionFileError
from motionctl.rootframe import root_frame
from motionctl.evaluate.scoreboard import (Run, discontinuity, path_commands, path_distance, response_spread,
                                           responses, switches, velocity_jumps)
from motionctl.play.commands import Command, commands_from_arrays, commands_to_arrays, load_timeline, save_timeline
from motionctl.play.synth import Frames, Step

FPS = 30.0


def gait_clip(forward, turn):
    n = len(forward)
    return synthesize(Gait(np.asarray(forward, float), np.zeros(n), np.asarray(turn, float), np.zeros(n)), FPS)


def run_with(clip, decisions_heading, decisions_speed, per: int = 3):
    """A Run of ``clip`` with one decision every ``per`` frames asking these headings and speeds."""
    n = clip.n_frames // per
    return Run(clip, np.arange(n) * per, np.asarray(decisions_heading[:n], float), np.asarray(decisions_speed[:n], float),
               np.zeros(n, dtype=bool))


def test_direction_response_is_the_time_the_motion_takes_to_turn():
    # straight for 2 s, then turning left at 1 rad/s for 2 s, then straight: asked to face 90° left at 2 s
    f = int(6 * FPS)
    t = np.arange(f) / FPS
    turn = np.where((t >= 2.0) & (t < 2.0 + np.pi / 2), 1.0, 0.0)
    clip = gait_clip(np.full(f, 1.3), turn)
    n = f // 3
    yaw0 = root_frame(clip, 0.2)[1][0]
    heading = yaw0 + np.where(np.arange(n) * 3 / FPS < 2.0, 0.0, np.pi / 2)
    got = responses(run_with(clip, heading, np.full(n, 1.3)), "direction")
    assert len(got) == 1
    # 85 degrees at 1 rad/s is 1.48 s; the root frame's heading is smoothed over 0.2 s
    assert 1.3 < got[0] < 1.8
    # asked for 90° right instead: it never gets there
    never = responses(run_with(clip, 2 * yaw0 - heading, np.full(n, 1.3)), "direction", limit=3.0)
    assert len(never) == 1 and np.isinf(never[0])


def test_speed_response_is_the_time_the_motion_takes_to_speed_up():
    f = int(7 * FPS)
    t = np.arange(f) / FPS
    forward = np.where(t < 2.0, 1.3, np.minimum(1.3 + (t - 2.0) * 1.0, 2.6))  # 1.3 s of acceleration
    clip = gait_clip(forward, np.zeros(f))
    n = f // 3
    speed = np.where(np.arange(n) * 3 / FPS < 2.0, 1.3, 2.6)
    got = responses(run_with(clip, np.zeros(n), speed), "speed")
    assert len(got) == 1 and 0.6 < got[0] < 1.6  # within 10% (2.34 m/s) after ~1 s, over a stride's average


def test_small_changes_are_no_trials():
    clip = gait_clip(np.full(90, 1.3), np.zeros(90))
    yaw0 = root_frame(clip, 0.2)[1][0]
    small = yaw0 + np.r_[np.zeros(15), np.full(15, 0.2)]  # 11°
    assert len(responses(run_with(clip, small, np.full(30, 1.3)), "direction")) == 0
    assert len(responses(run_with(clip, yaw0 + np.r_[np.zeros(15), np.full(15, 0.6)], np.full(30, 1.3)),
                         "direction", limit=0.5)) == 1  # 34°: a trial (never reached within 0.5 s)
    assert len(responses(run_with(clip, np.zeros(30), np.r_[np.full(15, 1.3), np.full(15, 1.5)]), "speed")) == 0


def test_a_command_replaced_before_it_was_reached_is_a_miss():
    # walking straight for 6 s: asked to face 90° left at 2 s and, 1 s later, back ahead: the first
    # never got there before it was replaced (a miss, not dropped), the second was already met
    f = int(6 * FPS)
    clip = gait_clip(np.full(f, 1.3), np.zeros(f))
    yaw0 = root_frame(clip, 0.2)[1][0]
    n = f // 3
    t = np.arange(n) * 3 / FPS
    heading = yaw0 + np.where((t >= 2.0) & (t < 3.0), np.pi / 2, 0.0)
    got = responses(run_with(clip, heading, np.full(n, 1.3)), "direction")
    assert len(got) == 1 and np.isinf(got[0])
    # a turn that does get there within the hold counts as reached, however short the hold
    turn = np.where((np.arange(f) / FPS >= 2.0) & (np.arange(f) / FPS < 2.0 + np.pi / 2), 1.0, 0.0)
    turning = gait_clip(np.full(f, 1.3), turn)
    yaw1 = root_frame(turning, 0.2)[1][0]
    heading = yaw1 + np.where(t < 2.0, 0.0, np.where(t < 3.8, np.pi / 2, np.pi / 2 + 0.1))
    got = responses(run_with(turning, heading, np.full(n, 1.3)), "direction")
    assert len(got) == 1 and 1.3 < got[0] < 1.8


def test_a_stop_is_timed_until_the_character_stands():
    f = int(7 * FPS)
    t = np.arange(f) / FPS
    forward = np.where(t < 2.0, 1.3, np.maximum(1.3 - (t - 2.0) * 1.3, 0.0))  # 1 s to a standstill
    clip = gait_clip(forward, np.zeros(f))
    n = f // 3
    speed = np.where(np.arange(n) * 3 / FPS < 2.0, 1.3, 0.0)
    got = responses(run_with(clip, np.zeros(n), speed), "stop")
    assert len(got) == 1 and 0.6 < got[0] < 1.6
    assert len(responses(run_with(clip, np.zeros(n), speed), "speed")) == 0  # a stop is no speed trial
    walking_on = gait_clip(np.full(f, 1.3), np.zeros(f))  # asked to stop, it walks on: a miss
    got = responses(run_with(walking_on, np.zeros(n), speed), "stop", limit=3.0)
    assert len(got) == 1 and np.isinf(got[0])


def test_the_spread_reports_the_share_reached_beside_the_times_of_those_reached():
    s = response_spread([1.0, 2.0, np.inf, 3.0, np.nan])
    assert s["n"] == 4 and s["reached"] == 0.75 and s["median"] == 2.0 and s["p90"] == 3.0
    none = response_spread([np.inf, np.inf])
    assert none["reached"] == 0.0 and none["median"] is None
    assert response_spread([])["n"] == 0


def test_switches_are_the_decisions_that_leave_the_clip():
    steps = [Step.piece(0, 0, 10), Step.piece(0, 10, 10), Step.piece(1, 0, 10), Step.piece(1, 10, 10),
             Step(np.array([[0, 0, 10, 0.5], [1, 0, 10, 0.5]])), Step.piece(1, 30, 10)]
    frames = Frames(np.zeros((1, 2, 4)), np.zeros(1), np.zeros((1, 3)))
    steps += [Step(frames=frames, switch=False), Step(frames=frames, switch=True), Step(frames=frames)]
    assert switches(steps).tolist() == [False, False, True, False, True, True, False, True, True]


def test_a_splice_shows_a_velocity_jump_where_the_motion_is_smooth():
    walk = gait_clip(np.full(120, 1.3), np.zeros(120))
    deg, lin = velocity_jumps(walk)
    root = walk.root_pos[75:] - walk.root_pos[75] + 2 * walk.root_pos[59] - walk.root_pos[58]  # ground continues
    spliced = replace(walk, root_pos=np.concatenate((walk.root_pos[:60], root)),
                      local_rot=np.concatenate((walk.local_rot[:60], walk.local_rot[75:])))
    deg2, lin2 = velocity_jumps(spliced)
    assert max(deg2[59], deg2[60]) > 3 * np.percentile(deg[2:-2], 99)  # margin: 1710 against 1460 here
    assert max(lin2[59], lin2[60]) > 2 * np.percentile(lin[2:-2], 99)  # margin: 20.1 against 4.2 here
    run = Run(spliced, np.array([0, 60]), np.zeros(2), np.zeros(2), np.array([False, True]))
    d = discontinuity(run)
    assert d["deg_s"][0] == pytest.approx(max(deg2[60], deg2[59])) and len(d["m_s"]) == 1


def test_path_distance():
    path = np.array([[0.0, 0.0], [0.0, 4.0], [4.0, 4.0]])
    pts = np.array([[1.0, 2.0], [-1.0, -1.0], [2.0, 5.0], [0.0, 4.0]])
    assert np.allclose(path_distance(path, pts), [1.0, np.sqrt(2), 1.0, 0.0])


def test_commands_round_trip_through_a_timeline_file(tmp_path):
    commands = [Command([0, 1.2, 0, 0]), Command(heading=1.0, speed=3.0), Command([0, 0, 0, 1], action="kick",
                target=np.array([1.0, 2.0]), line=np.array([0.0, 1.0, 0.5]))]
    back = commands_from_arrays(commands_to_arrays(commands))
    assert back[1].heading == 1.0 and back[1].speed == 3.0 and back[0].heading is None and back[0].speed is None
    assert back[2].action == "kick" and np.allclose(back[2].target, [1, 2]) and back[2].gate is None
    path = save_timeline(tmp_path / "run", [0.0, 0.1, 0.2], commands, {"engine": "x"})
    times, loaded, meta = load_timeline(path)
    assert np.allclose(times, [0, 0.1, 0.2]) and meta["engine"] == "x" and np.allclose(loaded[2].line, [0, 1, 0.5])
    with open(path, "r+b") as fh:
        fh.truncate(40)
    with pytest.raises(MotionFileError, match="run"):
        load_timeline(path)


def test_path_following_keeps_its_progress_where_the_path_crosses_itself():
    r = 3.0
    t = np.linspace(0, 2 * np.pi, 100)
    path = np.concatenate((np.column_stack((r * (np.cos(t) - 1), r * np.sin(t))),
                           np.column_stack((r * (1 - np.cos(t)), r * np.sin(t)))[1:]))
    progress = 0.0
    for point in np.concatenate((path[::5], path[-1:])):  # a character exactly on the path, all the way round
        command, d, progress = path_commands(path, point, 1.3, progress)
        assert d < 1e-6
    total = np.linalg.norm(np.diff(path, axis=0), axis=1).sum()
    assert progress == pytest.approx(total, abs=0.5)
    # at the crossing half way, the progress stays half way (not the end, where the path also passes)
    _, _, mid = path_commands(path, np.zeros(2), 1.3, total / 2 - 0.3)
    assert mid == pytest.approx(total / 2, abs=0.5)


def test_model_memory_and_decision_times(tmp_path, demo_library):
    from motionctl.engines.matching import fit
    from motionctl.evaluate.scoreboard import model_memory, timed_decisions
    from motionctl.io.library import import_library
    from motionctl.play.session import Session

    clips = import_library([demo_library]).groups[0].database.clips[:3]
    model = fit(clips)
    path = model.save(tmp_path / "m.npz")
    mem = model_memory(path, clips)
    # count: integers (bytes)
    assert mem["file_bytes"] == (tmp_path / "m.npz").stat().st_size and mem["held_bytes"] > model.features.nbytes // 2
    ms = timed_decisions(Session(model, model.frame_table(clips)), [Command(heading=0.0)] * 5)
    assert ms.shape == (5,) and np.all(ms > 0)
