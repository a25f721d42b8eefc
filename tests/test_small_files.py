"""The small files a user hands over (traces, timelines, rooms, bone-map presets, sidecars) go through
one reader (``store.read_text``/``read_json``): regular files only, a size cap, UTF-8 named by line,
JSON nesting, numbers finite and in range; each problem one MotionFileError naming the file (issue
37: these escaped as foreign exceptions or hung)."""

import json
import os
import re

import numpy as np
import pytest

from motionctl.errors import MotionFileError
from motionctl.evaluate.room.environment import read_environment
from motionctl.play.commands import load_timeline, read_trace
from motionctl.retarget.mapping import load_preset
from motionctl.tags import read_sidecar

READERS = {"trace.csv": read_trace, "trace.json": read_trace, "room.json": read_environment,
           "preset.json": load_preset}


@pytest.mark.parametrize("name", sorted(READERS))
def test_a_pipe_given_as_any_small_file_is_refused_without_waiting(tmp_path, name):
    """A FIFO: reading it would wait for a writer for ever."""
    fifo = tmp_path / name
    os.mkfifo(fifo)
    with pytest.raises(MotionFileError, match="not a regular file"):
        READERS[name](str(fifo))


def test_a_sidecar_that_is_a_pipe_is_refused(tmp_path):
    os.mkfifo(tmp_path / "walk.json")
    with pytest.raises(MotionFileError, match="not a regular file"):
        read_sidecar(str(tmp_path / "walk.bvh"))


@pytest.mark.parametrize("name", sorted(READERS))
def test_a_file_over_the_size_cap_is_refused_before_it_is_read(tmp_path, name):
    """65 MB (sparse, so it costs no disk): a trace of 10^7 rows took 4.8 GB to read."""
    big = tmp_path / name
    with open(big, "wb") as fh:
        fh.truncate(65 << 20)
    with pytest.raises(MotionFileError, match="more than motionctl reads"):
        READERS[name](str(big))


def test_bytes_that_are_not_utf8_are_named_by_line(tmp_path):
    path = tmp_path / "latin.csv"
    path.write_bytes(b"vx,vy,turn,airborne\n0,1,0,0\n# caf\xe9\n0,1,0,0\n")
    with pytest.raises(MotionFileError, match=r"latin\.csv:3: not UTF-8"):
        read_trace(str(path))


@pytest.mark.parametrize("rate, what", [('"10"', "must be a number"), ("Infinity", "rate inf"),
                                        ("1e-300", "rate 1e-300"), ("true", "must be a number")])
def test_a_json_trace_rate_must_be_a_number_in_range(tmp_path, rate, what):
    path = tmp_path / "t.json"
    path.write_text('{"rate": %s, "samples": [[0, 1, 0, 0]]}' % rate)
    with pytest.raises(MotionFileError, match=what):
        read_trace(str(path))


def test_a_csv_trace_rate_out_of_range_names_its_line(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("# rate: 1e9\nvx,vy,turn,airborne\n0,1,0,0\n")
    with pytest.raises(MotionFileError, match=r"t\.csv:1: rate 1e\+09"):
        read_trace(str(path))


def test_nan_times_in_a_timeline_are_refused(tmp_path):
    path = tmp_path / "timeline.json"
    path.write_text('{"rate": 10, "samples": [[0, 1, 0, 0], [0, 1, 0, 0]], "times": [0, NaN]}')
    with pytest.raises(MotionFileError, match="finite"):
        load_timeline(str(path))


def test_json_nested_deeper_than_the_parser_goes_is_one_error(tmp_path):
    for name, reader in (("room.json", read_environment), ("trace.json", read_trace), ("preset.json", load_preset)):
        path = tmp_path / name
        path.write_text("[" * 100000 + "]" * 100000)
        with pytest.raises(MotionFileError, match="nested too deeply"):
            reader(str(path))


def test_a_400_digit_number_in_a_room_is_not_finite(tmp_path):
    path = tmp_path / "room.json"
    path.write_text('{"bounds": [0, 0, 1%s, 5]}' % ("0" * 400))
    with pytest.raises(MotionFileError, match="finite numbers"):
        read_environment(str(path))


def test_a_polygon_of_a_million_points_is_refused(tmp_path):
    """It asked for 37 GiB when rasterised."""
    t = np.linspace(0, 2 * np.pi, 1_000_000, endpoint=False)
    path = tmp_path / "room.json"
    path.write_text(json.dumps({"bounds": [0, 0, 10, 10], "obstacles": [
        {"kind": "wall", "polygon": np.round(np.column_stack((5 + np.cos(t), 5 + np.sin(t))), 4).tolist()}]}))
    with pytest.raises(MotionFileError, match="more than 10,000"):
        read_environment(str(path))


def test_a_detailed_polygon_rasterises_in_bounded_blocks_and_one_too_detailed_for_the_grid_is_refused(monkeypatch):
    """A 10,000-point polygon over a 200 m room asked for 1.6e10 numbers at once (the fuzz bench's
    memory cap); now the cells are measured in blocks, within each obstacle's box, and a room
    whose cell-edge tests would take minutes is one error."""
    from motionctl.errors import MotionctlError
    from motionctl.evaluate.room import environment as E

    t = np.linspace(0, 2 * np.pi, 3000, endpoint=False)
    ring = np.column_stack((5 + 2 * np.cos(t), 5 + 2 * np.sin(t)))
    env = E.Environment((0, 0, 10, 10), [E.Obstacle("wall", ring), E.Obstacle("region", ring[::10], forbid=("run",))])
    whole = E.rasterise(env)
    monkeypatch.setattr(E, "BLOCK_PAIRS", 5000)  # many blocks: the same cells
    assert np.array_equal(E.rasterise(env).bits, whole.bits)
    assert (whole.bits & E.WALL).sum() > 0.1 * whole.bits.size and (whole.bits & 8).sum() > 0
    big = E.Environment((0, 0, 200, 200), [E.Obstacle("wall", 100 + 90 * np.column_stack((np.cos(t), np.sin(t))))])
    with pytest.raises(MotionctlError, match="too detailed"):
        E.rasterise(big)


def test_a_well_formed_trace_and_room_still_read(tmp_path):
    trace = tmp_path / "t.json"
    trace.write_text('{"rate": 10, "samples": [[0, 1, 0, 0], [0, 1.2, 0, 0]]}')
    assert read_trace(str(trace)).rate == 10.0
    room = tmp_path / "room.json"
    room.write_text('{"bounds": [0, 0, 8, 6], "obstacles": [{"kind": "wall", "polygon": [[1, 1], [2, 1], [2, 2]]}]}')
    assert len(read_environment(str(room)).obstacles) == 1


def test_a_long_csv_trace_reads_in_blocks_and_names_a_bad_line_past_the_first(tmp_path):
    """A trace longer than one parse block (``CSV_BLOCK`` rows) reads as the whole file, and a value
    that is not a number, or a velocity beyond the stated range, in a later block is named by its line."""
    from motionctl.play.commands import CONTROL_LIMITS
    from motionctl.play.csvtrace import CSV_BLOCK

    n = CSV_BLOCK + 1000
    a = np.round(np.random.default_rng(1).uniform(-3, 3, (n, 4)), 4)
    a[:, 3] = np.arange(n) % 2
    path = tmp_path / "long.csv"
    lines = ["# rate: 30", "vx,vy,turn,airborne", ""] + [",".join(f"{v:g}" for v in row) for row in a]
    path.write_text("\n".join(lines) + "\n")
    trace = read_trace(path)
    assert trace.rate == 30 and np.array_equal(trace.samples, a)
    bad = CSV_BLOCK + 500  # sample index; the file line is 3 header lines after it, 1-based
    for value, what in (("fast", "non-numeric value 'fast'"), (f"{2 * CONTROL_LIMITS[1]:g}", "beyond")):
        lines[3 + bad] = f"0,{value},0,0"
        path.write_text("\n".join(lines) + "\n")
        with pytest.raises(MotionFileError, match=rf"long\.csv:{4 + bad}: .*{what}"):
            read_trace(path)


@pytest.mark.parametrize("extra, what", [('"heading": [null, -Infinity]', "heading goal is beyond"),
                                         ('"speed": [1e300, null]', "speed goal is beyond"),
                                         ('"target": [[null, null], [3, 1e9]]', "target goal is beyond"),
                                         ('"times": [1, 0]', "times must not go back"),
                                         ('"times": [0, 1], "meta": {"seconds": "long"}', "lasts 'long' s")])
def test_a_timelines_goals_and_clock_are_numbers_in_range(tmp_path, extra, what):
    """An infinite heading goal played NaN into motion matching's features; a clock going back or a
    length in words broke the replay."""
    path = tmp_path / "timeline.json"
    path.write_text('{"rate": 10, "samples": [[0, 1, 0, 0], [0, 1, 0, 0]], ' + extra + "}")
    with pytest.raises(MotionFileError, match=what):
        load_timeline(str(path))


def test_a_csv_trace_with_carriage_returns_reads_and_a_room_of_many_obstacles_is_refused(tmp_path):
    path = tmp_path / "old_mac.csv"
    path.write_bytes(b"# rate: 10\rvx,vy,turn,airborne\r0,1,0,0\r0,1.5,0.2,0\r")
    assert read_trace(str(path)).samples.tolist() == [[0, 1, 0, 0], [0, 1.5, 0.2, 0]]
    room = tmp_path / "room.json"
    room.write_text(json.dumps({"bounds": [0, 0, 8, 6], "obstacles": [{"kind": "wall", "circle": [4, 3, 0.1]}] * 1001}))
    with pytest.raises(MotionFileError, match="1,001 obstacles are more than 1,000"):
        read_environment(str(room))


@pytest.mark.parametrize("obstacle, where", [
    ({"kind": "wall", "circle": [1, 1, 1e30]}, "a circle"), ({"kind": "chasm", "circle": [-1e30, 1, 1]}, "a circle"),
    ({"kind": "wall", "polygon": [[0, 0], [1e30, 0], [1, 1]]}, "a polygon point"),
    ({"kind": "low", "polygon": [[0, 0], [1, 0], [1, -2e4]]}, "a polygon point")])
def test_an_obstacle_far_outside_any_room_is_refused_naming_it(tmp_path, obstacle, where):
    """A 1e30 m circle cast its grid cells past any integer (numpy's cast warning, then rasterised with
    exit status 0); a 1e30 polygon point the same.  Now one error naming the obstacle, and no warning."""
    import warnings

    path = tmp_path / "room.json"
    path.write_text(json.dumps({"bounds": [0, 0, 6, 5], "obstacles": [{"kind": "wall", "circle": [3, 3, 0.5]},
                                                                      obstacle]}))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(MotionFileError, match=rf"room\.json: obstacles\[1\]: {where}.* must lie within 10000 m"):
            read_environment(str(path))


def test_an_obstacle_reaching_far_past_the_room_still_rasterises_without_a_warning(tmp_path):
    """Within the bound, a wall from far away (9 km) or a pillar of 5 km radius are cut to the room's grid."""
    import warnings

    from motionctl.evaluate.room.environment import WALL, rasterise

    path = tmp_path / "room.json"
    path.write_text(json.dumps({"bounds": [0, 0, 6, 5], "obstacles": [
        {"kind": "wall", "polygon": [[-9000, 0], [3, 0], [3, 1], [-9000, 1]]},
        {"kind": "chasm", "circle": [5006, 2.5, 5000]}]}))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        grid = rasterise(read_environment(str(path)))
    assert grid.bits[0, 2] & WALL and not grid.bits[10, 20] & WALL and grid.bits[-1, 12] & 2  # wall, floor, chasm


def glb(tmp_path, text: bytes, length: int | None = None, kind: int = 0x4E4F534A):
    import struct

    path = tmp_path / "export.glb"
    body = struct.pack("<II", len(text) if length is None else length, kind) + text
    path.write_bytes(b"glTF" + struct.pack("<II", 2, 12 + len(body)) + body)
    return str(path)


@pytest.mark.parametrize("text, length, what", [(b'{"animations": [{"name": "walk"}, {}]}', None, None),
                                                (b'{"animations": [{"name": "w\xe9"}]}', None, "not UTF-8 text"),
                                                (b'{"animations": [{"name": "walk"}', None, "invalid JSON"),
                                                (b'[{"name": "walk"}]', None, "list of named animations"),
                                                (b'{"animations": {"name": "walk"}}', None, "list of named"),
                                                (b'{"animations": [{"name": 7}]}', None, "list of named"),
                                                (b'{"animations": []}', 4096, "says 4,096 bytes"),
                                                (b"[" * 100000 + b"]" * 100000, None, "nested too deeply")])
def test_the_export_checks_glb_read_back_is_one_error_naming_the_file(tmp_path, text, length, what):
    """The .glb an export writes is read back for its animation names; a bad JSON chunk (bytes that
    are not UTF-8, not JSON, not a glTF document) escaped as UnicodeDecodeError or JSONDecodeError."""
    from motionctl.retarget.export import glb_animation_names

    path = glb(tmp_path, text, length)
    if what is None:
        assert glb_animation_names(path) == ["walk", ""]
        return
    with pytest.raises(MotionFileError, match=rf"export\.glb(:1)?: .*{what}"):
        glb_animation_names(path)


def test_a_glb_whose_first_chunk_is_binary_or_that_is_a_folder_is_refused(tmp_path):
    from motionctl.retarget.export import glb_animation_names

    with pytest.raises(MotionFileError, match="first chunk is not JSON"):
        glb_animation_names(glb(tmp_path, b"\x00" * 8, kind=0x004E4942))
    (tmp_path / "folder.glb").mkdir()
    with pytest.raises(MotionFileError, match="not a regular file"):
        glb_animation_names(str(tmp_path / "folder.glb"))


@pytest.mark.parametrize("text, line, what", [
    ("# rate: fast\nvx,vy,turn,airborne\n0,1,0,0\n", 1, "bad rate 'fast'"),
    ("# rate: 10\n# made by hand\n\n", 3, "empty trace: no control samples"),
    ('vx,vy,turn,airborne\n0,"1",0,0\n0,1,0\n', 3, "3 values, expected 4"),
    ('vx,vy,turn,airborne\n0,"x",0,0\n', 2, "non-numeric value 'x'"),
    ("vx,vy,turn,airborne\n0,1,0,0.5\n", 2, "airborne must be 0 or 1, found 0.5")])
def test_a_csv_trace_names_the_line_of_its_first_problem(tmp_path, text, line, what):
    path = tmp_path / "t.csv"
    path.write_text(text)
    with pytest.raises(MotionFileError, match=rf"t\.csv:{line}: .*{what}"):
        read_trace(str(path))


def test_a_quoted_csv_trace_reads_as_numbers(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text('vx,vy,turn,airborne\n0,"1.5",0,0\n"0.5",1,0.2,1\n')
    assert read_trace(str(path)).samples.tolist() == [[0, 1.5, 0, 0], [0.5, 1, 0.2, 1]]


@pytest.mark.parametrize("doc, what", [('{"rate": 10, "samples": [[0, 1, 0]]}', "sample 0 has 3 values"),
                                       ('{"rate": 10, "samples": [[0, 1, 0, 0], 5]}', "sample 1 has 0 values"),
                                       ('{"rate": 10, "samples": [["a", 1, 0, 0]]}', "samples must be numbers"),
                                       ('{"rate": 10, "samples": []}', "empty trace"),
                                       ('[[0, 1, 0, 0]]', "expected {\"rate\""),
                                       ('{"samples": [[0, 1, 0, 0]], "heading": [1, 2]}', "bad times or goals"),
                                       ('{"samples": [[0, 1, 0, 0], [0, 1, 0, 1]], "action": ["kick", null], '
                                        '"target": [[1, 2]]}', "bad times or goals")])
def test_a_json_trace_names_its_problem(tmp_path, doc, what):
    path = tmp_path / "t.json"
    path.write_text(doc)
    with pytest.raises(MotionFileError, match=re.escape(what)):
        read_trace(str(path))


def test_a_json_trace_keeps_its_goals_and_actions(tmp_path):
    path = tmp_path / "t.json"
    path.write_text('{"samples": [[0, 1, 0, 0], [0, 1, 0, 1]], "action": ["kick", null], "target": [[1, 2], null]}'
                    .replace("null]}", "[null, null]]}"))
    trace = read_trace(str(path))
    assert trace.rate == 10.0 and trace.goals["action"].tolist() == ["kick", ""]
    assert trace.goals["target"][0].tolist() == [1, 2] and np.isnan(trace.goals["target"][1]).all()


@pytest.mark.parametrize("room, what", [
    ([1, 2], 'expected {"bounds"'), ({"bounds": [0, 0, -1, 5]}, "min must be below max"),
    ({"bounds": [0, 0, 6, 5], "obstacles": {"a": 1}}, "expected a list of obstacles"),
    ({"bounds": [0, 0, 6, 5], "obstacles": [3]}, r"obstacles\[0\]: expected an object"),
    ({"bounds": [0, 0, 6, 5], "obstacles": [{"kind": "lava", "circle": [1, 1, 1]}]}, "unknown kind 'lava'"),
    ({"bounds": [0, 0, 6, 5], "obstacles": [{"kind": "wall", "polygon": [[0, 0], [1, 1]]}]}, "at least 3"),
    ({"bounds": [0, 0, 6, 5], "obstacles": [{"kind": "wall", "circle": [1, 1, 0]}]}, "radius must be positive"),
    ({"bounds": [0, 0, 6, 5], "obstacles": [{"kind": "wall"}]}, "needs a 'polygon' or a 'circle'"),
    ({"bounds": [0, 0, 6, 5], "obstacles": [{"kind": "region", "circle": [1, 1, 1]}]}, "needs 'allow' or 'forbid'"),
    ({"bounds": [0, 0, 6, 5], "obstacles": [{"kind": "region", "circle": [1, 1, 1], "allow": [3]}]},
     "'allow' must be a list of motion types")])
def test_a_room_names_the_field_at_fault(tmp_path, room, what):
    path = tmp_path / "room.json"
    path.write_text(json.dumps(room))
    with pytest.raises(MotionFileError, match=rf"room\.json: .*{what}"):
        read_environment(str(path))


def test_a_region_takes_one_motion_type_as_a_word(tmp_path):
    path = tmp_path / "room.json"
    path.write_text(json.dumps({"bounds": [0, 0, 6, 5], "obstacles": [
        {"kind": "region", "polygon": [[1, 1], [2, 1], [2, 2]], "forbid": " run "}]}))
    assert read_environment(str(path)).obstacles[0].forbid == ("run",)


@pytest.mark.parametrize("doc, what", [("[]", "not a bone-map preset"),
                                       ('{"format": "motionctl.bonemap", "map": {"spine": 3}}', "is not a bone name")])
def test_a_bone_map_preset_names_its_problem(tmp_path, doc, what):
    from motionctl.retarget.mapping import PRESET_FORMAT

    path = tmp_path / "preset.json"
    path.write_text(doc.replace("motionctl.bonemap", PRESET_FORMAT))
    with pytest.raises(MotionFileError, match=what):
        load_preset(str(path))
    with pytest.raises(MotionFileError, match="no such bone-map preset"):
        load_preset(str(tmp_path / "gone.json"))


@pytest.mark.parametrize("doc, what", [("[1]", "expected an object"), ('{"tags": "walk"}', '"tags" must be a list'),
                                       ('{"description": 3}', '"description" must be text'),
                                       ('{"action_centres": [1.5]}', '"action_centres" must be a list of frame')])
def test_a_sidecar_names_its_problem(tmp_path, doc, what):
    (tmp_path / "walk.json").write_text(doc)
    with pytest.raises(MotionFileError, match=rf"walk\.json: .*{re.escape(what)}"):
        read_sidecar(str(tmp_path / "walk.bvh"))
    assert read_sidecar(str(tmp_path / "other.bvh")) == {}
