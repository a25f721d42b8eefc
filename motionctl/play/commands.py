"""What a player asks for, recorded and generated: the one place commands are defined.

- ``Command``: what a player asks for at one decision, in the terms a game pad and a level give: a
  control in the character's frame (stick velocity, turning rate, jump) and, optionally, world
  goals: a direction to travel, a point to reach, a gate to walk through.  Each engine reads the
  parts it can follow (``Command.local_control``, ``Command.desired_heading``).
- ``Trace``: a recorded command sequence, the one format for all of them (a player's controls at a
  rate, a run's commands on its clock with their goals): CSV (``# rate: 10`` and ``vx,vy,turn,
  airborne`` rows) or JSON (``{"rate", "samples"}`` and, for a run, ``"times"`` and each goal).
  ``read_trace`` names the file and line (CSV) or sample (JSON) of any problem.
- Players: a stochastic game-pad player (``PlayerSettings``, ``generate_trace``) for training and
  benchmarks, and how keys become commands while driving live (``DriveSettings``).
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field

import numpy as np

from ..errors import MotionctlError, MotionFileError
from ..store import atomic_file, parse_json, read_text
from .csvtrace import read_csv_samples
from ..rootframe import wrap, yaw_of
from ..settings import setting
from .tasks import speed_span

CONTROL_COLUMNS = ("vx", "vy", "turn", "airborne")
DEFAULT_SPEED = 1.3  # m/s: a walk, when a command gives a direction but no speed
TURN_GAIN = 6.0  # rad/s of turning per radian of heading error, when steering towards a heading
MAX_TURN = 1.0  # rad/s
TURN_LOOK = 0.5  # s: a turning rate asks to face where it turns the character in this time


@dataclass
class PlaySettings:
    """How a session plays any engine (the Preview panel's and ``run``'s options)."""

    warp: float = setting(1.0, "Root Follows Control", "1: the root goes where the control says (like a game), "
                          "as far as the feet allow with Plant Feet; 0: as captured", min=0.0, max=1.0,
                          subtype="FACTOR")
    plant_feet: bool = setting(True, "Plant Feet", "Planted feet stay planted: each step plays faster or slower to "
                               "meet the asked speed, the root is corrected only as much as a planted leg can take "
                               "(the rest is made up later), and locked feet bend the legs with IK.  Off: the root "
                               "follows the control exactly and the feet slide")


@dataclass
class DriveSettings:
    """How keys, the mouse and a push become commands while driving live (the Preview panel)."""

    steer: str = setting("CHARACTER", "Keys Steer", "What the movement keys mean", choices=(
        ("CHARACTER", "Character", "WASD move relative to the character and Q/E turn it (paper 000's game)"),
        ("WORLD", "World", "WASD are directions in the world (up the screen from above): the character turns and "
         "goes that way, like a game with a fixed camera")))
    mouse_steer: bool = setting(False, "Mouse Sets Direction", "The character walks toward the mouse pointer on "
                                "the floor")
    walk_speed: float = setting(1.3, "Walk", "Speed with a key held", min=0.0, max=15.0, unit="VELOCITY")
    run_speed: float = setting(3.5, "Run", "Speed with Run held", min=0.0, max=15.0, unit="VELOCITY")
    turn_rate: float = setting(1.0, "Turn", "Turning rate with Q/E (rad/s)", min=0.0, max=10.0)
    jump_time: float = setting(0.5, "Jump Time", "Seconds the jump control stays on after a press", min=0.1,
                               max=5.0, unit="TIME")
    push_speed: float = setting(1.5, "Push", "Speed a push adds to the character (toward its right)", min=0.0,
                                max=10.0, unit="VELOCITY")


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

    def local_control(self, yaw: float, max_turn: float = MAX_TURN) -> np.ndarray:
        """[4] the control in the character's frame facing ``yaw``: the stick as given, or, with a
        heading, what a player steering toward it gives: walk forward and turn toward it, fully
        (``max_turn``, rad/s) until about 10° off, then eased (plus the turn a steered stick's
        heading moves at, ``Session._steering``).  (Asked for a sideways velocity toward the
        heading instead, controllers that follow a stick strafe and never turn round; and a gentle
        turn falls in the no-turn bin of a fragment controller short of the heading.)"""
        if self.heading is None:
            return self.control.copy()
        rel = float(wrap(self.heading - yaw))
        speed = self.speed if self.speed is not None else (np.hypot(*self.control[:2]) or DEFAULT_SPEED)
        turn = float(np.clip(self.control[2] + TURN_GAIN * rel, -max_turn, max_turn))  # a steered stick's rate, and on to it
        return np.array([0.0, speed, turn, self.control[3]])

    def asked_speed(self, yaw: float) -> float:
        """The ground speed asked (m/s): the stick's, or the command's along its heading (0: stand)."""
        return float(np.hypot(*self.local_control(yaw)[:2]))

    def desired_heading(self, yaw: float, ahead: float = TURN_LOOK) -> float:
        """The world direction the player wants: ``heading``, else the stick's direction turned by
        the turning rate over ``ahead`` seconds (the stick at rest: the facing, so turned).  A
        heading that moves on (a turning stick's, ``Session._steering``, which keeps the stick's
        rate in ``control[2]``) is likewise where it will be ``ahead`` seconds on: an engine that
        plans a clip or a step at a time (planning, the graph, active learning) is otherwise asked
        to face only the little the stick leads now, and a straight walk answers that best, spun
        round by the root (issue 59: their 0.6 rad/s turns were the straight walk's poses)."""
        if self.heading is not None:
            return float(self.heading) + ahead * float(self.control[2])
        vx, vy, turn = self.control[:3]
        base = yaw + yaw_of((vx, vy)) if np.hypot(vx, vy) > 1e-6 else yaw
        return float(base + ahead * turn)


def speed_range(table) -> tuple[float, float]:
    """(slowest, fastest) ground speed a ``FrameTable``'s capture moves at (m/s over a stride: p5
    of the frames that move, p98 of all): what a controller on it can be asked; outside it gets
    the nearest."""
    w = max(1, round(table.fps))
    step = np.hypot(table.motion[:, 0], table.motion[:, 1]) * table.fps
    return speed_span(np.convolve(step, np.ones(w) / w, mode="same") if len(step) >= w else step)


def speed_note(asked: float, slowest: float, fastest: float, stand: float = 0.2) -> str:
    """What the UI says when the asked speed (m/s) lies outside what the capture does (``slowest``
    to ``fastest``, ``speed_range``): the controller does the nearest; "" inside (and
    for standing, below ``stand``)."""
    if asked > fastest * 1.1:
        return f"asked {asked:.1f} m/s: the capture's fastest is {fastest:.1f} m/s, the nearest it can do"
    if stand <= asked < slowest * 0.9:
        return f"asked {asked:.1f} m/s: the capture's slowest walk is {slowest:.1f} m/s, the nearest it can do"
    return ""


def commands_from_controls(controls) -> list:
    """A Command per control row [N, 4] (a recorded or generated trace)."""
    return [Command(c) for c in np.asarray(controls, dtype=float).reshape(-1, 4)]


GOALS = (("target", 2), ("gate", 3), ("line", 3))
MAX_TRACE_SECONDS = 1e6  # what a trace's "seconds" may say (11 days)
MAX_GOAL_METRES = 1e4  # a target, gate or line this far away (m) is a damaged file, not a goal
GOAL_LIMITS = {"heading": 1e3, "speed": 100.0}  # rad, m/s (as CONTROL_LIMITS)


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


# ----------------------------------------------------------------------------- traces

@dataclass(eq=False)
class Trace:
    """Control signals [T, 4] at ``rate`` samples per second; a run's trace also keeps each sample's
    time (``times`` [T], s) and the goals its commands carried (``goals``: ``commands_to_arrays``
    without the control), and ``meta`` (what played it)."""

    samples: np.ndarray
    rate: float = 10.0
    name: str = ""
    times: np.ndarray | None = None
    goals: dict = field(default_factory=dict)
    meta: dict = field(default_factory=dict)

    def __post_init__(self):
        self.samples = np.asarray(self.samples, dtype=float)
        validate_samples(self.samples, self.name or "trace")
        if not self.rate > 0:
            raise MotionctlError(f"{self.name or 'trace'}: rate must be positive, got {self.rate}")
        if self.times is not None:
            self.times = np.asarray(self.times, dtype=float).reshape(-1)
            if len(self.times) != len(self.samples) or not np.all(np.isfinite(self.times)):
                raise MotionctlError(f"{self.name or 'trace'}: times must be {len(self.samples)} finite numbers")
            if np.any(np.diff(self.times) < 0):
                raise MotionctlError(f"{self.name or 'trace'}: times must not go back")
        seconds = self.meta.get("seconds", 1.0)
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not 0 < seconds <= MAX_TRACE_SECONDS:
            raise MotionctlError(f"{self.name or 'trace'}: it says it lasts {seconds!r} s, not a number of seconds "
                                 f"up to {MAX_TRACE_SECONDS:g}")
        for key, v in self.goals.items():  # NaN: no goal; else a finite number within its range
            v = np.asarray(v)
            limit = GOAL_LIMITS.get(key, MAX_GOAL_METRES)
            if v.dtype.kind == "f" and np.any(~np.isnan(v) & ~(np.abs(v) <= limit)):
                raise MotionctlError(f"{self.name or 'trace'}: a {key} goal is beyond ±{limit:g} "
                                     f"{'rad' if key == 'heading' else 'm/s' if key == 'speed' else 'm'}")

    @property
    def duration(self) -> float:
        """Seconds the trace lasts: ``meta["seconds"]`` for a run's trace (how long it played),
        else until one sample past its last time."""
        if "seconds" in self.meta:
            return float(self.meta["seconds"])
        if self.times is not None:
            return float(self.times[-1]) + 1.0 / self.rate
        return len(self.samples) / self.rate

    def clock(self) -> np.ndarray:
        """[T] each sample's time (s): ``times``, else one sample every 1 / rate."""
        return self.times if self.times is not None else np.arange(len(self.samples)) / self.rate

    def commands(self) -> list:
        """The trace's Commands, with their goals when it keeps them."""
        if not self.goals:
            return commands_from_controls(self.samples)
        return commands_from_arrays({"control": self.samples, **self.goals})


CONTROL_LIMITS = np.array([100.0, 100.0, 100.0])  # |vx|, |vy| (m/s) and |turn| (rad/s) a trace may ask


def sample_problem(samples: np.ndarray) -> tuple[int | None, str] | None:
    """(row, message) of the first problem in trace samples, or None: empty, wrong width, NaN, a
    velocity or turn beyond ``CONTROL_LIMITS`` (1e300 m/s played NaN), or an airborne value other
    than 0/1."""
    if samples.ndim != 2 or samples.shape[0] == 0:
        return None, "empty trace: no control samples"
    if samples.shape[1] != 4:
        return None, f"each sample needs 4 values {CONTROL_COLUMNS}, found {samples.shape[1]}"
    bad = np.flatnonzero(~np.isfinite(samples).all(axis=1))
    if len(bad):
        col = CONTROL_COLUMNS[int(np.flatnonzero(~np.isfinite(samples[bad[0]]))[0])]
        return int(bad[0]), f"NaN or infinite value in {col}"
    big = np.abs(samples[:, :3]) > CONTROL_LIMITS
    if big.any():
        row, col = np.argwhere(big)[0]
        return int(row), (f"{CONTROL_COLUMNS[col]} {samples[row, col]:g} is beyond ±{CONTROL_LIMITS[col]:g} "
                          f"{('m/s', 'm/s', 'rad/s')[col]}")
    air = samples[:, 3]
    bad = np.flatnonzero((air != 0) & (air != 1))
    if len(bad):
        return int(bad[0]), f"airborne must be 0 or 1, found {air[bad[0]]:g}"
    return None


def validate_samples(samples: np.ndarray, where: str) -> None:
    """Raise MotionctlError naming ``where`` (and the sample) if trace samples [T, 4] are not valid."""
    problem = sample_problem(samples)
    if problem is not None:
        row, msg = problem
        raise MotionctlError(f"{where}: {msg}" + (f" (sample {row})" if row is not None else ""))


def resample_trace(samples: np.ndarray, rate: float, target_rate: float) -> np.ndarray:
    """Trace samples [T, 4] at another rate (each output step takes the sample in force at its time)."""
    if abs(rate - target_rate) < 1e-9:
        return samples
    n = max(1, int(np.floor(len(samples) / rate * target_rate)))
    idx = np.minimum((np.arange(n) * rate / target_rate).astype(np.int64), len(samples) - 1)
    return samples[idx]


def write_trace(trace: Trace, path) -> None:
    """CSV (header ``vx,vy,turn,airborne``, a ``# rate: 10`` comment) or JSON by extension."""
    path = os.fspath(path)
    if not path.lower().endswith(".json") and (trace.times is not None or trace.goals):
        raise MotionctlError(f"{path}: a trace with times or goals is written as JSON")
    with atomic_file(path, "w", encoding="utf-8", newline="") as fh:
        if path.lower().endswith(".json"):
            data = {"rate": trace.rate, "columns": list(CONTROL_COLUMNS), "samples": trace.samples.tolist()}
            if trace.times is not None:
                data["times"] = trace.times.tolist()
            for key, v in trace.goals.items():
                v = np.asarray(v)
                data[key] = v.tolist() if v.dtype.kind in "US" else \
                    np.where(np.isfinite(v), v, None).tolist()  # nan (no goal) as null
            if trace.meta:
                data["meta"] = trace.meta
            json.dump(data, fh)
        else:
            fh.write(f"# rate: {trace.rate:g}\n")
            fh.write(",".join(CONTROL_COLUMNS) + "\n")
            np.savetxt(fh, trace.samples, delimiter=",", fmt="%.6g")


MAX_TRACE_RATE = 1000.0  # samples per second a trace may give (and at least 1 / this)


def trace_rate(rate: float, path, line: int | None = None) -> float:
    """A trace's samples per second, within 1 / ``MAX_TRACE_RATE`` .. ``MAX_TRACE_RATE`` (1e-300 asked
    for a trace of 1e301 seconds), or MotionFileError naming the file and line."""
    if not (np.isfinite(rate) and 1.0 / MAX_TRACE_RATE <= rate <= MAX_TRACE_RATE):
        raise MotionFileError(path, f"rate {rate:g} is not between {1.0 / MAX_TRACE_RATE:g} and {MAX_TRACE_RATE:g} "
                              "samples per second", line)
    return rate


def read_trace(path) -> Trace:
    """Read a CSV or JSON trace; any problem names the file and line (CSV) or sample (JSON)."""
    path = os.fspath(path)
    text = read_text(path)
    name = os.path.splitext(os.path.basename(path))[0]
    if path.lower().endswith(".json"):
        data = parse_json(text, path)
        if not isinstance(data, dict) or "samples" not in data:
            raise MotionFileError(path, 'expected {"rate": 10, "samples": [[vx, vy, turn, airborne], ...]}')
        rows = data["samples"]
        if not isinstance(rows, list) or not rows:
            raise MotionFileError(path, "empty trace: no control samples")
        widths = [len(r) if isinstance(r, list) else -1 for r in rows]
        bad = [i for i, w in enumerate(widths) if w != 4]
        if bad:
            raise MotionFileError(path, f"sample {bad[0]} has {max(widths[bad[0]], 0)} values, expected 4 {CONTROL_COLUMNS}")
        try:
            samples = np.array(rows, dtype=float)
        except (TypeError, ValueError):
            raise MotionFileError(path, "samples must be numbers") from None
        problem = sample_problem(samples)
        if problem is not None:
            row, msg = problem
            raise MotionFileError(path, msg if row is None else f"sample {row}: {msg}")
        rate = data.get("rate", 10.0)
        if isinstance(rate, bool) or not isinstance(rate, (int, float)):
            raise MotionFileError(path, f'"rate" must be a number of samples per second, got {rate!r}')
        rate = trace_rate(float(rate), path)
        extras = {}
        try:
            if "times" in data:
                extras["times"] = np.array(data["times"], dtype=float)
            goals = {}
            for key, k in (("heading", 0), ("speed", 0)) + GOALS:
                if key in data:
                    goals[key] = np.array([np.nan if x is None else x for x in data[key]], dtype=float) if not k \
                        else np.array([[np.nan if x is None else x for x in row] for row in data[key]],
                                      dtype=float).reshape(-1, k)
            if "action" in data:
                goals["action"] = np.array([str(a or "") for a in data["action"]], dtype=str)
            if goals:
                for key, k in (("heading", 0), ("speed", 0)) + GOALS:
                    goals.setdefault(key, np.full((len(samples), k) if k else len(samples), np.nan))
                goals.setdefault("action", np.full(len(samples), "", dtype=str))
                if any(len(v) != len(samples) for v in goals.values()):
                    raise ValueError("a goal list is not as long as the samples")
            extras["goals"] = goals
            extras["meta"] = dict(data.get("meta") or {})
            return Trace(samples, rate, name, **extras)
        except (TypeError, ValueError) as exc:
            raise MotionFileError(path, f"bad times or goals: {exc}") from None
    samples, rate, lines = read_csv_samples(text, path, CONTROL_COLUMNS, trace_rate)
    problem = sample_problem(samples)
    if problem is not None:
        row, msg = problem
        raise MotionFileError(path, msg, None if row is None else int(lines[row]))
    return Trace(samples, rate, name)


def trace_of_commands(times, commands, meta: dict | None = None, name: str = "run") -> Trace:
    """A run's commands on its clock (``evaluate.scoreboard.timeline``) as a trace that keeps their
    times and goals (written as JSON)."""
    arrays = commands_to_arrays(commands)
    times = np.asarray(times, dtype=float)
    rate = 1.0 / float(np.median(np.diff(times))) if len(times) > 1 else 10.0
    return Trace(arrays["control"], rate, name, times=times, goals={k: v for k, v in arrays.items() if k != "control"},
                 meta=dict(meta or {}))


def save_timeline(path, times, commands, meta: dict | None = None) -> str:
    """Write a run's commands on its clock to ``path`` (a JSON trace; ".json" added if missing)."""
    path = os.fspath(path)
    path = path if path.lower().endswith(".json") else os.path.splitext(path)[0] + ".json"
    write_trace(trace_of_commands(times, commands, meta), path)
    return path


def load_timeline(path) -> tuple[np.ndarray, list, dict]:
    """(times, commands, meta) written by ``save_timeline`` (MotionFileError if missing or damaged)."""
    trace = read_trace(path)
    return trace.clock(), trace.commands(), dict(trace.meta)


# ----------------------------------------------------------------------------- players

@dataclass
class PlayerSettings:
    """A stochastic gamepad player.  One stick sets the ground velocity in the character's frame,
    the other the turning rate, a button jumps.  Inputs are held for exponential durations,
    sometimes reversed at once, otherwise moved smoothly; turns ramp in gradually."""

    name: str = "player"
    max_speed: float = 3.5  # m/s at full stick
    hold_mean: float = 1.2  # s an input is held on average
    reversal: float = 0.15  # chance a change is a sudden reversal of direction
    forward_bias: float = 0.65  # chance a new direction is mostly forward
    stop: float = 0.12  # chance a change is letting go of the stick
    turn_chance: float = 0.35  # chance a change also starts a turn
    max_turn: float = 1.2  # rad/s at full stick
    ramp: float = 0.3  # s to move the stick to a new position (0: at once)
    turn_ramp: float = 0.5  # s for a turn to build up (0: at once)
    jump_rate: float = 0.12  # jumps per second
    jump_time: float = 0.5  # s the character stays airborne


def generate_trace(player: PlayerSettings, seconds: float, rate: float = 10.0, seed: int = 0) -> Trace:
    """A realistic, seeded gamepad trace from ``player`` (holds, reversals, gradual turns, jumps)."""
    rng = np.random.default_rng(seed)
    n = max(1, int(round(seconds * rate)))
    target = np.zeros((n, 3))
    t = 0
    vel = np.array([0.0, player.max_speed * 0.4])
    turn = 0.0
    while t < n:
        hold = max(1, int(round(rng.exponential(player.hold_mean) * rate)))
        r = rng.random()
        if r < player.reversal:
            vel = -vel
        elif r < player.reversal + player.stop:
            vel = np.zeros(2)
        else:
            speed = player.max_speed * rng.choice([0.25, 0.5, 0.75, 1.0], p=[0.2, 0.3, 0.25, 0.25])
            if rng.random() < player.forward_bias:
                ang = rng.normal(0.0, 0.35)
            else:
                ang = rng.choice([np.pi / 2, -np.pi / 2, np.pi, np.pi / 4, -np.pi / 4, 3 * np.pi / 4, -3 * np.pi / 4])
            vel = speed * np.array([np.sin(ang), np.cos(ang)])
        turn = player.max_turn * rng.uniform(-1, 1) if rng.random() < player.turn_chance else 0.0
        target[t:t + hold, :2] = vel
        target[t:t + hold, 2] = turn
        t += hold
    # Smooth stick motion (sudden reversals stay sudden: they are single-step jumps anyway).
    k = max(1, int(round(player.ramp * rate)))
    kernel = np.ones(k) / k
    pad = np.concatenate((np.repeat(target[:1], k - 1, 0), target), 0)
    smooth = np.stack([np.convolve(pad[:, i], kernel, mode="valid") for i in range(3)], axis=1)
    reversal = np.concatenate(([False], np.sum(target[1:, :2] * target[:-1, :2], axis=1) < -1e-9))
    smooth[reversal, :2] = target[reversal, :2]
    # Turns ramp in over turn_ramp seconds.
    tk = max(1, int(round(player.turn_ramp * rate)))
    tpad = np.concatenate((np.repeat(target[:1, 2], tk - 1), target[:, 2]))
    smooth[:, 2] = np.convolve(tpad, np.ones(tk) / tk, mode="valid")
    air = np.zeros(n)
    jumps = np.flatnonzero(rng.random(n) < player.jump_rate / rate)
    span = max(1, int(round(player.jump_time * rate)))
    for j in jumps:
        air[j:j + span] = 1.0
    return Trace(np.column_stack((smooth, air)), rate, f"{player.name}_{seed}")


TRAINING_PLAYERS = (
    PlayerSettings("steady", max_speed=3.5, hold_mean=1.6, reversal=0.08, turn_chance=0.3, jump_rate=0.08),
    PlayerSettings("twitchy", max_speed=4.0, hold_mean=0.7, reversal=0.25, turn_chance=0.45, ramp=0.15, jump_rate=0.2),
)
EVALUATION_PLAYER = PlayerSettings("evaluator", max_speed=3.8, hold_mean=1.0, reversal=0.18, turn_chance=0.4,
                                   ramp=0.25, jump_rate=0.15)


# Three styles of playing, for training on two and evaluating on the third (paper 000 trains its user
# model on some players and evaluates on another).  "smooth" moves the sticks slowly, so a trace rarely
# changes bin and there is little for a model of the user to predict; "abrupt" snaps the sticks and holds
# briefly; "gamepad" snaps too, holds a little longer and often reverses at once.
PLAYER_STYLES = {
    "smooth": PlayerSettings("smooth", hold_mean=1.4, reversal=0.08, turn_chance=0.35, ramp=0.3, turn_ramp=0.5,
                             jump_rate=0.1),
    "abrupt": PlayerSettings("abrupt", hold_mean=0.5, reversal=0.1, turn_chance=0.45, ramp=0.0, turn_ramp=0.0,
                             jump_rate=0.15),
    "gamepad": PlayerSettings("gamepad", hold_mean=0.8, reversal=0.35, turn_chance=0.4, ramp=0.05, turn_ramp=0.1,
                              jump_rate=0.15),
}


def player_traces(players, seconds: float, rate: float, seed: int, count: int = 1) -> list:
    """``count`` traces of ``seconds`` from each player, seeds derived from ``seed``."""
    return [generate_trace(p, seconds, rate, seed * 1000 + 17 * i + k) for i, p in enumerate(players) for k in range(count)]


def scale_player(player: PlayerSettings, max_speed: float) -> PlayerSettings:
    """The same player on a character whose top speed is ``max_speed`` (m/s)."""
    return PlayerSettings(**{**asdict(player), "max_speed": max_speed})
