"""The engine contract, run over every registered engine (DESIGN.md 3.0): fit, save and load with the
same decisions, play a session into a valid Clip, start anywhere, tick live as it runs, certify in a
room, refuse a library without its clips.  On the generated demo library always (no capture needed,
so a fresh clone checks it), and on real capture (CMU subject 16's walks and turns) when it is
present.  A newly registered engine is checked here the moment it is added (``check_contract`` is
what ``tests/test_engine_registry.py`` runs on an engine registered only there)."""

import copy
import dataclasses
import json
import os

import numpy as np
import pytest

from motionctl.engines import ENGINES, engine_of, load_model, train_to_file
from motionctl.errors import MotionctlError
from motionctl.evaluate import EditModel, EmbedSettings, Environment, certify
from motionctl.io import demo_data
from motionctl.io.library import import_library
from motionctl.play.commands import Command
from motionctl.play.session import Session
from motionctl.settings import from_dict, from_flat, options, to_dict, validate

from conftest import MOCAP

# The slow set: every engine on capture but fragments, fragments on the demo, and the variants; the
# quick run keeps each engine once (fragments on capture, the others on the demo).
SLOW_CASES = {"active-capture", "field-capture", "graph-capture", "matching-capture", "planning-capture",
              "fragments-demo", "graph:greedy", "test_certified_in_a_room::field-demo"}

TRIALS = ("15", "17", "19", "21")  # CMU 16: walk, 90° left, 90° right, walk
LIBRARIES = ["demo"] + (["capture"] if MOCAP else [])
DEMO = ("demo_walk", "demo_run", "demo_walk_turn_left", "demo_walk_turn_right", "demo_sidestep_right",
        "demo_walk_stop_start", "demo_jump")
# Every engine at its quick settings (``Engine.quick``), and every variant it declares ("engine:variant").
BUILT_IN = set(ENGINES)  # every engine shipped declares the schema of its arrays (the test engine need not)
VARIANTS = {f"{e.name}:{name}": settings for e in ENGINES.values() for name, settings in e.variants}


def library(kind: str) -> list:
    """The demo's generated locomotion (a clip of each kind the contract's commands ask: a walk, a
    run, turns both ways, a side-step, a stop and start, a jump; half the demo, half the time), or
    CMU subject 16's walks and turns."""
    if kind == "demo":
        return [clip for clip, _, _ in demo_data.demo_clips(seed=0) if clip.name in DEMO]
    files = [os.path.join(MOCAP, "cmu_amc", "16", f"16_{t}.amc") for t in TRIALS]
    return import_library(files).groups[0].database.clips


@pytest.fixture(scope="module", params=LIBRARIES)
def clips(request):
    return library(request.param)


@pytest.fixture(scope="module", params=sorted(ENGINES) + sorted(VARIANTS))
def trained(request, clips, tmp_path_factory):
    engine = ENGINES[request.param.partition(":")[0]]
    return train(engine, clips, tmp_path_factory.mktemp(engine.name), VARIANTS.get(request.param, {}))


def train(engine, clips, folder, extra=None):
    """(engine, model, file written) at the engine's quick settings."""
    settings = from_flat(engine.Settings, {**engine.quick, **(extra or {})})
    model, written = train_to_file(engine.name, clips, settings, os.path.join(folder, "model.npz"))
    return engine, model, written


def commands(n: int = 12) -> list:
    """Walk ahead, turn left, run right, jump, stand: what a player does."""
    out = []
    for k in range(n):
        phase = k * 4 // n
        out.append(Command([[0, 1.2, 0, 0], [0, 1.0, 0.8, 0], [0.8, 2.0, -0.5, 0], [0, 0, 0, 0]][phase]))
    out[n // 2] = Command([0, 1.2, 0, 1])
    return out


# ----------------------------------------------------------------------------- the checks

def check_settings(engine, model) -> None:
    """Settings describe themselves and round-trip; an unknown one is refused by name."""
    for o in options(engine.Settings):
        assert o.label and o.description, o.name
        if o.kind in ("float", "int", "floats", "ints"):  # else the panel's hard maximum is the largest float
            assert o.min is not None and o.max is not None, f"{o.name} has no range"
    # exact: settings through JSON (floats round-trip by repr)
    assert from_dict(engine.Settings, json.loads(json.dumps(to_dict(model.settings)))) == model.settings
    # Every stored field is checked on load: a setting, or internal(...) with the range it must keep.
    exposed = {o.path for o in options(engine.Settings)}
    internal = [(p, f) for p, f in stored_fields(engine.Settings) if p not in exposed]
    assert all(f.metadata.get("internal") for _, f in internal), \
        [".".join(p) for p, f in internal if not f.metadata.get("internal")]
    for path, f in internal:  # ten times past its maximum is refused, naming it
        high = f.metadata["max"]
        if high is None:  # a switch
            continue
        data = json.loads(json.dumps(to_dict(model.settings)))
        target = data
        for p in path[:-1]:
            target = target[p]
        target[path[-1]] = [high * 10 + 1] if isinstance(f.default, tuple) else high * 10 + 1
        with pytest.raises(MotionctlError, match=path[-1]):
            validate(from_dict(engine.Settings, data))
    with pytest.raises(MotionctlError, match="unknown setting"):
        from_flat(engine.Settings, {"no_such_setting": 1})


def stored_fields(cls, path=()):
    """(path, field) of every field a model stores, nested groups flattened."""
    for f in dataclasses.fields(cls):
        d = f.default if f.default is not dataclasses.MISSING else f.default_factory()
        if dataclasses.is_dataclass(d):
            yield from stored_fields(type(d), path + (f.name,))
        else:
            yield path + (f.name,), f


def check_summary(engine, model) -> None:
    s = model.summary()
    assert s["engine"] == engine.name and json.loads(json.dumps(s, default=str))
    assert model.decision_rate > 0 and model.typical_speed > 0


def check_save_and_load(engine, model, path, clips) -> None:
    """A saved and loaded model makes the same decisions."""
    assert engine_of(path) is engine
    back = load_model(path)
    # exact: a saved and loaded model's summary (the same JSON values)
    assert type(back) is type(model) and back.summary() == model.summary() and back.sources == model.sources
    a, b = Session(model, model.frame_table(clips)), Session(back, back.frame_table(clips))
    for c in commands():
        a.decide(c)
        b.decide(c)
    for s, t in zip(a.steps, b.steps):
        assert np.allclose(s.members, t.members)
    # exact: the same decisions from the same arrays (save/load is bit-exact), in one process
    assert a.memory == b.memory
    assert np.allclose(a.clip().root_pos, b.clip().root_pos)


def check_schema(engine, path, tmp) -> None:
    """Every array a saved model holds is declared in its engine's schema, and a file whose arrays
    break it is refused on loading, naming the file and the array: NaN in any float array, an
    index past its end, an array missing or one another version would hold.  (Declared for every
    built-in engine; one registered without a schema is loaded unchecked.)"""
    from motionctl.engines.schema import spec_of
    from motionctl.errors import MotionFileError

    if engine.Model.schema is None:
        assert engine.name not in BUILT_IN, f"{engine.name} declares no schema of its arrays"
        return
    with np.load(path) as z:
        saved = {k: np.asarray(z[k]) for k in z.files}
    load_model(path)  # the file as saved passes

    def refused(change, what):
        arrays = {k: v.copy() for k, v in saved.items()}
        change(arrays)
        bad = os.path.join(tmp, "mutant.npz")
        np.savez(bad, **arrays)
        with pytest.raises(MotionFileError, match=what):
            load_model(bad)

    names = [k for k in saved if k != "meta"]
    seen = set()
    for name in names:
        a = saved[name]
        key, spec = spec_of(engine.Model.schema, name)
        if key in seen:  # one of a numbered family ("g#_dx") speaks for the rest
            continue
        seen.add(key)
        if a.dtype.kind == "f" and a.size:
            refused(lambda arrays, n=name: arrays[n].reshape(-1).__setitem__(0, np.nan), f"{name}.*NaN")
        if a.dtype.kind in "iu" and a.size and spec.high is not None:
            refused(lambda arrays, n=name: arrays[n].reshape(-1).__setitem__(-1, 10**9), f"{name}.*(out of range|back)")
        elif a.dtype.kind in "iu" and a.size and spec.low is not None:
            refused(lambda arrays, n=name, low=spec.low: arrays[n].reshape(-1).__setitem__(0, low - 5), f"{name}.*below")
        if spec.ndim is not None:
            refused(lambda arrays, n=name: arrays.__setitem__(n, arrays[n][None]), f"{name}.*axes")
    plain = [k for k in names if k in engine.Model.schema and not engine.Model.schema[k].optional]
    if plain:
        refused(lambda arrays: arrays.pop(plain[0]), f"{plain[0]}.*missing")
    refused(lambda arrays: arrays.__setitem__("from_another_version", np.zeros(3)), "from_another_version")


def check_sessions(model, clips) -> None:
    """A session plays a valid clip from any start, and live ticks play what a run plays."""
    table = model.frame_table(clips)
    for frame in (None, 0, table.n_frames // 2):
        session = Session(model, table, start=(1.0, 2.0), start_yaw=0.5, frame=frame)
        clip = session.run(commands())
        assert clip.n_frames > 0 and clip.skeleton.names == clips[0].skeleton.names  # count: an integer and joint names
        assert np.all(np.isfinite(clip.root_pos)) and np.allclose(np.linalg.norm(clip.local_rot, axis=-1), 1.0)
        step = np.linalg.norm(np.diff(clip.root_pos[:, :2], axis=0), axis=1) * clip.fps
        assert step.max() < 12.0  # no teleports (m/s)
        assert len(session.steps) == len(commands())
    live = Session(model, table)
    c = Command([0, 1.2, 0, 0])
    for _ in range(90):
        live.tick(1 / 60, c)
    batch = Session(model, table)
    batch.run([c] * len(live.steps))
    assert np.allclose(live.clip().root_pos, batch.clip().root_pos)


def check_certified(model, clips) -> None:
    table = model.frame_table(clips)
    env = Environment((0, 0, 6, 5), [], "room")
    res = certify(model, table, env, EmbedSettings(headings=12, edit=EditModel()), pairs=4, lm_sample=0.1,
                  max_clips=240)
    assert res["nodes"] > 0 and 0 < res["coverage_xy"] <= 1 and res["graph"].n > 0


def check_refuses_other_clips(model, clips, path=None) -> None:
    """A library without the model's clips, or with other motion under the same names (a take
    re-exported after an edit), is refused, saved and loaded too: the model's steps would index
    the wrong frames."""
    with pytest.raises(MotionctlError, match="not in this library"):
        model.frame_table(clips[:1])
    edited = [copy.copy(c) for c in clips]
    used = {n for n, _ in model.sources}
    k = next(i for i, c in enumerate(edited) if c.name in used)
    edited[k].root_pos = edited[k].root_pos + np.array([0.0, 0.0, 0.01])  # raised by 1 cm
    for m in (model, load_model(path)) if path else (model,):
        with pytest.raises(MotionctlError, match="other motion than these clips of the same names"):
            m.frame_table(edited)


def check_contract(engine, clips, folder) -> None:
    """Every check on ``engine`` trained on ``clips`` (for an engine a test registers itself)."""
    engine, model, path = train(engine, clips, folder)
    check_settings(engine, model)
    check_summary(engine, model)
    check_save_and_load(engine, model, path, clips)
    check_sessions(model, clips)
    check_certified(model, clips)
    check_refuses_other_clips(model, clips, path)
    check_schema(engine, path, folder)


# ----------------------------------------------------------------------------- every registered engine

def test_settings_describe_themselves_and_round_trip(trained):
    engine, model, _ = trained
    check_settings(engine, model)


def test_fit_gives_a_model_that_summarises_itself(trained):
    engine, model, _ = trained
    check_summary(engine, model)


def test_save_and_load_give_the_same_decisions(trained, clips):
    engine, model, path = trained
    check_save_and_load(engine, model, path, clips)


def test_a_session_plays_a_valid_clip_from_any_start_and_live(trained, clips):
    check_sessions(trained[1], clips)


def test_certified_in_a_room(trained, clips):
    check_certified(trained[1], clips)


def test_a_damaged_model_file_is_refused_by_its_arrays_schema(trained, tmp_path):
    engine, _, path = trained
    check_schema(engine, path, str(tmp_path))


def test_a_model_refuses_a_library_without_its_clips_or_with_other_motion(trained, clips):
    check_refuses_other_clips(trained[1], clips, trained[2])


@pytest.mark.parametrize("name", sorted(n for n in ENGINES if ENGINES[n].Model.absent_settings))
def test_a_file_saved_before_a_setting_plays_as_it_did(name):
    """A model file from before a setting existed (Warp Rate) loads with the value that setting has
    when off, how the file played when saved; a file that stores it keeps what it stores."""
    model_cls = ENGINES[name].Model
    stored = to_dict(ENGINES[name].Settings())
    for key, then in model_cls.absent_settings.items():
        assert stored[key] != then  # the default differs, so the test can tell them apart
        old = model_cls.stored_settings("old.npz", {k: v for k, v in stored.items() if k != key})
        assert getattr(old, key) == then  # exact: the value stored_settings fills in, passed through
        # exact: the value stored_settings fills in, passed through
        assert getattr(model_cls.stored_settings("new.npz", stored), key) == stored[key]
