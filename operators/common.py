"""Small helpers shared by the operators: cache folder, settings access, safe reports."""

from __future__ import annotations

import os
import tempfile

import bpy


def settings(context):
    return context.scene.motionctl


def cache_dir(context=None) -> str:
    """Where large arrays live: ``//motionctl_cache`` beside the saved .blend, else a temp folder
    (save the .blend first to keep caches with it)."""
    if bpy.data.filepath:
        path = bpy.path.abspath("//motionctl_cache")
    else:
        path = os.path.join(tempfile.gettempdir(), "motionctl_cache")
    os.makedirs(path, exist_ok=True)
    return path


def safe_name(text: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in text)[:60] or "motionctl"
