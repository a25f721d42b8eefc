"""The demo's .blend renders the walk (issue 57): the quick demo's saved scene holds a mannequin
bound to the armature that plays the run, a floor under the whole run, an active camera that
keeps the character in frame from the first frame to the last, Workbench at a small size; and it
is saved once, so no .blend1 is left, even over an earlier demo."""

import os

import numpy as np
import pytest

pytestmark = pytest.mark.blender


@pytest.fixture(scope="module")
def demo(ext, tmp_path_factory):
    from tools.demo import main

    out = tmp_path_factory.mktemp("demo")
    assert main(["--out", str(out), "--quick"]) == 0
    return out


def points(ob) -> np.ndarray:
    """[B, 3] world positions of armature ``ob``'s bone heads and tails, as posed now."""
    mw = np.array(ob.matrix_world)
    p = np.array([tuple(b.head) for b in ob.pose.bones] + [tuple(b.tail) for b in ob.pose.bones])
    return p @ mw[:3, :3].T + mw[:3, 3]


def test_the_demo_blend_shows_the_character_walking_in_frame(demo):
    import bpy
    from bpy_extras.object_utils import world_to_camera_view
    from mathutils import Vector

    assert sorted(p.name for p in demo.iterdir() if ".blend" in p.name) == ["motionctl_demo.blend"]  # saved once
    bpy.ops.wm.open_mainfile(filepath=str(demo / "motionctl_demo.blend"))
    scene = bpy.context.scene
    run = bpy.data.actions["controller_run"]
    arm = next(o for o in scene.objects if o.type == "ARMATURE" and o.animation_data and o.animation_data.action == run)
    assert (scene.frame_start, scene.frame_end) == tuple(int(x) for x in run.frame_range)
    # A mesh skinned to the armature: an Armature modifier on it, a vertex group per bone it follows.
    body = [o for o in scene.objects if o.type == "MESH" and any(m.type == "ARMATURE" and m.object == arm
                                                                  for m in o.modifiers)]
    assert len(body) == 1 and len(body[0].data.vertices) > 100
    assert {g.name for g in body[0].vertex_groups} <= set(arm.data.bones.keys()) and len(body[0].vertex_groups) > 10
    floors = [o for o in scene.objects if o.type == "MESH" and o not in body]
    assert len(floors) == 1
    corners = np.array([tuple(floors[0].matrix_world @ Vector(c)) for c in floors[0].bound_box])
    assert np.ptp(corners[:, 2]) < 1e-6 and abs(corners[0, 2]) < 1e-6  # flat, at the ground plane
    cam = scene.camera
    assert cam is not None and cam.type == "CAMERA"
    assert scene.render.engine == "BLENDER_WORKBENCH" and scene.render.resolution_x <= 640
    frames = np.linspace(scene.frame_start, scene.frame_end, 7).round().astype(int)
    roots, lowest = [], []
    for f in frames:
        scene.frame_set(int(f))
        pts = points(arm)
        roots.append(pts[0])
        lowest.append(pts[:, 2].min())
        seen = np.array([tuple(world_to_camera_view(scene, cam, Vector(p))) for p in pts])
        assert np.all((seen[:, :2] > 0.02) & (seen[:, :2] < 0.98)) and np.all(seen[:, 2] > 0), (f, seen.min(0), seen.max(0))
    roots = np.array(roots)
    # margin: metres inside the floor's corners (11.9 m at the nearest)
    assert np.all((roots[:, :2] > corners[:, :2].min(0) + 1.0) & (roots[:, :2] < corners[:, :2].max(0) - 1.0))
    assert np.all(np.abs(np.array(lowest)) < 0.15)  # the feet on the floor, never under it or high above it
    assert np.linalg.norm(roots[-1, :2] - roots[0, :2]) > 2.0  # it walks somewhere: the camera had to follow


def test_the_demo_saved_again_over_itself_leaves_no_blend1(demo, ext):
    files = [str(p) for p in sorted((demo / "demo_bvh").glob("demo_walk*.bvh"))[:2]]
    blend = str(demo / "motionctl_demo.blend")
    made = ext.operators.demo.build_demo_blend(files, blend, runs=[str(demo / "controller_run.bvh")])
    assert made["runs"] == ["controller_run"] and made["staged"]
    assert not os.path.exists(blend + "1") and os.path.exists(blend)
