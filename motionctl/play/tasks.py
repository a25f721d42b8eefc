"""Tasks: what a controller's choices aim for, one protocol for every engine (``Task``).

A task is the continuous part of the state, x = (x_1..x_n): what the character must achieve
relative to itself.  Planning's tasks (paper 001: navigation, reach, guidance), the motion field's
and the look-ahead graph's tasks on a grid (paper 002: ``GridTask``) and active learning's task
inputs (``engines.active.tasks``, which subclass ``Task`` for its bounds and samples) all follow it.  Playing a clip (or a blend of clips) moves and turns the character by
``dx = (dx, dy, dyaw)`` (metres to the right and forward in the character's frame at the clip's
start, heading change in radians, + = left); the task says how that changes x, what each state is
worth, when the task is over, and where random starts come from.  Everything is vectorised and
broadcasts over leading axes: x is [..., n], dx is [..., 3].
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..rootframe import to_local, wrap


def to_new_frame(points: np.ndarray, dx: np.ndarray) -> np.ndarray:
    """Ground points [..., 2] (x right, y forward) seen from the character after it moved by
    dx [..., 3] (translation in its old frame, then a turn by dyaw); shapes broadcast."""
    return to_local(points - dx[..., :2], dx[..., 2])


class Task:
    """The protocol (and base class): ``name``, the state's ``names`` (its dimension ``n``), the box
    starts and values come from (``bounds``), random states (``sample``), how a move changes the
    state (``apply``), how it looks to the planner (``in_view``), its ``reward`` and when it is over
    (``terminal``).  Subclasses (often dataclasses) set ``names`` and implement what they need."""

    name = "task"
    names = ()
    sampling = 1  # trajectories per iteration, as a multiple of planning's Trajectories setting

    @property
    def n(self) -> int:
        return len(self.names)

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """The training box: where starts are sampled and the value grid lies.  A state is never
        clamped into it (a reach target beyond it stays beyond; the grid reads its edge cell)."""
        raise NotImplementedError

    def apply(self, x: np.ndarray, dx: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def in_view(self, x: np.ndarray) -> np.ndarray:
        """The state as the planner sees it when it decides: itself, unless a target or gate lies
        beyond the training box, where values are unknown (the grid's edge reads the same whether
        it is 5 or 50 m away, so no step looks like progress).  Then it is seen at the box's edge
        in its own direction, re-projected at every decision while the true state goes on: a
        carrot, never a change of the state itself."""
        return x

    def reward(self, x: np.ndarray, action_kind: np.ndarray | None = None, reach: np.ndarray | None = None) -> np.ndarray:
        """State reward R_s of states x [N, n].  What else a task reads is its own: planning's, the
        ``action_kind`` (0 locomotion, 1 reach/pick) and hand ``reach`` points [N, 2] of the clips
        that reached them; a ``GridTask``, the frame's root motion."""
        raise NotImplementedError

    def terminal(self, x: np.ndarray, action_kind=None, reach=None) -> np.ndarray:
        return np.zeros(x.shape[:-1], dtype=bool)

    def step_reward(self, x: np.ndarray, dx: np.ndarray) -> np.ndarray | float:
        """A reward of the step itself from state x [..., n] (``dx`` [..., 3 or 4]: a fourth column
        is the step's ground speed, m/s); most tasks have none."""
        return 0.0

    def sample(self, rng: np.random.Generator, count: int) -> np.ndarray:
        low, high = self.bounds()
        return rng.uniform(low, high, (count, self.n))



def into_box(p: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """Points [..., 2] (their box low/high [2] holds the origin) scaled towards the origin until inside."""
    limit = np.where(p > 0, high, low)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(np.abs(p) > np.abs(limit), limit / p, 1.0)
    return p * ratio.min(axis=-1, keepdims=True)


@dataclass
class NavigationTask(Task):
    """Walk in a desired direction: θ = deviation of the heading from it; reward -γ|θ| (eq. 10).
    With ``speeds`` (the slowest and fastest asked speed, m/s) the state also holds the asked speed
    v, which steps leave as it is, and each step earns -w|s - v| for its ground speed s (the fourth
    column of its dx): our extension, the paper's task knows only the heading."""

    gamma: float = 1.0
    speeds: tuple = ()
    speed_weight: float = 1.0
    name = "navigation"

    @property
    def names(self) -> tuple:
        return ("theta", "speed") if len(self.speeds) else ("theta",)

    def bounds(self):
        if len(self.speeds):
            return np.array([-np.pi, self.speeds[0]]), np.array([np.pi, self.speeds[-1]])
        return np.array([-np.pi]), np.array([np.pi])

    def apply(self, x, dx):
        th = wrap(x[..., :1] + dx[..., 2:3])
        if not len(self.speeds):
            return th
        return np.concatenate(np.broadcast_arrays(th, x[..., 1:2]), axis=-1)

    def reward(self, x, action_kind=None, reach=None):
        return -self.gamma * np.abs(x[..., 0])

    def step_reward(self, x, dx):
        if not len(self.speeds) or dx.shape[-1] < 4:
            return 0.0
        return -self.speed_weight * np.abs(dx[..., 3] - x[..., 1])


@dataclass
class ReachTask(Task):
    """Reach an object on the ground at (u, v) in the character's frame (u right, v forward):
    reward λ when a reach clip ends with its hand's reach point within ``radius`` of the object
    (eq. 11), otherwise 0 — the case where a greedy controller fails completely."""

    lam: float = 10.0
    radius: float = 0.3
    extent: float = 5.0
    name = "reach"
    names: tuple = ("u", "v")

    def bounds(self):
        e = self.extent
        return np.array([-e, -e]), np.array([e, e])

    def apply(self, x, dx):
        return to_new_frame(x, dx)

    def in_view(self, x):
        low, high = self.bounds()
        return into_box(x, low, high)

    def reached(self, x, action_kind, reach):
        if action_kind is None or reach is None:
            return np.zeros(x.shape[:-1], dtype=bool)
        return (np.asarray(action_kind) == 1) & (np.linalg.norm(x - reach, axis=-1) < self.radius)

    def reward(self, x, action_kind=None, reach=None):
        return np.where(self.reached(x, action_kind, reach), self.lam, 0.0)

    def terminal(self, x, action_kind=None, reach=None):
        return self.reached(x, action_kind, reach)


@dataclass
class GuidanceTask(Task):
    """Walk through a gate: (θ, u, v) = the gate's orientation and centre in the character's frame
    (u right, v forward; θ = 0 when the gate faces the character).  Reward -λ near the walls,
    else -γ₁|θ| - γ₂ |lateral| / distance² (eq. 12, reading its v as the lateral offset of the
    gate centre and u as the distance ahead, so the penalty pulls towards the centre line as the
    character closes in); done once through the opening or after touching a wall.  Walls are
    ``clearance`` thick on each side of the gate line, more than the character's radius, so a
    step cannot jump through one unnoticed."""

    lam: float = 100.0
    gamma1: float = 1.0
    gamma2: float = 1.0
    half_width: float = 0.6  # half the opening
    wall: float = 3.0  # wall length on each side
    body: float = 0.25  # character radius
    clearance: float = 0.45  # half the wall zone's thickness (>= body + half a step)
    bonus: float = 0.0  # reward for passing through the opening (eq. 12 has none)
    reach: float = 7.0  # m: the training box's extent to the sides and behind
    name = "guidance"
    # The box is the full circle round the character: with the Trajectories that covered the
    # half-box in front, the trees saw too few gates close behind (after turning round on the way:
    # 62-85% success over seeds, a weak seed 62%; twice the trajectories: that seed 71%).
    sampling = 2
    names: tuple = ("theta", "u", "v")

    def bounds(self):
        """The training box: the gate in any direction around the character (θ over the full
        circle, its centre up to ``reach`` m to either side and behind, 8 m ahead).  A box of
        gates within ±90° in front (the first one) left a gate behind, or the character turned
        round on its way, outside anything the trees saw: 20% and 0% success there."""
        r = self.reach
        return np.array([-np.pi, -r, -r]), np.array([np.pi, r, 8.0])

    def apply(self, x, dx):
        pos = to_new_frame(x[..., 1:3], dx)
        return np.concatenate((wrap(x[..., :1] - dx[..., 2:3]), pos), axis=-1)

    def in_view(self, x):
        low, high = self.bounds()
        return np.concatenate((x[..., :1], into_box(x[..., 1:3], low[1:], high[1:])), axis=-1)

    def _in_gate_frame(self, x):
        """The character's position in the gate's frame (a: along the gate line, b: through it)."""
        c, s = np.cos(x[..., 0]), np.sin(x[..., 0])
        # Gate centre at (u, v); its line direction is (cos θ, sin θ) in the character frame.
        px, py = -x[..., 1], -x[..., 2]
        return c * px + s * py, -s * px + c * py

    def near_wall(self, x):
        a, b = self._in_gate_frame(x)
        on_wall = (np.abs(a) > self.half_width - self.body) & (np.abs(a) < self.half_width + self.wall)
        return on_wall & (np.abs(b) < self.clearance)

    def passed(self, x):
        a, b = self._in_gate_frame(x)
        return (b > self.clearance) & (np.abs(a) < self.half_width)

    def reward(self, x, action_kind=None, reach=None):
        lateral, ahead = x[..., 1], x[..., 2]
        r = -self.gamma1 * np.abs(x[..., 0]) - self.gamma2 * np.abs(lateral) / np.maximum(lateral**2 + ahead**2, 0.25)
        return np.where(self.near_wall(x), -self.lam, np.where(self.passed(x), r + self.bonus, r))

    def terminal(self, x, action_kind=None, reach=None):
        return self.passed(x) | self.near_wall(x)

    def sample(self, rng, count):
        """Random starts in front of the gate (at least 1 m before its line), not at a wall."""
        out = np.zeros((0, 3))
        while len(out) < count:
            x = super().sample(rng, 2 * count)
            _, b = self._in_gate_frame(x)
            out = np.concatenate((out, x[(b < -1.0) & ~self.near_wall(x)]))
        return out[:count]


TASKS = {"navigation": NavigationTask, "reach": ReachTask, "guidance": GuidanceTask}


TASK_CHOICES = (
    ("none", "Passive", "No task: the character meanders through the data, keeping moving"),
    ("direction", "Direction", "Walk in a desired direction (A/D or the mouse steer it while driving)"),
    ("line", "Line", "Walk along a line (an empty's position and facing while driving)"),
)
HEADINGS = 18
LINE_SAMPLES = 13
LINE_RANGE = 2.0  # m


@dataclass(frozen=True)
class GridTask(Task):
    """A task whose values live on a grid of task states (the motion field's, paper 002; the
    look-ahead graph's): the direction task's θ_c (desired minus facing direction, ``HEADINGS``
    samples over (-π, π], periodic) and, with ``speeds``, the asked speed v_c (sampled at
    ``speeds``, clamped beyond: the nearest it can do); the line task's (θ_c, d_L) with d_L the signed
    distance to the line (positive to its right, ``LINE_SAMPLES`` over ±``LINE_RANGE`` m, clamped
    beyond); or none.  One frame's root motion (dx, dy, dyaw) moves T (``apply``): θ_c' = θ_c - dyaw,
    d_L' = d_L + cos θ_c·dx + sin θ_c·dy, v_c' = v_c (the player's to change).  The reward of
    reaching T' is -|θ_c'| (direction), -|θ_c'| - w_L·|d_L'| (line), less w_v·|s - v_c| with speeds
    (s: the frame's root motion; paper 002's direction task has no speed: this is our extension), plus,
    with ``min_step``, -(1 - s/s_min) for s below s_min.  Speeds, ``min_step`` and ``speed_weight``
    are per frame (m, and reward per m)."""

    name: str
    line_weight: float = 0.5
    min_step: float = 0.0  # keeping moving: the root motion per frame (m) below which the reward falls
    speeds: tuple = ()  # direction task: asked speeds sampled (m per frame, ascending, at least 2); () none
    speed_weight: float = 0.0  # reward lost per m per frame off the asked speed
    speed_change: float = 0.0  # chance per frame that the player asks another speed (``expect``)

    def __post_init__(self):
        if self.speeds and (self.name != "direction" or len(self.speeds) < 2 or np.any(np.diff(self.speeds) <= 0)):
            raise ValueError("speeds: only the direction task samples them, at least 2, ascending")

    @property
    def shape(self) -> tuple:
        if self.name == "direction" and self.speeds:
            return (HEADINGS, len(self.speeds))
        return {"none": (1,), "direction": (HEADINGS,)}.get(self.name, (HEADINGS, LINE_SAMPLES))

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))

    @property
    def n(self) -> int:
        return len(self.shape)

    @property
    def n_corners(self) -> int:
        """Grid points an interpolation blends."""
        return 1 if self.name == "none" else 2 ** self.n

    @staticmethod
    def headings() -> np.ndarray:
        return -np.pi + (np.arange(HEADINGS) + 1) * (2 * np.pi / HEADINGS)

    @staticmethod
    def distances() -> np.ndarray:
        return np.linspace(-LINE_RANGE, LINE_RANGE, LINE_SAMPLES)

    def second(self) -> np.ndarray:
        """The samples of the second dimension: asked speeds or line distances."""
        return np.asarray(self.speeds, dtype=float) if self.name == "direction" else self.distances()

    def grid(self) -> np.ndarray:
        """[G, n] the task states values are stored at (row-major over ``shape``)."""
        if self.name == "none":
            return np.zeros((1, 1))
        if self.n == 1:
            return self.headings()[:, None]
        th, d = np.meshgrid(self.headings(), self.second(), indexing="ij")
        return np.column_stack((th.ravel(), d.ravel()))

    @property
    def names(self) -> tuple:
        if self.name == "direction" and self.speeds:
            return ("theta", "speed")
        return {"none": ("none",), "direction": ("theta",)}.get(self.name, ("theta", "distance"))

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        grid = self.grid()
        return grid.min(axis=0), grid.max(axis=0)

    def apply(self, x: np.ndarray, dx: np.ndarray) -> np.ndarray:
        """The protocol's ``apply``: T after root motion ``dx`` (``step``)."""
        return self.step(x, dx)

    def step(self, t: np.ndarray, motion: np.ndarray) -> np.ndarray:
        """T' [..., n] after a frame of root motion [..., 3] from T [..., n] (broadcasting)."""
        if self.name == "none":
            return np.broadcast_to(t, np.broadcast_shapes(t.shape, motion.shape[:-1] + (1,)))
        th = t[..., 0]
        out = [wrap(th - motion[..., 2])]
        if self.name == "line":
            out.append(t[..., 1] + np.cos(th) * motion[..., 0] + np.sin(th) * motion[..., 1])
        elif self.speeds:
            out.append(t[..., 1])
        return np.stack(np.broadcast_arrays(*out), axis=-1)

    def reward(self, t: np.ndarray, motion: np.ndarray) -> np.ndarray:
        """R of reaching task state T' [..., n] by a frame of root motion [..., 3] (broadcasting)."""
        moving = 0.0
        step = np.hypot(motion[..., 0], motion[..., 1])
        if self.min_step > 0:
            moving = -np.maximum(0.0, 1.0 - step / self.min_step)
        if self.name == "none":
            return np.broadcast_to(moving, t.shape[:-1])
        r = -np.abs(wrap(t[..., 0])) + moving
        if self.name == "line":
            r = r - self.line_weight * np.abs(t[..., 1])
        elif self.speeds:
            r = r - self.speed_weight * np.abs(step - t[..., 1])
        return r

    def corners(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Multilinear interpolation of task states T [..., n] on the grid: (flat grid index
        [..., c], weight [..., c]) with c = ``n_corners``: 1 (passive), 2 (direction) or 4 (line,
        direction with speeds)."""
        if self.name == "none":
            return np.zeros(t.shape[:-1] + (1,), dtype=np.int64), np.ones(t.shape[:-1] + (1,))
        u = (wrap(t[..., 0] - self.headings()[0]) % (2 * np.pi)) / (2 * np.pi / HEADINGS)
        i0 = np.floor(u).astype(np.int64) % HEADINGS
        f = u - np.floor(u)
        th_idx = np.stack((i0, (i0 + 1) % HEADINGS), axis=-1)
        th_w = np.stack((1 - f, f), axis=-1)
        if self.n == 1:
            return th_idx, th_w
        samples = self.second()
        m = len(samples)
        x = np.clip(t[..., 1], samples[0], samples[-1])
        j0 = np.clip(np.searchsorted(samples, x, side="right") - 1, 0, m - 2)
        g = (x - samples[j0]) / (samples[j0 + 1] - samples[j0])
        d_idx = np.stack((j0, j0 + 1), axis=-1)
        d_w = np.stack((1 - g, g), axis=-1)
        idx = th_idx[..., :, None] * m + d_idx[..., None, :]
        w = th_w[..., :, None] * d_w[..., None, :]
        return idx.reshape(idx.shape[:-2] + (4,)), w.reshape(w.shape[:-2] + (4,))

    def expect(self, values: np.ndarray) -> np.ndarray:
        """Values [..., G] as the future sees them when the player may ask another speed: with
        chance ``speed_change`` per frame, any of the sampled speeds.  So a state is worth what it
        leads to if the stick moves: a standing pose that no capture leaves (where a stop clip
        ends) is worth little even while standing is asked, since a walk asked later is lost."""
        if not self.speeds or self.speed_change <= 0:
            return values
        v = values.reshape(values.shape[:-1] + self.shape)
        mixed = (1.0 - self.speed_change) * v + self.speed_change * v.mean(axis=-1, keepdims=True)
        return mixed.reshape(values.shape).astype(values.dtype, copy=False)

    def interpolate(self, values: np.ndarray, t: np.ndarray) -> np.ndarray:
        """V at task states: ``values`` [..., G] and T [..., n] with the same leading shape."""
        idx, w = self.corners(t)
        return np.sum(np.take_along_axis(values, idx, -1) * w, axis=-1)


def speed_span(speeds: np.ndarray) -> tuple[float, float]:
    """(slow, fast) end of a capture's speeds [N]: p5 of the moving ones (over a quarter of the
    fast end) and p98 of all; (0, 0) for none."""
    speeds = np.asarray(speeds, dtype=float)
    if not len(speeds):
        return 0.0, 0.0
    top = float(np.quantile(speeds, 0.98))
    moving = speeds[speeds > 0.25 * top]
    return (float(np.quantile(moving, 0.05)) if len(moving) else top), top


def speed_samples(speeds: np.ndarray, count: int) -> np.ndarray:
    """``count`` asked speeds (ascending, in the units of ``speeds``) for a value function to know,
    from a capture's root speeds [N]: standing (0) and ``count`` - 1 from its slow end (p5 of the
    moving ones) to its fast end (p98), so the slowest and fastest it can do are on the grid and a
    command beyond them asks the nearest; [] with ``count`` < 2."""
    if count < 2 or not len(speeds):
        return np.zeros(0)
    low, top = speed_span(speeds)
    rest = np.linspace(low, top, count - 1) if count > 2 else np.array([top])
    return np.unique(np.concatenate(([0.0], rest[rest > 0])))


def make_task(name: str, **params) -> Task:
    """A task by name (navigation, reach, guidance) with its parameters."""
    if name not in TASKS:
        raise ValueError(f"task must be one of {sorted(TASKS)}, got {name!r}")
    return TASKS[name](**params)
