"""The engine contract, run over every registered engine (DESIGN.md 3.0): fit on real capture,
save and load with the same decisions, play a session into a valid Clip, start anywhere,
certify in a room.  A newly registered engine is checked here the moment it is added."""

import json
import os

import numpy as np
import pytest

from motionctl.engines import ENGINES, engine_of, load_model, train_to_file
from motionctl.errors import MotionctlError
from motionctl.evaluate import EditModel, EmbedSettings, Environment, certify
from motionctl.library import import_library
from motionctl.session import Command, Session
from motionctl.settings import from_dict, from_flat, options, to_dict

pytestmark = pytest.mark.mocap

# Quick settings per engine for a test-sized run (an engine not listed runs at its defaults).
QUICK = {"fragments": {"trace_seconds": 30.0, "held_out": 0},
         "planning": {"iterations": 3, "trajectories": 30, "n_trees": 4},
         "graph": {"threshold": 0.3},
         "active": {"budget": 5}}
TRIALS = ("15", "17", "19", "21")  # CMU 16: walk, 90° left, 90° right, walk


@pytest.fixture(scope="module")
def clips(mocap):
    files = [os.path.join(mocap, "cmu_amc", "16", f"16_{t}.amc") for t in TRIALS]
    return import_library(files).groups[0].database.clips


# Variants that play by other means than the engine's defaults: "engine:variant" -> settings.
VARIANTS = {"graph:lookahead": {"policy": "lookahead"}}


@pytest.fixture(scope="module", params=sorted(ENGINES) + sorted(VARIANTS))
def trained(request, clips, tmp_path_factory):
    engine = ENGINES[request.param.partition(":")[0]]
    settings = from_flat(engine.Settings, {**QUICK.get(engine.name, {}), **VARIANTS.get(request.param, {})})
    path = tmp_path_factory.mktemp(engine.name) / "model.npz"
    model, written = train_to_file(engine.name, clips, settings, path)
    return engine, model, written


def commands(n: int = 12) -> list:
    """Walk ahead, turn left, run right, jump, stand: what a player does."""
    out = []
    for k in range(n):
        phase = k * 4 // n
        out.append(Command([[0, 1.2, 0, 0], [0, 1.0, 0.8, 0], [0.8, 2.0, -0.5, 0], [0, 0, 0, 0]][phase]))
    out[n // 2] = Command([0, 1.2, 0, 1])
    return out


def test_settings_describe_themselves_and_round_trip(trained):
    engine, model, _ = trained
    for o in options(engine.Settings):
        assert o.label and o.description, o.name
    assert from_dict(engine.Settings, json.loads(json.dumps(to_dict(model.settings)))) == model.settings
    with pytest.raises(MotionctlError, match="unknown setting"):
        from_flat(engine.Settings, {"no_such_setting": 1})


def test_fit_gives_a_model_that_summarises_itself(trained):
    engine, model, _ = trained
    s = model.summary()
    assert s["engine"] == engine.name and json.loads(json.dumps(s, default=str))
    assert model.decision_rate > 0 and model.typical_speed > 0


def test_save_and_load_give_the_same_decisions(trained, clips):
    engine, model, path = trained
    assert engine_of(path) is engine
    back = load_model(path)
    assert type(back) is type(model) and back.summary() == model.summary()
    table = model.frame_table(clips)
    a, b = Session(model, table), Session(back, back.frame_table(clips))
    for c in commands():
        a.decide(c)
        b.decide(c)
    for s, t in zip(a.steps, b.steps):
        assert np.allclose(s.members, t.members)
    assert a.memory == b.memory
    assert np.allclose(a.clip().root_pos, b.clip().root_pos)


def test_a_session_plays_a_valid_clip_from_any_start(trained, clips):
    engine, model, _ = trained
    table = model.frame_table(clips)
    for frame in (None, 0, table.n_frames // 2):
        session = Session(model, table, start=(1.0, 2.0), start_yaw=0.5, frame=frame)
        clip = session.run(commands())
        assert clip.n_frames > 0 and clip.skeleton.names == clips[0].skeleton.names
        assert np.all(np.isfinite(clip.root_pos)) and np.allclose(np.linalg.norm(clip.local_rot, axis=-1), 1.0)
        step = np.linalg.norm(np.diff(clip.root_pos[:, :2], axis=0), axis=1) * clip.fps
        assert step.max() < 12.0  # no teleports (m/s)
        assert len(session.steps) == len(commands())


def test_live_ticks_play_the_same_motion_as_a_run(trained, clips):
    engine, model, _ = trained
    table = model.frame_table(clips)
    live = Session(model, table)
    c = Command([0, 1.2, 0, 0])
    for _ in range(90):
        live.tick(1 / 60, c)
    batch = Session(model, table)
    batch.run([c] * len(live.steps))
    assert np.allclose(live.clip().root_pos, batch.clip().root_pos)


def test_certified_in_a_room(trained, clips):
    engine, model, _ = trained
    table = model.frame_table(clips)
    env = Environment((0, 0, 6, 5), [], "room")
    res = certify(model, table, env, EmbedSettings(headings=12, edit=EditModel()), pairs=4, lm_sample=0.1,
                  max_clips=240)
    assert res["nodes"] > 0 and 0 < res["coverage_xy"] <= 1 and res["graph"].n > 0


def test_a_model_refuses_a_library_without_its_clips(trained, clips):
    engine, model, _ = trained
    with pytest.raises(MotionctlError, match="not in this library"):
        model.frame_table(clips[:1])
