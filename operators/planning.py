"""The planning engine (paper 001) in Blender: its training job and its live session.

Training uses the same background-job machinery as the fragment controller.  Live preview reads
the task state from the scene every decision: the desired direction steered with the keyboard
(navigation), a target empty (reach) or a gate empty (guidance), so moving them in the viewport
makes the character react.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..motionctl.fitted import FittedSettings, Planner, PlannerSettings, rollout, train_planner_to_file
from ..motionctl.fitted.segments import SegmentSettings
from ..motionctl.motion import Clip, MotionDatabase
from ..motionctl.synth import SynthState, frame_table, synthesize_blends
from ..motionctl.tasks import wrap
from .common import load_ticked_clips

TARGET_NAME = "motionctl_target"
GATE_NAME = "motionctl_gate"


@dataclass
class PlanningInputs:
    database: str
    clip_tags: dict
    settings: PlannerSettings
    out_path: str


def planner_settings(pg) -> PlannerSettings:
    params = {"navigation": {"gamma": pg.nav_gamma}, "reach": {"lam": pg.reach_reward, "radius": pg.reach_radius},
              "guidance": {"half_width": pg.gate_half_width}}[pg.task.lower()]
    return PlannerSettings(
        task=pg.task.lower(), task_params=params, parametric=pg.parametric,
        segments=SegmentSettings(group_size=pg.group_size, mirror=pg.mirror),
        fitted=FittedSettings(discount=pg.plan_discount, n_trees=pg.n_trees, iterations=pg.plan_iterations,
                              trajectories=pg.trajectories),
    )


def planning_job(inputs: PlanningInputs, progress=None, should_stop=None) -> dict:
    """Worker-thread job: train and save a planner, then measure it from random starts."""
    clips = load_ticked_clips(inputs.database, inputs.clip_tags)
    planner, fit, seg, groups = train_planner_to_file(clips, inputs.out_path, inputs.settings, progress, should_stop)
    rng = np.random.default_rng(0)
    x = planner.problem.task.sample(rng, 300)
    g = rng.integers(0, planner.n_groups, 300)
    total, done, _ = rollout(planner, x, g, 20)
    return {"path": inputs.out_path, "segments": seg.n, "groups": groups.n, "samples": fit.samples,
            "seconds": fit.seconds, "residual": fit.residuals[-1] if fit.residuals else float("nan"),
            "reward": float(total.mean()), "success": float((done < 20).mean()), "task": inputs.settings.task}


class PlanningSession:
    """Live playback of a planner: one decision whenever the current blend has played."""

    def __init__(self, planner: Planner, clips, task_state, trail: int = 600):
        """``clips``: the working-rate clips the planner's segments refer to (by name);
        ``task_state(ground [2], yaw) -> x``: reads the scene for the current task state."""
        names = planner.segments["clip_names"]
        by_name = {c.name: c for c in clips}
        missing = [n for n in names if n not in by_name]
        if missing:
            raise ValueError(f"the planner's clip {missing[0]!r} is not in this library; train again")
        self.table = frame_table([by_name[n] for n in names])
        self.planner = planner
        self.task_state = task_state
        self.state = SynthState(np.zeros(2), 0.0)
        self.group = 0
        self.buffer = None
        self.t = 0.0
        self.fps = self.table.fps
        self.roots, self.rots = [], []
        from collections import deque

        self.trail = deque(maxlen=trail)
        self.x = None

    def decide(self) -> None:
        self.x = np.asarray(self.task_state(self.state.ground, self.state.yaw), dtype=float)
        g, w, _ = self.planner.decide(self.group, self.x)
        root, rot, self.state = synthesize_blends(self.table, [self.planner.blend(g, w)], self.state)
        self.group = g
        self.buffer = (root, rot)
        self.roots.append(root)
        self.rots.append(rot)
        self.trail.extend(root[:, :3].tolist())

    def tick(self, dt: float):
        while self.buffer is None or self.t >= len(self.buffer[0]):
            if self.buffer is not None:
                self.t -= len(self.buffer[0])
            self.decide()
        i = int(self.t)
        self.t += dt * self.fps
        return self.buffer[0][i], self.buffer[1][i]

    def clip(self, name: str) -> Clip:
        return Clip(name, self.table.skeleton, self.fps, np.concatenate(self.roots), np.concatenate(self.rots),
                    tags={"driven"})


def local_point(point_xy, ground, yaw) -> np.ndarray:
    """A world ground point in the character frame (u right, v forward)."""
    d = np.asarray(point_xy, dtype=float) - np.asarray(ground, dtype=float)
    c, s = np.cos(yaw), np.sin(yaw)
    return np.array([c * d[0] + s * d[1], -s * d[0] + c * d[1]])


def navigation_state(desired_yaw: float, yaw: float) -> np.ndarray:
    return np.array([wrap(yaw - desired_yaw)])


def guidance_state(gate_xy, gate_line_angle: float, ground, yaw) -> np.ndarray:
    """(θ, u, v): the gate line's angle against the character's right axis and its centre."""
    u, v = local_point(gate_xy, ground, yaw)
    return np.array([wrap(gate_line_angle - yaw), u, v])


def planner_clips(context, planner: Planner):
    """The working-rate clips a planner refers to, re-cut from its group's database."""
    from ..motionctl.fitted.segments import cut_segments
    from .controller import chosen_group

    group = chosen_group(context)
    db = MotionDatabase.load(group.database)
    names = {n.removesuffix("_mirror") for n in planner.segments["clip_names"]}
    seg = cut_segments([c for c in db.clips if c.name in names],
                       SegmentSettings(fps=planner.segments["fps"],
                                       mirror=any(n.endswith("_mirror") for n in planner.segments["clip_names"])))
    return seg.clips


__all__ = ["GATE_NAME", "PlanningInputs", "PlanningSession", "TARGET_NAME", "guidance_state", "local_point",
           "navigation_state", "planner_clips", "planner_settings", "planning_job"]
