"""Motion Graph and Evaluate panels in Blender, headless."""

import json
import os

import pytest
from blender_scene import room_collection, use_demo_clips

pytestmark = pytest.mark.blender


@pytest.fixture
def scene_with_room(bpy_clean, demo_library):
    bpy = bpy_clean
    bpy.ops.wm.read_factory_settings(use_empty=True)
    st = use_demo_clips(bpy, demo_library, {"demo_walk", "demo_walk_turn_left", "demo_walk_turn_right", "demo_run",
                                            "demo_jump"}, fps=30)
    st.evaluate.collection = room_collection(bpy, walls=[(4, 3)])
    return bpy


def build_and_evaluate(bpy):
    st = bpy.context.scene.motionctl
    st.engines.graph.threshold = 1.0
    assert bpy.ops.motionctl.train(engine="graph") == {"FINISHED"}
    ev = st.evaluate
    ev.engine = "graph"
    ev.pairs = 6
    ev.headings = 12
    ev.lm_sample = 0.2
    assert bpy.ops.motionctl.evaluate() == {"FINISHED"}
    return st, ev


@pytest.mark.slow
def test_build_graph_evaluate_show_map_and_bake_a_best_path(scene_with_room, ext):
    bpy = scene_with_room
    st, ev = build_and_evaluate(bpy)
    s = json.loads(next(m for m in st.groups[0].models if m.engine == "graph").summary)
    # count: integers, and whole frames over the same fps (kept 19.7 s of 20.0)
    assert s["clips"] > 3 and s["transitions"] > s["clips"] and s["seconds_kept"] <= s["seconds_total"]
    assert 0.5 < ev.coverage_xy <= 1.0 and ev.nodes > 1000 and os.path.exists(bpy.path.abspath(ev.map_path))
    assert ev.path_median >= 1.0 - 1e-9 and ev.evaluated == "graph"
    # The box in the middle is an obstacle: its cells are not covered.
    res = ext.operators.state.STATE.evaluation
    grid = res["embedding"].grid
    ix, iy = int((4 - grid.origin[0]) / grid.cell), int((3 - grid.origin[1]) / grid.cell)
    assert res["coverage_map"][ix, iy] == 0 and not res["free"][ix, iy]
    pos, col = ext.operators.evaluate.map_geometry(bpy.context)
    assert pos.shape[0] == col.shape[0] == 6 * grid.bits.size
    assert bpy.ops.motionctl.show_coverage() == {"FINISHED"}  # on
    assert "coverage" in ext.operators.state.STATE.overlays
    assert bpy.ops.motionctl.show_coverage() == {"FINISHED"}  # off
    assert "coverage" not in ext.operators.state.STATE.overlays
    bpy.context.view_layer.objects.active = st.groups[0].armature
    assert bpy.ops.motionctl.bake_best_path(seed=1) == {"FINISHED"}
    act = st.groups[0].armature.animation_data.action
    assert act.name == "best_path" and act.frame_range[1] > 30


@pytest.mark.slow
def test_certify_the_fragment_controller_in_the_same_room(scene_with_room):
    bpy = scene_with_room
    st = bpy.context.scene.motionctl
    st.engines.fragments.trace_seconds = 60
    st.engines.fragments.held_out = 0
    assert bpy.ops.motionctl.train(engine="fragments") == {"FINISHED"}
    ev = st.evaluate
    ev.engine = "fragments"
    ev.pairs = 5
    ev.headings = 12
    ev.lm_sample = 0.2
    assert bpy.ops.motionctl.evaluate() == {"FINISHED"}
    assert ev.nodes > 0 and 0.0 < ev.coverage_xy <= 1.0 and ev.evaluated == "fragments"
    with pytest.raises(RuntimeError, match="best paths are baked for motion graphs"):
        bpy.ops.motionctl.bake_best_path()


def test_evaluate_errors_reach_the_user(scene_with_room):
    bpy = scene_with_room
    st = bpy.context.scene.motionctl
    st.evaluate.engine = "graph"
    with pytest.raises(RuntimeError, match="train a Motion Graph model first"):
        bpy.ops.motionctl.evaluate()
    empty = bpy.data.collections.new("nothing")
    st.evaluate.collection = empty
    with pytest.raises(RuntimeError, match="holds no mesh objects"):
        bpy.ops.motionctl.evaluate()


class _Layout:
    """Stands in for a panel's UILayout: accepts every call and records the labels drawn."""

    def __init__(self, labels):
        self.labels = labels

    def label(self, text="", **_):
        self.labels.append(text)

    def prop(self, owner, name, *_, **__):
        self.labels.append("prop:" + name)
        return self

    def __getattr__(self, name):
        return lambda *a, **k: self


def test_panels_draw_before_and_after_clips_are_imported(bpy_clean, demo_library, ext):
    from types import SimpleNamespace

    bpy = bpy_clean
    bpy.ops.wm.read_factory_settings(use_empty=True)
    panels = [getattr(bpy.types, n) for n in ("MOTIONCTL_PT_library", "MOTIONCTL_PT_controller",
                                              "MOTIONCTL_PT_preview", "MOTIONCTL_PT_engine_graph",
                                              "MOTIONCTL_PT_evaluate")]

    def draw_all():
        labels = []
        for cls in panels:
            cls.draw(SimpleNamespace(layout=_Layout(labels), no_clips=cls.no_clips), bpy.context)
        return labels

    assert draw_all().count("Import clips in the Library panel first") == 4
    assert bpy.ops.motionctl.import_bvh(directory=demo_library + os.sep, files=[]) == {"FINISHED"}
    drawn = draw_all()
    assert "Import clips in the Library panel first" not in drawn
    # the Preview panel holds what plays (issue 59: Plant Feet was a setting without a control)
    assert {"prop:warp", "prop:plant_feet", "prop:steer"} <= set(drawn)
