"""What a library can answer, said from the capture itself (issue 59): a library of three straight
walks cannot stand, run, turn fast, turn round or jump, and says what the character does instead;
subject 16's dozen-clip mix (walks, veers, 90-degree turns, runs, a forward jump) can all but turn
round; a model's summary and the command line say so."""

import os

import pytest

from motionctl.engines import ENGINES, train_to_file
from motionctl.engines.base import summary_lines
from motionctl.evaluate.looks import model_looks
from motionctl.evaluate.reach import RUN_SPEED, STAND_SECONDS, library_reach
from motionctl.io.library import import_library
from motionctl.settings import from_flat

pytestmark = pytest.mark.mocap

MIX = ("05", "11", "13", "15", "16", "17", "19", "21", "23", "31", "35", "36")


def library(mocap, trials):
    return import_library([os.path.join(mocap, "cmu_amc", "16", f"16_{t}.amc") for t in trials]).groups[0].database.clips


def test_straight_walks_cannot_stop_run_turn_or_jump_and_say_what_happens_instead(mocap):
    reach = library_reach(library(mocap, ("15", "16", "21")))
    assert reach["standing_s"] < STAND_SECONDS and reach["fastest_m_s"] < RUN_SPEED  # margin: measured 0.0 s (against 0.5), 1.7 m/s (2.2)
    said = " | ".join(reach["cannot"])
    for words in ("never stands still", "walks on at its slowest", "never runs", "turns at most", "never turns round",
                  "never leaves the floor"):
        assert words in said, words
    assert len(reach["cannot"]) == 5  # count: one sentence per command


def test_the_mix_answers_all_but_turning_round(mocap):
    reach = library_reach(library(mocap, MIX))
    # margin: runs at 2.8 m/s (against 2.2), turns at 1.5 rad/s (against 1.0), jumps 0.4 s in the air
    assert reach["fastest_m_s"] > RUN_SPEED and reach["turn_rad_s"] > 1.2 and reach["jump_s"] > 0.2
    assert [s for s in reach["cannot"] if "never turns round" not in s] == []
    assert reach["reverse_deg"] < 120  # margin: two 90-degree turns at most, 101 degrees in 2 s


def test_a_library_that_stands_can_stop(mocap):
    """16_33 slows to a stop (the last 0.3 s under 0.2 m/s: not yet standing); 16_01 stands around a
    jump in place."""
    assert library_reach(library(mocap, ("33",)))["standing_s"] < STAND_SECONDS  # margin: 0.0 s against 0.5
    reach = library_reach(library(mocap, ("01", "33")))
    assert reach["standing_s"] > 1.0  # margin: measured 2.0 s
    assert not any("stands still" in s for s in reach["cannot"])


def test_a_model_trained_on_it_says_so_in_its_summary(mocap, tmp_path):
    clips = library(mocap, ("15", "16", "21"))
    e = ENGINES["matching"]
    model, _ = train_to_file("matching", clips, from_flat(e.Settings, dict(e.quick)), str(tmp_path / "m.npz"))
    model.info.update(model_looks(model, clips))  # what Train and the command line's train add
    lines = summary_lines(e, model.info)
    warned = [text for text, warning in lines if warning and "cannot answer every command" in text]
    assert len(warned) == 1 and "never stands still" in warned[0]  # count: one warning line
    assert any(text.startswith("check run: worst second:") for text, _ in lines)
