"""The planning controller as an engine (paper 001): ``fit`` trains it, ``PlanningController`` plays it.

The task state comes from the command each decision: the desired heading (and, when it follows
speed, the asked speed: navigation), a target point (reach) or a gate (guidance), seen from the
character.  Without a target or gate
the planner plans towards the point (or a gate across the path) three metres along the desired
heading, so every command drives every task.
"""

from __future__ import annotations

import numpy as np

from ...rootframe import facing_warp, to_world, wrap
from ...play.session import State
from ...play.commands import Command
from ...play.synth import Step
from ..base import MAX_CLIPS, MAX_FPS, MAX_SPEED, Model, check_pieces, clips_of
from ...errors import MotionctlError
from ...jobs import progress_range
from ..schema import Array, Cases, Items, Num, Plain, Table, Text
from .planner import Planner, rollout
from .training import PlannerSettings, train_planner

Settings = PlannerSettings
LOOKAHEAD = 3.0  # m: where an implied target or gate is placed along the desired heading
ROLLOUT_STEPS = 20


TURN_AHEAD = 1.0  # s: a turning stick asks to face where it turns the character in this time (a step and the next)

MAX_SEGMENTS = 1_000_000  # steps one planner may hold
MAX_CELLS = 4096  # cells of its value grid along one task number
_WHOLE = Num(0, MAX_SEGMENTS, whole=True)
# Each task's parameters (``play.tasks``: what ``make_task`` takes), in the ranges the settings give them.
TASK_PARAMS = {"navigation": {"gamma": Num(0.0, 100.0), "speeds": Items(Num(0.0, MAX_SPEED), 0, 2, rising=True),
                              "speed_weight": Num(0.0, 100.0)},
               "reach": {"lam": Num(0.0, 1000.0), "radius": Num(0.01, 5.0), "extent": Num(0.1, 100.0)},
               "guidance": {"lam": Num(0.0, 1e6), "gamma1": Num(0.0, 100.0), "gamma2": Num(0.0, 100.0),
                            "half_width": Num(0.1, 10.0), "wall": Num(0.0, 100.0), "body": Num(0.0, 5.0),
                            "clearance": Num(0.0, 5.0), "bonus": Num(0.0, 1000.0), "reach": Num(0.1, 100.0)}}


def planner_header(task: str) -> Table:
    """The planner's part of a header (``Planner.arrays``' meta) for ``task``."""
    return Table({"task": Text(), "task_params": Table(TASK_PARAMS[task], absent=tuple(TASK_PARAMS[task])),
                  "discount": Num(0.0, 1.0), "members": Items(Items(_WHOLE, 1), 1, MAX_SEGMENTS),
                  "segments": Table({"clip_names": Items(Text(empty=False), 1, MAX_CLIPS), "clip": Items(_WHOLE),
                                     "start": Items(_WHOLE), "end": Items(_WHOLE), "fps": Num(1.0, MAX_FPS)}),
                  "info": Table({}, others=Plain(), optional=True),
                  "grid_shape": Items(Num(1, MAX_CELLS, whole=True), 1, 3),
                  "value_kind": Items(Text(choices=("trees", "poly", "none")), 1, MAX_SEGMENTS)})


class PlanningController(Model):
    """A trained planner (``Planner``: groups of step segments and their value functions)."""

    engine = "planning"
    absent_settings = {"warp_rate": 0.0}  # a file saved before Warp Rate plays without it
    Settings = PlannerSettings
    schema = {"grid_low": Array("f", 1), "grid_high": Array("f", 1, like="grid_low"), "grid_values": Array("f", None),
              "kind": Array("i", 1, low=0), "transition": Array("f", 2), "g#_dx": Array("f", 2),
              "g#_reach": Array("f", 2), "g#_weights": Array("f", 2), "g#_poly": Array("f", None),
              "g#_tree_roots": Array("i", 1, low=0, high="len:g#_tree_left"),
              "g#_tree_left": Array("i", 1, low=-1, high="len:g#_tree_left", forward=True),
              "g#_tree_right": Array("i", 1, low=-1, high="len:g#_tree_left", forward=True, like="g#_tree_left"),
              "g#_tree_feature": Array("i", 1, low=0, high="len:grid_low", like="g#_tree_left"),
              "g#_tree_threshold": Array("f", 1, like="g#_tree_left"), "g#_tree_value": Array("f", 1, like="g#_tree_left")}
    bytes_per_second = 4 << 20  # 1.8 MB per second of capture at the defaults (a 128 x 128 value grid per group)
    header = Cases("task", {task: planner_header(task) for task in TASK_PARAMS})

    def __init__(self, settings, summary, clip_names, fps, heading_smooth, planner: Planner):
        super().__init__(settings, summary, clip_names, fps, heading_smooth)
        self.planner = planner
        seg = planner.segments
        duration = (np.asarray(seg["end"]) - np.asarray(seg["start"])) / float(seg["fps"])
        dist = np.linalg.norm(np.concatenate(planner.problem.dx)[:, :2], axis=1) if planner.problem.dx else np.zeros(1)
        self.decision_rate = float(1.0 / max(np.mean(duration), 1e-3))
        self.typical_speed = float(np.median(dist) * self.decision_rate) if len(dist) else 1.3

    @property
    def goals(self) -> tuple:
        return {"reach": ("target",), "guidance": ("gate",)}.get(self.planner.problem.task.name, ())

    def arrays(self):
        return self.planner.arrays()

    @classmethod
    def from_archive(cls, base, meta, z):
        return cls(base["settings"], base["summary"], base["clip_names"], base["fps"], base["heading_smooth"],
                   Planner.from_arrays(meta, z))

    def check(self) -> None:
        """The segments are whole-numbered pieces of clips, each group's members are segments and its
        blends weigh them (one weight per member, summing to 1); dx, reach and kind one per blend."""
        p, seg = self.planner, self.planner.segments
        cols = [np.asarray(seg.get(k, [])) for k in ("clip", "start", "end")]
        n = len(cols[0])
        if not all(c.dtype.kind in "iu" and c.shape == (n,) for c in cols) or n == 0 or cols[0].min() < 0 or \
                cols[1].min() < 0 or np.any(cols[2] <= cols[1]):
            raise MotionctlError("its segments are not pieces of clips (whole frame numbers, start before end)")
        groups = p.problem.n_groups
        if len(p.members) != groups or len(p.problem.kind) != groups or p.problem.transition.shape != (groups, groups):
            raise MotionctlError(f"its {len(p.members)} groups of members disagree with its {groups} groups of steps")
        for g, members in enumerate(p.members):
            m = np.asarray(members)
            w = p.problem.weights[g]
            if m.dtype.kind not in "iu" or m.ndim != 1 or not len(m) or m.min() < 0 or m.max() >= n:
                raise MotionctlError(f"group {g}'s members are not segments 0..{n - 1}")
            if w.ndim != 2 or w.shape[1] != len(m) or len(w) == 0 or np.any(w < 0) or \
                    np.any(np.abs(w.sum(axis=1) - 1) > 1e-6) or len(p.problem.dx[g]) != len(w) or \
                    len(p.problem.reach[g]) != len(w):
                raise MotionctlError(f"group {g}'s blends do not weigh its {len(m)} members")
            if p.problem.dx[g].shape[1:] != p.problem.dx[0].shape[1:]:
                raise MotionctlError(f"group {g}'s steps have {p.problem.dx[g].shape[1]} numbers, group 0's "
                                     f"{p.problem.dx[0].shape[1]}")
        grid, n = p.value.grid, p.problem.task.n
        if len(grid.low) != n or len(grid.shape) != n or grid.values.shape != (groups,) + tuple(grid.shape) or \
                not np.all(grid.high > grid.low):
            raise MotionctlError(f"its value grid {grid.values.shape} does not fit {groups} groups of a "
                                 f"{n}-number task")

    def on_bind(self, table) -> None:
        check_pieces(table, self.planner.segments["clip"], self.planner.segments["end"], "segments")

    def task_state(self, state: State, command: Command) -> np.ndarray:
        """The task's x for the character in ``state`` under ``command`` (see the module docstring)."""
        task = self.planner.problem.task.name
        desired = command.desired_heading(state.yaw, TURN_AHEAD)
        if task == "navigation":
            theta = float(wrap(state.yaw - desired))
            if self.planner.problem.task.n == 2:  # and the asked speed (the stick's, or along the heading)
                return np.array([theta, command.asked_speed(state.yaw)])
            return np.array([theta])
        ahead = state.ground + to_world(np.array([0.0, LOOKAHEAD]), desired)
        if task == "reach":
            return state.local(command.target if command.target is not None else ahead)
        gate = command.gate if command.gate is not None else np.array([ahead[0], ahead[1], desired])
        u, v = state.local(gate[:2])
        return np.array([float(wrap(gate[2] - state.yaw)), u, v])

    def start(self, table, frame: int):
        """The group whose first member's segment holds table row ``frame`` (else group 0)."""
        seg = self.planner.segments
        clip = int(np.searchsorted(table.first, frame, side="right") - 1)
        within = frame - table.first[clip]
        for g, members in enumerate(self.planner.members):
            i = members[0]
            if seg["clip"][i] == clip and seg["start"][i] <= within < seg["end"][i]:
                return g
        return 0

    def decide(self, state: State, command: Command):
        """The best group and blend for the task state the command gives (``task_state``); the memory is the
        group."""
        x = self.task_state(state, command)
        group = 0 if state.memory is None else int(state.memory)
        g, w, _, dx = self.planner.decide(group, x)
        members = np.array(self.planner.blend(g, w), dtype=float)
        return Step(members, edit=self._warp(x, dx, members)), g

    def _warp(self, x: np.ndarray, dx: np.ndarray, members: np.ndarray) -> np.ndarray | None:
        """Navigation: the facing turn (``Step.edit``) beyond the blend's own (``dx``'s yaw) that
        brings task state x's heading error θ (facing minus desired) to 0, at most Warp Rate over
        the step's length (its members' frames, weighted)."""
        rate = self.settings.warp_rate
        if self.planner.problem.task.name != "navigation" or rate <= 0:
            return None
        seconds = float(members[:, 2] @ members[:, 3] / max(members[:, 3].sum(), 1e-9)) / self.fps
        return facing_warp(-(x[0] + dx[2]), rate, seconds)


def task_measure(planner: Planner, steps: int = ROLLOUT_STEPS, starts: int = 300, seed: int = 0) -> dict:
    """The task's own figure from random starts: navigation (no end state) the mean heading error
    after ``steps`` decisions; reach and guidance the share done within them; both the reward per
    step."""
    rng = np.random.default_rng(seed)
    x = planner.problem.task.sample(rng, starts)
    g = rng.integers(0, planner.n_groups, starts)
    total, done, (gs, ks) = rollout(planner, x, g, steps)
    out = {"rollout_steps": steps, "reward_per_step": float(np.mean(total / np.maximum(done, 1)))}
    if planner.problem.task.name == "navigation":
        xs = np.array(x)
        for t in range(steps):  # replay the decisions to find where each start ended
            xs, _, _ = planner.step(xs, gs[t], ks[t])
        out["heading_error_deg"] = float(np.degrees(np.mean(np.abs(xs[:, 0]))))
    else:
        out["success"] = float(np.mean(done < steps))
    return out


def fit(library, settings: PlannerSettings | None = None, *, progress=None, should_stop=None,
        cache: dict | None = None) -> PlanningController:
    """Train a planning controller on the clips of ``library`` (``train_planner``), measured by
    rollouts from random starts."""
    s = settings or PlannerSettings()
    planner, fit_result, seg, groups = train_planner(clips_of(library), s, progress_range(progress, 0.0, TRAIN_SHARE),
                                                     should_stop)
    if progress is not None:
        progress(TRAIN_SHARE, "measuring the controller from random starts")
    summary = {"task": s.task, "segments": seg.n, "groups": groups.n, "samples": fit_result.samples,
               "iterations": fit_result.iterations, "seconds": fit_result.seconds,
               "residual": fit_result.residuals[-1] if fit_result.residuals else None}
    summary.update(task_measure(planner))
    model = PlanningController(s, summary, [c.name for c in seg.clips], seg.settings.fps, 0.2, planner)
    model.remember(seg.clips)
    if progress is not None:
        progress(1.0, f"done: {fit_result.iterations} iterations, {fit_result.samples} samples")
    return model


TRAIN_SHARE = 0.95  # of the job: training; the rollouts that measure it the rest (measured: 5-10%)


__all__ = ["PlanningController", "Settings", "fit", "task_measure"]
