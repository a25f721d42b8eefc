"""Synthesis: pieces of clips laid end to end into one continuous motion."""

import os

import numpy as np
import pytest

from motionctl import bvh, quat
from motionctl.motion import root_frame
from motionctl.synth import SynthState, Synthesizer, frame_table, synthesize_clip, synthesize_pieces


@pytest.fixture(scope="module")
def table(demo_library):
    clips = [bvh.read_bvh(os.path.join(demo_library, f + ".bvh")) for f in ("demo_walk_turn_left", "demo_run")]
    return frame_table(clips), clips


def test_consecutive_pieces_reproduce_the_source_clip(table):
    t, clips = table
    src = clips[0]
    pieces = [(0, s, 12) for s in range(0, 240, 12)]
    _, yaw0 = root_frame(src)
    out = synthesize_clip(t, pieces, start_yaw=yaw0[0] - t.motion[0, 2])
    # Same motion as the source, moved so that it starts at the origin.
    ref = src.root_pos[:240] - [src.root_pos[0, 0], src.root_pos[0, 1], 0]
    first_step = out.root_pos[0, :2]
    assert np.allclose(out.root_pos[:, :2] - first_step, ref[:, :2] - ref[0, :2], atol=1e-9)
    assert np.allclose(out.root_pos[:, 2], ref[:, 2])
    assert np.allclose(np.abs(np.sum(out.local_rot * src.local_rot[:240], -1)), 1.0, atol=1e-9)


def test_a_jump_between_clips_is_crossfaded_and_continuous(table):
    t, clips = table
    root, rot, _ = synthesize_pieces(t, [(0, 100, 12), (1, 50, 12)], crossfade=3)
    # Crossfade frames lie between the continuation of piece 1 and piece 2's own frames.
    for k in range(3):
        cont = t.local_rot[t.first[0] + 112 + k, 5]
        new = t.local_rot[t.first[1] + 50 + k, 5]
        w = (k + 1) / 4
        want = quat.slerp(cont, new, w)
        assert np.abs(np.sum(want * rot[12 + k, 5])) == pytest.approx(1.0, abs=1e-9)
    # Root speed stays plausible across the cut (no teleport).
    step = np.linalg.norm(np.diff(root[:, :2], axis=0), axis=1) * t.fps
    assert step.max() < 6.0


def test_warp_makes_the_root_follow_the_control_exactly(table):
    t, _ = table
    controls = np.array([[0.5, 2.0, 0.7, 0.0], [0.0, 1.0, -0.4, 0.0]])
    root, rot, state = synthesize_pieces(t, [(0, 30, 12), (1, 10, 12)], SynthState(np.zeros(2), 0.3), 3, controls, 1.0)
    dt = 1 / t.fps
    assert state.yaw == pytest.approx(0.3 + 12 * dt * (0.7 - 0.4))
    speed = np.linalg.norm(np.diff(np.vstack(([0, 0], root[:, :2])), axis=0), axis=1) / dt
    assert np.allclose(speed[:12], np.hypot(0.5, 2.0)) and np.allclose(speed[12:], 1.0)


def test_streaming_synthesizer_equals_batch_synthesis(table):
    t, _ = table
    pieces = [(0, 0, 12), (0, 12, 12), (1, 40, 12), (0, 200, 12)]
    batch_root, batch_rot, _ = synthesize_pieces(t, pieces)
    s = Synthesizer(t)
    parts = [s.play(*p) for p in pieces]
    root = np.concatenate([p[0] for p in parts])
    rot = np.concatenate([p[1] for p in parts])
    assert np.allclose(root, batch_root, atol=1e-9)
    assert np.allclose(np.abs(np.sum(rot * batch_rot, -1)), 1.0, atol=1e-9)
