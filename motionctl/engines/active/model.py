"""The active-learning engine (paper 003; DESIGN.md 3.4): ``fit`` builds a blended controller by
active learning against an oracle drawing from the library (what the panel's *Auto* does), and
``ActiveModel`` plays it through the common interface: each decision blends one cluster's
examples for the task input the command asks for (a walk cycle, a jump) and plays it as frames,
fading out the small pose difference at the join.

Speed and stop (issue 35; the paper's walk has a speed from a slow walk up and no stand): the
default task, ``locomotion``, is the walk's u over 0-4.5 m/s, its examples the capture's walk and
run cycles, stops, stands and starts (``tasks.LocomotionTask``); a command's speed is the u's
speed (a stop asks 0: a stop cycle, then stands), and each cycle is played by the cluster whose
start is near the character's state and which does u (``Controller.pick``), so a walk asked to
run reaches a run cluster though the capture holds no walk that becomes a run.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ... import quat
from ...errors import MotionctlError
from ...play.session import State
from ...play.commands import Command
from ...settings import internal, setting
from ...rootframe import WARP_RATE, facing_warp, heading
from ...play.synth import Frames, Step
from ..base import Model
from ..schema import Array, Items, Num, Plain, Table, Text
from .controller import Cluster, Controller, Example
from .motion import PHASE, STATE_FRAMES, Aligned, blend, states_of, to_frames
from .tasks import TASKS, task_named



@dataclass
class ActiveSettings:
    task: str = setting("locomotion", "Task", "What the controller learns: a walk following stride, speed and turn, "
                        "locomotion from standing to running, or a jump to a spot",
                        choices=[("walk", "Walk", "Stride length, speed and turn per stride (paper 003)"),
                                 ("locomotion", "Walk, Run and Stop", "The walk's stride, speed and turn over the "
                                  "capture's whole speed range, with stops, standing and starts"),
                                 ("jump", "Jump", "Jump to a spot: forward and sideways distance")])
    budget: int = setting(20, "Examples", "How many captured examples active learning may ask for", min=1, max=200)
    seed_clip: str = setting("", "Seed Clip", "The clip whose first example starts learning (empty: the first that "
                             "holds one)")
    mirror: bool = setting(True, "Mirror Clips", "Offer mirrored clips as captures too (turns and jumps both ways)")
    tolerance: float = setting(0.12, "State Tolerance", "Point-cloud distance within which a start state matches",
                               min=0.01, max=1.0, unit="LENGTH", group="Advanced")
    join: float = setting(0.12, "Join Tolerance", "Alignment error within which an example joins a cluster",
                          min=0.01, max=1.0, unit="LENGTH", group="Advanced")
    pseudoexamples: bool = setting(True, "Pseudoexamples", "Try a blend of existing examples before asking for a "
                                   "capture", group="Advanced")
    warp_rate: float = setting(WARP_RATE, "Warp Rate", "Walk task: a cycle's facing may also turn by up "
                               "to this much per second toward the asked heading, beyond the turn its blend "
                               "makes (a cycle lasts about a second and turns at most 45°; as the graph's Warp "
                               "Rate); 0: the blend's own turn only", min=0.0, max=np.pi, unit="ROTATION")
    search_seed: int = setting(0, "Search Seed", "Random seed of the candidate search and the coverage sample", min=0,
                               max=2**31 - 1, group="Advanced")
    fps: float = internal(30.0, min=10.0, max=240.0)


@dataclass
class ActiveMemory:
    """The character's state (point cloud [D]) and the cluster played (the synthesis keeps the last
    pose: it inertializes each new cycle from it)."""

    state: np.ndarray
    cluster: int = -1

    def __eq__(self, other) -> bool:
        if not isinstance(other, ActiveMemory):
            return NotImplemented
        return np.array_equal(self.state, other.state) and self.cluster == other.cluster


MAX_LENGTH = 100_000  # frames one example may last


class ActiveModel(Model):
    engine = "active"
    absent_settings = {"warp_rate": 0.0}  # a file saved before Warp Rate plays without it
    Settings = ActiveSettings
    schema = {**{f"c#_{name}": Array("f", n) for name, n in (("x", 2), ("w", 2), ("alpha", 2), ("start", 1),
                                                                ("rot", 4), ("ground", 3), ("height", 2), ("yaw", 2),
                                                                ("length", 1), ("keys", 2), ("start_state", 2),
                                                                ("end_state", 2))},
              "c#_alpha": Array("f", 2, like="c#_x"), "c#_pseudo": Array("b", 1)}
    bytes_per_second = 256 << 10  # 62 KB per example (its aligned poses): 20 examples of 9.7 s of capture, 128 KB/s
    # The task, the learner's tolerances (the settings' ranges), each cluster's examples (the clip,
    # its key frames, task figures and skating, checked against the cluster's arrays by ``check``)
    # and the session's step log (what the picture draws)
    header = Table({"task": Text(choices=tuple(TASKS)), "tolerance": Num(0.01, 1.0), "join": Num(0.01, 1.0),
                    "clusters": Items(Items(Table({"clip": Text(empty=False), "keys": Items(Num(), 1, 64),
                                                   "features": Items(Num(), 1, 64), "skating": Num(0.0, 1e4)}), 1),
                                      1, 10_000),
                    "log": Items(Table({"action": Text(), "coverage": Num(0.0, 1.0, optional=True)}, others=Plain()),
                                 optional=True)})

    def __init__(self, settings, summary, clip_names, fps, heading_smooth, controller: Controller, log=()):
        super().__init__(settings, summary, clip_names, fps, heading_smooth)
        self.ctrl = controller
        self.log = list(log)
        lengths = np.concatenate([c.aligned.length for c in controller.clusters])
        self.decision_rate = float(fps / max(np.mean(lengths), 1.0))
        feats = controller.example_features()
        self.typical_speed = float(np.median(feats[:, 1])) if controller.task.steers else 1.0
        if controller.task.steers and len(feats) >= 2 and np.ptp(feats[:, 1]) > 1e-3:
            self._stride = np.polyfit(feats[:, 1], feats[:, 0], 1)
        else:
            self._stride = np.array([0.0, float(np.median(feats[:, 0]))])

    @property
    def task(self):
        return self.ctrl.task

    @property
    def goals(self) -> tuple:
        return ("target",) if self.task.name == "jump" else ()

    def natural_stride(self, speed: float) -> float:
        """The stride the examples take at ``speed`` (a line through them): what a command that
        gives a speed and no stride asks for."""
        return float(np.polyval(self._stride, speed))

    # --- storage

    def arrays(self):
        meta = {"task": self.task.name, "tolerance": self.ctrl.tolerance, "join": self.ctrl.join,
                "clusters": [[{"clip": e.clip, "keys": np.asarray(e.keys).tolist(), "features": np.asarray(e.features).tolist(),
                               "skating": e.skating} for e in c.examples] for c in self.ctrl.clusters],
                "log": self.log}
        arrays = {}
        for i, c in enumerate(self.ctrl.clusters):
            arrays.update(c.aligned.arrays(f"c{i}_"))
            arrays.update({f"c{i}_x": c.x, f"c{i}_w": c.w, f"c{i}_alpha": c.alpha, f"c{i}_pseudo": c.pseudo,
                           f"c{i}_start": c.start_state})
        return meta, arrays

    @classmethod
    def from_archive(cls, base, meta, z):
        ctrl = Controller(task_named(meta["task"]), None, base["fps"], meta["tolerance"], meta["join"])
        for i, recs in enumerate(meta["clusters"]):
            c = Cluster([Example(r["clip"], np.array(r["keys"]), np.array(r["features"]), r["skating"]) for r in recs],
                        Aligned.from_arrays(z, f"c{i}_"), np.asarray(z[f"c{i}_x"]), np.asarray(z[f"c{i}_w"]),
                        np.asarray(z[f"c{i}_alpha"]), np.asarray(z[f"c{i}_pseudo"], dtype=bool),
                        np.asarray(z[f"c{i}_start"], dtype=np.float32))
            c.refit(c.alpha)
            ctrl.clusters.append(c)
        return cls(base["settings"], base["summary"], base["clip_names"], base["fps"], base["heading_smooth"], ctrl,
                   meta.get("log", ()))

    def picture(self, width: int = 180, height: int = 120):
        """(RGBA rows bottom-up, caption): coverage after each learning step as bars (orange after
        a captured example, blue after a pseudoexample, grey after a rejection), up to what the
        library's own examples complete (the line); None before coverage was measured."""
        cov = [(e["action"], e["coverage"]) for e in self.log if e.get("coverage") is not None]
        if not cov:
            return None
        top = max(max(c for _, c in cov), float(self.info.get("pool_coverage") or 0.0), 1e-6)
        col = np.minimum((np.arange(width) * len(cov)) // width, len(cov) - 1)
        level = np.array([c for _, c in cov])[col] / top
        colours = {"example": (0.95, 0.6, 0.2), "pseudoexample": (0.3, 0.6, 0.95), "rejected": (0.45, 0.45, 0.45)}
        rgb = np.array([colours.get(a, (0.8, 0.8, 0.8)) for a, _ in cov])[col]
        rows = (np.arange(height)[:, None] + 0.5) / height
        rgba = np.empty((height, width, 4), dtype=np.float32)
        rgba[..., :3] = (0.08, 0.08, 0.1)
        rgba[..., 3] = 1.0
        inside = rows <= 0.95 * level[None, :]
        rgba[..., :3] = np.where(inside[..., None], rgb[None], rgba[..., :3])
        pool = float(self.info.get("pool_coverage") or 0.0) / top
        if pool > 0:
            rgba[min(height - 1, int(0.95 * pool * height)), :, :3] = 0.9
        return rgba, (f"coverage after each of {len(cov)} steps (top {100 * top:.1f}% of the sample; white line: "
                      "the library's own examples)")

    def check(self) -> None:
        """Every cluster's arrays agree with its examples, the task and each other."""
        dim, n_keys = self.task.dim, self.task.n_keys
        if not self.ctrl.clusters:
            raise MotionctlError("the model holds no clusters of examples")
        for i, c in enumerate(self.ctrl.clusters):
            a, k, n = c.aligned, c.k, len(c.x)
            joints = a.rot.shape[2] if a.rot.ndim == 4 else -1
            d = a.start_state.shape[-1]
            want = {"x": (c.x, (n, dim)), "w": (c.w, (n, k)), "alpha": (c.alpha, (n, dim)), "pseudo": (c.pseudo, (n,)),
                    "rot": (a.rot, (k, PHASE, joints, 4)), "height": (a.height, (k, PHASE)),
                    "ground": (a.ground, (k, PHASE, 2)), "yaw": (a.yaw, (k, PHASE)), "length": (a.length, (k,)),
                    "keys": (a.keys, (k, n_keys)), "start_state": (a.start_state, (k, d)),
                    "end_state": (a.end_state, (k, d)), "start": (c.start_state, (d,))}
            for name, (arr, shape) in want.items():
                if k < 1 or n < k or np.shape(arr) != shape:
                    raise MotionctlError(f"cluster {i}'s {name!r} has shape {np.shape(arr)}, not {shape} "
                                         f"({k} examples, {n} data points, a {dim}-number task)")
            for e in c.examples:  # what it measured of each example (JSON in the header)
                nums = [np.asarray(e.features, dtype=float), np.asarray(e.keys, dtype=float), np.array([e.skating], float)]
                if not all(np.all(np.abs(v) <= 1e4) for v in nums) or nums[0].shape != (dim,):
                    raise MotionctlError(f"cluster {i}'s example {e.clip!r} holds task figures that are not numbers "
                                         f"or far out of range")
            if d != 3 * STATE_FRAMES * joints or not np.all((a.length >= 1) & (a.length <= MAX_LENGTH)) or \
                    np.any(np.diff(a.keys, axis=1) < 0):
                raise MotionctlError(f"cluster {i}'s motion states, lengths or key times do not fit its poses")
            if not (np.all(c.alpha > 0) and np.all(c.w >= 0) and np.allclose(c.w.sum(axis=1), 1.0, atol=1e-3)
                    and np.all(np.abs(c.x) <= 10.0) and np.isfinite(c.map.linear).all() and np.isfinite(c.map.r).all()):
                raise MotionctlError(f"cluster {i}'s blend map is not one the learner makes (weights that do not "
                                     "sum to 1, a scale not above 0, task inputs far outside the task's box)")

    # --- playing

    def on_bind(self, table) -> None:
        joints = self.ctrl.clusters[0].aligned.rot.shape[2]
        if table.skeleton.n_joints != joints:
            raise MotionctlError(f"the model's poses have {joints} joints, these clips' skeleton "
                                 f"{table.skeleton.n_joints}: train it again on these clips")
        if self.ctrl.skeleton is None:
            self.ctrl.skeleton = table.skeleton

    def start(self, table, frame: int):
        """Memory at table row ``frame``: the state of the next 10 frames of its clip."""
        if self.ctrl.skeleton is None:
            self.ctrl.skeleton = table.skeleton
        clip = int(np.searchsorted(table.first, frame, side="right") - 1)
        last = table.first[clip] + table.length[clip] - 1
        rows = np.minimum(frame + np.arange(STATE_FRAMES), last)
        from ...skeleton import forward_kinematics
        r = table.local_rot[rows].copy()
        r[:, 0] = quat.mul(heading(table.yaw[rows]), r[:, 0])
        root = np.column_stack((table.ground[rows], table.height[rows]))
        pos, _ = forward_kinematics(table.skeleton, root, r)
        state = states_of(pos, table.ground[rows], table.yaw[rows])[0]
        return ActiveMemory(state)

    def initial_memory(self, ci: int = 0) -> ActiveMemory:
        """The character standing at cluster ``ci``'s start (the first decision's)."""
        c = self.ctrl.clusters[ci]
        return ActiveMemory(c.start_state.copy(), ci)

    def decide(self, state: State, command: Command):
        """One blend: the cluster that starts near the character's state and does the command's
        task input (``Controller.pick``), its examples weighted by the map there, time-aligned
        and played as frames."""
        if self.ctrl.skeleton is None:
            raise MotionctlError("the controller plays on no clips yet: bind it to its frame table (Model.play(clips))")
        target = None
        if getattr(command, "target", None) is not None:
            target = state.local(command.target)
        u = self.task.u_of(command, state.yaw, target, self.natural_stride)
        if state.memory is None:  # the first decision: the cluster that does it best, started as it starts
            memory = self.initial_memory(self.ctrl.best_for(u))
            ci = memory.cluster
        else:
            memory = state.memory
            ci = self.ctrl.pick(memory.state, u)
        w = self.ctrl.weights(ci, u[None])
        c = self.ctrl.clusters[ci]
        bl = blend(c.aligned, w)
        rot, height, motion = to_frames(bl, self.task.n_keys)
        end = (w @ c.aligned.end_state.astype(np.float64))[0].astype(np.float32)
        return (Step(frames=Frames(rot, height, motion), edit=self._warp(state, command, bl), joins=True),
                ActiveMemory(end, ci))

    def _warp(self, state: State, command: Command, bl) -> np.ndarray | None:
        """The facing turn (``Step.edit``) beyond what blend ``bl`` turns, toward the heading the
        command asks at the cycle's end, at most Warp Rate over the cycle (walk task only)."""
        rate = self.settings.warp_rate
        if not self.task.steers or rate <= 0:
            return None
        seconds = max(1, int(round(float(bl.length[0])))) / self.fps  # the frames played (``to_frames``)
        return facing_warp(command.desired_heading(state.yaw, seconds) - state.yaw - float(bl.yaw[0, -1]), rate, seconds)

    def memory_key(self, memory):
        return memory.cluster


__all__ = ["TASKS", "ActiveMemory", "ActiveModel", "ActiveSettings"]
