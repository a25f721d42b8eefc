"""The motion graph's Look Ahead policy (paper 002's graph-based comparison): the reward of a
warped clip against hand-computed cases, value iteration on real capture, the policy turning to
a new direction, and the values surviving save and load."""

import dataclasses
import os

import numpy as np
import pytest

from motionctl.body import mirror_clip
from motionctl.engines import load_model
from motionctl.engines.graph import GraphSettings, fit
from motionctl.engines.graph.lookahead import WARP_COST, play
from motionctl.io.library import import_library
from motionctl.rootframe import wrap
from motionctl.play.session import Session
from motionctl.play.commands import Command, PlaySettings

TRIALS = ("15", "17", "19", "13")  # CMU 16: walk, 90° left, 90° right, veer right


def test_a_warped_clip_earns_the_fields_reward_every_frame():
    g = 0.9
    yaw = np.zeros((1, 3))  # one straight clip of 3 frames
    theta = np.array([[[0.3]]])
    reward, final = play(yaw, np.array([3]), theta, np.array([0.0, 0.3]), g)
    assert reward[0, 0, 0] == pytest.approx(-(0.3 + 0.3 * g + 0.3 * g * g))
    assert final[0, 0, 0] == pytest.approx(0.3)
    # warped by 0.3 rad over its 3 frames: θ_t = 0.2, 0.1, 0.0
    assert reward[0, 1, 0] == pytest.approx(-(0.2 + 0.1 * g) - WARP_COST * 0.3)
    assert final[0, 1, 0] == pytest.approx(0.0, abs=1e-12)
    # a clip's own turn counts, and a shorter clip (2 frames, padded) stops earning after its end
    turning = np.array([[0.1, 0.2, 0.2]])
    r2, f2 = play(turning, np.array([2]), theta, np.array([0.0]), g)
    assert r2[0, 0, 0] == pytest.approx(-(0.2 + 0.1 * g)) and f2[0, 0, 0] == pytest.approx(0.1)


@pytest.fixture(scope="module")
def clips(mocap):
    files = [os.path.join(mocap, "cmu_amc", "16", f"16_{t}.amc") for t in TRIALS]
    walks = import_library(files).groups[0].database.clips
    return list(walks) + [mirror_clip(c) for c in walks]


@pytest.fixture(scope="module")
def looking(clips):
    return fit(clips, GraphSettings(policy="lookahead"))


def test_value_iteration_converges_and_the_policy_turns(looking, clips):
    s = looking.summary()
    # count: integers (bytes)
    assert s["sweeps"] < 3000 and s["residual"] < 0.01 and s["value_bytes"] == looking.look.values.nbytes
    v = looking.look.values.reshape(len(looking.look.values), 18, -1).mean(axis=(0, 2))  # over clips and speeds
    # margin: -85.7 against -28.6 here
    assert np.argmax(v) in (8, 9) and v[0] < v[8]  # best facing the direction (θ = 0 lies between 8 and 9)
    table = looking.play(clips)
    greedy = fit(clips, GraphSettings(policy="greedy"))
    met = {}
    for name, model in (("lookahead", looking), ("greedy", greedy)):
        times = []
        for frame in (10, 150, 300):
            session = Session(model, table, frame=frame)
            target = session.synth.yaw + np.radians(150)
            while session.n_frames < 6 * table.fps and abs(wrap(target - session.synth.yaw)) > np.radians(5):
                session.decide(Command(heading=target))
            times.append(session.n_frames / table.fps if abs(wrap(target - session.synth.yaw)) <= np.radians(5)
                         else np.inf)
        met[name] = times
    assert np.all(np.isfinite(met["lookahead"]))  # looking ahead (and warping) it always gets there
    # Greedy warps too and gets there (unwarped, choosing by where a clip's end faces, it reached
    # 5% of the scoreboard's turns), but one clip ahead it gets there later.
    assert np.all(np.isfinite(met["greedy"])), met
    assert np.mean(met["lookahead"]) < np.mean(met["greedy"]), met  # margin: 1.69 s against 2.48 s here


def test_look_ahead_values_survive_save_and_load(looking, tmp_path):
    # (that the loaded controller decides the same is the engine contract's, for this variant too)
    back = load_model(looking.save(tmp_path / "graph.npz"))
    assert np.array_equal(back.look.values, looking.look.values)
    assert np.array_equal(back.look.warps, looking.look.warps)


def test_a_turning_stick_turns_the_look_ahead_graph_at_the_rate_asked(looking, clips):
    """Q/E held: 0.6 rad/s for 5 s is 172°.  Asked as "face where you face now, plus half a second
    of turning" at every decision, the heading ran ahead of the graph and it turned about twice as
    far; the Session now turns the asked heading at the stick's rate."""
    table = looking.play(clips)
    for sign in (1, -1):
        session = Session(looking, table, frame=10)
        yaws = []
        while session.n_frames < 5 * table.fps:
            yaws.append(session.synth.yaw)
            session.decide(Command(np.array([0.0, 1.2, sign * 0.6, 0.0])))
        turned = float(np.sum(wrap(np.diff(np.r_[yaws, session.synth.yaw]))))
        asked = sign * 0.6 * session.n_frames / table.fps
        assert abs(turned - asked) < 0.3 * abs(asked), (turned, asked)  # margin: 0.24 rad off against 0.91 here


def warp_rates(model, clips) -> np.ndarray:
    """rad/s of every warp the model plays while turning round from three starts."""
    table = model.play(clips)
    rates = []
    for frame in (10, 150, 300):
        session = Session(model, table, frame=frame)
        for turn in (150, -150, 90):
            target = session.synth.yaw + np.radians(turn)
            for _ in range(12):
                session.decide(Command(heading=target))
                rates.append(abs(session.steps[-1].edit[2]) / model.graph.duration[int(session.memory)])
    return np.array(rates)


@pytest.mark.slow
def test_no_warp_turns_the_facing_faster_than_the_warp_rate(looking, clips):
    """A clip is warped by at most Warp Rate times its length (and Max Warp); unbounded (Warp Rate
    0), the graph's short clips turn the character far faster (on subject 16's 49 clips, 45° in a
    one-frame clip: 1350 °/s)."""
    bound = looking.settings.warp_rate
    rates = warp_rates(looking, clips)
    # margin: 1e-9 on the bound (reached exactly here); no rate within 30% of half of it
    assert np.max(rates) <= bound + 1e-9 and np.any(rates > 0.5 * bound), np.degrees(rates.max())
    unbounded = warp_rates(fit(clips, GraphSettings(policy="lookahead", warp_rate=0.0)), clips)
    assert np.max(unbounded) > 2 * bound, np.degrees(unbounded.max())  # margin: 23.6 rad/s against 3.1 here


def test_held_jump_finds_its_way_to_a_jump_from_a_walk(mocap, tmp_path):
    """Subject 16's forward jumps start from standing, a few clips away from any walk: Look Ahead
    has a second table of values for while a jump is asked, in which a jump serves the request, so
    a walking character asked to jump slows, stands and jumps (before, it walked on for ever: its
    values knew no jump, and the bonus for one counted only among the next clip's successors)."""
    files = [os.path.join(mocap, "cmu_amc", "16", f"16_{t}.amc") for t in ("05", "07", "15", "21")]
    clips = list(import_library(files).groups[0].database.clips)
    model = fit(clips, GraphSettings(policy="lookahead"))
    assert model.jumps.any()
    table = model.play(clips)
    walks = [i for i, c in enumerate(clips) if c.name in ("16_15", "16_21")]
    for ci in walks:
        for asked in (True, False):
            session = Session(model, table, frame=int(table.first[ci] + table.length[ci] // 2))
            played = []
            while session.n_frames < 5 * table.fps:
                session.decide(Command(control=np.array([0.0, 1.3, 0.0, 1.0 if asked else 0.0])))
                played.append(bool(model.jumps[int(session.memory)]))
            assert any(played) == asked, (clips[ci].name, asked)  # count: booleans
    back = load_model(model.save(tmp_path / "jumps.npz"))
    assert np.array_equal(back.look.jump_values, model.look.jump_values)


def test_greedy_scores_a_clip_per_frame_so_a_long_clip_is_not_worse_for_being_long():
    """One clip ahead, a 40-frame clip that turns all the way to the heading (1 rad) beats a 5-frame
    clip that does not turn: summed over frames, the short one cost less for being short."""
    from motionctl.engines.graph.lookahead import choose, greedy

    yaw = np.zeros((2, 40))
    yaw[0] = np.arange(1, 41) / 40.0  # turns to the heading over its 40 frames
    n = np.array([40, 5])
    look = greedy(2, np.zeros(1), 0.99, np.ones(2), 0, 0.0)
    assert choose(look, yaw, n, np.arange(2), 1.0, np.zeros(2))[0] == 0
    summed = dataclasses.replace(look, one_clip=False)  # the sum, with no values beyond (all 0)
    assert choose(summed, yaw, n, np.arange(2), 1.0, np.zeros(2))[0] == 1


def test_a_drive_facing_a_heading_records_the_turn_asked_not_a_gap(looking, clips):
    """Facing a heading, the engine turns its own way (no yaw forced: the step's turn is NaN), but
    the controls a session records, which Drive saves as a trace, hold the turning rate asked."""
    session = Session(looking, looking.play(clips), frame=150, play=PlaySettings())
    for _ in range(6):
        session.decide(Command(heading=session.synth.yaw + 2.0, speed=1.3))
    assert any(np.isnan(step.control[2]) for step in session.steps)
    recorded = np.array(session.controls)
    assert np.all(np.isfinite(recorded)) and np.all(recorded[:, 2] > 0)  # turning left, as asked
