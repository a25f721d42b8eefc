"""The demo's Blender half: import a library with the real operator and save a .blend.

Called by ``python -m motionctl demo`` (through ``motionctl.cli``) and by the tests, with
Blender running as the ``bpy`` module; nothing here is registered as UI.
"""

from __future__ import annotations

import os

import bpy


def build_demo_blend(motion_paths, blend_path: str, timing: str = "SCENE") -> dict:
    """Import ``motion_paths`` into an empty scene and save it as ``blend_path``.

    Returns {"armatures": [...], "actions": [...], "summary": str} for the caller to print.
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
        from .library import show_clip

        show_clip(bpy.context, st.clips[0])
    bpy.ops.wm.save_as_mainfile(filepath=blend_path)
    return {
        "armatures": [g.armature.name for g in st.groups],
        "actions": [c.action.name for c in st.clips],
        "summary": st.last_import,
    }
