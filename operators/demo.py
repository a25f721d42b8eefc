"""The demo's Blender half: import a library with the real operator, stage the run so that it
renders, and save a .blend (once: no .blend1 beside it).

Called by ``tools/demo.py`` and by the tests, with
Blender running as the ``bpy`` module; nothing here is registered as UI.
"""

from __future__ import annotations

import os

import bpy
import numpy as np

from ..motionctl.io.bvh import read_bvh
from .armature import bake_clip
from .library import show_clip
from .mannequin import add_mannequin, solid_material

RESOLUTION = (480, 270)  # the render's default size: small, quick to render headless
CAMERA_DISTANCE = 3.2  # character heights from the camera to the character (ground distance)
CAMERA_LENS = 40.0  # mm: the character about half the frame's height at that distance
TILE = 1.0  # metres: the floor's checker, so that the ground is seen going by under a followed walk


def build_demo_blend(motion_paths, blend_path: str, timing: str = "SCENE", runs=(), progress=None) -> dict:
    """Import ``motion_paths`` into an empty scene, bake each BVH in ``runs`` (controller output
    on the same skeleton) as an action on the matching armature, stage the scene to render the
    run (``stage_run``: mannequin, floor, following camera, Workbench) and save ``blend_path``.
    Imported while unsaved, the caches move beside the .blend when it is saved (``cache``), so
    it is saved once; saving over an earlier demo keeps no ``.blend1``.  ``progress(fraction,
    message)`` hears the steps.

    Returns {"armatures": [...], "actions": [...], "runs": [...], "summary": str, "staged": name}.
    """
    def say(fraction, message):
        if progress is not None:
            progress(fraction, message)

    bpy.ops.wm.read_factory_settings(use_empty=True)
    blend_path = os.path.abspath(blend_path)
    os.makedirs(os.path.dirname(blend_path), exist_ok=True)
    scene = bpy.context.scene
    scene.render.fps = 30
    folder_files = {}
    for p in motion_paths:
        folder_files.setdefault(os.path.dirname(os.path.abspath(p)), []).append(os.path.basename(p))
    for i, (folder, names) in enumerate(folder_files.items()):
        say(0.6 * i / len(folder_files), f"importing {len(names)} file(s) from {folder}")
        result = bpy.ops.motionctl.import_bvh(directory=folder + os.sep, files=[{"name": n} for n in names],
                                              timing=timing)
        if result != {"FINISHED"}:
            raise RuntimeError(f"import of {folder} failed")
    st = scene.motionctl
    if len(st.clips):
        show_clip(bpy.context, st.clips[0])
    baked, staged = [], None
    for path in runs:
        say(0.6, f"baking {os.path.basename(path)}")
        clip = read_bvh(path)
        target = next((g.armature for g in st.groups if list(g.armature["motionctl_joints"]) == list(clip.skeleton.names)),
                      None)
        if target is None:
            raise RuntimeError(f"no armature with the joints of {path}")
        act = bake_clip(target, clip, clip.name, scene_fps=scene.render.fps)
        scene.frame_start, scene.frame_end = (int(x) for x in act.frame_range)
        baked.append(act.name)
        staged = target
    if staged is None and len(st.groups):
        staged = st.groups[0].armature  # no run: the first clip, as Library shows it
    if staged is not None:
        say(0.7, "staging: mannequin, floor, camera")
        stage_run(bpy.context, staged)
    say(0.9, f"saving {blend_path}")
    prefs = bpy.context.preferences.filepaths
    versions, prefs.save_version = prefs.save_version, 0  # over an earlier demo: no .blend1
    try:
        bpy.ops.wm.save_as_mainfile(filepath=blend_path)
    finally:
        prefs.save_version = versions
    say(1.0, f"done: {os.path.basename(blend_path)}")
    return {
        "armatures": [g.armature.name for g in st.groups],
        "actions": [c.action.name for c in st.clips],
        "runs": baked,
        "summary": st.last_import,
        "staged": staged.name if staged is not None else None,
    }


def root_path(ob, frames) -> np.ndarray:
    """[N, 3] world positions of armature ``ob``'s root bone at scene ``frames`` (the frame is left
    at the first)."""
    scene = bpy.context.scene
    root = ob.pose.bones[0]
    out = []
    for f in frames:
        scene.frame_set(int(f))
        out.append(tuple(ob.matrix_world @ root.head))
    scene.frame_set(int(frames[0]))
    return np.array(out)


def stage_run(context, ob) -> dict:
    """Make the scene's frame range of armature ``ob`` render: a mannequin skinned to it, a
    checkered floor at the ground plane (z = 0, where the importer puts the capture's floor)
    under the whole run, a camera that follows the root's ground position (an empty copying its
    x and y, the camera its child, aimed at it by Track To; seen from one side and above, at
    ``CAMERA_DISTANCE`` character heights) and Workbench at ``RESOLUTION``.  Returns the
    objects made {"body", "floor", "camera", "follow"}."""
    scene = context.scene
    body = add_mannequin(context, ob)
    rest = np.array([tuple(ob.matrix_world @ b.head_local) for b in ob.data.bones] +
                    [tuple(ob.matrix_world @ b.tail_local) for b in ob.data.bones])
    height = max(float(np.ptp(rest[:, 2])), 0.3)
    frames = np.unique(np.linspace(scene.frame_start, scene.frame_end, 64).round().astype(int))
    path = root_path(ob, frames)
    floor = checker_floor(context, path[:, :2].min(axis=0), path[:, :2].max(axis=0), 8.0 * height)

    follow = bpy.data.objects.new("motionctl_follow", None)
    context.collection.objects.link(follow)
    follow.empty_display_size = 0.25 * height
    follow.location = (float(path[0, 0]), float(path[0, 1]), 0.55 * height)  # looks at the chest's height
    copy = follow.constraints.new("COPY_LOCATION")
    copy.target, copy.subtarget, copy.use_z = ob, ob.pose.bones[0].name, False

    cam = bpy.data.objects.new("motionctl_camera", bpy.data.cameras.new("motionctl_camera"))
    context.collection.objects.link(cam)
    cam.data.lens = CAMERA_LENS
    cam.data.clip_end = max(200.0, 40.0 * height)
    cam.parent = follow
    side = CAMERA_DISTANCE * height
    cam.location = (0.6 * side, -0.8 * side, 0.45 * height)  # from the front right, a little above
    aim = cam.constraints.new("TRACK_TO")
    aim.target, aim.track_axis, aim.up_axis = follow, "TRACK_NEGATIVE_Z", "UP_Y"
    scene.camera = cam

    scene.render.engine = "BLENDER_WORKBENCH"
    scene.render.resolution_x, scene.render.resolution_y = RESOLUTION
    scene.render.resolution_percentage = 100
    scene.render.image_settings.file_format = "PNG"
    scene.render.filepath = "//render/run_"
    scene.display.shading.light = "STUDIO"
    scene.display.shading.color_type = "MATERIAL"
    if scene.world is None:
        scene.world = bpy.data.worlds.new("motionctl_world")
    scene.world.color = (0.55, 0.62, 0.7)
    scene.frame_set(scene.frame_start)
    return {"body": body, "floor": floor, "camera": cam, "follow": follow}


def checker_floor(context, low, high, margin: float):
    """A floor of ``TILE`` squares in two greys over [low - margin, high + margin] (x, y, metres) at z = 0."""
    lo = np.floor((np.asarray(low) - margin) / TILE) * TILE
    hi = np.ceil((np.asarray(high) + margin) / TILE) * TILE
    nx, ny = (int(v) for v in np.round((hi - lo) / TILE))
    xs, ys = np.meshgrid(lo[0] + TILE * np.arange(nx + 1), lo[1] + TILE * np.arange(ny + 1), indexing="ij")
    verts = np.column_stack((xs.ravel(), ys.ravel(), np.zeros(xs.size)))
    i, j = np.meshgrid(np.arange(nx), np.arange(ny), indexing="ij")
    a = (i * (ny + 1) + j).ravel()
    faces = np.column_stack((a, a + ny + 1, a + ny + 2, a + 1))
    mesh = bpy.data.meshes.new("motionctl_floor")
    mesh.from_pydata(verts.tolist(), [], faces.tolist())
    mesh.materials.append(solid_material("motionctl_floor_light", (0.62, 0.64, 0.6, 1.0)))
    mesh.materials.append(solid_material("motionctl_floor_dark", (0.45, 0.47, 0.44, 1.0)))
    mesh.polygons.foreach_set("material_index", ((i + j) % 2).ravel().astype(np.int32))
    mesh.update()
    floor = bpy.data.objects.new("motionctl_floor", mesh)
    context.collection.objects.link(floor)
    return floor
