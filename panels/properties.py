"""Scene settings: the clip library, the controller, the preview (large arrays live in .npz caches)."""

from __future__ import annotations

import bpy
from bpy.props import (BoolProperty, CollectionProperty, EnumProperty, FloatProperty, FloatVectorProperty,
                       IntProperty, IntVectorProperty, PointerProperty, StringProperty)
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
    use: BoolProperty(name="Use", default=True, description="Use this clip when training controllers")


class MOTIONCTL_PG_group(PropertyGroup):
    """Clips on one skeleton: an armature and a database cache file."""

    armature: PointerProperty(name="Armature", type=bpy.types.Object)
    database: StringProperty(name="Database", subtype="FILE_PATH", description="The group's .npz cache")
    summary: StringProperty(name="Summary")
    fps: FloatProperty(name="FPS")


class MOTIONCTL_PG_trace(PropertyGroup):
    path: StringProperty(name="Trace", subtype="FILE_PATH", description="A control trace (CSV or JSON)")


_KINDS = [
    ("model", "Model", "Value iteration with a user model learned from traces (paper 000's controller)"),
    ("steady", "Steady", "Assumes the control never changes (Schödl and Essa)"),
    ("spread", "Spread", "Assumes the control changes uniformly at random"),
    ("greedy", "Greedy", "Best transition now, ignoring the future"),
]


class MOTIONCTL_PG_controller(PropertyGroup):
    """Settings and results of the controllers: motion fragments (paper 000) or planning (001)."""

    engine: EnumProperty(name="Engine", default="FRAGMENTS", items=[
        ("FRAGMENTS", "Motion Fragments", "Steered by a player's control signal; tabular policy (paper 000)"),
        ("PLANNING", "Planning", "Reaches goals (direction, object, gate) by planning ahead with extra-trees (paper 001)")])
    task: EnumProperty(name="Task", default="NAVIGATION", items=[
        ("NAVIGATION", "Navigation", "Walk in a desired direction (steer it with A/D while driving)"),
        ("REACH", "Reach", "Walk to the target empty and pick it up (needs a pick, reach or punch clip)"),
        ("GUIDANCE", "Guidance", "Walk through the gate empty's opening without touching its walls")])
    nav_gamma: FloatProperty(name="γ", default=1.0, min=0.0, description="Navigation: cost per radian off the direction")
    reach_reward: FloatProperty(name="λ", default=10.0, min=0.0, description="Reach: reward for reaching the object")
    reach_radius: FloatProperty(name="Radius", default=0.3, min=0.01, unit="LENGTH",
                                description="Reach: how close the hand's reach point must come")
    gate_half_width: FloatProperty(name="Half Width", default=0.6, min=0.1, unit="LENGTH",
                                   description="Guidance: half the gate's opening")
    parametric: BoolProperty(name="Blend Groups", default=True,
                             description="Group similar steps and blend them for precise control (paper 001 §4)")
    group_size: IntProperty(name="Group Size", default=3, min=1, max=6, description="Steps per blended group")
    n_trees: IntProperty(name="Trees", default=10, min=1, max=100, description="Extra-trees per group")
    plan_discount: FloatProperty(name="α", default=0.9, min=0.0, max=0.999,
                                 description="Discount of future rewards (higher plans further ahead)")
    plan_iterations: IntProperty(name="Iterations", default=30, min=1, description="Sampling iterations at most")
    trajectories: IntProperty(name="Trajectories", default=100, min=10, description="Trajectories per iteration")
    trained_engine: StringProperty()
    result_groups: IntProperty()
    result_samples: IntProperty()
    result_residual: FloatProperty()
    result_success: FloatProperty()
    result_reward: FloatProperty()
    group: StringProperty(name="Clips", description="Skeleton group whose ticked clips the controller uses")
    fragment_length: FloatProperty(name="Fragment Length", default=0.1, min=0.05, max=1.0, unit="TIME_ABSOLUTE",
                                   description="Seconds each fragment plays: the controller reacts this often")
    fragment_stride: FloatProperty(name="Stride", default=0.05, min=0.01, max=1.0, unit="TIME_ABSOLUTE",
                                   description="A new fragment starts every this many seconds in every clip")
    mirror: BoolProperty(name="Mirror Clips", default=True,
                         description="Add left/right mirrored copies (doubles the fragments, balances turns)")
    bins: EnumProperty(name="Control Bins", default="PAPER", items=[
        ("PAPER", "Paper (150)", "25 ground velocities x turning {-1, 0, 1} x airborne {0, 1}, rings fitted to the data"),
        ("KMEANS", "K-Means", "Bins learned from the training traces")])
    kmeans_bins: IntProperty(name="Bins", default=150, min=2, max=1000, description="Number of k-means bins")
    trace_source: EnumProperty(name="Training Traces", default="GENERATED", items=[
        ("GENERATED", "Player Model", "Traces from the stochastic gamepad player below"),
        ("FILES", "Files", "Recorded or loaded trace files (CSV or JSON)")])
    traces: CollectionProperty(type=MOTIONCTL_PG_trace)
    trace_index: IntProperty()
    trace_seconds: FloatProperty(name="Seconds", default=420.0, min=10.0, description="Length of generated training play")
    player_speed: FloatProperty(name="Top Speed", default=0.0, min=0.0, unit="VELOCITY",
                                description="Player's full-stick speed (0: the data's top speed)")
    player_hold: FloatProperty(name="Hold", default=1.2, min=0.1, unit="TIME_ABSOLUTE",
                               description="Average seconds the player holds an input")
    player_reversal: FloatProperty(name="Reversals", default=0.15, min=0.0, max=1.0, subtype="FACTOR",
                                   description="Chance that an input change is a sudden reversal")
    player_turns: FloatProperty(name="Turns", default=0.35, min=0.0, max=1.0, subtype="FACTOR",
                                description="Chance that an input change also turns")
    player_jumps: FloatProperty(name="Jumps/s", default=0.12, min=0.0, description="Jump presses per second")
    smoothing: FloatProperty(name="Smoothing", default=1.0, min=0.0,
                             description="User-model pseudo-counts per row (towards the player's overall habits)")
    kind: EnumProperty(name="Controller", default="model", items=_KINDS)
    use_threshold: BoolProperty(name="Threshold", default=False,
                                description="Allow only the best transitions by motion quality (as motion graphs do)")
    threshold: FloatProperty(name="Keep %", default=8.0, min=0.1, max=100.0, subtype="PERCENTAGE",
                             description="Percentage of transitions kept when thresholding")
    omega: FloatVectorProperty(name="ω", size=3, default=(0.8, 0.5, 0.3), min=0.0,
                               description="Motion quality: weight of the pose mismatch δ frames after a transition "
                               "(higher: smoother transitions matter more than following the control)")
    delta: IntVectorProperty(name="δ", size=3, default=(1, 2, 3), min=1,
                             description="Motion quality: frames after a transition at which poses are compared")
    stutter: FloatProperty(name="Stutter Window", default=0.25, min=0.0, unit="TIME_ABSOLUTE",
                           description="Jumping back in a clip by less than this scores zero (no stuttering)")
    w_v: FloatProperty(name="w_v", default=10.0, min=0.0,
                       description="Control quality: weight of the ground-velocity mismatch (log-magnitude)")
    w_t: FloatProperty(name="w_t", default=6.0, min=0.0, description="Control quality: weight of the turning-rate mismatch")
    w_a: FloatProperty(name="w_a", default=20.0, min=0.0, description="Control quality: weight of the airborne mismatch")
    discount: FloatProperty(name="λ", default=0.999, min=0.0, max=0.9999, precision=4,
                            description="Discount of future quality (0: greedy; near 1: plans far ahead)")
    held_out: IntProperty(name="Held-out Traces", default=3, min=0, max=50,
                          description="Generated evaluation traces (10 s each) to report % of optimal on")
    policy_path: StringProperty(name="Policy", subtype="FILE_PATH")
    result_fragments: IntProperty()
    result_improvements: IntProperty()
    result_converged: BoolProperty()
    result_seconds: FloatProperty()
    result_percent: FloatProperty(default=float("nan"))
    result_std: FloatProperty(default=float("nan"))
    result_warm: BoolProperty()


class MOTIONCTL_PG_preview(PropertyGroup):
    """Driving the character live, recording traces, baking runs."""

    key_forward: StringProperty(name="Forward", default="W", description="Event type for forward (arrows also work)")
    key_back: StringProperty(name="Back", default="S")
    key_left: StringProperty(name="Left", default="A")
    key_right: StringProperty(name="Right", default="D")
    key_turn_left: StringProperty(name="Turn Left", default="Q")
    key_turn_right: StringProperty(name="Turn Right", default="E")
    key_jump: StringProperty(name="Jump", default="SPACE")
    key_run: StringProperty(name="Run", default="LEFT_SHIFT")
    walk_speed: FloatProperty(name="Walk", default=1.3, min=0.0, unit="VELOCITY", description="Speed with a key held")
    run_speed: FloatProperty(name="Run", default=3.5, min=0.0, unit="VELOCITY", description="Speed with Run held")
    turn_rate: FloatProperty(name="Turn", default=1.0, min=0.0, description="Turning rate with Q/E (rad/s)")
    jump_time: FloatProperty(name="Jump Time", default=0.5, min=0.1, unit="TIME_ABSOLUTE",
                             description="Seconds the jump control stays on after a press")
    warp: FloatProperty(name="Root Follows Control", default=1.0, min=0.0, max=1.0, subtype="FACTOR",
                        description="1: the root moves exactly as the control says (like a game); 0: as captured")
    record: BoolProperty(name="Record Trace", default=False,
                         description="Save the controls you drive as a trace file (training data for the user model)")
    trace_path: StringProperty(name="Trace File", subtype="FILE_PATH", description="Trace to play through the controller")
    action_name: StringProperty(name="Action", default="motionctl_run")
    frame_start: IntProperty(name="Start Frame", default=1)
    root_motion: EnumProperty(name="Root Motion", default="BONE", items=[
        ("BONE", "Root Bone", "Translation keyed on the root bone"),
        ("OBJECT", "Armature Object", "Translation keyed on the armature object; the root bone stays in place")])
    session_frames: IntProperty(name="Frames Driven")


class MOTIONCTL_PG_graph(PropertyGroup):
    """Motion graph settings and statistics (paper 004's construction)."""

    threshold: FloatProperty(name="Threshold", default=0.08, min=0.001,
                             description="Highest frame difference (weighted joint angles and velocities) accepted "
                             "for a transition: raise it for a larger graph with rougher transitions")
    branching: IntProperty(name="Branching", default=3, min=0, max=64,
                           description="Most transitions kept from one clip end, the best into each other take "
                           "first (0 = all: larger graphs, slower evaluation)")
    min_clip: FloatProperty(name="Min Clip", default=0.5, min=0.05, unit="TIME_ABSOLUTE",
                            description="Transitions closer than this are merged (Appendix B coalescing)")
    max_clip: FloatProperty(name="Max Clip", default=1.5, min=0.1, unit="TIME_ABSOLUTE",
                            description="Longer clips are split, so the character can change course this often")
    graph_path: StringProperty(name="Graph", subtype="FILE_PATH")
    clips: IntProperty()
    transitions: IntProperty()
    candidates: IntProperty()
    seconds_kept: FloatProperty()
    seconds_total: FloatProperty()
    dropped: StringProperty(description="Clips none of whose frames survived in the strongly connected component")


class MOTIONCTL_PG_evaluate(PropertyGroup):
    """Evaluation in an environment (paper 004's metrics)."""

    source: EnumProperty(name="Source", default="GRAPH", items=[
        ("GRAPH", "Motion Graph", "The graph built in the Motion Graph panel"),
        ("CONTROLLER", "Fragment Controller", "The trained fragment controller's transitions (0.5 s held controls)")])
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
    coverage_xy: FloatProperty()
    coverage_xya: FloatProperty()
    path_mean: FloatProperty()
    path_median: FloatProperty()
    nodes: IntProperty()
    seconds: FloatProperty()
    details: StringProperty()
    map_path: StringProperty(subtype="FILE_PATH")


def _on_clip_index(self, context):
    if 0 <= self.clip_index < len(self.clips):
        show_clip(context, self.clips[self.clip_index])


class MOTIONCTL_PG_settings(PropertyGroup):
    clips: CollectionProperty(type=MOTIONCTL_PG_clip)
    clip_index: IntProperty(name="Clip", default=0, update=_on_clip_index,
                            description="Selecting a clip plays it on its armature")
    groups: CollectionProperty(type=MOTIONCTL_PG_group)
    last_import: StringProperty(name="Last Import", description="Summary of the last import")
    controller: PointerProperty(type=MOTIONCTL_PG_controller)
    preview: PointerProperty(type=MOTIONCTL_PG_preview)
    graph: PointerProperty(type=MOTIONCTL_PG_graph)
    evaluate: PointerProperty(type=MOTIONCTL_PG_evaluate)
    job_progress: FloatProperty(name="Progress", min=0.0, max=1.0, subtype="FACTOR")
    job_message: StringProperty(name="Job")
    job_running: BoolProperty()


classes = (MOTIONCTL_PG_clip, MOTIONCTL_PG_group, MOTIONCTL_PG_trace, MOTIONCTL_PG_controller, MOTIONCTL_PG_preview,
           MOTIONCTL_PG_graph, MOTIONCTL_PG_evaluate, MOTIONCTL_PG_settings)
