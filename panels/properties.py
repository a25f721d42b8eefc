"""Scene settings: the clip library, each engine's settings, the preview, the evaluation and the
retarget.  Large arrays live in cache files (``operators/cache.py``).

Every option a user can change that the core also takes is declared once, in the core, with
``motionctl.settings.setting`` (label, tooltip, range, unit, choices), and its property here is
generated from it (``operators/props.py``): each engine's ``Settings``, ``RoomSettings`` (the
Evaluate panel), ``RetargetSettings``, ``PlaySettings`` and ``DriveSettings`` (the Preview panel).
What only Blender has (the target armature, key bindings, action names) is declared here.

The groups are built when the extension registers (``build``), from the engines registered then
and the scene properties their Blender extras add (``panels/engines/``), so an engine registered
later gets its panel properties with no edit here.  (No ``from __future__ import annotations``:
the annotations below are the property objects Blender registers.)
"""

import bpy
from bpy.props import (BoolProperty, CollectionProperty, EnumProperty, FloatProperty, IntProperty, PointerProperty,
                       StringProperty)
from bpy.types import PropertyGroup

from ..motionctl.engines import ENGINES
from ..motionctl.evaluate.room.settings import RoomSettings
from ..motionctl.play.commands import DriveSettings, PlaySettings
from ..motionctl.retarget import RetargetSettings
from ..motionctl.retarget.export import PRESETS as EXPORT_PRESETS
from ..operators.compat import PATH_OPTIONS
from ..operators.library import show_clip
from ..operators.props import setting_properties


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
    use: BoolProperty(name="Use", default=True, description="Use this clip when training controllers")


class MOTIONCTL_PG_model(PropertyGroup):
    """A trained model of one engine on a group: its file and its summary (JSON)."""

    engine: StringProperty(name="Engine")
    path: StringProperty(name="Model", subtype="FILE_PATH", options=PATH_OPTIONS)
    summary: StringProperty(name="Summary")


class MOTIONCTL_PG_group(PropertyGroup):
    """Clips on one skeleton: an armature, a database cache, and a trained model per engine."""

    armature: PointerProperty(name="Armature", type=bpy.types.Object)
    database: StringProperty(name="Database", subtype="FILE_PATH", description="The group's .npz cache",
                             options=PATH_OPTIONS)
    summary: StringProperty(name="Summary")
    fps: FloatProperty(name="FPS")
    models: CollectionProperty(type=MOTIONCTL_PG_model)


class MOTIONCTL_PG_trace(PropertyGroup):
    path: StringProperty(name="Trace", subtype="FILE_PATH", description="A control trace (CSV or JSON)",
                         options=PATH_OPTIONS)


class MOTIONCTL_PG_bone_pair(PropertyGroup):
    target: StringProperty(name="Bone", description="A bone of the target armature")
    source: StringProperty(name="Joint", description="The clips' joint it follows (empty: it rides along with "
                           "its parent)")


def _on_clip_index(self, context):
    if 0 <= self.clip_index < len(self.clips):
        show_clip(context, self.clips[self.clip_index])


def _is_armature(self, ob) -> bool:
    return ob.type == "ARMATURE"


def _on_target(self, context):
    """A new Target starts with an empty bone map (the next Retarget maps it automatically): the
    last one's map names another rig's bones.  Choosing the same target again keeps the map."""
    if self.target != self.map_target:
        self.bones.clear()
        self.map_target = self.target


# What only Blender has, beside the generated options of each group (see ``build``).
PREVIEW = {
    "key_forward": StringProperty(name="Forward", default="W", description="Event type for forward (arrows also work)"),
    "key_back": StringProperty(name="Back", default="S"),
    "key_left": StringProperty(name="Left", default="A"),
    "key_right": StringProperty(name="Right", default="D"),
    "key_turn_left": StringProperty(name="Turn Left", default="Q"),
    "key_turn_right": StringProperty(name="Turn Right", default="E"),
    "key_jump": StringProperty(name="Jump", default="SPACE"),
    "key_run": StringProperty(name="Run", default="LEFT_SHIFT"),
    "key_stop": StringProperty(name="Stop", default="X", description="Held: the character stops and stands, "
                               "facing where it faces (also with the mouse steering)"),
    "key_push": StringProperty(name="Push", default="P", description="Push the character from its left (engines "
                               "that can be pushed: the motion field)"),
    "record": BoolProperty(name="Record Trace", default=False,
                           description="Save the controls you drive as a trace file (training data for the user "
                           "model)"),
    "trace_path": StringProperty(name="Trace File", subtype="FILE_PATH", options=PATH_OPTIONS,
                                 description="Trace to play through the controller"),
    "action_name": StringProperty(name="Action", default="motionctl_run"),
    "frame_start": IntProperty(name="Start Frame", default=1),
    "root_motion": EnumProperty(name="Root Motion", default="BONE", items=[
        ("BONE", "Root Bone", "Translation keyed on the root bone"),
        ("OBJECT", "Armature Object", "Translation keyed on the armature object; the root bone stays in place")]),
    "session_seconds": FloatProperty(name="Seconds Driven", description="How long the last run lasts"),
    "run_id": StringProperty(name="Run", description="Which run was kept last (Bake refills the action it "
                             "baked from the same run)"),
    "run_source": StringProperty(name="Run", description="What the last run was (driven, or a trace played)"),
    "run_commands": StringProperty(name="Run Commands", description="Cache file of the last run's commands on "
                                   "their clock (what Compare replays)"),
    "compare": StringProperty(name="Compared", description="The last run's figures and the compared engines' (JSON)"),
}
EVALUATE = {
    "collection": PointerProperty(name="Obstacles", type=bpy.types.Collection,
                                  description="Mesh objects seen from above; custom property motionctl_kind = wall, "
                                  "chasm, low, region (with motionctl_allow) or bounds (else a 'floor' object)"),
    "evaluated": StringProperty(description="The engine the shown results are of"),
    "coverage_xy": FloatProperty(),
    "coverage_xya": FloatProperty(),
    "path_mean": FloatProperty(),
    "path_median": FloatProperty(),
    "nodes": IntProperty(),
    "seconds": FloatProperty(),
    "details": StringProperty(),
    "result_path": StringProperty(subtype="FILE_PATH", options=PATH_OPTIONS,
                                  description="The evaluation's maps and the room (cache)"),
    "map_path": StringProperty(subtype="FILE_PATH", options=PATH_OPTIONS),
}
RETARGET = {
    "target": PointerProperty(name="Target", type=bpy.types.Object, poll=_is_armature, update=_on_target,
                              description="Your character's armature (Rigify, Mixamo, Character Creator, a game "
                              "rig...)"),
    "map_target": PointerProperty(name="Mapped Target", type=bpy.types.Object,
                                  description="The target the bone map is for (another Target clears the map)"),
    "bones": CollectionProperty(type=MOTIONCTL_PG_bone_pair),
    "bone_index": IntProperty(),
    "source": EnumProperty(name="Retarget", default="RUN", items=[
        ("RUN", "Last Run", "The last driven or played controller run"),
        ("CLIP", "Selected Clip", "The clip selected in the Library list"),
        ("GROUP", "Ticked Clips", "Every ticked clip of the group, each as its own action"),
        ("TRACES", "Every Trace", "Every trace of the Preview panel played through the controller, each as its "
         "own action")]),
    "nla": BoolProperty(name="Push to NLA", default=False,
                        description="Put the actions on an NLA track one after another (game exporters read strips "
                        "as takes)"),
    "action_prefix": StringProperty(name="Prefix", default="rt_", description="Prefix of the baked actions' names"),
    "frame_start": IntProperty(name="Start Frame", default=1),
    "report": StringProperty(name="Report", description="The last retarget's figures (JSON)"),
    "export_preset": EnumProperty(name="Game Engine", default="UNREAL", items=[
        (p.name, p.label, p.description) for p in EXPORT_PRESETS.values()]),
    "export_folder": StringProperty(name="Folder", subtype="DIR_PATH", default="//export", options=PATH_OPTIONS,
                                    description="Where the exported files go (one per armature, or per take in a "
                                    "batch)"),
}
SETTINGS = {
    "file_id": StringProperty(description="Stable id naming this file's caches"),
    "owner": StringProperty(description="The .blend the caches belong to", subtype="FILE_PATH"),
    "clips": CollectionProperty(type=MOTIONCTL_PG_clip),
    "clip_index": IntProperty(name="Clip", default=0, update=_on_clip_index,
                              description="Selecting a clip plays it on its armature"),
    "groups": CollectionProperty(type=MOTIONCTL_PG_group),
    "group": StringProperty(name="Clips", description="Skeleton group whose ticked clips the engines use"),
    "last_import": StringProperty(name="Last Import", description="Summary of the last import"),
    "traces": CollectionProperty(type=MOTIONCTL_PG_trace),
    "trace_index": IntProperty(),
    "last_run": StringProperty(subtype="FILE_PATH", options=PATH_OPTIONS,
                               description="The last driven or played run (cache), for Bake"),
    "job_progress": FloatProperty(name="Progress", min=0.0, max=1.0, subtype="FACTOR"),
    "job_message": StringProperty(name="Job"),
    "job_running": BoolProperty(),
}


def property_group(name: str, doc: str, own: dict, *declared) -> type:
    """A property group: the properties generated from the settings classes ``declared``, then
    ``own`` (what only Blender has)."""
    ann = {}
    for cls in declared:
        ann.update(setting_properties(cls))
    ann.update(own)
    return type(name, (PropertyGroup,), {"__annotations__": ann, "__doc__": doc})


def build(extras=()) -> list:
    """Every property group, in registration order (a group before the groups that hold it); the
    last is the scene's ``MOTIONCTL_PG_settings``.  ``extras``: the engines' Blender modules, whose
    ``property_groups`` are registered here and whose ``scene_properties()`` join the settings."""
    items = [(e.name, e.label, e.description) for e in ENGINES.values()]
    first = items[0][0] if items else ""
    room = next((e.name for e in ENGINES.values() if e.room_default), first)
    engine_groups = [property_group(f"MOTIONCTL_PG_{e.name}", f"{e.label} settings (generated from its Settings)",
                                    {}, e.Settings) for e in ENGINES.values()]
    engines = property_group("MOTIONCTL_PG_engines", "Every engine's settings",
                             {e.name: PointerProperty(type=g) for e, g in zip(ENGINES.values(), engine_groups)})
    preview = property_group("MOTIONCTL_PG_preview", "Driving the character live, recording traces, baking runs",
                             PREVIEW, PlaySettings, DriveSettings)
    evaluate = property_group("MOTIONCTL_PG_evaluate", "Evaluation in a room (paper 004's metrics), of any model", {
        "engine": EnumProperty(name="Source", items=items, default=room,
                               description="Which trained model to measure: a motion graph as it is, any controller "
                               "through the moves it makes while a command is held for half a second"),
        **EVALUATE}, RoomSettings)
    retarget = property_group("MOTIONCTL_PG_retarget", "Putting clips and runs on the animator's own rig", RETARGET,
                              RetargetSettings)
    scene = dict(SETTINGS, engine=EnumProperty(name="Engine", items=items, default=first,
                                               description="The controller to train, drive and bake"),
                 engines=PointerProperty(type=engines), preview=PointerProperty(type=preview),
                 evaluate=PointerProperty(type=evaluate), retarget=PointerProperty(type=retarget))
    extra_groups = []
    for m in extras:
        extra_groups += list(getattr(m, "property_groups", ()))
        scene.update(m.scene_properties() if hasattr(m, "scene_properties") else {})
    settings = property_group("MOTIONCTL_PG_settings", "Everything motionctl keeps on the scene", scene)
    return [MOTIONCTL_PG_clip, MOTIONCTL_PG_model, MOTIONCTL_PG_group, MOTIONCTL_PG_trace, MOTIONCTL_PG_bone_pair,
            *engine_groups, engines, preview, evaluate, retarget, *extra_groups, settings]
