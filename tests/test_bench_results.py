"""The benchmarks' results files stay whole: a scoreboard run on a few engines goes into the board
as it stands, not in its place (stop 52 once committed a board of one row)."""

import copy
import json
import os

from conftest import ROOT


def test_a_partial_scoreboard_run_replaces_its_rows_of_the_full_board_and_nothing_else():
    import bench_scoreboard as sb
    with open(os.path.join(ROOT, "bench", "results", "scoreboard.json")) as fh:
        board = json.load(fh)
    variants = [r["variant"] for r in board["rows"]]
    assert len(variants) > 2 and "matching" in variants and "active" in variants
    again = copy.deepcopy(next(r for r in board["rows"] if r["variant"] == "active"))
    matching = next(r for r in board["rows"] if r["variant"] == "matching")["stats"]["direction_s"]["median"]
    again["stats"]["direction_s"]["median"] = 2.0 * matching  # slower than the direction target allows
    extra = dict(copy.deepcopy(again), variant="active:new")
    part = {"rows": [again, extra], "command": "python bench/bench_scoreboard.py --engines active,active:new",
            "wall_seconds": 12.0, "environment": {"commit": "f" * 40}}
    out = sb.merge(copy.deepcopy(board), part)
    # count: names
    assert [r["variant"] for r in out["rows"]] == variants + ["active:new"]  # in place; a new variant last
    for before, after in zip(board["rows"], out["rows"]):
        if before["variant"] != "active":
            # exact: rows merge() leaves alone are the same JSON values
            assert after["stats"] == before["stats"] and after["targets"] == before["targets"]
    row = next(r for r in out["rows"] if r["variant"] == "active")
    # exact: the float put in, carried through merge() untouched
    assert row["stats"]["direction_s"]["median"] == 2.0 * matching
    assert row["targets"]["direction_median"] is False  # measured again against the board's matching
    assert out["merged"][-1]["rows"] == ["active", "active:new"]
    assert all("active" not in m["rows"] for m in out["merged"][:-1])  # earlier records give the row up
    assert "f" * 7 in sb.merged_note(out)
    assert sb.merge({"rows": []}, part) is part  # nothing to merge into: the run is the board
