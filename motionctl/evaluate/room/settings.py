"""What a room evaluation asks of the user, declared once: the Evaluate panel's options and the
command line's ``eval --env`` options are generated from ``RoomSettings``."""

from __future__ import annotations

from dataclasses import dataclass

from ...settings import setting
from .embedding import EmbedSettings
from .grid import EditModel


@dataclass
class RoomSettings:
    """The grid, the character, the editing footprint and how much of the room the metrics sample."""

    cell: float = setting(0.2, "Cell", "Grid spacing", min=0.05, max=2.0, unit="LENGTH")
    headings: int = setting(18, "Headings", "Facing directions (18 = 20°)", min=4, max=72)
    radius: float = setting(0.25, "Character Radius", "The character's radius: how close to a wall it may come",
                            min=0.0, max=2.0, unit="LENGTH")
    edit_scale: float = setting(1.0, "Edit Size", "How far clips may be edited to land on grid points (1 = 100%)",
                                min=0.1, max=5.0, subtype="FACTOR")
    pairs: int = setting(100, "Path Pairs", "Monte-Carlo start/end pairs 4-7 m apart for path efficiency",
                         min=1, max=100000)
    lm_sample: float = setting(1.0, "LM Sample", "Fraction of embedded nodes averaged for local maneuverability",
                               min=0.001, max=1.0, subtype="FACTOR")

    def embed(self) -> EmbedSettings:
        """The embedding's settings."""
        return EmbedSettings(cell=self.cell, headings=self.headings, radius=self.radius,
                             edit=EditModel(scale=self.edit_scale))
