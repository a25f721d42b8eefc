"""The motion graph as an engine (paper 004's construction): ``fit`` builds it, ``GraphController``
walks it.

Walking a graph is a choice among the current clip's successors.  The default policy (Look
Ahead, ``lookahead``) chooses by a value function over the clips and the asked heading and speed,
and warps each clip's facing up to Max Warp: paper 002's graph-based comparison.  Greedy is the
simple walk a game would start from: it looks one clip ahead, choosing the successor and warp whose
own frames best follow the wanted heading and speed (Look Ahead's reward for that clip, with no
value beyond it), jumping only when asked (and asked-for actions first), the natural continuation
winning ties.  (Until 2026-11 Greedy chose the successor whose end faced closest to the heading,
unwarped: it reached 5% of the scoreboard's direction changes, since a graph without warps turns
only by the few turning clips it holds.)  What a graph *can* do in a room is measured by ``motionctl.evaluate``
on the graph itself (``transition_graph``).
"""

from __future__ import annotations

import numpy as np

from ...errors import MotionctlError
from ...jobs import check_stop, progress_range
from ...rootframe import wrap
from ...play.session import State
from ...play.commands import Command
from ...play.synth import Step
from ...tags import JUMPS
from ..base import MAX_CLIPS, MAX_FPS, Model, check_pieces, clips_of, working_set
from ..schema import Array, Items, Num, Plain, Row, Table, Text
from . import lookahead
from .build import GraphSettings, MotionGraph, build_graph

Settings = GraphSettings
JUMP_PENALTY = 2.0  # a jump when none was asked for, or none when one was
ACTION_PENALTY = 1.0  # an action clip (kick, duck...) nobody asked for
ROUGH_COST = 2.0  # Look Ahead: a transition's cost per unit of roughness (``build.ROUGH_UNIT`` of frame difference)


class GraphController(Model):
    """A motion graph and the greedy walk over it (see the module docstring)."""

    engine = "graph"
    absent_settings = {"warp_rate": 0.0}  # a file saved before Warp Rate: warps unbounded, as its values were learned
    Settings = GraphSettings
    schema = {"source": Array("i", 1, low=0), "start": Array("i", 1, low=0, like="source"),
              "end": Array("i", 1, low=0, like="source"), "edges": Array("i", 2, low=0, high="len:source", tail=(2,)),
              "roughness": Array("f", 1, optional=True), "path#": Array("f", 2), "air#": Array("b", 1),
              "look_values": Array("f", 2, finite=False, optional=True), "look_warps": Array("f", 1, optional=True),
              "look_speeds": Array("f", 1, optional=True), "look_speed_weight": Array("f", 0, optional=True),
              "look_jump_values": Array("f", 2, finite=False, optional=True)}
    bytes_per_second = 8 << 10  # 2 KB per second of capture at the defaults (clips' root paths, Look Ahead's table)
    # ``MotionGraph.arrays``' meta: its clips' source names, motion types, (action, centre frame) or
    # null, the build's figures; its rate is the common header's (this copy is not read)
    header = Table({"fps": Num(1.0, MAX_FPS, optional=True), "names": Items(Text(empty=False), 1, MAX_CLIPS),
                    "types": Items(Items(Text(), 0, 64), 1, MAX_CLIPS),
                    "actions": Items(Row((Text(), Num(0, 10**9, whole=True)), optional=True), 1, MAX_CLIPS),
                    "stats": Table({}, others=Plain())})

    def __init__(self, settings, summary, graph: MotionGraph, heading_smooth: float = 0.2,
                 look: lookahead.Lookahead | None = None):
        super().__init__(settings, summary, graph.names, graph.fps, heading_smooth)
        self.graph = graph
        self.succ = graph.successors()
        self.succ_cost = [[] for _ in range(graph.n)]  # each successor's ``edge_cost``, aligned with ``succ``
        for (a, _), c in zip(graph.edges.tolist(), self.edge_cost().tolist()):
            self.succ_cost[a].append(c)
        ends = np.array([p[-1] for p in graph.root_paths]).reshape(-1, 3) if graph.n else np.zeros((0, 3))
        duration = np.maximum(graph.duration, 1e-6)
        self.speed = np.linalg.norm(ends[:, :2], axis=1) / duration
        self.jumps = np.array([bool(set(t) & JUMPS) or (a is not None and a[0] in JUMPS)
                               for t, a in zip(graph.types, graph.actions)], dtype=bool)
        self.action = np.array([a[0] if a is not None else "" for a in graph.actions], dtype=str)  # per clip
        self.decision_rate = float(1.0 / np.mean(duration)) if graph.n else 1.0
        self.typical_speed = float(np.median(self.speed)) if graph.n else 1.3
        self.yaws = None
        self.use_lookahead(look)

    def edge_cost(self) -> np.ndarray:
        """float [E]: Look Ahead's cost of taking each edge, ROUGH_COST per unit of its roughness."""
        return ROUGH_COST * self.graph.edge_roughness()

    def use_lookahead(self, look: lookahead.Lookahead | None, yaws=None) -> None:
        """Walk by ``look`` (None: greedily, one clip ahead); ``yaws`` the clips' ``clip_yaws`` if
        already known."""
        self.look = look
        if self.yaws is None:
            self.yaws = yaws if yaws is not None else lookahead.clip_yaws(self.graph.root_paths)
        s = self.settings
        self.walker = look if look is not None else lookahead.greedy(
            self.graph.n, warp_values(s), s.discount, self.speed, s.speed_samples, s.speed_weight)
        self.clip_warps = lookahead.warp_limits(self.walker.warps, self.graph.duration, s.warp_rate)

    def arrays(self):
        meta, arrays = self.graph.arrays()
        if self.look is not None:
            arrays = {**arrays, "look_values": self.look.values, "look_warps": self.look.warps,
                      "look_speeds": self.look.speeds, "look_speed_weight": np.float64(self.look.speed_weight)}
            if self.look.jump_values is not None:
                arrays["look_jump_values"] = self.look.jump_values
        return meta, arrays

    @classmethod
    def from_archive(cls, base, meta, z):
        s = base["settings"]
        look = lookahead.Lookahead(np.asarray(z["look_values"]), np.asarray(z["look_warps"]), s.discount,
                                   np.asarray(z["look_speeds"]) if "look_speeds" in z else np.zeros(0),
                                   float(z["look_speed_weight"]) if "look_speed_weight" in z else 0.0,
                                   jump_values=np.asarray(z["look_jump_values"]) if "look_jump_values" in z else None) \
            if "look_values" in z else None
        # The graph's rate is the header's, checked on load (the graph's own copy had gone unchecked).
        return cls(s, base["summary"], MotionGraph.from_arrays({**meta, "fps": base["fps"]}, z), base["heading_smooth"],
                   look)

    def check(self) -> None:
        """One name, type set, action, path and airborne mask per graph clip, one roughness per edge,
        each clip a piece of a named clip (start before end), and Look Ahead's tables of its size."""
        g = self.graph
        if not all(isinstance(n, str) for n in g.names) or not all(isinstance(t, str) for ts in g.types for t in ts):
            raise MotionctlError("its graph's clip names and motion types must be words")
        per_clip = {"types": g.types, "actions": g.actions, "root_paths": g.root_paths, "airborne": g.airborne}
        bad = [k for k, v in per_clip.items() if len(v) != g.n]
        if g.n == 0 or bad:
            raise MotionctlError(f"its {g.n} clips disagree with its {bad[0] if bad else 'clip'} list")
        if g.source.max() >= len(g.names) or np.any(g.end <= g.start):
            raise MotionctlError("its clips are not pieces of the clips it names (start before end)")
        if any(np.ndim(p) != 2 or np.shape(p)[1:] != (3,) or not 1 <= len(p) <= e - s + 1 or np.shape(a) != (len(p),)
               for p, a, s, e in zip(g.root_paths, g.airborne, g.start.tolist(), g.end.tolist())):
            raise MotionctlError("a clip's root path or airborne mask is not one per frame of the clip")
        if g.roughness is not None and len(g.roughness) != len(g.edges):
            raise MotionctlError(f"its {len(g.edges)} edges have {len(g.roughness)} roughness values")
        if any(not s for s in self.succ):
            raise MotionctlError("a clip leads nowhere (every clip of a motion graph has a successor)")
        if self.look is not None:
            task = lookahead.task_of(self.look.speeds)  # ValueError (speeds not ascending): refused by load
            jv = self.look.jump_values
            if self.look.values.shape != (g.n, task.size) or len(self.look.warps) == 0 or \
                    (jv is not None and jv.shape != self.look.values.shape):
                shape = self.look.values.shape if jv is None or self.look.values.shape != (g.n, task.size) else jv.shape
                raise MotionctlError(f"Look Ahead's table is {shape}, not {g.n} clips x {task.size} "
                                     "task samples")

    def on_bind(self, table) -> None:
        check_pieces(table, self.graph.source, self.graph.end, "graph clips")

    def own_graph(self) -> MotionGraph:
        """The graph itself: what certification embeds."""
        return self.graph

    def start(self, table, frame: int):
        """The graph clip holding table row ``frame`` (else the first clip)."""
        g = self.graph
        src = int(np.searchsorted(table.first, frame, side="right") - 1)
        within = frame - table.first[src]
        hit = np.flatnonzero((g.source == src) & (g.start <= within) & (within < g.end))
        return int(hit[0]) if len(hit) else 0

    def jump_asked_cost(self, action: str | None = None) -> np.ndarray:
        """[K] the cost of playing each clip while a jump is asked, for Look Ahead's jump values:
        ``unasked``'s every frame (discounted) until a jump, so the way to one (a walk slowing to
        a stand, then the standing jump) is worth more than walking on at the asked speed."""
        frames = lookahead.discounted_frames(self.yaws[1], self.settings.discount)
        return self.unasked(np.arange(self.graph.n), True, action) * frames

    def unasked(self, clips: np.ndarray, jump: bool = False, action: str | None = None) -> np.ndarray:
        """Cost of each of ``clips`` for a jump or action nobody asked for (or none when one was)."""
        acts = self.action[clips]
        return (JUMP_PENALTY * (self.jumps[clips] != jump)
                + ACTION_PENALTY * np.where(action is None, (acts != "") & ~self.jumps[clips], acts != (action or "")))

    def decide(self, state: State, command: Command):
        """The successor of the current clip that best follows the command (``scores``); the memory is the
        clip."""
        g = self.graph
        if state.memory is None:
            cands = np.arange(g.n)
        else:
            cands = np.asarray(self.succ[int(state.memory)], dtype=np.int64)
        natural = np.zeros(len(cands), dtype=bool)
        if state.memory is not None:  # ties go to the natural continuation
            c = int(state.memory)
            natural = (g.source[cands] == g.source[c]) & (g.start[cands] == g.end[c])
        control = command.local_control(state.yaw)
        jump = bool(control[3] > 0.5)
        if jump and self.look is not None and self.look.jump_values is not None:  # as its jump values were learned
            extra = self.jump_asked_cost(command.action)[cands] - 1e-6 * natural
        else:
            extra = self.unasked(cands, jump, command.action) - 1e-6 * natural
        if state.memory is not None:  # a rough transition costs, as in Look Ahead's values
            extra = extra + np.asarray(self.succ_cost[int(state.memory)])
        theta = float(wrap(command.desired_heading(state.yaw) - state.yaw))
        i, warp = lookahead.choose(self.walker, *self.yaws, cands, theta, extra, command.asked_speed(state.yaw),
                                   self.speed, self.clip_warps, jump=jump, jumps=self.jumps)
        nxt = int(cands[i])
        step = Step(np.array([[g.source[nxt], g.start[nxt], g.end[nxt] - g.start[nxt], 1.0]]),
                    edit=np.array([0.0, 0.0, warp]))
        return step, nxt


def warp_values(s: GraphSettings) -> np.ndarray:
    """The warps (rad) a clip may be played with: ``s.warps`` values over ±Max Warp."""
    return np.linspace(-s.max_warp, s.max_warp, max(1, s.warps)) if s.max_warp > 0 else np.zeros(1)


def fit(library, settings: GraphSettings | None = None, *, progress=None, should_stop=None,
        cache: dict | None = None) -> GraphController:
    """Build the motion graph of ``library``'s clips; an empty graph is an error to fix by the
    threshold."""
    s = settings or GraphSettings()
    if progress is not None:
        progress(0.0, "resampling the clips")
    work = working_set(clips_of(library), s.fps, False)  # what build_graph works on (resampled once)
    built = BUILD_SHARE if s.policy == "lookahead" else 1.0
    graph = build_graph(work, s, progress_range(progress, 0.0, built), should_stop)
    if graph.n == 0:
        raise MotionctlError("no transitions passed the threshold: raise it")
    st = graph.stats
    summary = {"clips": graph.n, "transitions": int(len(graph.edges)), "candidates": st["candidates"],
               "reconnected": st.get("reconnected", 0),
               "seconds_kept": st["seconds_kept"], "seconds_total": st["seconds_total"],
               "dropped": list(st.get("dropped_sources", [])), "seconds": st["build_seconds"]}
    model = GraphController(s, summary, graph)
    model.remember(work)
    if s.policy == "lookahead":
        check_stop(should_stop, "motion graph")
        yaws = model.yaws
        look = lookahead.learn(graph, yaws, model.unasked(np.arange(graph.n)), warp_values(s), s.discount,
                               clip_warps=model.clip_warps,
                               should_stop=should_stop, clip_speed=model.speed, speed_count=s.speed_samples,
                               speed_weight=s.speed_weight, edge_cost=model.edge_cost(),
                               jump_penalty=model.jump_asked_cost() if model.jumps.any() else None,
                               jumps=model.jumps, progress=progress_range(progress, built, 1.0))
        model.use_lookahead(look, yaws)
        model.info.update({"sweeps": look.sweeps, "residual": look.residual, "value_bytes": int(look.values.nbytes),
                           "speeds": [round(float(v), 3) for v in look.speeds],
                           "seconds": st["build_seconds"] + look.seconds})
    if progress is not None:
        progress(1.0, f"done: {graph.n} clips, {len(graph.edges)} transitions")
    return model


BUILD_SHARE = 0.95  # of the job with a lookahead policy: building the graph (measured: 97% on 10 CMU 16 clips)


__all__ = ["GraphController", "Settings", "fit"]
