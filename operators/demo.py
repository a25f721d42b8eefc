"""The demo's Blender half: import a library with the real operator and save a .blend.

Called by ``tools/demo.py`` and by the tests, with
Blender running as the ``bpy`` module; nothing here is registered as UI.
"""

from __future__ import annotations

import os

import bpy

from ..motionctl.io.bvh import read_bvh
from .armature import bake_clip
from .library import show_clip


def build_demo_blend(motion_paths, blend_path: str, timing: str = "SCENE", runs=()) -> dict:
    """Import ``motion_paths`` into an empty scene, bake each BVH in ``runs`` (controller output
    on the same skeleton) as an action on the matching armature, and save ``blend_path``.

    Returns {"armatures": [...], "actions": [...], "runs": [...], "summary": str}.
    """
    bpy.ops.wm.read_factory_settings(use_empty=True)
    blend_path = os.path.abspath(blend_path)
    os.makedirs(os.path.dirname(blend_path), exist_ok=True)
    bpy.ops.wm.save_as_mainfile(filepath=blend_path)  # caches go beside the .blend
    scene = bpy.context.scene
    scene.render.fps = 30
    folder_files = {}
    for p in motion_paths:
        folder_files.setdefault(os.path.dirname(os.path.abspath(p)), []).append(os.path.basename(p))
    for folder, names in folder_files.items():
        result = bpy.ops.motionctl.import_bvh(directory=folder + os.sep, files=[{"name": n} for n in names], timing=timing)
        if result != {"FINISHED"}:
            raise RuntimeError(f"import of {folder} failed")
    st = scene.motionctl
    if len(st.clips):
        show_clip(bpy.context, st.clips[0])
    baked = []
    for path in runs:
        clip = read_bvh(path)
        target = next((g.armature for g in st.groups if list(g.armature["motionctl_joints"]) == list(clip.skeleton.names)),
                      None)
        if target is None:
            raise RuntimeError(f"no armature with the joints of {path}")
        act = bake_clip(target, clip, clip.name, scene_fps=scene.render.fps)
        scene.frame_start, scene.frame_end = (int(x) for x in act.frame_range)
        baked.append(act.name)
    bpy.ops.wm.save_as_mainfile(filepath=blend_path)
    return {
        "armatures": [g.armature.name for g in st.groups],
        "actions": [c.action.name for c in st.clips],
        "runs": baked,
        "summary": st.last_import,
    }
