"""One character playing one trained model: commands in, poses and a Clip out (DESIGN.md 3.0).

Every tool that plays a controller goes through ``Session``: Drive (a command per tick from the
keyboard), Play Trace (a command per decision from a file), baking and the benchmarks
(certification's macro-steps call the same ``Model.decide`` and ``synthesize`` from many entry
memories at once, without a character).  The session keeps the character's world state (ground position,
heading, the piece it last played), asks the model for a ``Step`` whenever the last one has
played, synthesizes it (``motionctl.play.synth``) and streams the frames.  It never knows which
engine it plays.

What a player asks for is a ``Command`` (``motionctl.play.commands``).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, replace

import numpy as np

from ..clip import Clip
from ..jobs import check_stop
from ..rootframe import to_local, wrap
from .commands import Command, PlaySettings
from .feet import FeetSettings
from .synth import BLEND, FrameTable, SynthState, synthesize, to_clip

MAX_LEAD = np.pi / 2  # rad: the most a turning stick's heading runs ahead of the facing (``_steering``)
CATCH_UP = 1.0  # s: a lag is asked of the engine as a velocity to make it up in this time


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
    blend             seconds a switch's offset takes to decay (``play.blend``; 0: cuts)
    warp              0: root motion from the data; 1: the root follows each step's control
    plant_feet        lock the feet the capture planted (``play.feet``) where the root moves otherwise
    play              ``PlaySettings`` (the Preview panel's): their warp and plant_feet instead
    """

    def __init__(self, model, table: FrameTable, start=(0.0, 0.0), start_yaw: float = 0.0, frame: int | None = None,
                 blend: float = BLEND, warp: float = 0.0, trail: int = 600, plant_feet: bool = True,
                 play: PlaySettings | None = None):
        self.model = model if model.frames is table else model.bind(table)
        self.table = table
        self.fps = table.fps
        self.blend = blend
        if play is not None:
            warp, plant_feet = play.warp, play.plant_feet
        self.warp = warp
        self.feet = FeetSettings() if plant_feet else None
        self.synth = SynthState(np.asarray(start, dtype=float).copy(), float(start_yaw))
        self.memory = model.start(table, frame) if frame is not None else None
        self.steps, self.commands, self.controls = [], [], []
        self.roots, self.rots = [], []
        self._frames = 0
        self.buffer = None
        self.t = 0.0
        self.trail = deque(maxlen=trail)
        self._held = None  # the facing a let-go stick holds (``_standing``)
        self._steer = None  # (heading, frames played) a turning stick has turned to (``_steering``)
        self._turned = None  # rad the stick turned since the last decision, as played (None: its rate now)

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
        asked = self._catching_up(self._steering(self._standing(command)))
        wanted = asked.local_control(self.synth.yaw)
        if self._steer is not None:  # a turning stick: the root turns at the stick's rate
            wanted[2] = float(command.control[2])
        step, self.memory = self.model.decide(self.state, asked)
        if step.control is None:
            step.control = wanted.copy()
            if asked.heading is not None and self.feet is not None and self._steer is None:
                step.control[2] = np.nan  # facing a heading, the engine turns its own way: no yaw is forced
        elif self._steer is not None and np.isfinite(step.control[2]):
            step.control = np.array(step.control, dtype=float)
            step.control[2] = wanted[2]
        if self._steer is not None and self.feet is not None:
            self._owe_steered_turn(asked.heading)
        root, rot, self.synth, _, _ = synthesize(self.table, [step], self.synth, self.blend, self.warp, self.feet)
        rest = float(wrap(asked.heading - self.synth.yaw)) if asked.heading is not None else np.pi
        if self.synth.lag is not None and abs(rest) < np.pi / 2:  # near the heading asked, owe no turn past it
            self.synth.lag[2] = float(np.clip(self.synth.lag[2], min(rest, 0.0), max(rest, 0.0)))
        self.steps.append(step)
        self.commands.append(command)
        # what the player asked, as a trace records it (a turn left to the engine: the asked turning rate)
        self.controls.append(np.where(np.isfinite(step.control), step.control, wanted))
        self.roots.append(root)
        self._frames += len(root)
        self.rots.append(rot)
        self.trail.extend(root[:, :3].tolist())
        return root, rot

    def _standing(self, command: Command) -> Command:
        """A stick let go (no velocity, no turn, no heading or goal) asks to stop and stand facing
        where the character faced when it was let go: said so (a heading held, speed 0), since
        "face where you face now", asked again every decision, lets an engine turn for free, and
        engines that could not stand at once wandered in circles."""
        still = (command.heading is None and command.target is None and command.gate is None
                 and command.line is None and not np.any(np.abs(command.control[:3]) > 1e-6))
        if not still:
            self._held = None
            return command
        if self._held is None:
            self._held = self.synth.yaw
        return replace(command, heading=self._held, speed=0.0)

    def _steering(self, command: Command) -> Command:
        """A turning stick (a turn, no heading or goal) asks the facing to turn at its rate: said as a
        heading turning at that rate from where the character faced when the turning began, at the
        stick's speed, the stick's turn kept in the command (so ``Command.local_control`` knows the
        heading moves on).  Asked instead as "where you face now, plus a
        little" at every decision, the heading ran on ahead of an engine that turns quickly: the
        look-ahead graph turned twice as fast as the stick asked, and the root forced to the stick's
        rate twisted the planted legs.  Asked half a second ahead (``TURN_LOOK``), engines faced
        that far ahead of the stick (the field and matching 10-18° on bench_looks' turning trace,
        1.6-3.5° now).  The heading never leads the facing by more than MAX_LEAD, so an engine that
        cannot keep up is not owed a whole circle.  The heading moves by what the stick turned
        while the last step played (``tick`` and ``play`` record it), not by the stick's rate now
        over that step: a stick reversed during a long step otherwise left the heading behind the
        stick for good (22° after a 1.2 s clip)."""
        turn = float(command.control[2])
        if (command.heading is not None or command.target is not None or command.gate is not None
                or command.line is not None or abs(turn) < 1e-6):
            self._steer = None
            return command
        yaw = self.synth.yaw
        turned, self._turned = self._turned, None
        if turned is None:  # no record of the stick since the last decision: its rate now, over the step played
            turned = turn * (self._frames - self._steer[1]) / self.fps if self._steer is not None else 0.0
        heading = yaw if self._steer is None else self._steer[0] + turned
        heading = yaw + float(np.clip(wrap(heading - yaw), -MAX_LEAD, MAX_LEAD))
        self._steer = (heading, self._frames)
        speed = float(np.hypot(*command.control[:2]))
        return replace(command, heading=heading, speed=speed)

    def _owe_steered_turn(self, heading: float) -> None:
        """Under a turning stick the root owes the turn to where the stick has turned (``heading``),
        not only the stick's rate from here: a step plays the rate in force when it was chosen, so
        a stick reversed during a long step (a motion graph's clip of up to 1.5 s) left the facing
        behind by that step's turn for good (the graph ended 54° off a stick that turned back, and
        followed within 5° or not by which clip a near tie had made long).  The gap is the turn the
        next step owes beyond the stick's rate (``synth.correct``: as much as planted feet allow,
        the engine's facing warp giving the rest)."""
        lag = np.zeros(3) if self.synth.lag is None else np.asarray(self.synth.lag, dtype=float).copy()
        lag[2] = float(np.clip(wrap(heading - self.synth.yaw), -self.feet.max_lag_turn, self.feet.max_lag_turn))
        self.synth.lag = lag

    def _catching_up(self, command: Command) -> Command:
        """What the model is asked: a stick's command with the lag the root still owes it
        (``synth.correct``) added, to be made up over ``CATCH_UP`` seconds, so the engine chooses
        motion that catches up instead of the root being dragged."""
        lag = self.synth.lag
        if self.warp <= 0 or lag is None or command.heading is not None or not np.any(lag):
            return command
        return replace(command, control=command.control + np.append(lag / CATCH_UP, 0.0))

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
        self._turned = (self._turned or 0.0) + float(command.control[2]) * dt  # the stick as it is held
        return self.buffer[0][i], self.buffer[1][i]

    def run(self, commands, should_stop=None, name: str = "run") -> Clip:
        """One decision per command, then the whole motion as a Clip (an engine's own steps: a
        run as long as its steps; ``play`` plays commands on a clock, as long as asked)."""
        for i, c in enumerate(commands):
            if i % 50 == 0:
                check_stop(should_stop, "playing")
            self.decide(c)
        return self.clip(name)

    def play(self, times, commands, seconds: float, should_stop=None, name: str = "run") -> Clip:
        """Commands on their clock (``times`` [S] s, each in force from its time until the next)
        played for exactly ``seconds``: a decision is made, with the command in force at that
        moment of the run, whenever the motion so far is shorter, and the last step is cut so the
        run has ``round(seconds * fps)`` frames whatever the engine's step lengths."""
        times = np.asarray(times, dtype=float).reshape(-1)
        if len(times) == 0 or len(times) != len(commands):
            raise ValueError("a run needs one command per time, and at least one")
        target = int(round(float(seconds) * self.fps))
        if target < 1:
            raise ValueError(f"a run of {seconds} s has no frame at {self.fps:g} fps")
        turns = np.array([float(c.control[2]) for c in commands])
        k, last = 0, None
        while self._frames < target:
            if k % 50 == 0:
                check_stop(should_stop, "playing")
            k += 1
            now = self._frames / self.fps
            i = int(np.searchsorted(times, now + 1e-9, side="right")) - 1
            if last is not None:  # what the stick turned while the last step played, command by command
                self._turned = stick_turn(times, turns, last, now)
            last = now
            self.decide(commands[max(i, 0)])
        self.trim(target)
        return self.clip(name)

    def play_trace(self, trace, should_stop=None, name: str | None = None) -> Clip:
        """A ``Trace`` played as long as it lasts (``play`` on its clock, with its goals)."""
        return self.play(trace.clock(), trace.commands(), trace.duration, should_stop, name or trace.name or "run")

    def trim(self, n_frames: int) -> None:
        """Keep only the first ``n_frames`` frames played (the decisions they came from, the last
        one cut short).  The character's state stays where the last decision left it: a trimmed
        session is for measuring and baking, not for playing on."""
        if n_frames >= self._frames:
            return
        counts = np.array([len(r) for r in self.roots])
        keep = int(np.searchsorted(np.cumsum(counts), n_frames, side="left")) + 1
        cut = n_frames - int(counts[:keep - 1].sum())
        del self.steps[keep:], self.commands[keep:], self.controls[keep:], self.roots[keep:], self.rots[keep:]
        self.roots[-1], self.rots[-1] = self.roots[-1][:cut], self.rots[-1][:cut]
        self._frames = n_frames

    @property
    def n_frames(self) -> int:
        return self._frames

    def clip(self, name: str = "run") -> Clip:
        """Everything played so far as one Clip."""
        if not self.roots:
            raise ValueError("nothing was played yet")
        return to_clip(self.table, np.concatenate(self.roots), np.concatenate(self.rots), name, tags={"driven"})


def stick_turn(times: np.ndarray, turns: np.ndarray, t0: float, t1: float) -> float:
    """rad a stick turned from ``t0`` to ``t1`` s, each of ``turns`` [S] (rad/s) in force from its
    time in ``times`` [S] until the next (the first from the start, the last on)."""
    lo = np.maximum(np.r_[-np.inf, times[1:]], t0)
    hi = np.minimum(np.r_[times[1:], np.inf], t1)
    return float(np.sum(turns * np.maximum(hi - lo, 0.0)))


__all__ = ["Session", "State", "stick_turn"]
