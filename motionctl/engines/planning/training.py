"""Training a planning controller end to end (paper 001: Lo & Zwicker 2008, DESIGN.md 3.2).

``train_planner`` cuts the clips into steps, groups them, runs fitted iteration and returns the
run-time ``Planner`` with what was learned along the way; ``PlannerSettings`` says how, with the
task's own parameters spelt out so the panel and the command line can show them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...errors import MotionctlError
from ...jobs import check_stop, one_blas_thread, progress_range
from ...rootframe import WARP_RATE
from ...settings import internal, nested, setting
from ...play.tasks import make_task
from .iteration import FitResult, FittedSettings, PlanningProblem, fitted_iteration
from .planner import Planner
from .segments import Groups, SegmentSet, SegmentSettings, cut_segments, group_segments

TASKS = (
    ("navigation", "Navigation", "Walk in a desired direction (steer it with A/D while driving)"),
    ("reach", "Reach", "Walk to the target and reach it (needs a pick, reach or punch clip)"),
    ("guidance", "Guidance", "Walk through the gate's opening without touching its walls"),
)


@dataclass
class PlannerSettings:
    """The task (and its reward's parameters), how clips become steps and groups, and learning."""

    task: str = setting("navigation", "Task", "What the character plans for", choices=TASKS, group="Task")
    gamma: float = setting(1.0, "γ", "Navigation: cost per radian off the desired direction", min=0.0, max=100.0,
                           group="Task")
    follow_speed: bool = setting(True, "Follow Speed", "Navigation: the asked speed is part of the state and each "
                                 "step loses Speed Weight per m/s off it (paper 001's task knows only the heading)",
                                 group="Task")
    speed_weight: float = setting(1.0, "Speed Weight", "Navigation with speed: reward lost per step per m/s off "
                                  "the asked speed (per radian off the direction it is γ)", min=0.0, max=100.0,
                                  group="Task")
    warp_rate: float = setting(WARP_RATE, "Warp Rate", "Navigation: each step's facing may also turn "
                               "toward the asked heading by up to this much per second beyond its blend's own "
                               "turn (as the other engines' Warp Rate and the field's Turn Warp); 0: the blend's "
                               "turn only", min=0.0, max=np.pi, unit="ROTATION", group="Task")
    lam: float = setting(10.0, "λ", "Reach: reward for reaching the target", min=0.0, max=1000.0, group="Task")
    radius: float = setting(0.3, "Radius", "Reach: how close the hand's reach point must come", min=0.01, max=5.0,
                            unit="LENGTH", group="Task")
    half_width: float = setting(0.6, "Half Width", "Guidance: half the gate's opening", min=0.1, max=10.0,
                                unit="LENGTH", group="Task")
    pass_bonus: float = setting(20.0, "Pass Bonus", "Guidance: reward for passing through the opening (0 is paper "
                                "001's eq. 12, under which a gate far along its wall is not worth the walk)",
                                min=0.0, max=1000.0, group="Task")
    parametric: bool = setting(True, "Blend Groups", "Group similar steps and blend them for precise control "
                               "(paper 001 section 4)", group="Steps")
    segments: SegmentSettings = nested(SegmentSettings, "Steps")
    fitted: FittedSettings = nested(FittedSettings, "Learning")
    runtime_samples: int = internal(40, min=1, max=10000)  # simplex samples per group at run time (eq. 9)

    @property
    def task_params(self) -> dict:
        """The chosen task's parameters, as ``tasks.make_task`` takes them."""
        return {"navigation": {"gamma": self.gamma, "speed_weight": self.speed_weight},
                "reach": {"lam": self.lam, "radius": self.radius},
                "guidance": {"half_width": self.half_width, "bonus": self.pass_bonus}}[self.task]


def train_planner(clips, settings: PlannerSettings | None = None, progress=None, should_stop=None):
    """Segments, groups, fitted iteration; returns (Planner, FitResult, SegmentSet, Groups).  BLAS runs on
    one thread (``one_blas_thread``): with two, the samples of a training changed (3,370 vs 3,349)."""
    with one_blas_thread():
        return _train_planner(clips, settings, progress, should_stop)


PROBLEM_SHARE = 0.1  # of training: cutting the steps and sampling their groups' blends (measured: 4-20%)


def _train_planner(clips, settings, progress, should_stop):
    s = settings or PlannerSettings()
    if progress:
        progress(0.0, "cutting clips into steps")
    seg = cut_segments(clips, s.segments)
    params = dict(s.task_params)
    if s.task == "navigation" and s.follow_speed:  # asked speeds from standing to the fastest steps
        params["speeds"] = (0.0, float(np.quantile(seg.speed(), 0.98)) if seg.n else 0.0)
    task = make_task(s.task, **params)
    if s.task == "reach" and not (seg.kind == 1).any():
        raise MotionctlError("the reach task needs clips tagged pick, reach, punch or kick (none found)")
    groups = group_segments(seg, s.segments.group_size if s.parametric else 1)
    check_stop(should_stop, "planning controller")
    if progress:
        progress(0.0, f"{groups.n} groups of {seg.n} steps: their blends")
    problem = PlanningProblem.from_groups(task, seg, groups, s.fitted.blend_samples, s.fitted.seed)
    fit = fitted_iteration(problem, s.fitted, progress_range(progress, PROBLEM_SHARE, 1.0), should_stop)
    info = {"task": s.task, "parametric": s.parametric, "segments": seg.n, "groups": groups.n, "samples": fit.samples,
            "iterations": fit.iterations, "frozen_at": fit.frozen_at, "n_min": fit.n_min, "seconds": fit.seconds,
            "residual": fit.residuals[-1] if fit.residuals else None, "regressor": s.fitted.regressor}
    planner = Planner.from_fit(fit, seg, groups, s.runtime_samples, info)
    return planner, fit, seg, groups


__all__ = ["FitResult", "FittedSettings", "Groups", "PlannerSettings", "SegmentSet", "SegmentSettings", "TASKS",
           "train_planner"]
