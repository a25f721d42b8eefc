"""Planning controllers by tree-based fitted iteration with parameterised motion groups
(paper 001: Lo & Zwicker 2008, DESIGN.md 3.2).

Modules: ``segments`` (steps at foot strikes, action segments, groups), ``iteration`` (fitted
iteration with extra-trees), ``forest`` (trees stored as arrays, the polynomial baseline),
``planner`` (run-time decisions, rollouts, residuals), ``training`` (end to end), ``model`` (the
engine: ``fit`` and ``PlanningController``).
"""

from ..base import Engine
from .iteration import FitResult, FittedSettings, PlanningProblem, fitted_iteration
from .model import PlanningController, Settings, fit, task_measure
from .planner import Planner, StoredValue, bellman_residual, decision_time, rollout
from .segments import Groups, SegmentSet, SegmentSettings, cut_segments, group_segments, simplex_samples
from .training import PlannerSettings, train_planner

ENGINE = Engine("planning", "Planning", "Reaches goals (a direction, a target, a gate) by planning ahead with "
                "extra-trees value functions over blended steps (paper 001)", "Lo & Zwicker 2008", Settings, fit,
                PlanningController,
                summary=(("segments", "steps", "{:d}"), ("groups", "groups", "{:d}"),
                         ("samples", "training samples", "{:d}"), ("residual", "Bellman residual", "{:.3g}"),
                         ("heading_error_deg", "° off the direction after 20 steps", "{:.1f}"),
                         ("success", "done within 20 steps", "{:.0%}"),
                         ("reward_per_step", "reward per step", "{:.2f}")),
                quick={"iterations": 3, "trajectories": 30, "n_trees": 4}, command="plan", colour="purple")

__all__ = ["ENGINE", "FitResult", "FittedSettings", "Groups", "Planner", "PlannerSettings", "PlanningController",
           "PlanningProblem", "SegmentSet", "SegmentSettings", "Settings", "StoredValue", "bellman_residual",
           "cut_segments", "decision_time", "fit", "fitted_iteration", "group_segments", "rollout", "simplex_samples",
           "task_measure", "train_planner"]
