"""A tiny engine for tests: one folder's worth of code and one registry line, to prove that the command
line, the panels, the operators and the contract test need no other edit for a new engine.

It plays half-second pieces of its clips: at each decision the next piece of the clip it plays, or,
when that clip ends or the command turns, the piece whose heading change is closest to the
command's.  (Not a controller anyone would ship: the smallest that follows the interface honestly.)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from motionctl.engines.base import Engine, Model, clips_of, working_set
from motionctl.play.synth import Step
from motionctl.rootframe import wrap
from motionctl.settings import setting


@dataclass
class TinySettings:
    fps: float = setting(30.0, "Frame Rate", "Frames per second it plays its clips at", min=5.0, max=120.0)
    piece: float = setting(0.5, "Piece", "Seconds each decision plays", min=0.1, max=2.0, unit="TIME")


class TinyModel(Model):
    engine = "tiny"
    Settings = TinySettings

    def arrays(self):
        return {}, {"piece": np.array([self.settings.piece])}

    @classmethod
    def from_archive(cls, base, meta, z):
        return cls(base["settings"], base["summary"], base["clip_names"], base["fps"], base["heading_smooth"])

    @property
    def decision_rate(self) -> float:
        return 1.0 / self.settings.piece

    def start(self, table, frame: int):
        clip = int(np.searchsorted(table.first, frame, side="right") - 1)
        return clip, int(frame - table.first[clip])

    def decide(self, state, command):
        t = self.frames
        n = max(2, int(round(self.settings.piece * t.fps)))
        want = float(wrap(command.desired_heading(state.yaw, 0.0) - state.yaw))  # the heading as it is now
        if state.memory is not None:
            clip, at = state.memory
            if at + 2 * n <= t.length[clip] and abs(want) < 0.3:
                return Step.piece(clip, at + n, n), (clip, at + n)
        starts = [(c, s) for c in range(len(t.first)) for s in range(0, int(t.length[c]) - n, n)]
        turn = np.array([t.yaw[t.first[c] + s + n - 1] - t.yaw[t.first[c] + s] for c, s in starts])
        clip, at = starts[int(np.argmin(np.abs(wrap(turn - want))))]
        return Step.piece(clip, at, n), (clip, at)


def fit(library, settings: TinySettings | None = None, *, progress=None, should_stop=None, cache=None) -> TinyModel:
    s = settings or TinySettings()
    work = working_set(clips_of(library), s.fps, False)
    model = TinyModel(s, {"clips": len(work), "seconds": 0.0}, [c.name for c in work], s.fps, 0.2)
    model.remember(work)
    return model


ENGINE = Engine("tiny", "Tiny", "Plays half-second pieces of its clips (a test engine)", "none", TinySettings, fit,
                TinyModel, summary=(("clips", "clips", "{:d}"),), quick={"piece": 0.4})
