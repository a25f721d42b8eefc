"""The motion field as an engine (paper 002: Lee et al. 2010): ``fit`` learns it, ``FieldModel``
plays it one frame per decision.

Each decision takes the character's motion state (its memory), plays each of the k actions one
frame through the field (``Database.integrate``), and keeps the one with the best reward plus
discounted value (``values``) for the task state the command gives.  The paper's direction task
knows only the heading; ours also knows the asked speed (``speed_samples`` from standing to the
capture's fastest, a reward term -w_v·|s - v_c| per frame, ``GridTask``), so a game pad's walk, run
and stop reach it like its direction (Speed Samples 0: the paper's task).  The paper's k actions
cannot change speed where the capture has few states between speeds: a walk's nearest states are
all steady walks (the pose outweighs the root's speed), and on all of subject 16's locomotion,
asked to stop, the paper's field settled at 0.7 m/s and never ran.  So a task that follows speed
has two more actions (Speed Actions, ``Database.reach``): blend in the captured state nearest to
the character's moving 0.5 m/s slower, or faster (found with the root's speed weighing 6 per m/s),
at weight 3 against the neighbours' 1, pulling the pose toward that state's successor by a quarter
a frame, as a motion graph blends into another clip.  The neighbours keep the paper's weight of
speed (0.5, Speed in Neighbours), which keeps the poses near capture.  With no task the value
function is one of keeping moving (``GridTask`` "none"), or, with its speed at 0, there is none
and the passive action (the similarity weights themselves) plays, as in the paper.  The frame it plays is the step: engine-made frames,
so Drive, Play Trace, Bake and certification play it like any engine.

A push (``push``) is a disturbance the memory carries: a velocity added to the root and turned
into a tilt of the joints from the root to the chest every frame, dying away in a few tenths of
a second, while the field (choosing neighbours of the disturbed state) carries the character back
into the data.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ... import fmath, quat
from ...body import Body
from ...errors import MotionctlError
from ...jobs import check_stop, progress_range
from ...rootframe import to_local, wrap
from ...play.session import State
from ...play.commands import DEFAULT_SPEED, Command
from ...tags import ACTIONS, has
from ...settings import setting
from ...play.synth import Frames, Step, frame_table
from ..base import MAX_SPEED, Model, clips_of, fingerprint, working_set
from ..schema import Array, Items, Num, Table
from .states import ROOT_WEIGHT, Database, States, velocity_between
from ...play.tasks import TASK_CHOICES, GridTask, speed_samples
from .values import Anchors, transitions, value_iteration

TIE = 1e-6  # relative: action values closer than this are equal (the first wins)
PUSH_TILT = 1.0  # rad/s of upper-body tilt per m/s of push, spread over the root-to-chest chain
PUSH_DECAY = 0.3  # s: time constant of a push's disturbance
PUSH_REST = 0.02  # m/s: a disturbance below this has ended
CERTIFY_BUCKET = 0.5  # s: certification's entry states are the captured clips' half-seconds
TURN_COST = 1.0  # reward lost per radian of Turn Warp added to a frame (one frame's heading error)
SPEED_HOLD = 3.0  # s: how long a player holds a speed, on average, for the values' look ahead
MAX_STATES = 100_000_000  # motion states one field may say it was trained on
SMOOTH = 0.05  # s: time constant of the shown pose's tracking (``track``): at 30 fps half the way each frame


@dataclass
class FieldSettings:
    """The field (neighbours, drift), the task and its value function."""

    task: str = setting("direction", "Task", "What the character's choices aim for", choices=TASK_CHOICES,
                        group="Task")
    line_weight: float = setting(0.5, "Line Weight", "Line task: reward lost per metre off the line (per "
                                 "radian off its direction it is 1)", min=0.0, max=10.0, group="Task")
    speed_samples: int = setting(5, "Speed Samples", "Direction task: the asked speeds its values know, from "
                                 "standing to the capture's fastest (a faster or slower command gets the nearest "
                                 "it can do); 0: speed is not followed (the paper's task, with Keep Moving)",
                                 min=0, max=12, group="Task")
    speed_weight: float = setting(1.0, "Speed Weight", "Direction task with speeds: reward lost per m/s off the "
                                  "asked speed (per radian off the direction it is 1)", min=0.0, max=10.0,
                                  group="Task")
    keep_moving: float = setting(0.5, "Keep Moving", "The choices avoid moving slower than this (m/s), so the "
                                 "character does not settle into standing; 0 with no task: the pure passive flow "
                                 "(a direction task that follows speed has no need: standing is asked for)",
                                 min=0.0, max=5.0, unit="VELOCITY", group="Task")
    keep_moving_on_task: bool = setting(True, "Keep Moving on Task", "Direction and line tasks too: their reward "
                                        "also falls below the Keep Moving speed (else the line task can settle "
                                        "into a stop short of the line)", group="Task")
    turn_warp: float = setting(np.radians(90.0), "Turn Warp", "A task with a heading: each frame may also "
                               "turn the root by up to this much per second beyond what its neighbours turn "
                               "(the graph's Look Ahead warps its clips so); 0: the paper's field, which turns "
                               "only as its neighbours do", min=0.0, max=np.pi, unit="ROTATION", group="Task")
    k: int = setting(6, "Neighbours", "Captured states blended every frame (k); also the number of actions",
                     min=2, max=64, group="Field")
    velocity_weight: float = setting(ROOT_WEIGHT, "Speed in Neighbours", "Weight of the root's speed (per m/s) "
                                     "beside the pose in the distance between motion states (higher: neighbours "
                                     "nearer the character's speed; lower: poses nearer the capture; Speed Actions "
                                     "change speed)",
                                     min=0.0, max=20.0, group="Field")
    speed_actions: float = setting(0.5, "Speed Actions", "Direction task with speeds: two more actions, each "
                                   "blending in the captured state nearest to the character's moving this much "
                                   "slower or faster (m/s), so a walk can reach the capture's stops and runs; "
                                   "0: the paper's k actions", min=0.0, max=3.0, unit="VELOCITY", group="Field")
    delta: float = setting(0.03, "Drift Correction", "Share of the way pulled toward the nearest captured state "
                           "every frame (δ)", min=0.0, max=1.0, subtype="FACTOR", group="Field")
    mirror: bool = setting(True, "Mirror Clips", "Add left/right mirrored clips (turns both ways)", group="Field")
    fps: float = setting(30.0, "Rate", "Frames per second of the field's states", min=10.0, max=120.0,
                         group="Field", ui=False)
    compression: int = setting(1, "Anchor Spacing", "Store values every N captured frames and interpolate "
                               "between (temporal compression: smaller files, slower answers)", min=1, max=120,
                               group="Learning")
    discount: float = setting(0.99, "Discount", "Weight of the future per frame (γ)", min=0.0, max=0.999,
                              group="Learning")
    tolerance: float = setting(0.01, "Tolerance", "Value iteration stops when a sweep changes no value by more",
                               min=1e-6, max=10.0, group="Learning", ui=False)
    max_sweeps: int = setting(3000, "Max Sweeps", "Value iteration stops after this many sweeps", min=1,
                              max=100000, group="Learning", ui=False)


@dataclass(eq=False)
class FieldMemory:
    """The character's motion state (``States`` of one) and its neighbours [k] and weights [k]."""

    state: States
    nb: np.ndarray
    w: np.ndarray
    disturbance: np.ndarray = field(default_factory=lambda: np.zeros(2))  # a push still acting (m/s)
    shown: tuple | None = None  # the pose shown and its velocity (``track``); None: none shown yet

    def __eq__(self, other) -> bool:
        if not isinstance(other, FieldMemory):
            return NotImplemented
        a, b = self.state, other.state
        return all(np.array_equal(x, y) for x, y in ((a.rot, b.rot), (a.height, b.height), (a.motion, b.motion),
                                                     (a.lift, b.lift), (a.turn, b.turn), (self.nb, other.nb),
                                                     (self.w, other.w), (self.disturbance, other.disturbance))) \
            and (self.shown is None) == (other.shown is None) \
            and (self.shown is None or all(np.array_equal(x, y) for x, y in zip(self.shown, other.shown)))


class FieldModel(Model):
    """A motion field and its value function (see the module docstring)."""

    engine = "field"
    Settings = FieldSettings
    schema = {"values": Array("f", 2, optional=True)}
    bytes_per_second = 64 << 10  # 21 KB per second of capture at the defaults (5 speeds x 18 headings per state)
    header = Table({"n_states": Num(1, MAX_STATES, whole=True),
                    "speeds": Items(Num(0.0, MAX_SPEED), 0, 64, rising=True)}, absent=("speeds",))

    def __init__(self, settings: FieldSettings, summary, clip_names, fps, heading_smooth, values, n_states: int,
                 db: Database | None = None, speeds=()):
        super().__init__(settings, summary, clip_names, fps, heading_smooth)
        self.values = values
        self.n_states = int(n_states)
        self.speeds = tuple(float(v) for v in speeds)  # m/s the value function knows (direction task)
        self.task = task_of(settings, self.speeds)
        self.decision_rate = float(fps)
        self.typical_speed = float(self.info.get("typical_speed", 1.3))
        self.db = None
        self.anchors = None
        if db is not None:
            self._attach(db)

    def _attach(self, db: Database) -> None:
        if db.n != self.n_states:
            raise MotionctlError(f"the clips give {db.n} motion states, the field was trained on {self.n_states}: "
                                 "train it again on these clips")
        self.db = db
        self.anchors = Anchors.every(db.clip, db.frame, self.settings.compression)
        self.push_chain = push_chain(db.skeleton)
        if self.values is not None and len(self.values) != self.anchors.n:
            raise MotionctlError("the stored values do not match the clips' anchors: train the field again")

    # --- storage

    def arrays(self):
        meta = {"n_states": self.n_states, "speeds": list(self.speeds)}
        return meta, ({"values": self.values} if self.values is not None else {})

    @classmethod
    def from_archive(cls, base, meta, z):
        values = np.asarray(z["values"], dtype=np.float32) if "values" in z else None
        return cls(base["settings"], base["summary"], base["clip_names"], base["fps"], base["heading_smooth"], values,
                   meta["n_states"], speeds=meta.get("speeds", ()))

    def check(self) -> None:
        """Stored values hold one value per task sample (the task its settings and speeds make),
        and at most one row per motion state (anchors are some of the states)."""
        if self.values is not None and (self.values.ndim != 2 or self.values.shape[1] != self.task.size):
            raise MotionctlError(f"its values have {self.values.shape[-1]} task samples where its task has "
                                 f"{self.task.size}")
        if self.values is not None and len(self.values) > self.n_states:
            raise MotionctlError(f"its values hold {len(self.values)} anchors, more than its header's "
                                 f"'model.n_states' ({self.n_states} motion states)")

    # --- playing

    def on_bind(self, table):
        if self.db is None or self.db.n != table.n_frames:
            self._attach(Database.build(table, self.settings.velocity_weight, reach_step(self.settings)))

    def _need_db(self) -> Database:
        if self.db is None:
            raise MotionctlError("the field plays on no clips yet: bind it to its frame table (Model.play(clips))")
        return self.db

    @property
    def goals(self) -> tuple:
        return ("line",) if self.settings.task == "line" else ()

    def memory_of(self, state: States) -> FieldMemory:
        """Memory for a character in motion state ``state`` (one state; any pose, in the data or not)."""
        db = self._need_db()
        if len(state) != 1 or not state.is_finite():
            raise MotionctlError("a motion state must be one finite state")
        nb, w = db.with_reach(state, *db.neighbours(state, self.settings.k))
        return FieldMemory(state.copy(), nb[0], w[0])

    def memory_at(self, i: int) -> FieldMemory:
        """Memory at database state ``i``."""
        return self.memory_of(self._need_db().x.take([int(i)]))

    def memory_from_poses(self, rot0, height0, rot1, height1, motion) -> FieldMemory:
        """Memory from two successive poses (rot [J, 4] with the root's relative to the heading,
        root height) and the root motion between them (dx, dy, dyaw): any pose, e.g. a clip the
        field never saw."""
        m, lift, turn = velocity_between(np.asarray(rot0, float)[None], np.atleast_1d(height0),
                                         np.asarray(rot1, float)[None], np.atleast_1d(height1),
                                         np.asarray(motion, float).reshape(1, 3))
        return self.memory_of(States(quat.normalize(np.asarray(rot0, float))[None], np.atleast_1d(
            np.asarray(height0, float)), m, lift, turn))

    def start(self, table, frame: int):
        """Memory at table row ``frame`` (a clip's last two frames: its last state)."""
        db = self._need_db()
        i = int(np.searchsorted(db.row, frame, side="right") - 1)
        return self.memory_at(max(i, 0))

    def memory_key(self, memory):
        """The clip and half-second of the nearest captured state: certification takes macro-steps
        from states with one key as the same (a field's states are continuous, so keyed by the
        nearest state alone its macro-steps' ends almost never meet an explored entry, and only
        walking straight on closed into a graph: bench/results/field_certify.md)."""
        db = self._need_db()
        i = int(memory.nb[0])
        return int(db.clip[i]), int(db.frame[i]) // max(1, round(CERTIFY_BUCKET * db.fps))

    def task_state(self, state: State, command: Command) -> np.ndarray:
        """T for the character: θ_c from the command's desired heading (or its line's direction)
        and, for the line task, the signed distance to the line (0 without a line), or, for a
        direction task that follows speed, the asked speed (per frame; the stick's, or the
        command's along its heading: 0 asks to stand)."""
        if self.settings.task == "none":
            return np.zeros(1)
        line = getattr(command, "line", None)
        if self.settings.task == "line" and line is not None:
            line = np.asarray(line, dtype=float)
            d = float(to_local(state.ground - line[:2], line[2])[0])
            return np.array([float(wrap(line[2] - state.yaw)), d])
        # a heading as it is now, even a turning stick's: the field decides every frame
        th = float(wrap((command.heading if command.heading is not None else command.desired_heading(state.yaw))
                        - state.yaw))
        if self.task.speeds:
            return np.array([th, command.asked_speed(state.yaw) / self.fps])
        return np.array([th, 0.0]) if self.settings.task == "line" else np.array([th])

    def q_values(self, memory: FieldMemory, t: np.ndarray):
        """(Q [k, W], next states, root motion [k, W, 3], next neighbours [k, k], weights [k, k]) of
        every action from ``memory`` at task state ``t``, each with every turn of ``turns`` (W)."""
        db, s = self._need_db(), self.settings
        nxt, mo, nb2, w2 = db.play_actions(memory.state, memory.nb[None], memory.w[None], s.delta, s.k)
        mo = mo[:, None, :] + np.stack([np.zeros_like(self.turns), np.zeros_like(self.turns), self.turns], axis=-1)
        t2 = self.task.step(t[None, None, :], mo)
        v = np.einsum("kn,kng->kg", w2, self.anchors.values_at(self.values, nb2))
        future = self.task.interpolate(np.broadcast_to(v[:, None, :], mo.shape[:2] + v.shape[1:]), t2)
        q = self.task.reward(t2, mo) - TURN_COST * np.abs(self.turns) + s.discount * future
        return q, nxt, mo, nb2, w2

    @property
    def turns(self) -> np.ndarray:
        """[W] the root turns (rad per frame) an action may add: none, and ± Turn Warp (a task
        with a heading only)."""
        w = self.settings.turn_warp / self.fps
        return np.array([0.0, -w, w]) if w > 0 and self.task is not None and self.task.name != "none" else np.zeros(1)

    def first_memory(self, command: Command) -> FieldMemory:
        """The field's own start for a first command: the captured state whose root velocity is
        nearest the command's (not the first state: a library's first clip may be anything).  A
        field that keeps moving never stands, so a command slower than Keep Moving starts it at a
        walk (``DEFAULT_SPEED`` ahead): started where a stop clip ends, it stood there for good.  So
        does one that follows speed: it reaches standing by stopping, where it can start again."""
        db = self._need_db()
        want = command.local_control(0.0)[:2] if command.heading is None else \
            np.array([0.0, command.speed if command.speed is not None else DEFAULT_SPEED])
        if self.task is not None and np.hypot(*want) < self.settings.keep_moving:
            want = np.array([0.0, DEFAULT_SPEED])
        v = db.x.motion[:, :2] * db.fps
        cost = np.hypot(*(v - want).T)
        return self.memory_at(int(np.argmin(cost)))

    def decide(self, state: State, command: Command):
        """One frame: the action with the best reward plus value (the passive one with no task)."""
        db, s = self._need_db(), self.settings
        memory = state.memory if state.memory is not None else self.first_memory(command)
        if self.task is None or self.values is None:
            nxt, mo, nb2, w2 = db.integrate(memory.state, memory.nb[None], memory.w[None], s.delta, s.k)
            b = 0
        else:
            q, nxt, mo, nb2, w2 = self.q_values(memory, self.task_state(state, command))
            top = q.max()
            b, turn = divmod(int(np.argmax(q.ravel() >= top - TIE * (1.0 + abs(top)))), q.shape[1])
            mo = mo[:, turn]
        chosen, motion = nxt.take([b]), mo[b].astype(float)
        disturbance = memory.disturbance
        if np.any(disturbance):
            disturbance = self._disturb(chosen, motion, disturbance)
            nb_b, w_b = db.neighbours(chosen, s.k)
            nb2, w2, b = nb_b, w_b, 0
        shown = track(memory.shown, chosen.rot[0].astype(float), float(chosen.height[0]), db.fps)
        frames = Frames(shown[0][None], np.array([shown[1]]), motion[None], db.planted(nb2[b][None], w2[b][None]))
        nb_next, w_next = db.with_reach(chosen, nb2[b][None], w2[b][None])
        return Step(frames=frames), FieldMemory(chosen, nb_next[0], w_next[0], disturbance, shown)

    def push(self, memory: FieldMemory, impulse) -> FieldMemory:
        """The memory after a push: ``impulse`` [2] (m/s, in the character's frame: x right,
        y forward) joins the memory's disturbance, which every following frame adds to the root's
        motion and turns into a tilt of the chain from the root to the chest, decaying with a time
        constant of PUSH_DECAY s; the state's velocity shows it at once, so the neighbours (and the
        flow back into the data) are those of the disturbed motion."""
        impulse = np.asarray(impulse, dtype=float).reshape(2)
        st = memory.state.copy()
        st.motion = st.motion.copy()
        st.motion[0, :2] += impulse / self._need_db().fps
        pushed = self.memory_of(st)
        pushed.disturbance = memory.disturbance + impulse
        return pushed

    def _disturb(self, state: States, motion: np.ndarray, disturbance: np.ndarray) -> np.ndarray:
        """Apply one frame of a push's disturbance to ``state`` (one state, in place: its root
        motion and the root-to-chest tilt) and ``motion`` [3]; returns the decayed disturbance."""
        db = self._need_db()
        speed = float(np.hypot(*disturbance))
        if speed < PUSH_REST:
            return np.zeros(2)
        motion[:2] += disturbance / db.fps
        state.motion[0, :2] += disturbance / db.fps
        chain = self.push_chain
        axis = np.cross([0.0, 0.0, 1.0], [disturbance[0] / speed, disturbance[1] / speed, 0.0])
        angle = PUSH_TILT * speed / db.fps / len(chain)
        rot = state.rot[0]
        parents = db.skeleton.parents
        glob = {}
        for j in chain:  # root first: each joint's frame from its parent's
            parent_rot = glob.get(int(parents[j]), quat.identity()) if j else quat.identity()
            local_axis = quat.rotate(quat.conj(parent_rot), axis)
            rot[j] = quat.normalize(quat.mul(quat.from_axis_angle(local_axis, angle), rot[j]))
            glob[j] = quat.mul(parent_rot, rot[j])
        return disturbance * fmath.exp(-1.0 / (db.fps * PUSH_DECAY))

    def picture(self, width: int = 180, height: int = 120):
        """(RGBA [height, width, 4] rows bottom-up, caption): the mean value over the anchors as a
        picture: over the heading error (direction task, an area plot) or over heading error x
        line distance (line task, a heat map); None for a passive field."""
        if self.task is None or self.values is None or self.task.name == "none":
            return None
        _, v = self.value_map()
        th = np.linspace(-np.pi, np.pi, width)
        lo, hi = float(v.min()), float(v.max())
        scale = max(hi - lo, 1e-9)
        if self.task.name == "direction":
            t = th[:, None] if self.task.n == 1 else np.column_stack((th, np.full(width, self.typical_speed / self.fps)))
            level = (self.task.interpolate(np.broadcast_to(v, (width, v.size)), t) - lo) / scale
            rows = (np.arange(height)[:, None] + 0.5) / height
            inside = rows <= 0.1 + 0.9 * level[None, :]
            rgba = np.zeros((height, width, 4), dtype=np.float32)
            rgba[..., 3] = 1.0
            rgba[inside] = (0.95, 0.65, 0.2, 1.0)
            rgba[~inside] = (0.08, 0.08, 0.1, 1.0)
            return rgba, "mean value over heading error (x: -180° to 180°; higher is better)" + (
                f" at {self.typical_speed:.1f} m/s" if self.task.n == 2 else "")
        d = np.linspace(-2.0, 2.0, height)
        t = np.stack(np.broadcast_arrays(th[None, :], d[:, None]), axis=-1)  # [height, width, 2]
        level = (self.task.interpolate(np.broadcast_to(v, (height, width, v.size)), t) - lo) / scale
        rgba = np.empty((height, width, 4), dtype=np.float32)
        rgba[..., 0] = level
        rgba[..., 1] = level**2 * 0.85
        rgba[..., 2] = 0.35 * (1 - level)
        rgba[..., 3] = 1.0
        return rgba, "mean value: x heading error -180° to 180°, y distance to the line -2 to 2 m (bright: better)"

    def dead_ends(self) -> np.ndarray:
        """[S] bool: database states from which a passive field cannot keep moving (most of their
        discounted future is spent below the Keep Moving speed)."""
        if self.task is None or self.task.name != "none":
            raise MotionctlError("only a passive field that keeps moving knows its dead ends")
        db = self._need_db()
        v = self.anchors.values_at(self.values, np.arange(db.n))[:, 0]
        return v < -0.5 / max(1.0 - self.settings.discount, 1e-9)

    def value_map(self) -> tuple[np.ndarray, np.ndarray]:
        """(task grid [G, n], mean value over the anchors [G]): the value function as a picture."""
        if self.task is None or self.values is None:
            raise MotionctlError("a passive field has no value function")
        return self.task.grid(), self.values.mean(axis=0)


def track(shown: tuple | None, rot: np.ndarray, height: float, fps: float) -> tuple:
    """The pose to show (local rotations [J, 4], root height) and its velocity (rotation vectors
    [J, 3] and m per frame) after the field's next state ``rot``/``height``: an alpha-beta tracker
    (constant velocity; alpha from ``SMOOTH``, beta = alpha^2 / (2 - alpha), critically damped).
    The field blends a new set of neighbours every frame and its joints' velocities jitter from one
    frame to the next (measured on the mix's 0.6 rad/s turn: the largest joint-velocity change p90
    2.3 m/s a frame, the capture 1.4); the tracker keeps the field's pose, within a frame or two, and
    steadies its velocity.  None before: the state itself."""
    if shown is None:
        return rot.copy(), height, np.zeros(rot.shape[:-1] + (3,)), 0.0
    y, h, v, hv = shown
    a = 1.0 - float(fmath.exp(-1.0 / (fps * SMOOTH)))
    b = a * a / (2.0 - a)
    p = quat.normalize(quat.mul(quat.exp(v), y))
    r = quat.log(quat.mul(rot, quat.conj(p)))  # the shorter way round
    hr = height - (h + hv)
    return quat.normalize(quat.mul(quat.exp(a * r), p)), h + hv + a * hr, v + b * r, hv + b * hr


def task_of(settings: FieldSettings, speeds=()) -> GridTask | None:
    """The task whose value function the settings ask for (None: the pure passive flow); a
    direction task follows the asked speed when ``speeds`` (m/s, ``speed_samples``) are given, and
    then has no Keep Moving term (the speed term asks for moving, or for standing)."""
    if settings.task == "none" and settings.keep_moving <= 0:
        return None
    if settings.task == "direction" and len(speeds) >= 2:
        return GridTask("direction", settings.line_weight, 0.0, tuple(float(v) / settings.fps for v in speeds),
                        settings.speed_weight * settings.fps, 1.0 / (SPEED_HOLD * settings.fps))
    keep = settings.keep_moving if settings.task == "none" or settings.keep_moving_on_task else 0.0
    return GridTask(settings.task, settings.line_weight, keep / settings.fps)


def reach_step(settings: FieldSettings) -> float:
    """m/s of the speed actions (``Database.reach``): a direction task that follows speed only."""
    follows = settings.task == "direction" and settings.speed_samples >= 2
    return float(settings.speed_actions) if follows else 0.0


def push_chain(skeleton) -> list:
    """Joints from the root up to the chest (3/4 of the chain from the root to the head, or where no
    joint is named head the highest at rest), root first: what a push tips."""
    top = Body.of(skeleton).head
    chain = [int(np.argmax(skeleton.rest_positions()[:, 2])) if top is None else int(top)]
    while chain[-1] != 0:
        chain.append(int(skeleton.parents[chain[-1]]))
    chain = chain[::-1]
    return chain[:max(1, round(0.75 * len(chain)))]


def fit(library, settings: FieldSettings | None = None, *, progress=None, should_stop=None,
        cache: dict | None = None) -> FieldModel:
    """Learn a motion field on ``library``'s clips: the database, the transition cache (reused
    from ``cache`` when only the task changed) and the value function."""
    s = settings or FieldSettings()
    if progress is not None:
        progress(0.0, "motion states of the clips")
    clips = clips_of(library)
    plain = [c for c in clips if not has(c.tags, ACTIONS)]
    left_out = [c.name for c in clips if has(c.tags, ACTIONS)] if plain else []
    clips = plain or clips
    work = working_set(clips, s.fps, s.mirror)
    names = [c.name for c in work]
    table = frame_table(work, work[0].skeleton, 0.2)
    db = Database.build(table, s.velocity_weight, reach_step(s))
    key = fingerprint(work)
    summary = {"task": s.task, "states": db.n, "clips": len(clips), "left_out": left_out,
               "seconds_of_capture": float(db.n / s.fps),
               "feature_dims": int(db.feats.shape[1]), "search_dims": int(db.search.basis.shape[1]),
               "typical_speed": float(np.median(np.hypot(db.x.motion[:, 0], db.x.motion[:, 1])) * s.fps)}
    values = None
    ground = np.hypot(db.x.motion[:, 0], db.x.motion[:, 1]) * s.fps
    speeds = speed_samples(ground, s.speed_samples) if s.task == "direction" else np.zeros(0)
    task = task_of(s, speeds)
    if task is not None:
        anchors = Anchors.every(db.clip, db.frame, s.compression)
        ckey = ("field", key, s.k, s.delta, s.compression, s.velocity_weight, reach_step(s))
        tc = cache.get(ckey) if cache is not None else None
        reused = tc is not None
        if tc is None:
            check_stop(should_stop, "motion field")
            tc = transitions(db, anchors.rows, s.k, s.delta,
                             progress_range(progress, 0.0, CACHE_SHARE), should_stop)
            if cache is not None:
                cache.clear()
                cache[ckey] = tc
        learned = value_iteration(task, tc, anchors, db.n, s.discount, s.tolerance, s.max_sweeps,
                                  progress_range(progress, 0.0 if reused else CACHE_SHARE, 1.0), should_stop)
        values = learned.values
        summary.update({"anchors": anchors.n, "sweeps": learned.sweeps, "residual": learned.residuals[-1],
                        "cache_seconds": 0.0 if reused else tc.seconds, "learn_seconds": learned.seconds,
                        "value_bytes": int(values.nbytes), "grid": list(task.shape),
                        "speeds": [round(float(v), 3) for v in speeds]})
    model = FieldModel(s, summary, names, s.fps, 0.2, values, db.n, db, speeds=speeds)
    model.remember(work, key)
    if task is not None and task.name == "none":
        dead = model.dead_ends()
        model.info.update({"dead_ends": int(dead.sum()),
                           "dead_end_clips": sorted({table.names[c] for c in np.unique(db.clip[dead])})})
    if progress is not None:
        progress(1.0, f"done: {db.n} motion states" + (f", {summary['sweeps']} sweeps" if "sweeps" in summary else ""))
    return model


CACHE_SHARE = 0.3  # of the job: the motion states and their transition cache; value iteration the rest


__all__ = ["FieldMemory", "FieldModel", "FieldSettings", "fit"]
