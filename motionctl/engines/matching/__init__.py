"""Motion matching (the industry baseline; DESIGN.md 3.7): every captured frame's features, an
exact nearest-frame search every 0.1 s, inertialized jumps, optional foot locking.

Modules: ``features`` (the feature vector, its normalisation, the search structures),
``springs`` (critically damped springs: trajectory prediction, offset decay), ``model`` (the
engine: ``fit`` and ``MatchingModel``).
"""

from ..base import Engine
from .features import Index, raw_features
from .model import MatchingModel, MatchingSettings, MatchMemory, fit

Settings = MatchingSettings
ENGINE = Engine("matching", "Motion Matching", "Searches every captured frame for the one that best continues the "
                "pose and the trajectory the command predicts, every 0.1 s; jumps are inertialized (the game "
                "industry's default)", "Clavet 2016; Holden et al. 2020", MatchingSettings, fit, MatchingModel,
                summary=(("clips", "clips", "{:d}"), ("frames", "frames", "{:d}"),
                         ("searchable", "frames it can jump to", "{:d}")), colour="black")

__all__ = ["ENGINE", "Index", "MatchMemory", "MatchingModel", "MatchingSettings", "Settings", "fit", "raw_features"]
