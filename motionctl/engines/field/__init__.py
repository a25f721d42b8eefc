"""Motion fields (paper 002: Lee, Wampler, Bernstein, Popović & Popović 2010; DESIGN.md 3.3).

Modules: ``states`` (motion states, features, neighbour search, the flow and its drift
correction), ``values`` (tasks, anchors, the transition cache, value iteration), ``model`` (the
engine: ``fit`` and ``FieldModel``).
"""

from ..base import Engine
from .model import FieldMemory, FieldModel, FieldSettings, fit
from .states import Database, Search, States
from ...play.tasks import GridTask
from .values import Anchors, transitions, value_iteration

Settings = FieldSettings
ENGINE = Engine("field", "Motion Field", "Blends the nearest captured states every frame, so it answers a new "
                "direction at once, starts from any pose and recovers from a push (paper 002)",
                "Lee et al. 2010", FieldSettings, fit, FieldModel,
                summary=(("clips", "clips", "{:d}"), ("states", "motion states", "{:d}"),
                         ("anchors", "states storing values", "{:d}"), ("sweeps", "value iteration sweeps", "{:d}"),
                         ("residual", "Bellman residual", "{:.3g}"), ("value_bytes", "bytes of values", "{:,d}")),
                warnings=(("dead_ends", "{dead_ends} states cannot keep moving (the capture ends standing): "
                           "{dead_end_clips}"),), quick={"compression": 3}, colour="blue")

__all__ = [
                "ENGINE",
                "Anchors",
                "Database",
                "FieldMemory",
                "FieldModel",
                "FieldSettings",
                "GridTask",
                "Search",
                "Settings",
                "States",
                "fit",
                "transitions",
                "value_iteration",
]
