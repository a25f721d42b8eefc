"""Scene settings: the clip library and its groups (large arrays live in .npz caches)."""

from __future__ import annotations

import bpy
from bpy.props import CollectionProperty, FloatProperty, IntProperty, PointerProperty, StringProperty
from bpy.types import PropertyGroup

from ..operators.library import show_clip


class MOTIONCTL_PG_clip(PropertyGroup):
    """One clip of the library (its motion is in its group's database cache and its action)."""

    frames: IntProperty(name="Frames", description="Number of frames in the clip")
    fps: FloatProperty(name="FPS", description="Frame rate of the clip in the database")
    duration: FloatProperty(name="Duration", unit="TIME_ABSOLUTE", description="Seconds")
    tags: StringProperty(name="Tags", description="Comma-separated tags (walk, run, jump, pick...); engines read "
                         "them to know what each clip shows")
    group: StringProperty(name="Group", description="The skeleton group (armature) this clip belongs to")
    action: PointerProperty(name="Action", type=bpy.types.Action)
    source: StringProperty(name="Source", subtype="FILE_PATH")


class MOTIONCTL_PG_group(PropertyGroup):
    """Clips on one skeleton: an armature and a database cache file."""

    armature: PointerProperty(name="Armature", type=bpy.types.Object)
    database: StringProperty(name="Database", subtype="FILE_PATH", description="The group's .npz cache")
    summary: StringProperty(name="Summary")
    fps: FloatProperty(name="FPS")


def _on_clip_index(self, context):
    if 0 <= self.clip_index < len(self.clips):
        show_clip(context, self.clips[self.clip_index])


class MOTIONCTL_PG_settings(PropertyGroup):
    clips: CollectionProperty(type=MOTIONCTL_PG_clip)
    clip_index: IntProperty(name="Clip", default=0, update=_on_clip_index,
                            description="Selecting a clip plays it on its armature")
    groups: CollectionProperty(type=MOTIONCTL_PG_group)
    last_import: StringProperty(name="Last Import", description="Summary of the last import")


classes = (MOTIONCTL_PG_clip, MOTIONCTL_PG_group, MOTIONCTL_PG_settings)
