"""The Preview panel's Compare box: a played run is measured (skating, responses, discontinuities)
with a plot, and Compare Engines replays its commands through every engine trained on the group,
with the figures the metrics module gives for the same replay."""

import json

import numpy as np
import pytest
from blender_scene import use_demo_clips

from motionctl.play.commands import PlayerSettings, generate_trace, write_trace

pytestmark = pytest.mark.blender


@pytest.fixture
def scene(bpy_clean, demo_library):
    bpy = bpy_clean
    use_demo_clips(bpy, demo_library, {"demo_walk", "demo_walk_turn_left", "demo_walk_turn_right", "demo_run"},
                   fps=30)
    return bpy


@pytest.mark.slow
def test_a_played_run_is_measured_and_compared_across_engines(scene, ext, tmp_path):
    bpy = scene
    st = bpy.context.scene.motionctl
    with pytest.raises(RuntimeError, match="drive the character or play a trace first"):
        bpy.ops.motionctl.compare()
    st.engines.fragments.trace_seconds, st.engines.fragments.held_out = 60.0, 0
    for engine in ("fragments", "matching"):
        assert bpy.ops.motionctl.train(engine=engine) == {"FINISHED"}
    st.engine = "matching"
    write_trace(generate_trace(PlayerSettings(max_speed=3.0), 8.0, 10.0, seed=5), tmp_path / "player.csv")
    st.preview.trace_path = str(tmp_path / "player.csv")
    assert bpy.ops.motionctl.play_trace() == {"FINISHED"}
    played = json.loads(st.preview.compare)
    (row,) = played["rows"]
    assert row["engine"] == "matching" and 0.0 <= row["skating"] <= 1.0
    assert row["seconds"] == pytest.approx(8.0) == row["trace_seconds"]  # as long as the trace, exactly
    # margin: p50 0.036 <= p95 0.055 < 0.5 here (percentiles of one array are ordered)
    assert 0.0 < row["pose_distance"]["p50"] <= row["pose_distance"]["p95"] < 0.5
    assert 0 < row["jump_deg_s"]["n"] <= row["switches"]  # count: integers
    image = bpy.data.images.get(ext.operators.preview.COMPARE_IMAGE)
    assert image is not None and image.size[0] > 100

    assert bpy.ops.motionctl.compare() == {"FINISHED"}
    compared = json.loads(st.preview.compare)
    assert [r["engine"] for r in compared["rows"]] == ["fragments", "matching"]
    assert 0.0 <= compared["source"]["skating"] <= 0.05  # clean capture scores clean
    assert compared["source"]["pose_distance"]["p95"] > 0.0  # held-out capture against the rest
    assert all(r["seconds"] == pytest.approx(8.0) for r in compared["rows"])
    # The matching row is the same replay the metrics module makes from the stored commands.
    from motionctl.engines import load_model
    from motionctl.evaluate.scoreboard import measure, replay
    from motionctl.play.commands import load_timeline

    times, commands, meta = load_timeline(bpy.path.abspath(st.preview.run_commands))
    assert meta["engine"] == "matching" and len(commands) == len(times) > 0
    model = load_model(bpy.path.abspath(next(m.path for m in st.groups[0].models if m.engine == "matching")))
    clips = ext.operators.common.group_clips(bpy.context)
    from motionctl.play.commands import PlaySettings

    play = PlaySettings(warp=st.preview.warp, plant_feet=st.preview.plant_feet)
    direct = measure(replay(model, model.play(clips), times, commands, meta["seconds"], play))
    got = compared["rows"][1]
    # count: integers (the switches; the skating goes through approx)
    assert got["skating"] == pytest.approx(direct["skating"]) and got["switches"] == direct["switches"]
    assert np.isclose(got["seconds"], direct["seconds"])
