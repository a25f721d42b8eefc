"""A saved model's JSON header has one declared shape (``engines.schema``: ``base.header_shape``, each
engine's ``Model.header``, the settings' kinds), checked as a whole on load: every field of the
wrong kind or out of range is one MotionFileError naming the file and the field (issue 57: a
``summary.top_speed`` of "x", a planning ``gamma`` of null, a field ``k`` of 7.0 or a fragments
``n_frames`` of 10^12 each met the code that used them, with its own traceback or a 7 TiB request)."""

import json
import os

import numpy as np
import pytest

from motionctl.engines import ENGINES, load_model
from motionctl.engines.base import header_shape
from motionctl.engines.schema import (Cases, Flag, Items, Num, Plain, Row, Table, Text, check_header,
                                      settings_shape)
from motionctl.errors import MotionctlError, MotionFileError
from motionctl.settings import to_dict


# ----------------------------------------------------------------------------- the shapes themselves

def misfit(shape, doc) -> str | None:
    """The error text for ``doc``, or None when it fits."""
    try:
        check_header("h.npz", shape, doc)
    except MotionFileError as exc:
        assert "\n" not in str(exc) and str(exc).startswith("h.npz: its header's ")
        return str(exc)
    return None


def test_numbers_are_finite_in_range_and_whole_when_declared():
    shape = Table({"n": Num(4, 240, whole=True), "v": Num(0.0, 50.0, optional=True)})
    assert misfit(shape, {"n": 6, "v": 1.5}) is None and misfit(shape, {"n": 6, "v": None}) is None
    assert misfit(shape, {"n": 6}) is None  # optional: may be absent
    assert "'n' must be a whole number, got 6.0" in misfit(shape, {"n": 6.0})
    assert "'n' must be a whole number, got 1e+308" in misfit(shape, {"n": 1e308})
    assert "'n' must be a whole number from 4 to 240, got 1000000000000" in misfit(shape, {"n": 10**12})
    assert "'n' must be a whole number, got True" in misfit(shape, {"n": True})
    assert "'n' is missing" in misfit(shape, {})
    assert "'n' must not be null" in misfit(shape, {"n": None})
    assert "'v' must be a finite number, got nan" in misfit(shape, {"n": 6, "v": float("nan")})
    assert "'v' must be a number from 0 to 50, got -5" in misfit(shape, {"n": 6, "v": -5})
    assert "'v' must be a number, got 'x'" in misfit(shape, {"n": 6, "v": "x"})
    assert "at least 1" in misfit(Num(1.0), 0.5) and "at most 2" in misfit(Num(high=2.0), 3)


def test_lists_rows_tables_and_cases_name_the_place_that_does_not_fit():
    pair = Row((Text(empty=False), Flag()))
    shape = Table({"sources": Items(pair, 1, 3), "speeds": Items(Num(0, 50), 0, 2, rising=True),
                   "model": Cases("task", {"a": Table({"task": Text(), "x": Num()}, absent=("x",)),
                                           "b": Table({"task": Text()})}),
                   "extra": Table({}, others=Plain())})
    good = {"sources": [["walk", False]], "speeds": [0, 2], "model": {"task": "a", "x": 1}, "extra": {"any": [{}]}}
    assert misfit(shape, good) is None
    assert misfit(shape, dict(good, model={"task": "a"})) is None  # a file from before x: its default
    bad = {"sources": "abc", "speeds": [3, 1], "model": {"task": "c"}}
    wants = {"sources": "'sources' must be a list, got 'abc'", "speeds": "'speeds' must be in ascending order",
             "model": "'model.task' must be one of ['a', 'b'], got 'c'"}
    for key, value in bad.items():
        assert wants[key] in misfit(shape, dict(good, **{key: value}))
    assert "'sources[0][1]' must be true or false, got 1" in misfit(shape, dict(good, sources=[["walk", 1]]))
    assert "'sources[0]' must be a list of 2, got 1" in misfit(shape, dict(good, sources=[["walk"]]))
    assert "'sources[0][0]' must be text that is not empty, got ''" in misfit(shape, dict(good, sources=[["", True]]))
    assert "'sources' must hold from 1 to 3 values, got 4" in misfit(shape, dict(good, sources=[["w", True]] * 4))
    assert "'model.x' must not be null" in misfit(shape, dict(good, model={"task": "a", "x": None}))
    assert "'model.y' is not a field this engine writes" in misfit(shape, dict(good, model={"task": "b", "y": 1}))
    assert "'extra' must be a table, got [1]" in misfit(shape, dict(good, extra=[1]))
    assert "'top level' must be a table" in misfit(shape, [])
    assert "'t' must be one of ['x', 'y'], got 'z'" in misfit(Table({"t": Text(choices=("x", "y"))}), {"t": "z"})
    assert "must be text, got" in misfit(Table({"t": Text(longest=3)}), {"t": "four"})


@pytest.mark.parametrize("name", sorted(ENGINES))
def test_settings_are_stored_with_their_kinds(name):
    """Each engine's settings as stored (``to_dict``) fit ``settings_shape``; a whole number written as
    7.0, a word for a flag or a number for a list are refused by name (their ranges are the
    settings' own, checked by ``validate`` after the shape)."""
    engine = ENGINES[name]
    shape = settings_shape(engine.Settings)
    stored = json.loads(json.dumps(to_dict(engine.Settings())))
    assert misfit(shape, stored) is None
    flat = [(k, v) for k, v in stored.items() if not isinstance(v, dict)]
    for key, value in flat:
        kind = shape.fields[key]
        if isinstance(kind, Num) and kind.whole:
            wrong = {**stored, key: float(value)}
            assert f"'{key}' must be a whole number, got {float(value)!r}" in misfit(shape, wrong)
        elif isinstance(kind, Flag):
            assert f"'{key}' must be true or false" in misfit(shape, {**stored, key: "yes"})
        elif isinstance(kind, Items):
            assert f"'{key}' must be a list" in misfit(shape, {**stored, key: 3})
    assert misfit(shape, {**stored, "from_a_newer_version": 1}) is None  # ignored, as ``from_dict`` does


# ----------------------------------------------------------------------------- every engine's files

@pytest.fixture(scope="module")
def saved(mocap, tmp_path_factory):
    """{engine: a model file} of every engine, trained on three of CMU subject 16's clips (the models
    the fuzz test and the reproducibility test train: one training per test process)."""
    import model_digests

    folder = tmp_path_factory.mktemp("headers")
    return {name: model.save(str(folder / f"{name}.npz")) for name, model in model_digests.trained(mocap)}


def edited(path, out, change) -> str:
    """A copy of model file ``path`` at ``out`` whose header ``change(meta)`` edited."""
    with np.load(path, allow_pickle=False) as z:
        arrays = {k: np.asarray(z[k]) for k in z.files}
    meta = json.loads(bytes(arrays["meta"]).decode())
    change(meta)
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    np.savez(out, **arrays)
    return str(out)


def put(place, value):
    """A ``change`` setting the header value at ``place`` ("model.task_params.gamma")."""
    keys = place.split(".")

    def change(meta):
        d = meta
        for k in keys[:-1]:
            d = d[k]
        d[keys[-1]] = value
    return change


def refused(path, match) -> str:
    with pytest.raises(MotionFileError) as err:
        load_model(path)
    text = str(err.value)
    assert "\n" not in text and text.startswith(os.fspath(path)) and match in text, text
    return text


ISSUE_57 = [("fragments", "summary.top_speed", "x", "must be a number"),
            ("fragments", "summary.top_speed", -5, "from 0 to 50"),
            ("fragments", "summary.top_speed", [], "must be a number"),
            ("matching", "summary.sources", 5, "'summary.sources' must be a list"),
            ("matching", "summary.sources", [[1]], "'summary.sources[0]' must be text"),
            ("matching", "summary.sources", "abc", "'summary.sources' must be a list"),
            ("fragments", "model.n_frames", 10**12, "from 4 to 240"),
            ("fragments", "model.n_frames", 1e308, "must be a whole number"),
            ("fragments", "model.n_frames", 7, "where its settings cut fragments of 6 poses"),
            ("planning", "model.task_params.gamma", None, "must not be null"),
            ("planning", "model.task_params.gamma", "x", "must be a number"),
            ("planning", "model.task_params.gamma", [1.0], "must be a number"),
            ("field", "settings.k", 7.0, "'settings.k' must be a whole number"),
            ("field", "model.n_states", 10, "more than its header's 'model.n_states'"),
            ("graph", "model.actions", [["kick", -3]], "'model.actions"),
            ("active", "model.log", [{"coverage": 0.5}], "'model.log[0].action' is missing"),
            ("active", "model.tolerance", "0.12", "'model.tolerance' must be a number"),
            ("matching", "model", {"offset": 1}, "'model.offset' is not a field this engine writes"),
            ("graph", "fps", "30", "'fps' must be a number"),
            ("graph", "clip_names", [], "'clip_names' must hold"),
            ("planning", "model.task_params.speeds", [3.0, 1.0], "must be in ascending order")]


@pytest.mark.mocap
@pytest.mark.parametrize("engine, place, value, match", ISSUE_57,
                         ids=[f"{e}-{p}={v!r}"[:60] for e, p, v, _ in ISSUE_57])
@pytest.mark.slow
def test_a_header_field_of_the_wrong_kind_or_size_is_refused_naming_it(saved, tmp_path, engine, place, value, match):
    path = edited(saved[engine], tmp_path / f"{engine}.npz", put(place, value))
    refused(path, match)


@pytest.mark.slow
@pytest.mark.mocap
@pytest.mark.parametrize("name", sorted(ENGINES))
def test_every_field_an_engine_writes_in_its_header_is_declared_and_checked(saved, tmp_path, name):
    """The file as saved loads; each field of its header that is not a free-form figure, given a
    value of another kind, is refused naming that field (so every field the loader reads is typed)."""
    engine = ENGINES[name]
    load_model(saved[name])
    with np.load(saved[name], allow_pickle=False) as z:
        meta = json.loads(bytes(z["meta"]).decode())
    shape = header_shape(engine.Model)
    # (its format tag is the archive reader's: "not a motionctl model")
    places = [k for k in meta if k not in ("model", "format")] + [f"model.{k}" for k in meta["model"]]
    checked = 0
    for place in places:
        top, _, sub = place.partition(".")
        spec = shape.fields[top]
        spec = spec.tables[meta["model"][spec.key]].fields[sub] if isinstance(spec, Cases) else \
            (spec.fields[sub] if sub else spec)
        if isinstance(spec, Plain) or (isinstance(spec, Table) and spec.others is not None and not spec.fields):
            continue
        odd = {"odd": [1]} if not isinstance(spec, Table) else [1]
        refused(edited(saved[name], tmp_path / "edited.npz", put(place, odd)), f"'{place}")
        checked += 1
    assert checked >= len(meta["model"]) and "sources" in places


@pytest.mark.slow
@pytest.mark.mocap
def test_binding_fragments_asks_the_memory_guard_first(saved, monkeypatch, mocap):
    """A fragment controller's binding allocates poses per fragment: the memory guard answers first."""
    import model_digests

    from motionctl import jobs

    model = load_model(saved["fragments"])
    monkeypatch.setattr(jobs, "memory_budget", lambda: 1024)
    with pytest.raises(MotionctlError, match="binding the fragment controller .* needs about"):
        model.play(model_digests.small_library(mocap).clips)
