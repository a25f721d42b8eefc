"""Motion matching on real capture: exact search three ways, the springs, inertialized jumps, the
trajectory the command predicts, foot locking, actions only when asked, and clear errors.  (Saving,
loading, sessions and certification: the engine contract test.)"""

import os
from dataclasses import replace

import numpy as np
import pytest

from motionctl.engines.matching import Index, MatchingSettings, fit
from motionctl.engines.matching import springs
from motionctl.errors import MotionctlError
from motionctl.body.contacts import foot_skating
from motionctl.evaluate.scoreboard import (discontinuity, replay, response_time, run_of, speed_response_time,
                                       timeline)
from motionctl.io.library import import_library
from motionctl.rootframe import wrap
from motionctl.play.session import Session
from motionctl.play.commands import Command, PlaySettings

pytestmark = pytest.mark.mocap

TRIALS = ("15", "17", "19", "35", "41", "05")  # walk, 90° left, 90° right, jog, jog left, forward jump


@pytest.fixture(scope="module")
def clips(mocap):
    files = [os.path.join(mocap, "cmu_amc", "16", f"16_{t}.amc") for t in TRIALS]
    return import_library(files).groups[0].database.clips


@pytest.fixture(scope="module")
def model(clips):
    m = fit(clips)
    return m, m.play(clips)


def test_the_three_searches_find_the_same_nearest_frame(model):
    m, _ = model
    rng = np.random.default_rng(0)
    rows = np.flatnonzero(m.rows.searchable & (m.rows.kind == 0))
    by = {name: Index(m.x, rows, name) for name in ("brute", "kdtree", "boxes")}
    queries = m.x[rng.choice(rows, 40)] + rng.normal(0, 0.5, (40, m.x.shape[1]))
    for q in queries:
        ref, d = by["brute"].nearest(q)
        assert d == pytest.approx(np.min(np.sum((m.x[rows] - q) ** 2, axis=1)))
        for name in ("kdtree", "boxes"):
            got, e = by[name].nearest(q)
            # count: table rows (the distances go through approx)
            assert e == pytest.approx(d, rel=1e-9) and (got == ref or e == pytest.approx(d, rel=1e-12))
        # with a bound below the nearest, nothing is nearer
        for name in by:
            assert by[name].nearest(q, d * 0.999)[0] == -1
        # rows skipped are never chosen: all three find the same next nearest
        skip = (ref - 3, ref + 3)
        alt, d2 = by["brute"].nearest(q, np.inf, skip)
        # exact: brute force masks the skipped rows of the same distances: a subset's minimum
        assert not skip[0] <= alt <= skip[1] and d2 >= d
        for name in ("kdtree", "boxes"):
            got, e = by[name].nearest(q, np.inf, skip)
            # count: table rows (the distances go through approx)
            assert not skip[0] <= got <= skip[1] and e == pytest.approx(d2, rel=1e-9)


def test_springs_match_a_fine_numerical_integration():
    halflife, goal = 0.27, np.array([1.0, -2.0])
    y = springs.damping(halflife)
    v, a, x = np.array([0.5, 0.5]), np.zeros(2), np.zeros(2)
    dt, steps = 1e-4, 10000  # 1 s
    for _ in range(steps):  # v'' = -2y v' - y^2 (v - goal)
        a = a + dt * (-2 * y * a - y * y * (v - goal))
        v = v + dt * a
        x = x + dt * v
    xs, vs, _ = springs.velocity_spring(np.array([0.5, 0.5]), np.zeros(2), goal, halflife, np.array([1.0]))
    assert np.allclose(xs[0], x, atol=2e-3) and np.allclose(vs[0], v, atol=2e-3)
    x0, v0 = springs.decay(np.array([1.0]), np.array([0.0]), 0.1, np.array([0.0, 0.1, 1.0]))
    assert x0[0] == 1.0 and 0 < x0[2] < 1e-4 < x0[1] < 1.0  # dies away without overshoot


def test_jumps_are_inertialized(clips):
    """The same run with the blend (0.1 s) and with almost none: switches jump far less with it."""
    jumps = {}
    for halflife in (0.1, 0.01):
        m = fit(clips, MatchingSettings(blend_halflife=halflife))
        table = m.play(clips)
        session = Session(m, table, frame=int(table.first[0]) + 10)
        start = session.synth.yaw
        for i in range(240):
            session.decide(Command(heading=start + (np.pi / 2) * ((i // 60) % 2), speed=1.2 + 1.0 * (i // 120)))
        d = discontinuity(run_of(session))
        assert len(d["deg_s"]) >= 5
        jumps[halflife] = np.median(d["deg_s"])
    assert jumps[0.1] < 0.7 * jumps[0.01]  # margin: 369 against 0.7 x 847 = 593 °/s here


def test_it_turns_to_a_new_direction(model):
    m, table = model
    times = [response_time(m, table, int(table.first[0]) + 20, a) for a in (np.radians(90), -np.radians(90))]
    assert all(np.isfinite(times)) and max(times) < 4.0


@pytest.mark.slow
def test_straight_walks_turn_by_the_warp_rate(mocap):
    """Capture with no turns (subject 35's straight walks): matching finds no frame that turns, so
    a new direction came only from drift (on subject 35's walks and runs: 55% of the scoreboard's
    turns reached, median 3.2 s); Warp Rate turns the facing toward the predicted trajectory's, at
    most that fast, as a game's root adjustment does."""
    files = [os.path.join(mocap, "cmu_amc", "35", f"35_{t:02d}.amc") for t in (1, 2, 3)]
    walks = import_library(files).groups[0].database.clips
    times = {}
    for rate in (np.radians(90.0), 0.0):
        m = fit(walks, MatchingSettings(warp_rate=float(rate)))
        table = m.play(walks)
        times[rate] = [response_time(m, table, int(table.first[c]) + 30, a)
                       for c in range(len(walks)) for a in (np.radians(90), -np.radians(120))]
    warped, unwarped = np.array(times[np.radians(90.0)]), np.array(times[0.0])
    assert np.all(np.isfinite(warped)) and np.max(warped) < 2.5, warped
    # margin: 6.0 s against 1.8 s here
    assert np.mean(np.minimum(unwarped, 6.0)) > 1.5 * np.mean(warped), (warped, unwarped)


def test_it_speeds_up_from_a_walk_to_a_jog(model):
    m, table = model
    got = speed_response_time(m, table, int(table.first[0]) + 20, 1.2, 2.5)
    assert np.isfinite(got["speed"]) and 0.85 < got["settled"] < 1.15
    with pytest.raises(ValueError, match="too small"):
        speed_response_time(m, table, int(table.first[0]) + 20, 1.2, 1.3)


def test_the_trajectory_query_asks_for_the_command(model):
    m, table = model
    memory = m.start(table, int(table.first[0]) + 20)
    left, face = m.goal(0.0, Command(heading=np.pi / 2, speed=1.3))
    assert left == pytest.approx([-1.3, 0.0], abs=1e-9) and face == pytest.approx(np.pi / 2)
    pos, dirs = springs.predict(memory.sim_v, memory.sim_a, left, memory.sim_face, memory.sim_w, face,
                                np.array([1 / 3, 2 / 3, 1.0]), 0.27, 0.27)
    # margin: -0.75 < -0.06 < 0.2 here
    assert pos[-1, 0] < pos[0, 0] < 0.2 and dirs[-1, 0] < -0.9  # heading off to the left, facing left


def test_the_shared_foot_locking_plants_matchings_feet(clips):
    """Matching's frames carry their captured contacts, so the synthesis every engine plays through
    locks its planted feet while the root follows the command (Plant Feet against the root dragged)."""
    m = fit(clips, MatchingSettings())
    table = m.play(clips)
    skating = {}
    for plant in (False, True):
        session = Session(m, table, frame=int(table.first[0]) + 10, warp=1.0, plant_feet=plant)
        rng = np.random.default_rng(3)
        heading = session.synth.yaw
        for i in range(450):
            if i % 60 == 0:
                heading = session.synth.yaw + rng.uniform(-np.pi, np.pi)
            session.decide(Command(heading=heading, speed=1.3))
        skating[plant] = foot_skating(session.clip())
    assert skating[True]["sliding_cm"] < skating[False]["sliding_cm"]  # margin: 1.6 cm against 21 cm here
    assert skating[True]["skating"] <= skating[False]["skating"]  # margin: 0.011 against 0.48 here
    assert skating[True]["skating"] <= foot_skating(clips[0])["skating"] + 0.05  # margin: 0.011 against 0.054 here


def test_a_jump_plays_only_when_asked(model):
    m, table = model
    jump = m.rows.kinds.index("jump")
    session = Session(m, table, frame=int(table.first[0]) + 10)
    for _ in range(150):
        session.decide(Command(heading=session.synth.yaw))
        assert m.rows.kind[session.memory.row] != jump
    session.decide(Command(np.array([0.0, 1.2, 0.0, 1.0]), heading=session.synth.yaw))
    # count: integers (row kinds, rows)
    assert m.rows.kind[session.memory.row] == jump and session.memory.commit > session.memory.row
    for _ in range(10):  # released at once: the jump plays on
        session.decide(Command(heading=session.synth.yaw))
        assert m.rows.kind[session.memory.row] == jump  # count: integers (row kinds)


def test_a_sharp_change_searches_at_once(model):
    m, table = model
    session = Session(m, table, frame=int(table.first[0]) + 10)
    for _ in range(4):
        session.decide(Command(heading=session.synth.yaw))
    since = session.memory.since
    session.decide(Command(heading=session.synth.yaw + np.pi))
    assert since > 0 and session.memory.since == 0.0
    assert abs(wrap(session.memory.goal[2])) > np.radians(150)  # margin: 3.14 rad against 2.62


def test_bad_settings_and_changed_clips_are_refused(clips, model):
    m, _ = model
    zero = {k: 0.0 for k in ("foot_position", "foot_velocity", "hip_velocity", "trajectory_position",
                             "trajectory_direction")}
    with pytest.raises(MotionctlError, match="every feature weight is 0"):
        fit(clips, MatchingSettings(**zero))
    edited = replace(clips[0], root_pos=clips[0].root_pos + np.array([0.0, 0.0, 0.05]))
    with pytest.raises(MotionctlError, match="train it again"):
        m.play([edited] + list(clips[1:]))


def test_a_replayed_timeline_plays_the_same_run(model):
    m, table = model
    session = Session(m, table, play=PlaySettings())  # as the Preview panel plays (and Compare replays)
    for i in range(90):
        session.decide(Command(heading=1.5 * (i >= 30), speed=1.2 + 1.5 * (i >= 60)))
    times, commands = timeline(session)
    again = replay(m, table, times, commands, seconds=session.n_frames / table.fps)
    assert np.allclose(again.clip().root_pos, session.clip().root_pos)


def _most_replayed(m, table, control, seconds=6.0):
    """The most times one captured frame plays within any second of a run held at ``control``."""
    session = Session(m, table, frame=int(table.first[0]) + 10)
    rows = []
    for _ in range(int(seconds * table.fps)):
        session.decide(Command(np.asarray(control, dtype=float)))
        rows.append(session.memory.row)
    rows, n = np.array(rows), int(table.fps)
    return max(int(np.max(np.unique(rows[i:i + n], return_counts=True)[1])) for i in range(len(rows) - n))


def test_a_stick_no_capture_answers_does_not_loop_a_few_frames(mocap):
    """Six takes of other subjects (the stress bench's ``others``) asked to turn at 1.5 rad/s or to
    walk right with the stick held: the search jumped to the last frame before a clip's End Margin,
    ended at once and jumped back (four frames played seven times a second: a foot slid on 83% of
    that second's contact frames), or back into the 12 frames it was playing (three times a second).
    A jump now lands where the clip plays on for Skip Nearby, never into the piece playing."""
    folder = os.path.join(mocap, "cmu31")
    groups = import_library(sorted(os.path.join(folder, f) for f in os.listdir(folder) if f.endswith(".bvh"))).groups
    clips = max(groups, key=lambda g: len(g.database.clips)).database.clips
    m = fit(clips)
    table = m.play(clips)
    for control in ([0.0, 1.3, 1.5, 0.0], [1.0, 0.0, 0.0, 0.0]):
        # count: frames; a frame played three times in a second is a loop of at most a third of a second
        assert _most_replayed(m, table, control) <= 2, control
