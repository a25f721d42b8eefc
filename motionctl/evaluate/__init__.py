"""How well a controller does what it is asked: ``scoreboard`` (the metrics every engine is measured
with: responses, path following, switches, time per decision, replays), ``plot`` and ``room`` (what
a motion graph or any controller can do in an environment, paper 004), whose public names are
re-exported here."""

from . import room
from .room import *  # noqa: F401,F403  (the room's public API, as ``motionctl.evaluate.<name>``)

__all__ = list(room.__all__)
