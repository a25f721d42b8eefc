"""Planning controllers by tree-based fitted iteration with parameterised motion groups
(paper 001: Lo & Zwicker 2008, DESIGN.md 3.2).

Public API:
    SegmentSettings, cut_segments, group_segments, simplex_samples     clip preparation
    FittedSettings, PlanningProblem, fitted_iteration                   learning (extra-trees)
    Planner, rollout, bellman_residual, decision_time, play_plan        run time, metrics
    PlannerSettings, train_planner, train_planner_to_file               end to end
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..jobs import check_stop
from ..tasks import make_task
from .iteration import FitResult, FittedSettings, PlanningProblem, fitted_iteration
from .planner import Planner, bellman_residual, decision_time, play_plan, rollout
from .segments import Groups, SegmentSet, SegmentSettings, cut_segments, group_segments, simplex_samples


@dataclass
class PlannerSettings:
    task: str = "navigation"
    task_params: dict = field(default_factory=dict)
    parametric: bool = True  # parameterised groups (blends); False: one segment per group
    segments: SegmentSettings = field(default_factory=SegmentSettings)
    fitted: FittedSettings = field(default_factory=FittedSettings)
    runtime_samples: int = 40  # simplex samples per group at run time (eq. 9)


def train_planner(clips, settings: PlannerSettings | None = None, progress=None, should_stop=None):
    """Segments, groups, fitted iteration; returns (Planner, FitResult, SegmentSet, Groups)."""
    s = settings or PlannerSettings()
    task = make_task(s.task, **s.task_params)
    if progress:
        progress(0.0, "cutting clips into steps")
    seg = cut_segments(clips, s.segments)
    if s.task == "reach" and not (seg.kind == 1).any():
        raise ValueError("the reach task needs clips tagged pick, reach, punch or strike (none found)")
    groups = group_segments(seg, s.segments.group_size if s.parametric else 1)
    check_stop(should_stop, "planning controller")
    problem = PlanningProblem.from_groups(task, seg, groups, s.fitted.blend_samples, s.fitted.seed)
    sub = (lambda f, m: progress(0.05 + 0.9 * f, m)) if progress else None
    fit = fitted_iteration(problem, s.fitted, sub, should_stop)
    info = {"task": s.task, "parametric": s.parametric, "segments": seg.n, "groups": groups.n, "samples": fit.samples,
            "iterations": fit.iterations, "frozen_at": fit.frozen_at, "n_min": fit.n_min, "seconds": fit.seconds,
            "residual": fit.residuals[-1] if fit.residuals else None, "regressor": s.fitted.regressor}
    planner = Planner.from_fit(fit, seg, groups, s.runtime_samples, info)
    return planner, fit, seg, groups


def train_planner_to_file(clips, out_path: str, settings: PlannerSettings | None = None, progress=None,
                          should_stop=None):
    """Train and save; a cancelled job writes nothing (the save happens only at the end)."""
    planner, fit, seg, groups = train_planner(clips, settings, progress, should_stop)
    planner.save(out_path)
    return planner, fit, seg, groups


__all__ = ["FitResult", "FittedSettings", "Groups", "Planner", "PlannerSettings", "PlanningProblem", "SegmentSet",
           "SegmentSettings", "bellman_residual", "cut_segments", "decision_time", "fitted_iteration", "group_segments",
           "play_plan", "rollout", "simplex_samples", "train_planner", "train_planner_to_file"]
