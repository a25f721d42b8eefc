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


def ticked_clip_tags(st, group) -> dict:
    """{clip name: [tags]} of the clips of ``group`` ticked in the Library list (read on the main
    thread; a job gets this plain dict, never the bpy data)."""
    clip_tags = {c.name: [t.strip() for t in c.tags.split(",") if t.strip()]
                 for c in st.clips if c.group == group.name and c.use}
    if not clip_tags:
        raise ValueError("no clips selected: tick some in the Library list")
    return clip_tags


def load_ticked_clips(database: str, clip_tags: dict) -> list:
    """Worker side of ``ticked_clip_tags``: the ticked clips from the group's database cache,
    carrying the tags as edited in the Library."""
    from ..motionctl.motion import MotionDatabase

    clips = [c for c in MotionDatabase.load(database).clips if c.name in clip_tags]
    if not clips:
        raise ValueError("no clips selected: tick some in the Library list")
    for c in clips:
        c.tags = set(clip_tags[c.name])
    return clips
