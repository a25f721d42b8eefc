"""The motion field in Blender: its settings in the Controller panel, the value-function picture
after Train, the line goal as an empty, pushes and mouse steering as Drive uses them."""


import numpy as np
import pytest
from blender_scene import use_demo_clips

pytestmark = pytest.mark.blender


@pytest.fixture
def scene(bpy_clean, demo_library):
    bpy = bpy_clean
    use_demo_clips(bpy, demo_library, {"demo_walk", "demo_walk_turn_left", "demo_walk_turn_right"})
    return bpy


@pytest.mark.slow
@pytest.mark.parametrize("task, shape", [("direction", (120, 180)), ("line", (120, 180))])
def test_training_shows_the_value_function_as_a_picture(scene, ext, task, shape):
    bpy = scene
    st = bpy.context.scene.motionctl
    pg = st.engines.field
    pg.task = task
    pg.k = 8
    pg.compression = 3  # values every 3rd state: the line task trains in a quarter of the time
    assert bpy.ops.motionctl.train(engine="field") == {"FINISHED"}
    group = st.groups[0].name
    img = bpy.data.images.get(ext.operators.controller.picture_name("field", group))
    assert img is not None and tuple(img.size) == (shape[1], shape[0]) and img.packed_file is not None
    px = np.empty(len(img.pixels), dtype=np.float32)
    img.pixels.foreach_get(px)
    px = px.reshape(shape[0], shape[1], 4)
    assert px[..., :3].std() > 0.05  # a picture, not a flat fill
    if task == "direction":
        # the area plot is highest facing the direction (the middle column), lowest facing away
        filled = (px[..., 0] > 0.5).sum(axis=0)
        assert filled[90] > filled[2] and filled[90] > filled[-3]  # margin: 117 filled pixels against 47 at the nearest
        assert "heading error" in img["motionctl_caption"]
    # a passive field trains without a picture, and the old picture goes
    pg.task = "none"
    assert bpy.ops.motionctl.train(engine="field") == {"FINISHED"}
    assert bpy.data.images.get(ext.operators.controller.picture_name("field", group)) is None


@pytest.mark.slow
def test_line_goal_push_and_mouse_steering(scene, ext):
    bpy = scene
    preview = ext.operators.preview
    st = bpy.context.scene.motionctl
    st.engines.field.task = "line"
    st.engines.field.k = 8
    st.engines.field.compression = 3
    assert bpy.ops.motionctl.train(engine="field") == {"FINISHED"}
    st.engine = "field"
    model, table, _ = preview.playable(bpy.context)
    assert model.goals == ("line",)
    goals = preview.goal_objects(bpy.context, model)
    ob = bpy.data.objects[preview.GOAL_OBJECTS["line"]]
    ob.location = (1.0, 0.0, 0.0)
    ob.rotation_euler.z = 0.0
    goals = preview.goal_objects(bpy.context, model)
    assert np.allclose(goals["line"], [1.0, 0.0, 0.0])
    lines = preview.goal_lines(np.zeros(3), goals)
    assert lines.shape == (2, 3) and np.allclose(lines[:, 0], 1.0) and lines[0, 1] < -10 < 10 < lines[1, 1]
    command = preview.with_goals(preview.command_from_keys({"forward"}, 1.3, 3.5, 1.0, False), goals)
    assert np.allclose(command.line, [1.0, 0.0, 0.0])
    # The line is 1 m to the right of a character at the origin facing along it: d_L = -1
    session = preview.Session(model, table, frame=10)
    assert np.allclose(model.task_state(session.state, command), [0.0, -1.0])
    # Drive's push: the field takes it, a clip-based engine says it cannot be pushed
    for _ in range(5):
        session.decide(command)
    before = session.memory.state.motion.copy()
    assert session.push([0.0, 1.5])
    assert not np.allclose(session.memory.state.motion, before)
    arrow = preview.push_arrow(np.array([0.0, 0.0, 1.0]), [1.5, 0.0])
    assert arrow.shape == (6, 3) and np.allclose(arrow[1, :2], 0.0)
    # The mouse on the floor sets the desired direction (at walking speed)
    c = preview.mouse_command(np.zeros(2), np.array([-2.0, 0.0]), preview.Command(), 1.3)
    assert c.heading == pytest.approx(np.pi / 2) and c.speed == pytest.approx(1.3)
