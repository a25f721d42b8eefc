"""Preview panel operators: drive any trained controller live with the keyboard, record and play
traces, bake what was driven or played into an action.

The engine's ``Session`` does all the work (decisions, synthesis, the run as a Clip); this module
turns held keys and the scene's goal objects into ``Command``s, writes poses with one bulk
``foreach_set`` per tick and draws the trail and the control on the floor.  The last run is kept
in memory and in a cache file, so Bake works after the .blend is reopened.
"""

from __future__ import annotations

import json
import os
import time
import uuid

import bpy
import numpy as np

from ..motionctl.clip import MotionDatabase
from ..motionctl.play.commands import (Command, PlaySettings, Trace, load_timeline, read_trace, save_timeline,
                                       speed_note, speed_range, write_trace)
from ..motionctl.errors import MotionctlError
from ..motionctl.rootframe import to_world, yaw_of
from ..motionctl.engines import ENGINES
from ..motionctl.evaluate.looks import PoseReference
from ..motionctl.evaluate.scoreboard import compare, measure, picture, timeline
from ..motionctl.play.session import Session
from .armature import PoseWriter, bake_clip
from .background import BackgroundJobOperator
from .cache import cache_path, resolve, stored
from .common import (chosen_group, group_clips, model_entry, model_file, report_error, settings, target_armature,
                     trained_model)
from .controller import show_picture
from .props import settings_from
from .state import STATE

ARROWS = {"forward": "UP_ARROW", "back": "DOWN_ARROW", "left": "LEFT_ARROW", "right": "RIGHT_ARROW"}
GOAL_OBJECTS = {"target": "motionctl_target", "gate": "motionctl_gate", "line": "motionctl_line"}
GOAL_DISPLAY = {"target": ("SPHERE", 0.2), "gate": ("PLAIN_AXES", 0.6), "line": ("SINGLE_ARROW", 1.0)}
PUSH_SHOWN = 0.6  # s the push arrow stays drawn
MOUSE_WALK = 1.5  # m: the mouse this far from the character asks a walk (nearer slower, farther faster)
DRIVE_STATUS = "motionctl Drive: WASD/arrows move, Q/E turn, Shift run, X stop, Space jump, Esc ends"


def key_map(prefs) -> dict:
    """Event type -> action name, from the Preview settings (arrows always work)."""
    m = {prefs.key_forward: "forward", prefs.key_back: "back", prefs.key_left: "left", prefs.key_right: "right",
         prefs.key_turn_left: "turn_left", prefs.key_turn_right: "turn_right", prefs.key_jump: "jump",
         prefs.key_run: "run", prefs.key_stop: "stop", prefs.key_push: "push"}
    m.update({v: k for k, v in ARROWS.items()})
    return m


def command_from_keys(held: set, walk: float, run: float, turn_rate: float, airborne: bool,
                      steer: str = "CHARACTER") -> Command:
    """The Command of the held actions: WASD relative to the character with Q/E turning it
    ("CHARACTER", paper 000's game), or WASD as world directions the character turns to
    ("WORLD").  Shift runs, Space jumps; no movement key (or Stop held) asks to stand."""
    fwd = ("forward" in held) - ("back" in held)
    side = ("right" in held) - ("left" in held)
    v = np.array([side, fwd], dtype=float)
    n = np.linalg.norm(v)
    speed = run if "run" in held else walk
    turn = turn_rate * (("turn_left" in held) - ("turn_right" in held))
    jump = 1.0 if airborne else 0.0
    if "stop" in held:
        return Command(np.array([0.0, 0.0, 0.0, jump]))
    if steer == "WORLD" and n > 0:
        return Command(np.array([0.0, speed, 0.0, jump]), heading=float(yaw_of(v)), speed=speed)
    v = v / n * speed if n > 0 else v
    return Command(np.array([v[0], v[1], turn, jump]))


def mouse_command(ground, point, command: Command, walk: float, run: float | None = None) -> Command:
    """The command with its desired heading toward the floor ``point`` (the mouse) and a speed
    like a stick's magnitude: a walk at ``MOUSE_WALK`` m from the character, slower nearer,
    faster farther up to ``run`` (the keys' speed instead when they ask one); standing once the
    character is there."""
    d = np.asarray(point, dtype=float) - np.asarray(ground, dtype=float)
    dist = float(np.hypot(*d))
    if dist < 0.3:
        return command
    speed = float(np.hypot(*command.control[:2])) or min(walk * dist / MOUSE_WALK, run if run is not None else walk)
    return Command(np.array([0.0, speed, 0.0, command.control[3]]), heading=float(yaw_of(d)),
                   speed=speed)


def with_goals(command: Command, goals: dict) -> Command:
    """The command with the scene's goal objects' positions (world)."""
    command.target = goals.get("target")
    command.gate = goals.get("gate")
    command.line = goals.get("line")
    return command


def goal_objects(context, model) -> dict:
    """The model's goals read from the scene ({"target": [2], "gate": [3], "line": [3]}: a point, or
    a point and the empty's facing about Z), creating the empties it needs (3 m ahead) when
    missing: move or turn them in the viewport and the character replans."""
    out = {}
    for goal in model.goals:
        name = GOAL_OBJECTS[goal]
        ob = bpy.data.objects.get(name)
        if ob is None:
            ob = bpy.data.objects.new(name, None)
            ob.empty_display_type, ob.empty_display_size = GOAL_DISPLAY[goal]
            if goal == "line":
                ob.rotation_euler.x = -np.pi / 2  # the single arrow (+Z) lies along the floor's +Y
            ob.location = (0.0, 3.0, 0.0)
            context.collection.objects.link(ob)
        out[goal] = np.array([ob.location[0], ob.location[1]]) if goal == "target" else \
            np.array([ob.location[0], ob.location[1], ob.rotation_euler.z])
    return out


def trail_vertices(points, lift: float = 0.01) -> np.ndarray:
    """[K, 3] float32 line-strip vertices of the root's recent path, just above the floor."""
    p = np.asarray(points, dtype=np.float32).reshape(-1, 3).copy()
    p[:, 2] = lift
    return p


def control_arrow(root: np.ndarray, yaw: float, control: np.ndarray, scale: float = 0.5) -> np.ndarray:
    """[6, 3] float32 line vertices (3 segments) of the control velocity as an arrow on the floor."""
    v = np.append(to_world(np.asarray(control[:2], dtype=float), yaw) * scale, 0.0)
    base = np.array([root[0], root[1], 0.02])
    tip = base + v
    n = np.linalg.norm(v)
    if n < 1e-6:
        return np.repeat(base[None], 6, axis=0).astype(np.float32)
    d = v / n
    side = np.array([-d[1], d[0], 0.0]) * 0.08
    back = tip - d * 0.15
    return np.array([base, tip, tip, back + side, tip, back - side], dtype=np.float32)


def goal_lines(root, goals: dict, reach: float = 20.0) -> np.ndarray:
    """[2 G, 3] float32 lines on the floor: from the character to each goal point, and a line
    goal drawn itself (``reach`` metres each way along its direction)."""
    base = [root[0], root[1], 0.02]
    out = []
    for goal, p in goals.items():
        if goal == "line":
            d = to_world(np.array([0.0, reach]), p[2])
            out += [[p[0] - d[0], p[1] - d[1], 0.02], [p[0] + d[0], p[1] + d[1], 0.02]]
        else:
            out += [base, [p[0], p[1], 0.02]]
    return np.array(out, dtype=np.float32).reshape(-1, 3)


def push_arrow(root, impulse, scale: float = 0.5) -> np.ndarray:
    """[6, 3] float32 lines of a push: an arrow ending at the character, its length the push speed."""
    v = np.asarray(impulse, dtype=float)[:2] * scale
    n = np.linalg.norm(v)
    tip = np.array([root[0], root[1], 0.9])
    if n < 1e-6:
        return np.zeros((0, 3), dtype=np.float32)
    d = np.append(v / n, 0.0)
    base = tip - np.append(v, 0.0)
    side = np.array([-d[1], d[0], 0.0]) * 0.1
    back = tip - d * 0.2
    return np.array([base, tip, tip, back + side, tip, back - side], dtype=np.float32)


def floor_point(context, event):
    """The floor (z = 0) point under the mouse in the viewport, or None."""
    from bpy_extras import view3d_utils

    region, rv3d = context.region, context.region_data
    if region is None or rv3d is None:
        return None
    xy = (event.mouse_region_x, event.mouse_region_y)
    origin = np.array(view3d_utils.region_2d_to_origin_3d(region, rv3d, xy))
    ray = np.array(view3d_utils.region_2d_to_vector_3d(region, rv3d, xy))
    if abs(ray[2]) < 1e-6:
        return None
    t = -origin[2] / ray[2]
    return None if t < 0 else (origin + t * ray)[:2]


def playable(context, what: str = "Drive"):
    """(model, its frame table, target armature) for the Controller panel's engine."""
    st = settings(context)
    model, group = trained_model(context, st.engine)
    table = model.frame_table(group_clips(context, group))
    return model, table, target_armature(context, group, what)


COMPARE_IMAGE = "motionctl_compare"


def keep_run(context, clip, source: str, figures: dict | None = None, clock=None, engine: str = "") -> None:
    """Remember a run for Bake: in memory, and in a cache file (Bake after reopening the .blend);
    with its ``figures`` (``evaluate.scoreboard.measure``) and commands on their ``clock``
    (``timeline``), for the Compare box."""
    st = settings(context)
    STATE.last_run = clip
    db = MotionDatabase(clip.skeleton, [clip])
    st.last_run = stored(db.save(cache_path(context, "lastrun")))
    st.preview.session_seconds = clip.n_frames / clip.fps
    st.preview.run_id = uuid.uuid4().hex
    st.preview.run_source = source
    if figures is not None:
        label = ENGINES[engine].label if engine in ENGINES else engine
        st.preview.run_commands = stored(save_timeline(cache_path(context, "lastcommands"), *clock,
                                                       {"engine": engine, "seconds": clip.n_frames / clip.fps}))
        show_compare(context, {"rows": [{"engine": engine, "label": label, **figures}], "source": None})


def show_compare(context, result: dict) -> None:
    """Keep compared figures on the scene (JSON) and their plot as an image."""
    p = settings(context).preview
    p.compare = json.dumps(result, default=float)
    source = result.get("source")
    show_picture(COMPARE_IMAGE, picture(result["rows"], source["skating"] if source else None))


def last_run(context):
    if STATE.last_run is not None:
        return STATE.last_run
    path = resolve(settings(context).last_run)
    if not path or not os.path.exists(path):
        raise MotionctlError("drive the character or play a trace first")
    STATE.last_run = MotionDatabase.load(path).clips[0]
    return STATE.last_run


class MOTIONCTL_OT_drive(bpy.types.Operator):
    """Drive the character with the keyboard: WASD/arrows move, Q/E turn, Shift runs, X stops, Space jumps, Esc ends"""

    bl_idname = "motionctl.drive"
    bl_label = "Drive"

    def execute(self, context):
        """Without a viewport (background mode) there is nothing to drive in."""
        try:
            playable(context)
        except Exception as exc:  # noqa: BLE001
            return report_error(self, context, exc, "Drive")
        self.report({"ERROR"}, "Drive is interactive: start it from the 3D viewport's Motion tab")
        return {"CANCELLED"}

    def invoke(self, context, event):
        if context.window is None or bpy.app.background:
            return self.execute(context)
        try:
            self.model, table, self.ob = playable(context)
            self.goals = goal_objects(context, self.model)
        except Exception as exc:  # noqa: BLE001
            return report_error(self, context, exc, "Drive")
        self.prefs = settings(context).preview
        self.keys = key_map(self.prefs)
        self.held = set()
        self.jump_until = 0.0
        self.pushed = None  # (impulse [2], until): the last push, drawn for a moment
        self.mouse = None  # the floor point under the mouse, when it steers
        self.writer = PoseWriter(self.ob)
        self.session = Session(self.model, table, play=settings_from(PlaySettings, self.prefs))
        self.command = Command()
        self.last = time.perf_counter()
        wm = context.window_manager
        self._timer = wm.event_timer_add(1.0 / 60.0, window=context.window)
        handle = bpy.types.SpaceView3D.draw_handler_add(draw_drive, (self,), "WINDOW", "POST_VIEW")
        STATE.overlays["drive"] = handle
        wm.modal_handler_add(self)
        self.speeds = speed_range(self.session.table)  # (slowest, fastest) m/s the capture does
        self.note = ""
        context.workspace.status_text_set(DRIVE_STATUS)
        return {"RUNNING_MODAL"}

    def modal(self, context, event):
        if event.type == "ESC" and event.value == "PRESS":
            return self.stop(context)
        if event.type == "MOUSEMOVE" and self.prefs.mouse_steer:
            self.mouse = floor_point(context, event)
            return {"PASS_THROUGH"}
        action = self.keys.get(event.type)
        if action == "push":
            if event.value == "PRESS":
                self.push(context)
            return {"RUNNING_MODAL"}
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
        self.goals = goal_objects(context, self.model)
        command = command_from_keys(self.held, p.walk_speed, p.run_speed, p.turn_rate, now < self.jump_until, p.steer)
        if self.mouse is not None and "stop" not in self.held:
            command = mouse_command(self.session.synth.ground, self.mouse, command, p.walk_speed, p.run_speed)
        self.command = with_goals(command, self.goals)
        note = speed_note(command.asked_speed(self.session.synth.yaw), *self.speeds)
        if note != self.note:  # outside the capture's speeds: the nearest it can do, said in the status bar
            self.note = note
            context.workspace.status_text_set(DRIVE_STATUS + (f"   ({note})" if note else ""))
        root, rot = self.session.tick(dt, self.command)
        self.writer.write(rot, root)
        for area in context.screen.areas:
            if area.type == "VIEW_3D":
                area.tag_redraw()
        return {"RUNNING_MODAL"}

    def push(self, context):
        """Push the character from its left (the engine decides whether it can be pushed)."""
        impulse = to_world(np.array([self.prefs.push_speed, 0.0]), self.session.synth.yaw)
        if self.session.push(impulse):
            self.pushed = (impulse, time.perf_counter() + PUSH_SHOWN)
        else:
            self.report({"WARNING"}, f"a {self.model.engine} model plays its clips as captured: it cannot be pushed")

    def stop(self, context):
        context.window_manager.event_timer_remove(self._timer)
        handle = STATE.overlays.pop("drive", None)
        if handle is not None:
            bpy.types.SpaceView3D.draw_handler_remove(handle, "WINDOW")
        context.workspace.status_text_set(None)
        s = self.session
        if s.roots:
            keep_run(context, s.clip("driven"), "driven", measure(s), timeline(s), self.model.engine)
        if self.prefs.record and s.controls:
            path = save_recording(context, Trace(np.array(s.controls), s.rate, "recorded"))
            self.report({"INFO"}, f"recorded {len(s.controls)} controls to {path}")
        return {"FINISHED"}

    def cancel(self, context):  # the file was closed under it
        STATE.overlays.pop("drive", None)


def save_recording(context, trace: Trace) -> str:
    """Write a recorded trace beside the caches and add it to the training traces."""
    k = 1
    while os.path.exists(cache_path(context, "trace", f"{k:03d}", ".csv")):
        k += 1
    path = cache_path(context, "trace", f"{k:03d}", ".csv")
    write_trace(trace, path)
    t = settings(context).traces.add()
    t.path = stored(path)
    return path


def draw_drive(op) -> None:
    """Viewport overlay while driving: the root's trail, the control as an arrow, lines to goals."""
    import gpu
    from gpu_extras.batch import batch_for_shader

    shader = STATE.batches.get("uniform") or gpu.shader.from_builtin("UNIFORM_COLOR")
    STATE.batches["uniform"] = shader
    s = op.session
    if not s.trail:
        return
    root = np.array(s.trail[-1])
    gpu.state.line_width_set(2.0)
    for prim, verts, colour in (("LINE_STRIP", trail_vertices(s.trail), (1.0, 0.6, 0.1, 0.9)),
                                ("LINES", control_arrow(root, s.synth.yaw, op.command.local_control(s.synth.yaw)),
                                 (0.2, 0.7, 1.0, 1.0)),
                                ("LINES", goal_lines(root, op.goals), (0.9, 0.9, 0.2, 0.8)),
                                ("LINES", push_arrow(root, op.pushed[0]) if op.pushed and time.perf_counter() <
                                 op.pushed[1] else np.zeros((0, 3), np.float32), (1.0, 0.2, 0.2, 1.0))):
        if len(verts):
            shader.uniform_float("color", colour)
            batch_for_shader(shader, prim, {"pos": verts}).draw(shader)
    gpu.state.line_width_set(1.0)


def play_job(model, table, times, commands, seconds, play, progress=None, should_stop=None):
    """Worker job: a session playing a trace's commands on their clock, exactly as long as the
    trace (``Session.play``); returns the run as a Clip, its figures and its commands on their clock."""
    if progress:
        progress(0.1, f"playing {seconds:.1f} s")
    session = Session(model, table, play=play)
    clip = session.play(times, commands, seconds, should_stop, "trace_run")
    if progress:
        progress(0.9, "measuring the run")
    return {"clip": clip, "figures": measure(session, PoseReference.of(table.clips), seconds),
            "clock": timeline(session)}


class MOTIONCTL_OT_play_trace(BackgroundJobOperator, bpy.types.Operator):
    """Play a trace file through the trained controller and bake the result as an action"""

    bl_idname = "motionctl.play_trace"
    bl_label = "Play Trace"
    job_label = "Play Trace"

    def prepare(self, context):
        prefs = settings(context).preview
        model, table, self._target = playable(context, "Play Trace")
        if not prefs.trace_path:
            raise MotionctlError("choose a trace file to play")
        trace = read_trace(bpy.path.abspath(prefs.trace_path))
        goals = goal_objects(context, model)
        commands = [with_goals(c, goals) for c in trace.commands()]
        self._engine = model.engine
        return play_job, {"model": model, "table": table, "times": trace.clock(), "commands": commands,
                          "seconds": trace.duration, "play": settings_from(PlaySettings, prefs)}

    def finish(self, context, result) -> None:
        keep_run(context, result["clip"], "trace", result["figures"], result["clock"], self._engine)
        bake_last(context, self._target)


class MOTIONCTL_OT_compare(BackgroundJobOperator, bpy.types.Operator):
    """Run the last driven or played commands through every engine trained on this clip group and
    list their skating, response times and discontinuities side by side"""

    bl_idname = "motionctl.compare"
    bl_label = "Compare Engines"
    job_label = "Compare"

    def prepare(self, context):
        st = settings(context)
        path = resolve(st.preview.run_commands)
        if not path:
            raise MotionctlError("drive the character or play a trace first: Compare replays its commands")
        times, commands, meta = load_timeline(path)
        clips = group_clips(context)
        group = chosen_group(context)
        players = [(name, engine.label, model_file(group, name)) for name, engine in ENGINES.items()
                   if model_entry(group, name) is not None]
        if not players:
            raise MotionctlError("train at least one engine on this clip group first (Controller panel)")
        return compare, {"players": players, "times": times, "commands": commands, "clips": clips,
                         "play": settings_from(PlaySettings, st.preview), "seconds": meta.get("seconds")}

    def finish(self, context, result) -> None:
        show_compare(context, result)


def bake_last(context, target=None):
    """Bake the last driven or played run into an action with the Preview settings."""
    prefs = settings(context).preview
    clip = last_run(context)
    target = target or target_armature(context, what="Bake")
    scene = context.scene
    same = [a for a in bpy.data.actions if prefs.run_id and a.get("motionctl_run") == prefs.run_id
            and a.library is None]  # this run baked before (Play Trace bakes at once): refill it
    act = bake_clip(target, clip, prefs.action_name, frame_start=prefs.frame_start,
                    scene_fps=scene.render.fps / scene.render.fps_base, root_motion=prefs.root_motion,
                    into=same[0] if same else None)
    act["motionctl_run"] = prefs.run_id
    if same and prefs.action_name and act.name != prefs.action_name and prefs.action_name not in bpy.data.actions:
        act.name = prefs.action_name
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
        except Exception as exc:  # noqa: BLE001
            return report_error(self, context, exc, "Bake")
        self.report({"INFO"}, f"baked {act.name}: frames {int(act.frame_range[0])}-{int(act.frame_range[1])}")
        return {"FINISHED"}


classes = (MOTIONCTL_OT_drive, MOTIONCTL_OT_play_trace, MOTIONCTL_OT_bake_run, MOTIONCTL_OT_compare)
