"""Active learning (paper 003: Cooper, Hertzmann & Popović 2007; DESIGN.md 3.4).

Modules: ``motion`` (states, examples on a common phase, time-aligned blends), ``tasks`` (the walk,
locomotion and the jump: inputs, example windows, features, task errors), ``controller`` (clusters
and their RBF blend maps), ``candidates`` (the requests), ``learning`` (pseudoexamples, the
oracle, coverage, the loop) and ``model`` (the engine: ``fit`` and ``ActiveModel``).
"""

from ..base import Engine
from . import cli
from .controller import BlendMap, Cluster, Controller, profile
from .learning import (
                Candidate,
                CoverageSample,
                Oracle,
                Pool,
                candidates,
                coverage,
                pseudoexample,
)
from .model import ActiveMemory, ActiveModel, ActiveSettings
from .session import fit
from .tasks import TASKS, task_named

Settings = ActiveSettings
ENGINE = Engine("active", "Active Learning", "Blends a few well-chosen examples per start state; learning asks for the "
                "motions it does worst, so a controller needs few captures (paper 003)",
                "Cooper et al. 2007", ActiveSettings, fit, ActiveModel,
                summary=(("examples", "examples", "{:d}"), ("pseudoexamples", "pseudoexamples", "{:d}"),
                         ("clusters", "clusters", "{:d}"), ("coverage", "coverage of the task", "{:.0%}"),
                         ("coverage_normalised", "coverage of what the capture can do", "{:.0%}")),
                quick={"budget": 5}, cli=cli.add_commands, colour="pink")

__all__ = [
                "ENGINE",
                "TASKS",
                "ActiveMemory",
                "ActiveModel",
                "ActiveSettings",
                "BlendMap",
                "Candidate",
                "Cluster",
                "Controller",
                "CoverageSample",
                "Oracle",
                "Pool",
                "Settings",
                "candidates",
                "coverage",
                "fit",
                "profile",
                "pseudoexample",
                "task_named",
]
