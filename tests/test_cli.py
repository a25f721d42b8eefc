"""The command line: every engine trains, runs and evaluates the same way; every user error is one
line naming the file or option, exit status 2, and nothing half-written."""

import json
import os

import numpy as np
import pytest

from motionctl.io.bvh import read_bvh
from motionctl.cli import main

SLOW_CASES = {"fragments", "plan"}  # the slow set: fragments' and the planner's train, run and eval (the graph's stay in the quick run)

QUICK = {"fragments": ["--trace-seconds", "30", "--held-out", "0"],
         "plan": ["--iterations", "3", "--trajectories", "30", "--n-trees", "4"],
         "graph": ["--threshold", "1.0"]}
CLIPS = ("walk", "walk_turn_left", "walk_turn_right", "walk_slow")


def clip_paths(demo_library):
    return [os.path.join(demo_library, f"demo_{n}.bvh") for n in CLIPS]


def one_line_error(capsys, *fragments):
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "Traceback" not in err and len(err.splitlines()) == 1, err
    for f in fragments:
        assert f in err, err
    return err


@pytest.mark.parametrize("word", ["fragments", "plan", "graph"])
def test_every_engine_trains_runs_and_evaluates(demo_library, tmp_path, capsys, word):
    model = tmp_path / "model"  # no extension: .npz is added, and said
    assert main([word, "train", "--clips", *clip_paths(demo_library), "--out", str(model), *QUICK[word]]) == 0
    out = capsys.readouterr().out
    assert f"wrote {model}.npz" in out and os.path.exists(f"{model}.npz")
    summary = json.loads(out.splitlines()[-2])
    assert summary["engine"] == {"plan": "planning"}.get(word, word)  # count: engine names
    run = tmp_path / "run.bvh"
    assert main([word, "run", "--model", f"{model}.npz", "--trace-seconds", "4", "--out", str(run)]) == 0
    clip = read_bvh(run)
    assert clip.n_frames > 30 and np.all(np.isfinite(clip.root_pos))
    assert clip.duration == pytest.approx(4.0, abs=1.5 / clip.fps)  # exactly as long as the trace
    out = capsys.readouterr().out
    assert "looks: feet sliding on" in out and "held-out capture" in out  # how it looks beside its capture
    room = tmp_path / "room.json"
    room.write_text(json.dumps({"bounds": [0, 0, 6, 5], "obstacles": []}))
    assert main([word, "eval", "--model", f"{model}.npz", "--env", str(room), "--headings", "12", "--pairs", "4",
                 "--json", str(tmp_path / "m.json")]) == 0
    assert json.load(open(tmp_path / "m.json"))["nodes"] > 0
    capsys.readouterr()


@pytest.mark.slow
def test_fragments_eval_reports_percent_of_optimal(demo_library, tmp_path, capsys):
    model = str(tmp_path / "f.npz")
    assert main(["fragments", "train", "--clips", *clip_paths(demo_library), "--out", model, *QUICK["fragments"]]) == 0
    assert main(["fragments", "eval", "--model", model, "--count", "2"]) == 0
    assert "% of the off-line optimum" in capsys.readouterr().out
    # A model of one engine is not taken for another's.
    assert main(["plan", "run", "--model", model, "--out", str(tmp_path / "r.bvh")]) == 2
    one_line_error(capsys, "is a fragments model, not planning")


@pytest.mark.slow
def test_user_errors_are_one_line_and_leave_nothing(demo_library, tmp_path, capsys):
    clips = clip_paths(demo_library)
    assert main(["fragments", "train", "--clips", str(tmp_path / "nowhere"), "--out", str(tmp_path / "m")]) == 2
    one_line_error(capsys, "--clips", "nowhere")
    assert main(["fragments", "train", "--clips", *clips, "--out", str(tmp_path / "no" / "m")]) == 2
    one_line_error(capsys, "--out", "does not exist")
    assert not (tmp_path / "no").exists()
    assert main(["fragments", "train", "--clips", *clips, "--out", str(tmp_path / "m"), "--length", "0.01"]) == 2
    one_line_error(capsys, "setting 'length' must be at least 0.05")
    bad = tmp_path / "bad.csv"
    bad.write_text("vx,vy,turn,airborne\n0,1,0,0\n0,nan,0,0\n")
    model = str(tmp_path / "f.npz")
    assert main(["fragments", "train", "--clips", *clips, "--out", model, *QUICK["fragments"]]) == 0
    capsys.readouterr()
    assert main(["fragments", "run", "--model", model, "--trace", str(bad), "--out", str(tmp_path / "r.bvh")]) == 2
    one_line_error(capsys, "bad.csv:3", "NaN")
    assert not (tmp_path / "r.bvh").exists()
    room = tmp_path / "room.json"
    room.write_text('{"bounds": [0, 0, NaN, 5]}')
    assert main(["fragments", "eval", "--model", model, "--env", str(room)]) == 2
    one_line_error(capsys, "room.json", "finite numbers")
    room.write_text('{"bounds": [0, 0, 1e6, 5]}')
    assert main(["fragments", "eval", "--model", model, "--env", str(room)]) == 2
    one_line_error(capsys, "larger than 200 m")
    assert main(["fragments", "train", "--clips", *clips, "--out", str(tmp_path / "m2"), "--traces", "files"]) == 2
    one_line_error(capsys, "no trace file")


def test_demo_errors_leave_no_empty_folder(tmp_path, capsys):
    from tools.demo import main as demo

    out = tmp_path / "new_demo"
    assert demo(["--out", str(out), "--mocap", str(tmp_path / "missing")]) == 2
    assert not out.exists()
    one_line_error(capsys, "--mocap")


def test_info_reports_each_files_decisions(demo_library, capsys):
    assert main(["info", *clip_paths(demo_library)[:2]]) == 0
    out = capsys.readouterr().out
    assert "units CMU units (1/0.45 inch) (detected), up axis Y (detected)" in out


@pytest.mark.parametrize("args, what", [(["fragments", "eval", "--model", "m.npz", "--count", "0"], "--count"),
                                        (["fragments", "run", "--model", "m.npz", "--trace-seconds", "1e9",
                                          "--out", "r.bvh"], "at most 3600"),
                                        (["fragments", "trace", "--seconds", "inf", "--out", "t.csv"], "--seconds")])
def test_options_outside_the_settings_have_ranges(args, what, capsys):
    """``--count 0`` printed "nan%", ``--trace-seconds 1e9`` asked for 224 GiB: refused as the
    command line is read, naming the option."""
    try:
        code = main(args)
    except SystemExit as exc:
        code = exc.code
    assert code == 2
    assert what in capsys.readouterr().err
