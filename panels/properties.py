"""Scene settings: the clip library, each engine's settings (generated from its ``Settings``), the
preview and the evaluation.  Large arrays live in cache files (``operators/cache.py``).

Each engine's property group is made from its settings' options (``motionctl.settings``): the
label, tooltip, range, unit and choices are the engine's own, so a new engine's panel needs no
Blender code and the defaults are written once.
"""

from __future__ import annotations

import bpy
from bpy.props import (BoolProperty, CollectionProperty, EnumProperty, FloatProperty, IntProperty, PointerProperty, StringProperty)
from bpy.types import PropertyGroup

from ..motionctl.engines import ENGINES
from ..operators.active import on_candidate_index
from ..operators.compat import PATH_OPTIONS
from ..operators.props import setting_properties
from ..operators.library import show_clip

def engine_property_group(engine) -> type:
    """MOTIONCTL_PG_<engine>: one property per shown option; an optional one also gets use_<name>."""
    return type(f"MOTIONCTL_PG_{engine.name}", (PropertyGroup,),
                {"__annotations__": setting_properties(engine.Settings),
                 "__doc__": f"{engine.label} settings (generated from its Settings)"})


ENGINE_GROUPS = [engine_property_group(e) for e in ENGINES.values()]
MOTIONCTL_PG_engines = type("MOTIONCTL_PG_engines", (PropertyGroup,), {
    "__annotations__": {e.name: PointerProperty(type=g) for e, g in zip(ENGINES.values(), ENGINE_GROUPS)},
    "__doc__": "Every engine's settings"})


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


ENGINE_ITEMS = [(e.name, e.label, e.description) for e in ENGINES.values()]


class MOTIONCTL_PG_preview(PropertyGroup):
    """Driving the character live, recording traces, baking runs."""

    steer: EnumProperty(name="Keys Steer", default="CHARACTER", items=[
        ("CHARACTER", "Character", "WASD move relative to the character and Q/E turn it (paper 000's game)"),
        ("WORLD", "World", "WASD are directions in the world (up the screen from above): the character turns and "
         "goes that way, like a game with a fixed camera")])
    key_forward: StringProperty(name="Forward", default="W", description="Event type for forward (arrows also work)")
    key_back: StringProperty(name="Back", default="S")
    key_left: StringProperty(name="Left", default="A")
    key_right: StringProperty(name="Right", default="D")
    key_turn_left: StringProperty(name="Turn Left", default="Q")
    key_turn_right: StringProperty(name="Turn Right", default="E")
    key_jump: StringProperty(name="Jump", default="SPACE")
    key_run: StringProperty(name="Run", default="LEFT_SHIFT")
    key_push: StringProperty(name="Push", default="P", description="Push the character from its left (engines that "
                             "can be pushed: the motion field)")
    push_speed: FloatProperty(name="Push", default=1.5, min=0.0, max=10.0, unit="VELOCITY",
                              description="Speed a push adds to the character (toward its right)")
    mouse_steer: BoolProperty(name="Mouse Sets Direction", default=False,
                              description="The character walks toward the mouse pointer on the floor")
    walk_speed: FloatProperty(name="Walk", default=1.3, min=0.0, unit="VELOCITY", description="Speed with a key held")
    run_speed: FloatProperty(name="Run", default=3.5, min=0.0, unit="VELOCITY", description="Speed with Run held")
    turn_rate: FloatProperty(name="Turn", default=1.0, min=0.0, description="Turning rate with Q/E (rad/s)")
    jump_time: FloatProperty(name="Jump Time", default=0.5, min=0.1, unit="TIME_ABSOLUTE",
                             description="Seconds the jump control stays on after a press")
    warp: FloatProperty(name="Root Follows Control", default=1.0, min=0.0, max=1.0, subtype="FACTOR",
                        description="1: the root moves exactly as the control says (like a game); 0: as captured")
    record: BoolProperty(name="Record Trace", default=False,
                         description="Save the controls you drive as a trace file (training data for the user model)")
    trace_path: StringProperty(name="Trace File", subtype="FILE_PATH", description="Trace to play through the controller",
                               options=PATH_OPTIONS)
    action_name: StringProperty(name="Action", default="motionctl_run")
    frame_start: IntProperty(name="Start Frame", default=1)
    root_motion: EnumProperty(name="Root Motion", default="BONE", items=[
        ("BONE", "Root Bone", "Translation keyed on the root bone"),
        ("OBJECT", "Armature Object", "Translation keyed on the armature object; the root bone stays in place")])
    session_frames: IntProperty(name="Frames Driven")
    run_source: StringProperty(name="Run", description="What the last run was (driven, or a trace played)")
    run_commands: StringProperty(name="Run Commands", description="Cache file of the last run's commands on their "
                                 "clock (what Compare replays)")
    compare: StringProperty(name="Compared", description="The last run's figures and the compared engines' (JSON)")


class MOTIONCTL_PG_evaluate(PropertyGroup):
    """Evaluation in an environment (paper 004's metrics), of any trained model."""

    engine: EnumProperty(name="Source", items=ENGINE_ITEMS, default="graph",
                         description="Which trained model to measure: a motion graph as it is, any controller "
                         "through the moves it makes while a command is held for half a second")
    collection: PointerProperty(name="Obstacles", type=bpy.types.Collection,
                                description="Mesh objects seen from above; custom property motionctl_kind = wall, "
                                "chasm, low, region (with motionctl_allow) or bounds (else a 'floor' object)")
    cell: FloatProperty(name="Cell", default=0.2, min=0.05, unit="LENGTH", description="Grid spacing")
    headings: IntProperty(name="Headings", default=18, min=4, max=72, description="Facing directions (18 = 20°)")
    radius: FloatProperty(name="Character Radius", default=0.25, min=0.0, unit="LENGTH")
    edit_scale: FloatProperty(name="Edit Size", default=1.0, min=0.1, subtype="FACTOR",
                              description="How far clips may be edited to land on grid points (1 = 100%)")
    pairs: IntProperty(name="Path Pairs", default=100, min=5, description="Monte-Carlo start/end pairs 4-7 m apart")
    lm_sample: FloatProperty(name="LM Sample", default=1.0, min=0.001, max=1.0, subtype="FACTOR",
                             description="Fraction of embedded nodes averaged for local maneuverability")
    evaluated: StringProperty(description="The engine the shown results are of")
    coverage_xy: FloatProperty()
    coverage_xya: FloatProperty()
    path_mean: FloatProperty()
    path_median: FloatProperty()
    nodes: IntProperty()
    seconds: FloatProperty()
    details: StringProperty()
    result_path: StringProperty(subtype="FILE_PATH", description="The evaluation's maps and the room (cache)",
                                options=PATH_OPTIONS)
    map_path: StringProperty(subtype="FILE_PATH", options=PATH_OPTIONS)


class MOTIONCTL_PG_active_candidate(PropertyGroup):
    """A request of the Active Learning panel: the metric that found it, u, score, its pseudoexample."""

    metric: StringProperty(name="Metric")
    text: StringProperty(name="Task Input")
    score: FloatProperty(name="Score")
    has_pseudo: BoolProperty()
    pseudo: StringProperty(name="Pseudoexample")


class MOTIONCTL_PG_active_example(PropertyGroup):
    """An example (or a cluster's pseudoexamples) of the controller being taught."""

    cluster: IntProperty(name="Cluster")
    text: StringProperty(name="Does")
    pseudo: BoolProperty()


class MOTIONCTL_PG_active(PropertyGroup):
    """The Active Learning panel: the requests, the answer, the controller's examples and coverage."""

    candidates: CollectionProperty(type=MOTIONCTL_PG_active_candidate)
    candidate_index: IntProperty(name="Request", update=on_candidate_index,
                                 description="The request shown by the ghost armature at the 3D cursor")
    examples_list: CollectionProperty(type=MOTIONCTL_PG_active_example)
    example_index: IntProperty()
    answer_clip: StringProperty(name="Answer With", description="The clip of the group that does what the request "
                                "asks (its example nearest the requested start is used)")
    mirrored: BoolProperty(name="Mirrored", default=False, description="Answer with the clip's mirror image")
    auto_steps: IntProperty(name="Steps", default=1, min=1, max=100, description="Oracle steps per Auto")
    task: StringProperty()
    examples: IntProperty()
    pseudoexamples: IntProperty()
    clusters: IntProperty()
    steps: IntProperty()
    coverage: FloatProperty(subtype="FACTOR")
    coverage_normalised: FloatProperty(subtype="FACTOR")
    pool_coverage: FloatProperty(subtype="FACTOR")
    last_step: StringProperty()


def _on_clip_index(self, context):
    if 0 <= self.clip_index < len(self.clips):
        show_clip(context, self.clips[self.clip_index])


def _is_armature(self, ob) -> bool:
    return ob.type == "ARMATURE"


class MOTIONCTL_PG_bone_pair(PropertyGroup):
    target: StringProperty(name="Bone", description="A bone of the target armature")
    source: StringProperty(name="Joint", description="The clips' joint it follows (empty: it rides along with "
                           "its parent)")


class MOTIONCTL_PG_retarget(PropertyGroup):
    """Putting clips and runs on the animator's own rig."""

    target: PointerProperty(name="Target", type=bpy.types.Object, poll=_is_armature,
                            description="Your character's armature (Rigify, Mixamo, Character Creator, a game rig...)")
    bones: CollectionProperty(type=MOTIONCTL_PG_bone_pair)
    bone_index: IntProperty()
    source: EnumProperty(name="Retarget", default="RUN", items=[
        ("RUN", "Last Run", "The last driven or played controller run"),
        ("CLIP", "Selected Clip", "The clip selected in the Library list"),
        ("GROUP", "Ticked Clips", "Every ticked clip of the group, each as its own action"),
        ("TRACES", "Every Trace", "Every trace of the Preview panel played through the controller, each as its own "
         "action")])
    root_motion: EnumProperty(name="Root Motion", default="BONE", items=[
        ("BONE", "Root Bone", "On the rig's root bone (added at the origin if it has none): the hips' ground "
         "position and smoothed heading, as game engines read root motion"),
        ("OBJECT", "Armature Object", "On the armature object (location and rotation); the bones move in place"),
        ("IN_PLACE", "In Place", "No root motion: the character walks on the spot, facing its rest direction")])
    floor: BoolProperty(name="Keep Feet on Floor", default=True,
                        description="Shift the body so planted feet stand on the floor as the capture's do (no IK)")
    foot_plant: BoolProperty(name="Plant Feet (IK)", default=False,
                             description="Two-bone IK on the legs so planted feet slide no more than the capture's "
                             "(removes sliding that different proportions add)")
    nla: BoolProperty(name="Push to NLA", default=False,
                      description="Put the actions on an NLA track one after another (game exporters read strips as "
                      "takes)")
    action_prefix: StringProperty(name="Prefix", default="rt_", description="Prefix of the baked actions' names")
    frame_start: IntProperty(name="Start Frame", default=1)
    report: StringProperty(name="Report", description="The last retarget's figures (JSON)")


class MOTIONCTL_PG_settings(PropertyGroup):
    file_id: StringProperty(description="Stable id naming this file's caches")
    owner: StringProperty(description="The .blend the caches belong to", subtype="FILE_PATH")
    clips: CollectionProperty(type=MOTIONCTL_PG_clip)
    clip_index: IntProperty(name="Clip", default=0, update=_on_clip_index,
                            description="Selecting a clip plays it on its armature")
    groups: CollectionProperty(type=MOTIONCTL_PG_group)
    group: StringProperty(name="Clips", description="Skeleton group whose ticked clips the engines use")
    last_import: StringProperty(name="Last Import", description="Summary of the last import")
    engine: EnumProperty(name="Engine", items=ENGINE_ITEMS, default="fragments",
                         description="The controller to train, drive and bake")
    engines: PointerProperty(type=MOTIONCTL_PG_engines)
    traces: CollectionProperty(type=MOTIONCTL_PG_trace)
    trace_index: IntProperty()
    preview: PointerProperty(type=MOTIONCTL_PG_preview)
    evaluate: PointerProperty(type=MOTIONCTL_PG_evaluate)
    active: PointerProperty(type=MOTIONCTL_PG_active)
    retarget: PointerProperty(type=MOTIONCTL_PG_retarget)
    last_run: StringProperty(subtype="FILE_PATH", description="The last driven or played run (cache), for Bake",
                             options=PATH_OPTIONS)
    job_progress: FloatProperty(name="Progress", min=0.0, max=1.0, subtype="FACTOR")
    job_message: StringProperty(name="Job")
    job_running: BoolProperty()


classes = (MOTIONCTL_PG_clip, MOTIONCTL_PG_model, MOTIONCTL_PG_group, MOTIONCTL_PG_trace, *ENGINE_GROUPS,
           MOTIONCTL_PG_engines, MOTIONCTL_PG_preview, MOTIONCTL_PG_evaluate, MOTIONCTL_PG_active_candidate, MOTIONCTL_PG_active_example,
           MOTIONCTL_PG_active, MOTIONCTL_PG_bone_pair, MOTIONCTL_PG_retarget, MOTIONCTL_PG_settings)
