"""One character playing one trained model: commands in, poses and a Clip out (DESIGN.md 3.0).

Every tool that plays a controller goes through ``Session``: Drive (a command per tick from the
keyboard), Play Trace (a command per decision from a file), baking and the benchmarks
(certification's macro-steps call the same ``Model.decide`` and ``synthesize`` from many entry
memories at once, without a character).  The session keeps the character's world state (ground position,
heading, the piece it last played), asks the model for a ``Step`` whenever the last one has
played, synthesizes it (``motionctl.synth``) and streams the frames.  It never knows which
engine it plays.

A ``Command`` is what a player asks for at one decision, in the terms a game pad and a level give:
a control in the character's frame (stick velocity, turning rate, jump) and, optionally, world
goals: a direction to travel, a point to reach, a gate to walk through.  Each engine reads the
parts it can follow (``Command.local_control``, ``Command.desired_heading``).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

import numpy as np

from .clip import Clip
from .jobs import check_stop
from .rootframe import to_local, wrap, yaw_of
from .store import open_archive, save_archive
from .synth import FrameTable, Step, SynthState, synthesize, to_clip

DEFAULT_SPEED = 1.3  # m/s: a walk, when a command gives a direction but no speed
TURN_GAIN = 6.0  # rad/s of turning per radian of heading error, when steering towards a heading
MAX_TURN = 1.0  # rad/s


@dataclass
class Command:
    """What the player asks for at one decision.

    control  [4]: vx (m/s to the character's right), vy (m/s forward), turn (rad/s, + left), jump (0/1)
    heading  desired world direction of travel and facing (radians, the root frame's yaw), or None
    speed    m/s along ``heading`` (None: the stick's speed, else a walk)
    target   world ground point [2] to go to (and reach for), or None
    gate     world gate [3] (centre x, y, and the angle of its line) to walk through, or None
    line     world line [3] (a point x, y on it and its direction, radians) to walk along, or None
    action   an action asked for now ("kick", "punch", ...; the jump is ``control[3]``), or None
    """

    control: np.ndarray = field(default_factory=lambda: np.zeros(4))
    heading: float | None = None
    speed: float | None = None
    target: np.ndarray | None = None
    gate: np.ndarray | None = None
    line: np.ndarray | None = None
    action: str | None = None

    def __post_init__(self):
        self.control = np.asarray(self.control, dtype=float).reshape(4)

    def local_control(self, yaw: float) -> np.ndarray:
        """[4] the control in the character's frame facing ``yaw``: the stick as given, or, with a
        heading, what a player steering toward it gives: walk forward and turn toward it, fully
        (MAX_TURN) until about 10° off, then eased.  (Asked for a sideways velocity toward the
        heading instead, controllers that follow a stick strafe and never turn round; and a gentle
        turn falls in the no-turn bin of a fragment controller short of the heading.)"""
        if self.heading is None:
            return self.control.copy()
        rel = float(wrap(self.heading - yaw))
        speed = self.speed if self.speed is not None else (np.hypot(*self.control[:2]) or DEFAULT_SPEED)
        turn = float(np.clip(TURN_GAIN * rel, -MAX_TURN, MAX_TURN))
        return np.array([0.0, speed, turn, self.control[3]])

    def desired_heading(self, yaw: float) -> float:
        """The world direction the player wants: ``heading``, else the stick's direction (or, with
        the stick at rest, where the turning rate would face half a second from now)."""
        if self.heading is not None:
            return float(self.heading)
        vx, vy, turn = self.control[:3]
        if np.hypot(vx, vy) > 1e-6:
            return float(yaw + yaw_of((vx, vy)))
        return float(yaw + 0.5 * turn)


@dataclass
class State:
    """What a model decides from: the character's world root frame and the model's own memory
    (the fragment, group or clip it played last; None before the first decision)."""

    ground: np.ndarray
    yaw: float
    memory: object = None
    time: float = 0.0

    def local(self, point) -> np.ndarray:
        """A world ground point [2] in the character's frame (x right, y forward)."""
        return to_local(np.asarray(point, dtype=float)[:2] - self.ground, self.yaw)


class Session:
    """A character playing ``model`` on ``table`` (its FrameTable, ``model.frame_table(clips)``).

    start, start_yaw  where the character begins; ``frame``: a table row to start from (else the
                      model chooses its own start for the first command)
    warp              0: root motion from the data; 1: the root follows each step's control
    """

    def __init__(self, model, table: FrameTable, start=(0.0, 0.0), start_yaw: float = 0.0, frame: int | None = None,
                 crossfade: int = 3, warp: float = 0.0, trail: int = 600):
        self.model = model
        self.table = table
        self.fps = table.fps
        self.crossfade = crossfade
        self.warp = warp
        self.synth = SynthState(np.asarray(start, dtype=float).copy(), float(start_yaw))
        self.memory = model.start(table, frame) if frame is not None else None
        self.steps, self.commands, self.controls = [], [], []
        self.roots, self.rots = [], []
        self._frames = 0
        self.buffer = None
        self.t = 0.0
        self.trail = deque(maxlen=trail)

    @property
    def state(self) -> State:
        return State(self.synth.ground.copy(), self.synth.yaw, self.memory, len(self.commands) / max(self.rate, 1e-9))

    @property
    def rate(self) -> float:
        """Decisions per second the model makes (its step length)."""
        return getattr(self.model, "decision_rate", 10.0)

    def decide(self, command: Command) -> tuple[np.ndarray, np.ndarray]:
        """One decision for ``command``: the model's step, synthesized; returns its frames
        (root [n, 3], rot [n, J, 4]) and keeps them for the clip."""
        step, self.memory = self.model.decide(self.state, command)
        if step.control is None:
            step.control = command.local_control(self.synth.yaw)
        root, rot, self.synth, _, _ = synthesize(self.table, [step], self.synth, self.crossfade, self.warp)
        self.steps.append(step)
        self.commands.append(command)
        self.controls.append(step.control)
        self.roots.append(root)
        self._frames += len(root)
        self.rots.append(rot)
        self.trail.extend(root[:, :3].tolist())
        return root, rot

    def push(self, impulse) -> bool:
        """Push the character: ``impulse`` [2] a world ground velocity (m/s) added now.  False
        when the model cannot be pushed (clip-based engines play their clips as captured)."""
        if self.memory is None:
            return False
        pushed = self.model.push(self.memory, to_local(np.asarray(impulse, dtype=float)[:2], self.synth.yaw))
        if pushed is None:
            return False
        self.memory = pushed  # takes effect at the next decision (every frame for a motion field)
        return True

    def tick(self, dt: float, command: Command) -> tuple[np.ndarray, np.ndarray]:
        """The pose to show now (root [3], rot [J, 4]) under ``command``, then advance ``dt``
        seconds: a new decision is made whenever the last step has played."""
        while self.buffer is None or self.t >= len(self.buffer[0]):
            if self.buffer is not None:
                self.t -= len(self.buffer[0])
            self.buffer = self.decide(command)
        i = int(self.t)
        self.t += dt * self.fps
        return self.buffer[0][i], self.buffer[1][i]

    def run(self, commands, should_stop=None, name: str = "run") -> Clip:
        """One decision per command (a trace), then the whole motion as a Clip."""
        for i, c in enumerate(commands):
            if i % 50 == 0:
                check_stop(should_stop, "playing")
            self.decide(c)
        return self.clip(name)

    @property
    def n_frames(self) -> int:
        return self._frames

    def clip(self, name: str = "run") -> Clip:
        """Everything played so far as one Clip."""
        if not self.roots:
            raise ValueError("nothing was played yet")
        return to_clip(self.table, np.concatenate(self.roots), np.concatenate(self.rots), name, tags={"driven"})


def commands_from_controls(controls) -> list:
    """A Command per control row [N, 4] (a recorded or generated trace)."""
    return [Command(c) for c in np.asarray(controls, dtype=float).reshape(-1, 4)]


GOALS = (("target", 2), ("gate", 3), ("line", 3))


def commands_to_arrays(commands) -> dict:
    """Commands as arrays (to store a run's commands): control [N, 4], heading [N], speed [N] and
    each goal [N, k] (nan where a command has none), action [N] (str, "" for none)."""
    commands = list(commands)
    out = {"control": np.array([c.control for c in commands], dtype=float).reshape(-1, 4),
           "heading": np.array([np.nan if c.heading is None else c.heading for c in commands], dtype=float),
           "speed": np.array([np.nan if c.speed is None else c.speed for c in commands], dtype=float),
           "action": np.array([c.action or "" for c in commands], dtype=str)}
    for name, k in GOALS:
        out[name] = np.array([np.full(k, np.nan) if getattr(c, name) is None else getattr(c, name) for c in commands],
                             dtype=float).reshape(-1, k)
    return out


def commands_from_arrays(arrays) -> list:
    """The Commands ``commands_to_arrays`` stored."""
    def opt(v):
        return None if not np.all(np.isfinite(v)) else np.asarray(v, dtype=float)

    n = len(arrays["control"])
    return [Command(arrays["control"][i], heading=None if np.isnan(arrays["heading"][i]) else float(arrays["heading"][i]),
                    speed=None if np.isnan(arrays["speed"][i]) else float(arrays["speed"][i]),
                    target=opt(arrays["target"][i]), gate=opt(arrays["gate"][i]), line=opt(arrays["line"][i]),
                    action=str(arrays["action"][i]) or None) for i in range(n)]


TIMELINE_FORMAT = "motionctl.timeline/1"


def save_timeline(path, times, commands, meta: dict | None = None) -> str:
    """Write a run's commands on its clock (``evaluate.motion.timeline``) to ``path`` (.npz)."""
    return save_archive(path, TIMELINE_FORMAT, dict(meta or {}), {"times": np.asarray(times, dtype=float),
                                                                  **commands_to_arrays(commands)})


def load_timeline(path) -> tuple[np.ndarray, list, dict]:
    """(times, commands, meta) written by ``save_timeline`` (MotionFileError if missing or damaged)."""
    with open_archive(path, TIMELINE_FORMAT, "run commands") as (meta, z):
        arrays = {k: np.asarray(z[k]) for k in ("times", "control", "heading", "speed", "action", "target", "gate",
                                                 "line")}
    return arrays["times"], commands_from_arrays(arrays), meta


__all__ = ["Command", "DEFAULT_SPEED", "Session", "State", "Step", "commands_from_arrays", "commands_from_controls",
           "commands_to_arrays", "load_timeline", "save_timeline", "wrap"]
