"""Every registered engine goes through the same Blender buttons with no special case: Train, Play
Trace, Bake, Evaluate. A new engine added to the registry is tested here without a new test."""

import json
import os

import numpy as np
import pytest
from blender_scene import room_collection, use_demo_clips

from motionctl.engines import ENGINES
from motionctl.play.commands import PlayerSettings, generate_trace, write_trace

SLOW_CASES = {"active", "field", "matching", "fragments", "planning"}  # the slow set: all but the graph, whose buttons stay in the quick run

pytestmark = pytest.mark.blender

# Each engine trains at its quick settings (``Engine.quick``: small but real, seconds on the demo
# clips), with these changes for the five demo clips: the graph's threshold loose enough that they
# join, fragments' trace long enough to reach every clip.
QUICK = {name: {**engine.quick, **{"graph": {"threshold": 1.0},
                                   "fragments": {"trace_seconds": 60.0}}.get(name, {})}
         for name, engine in ENGINES.items()}


@pytest.fixture
def scene(bpy_clean, demo_library):
    bpy = bpy_clean
    st = use_demo_clips(bpy, demo_library, {"demo_walk", "demo_walk_turn_left", "demo_walk_turn_right", "demo_run",
                                            "demo_walk_slow"}, fps=30)
    st.evaluate.collection = room_collection(bpy)
    return bpy


@pytest.mark.parametrize("engine", sorted(ENGINES))
def test_train_play_bake_and_evaluate_through_the_same_buttons(scene, ext, tmp_path, engine):
    bpy = scene
    st = bpy.context.scene.motionctl
    pg = getattr(st.engines, engine)
    for name, value in QUICK[engine].items():
        setattr(pg, name, value)
    assert bpy.ops.motionctl.train(engine=engine) == {"FINISHED"}
    entry = next(m for m in st.groups[0].models if m.engine == engine)
    assert os.path.exists(bpy.path.abspath(entry.path)) and json.loads(entry.summary)

    # Play Trace: a player's trace drives the model; the run lands on the armature as an action.
    st.engine = engine
    trace = generate_trace(PlayerSettings(max_speed=3.0), 6.0, 10.0, seed=3)
    write_trace(trace, tmp_path / "player.csv")
    st.preview.trace_path = str(tmp_path / "player.csv")
    st.preview.action_name = f"played_{engine}"
    assert bpy.ops.motionctl.play_trace() == {"FINISHED"}
    ob = st.groups[0].armature
    played = ob.animation_data.action
    assert played.name == f"played_{engine}" and played.frame_range[1] > 5 * 30 * 0.9
    run = ext.operators.state.STATE.last_run
    assert run is not None

    # Bake: the same run again under another name, on the same armature, frame for frame.
    st.preview.action_name = f"baked_{engine}"
    assert bpy.ops.motionctl.bake_run() == {"FINISHED"}
    baked = ob.animation_data.action
    assert baked.name == f"baked_{engine}" and tuple(baked.frame_range) == tuple(played.frame_range)
    heads = []
    for frame in (1, int(baked.frame_range[1])):
        bpy.context.scene.frame_set(frame)
        heads.append(ext.operators.armature.bone_world_heads(ob))
    assert np.all(np.isfinite(heads)) and np.linalg.norm(heads[1][0, :2] - heads[0][0, :2]) > 1.0  # it went somewhere

    # Evaluate: certified in the room whatever the engine.
    st.evaluate.engine = engine
    st.evaluate.pairs, st.evaluate.headings, st.evaluate.lm_sample = 4, 12, 0.2
    assert bpy.ops.motionctl.evaluate() == {"FINISHED"}
    # count: names and integers
    assert st.evaluate.evaluated == engine and st.evaluate.nodes > 0 and 0.0 < st.evaluate.coverage_xy <= 1.0
