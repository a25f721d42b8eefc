"""The fragment controller as an engine (paper 000): ``fit`` trains it, ``FragmentController`` plays it.

At run time a fragment controller is a table: next fragment = table[previous fragment,
bin(control)], with the bins to map a control signal to its bin and the fragments' source
(clip, start frame) so the synthesiser can play them.  ``fit`` cuts the clips into fragments,
builds the training traces its settings ask for (generated players or files), learns the user
model, solves the policy, and measures it on held-out generated traces.  Work that only depends
on the clips (fragments, motion distances) and the last values (for a warm start) are kept in
the ``cache`` dict the caller passes in, so retuning a weight is quick.
"""

from __future__ import annotations

import numpy as np

from ...errors import MotionctlError
from ...jobs import check_stop, progress_range
from ...play.session import State
from ...play.commands import MAX_TURN, Command
from ...rootframe import facing_warp, wrap
from ...play.synth import Step
from ...jobs import check_memory
from ..base import MAX_SPEED, Model, check_pieces, clips_of, fingerprint
from ..schema import Array, Num, Table, Text
from .control import (EVALUATION_PLAYER, TRAINING_PLAYERS, ControlBins, PlayerSettings, player_traces, read_trace,
                      scale_player)
from .controller import ControllerSettings, FragmentModel, evaluate_controllers, train_controller
from .cut import FragmentSet

Settings = ControllerSettings
SHARP_OFF = np.radians(60.0)  # heading error past which a fragment controller asks its sharpest turn bin
MAX_FRAGMENT_FRAMES = 240  # poses a fragment may hold: Fragment Length's 1 s at the highest working rate (240 fps)


class FragmentController(Model):
    """A trained fragment controller.

    table [F, C] int: next fragment per (fragment, control bin); values [F, C]: their expected
    quality; bins: the control bins; clip [F], start [F]: each fragment's working clip and first
    frame; n_frames: poses per fragment.
    """

    engine = "fragments"
    absent_settings = {"warp_rate": 0.0}  # a file saved before Warp Rate plays without it
    Settings = ControllerSettings
    schema = {"table": Array("i", 2, low=0, high="len:clip"), "values": Array("f", 2, like="table"),
              "centres": Array("f", 2, tail=(4,)), "clip": Array("i", 1, low=0), "start": Array("i", 1, low=0, like="clip")}
    bytes_per_second = 100 << 10  # 48 KB per second of capture at the defaults (150 bins, a fragment every 0.05 s)
    header = Table({"n_frames": Num(4, MAX_FRAGMENT_FRAMES, whole=True), "speed": Num(0.0, MAX_SPEED, optional=True),
                    "bin_kind": Text(choices=("paper", "kmeans"), optional=True)})

    def __init__(self, settings, summary, clip_names, fps, heading_smooth, table, values, bins: ControlBins, clip,
                 start, n_frames: int, speed: float):
        super().__init__(settings, summary, clip_names, fps, heading_smooth)
        self.table = np.asarray(table, dtype=np.int32)
        self.values = np.asarray(values, dtype=np.float32)
        self.bins = bins
        self.clip = np.asarray(clip, dtype=np.int64)
        self.start_frame = np.asarray(start, dtype=np.int64)
        self.n_frames = int(n_frames)
        self.decision_rate = self.fps / self.n_frames
        self.typical_speed = float(speed)
        self.turns = None  # [F] each fragment's own turn, once bound (``on_bind``)

    @property
    def n(self) -> int:
        return len(self.table)

    # --- storage

    def arrays(self):
        return {"n_frames": self.n_frames, "speed": self.typical_speed, "bin_kind": self.bins.kind}, {
            "table": self.table, "values": self.values, "centres": self.bins.centres,
            "clip": self.clip.astype(np.int32), "start": self.start_frame.astype(np.int32)}

    @classmethod
    def from_archive(cls, base, meta, z):
        q = base["settings"].quality
        bins = ControlBins(np.asarray(z["centres"]), meta.get("bin_kind") or "paper", q)
        return cls(base["settings"], base["summary"], base["clip_names"], base["fps"], base["heading_smooth"],
                   np.asarray(z["table"]), np.asarray(z["values"]), bins, np.asarray(z["clip"]),
                   np.asarray(z["start"]), meta["n_frames"], float(meta.get("speed") or 1.3))

    def check(self) -> None:
        """Fragments lie in the clips it names, the table has one column per control bin, and each
        fragment holds the poses its settings cut (Fragment Length at the working rate: a header's
        n_frames drives what binding allocates, once per fragment)."""
        if len(self.clip) != len(self.table) or (len(self.clip) and self.clip.max() >= len(self.clip_names)):
            raise MotionctlError(f"its {len(self.table)} fragments do not lie in its {len(self.clip_names)} clips")
        if self.table.shape[1] != len(self.bins.centres):
            raise MotionctlError(f"its table has {self.table.shape[1]} control bins where {len(self.bins.centres)} "
                                 "are defined")
        cut, rate = self.settings.fragments.frames()[0], self.settings.fragments.fps
        if abs(self.fps - rate) > 1e-6 * rate:
            raise MotionctlError(f"its header's 'fps' is {self.fps:g} where its settings work at {rate:g} fps "
                                 "(a damaged or hand-edited file?)")
        if self.n_frames != cut:
            raise MotionctlError(f"its header's 'model.n_frames' is {self.n_frames} where its settings cut fragments "
                                 f"of {cut} poses (a damaged or hand-edited file?)")

    # --- playing

    def start(self, table, frame: int):
        """The fragment that starts nearest before table row ``frame``."""
        clip = int(np.searchsorted(table.first, frame, side="right") - 1)
        within = int(frame - table.first[clip])
        cands = np.flatnonzero(self.clip == clip)
        if len(cands) == 0:
            return 0
        return int(cands[np.argmin(np.abs(self.start_frame[cands] - within))])

    def first_fragment(self, control) -> int:
        """A good first fragment for a control: the best expected value in its bin."""
        return int(np.argmax(self.values[:, self.bins.nearest(control)]))

    def next_fragments(self, previous, controls) -> np.ndarray:
        """int [N]: the fragments after ``previous`` [N] under controls [N, 4] (vectorised)."""
        return self.table[np.asarray(previous), self.bins.nearest(np.asarray(controls, dtype=float).reshape(-1, 4))]

    def decide(self, state: State, command: Command):
        """The next fragment for the command's control (the best in its bin to start; steering to a
        heading over SHARP_OFF away asks the sharpest turn the bins hold); the memory is the fragment id."""
        far = command.heading is not None and abs(wrap(command.heading - state.yaw)) > SHARP_OFF
        control = command.local_control(state.yaw, self.bins.top_turn if far else MAX_TURN)
        f = self.first_fragment(control) if state.memory is None else int(self.table[state.memory,
                                                                                        self.bins.nearest(control)])
        rate = self.settings.warp_rate
        if command.heading is None or command.control[2] != 0 or rate <= 0 or self.turns is None:
            return Step.piece(int(self.clip[f]), int(self.start_frame[f]), self.n_frames, control), f
        # Facing a heading (not a turning stick's, whose rate the root follows): the fragment turns
        # its own way, and its facing by at most Warp Rate more.
        step = Step.piece(int(self.clip[f]), int(self.start_frame[f]), self.n_frames,
                          np.array([control[0], control[1], np.nan, control[3]]))
        step.edit = facing_warp(command.heading - state.yaw - self.turns[f], rate, self.n_frames / self.fps)
        return step, f

    def on_bind(self, table) -> None:
        """Each fragment's own turn (rad) over its frames in ``table``: what Warp Rate adds to
        (frames past its clip's end stand still, as the synthesis plays them)."""
        check_pieces(table, self.clip, self.start_frame + 1, "fragments")
        check_memory(24.0 * len(self.clip) * self.n_frames, "binding the fragment controller to its clips",
                     "train it again with a shorter Fragment Length")
        first, length = table.first[self.clip], table.length[self.clip]
        within = self.start_frame[:, None] + np.arange(self.n_frames)
        rows = first[:, None] + np.minimum(within, length[:, None] - 1)
        self.turns = np.where(within < length[:, None], table.motion[rows, 2], 0.0).sum(axis=1)

    def pieces(self, fragments) -> np.ndarray:
        """[K, 3] (clip, start frame, frame count) of fragment ids."""
        f = np.asarray(fragments, dtype=np.int64)
        return np.column_stack((self.clip[f], self.start_frame[f], np.full(len(f), self.n_frames)))


# ----------------------------------------------------------------------------- training

def training_traces(s: ControllerSettings, fs: FragmentSet) -> list:
    """The traces the user model learns from: files, the built-in players or a custom player,
    generated players scaled to the data's top speed, at the fragments' decision rate."""
    if s.traces == "files":
        if not s.trace_files:
            raise MotionctlError("Training Traces is Files but no trace file was given")
        return [read_trace(p) for p in s.trace_files]
    top = fs.top_speed()
    if s.traces == "custom":
        player = PlayerSettings("custom", s.player_speed or top, s.player_hold, s.player_reversal,
                                turn_chance=s.player_turns, jump_rate=s.player_jumps)
        players = [player]
    else:
        players = [scale_player(p, top) for p in TRAINING_PLAYERS]
    return player_traces(players, s.trace_seconds, fs.decision_rate, s.seed)


def evaluation_traces(fs: FragmentSet, count: int, seed: int, seconds: float = 10.0) -> list:
    """Held-out generated traces (another player, other seeds) to measure % of optimal on."""
    return player_traces([scale_player(EVALUATION_PLAYER, fs.top_speed())], seconds, fs.decision_rate, seed + 100,
                         count)


def fit(library, settings: ControllerSettings | None = None, *, progress=None, should_stop=None,
        cache: dict | None = None) -> FragmentController:
    """Train a fragment controller on the clips of ``library`` (see the module docstring)."""
    s = settings or ControllerSettings()
    cache = {} if cache is None else cache
    clips = clips_of(library)
    def step(lo, hi):
        return progress_range(progress, lo, hi)
    f = s.fragments
    key = (fingerprint(clips), f.length, f.stride, f.fps, f.mirror, tuple(s.quality.deltas), s.quality.successors)
    model = cache.get("fragments", {}).get(key)
    if model is not None and model.sparse and model.stutter_window != s.quality.stutter_window:
        model = None  # sparse successors leave stuttering jumps out when searched: search again
    # Shares of the job measured on the demo and CMU subject 16: the distances took 5-10% of the
    # time, the solve most of the rest; the held-out evaluation, when asked, 2-3%.
    solved = 0.97 if s.held_out > 0 else 1.0
    if model is None:
        model = FragmentModel.build(clips, s.fragments, s.quality, step(0.0, 0.1), should_stop)
        cache["fragments"] = {key: model}  # one fragment model in memory
    fs = model.fragments
    check_stop(should_stop, "training")
    traces = training_traces(s, fs)
    value_key = (key, s.policy.kind, s.policy.threshold, s.bins, s.traces)
    init = cache.get("values", {}).get(value_key)
    trained = train_controller(None, traces, s, model, init, step(0.1, solved), should_stop)
    cache["values"] = {value_key: trained.result.values}
    r = trained.result
    percent = std = None  # not measured
    if s.held_out > 0:
        held = evaluation_traces(fs, s.held_out, s.seed)
        res = evaluate_controllers(model, {"policy": r.table}, trained.bins, held, s.quality, {"opt": None},
                                   step(solved, 1.0), should_stop)
        percent, std = res["policy"]["mean"], res["policy"]["std"]
    summary = {"clips": len(clips), "fragments": fs.n, "bins": trained.bins.n, "kind": s.policy.kind,
               "improvements": r.improvements, "sweeps": r.sweeps, "hubs": r.hubs,
               "successors": model.successors_kept, "converged": bool(r.converged),
               "seconds": r.seconds, "warm": init is not None, "percent_of_optimal": percent,
               "percent_std": std, "training_traces": len(traces), "top_speed": fs.top_speed()}
    model = FragmentController(s, summary, [c.name for c in fs.clips], fs.fps, f.heading_smooth, r.table, r.values,
                              trained.bins, fs.clip, fs.start, fs.n_frames, fs.top_speed(75))
    model.remember(fs.clips)
    if progress is not None:
        progress(1.0, f"done: {r.improvements} improvements, {'converged' if r.converged else 'not converged'}")
    return model


__all__ = ["FragmentController", "Settings", "evaluation_traces", "fit", "training_traces"]
