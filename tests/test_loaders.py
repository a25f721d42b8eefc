"""The model loaders' less travelled paths, each with what it must do (issue 57's coverage of
store.py, engines/base.py, engines/schema.py and the engines' load and check code): the archive
reader's refusals, the header's JSON of numpy values, the base model's defaults and its refusals
of libraries that cannot train, the summary as the panel prints it, and each engine's ``check``
refusing arrays and a header that tell different stories (built from a model of its own, so each
refusal is the engine's own words, not a shape the schema caught first)."""

import json
import os
import re

import numpy as np
import pytest

from motionctl import store
from motionctl.engines import ENGINES, load_model
from motionctl.engines.base import Model, clips_of, step_tags, summary_lines, working_clips
from motionctl.engines.schema import Array, check_arrays, spec_of
from motionctl.errors import MotionctlError, MotionFileError
from motionctl.io import demo_data
from motionctl.play.commands import Command


@pytest.fixture(scope="module")
def demo():
    return [clip for clip, _, _ in demo_data.demo_clips(seed=0)]


# ----------------------------------------------------------------------------- the archive reader

def test_the_archive_reader_refuses_what_is_not_a_motionctl_archive_naming_it(tmp_path):
    good = store.save_archive(tmp_path / "m", "motionctl.test/1", {"a": np.int64(3), "tags": {"walk", "run"},
                                                                   "v": np.arange(2.0)}, {"x": np.arange(3)})
    with store.open_archive(good, "motionctl.test/1", "test") as (meta, z):
        assert meta["a"] == 3 and meta["tags"] == ["run", "walk"] and meta["v"] == [0.0, 1.0]
        assert z["x"].tolist() == [0, 1, 2]
    with pytest.raises(TypeError, match="object is not JSON"):
        store.save_archive(tmp_path / "n", "motionctl.test/1", {"bad": object()}, {})
    cases = {"missing": (tmp_path / "gone.npz", "test file is missing"),
             "folder": (tmp_path, "test file is not a regular file"),
             "format": (good, "not a motionctl test (format 'motionctl.test/1')")}
    for name, (path, what) in cases.items():
        with pytest.raises(MotionFileError, match=re.escape(what)):
            with store.open_archive(path, "motionctl.other/1" if name == "format" else "motionctl.test/1", "test"):
                pass
    np.savez(tmp_path / "list.npz", meta=np.frombuffer(b"[1, 2]", dtype=np.uint8))
    with pytest.raises(MotionFileError, match="its header is not an object"):
        store.archive_format(tmp_path / "list.npz", "test")
    np.save(tmp_path / "single.npy", np.arange(3))
    with pytest.raises(MotionFileError, match="a single array"):
        store.archive_format(tmp_path / "single.npy", "test")


def test_a_file_that_cannot_be_opened_is_named(tmp_path, monkeypatch):
    path = tmp_path / "take.bvh"
    path.write_text("HIERARCHY")
    real = open

    def refused(p, *a, **kw):
        if os.fspath(p) == str(path):
            raise PermissionError(13, "Permission denied")
        return real(p, *a, **kw)

    monkeypatch.setattr("builtins.open", refused)
    with pytest.raises(MotionFileError, match=r"take\.bvh: cannot read: Permission denied"):
        store.read_bytes(path)


# ----------------------------------------------------------------------------- the schema of arrays

def test_array_specs_check_trailing_axes_and_fixed_ranges(tmp_path):
    schema = {"centres": Array("f", 2, tail=(4,)), "kind": Array("i", 1, low=0, high=3), "g#_dx": Array("f", 2)}
    # count: a name and the schema's own entry
    assert spec_of(schema, "g12_dx") == ("g#_dx", schema["g#_dx"]) and spec_of(schema, "other") is None
    check_arrays("m.npz", schema, {"centres": np.zeros((2, 4)), "kind": np.array([0, 2]), "g0_dx": np.zeros((1, 1))})
    with pytest.raises(MotionFileError, match=r"'centres' has shape \(2, 3\), its last axes must be \(4,\)"):
        check_arrays("m.npz", schema, {"centres": np.zeros((2, 3)), "kind": np.array([0])})
    with pytest.raises(MotionFileError, match=r"'kind' holds 3, out of range \(under 3\)"):
        check_arrays("m.npz", schema, {"centres": np.zeros((2, 4)), "kind": np.array([3])})


def test_float_arrays_past_any_saved_quantity_are_refused_where_they_load():
    """A finite float no model saves (1e300 in active learning's ground path, fuzz case 41,188) was
    accepted, overflowed in play and reached scipy's solver as a traceback: refused at load, naming
    the array, in arrays that must be finite and in those that may hold ±inf alike."""
    schema = {"path": Array("f", 2), "cost": Array("f", 1, finite=False)}
    check_arrays("m.npz", schema, {"path": np.full((2, 2), -1e15), "cost": np.array([np.inf, -np.inf, 1e15])})
    for arrays, name, shown in [({"path": np.array([[0.0, 1e300]]), "cost": np.zeros(1)}, "path", "1e+300"),
                                ({"path": np.zeros((1, 2)), "cost": np.array([np.inf, -2e15])}, "cost", "-2e+15"),
                                ({"path": np.array([[0, -3e38]], np.float32), "cost": np.zeros(1)}, "path", "-3e+38")]:
        with pytest.raises(MotionFileError, match=rf"m.npz: array '{name}' holds {re.escape(shown)}, beyond"):
            check_arrays("m.npz", schema, arrays)


# ----------------------------------------------------------------------------- the base model

def test_a_library_that_cannot_train_is_refused_naming_why(demo):
    with pytest.raises(MotionctlError, match="no clips to train on"):
        clips_of([])
    still = demo[0].slice(0, 30)
    still.root_pos = np.repeat(still.root_pos[:1], still.n_frames, axis=0)
    still.local_rot = still.local_rot.copy()
    still.local_rot[:, 0] = still.local_rot[:1, 0]
    with pytest.raises(MotionctlError, match=r"none of the 1 clip\(s\) moves its root .*Fold Extra Roots"):
        clips_of([still])
    with pytest.raises(MotionctlError, match="the model's clip 'elsewhere' is not in this library"):
        working_clips(demo, [("elsewhere", False)], 30.0)


def test_the_base_model_says_what_an_engine_must_provide_and_its_defaults():
    m = Model(None, {"top_speed": 0.0}, ["a"], 30.0)
    for call in (m.arrays, lambda: Model.from_archive({}, {}, None), lambda: m.start(None, 0),
                 lambda: m.decide(None, None)):
        with pytest.raises(NotImplementedError):
            call()
    assert m.top_speed == pytest.approx(1.5 * m.typical_speed)  # 0 recorded: none known
    assert m.goals == () and m.own_graph() is None and m.picture() is None and m.push(None, [1, 0]) is None
    assert m.memory_key((1, 2)) == (1, 2) and m.summary()["engine"] == ""
    commands = m.certify_commands()
    speeds = [float(np.hypot(*c.control[:2])) for c in commands]
    assert len(commands) == 12 and speeds[0] == 0 and np.allclose(speeds[1:], m.typical_speed)
    assert all(isinstance(c, Command) for c in commands) and commands[-1].control[3] == 1


def test_a_summary_reads_as_its_engine_labels_it_then_its_warnings():
    engine = ENGINES["field"]
    lines = summary_lines(engine, {"states": 574, "residual": float("nan"), "value_bytes": "many", "seconds": 2.25,
                                   "dead_ends": 3, "dead_end_clips": ["16_35", "16_11"], "looks_missed": []})
    texts = dict(lines)
    assert "motion states: 574" in texts and "seconds to train: 2.2" in texts
    assert "bytes of values: many" in texts  # a figure that will not format is shown as it is
    assert not any("Bellman" in t for t in texts)  # NaN: not known
    assert ("3 states cannot keep moving (the capture ends standing): 16_35, 16_11", True) in lines
    assert engine.word == "field" and ENGINES["planning"].word == "plan"
    assert ENGINES["graph"].aliases_of("train") == ["build"] and ENGINES["field"].aliases_of("train") == []


def test_a_steps_tags_are_its_heaviest_pieces_clips(demo):
    from motionctl.play.synth import Frames, Step, frame_table

    table = frame_table(demo[:2], demo[0].skeleton)
    step = Step(np.array([[0, 0, 10, 0.2], [1, 0, 10, 0.8]]))
    assert step_tags(table, step) == set(table.tags[1])
    frames = Frames(np.zeros((1, demo[0].skeleton.n_joints, 4)), np.zeros(1), np.zeros((1, 3)), None)
    assert step_tags(table, Step(frames=frames)) == set()


@pytest.mark.parametrize("data", [[1, 2], "fast"])
def test_stored_settings_that_are_not_a_table_are_refused_naming_the_file(data):
    with pytest.raises(MotionFileError, match=r"m\.npz: its settings are not valid"):
        ENGINES["graph"].Model.stored_settings("m.npz", data)


# ----------------------------------------------------------------------------- the engines' own checks

@pytest.fixture(scope="module")
def graph_file(demo, tmp_path_factory):
    from motionctl.engines import train_to_file
    from motionctl.settings import from_flat

    engine = ENGINES["graph"]
    folder = tmp_path_factory.mktemp("graph")
    walk = [c for c in demo if c.name in ("demo_walk", "demo_walk_turn_left", "demo_walk_turn_right")]
    return train_to_file("graph", walk, from_flat(engine.Settings, engine.quick), str(folder / "graph.npz"))[1]


def rewrite(path, out, arrays=None, header=None) -> str:
    with np.load(path, allow_pickle=False) as z:
        saved = {k: np.asarray(z[k]) for k in z.files}
    meta = json.loads(bytes(saved["meta"]).decode())
    if header:
        header(meta)
    if arrays:
        arrays(saved)
    saved["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    np.savez(out, **saved)
    return str(out)


@pytest.mark.parametrize("change, what", [
    (dict(header=lambda m: m["model"].__setitem__("types", m["model"]["types"][:-1])), "disagree with its types"),
    (dict(arrays=lambda a: a.__setitem__("end", a["start"].copy())), "not pieces of the clips it names"),
    (dict(arrays=lambda a: a.__setitem__("path0", np.concatenate([a["path0"]] * 50))), "root path or airborne mask"),
    (dict(arrays=lambda a: a.__setitem__("roughness", a["roughness"][:-1].copy())), "roughness values"),
    (dict(arrays=lambda a: a.update(edges=a["edges"][a["edges"][:, 0] != 0].copy(),
                                    roughness=a["roughness"][a["edges"][:, 0] != 0].copy())), "leads nowhere"),
    (dict(arrays=lambda a: a.__setitem__("look_values", a["look_values"][:-1].copy())), "Look Ahead's table"),
    (dict(arrays=lambda a: a.__setitem__("look_speeds", a["look_speeds"][::-1].copy())), "damaged graph model")])
def test_a_graph_whose_arrays_and_header_disagree_is_refused_by_its_check(graph_file, tmp_path, change, what):
    path = rewrite(graph_file, tmp_path / "graph.npz", **{k: v for k, v in change.items() if v is not None})
    with pytest.raises(MotionFileError) as err:
        load_model(path)
    assert what in str(err.value) and str(err.value).startswith(path), str(err.value)
