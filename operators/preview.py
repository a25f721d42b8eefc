"""Preview panel operators: drive the character live with the keyboard, record and play traces,
bake what was driven or played into an action.

``PreviewSession`` is plain numpy (testable headless, and what the per-tick cost is measured on):
it turns key states into control signals, asks the policy for a fragment whenever the current one
has played, and streams world poses from the synthesiser.  The modal operator only reads keys,
calls ``tick`` on a 1/60 s timer and writes the pose with one bulk ``foreach_set``.
"""

from __future__ import annotations

import os
import time
from collections import deque

import bpy
import numpy as np

from ..motionctl.fragments import Trace, read_trace, write_trace
from ..motionctl.fragments.controller import fragments_for_policy, run_policy
from ..motionctl.motion import Clip, MotionDatabase
from ..motionctl.policy import Policy
from ..motionctl.synth import Synthesizer
from ..motionctl.fitted import Planner
from . import controller as controller_ops
from . import planning
from .armature import PoseWriter, bake_clip
from .common import cache_dir, settings
from .jobs import BackgroundJobOperator

ARROWS = {"forward": "UP_ARROW", "back": "DOWN_ARROW", "left": "LEFT_ARROW", "right": "RIGHT_ARROW"}
_LAST_RUN: dict = {}  # what Bake takes: {"clip": Clip, "source": "driven"|"trace"}


def key_map(prefs) -> dict:
    """Event type -> action name, from the Preview settings (arrows always work)."""
    m = {prefs.key_forward: "forward", prefs.key_back: "back", prefs.key_left: "left", prefs.key_right: "right",
         prefs.key_turn_left: "turn_left", prefs.key_turn_right: "turn_right", prefs.key_jump: "jump",
         prefs.key_run: "run"}
    m.update({v: k for k, v in ARROWS.items()})
    return m


def control_from_keys(held: set, walk: float, run: float, turn_rate: float, airborne: bool) -> np.ndarray:
    """Control vector [vx, vy, turn, airborne] from the set of held actions."""
    fwd = ("forward" in held) - ("back" in held)
    side = ("right" in held) - ("left" in held)
    v = np.array([side, fwd], dtype=float)
    n = np.linalg.norm(v)
    speed = run if "run" in held else walk
    v = v / n * speed if n > 0 else v
    turn = turn_rate * (("turn_left" in held) - ("turn_right" in held))
    return np.array([v[0], v[1], turn, 1.0 if airborne else 0.0])


class PreviewSession:
    """Live controller playback: decisions on demand, frames streamed at the working rate."""

    def __init__(self, policy: Policy, fragments, warp: float = 1.0, start=(0.0, 0.0), start_yaw: float = 0.0,
                 trail: int = 600):
        self.policy = policy
        self.fs = fragments
        self.synth = Synthesizer(fragments.frame_table(), warp=warp, start=start, start_yaw=start_yaw)
        self.fps = fragments.fps
        self.fragment = None
        self.buffer = None
        self.t = 0.0
        self.roots, self.rots, self.controls = [], [], []
        self.trail = deque(maxlen=trail)
        self.control = np.zeros(4)

    def decide(self, control) -> None:
        control = np.asarray(control, dtype=float)
        if self.fragment is None:
            self.fragment = self.policy.start_fragment(control)
        else:
            self.fragment = self.policy.next(self.fragment, control)
        clip, start, count = self.fs.pieces([self.fragment])[0]
        root, rot = self.synth.play(int(clip), int(start), int(count), control)
        self.buffer = (root, rot)
        self.roots.append(root)
        self.rots.append(rot)
        self.controls.append(control)
        self.trail.extend(root[:, :3].tolist())

    def tick(self, dt: float, control) -> tuple[np.ndarray, np.ndarray]:
        """The pose to show now (root [3], rot [J, 4]) under ``control``, then advance ``dt`` seconds."""
        self.control = np.asarray(control, dtype=float)
        while self.buffer is None or self.t >= len(self.buffer[0]):
            if self.buffer is not None:
                self.t -= len(self.buffer[0])
            self.decide(self.control)
        i = int(self.t)
        self.t += dt * self.fps
        return self.buffer[0][i], self.buffer[1][i]

    def arrow_vertices(self) -> np.ndarray:
        root = np.array(self.trail[-1]) if self.trail else np.zeros(3)
        return control_arrow(root, self.synth.state.yaw, self.control)

    def clip(self, name: str) -> Clip:
        table = self.synth.table
        return Clip(name, table.skeleton, table.fps, np.concatenate(self.roots), np.concatenate(self.rots),
                    tags={"driven"})

    def trace(self, name: str = "recorded") -> Trace:
        return Trace(np.array(self.controls), self.fs.decision_rate, name)


def planning_session(context, planner: Planner, clips, op):
    """A PlanningSession whose task state comes from the scene: the desired direction (the Drive
    operator's, steered by keys), the target empty, or the gate empty (created if missing)."""
    task = planner.problem.task.name
    op.desired_yaw = 0.0
    if task == "navigation":
        state = lambda ground, yaw: planning.navigation_state(op.desired_yaw, yaw)  # noqa: E731
        arrow = lambda s: control_arrow(s.trail[-1] if s.trail else np.zeros(3), op.desired_yaw,  # noqa: E731
                                        np.array([0.0, 2.0, 0.0, 0.0]))
    else:
        name = planning.TARGET_NAME if task == "reach" else planning.GATE_NAME
        marker = bpy.data.objects.get(name)
        if marker is None:
            marker = bpy.data.objects.new(name, None)
            marker.empty_display_type = "SPHERE" if task == "reach" else "PLAIN_AXES"
            marker.empty_display_size = 0.2 if task == "reach" else planner.problem.task.half_width
            marker.location = (0.0, 3.0, 0.0)
            context.collection.objects.link(marker)
        if task == "reach":
            state = lambda ground, yaw: planning.local_point(marker.location[:2], ground, yaw)  # noqa: E731
        else:
            state = lambda ground, yaw: planning.guidance_state(marker.location[:2],  # noqa: E731
                                                                marker.rotation_euler.z, ground, yaw)

        def arrow(s):
            root = np.array(s.trail[-1]) if s.trail else np.zeros(3)
            target = np.array([marker.location[0], marker.location[1], 0.02])
            return np.array([[root[0], root[1], 0.02], target] * 3, dtype=np.float32)

    session = planning.PlanningSession(planner, clips, state)
    session.arrow_vertices = lambda: arrow(session)
    return session


def trail_vertices(points, lift: float = 0.01) -> np.ndarray:
    """[K, 3] float32 line-strip vertices of the root's recent path, just above the floor."""
    p = np.asarray(points, dtype=np.float32).reshape(-1, 3).copy()
    p[:, 2] = lift
    return p


def control_arrow(root: np.ndarray, yaw: float, control: np.ndarray, scale: float = 0.5) -> np.ndarray:
    """[6, 3] float32 line vertices (3 segments) of the control velocity as an arrow on the floor."""
    c, s = np.cos(yaw), np.sin(yaw)
    v = np.array([c * control[0] - s * control[1], s * control[0] + c * control[1], 0.0]) * scale
    base = np.array([root[0], root[1], 0.02])
    tip = base + v
    n = np.linalg.norm(v)
    if n < 1e-6:
        return np.repeat(base[None], 6, axis=0).astype(np.float32)
    d = v / n
    side = np.array([-d[1], d[0], 0.0]) * 0.08
    back = tip - d * 0.15
    return np.array([base, tip, tip, back + side, tip, back - side], dtype=np.float32)


def trained_policy(context):
    """The trained controller: a fragment ``Policy`` or, for the planning engine, a ``Planner``."""
    pg = settings(context).controller
    path = bpy.path.abspath(pg.policy_path)
    if not pg.policy_path or not os.path.exists(path):
        raise ValueError("train a controller first (Controller panel)")
    return Planner.load(path) if pg.trained_engine == "PLANNING" else Policy.load(path)


def cached_fragments(policy: Policy):
    """The fragments a policy was trained on, if the training cache of this session holds them."""
    for model in controller_ops._MODELS.values():
        if [c.name for c in model.fragments.clips] == list(policy.clip_names):
            return model.fragments
    return None


def policy_and_fragments(context):
    """The trained policy and its fragments (from the training cache, else re-cut from the group);
    for the planning engine, the Planner and its working clips."""
    policy = trained_policy(context)
    if isinstance(policy, Planner):
        return policy, planning.planner_clips(context, policy)
    fs = cached_fragments(policy)
    if fs is not None:
        return policy, fs
    db = MotionDatabase.load(controller_ops.chosen_group(context).database)
    names = set(policy.clip_names)
    return policy, fragments_for_policy(policy, [c for c in db.clips if c.name in names])


def target_armature(context):
    ob = context.active_object
    if ob is not None and ob.type == "ARMATURE" and "motionctl_joints" in ob:
        return ob
    group = controller_ops.chosen_group(context)
    if group.armature is None:
        raise ValueError("select an armature imported by motionctl")
    return group.armature


class MOTIONCTL_OT_drive(bpy.types.Operator):
    """Drive the character with the keyboard: WASD/arrows move, Q/E turn, Space jumps, Shift runs, Esc stops"""

    bl_idname = "motionctl.drive"
    bl_label = "Drive"

    def execute(self, context):
        """Without a viewport (background mode) there is nothing to drive in."""
        try:
            policy_and_fragments(context)
            target_armature(context)
        except (ValueError, OSError) as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        self.report({"ERROR"}, "Drive is interactive: start it from the 3D viewport's Motion tab")
        return {"CANCELLED"}

    def invoke(self, context, event):
        if context.window is None or bpy.app.background:
            return self.execute(context)
        try:
            self.policy, fs = policy_and_fragments(context)
            self.ob = target_armature(context)
        except (ValueError, OSError) as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        prefs = settings(context).preview
        self.prefs = prefs
        self.keys = key_map(prefs)
        self.held = set()
        self.jump_until = 0.0
        self.writer = PoseWriter(self.ob)
        if isinstance(self.policy, Policy):
            self.session = PreviewSession(self.policy, fs, prefs.warp)
        else:
            self.session = planning_session(context, self.policy, fs, self)
        self.last = time.perf_counter()
        wm = context.window_manager
        self._timer = wm.event_timer_add(1.0 / 60.0, window=context.window)
        self._draw = bpy.types.SpaceView3D.draw_handler_add(draw_overlay, (self,), "WINDOW", "POST_VIEW")
        wm.modal_handler_add(self)
        context.workspace.status_text_set("motionctl Drive: WASD/arrows move, Q/E turn, Space jump, Shift run, Esc stop")
        return {"RUNNING_MODAL"}

    def modal(self, context, event):
        if event.type == "ESC" and event.value == "PRESS":
            return self.stop(context)
        action = self.keys.get(event.type)
        if action is not None:
            if event.value == "PRESS":
                self.held.add(action)
                if action == "jump":
                    self.jump_until = time.perf_counter() + self.prefs.jump_time
            elif event.value == "RELEASE":
                self.held.discard(action)
            return {"RUNNING_MODAL"}
        if event.type != "TIMER":
            return {"PASS_THROUGH"}  # mouse navigation keeps working
        now = time.perf_counter()
        dt, self.last = min(now - self.last, 0.1), now
        p = self.prefs
        if isinstance(self.session, PreviewSession):
            control = control_from_keys(self.held, p.walk_speed, p.run_speed, p.turn_rate, now < self.jump_until)
            root, rot = self.session.tick(dt, control)
        else:  # planning: A/D (or Q/E, arrows) turn the desired direction
            turn = (bool(self.held & {"left", "turn_left"}) - bool(self.held & {"right", "turn_right"}))
            self.desired_yaw += turn * p.turn_rate * dt
            root, rot = self.session.tick(dt)
        self.writer.write(rot, root)
        for area in context.screen.areas:
            if area.type == "VIEW_3D":
                area.tag_redraw()
        return {"RUNNING_MODAL"}

    def stop(self, context):
        context.window_manager.event_timer_remove(self._timer)
        bpy.types.SpaceView3D.draw_handler_remove(self._draw, "WINDOW")
        context.workspace.status_text_set(None)
        s = self.session
        if s.roots:
            _LAST_RUN.update(clip=s.clip("driven"), source="driven")
            settings(context).preview.session_frames = sum(len(r) for r in s.roots)
        if self.prefs.record and s.controls:
            path = save_recording(context, s.trace())
            self.report({"INFO"}, f"recorded {len(s.controls)} controls to {path}")
        return {"FINISHED"}


def save_recording(context, trace: Trace) -> str:
    """Write a recorded trace beside the caches and add it to the controller's training traces."""
    folder = cache_dir(context)
    k = 1
    while os.path.exists(os.path.join(folder, f"recorded_trace_{k:03d}.csv")):
        k += 1
    path = os.path.join(folder, f"recorded_trace_{k:03d}.csv")
    write_trace(trace, path)
    t = settings(context).controller.traces.add()
    t.path = path
    return path


_SHADER = None


def draw_overlay(op) -> None:
    """Viewport overlay: the trail of the root and the current control as an arrow."""
    global _SHADER
    import gpu
    from gpu_extras.batch import batch_for_shader

    if _SHADER is None:
        _SHADER = gpu.shader.from_builtin("UNIFORM_COLOR")
    s = op.session
    if not s.trail:
        return
    gpu.state.line_width_set(2.0)
    trail = trail_vertices(s.trail)
    batch = batch_for_shader(_SHADER, "LINE_STRIP", {"pos": trail})
    _SHADER.uniform_float("color", (1.0, 0.6, 0.1, 0.9))
    batch.draw(_SHADER)
    batch = batch_for_shader(_SHADER, "LINES", {"pos": s.arrow_vertices()})
    _SHADER.uniform_float("color", (0.2, 0.7, 1.0, 1.0))
    batch.draw(_SHADER)
    gpu.state.line_width_set(1.0)


def play_job(policy, fragments, trace, warp, progress=None, should_stop=None) -> Clip:
    """Worker job: run the policy on a trace and synthesize the motion."""
    if progress:
        progress(0.2, f"running {len(trace.samples)} controls through the policy")
    clip, _, _ = run_policy(policy, fragments, trace, warp=warp, name="trace_run")
    return clip


class MOTIONCTL_OT_play_trace(BackgroundJobOperator, bpy.types.Operator):
    """Play a trace file through the trained controller and bake the result as an action"""

    bl_idname = "motionctl.play_trace"
    bl_label = "Play Trace"
    job_label = "Play Trace"

    def prepare(self, context):
        prefs = settings(context).preview
        policy, fs = policy_and_fragments(context)
        if not isinstance(policy, Policy):
            raise ValueError("Play Trace drives a motion-fragment controller; the trained one is a planner")
        if not prefs.trace_path:
            raise ValueError("choose a trace file to play")
        trace = read_trace(bpy.path.abspath(prefs.trace_path))
        self._target = target_armature(context)
        return play_job, {"policy": policy, "fragments": fs, "trace": trace, "warp": prefs.warp}

    def finish(self, context, result) -> None:
        _LAST_RUN.update(clip=result, source="trace")
        bake_last(context, self._target)


def bake_last(context, target=None):
    """Bake the last driven or played run into an action with the Preview settings."""
    prefs = settings(context).preview
    if not _LAST_RUN:
        raise ValueError("drive the character or play a trace first")
    target = target or target_armature(context)
    scene = context.scene
    act = bake_clip(target, _LAST_RUN["clip"], prefs.action_name, frame_start=prefs.frame_start,
                    scene_fps=scene.render.fps / scene.render.fps_base, root_motion=prefs.root_motion)
    scene.frame_start, scene.frame_end = (int(x) for x in act.frame_range)
    return act


class MOTIONCTL_OT_bake_run(bpy.types.Operator):
    """Bake the last driven or played run into an action on the armature"""

    bl_idname = "motionctl.bake_run"
    bl_label = "Bake to Action"
    bl_options = {"REGISTER", "UNDO"}

    def execute(self, context):
        try:
            act = bake_last(context)
        except ValueError as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        self.report({"INFO"}, f"baked {act.name}: frames {int(act.frame_range[0])}-{int(act.frame_range[1])}")
        return {"FINISHED"}


classes = (MOTIONCTL_OT_drive, MOTIONCTL_OT_play_trace, MOTIONCTL_OT_bake_run)
