"""Every command-line option checked where it enters, before any work (issue 57): a seed, a group,
each output's folder (there, writable, with room for what it will hold: a model's estimated size),
and nothing half-written when the disk fills while writing.  Each failure is one line naming the
option or file, exit status 2, every previous output left as it was, and no "Exception ignored"."""

import dataclasses
import gc
import json
import os
import sys

import numpy as np
import pytest

from motionctl import cli, store
from motionctl.cli import main
from motionctl.engines import ENGINES

from disks import full_disk, read_only

CLIPS = ("walk", "walk_turn_left", "walk_turn_right", "walk_slow")


def one_line(capsys, *fragments) -> str:
    err = capsys.readouterr().err.strip()
    lines = [ln for ln in err.splitlines() if not ln.startswith("warning:")]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in err, err
    for f in fragments:
        assert f in lines[0], lines[0]
    return lines[0]


def status(argv) -> int:
    """``main``'s status, also when argparse refuses the command line (SystemExit)."""
    try:
        return main(argv)
    except SystemExit as exc:
        return exc.code


@pytest.fixture(scope="module")
def models(demo_library, tmp_path_factory):
    """A motion-matching model and a motion graph trained from the command line on four demo clips
    (seconds), and a small room."""
    folder = tmp_path_factory.mktemp("cli_models")
    clips = [os.path.join(demo_library, f"demo_{n}.bvh") for n in CLIPS]
    assert main(["matching", "train", "--clips", *clips, "--out", str(folder / "matching.npz")]) == 0
    assert main(["graph", "train", "--clips", *clips, "--threshold", "0.3", "--out", str(folder / "graph.npz")]) == 0
    room = folder / "room.json"
    room.write_text(json.dumps({"bounds": [0, 0, 6, 5], "obstacles": [{"kind": "wall", "circle": [3, 2.5, 0.4]}]}))
    return {"matching": str(folder / "matching.npz"), "graph": str(folder / "graph.npz"), "room": str(room),
            "clips": clips}


@pytest.mark.parametrize("argv, what", [
    (["fragments", "run", "--model", "m.npz", "--seed", "-1", "--out", "r.bvh"], "--seed: must be a whole number"),
    (["fragments", "trace", "--seed", "-1", "--out", "t.csv"], "--seed: must be a whole number from 0 to 2147483647"),
    (["fragments", "trace", "--seed", "1e3", "--out", "t.csv"], "got '1e3'"),
    (["graph", "eval", "--model", "m.npz", "--seed", "2147483648"], "--seed"),
    (["graph", "run", "--model", "m.npz", "--group", "0", "--out", "r.bvh"], "--group: must be a positive number"),
    (["fragments", "train", "--clips", "x.bvh", "--out", "m", "--bogus"], "unrecognized arguments: --bogus")])
def test_a_bad_option_is_one_line_before_anything_is_read(tmp_path, monkeypatch, capsys, argv, what):
    """``--seed -1`` ended in numpy's "expected non-negative integer" traceback from default_rng."""
    monkeypatch.chdir(tmp_path)
    assert status(argv) == 2
    one_line(capsys, what, "--help")
    assert os.listdir(tmp_path) == []


def test_every_help_is_plain_text(capsys):
    """``python -m motionctl --help`` began with the docstring's ``markup``: every parser's help now
    reads as plain text."""
    import argparse

    def parsers(p):
        yield p
        for a in p._actions:
            if isinstance(a, argparse._SubParsersAction):
                for sub in a.choices.values():
                    yield from parsers(sub)

    texts = [p.format_help() for p in parsers(cli.build_parser())]
    assert len(texts) > 20 and texts[0].startswith("usage: python -m motionctl")
    assert "motionctl's command line" in texts[0]
    assert not [t for t in texts if "``" in t or ":func:" in t]
    assert status(["--help"]) == 0 and "``" not in capsys.readouterr().out


def refuse_training(monkeypatch, engine="matching"):
    """The engine's fit, replaced by one that fails the test if training starts."""
    def fit(*args, **kwargs):
        raise AssertionError("training started")

    monkeypatch.setitem(ENGINES, engine, dataclasses.replace(ENGINES[engine], fit=fit))


def test_training_into_a_read_only_folder_is_refused_before_the_library_is_read(models, tmp_path, monkeypatch,
                                                                                 capsys):
    folder = tmp_path / "locked"
    folder.mkdir()
    how = read_only(folder, monkeypatch)
    monkeypatch.setattr(cli, "load_group", lambda *a, **kw: pytest.fail("the library was read"))
    try:
        assert main(["matching", "train", "--clips", *models["clips"], "--out", str(folder / "m")]) == 2
    finally:
        folder.chmod(0o700)
    one_line(capsys, "--out", "locked/m.npz: cannot be written: Permission denied")
    assert how and os.listdir(folder) == []


def test_training_onto_a_disk_without_room_for_the_model_is_refused_before_training(models, tmp_path, monkeypatch,
                                                                                    capsys):
    """The room asked is the model's estimate from the library: the engine's bytes per second of
    capture times the library's seconds, at least what the panel asks (store.MIN_FREE_BYTES)."""
    refuse_training(monkeypatch)
    usage = store.shutil.disk_usage
    monkeypatch.setattr(store.shutil, "disk_usage", lambda p: usage(p)._replace(free=20 << 20))
    assert main(["matching", "train", "--clips", *models["clips"], "--out", str(tmp_path / "m.npz")]) == 2
    from motionctl.io.library import import_library

    seconds = sum(c.duration for c in import_library(models["clips"]).groups[0].database.clips)
    per_second = ENGINES["matching"].Model.bytes_per_second
    need = max(store.MIN_FREE_BYTES, per_second * seconds) + cli.OUTPUT_SLACK
    one_line(capsys, "--out", f"m.npz: only 20 MB free on its disk, {need / 2**20:.0f} MB needed",
             f"({per_second >> 10} KB per second of capture for {seconds:.0f} s, and at least 64 MB)")
    assert os.listdir(tmp_path) == []


def test_the_estimate_grows_with_the_library_past_the_panels_minimum():
    """Ten seconds of capture ask the panel's minimum of every engine; 100 minutes ask each engine's
    bytes per second times 6,000 s where that is more (a planner's value grids: 24 GB)."""
    def library(seconds):
        return type("Db", (), {"clips": [type("C", (), {"duration": seconds / 10})()] * 10})

    for engine in ENGINES.values():
        per_second = engine.Model.bytes_per_second
        assert 0 < per_second * 10 <= store.MIN_FREE_BYTES  # count: integers (bytes)
        assert cli.estimated_model_bytes(engine.Model, library(10)) == store.MIN_FREE_BYTES  # count: integers (bytes)
        # count: integers (bytes; whole seconds times bytes per second, exact below 2**53)
        assert cli.estimated_model_bytes(engine.Model, library(6000)) == max(store.MIN_FREE_BYTES, per_second * 6000)
    assert cli.estimated_model_bytes(ENGINES["planning"].Model, library(6000)) > 20 << 30


def test_a_full_disk_met_while_saving_is_one_line_and_leaves_the_previous_model(models, tmp_path, monkeypatch, capsys):
    """Training ran (the disk said it had room), the save met ENOSPC: one line, the earlier model as it
    was, no temporary, and none of the seven lines of "Exception ignored in: ZipFile.__del__"."""
    out = tmp_path / "m.npz"
    out.write_bytes(b"an earlier model")
    ignored = []
    monkeypatch.setattr(sys, "unraisablehook", ignored.append)
    full_disk(monkeypatch)
    assert main(["matching", "train", "--clips", *models["clips"], "--out", str(out)]) == 2
    gc.collect()
    one_line(capsys, "m.npz: cannot be written: No space left on device")
    assert not ignored and out.read_bytes() == b"an earlier model" and os.listdir(tmp_path) == ["m.npz"]


@pytest.mark.parametrize("option", ["--json", "--map"])
def test_room_metrics_into_a_read_only_or_missing_folder_are_refused_before_the_evaluation(models, tmp_path,
                                                                                          monkeypatch, capsys, option):
    import motionctl.evaluate as evaluate

    monkeypatch.setattr(evaluate, "certify", lambda *a, **kw: pytest.fail("the evaluation ran"))
    base = ["graph", "eval", "--model", models["graph"], "--env", models["room"]]
    assert main(base + [option, str(tmp_path / "no" / "m")]) == 2
    one_line(capsys, option, "does not exist")
    assert main(base + [option, str(tmp_path / "m\0.json")]) == 2  # the fuzz bench's: a traceback before
    one_line(capsys, option, "NUL byte")
    folder = tmp_path / "locked"
    folder.mkdir()
    read_only(folder, monkeypatch)
    try:
        assert main(base + [option, str(folder / "m")]) == 2
    finally:
        folder.chmod(0o700)
    one_line(capsys, option, "Permission denied")
    assert main(["graph", "eval", "--model", models["graph"], option, str(tmp_path / "m")]) == 2
    one_line(capsys, option, "need a room (--env")
    assert sorted(os.listdir(tmp_path)) == ["locked", "no"] or sorted(os.listdir(tmp_path)) == ["locked"]


def test_room_metrics_onto_a_full_disk_leave_the_previous_files(models, tmp_path, monkeypatch, capsys):
    """A full disk met after the evaluation: one line, the earlier JSON and map as they were (a
    partial file was left before)."""
    for name in ("m.json", "m.npy"):
        (tmp_path / name).write_bytes(b"earlier")
    base = ["graph", "eval", "--model", models["graph"], "--env", models["room"], "--headings", "8", "--pairs", "2",
            "--json", str(tmp_path / "m.json"), "--map", str(tmp_path / "m.npy")]
    full_disk(monkeypatch, after=16)
    assert main(base) == 2
    one_line(capsys, "m.json: cannot be written: No space left on device")
    assert sorted(os.listdir(tmp_path)) == ["m.json", "m.npy"]
    assert all((tmp_path / n).read_bytes() == b"earlier" for n in ("m.json", "m.npy"))
    monkeypatch.undo()
    assert main(base) == 0
    assert json.load(open(tmp_path / "m.json"))["nodes"] > 0 and np.load(tmp_path / "m.npy").ndim == 2


def test_a_run_checks_its_output_first_and_its_clips_from_the_models_record(models, tmp_path, monkeypatch, capsys):
    """``run`` without --clips plays the clips the model recorded (summary.sources, typed on load); a
    record pointing at clips that are gone says so and how to go on; a folder that cannot take the
    BVH is said before the model is even read."""
    run = ["matching", "run", "--model", models["matching"], "--trace-seconds", "2"]
    assert main(run + ["--out", str(tmp_path / "r.bvh")]) == 0
    assert os.path.getsize(tmp_path / "r.bvh") > 1000
    capsys.readouterr()
    with np.load(models["matching"], allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    meta = json.loads(bytes(arrays["meta"]).decode())
    meta["summary"]["sources"] = [str(tmp_path / "gone" / "walk.bvh")]
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    moved = str(tmp_path / "moved.npz")
    np.savez(moved, **arrays)
    assert main(["matching", "run", "--model", moved, "--out", str(tmp_path / "r2.bvh")]) == 2
    one_line(capsys, "--model: the clips it was trained on are gone", "gone/walk.bvh", "pass them with --clips")
    folder = tmp_path / "locked"
    folder.mkdir()
    read_only(folder, monkeypatch)
    monkeypatch.setattr("motionctl.engines.load_model", lambda p: pytest.fail("the model was read"))
    try:
        assert main(run + ["--out", str(folder / "r.bvh")]) == 2
    finally:
        folder.chmod(0o700)
    one_line(capsys, "--out", "Permission denied")
    (tmp_path / "taken.bvh").mkdir()
    assert main(run + ["--out", str(tmp_path / "taken.bvh")]) == 2
    one_line(capsys, "--out", "taken.bvh is a folder")
