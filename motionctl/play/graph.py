"""The motion graph as a data structure: clips (frame ranges of source clips) and the transitions
between them, what paper 004 evaluates in rooms.  The graph engine builds one
(``engines.graph.build``); certification makes one of any engine's macro-steps
(``evaluate.room.certify``); the room evaluation embeds it (``evaluate.room``)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..tags import ACTIONS as ACTION_TYPES  # noqa: F401  (the action types a graph's clips carry)


@dataclass(eq=False)
class MotionGraph:
    """Clips (frame ranges of source clips) and transitions between them (the largest SCC).

    source  int [K] source clip; start, end int [K] frame range [start, end) at ``fps``
    edges   int [E, 2] clip -> clip (natural continuations and transitions)
    types   per clip, its motion types (tags); action per clip: (type, centre frame) or None
    airborne  per clip, bool [n + 1] over its root path's rows: a jump's flight (``body.flight``);
              empty list: no clip is ever in the air
    roughness float [E] per edge, how rough its transition is: the frame cost over 0.08 (about
              16° of joint angle, whatever the build's threshold; 0 for a natural continuation;
              None: not known, all 0)
    """

    fps: float
    names: list  # source clip names
    source: np.ndarray
    start: np.ndarray
    end: np.ndarray
    edges: np.ndarray
    types: list
    actions: list
    stats: dict = field(default_factory=dict)
    root_paths: list = field(default_factory=list)  # per clip [n, 3] (x right, y forward, yaw) from its start
    airborne: list = field(default_factory=list)
    roughness: np.ndarray | None = None  # per edge: its transition's frame cost in ROUGH_UNITs (0: natural)

    @property
    def n(self) -> int:
        return len(self.source)

    @property
    def duration(self) -> np.ndarray:
        return (self.end - self.start) / self.fps

    def successors(self) -> list:
        """Per clip, the clips an edge leads to."""
        out = [[] for _ in range(self.n)]
        for a, b in self.edges.tolist():
            out[a].append(b)
        return out

    def arrays(self) -> tuple[dict, dict]:
        """(JSON meta, arrays) for a model archive."""
        meta = {"fps": self.fps, "names": self.names, "types": [sorted(t) for t in self.types],
                "actions": self.actions, "stats": self.stats}
        arrays = {"source": self.source, "start": self.start, "end": self.end, "edges": self.edges}
        if self.roughness is not None:
            arrays["roughness"] = self.roughness
        for i, p in enumerate(self.root_paths):
            arrays[f"path{i}"] = p
        for i, a in enumerate(self.airborne):
            if a.any():
                arrays[f"air{i}"] = a
        return meta, arrays

    def in_air(self, c: int) -> np.ndarray:
        """bool [n + 1]: clip ``c``'s root-path rows in the air (all False when not known)."""
        if c < len(self.airborne):
            return self.airborne[c]
        return np.zeros(len(self.root_paths[c]), dtype=bool)

    @classmethod
    def from_arrays(cls, meta: dict, z) -> "MotionGraph":
        """A graph from a model archive's meta and arrays (``arrays``)."""
        k = len(z["source"])
        return cls(meta["fps"], meta["names"], np.asarray(z["source"]), np.asarray(z["start"]), np.asarray(z["end"]),
                   np.asarray(z["edges"]), [set(t) for t in meta["types"]],
                   [tuple(a) if a else None for a in meta["actions"]], meta["stats"],
                   [np.asarray(z[f"path{i}"]) for i in range(k)],
                   [np.asarray(z[f"air{i}"]) if f"air{i}" in z else np.zeros(len(z[f"path{i}"]), dtype=bool)
                    for i in range(k)],
                   np.asarray(z["roughness"]) if "roughness" in z else None)

    def edge_roughness(self) -> np.ndarray:
        """float [E]: ``roughness``, zeros when not known."""
        return np.zeros(len(self.edges)) if self.roughness is None else np.asarray(self.roughness, dtype=float)
