"""A run is judged by its worst second (issue 59): the look metrics over every 1 s window, each beside
the capture's own worst second on the same clips.  Clean capture held out of the reference passes;
a body hovering for a second and a looped shuffle whose seams pop fail, where the whole run's
averages let them through (measured on CMU subject 16)."""

import os

import numpy as np
import pytest

from motionctl.evaluate.looks import (PoseReference, capture_looks, capture_worst_windows, looks, targets_missed,
                                      toe_speeds, windows_missed, worst_windows)
from motionctl.io.library import import_library

pytestmark = pytest.mark.mocap

TRIALS = ("15", "16", "17", "19", "21", "31")  # walks, veers, two 90-degree turns


@pytest.fixture(scope="module")
def clips(mocap):
    files = [os.path.join(mocap, "cmu_amc", "16", f"16_{t}.amc") for t in TRIALS]
    return {c.name: c for c in import_library(files).groups[0].database.clips}


@pytest.fixture(scope="module")
def held_out(clips):
    """The reference and the capture's worst seconds without 16_17 (the left turn), and 16_17."""
    others = [c for n, c in clips.items() if n != "16_17"]
    ref = PoseReference.of(others)
    return ref, capture_worst_windows(others, ref), capture_looks(others, ref), clips["16_17"]


def judged(run, held):
    """(what the worst second misses, what the whole run's averages miss) against the capture."""
    ref, cap, src, _ = held
    whole = looks(run, ref)
    windows = windows_missed(whole.pop("worst"), cap)
    # exact: the same computation on the same arrays, called alone
    assert windows == windows_missed(worst_windows(run, ref, ref.toe_limit, rest=ref.rest), cap)
    return windows, targets_missed(whole, src)


def test_captured_motion_held_out_of_the_reference_passes(held_out):
    windows, whole = judged(held_out[3], held_out)
    assert windows == [] and whole == []
    ref, _, src, turn = held_out
    assert targets_missed(looks(turn, ref), src) == []  # the verdict with its worst second


def test_a_body_hovering_for_a_second_fails_though_its_average_passes(held_out):
    turn = held_out[3]
    fps = turn.fps
    a, b = int(1.0 * fps), int(2.5 * fps)  # 1.5 s in the air, 12 cm up, lifted and lowered in 0.1 s
    lift = np.zeros(turn.n_frames)
    ramp = int(0.1 * fps)
    lift[a:b] = 0.12
    lift[a - ramp:a] = np.linspace(0, 0.12, ramp)
    lift[b:b + ramp] = np.linspace(0.12, 0, ramp)
    root = turn.root_pos.copy()
    root[:, 2] += lift
    hover = type(turn)(turn.name, turn.skeleton, turn.fps, root, turn.local_rot)
    windows, whole = judged(hover, held_out)
    assert not any("floor" in m for m in whole)  # the run's average: a foot down often enough
    (said,) = [m for m in windows if "on the floor" in m]
    worst = worst_windows(hover, held_out[0], rest=held_out[0].rest)["planted"]
    assert worst["value"] < 0.1  # measured 0: no foot down for a whole second
    # count: frame numbers; it says where, inside the hover and its ramps
    assert a - ramp <= worst["frames"][0] and worst["frames"][1] < b + ramp
    assert f"{worst['seconds'][0]:.1f}" in said


def test_a_looped_shuffle_whose_seams_pop_fails(clips, held_out):
    """The fragments engine's turn (issue 59) in miniature: 12 frames of a walk played over and over
    while the root travels as captured: every seam jumps the toes faster than any captured toe."""
    walk = clips["16_15"]
    fps = walk.fps
    n = int(2.0 * fps)
    start = int(0.5 * fps)
    loop = start + np.arange(n) % int(0.1 * fps)
    rot = walk.local_rot[loop].copy()
    rot[:, 0] = walk.local_rot[start:start + n, 0]  # the root turns and travels as captured
    shuffle = type(walk)("shuffle", walk.skeleton, fps, walk.root_pos[start:start + n], rot)
    windows, _ = judged(shuffle, held_out)
    assert any("faster than any captured toe" in m for m in windows)
    assert toe_speeds(shuffle).max() > 1.5 * held_out[0].toe_limit  # margin: the seams, against the capture's fastest


def test_the_capture_names_its_worst_second(clips):
    ref = PoseReference.of(list(clips.values()))
    cap = capture_worst_windows(list(clips.values()), ref)
    assert cap["toe_limit"] == pytest.approx(max(toe_speeds(c).max() for c in clips.values())) == pytest.approx(ref.toe_limit)
    for key in ("skating", "planted", "sliding_cm", "pose_p95"):
        w = cap[key]
        assert w["clip"] in clips and 0 <= w["frames"][0] <= w["frames"][1] < clips[w["clip"]].n_frames  # count: frames
        assert w["seconds"][1] - w["seconds"][0] == pytest.approx(1.0, abs=0.05)


def test_a_clip_shorter_than_a_second_is_one_window(clips):
    short = clips["16_15"].slice(0, 60)  # half a second at 120 fps
    w = worst_windows(short, None, 5.0)
    for key in ("skating", "planted", "sliding_cm", "toe_spikes"):
        if w[key]["value"] is not None:
            assert w[key]["frames"] == [0, 59]  # count: frame numbers
