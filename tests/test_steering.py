"""A stick that turns, or holds straight, is followed: the facing stays on the capsule the controls
integrate to (``evaluate.looks.command_error``) in engines that warp their own facing and in
engines that do not, at the Preview panel's defaults (Root Follows Control 1, Plant Feet).

Faults this guards against, measured on bench_looks' dozen-clip mix: the Session asked a
turning stick's heading half a second ahead (the engines then faced that far ahead of the stick:
matching 15°, fragments 19°, the field 18° p95 where they were 1-3°), and it forced the stick's
turn on the root *and* kept the engine's own facing warp toward the heading (twice the correction:
the look-ahead graph ended 82° off a turn it should have undone, active learning's straight walk
turned 35°)."""

import os

import numpy as np
import pytest

from motionctl.play.commands import Command
from motionctl.rootframe import wrap

from motionctl.engines import ENGINES
from motionctl.evaluate.looks import capsule
from motionctl.io.library import import_library
from motionctl.play.commands import PlaySettings, Trace
from motionctl.play.session import Session, stick_turn
from motionctl.rootframe import root_frame

SLOW_CASES = {"fragments"}  # the slow set: fragments on the turning stick (28 s; the graph and matching stay quick)
RATE = 10.0
SETTLE = 1.5  # s: the longest step an engine plays at its defaults (the graph's Max Clip)
MIX = ("16_11", "16_13", "16_15", "16_16", "16_17", "16_19", "16_21", "16_23", "16_31", "16_35", "16_36")


@pytest.fixture(scope="module")
def clips(mocap):
    files = [os.path.join(mocap, "cmu_amc", "16", f"{t}.amc") for t in MIX]
    return import_library(files).groups[0].database.clips


def heading_error(model, clips, samples) -> float:
    """p95 of the facing's distance (degrees) from the capsule over a played trace."""
    return float(np.percentile(heading_errors(model, clips, samples)[1], 95))


def heading_errors(model, clips, samples) -> tuple:
    """(seconds [F], the facing's distance from the capsule [F] in degrees) of a played trace."""
    table = model.play(clips)
    trace = Trace(samples, RATE, "probe")
    clip = Session(model, table, play=PlaySettings()).play_trace(trace)
    _, yaw = root_frame(clip, 0.2)
    _, cy = capsule(trace.clock(), trace.samples, clip.fps, clip.n_frames, (0.0, 0.0), 0.0)
    return np.arange(clip.n_frames) / clip.fps, np.degrees(np.abs(wrap(yaw - cy)))


def settled(t: np.ndarray, samples: np.ndarray, seconds: float) -> np.ndarray:
    """bool [F]: the frames more than ``seconds`` after the stick last changed (or began)."""
    changes = np.flatnonzero(np.r_[True, np.any(np.diff(samples, axis=0) != 0, axis=1)]) / RATE
    return np.all((t[:, None] < changes[None]) | (t[:, None] >= changes[None] + seconds), axis=1)


def turning(seconds: float = 8.0) -> np.ndarray:
    """0.6 rad/s left for 4 s, then right (8 s: back where it began) at a walk."""
    n = int(seconds * RATE)
    out = np.tile([0.0, 1.3, 0.0, 0.0], (n, 1))
    out[: int(4 * RATE), 2], out[int(4 * RATE):, 2] = 0.6, -0.6
    return out


@pytest.mark.parametrize("name, limit", [("matching", 6.0), ("graph", 10.0), ("fragments", 6.0)])
def test_a_turning_stick_is_followed_at_its_rate(clips, name, limit):
    """Once a step chosen before the stick changed has played (the graph's clips last up to Max Clip,
    1.5 s), the facing is on the capsule, and stays on it to the end.  Judged on the whole run's
    p95, the graph passed or failed by where the reversal fell in a clip, and so by the CPU: a near
    tie in its frame costs (BLAS rounding) made the clip playing there 1.2 s long on AVX-512 CPUs
    and short on AVX2 ones, and the long clip's turn was never made up (54.8° off for good)."""
    engine = ENGINES[name]
    settings = engine.Settings(**({"trace_seconds": 30, "held_out": 0} if name == "fragments" else {}))
    model = engine.fit(clips, settings)
    samples = turning()
    t, err = heading_errors(model, clips, samples)
    after = settled(t, samples, SETTLE)
    assert after.sum() > 0.5 * len(t)
    assert np.percentile(err[after], 95) < limit  # margin: 6.6° against the limit (10° for the graph) at the nearest
    # margin: 8.6° against 10° at the nearest; the mask's t on a whole frame decides alike on every CPU
    assert err[t >= t[-1] - 1.0].max() < limit  # no turn owed at the end


def test_a_stick_reversed_during_a_long_step_is_owed_after_it(clips):
    """A step plays the stick's rate in force when it was chosen: a stick reversed while a 1.2 s
    piece plays is made up after it.  The heading asked moves by what the stick turned meanwhile
    (``stick_turn``), not by its rate now over the step (22° short for good), and the root owes
    the facing's gap to it (as far as planted feet allow; 54.8° off for good before)."""
    from tiny_engine import TinySettings, fit

    model = fit(clips, TinySettings(piece=1.2))  # no facing warp: the root alone makes the turn up
    t, err = heading_errors(model, clips, turning(12.0))
    assert err[(t > 4.0) & (t < 4.0 + 1.2)].max() > 15.0  # the reversal came during a step: it lagged
    assert np.percentile(err[t >= 8.0], 95) < 8.0  # and was made up at the pace planted feet allow (12-18° before)


def test_the_turn_a_stick_made_is_summed_command_by_command():
    times, turns = np.array([0.0, 1.0, 2.5]), np.array([0.6, -0.6, 0.0])
    assert stick_turn(times, turns, 0.5, 2.0) == pytest.approx(0.5 * 0.6 - 1.0 * 0.6)
    assert stick_turn(times, turns, 2.0, 9.0) == pytest.approx(-0.5 * 0.6)
    assert stick_turn(times, turns, 1.5, 1.5) == 0.0


@pytest.mark.slow
def test_a_straight_stick_walks_straight_when_the_engine_warps_its_facing(clips):
    """Active learning's cycles turn a little each (within the turn tolerance) and its Warp Rate
    turns the facing back; the root, following the stick's zero turn, must not be turned back a
    second time."""
    model = ENGINES["active"].fit(clips, ENGINES["active"].Settings(task="walk", budget=12))
    assert model.settings.warp_rate > 0
    straight = np.tile([0.0, 1.3, 0.0, 0.0], (int(8 * RATE), 1))
    assert heading_error(model, clips, straight) < 10.0


@pytest.mark.parametrize("name", ["graph", "matching"])
def test_a_stick_turning_faster_than_planted_feet_allow_is_still_followed(clips, name):
    """Q/E at 1 rad/s, past the 0.6 rad/s the feet let the root be turned: the engine's own facing
    warp makes up the rest (dropping it wholesale, the graph turned 4.8 of 8.3 rad)."""
    model = ENGINES[name].fit(clips, ENGINES[name].Settings())
    table = model.play(clips)
    session = Session(model, table, play=PlaySettings())
    yaws = []
    while session.n_frames < 8 * table.fps:
        yaws.append(session.synth.yaw)
        session.decide(Command(np.array([0.0, 1.2, 1.0, 0.0])))
    turned = float(np.sum(wrap(np.diff(np.r_[yaws, session.synth.yaw]))))
    asked = 1.0 * session.n_frames / table.fps
    assert 0.85 * asked < turned < 1.1 * asked, (turned, asked)  # margin: 13% and 9% inside the bounds here


def test_a_turning_sticks_heading_is_where_it_will_be_ahead():
    """A heading that moves on (a turning stick's, as the Session asks it) is asked where it will be
    ``ahead`` seconds on; a fixed heading is where it is; a stick without a heading turns by its rate."""
    moving = Command([0.0, 1.3, 0.6, 0.0], heading=0.2, speed=1.3)
    assert moving.desired_heading(0.0, 1.0) == pytest.approx(0.8)
    assert moving.desired_heading(0.0, 0.0) == pytest.approx(0.2)
    assert Command([0.0, 1.3, 0.0, 0.0], heading=0.2, speed=1.3).desired_heading(0.0, 1.0) == pytest.approx(0.2)
    assert Command([0.0, 1.3, 0.6, 0.0]).desired_heading(0.1, 0.5) == pytest.approx(0.4)


def test_active_learning_turns_with_the_captures_turns(clips):
    """Asked only the little a turning stick's heading leads the facing, active learning answered a
    0.6 rad/s turn with its straight walk spun round by the root (captured turn of what played in
    the turn: 0.01 rad/s); asked where the heading will be a cycle on, it plays the library's
    turns (0.29 on issue 34's dozen clips at its quick settings)."""
    from motionctl.settings import from_flat

    engine = ENGINES["active"]
    model = engine.fit(clips, from_flat(engine.Settings, engine.quick))
    table = model.play(clips)
    samples = np.tile([0.0, 1.3, 0.0, 0.0], (80, 1))
    samples[20:70, 2] = 0.6
    session = Session(model, table, play=PlaySettings())
    session.play_trace(Trace(samples, RATE, "turn"))
    frames, turned, at = 0, 0.0, 0
    for step in session.steps:  # clip pieces, or frames the engine made (a blend of its cycles)
        n = int(step.members[:, 2].max()) if len(step.members) else len(step.frames)
        if 2.5 * table.fps <= at < 7.0 * table.fps:
            for c, a, k, w in step.members:
                rows = table.first[int(c)] + np.minimum(int(a) + np.arange(int(k)), table.length[int(c)] - 1)
                turned += w * table.motion[rows, 2].sum()
            if not len(step.members):
                turned += step.frames.motion[:, 2].sum()
            frames += n
        at += n
    assert turned / frames * table.fps > 0.15  # margin: 0.29 measured, 0.01 when the straight walk was spun
