"""Motion matching as an engine: the industry's default way to steer a character with capture
(Clavet 2016; Holden's open implementation), on the common interface so it is measured beside the
papers' controllers.

Every frame the character plays the next captured frame.  Every ``search_interval`` seconds, or
at once when the command changes sharply, it builds a query (the playing frame's feet and hip
velocity, and the trajectory the command predicts: ``springs.predict``) and searches the whole
database for the nearest frame (``features.Index``, exact); when that frame is not the one it is
about to play anyway (nor within ``ignore_near`` of it in the same clip), it jumps there.  A jump
is inertialized: the difference between the pose it would have shown and the new one (and
between their velocities) becomes an offset, decayed by a critically damped spring with half-life
``blend_halflife``, so the pose and its velocity stay continuous.  Each frame carries its captured
foot contacts, so the synthesis every engine plays through locks the planted feet
(``play.feet``).

Jump and actions: clips tagged with an action are searched only while it is asked for (the jump
button, or ``Command.action``), and then only their lead-ins (``ACTION_LEAD`` before an action
centre); once entered, the action plays until ``ACTION_AFTER`` past its centre.

Everything the memory holds is in the root frame of the last frame played, so a memory means the
same wherever the character stands (certification replays memories from the origin).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, fields

import numpy as np

from ... import quat
from ...errors import MotionctlError
from ...jobs import check_stop
from ...rootframe import facing_warp, to_local, to_world, wrap, yaw_of
from ...play.session import State
from ...play.commands import DEFAULT_SPEED, Command
from ...settings import setting
from ...tags import canonical
from ...play.synth import Frames, Step, frame_table
from ..base import Model, clips_of, working_set
from ..schema import Array, Table
from . import springs
from .features import (BLOCKS, POSE_DIMS, SEARCHES, TIMES, Index, Rows, normalisation, raw_features, row_info)

SHARP_SPEED = 0.5  # m/s: a change of the wanted velocity this big searches at once
TURN_LOOK = 0.5  # s: a turning rate asks to face where it would turn in this time
CERTIFY_BUCKET = 0.5  # s: certification's entry states are the captured clips' half-seconds


@dataclass
class MatchingSettings:
    """Feature weights, search, blending, trajectory prediction and foot locking."""

    foot_position: float = setting(0.75, "Foot Positions", "Weight of both feet's positions in the match",
                                   min=0.0, max=10.0, group="Features")
    foot_velocity: float = setting(1.0, "Foot Velocities", "Weight of both feet's velocities", min=0.0, max=10.0,
                                   group="Features")
    hip_velocity: float = setting(1.0, "Hip Velocity", "Weight of the hips' velocity", min=0.0, max=10.0,
                                  group="Features")
    trajectory_position: float = setting(1.0, "Trajectory Positions", "Weight of where the character will be "
                                         "in 1/3, 2/3 and 1 s", min=0.0, max=10.0, group="Features")
    trajectory_direction: float = setting(1.5, "Trajectory Directions", "Weight of which way it will face then",
                                          min=0.0, max=10.0, group="Features")
    search_interval: float = setting(0.1, "Search Every", "Seconds between searches (a sharp change of the "
                                     "command searches at once)", min=1 / 60, max=1.0, unit="TIME", group="Search")
    sharp_turn: float = setting(float(np.radians(30.0)), "Sharp Turn", "A change of the wanted direction this big "
                                "(or of the wanted speed by 0.5 m/s) searches at once", min=0.0, max=np.pi,
                                unit="ROTATION", group="Search")
    search: str = setting("kdtree", "Search Structure", "How the nearest frame is found (all give the same frame; "
                          "the k-d tree was the fastest in bench_scoreboard)",
                          choices=SEARCHES, group="Search")
    ignore_near: float = setting(0.25, "Skip Nearby", "A best frame this close (s) to the one about to play, in "
                                 "the same clip, is no jump", min=0.0, max=2.0, unit="TIME", group="Search",
                                 ui=False)
    end_margin: float = setting(0.3, "End Margin", "The last seconds of each clip are never jumped to (nor "
                                "Skip Nearby before them: a jump plays on at least that long)", min=0.05,
                                max=2.0, unit="TIME", group="Search", ui=False)
    blend_halflife: float = setting(0.1, "Blend Half-life", "Inertialization: how fast the difference left by a "
                                    "jump dies away (s)", min=0.01, max=1.0, unit="TIME", group="Blending")
    velocity_halflife: float = setting(0.27, "Velocity Response", "Half-life (s) of the spring that turns the "
                                       "command into the predicted trajectory's velocity", min=0.02, max=2.0,
                                       unit="TIME", group="Trajectory")
    rotation_halflife: float = setting(0.27, "Turn Response", "Half-life (s) of the spring for its facing",
                                       min=0.02, max=2.0, unit="TIME", group="Trajectory")
    warp_rate: float = setting(np.radians(90.0), "Warp Rate", "The facing may also turn toward the predicted trajectory's by "
                               "up to this much per second beyond what the playing frame turns (a game's root "
                               "adjustment: capture with few turns still turns); 0: as captured",
                               min=0.0, max=np.pi, unit="ROTATION", group="Trajectory")
    mirror: bool = setting(True, "Mirror Clips", "Add left/right mirrored clips (turns both ways)", group="Data")
    fps: float = setting(30.0, "Rate", "Frames per second of the database", min=10.0, max=120.0, group="Data",
                         ui=False)

    def weights(self) -> np.ndarray:
        return np.array([getattr(self, b) for b in BLOCKS], dtype=float)


@dataclass(eq=False)
class MatchMemory:
    """The character's matching state, in the root frame of the last frame played.

    row: table row playing; since: seconds since the last search; commit: row until which an
    action plays (-1: none); goal [3]: the wanted velocity (2) and facing (rad) at the last search;
    off_*: inertialization offsets and their velocities (joint rotation vectors [J, 3], root
    height [1], root motion per frame [3]); sim_*: the simulated velocity, acceleration [2],
    facing (rad, relative) and turning rate the trajectory is predicted from; entered: the row the
    piece playing began at (its last jump's, or the start), which a search never jumps back into."""

    row: int
    since: float
    commit: int
    goal: np.ndarray
    off_rot: np.ndarray
    off_rot_v: np.ndarray
    off_h: np.ndarray
    off_h_v: np.ndarray
    off_m: np.ndarray
    off_m_v: np.ndarray
    sim_v: np.ndarray
    sim_a: np.ndarray
    sim_face: float
    sim_w: float
    entered: int = -1

    def __eq__(self, other) -> bool:
        if not isinstance(other, MatchMemory):
            return NotImplemented
        return all(np.array_equal(getattr(self, f.name), getattr(other, f.name)) for f in fields(self))

    def copy(self) -> "MatchMemory":
        return MatchMemory(**{f.name: np.array(v, copy=True) if isinstance(v := getattr(self, f.name), np.ndarray)
                              else v for f in fields(self)})


class MatchingModel(Model):
    """Normalised features of every captured frame and the matching loop (see the module docstring)."""

    engine = "matching"
    absent_settings = {"warp_rate": 0.0}  # a file saved before Warp Rate plays without it
    Settings = MatchingSettings
    schema = {"features": Array("f", 2), "offset": Array("f", 1), "scale": Array("f", 1, finite=False, like="offset")}
    bytes_per_second = 16 << 10  # 7 KB per second of capture at the defaults (27 features per frame)
    header = Table({})  # it keeps nothing in the header's "model" (its figures are the summary's)

    def __init__(self, settings: MatchingSettings, summary, clip_names, fps, heading_smooth, features, offset,
                 scale):
        super().__init__(settings, summary, clip_names, fps, heading_smooth)
        self.features = np.asarray(features, dtype=np.float64)
        self.offset = np.asarray(offset, dtype=np.float64)
        self.scale = np.asarray(scale, dtype=np.float64)
        self.decision_rate = float(fps)
        self.typical_speed = float(self.info.get("typical_speed", 1.3))
        self.table = None
        self.indexes = {}

    def check(self) -> None:
        """One offset and scale per feature (positive: infinite drops a feature), and normalised
        features that are finite numbers."""
        d = self.features.shape[1]
        if self.offset.shape != (d,) or np.any(self.scale <= 0):
            raise MotionctlError(f"its {d} features need {d} offsets and positive scales, found {self.offset.shape[0]}")
        with np.errstate(all="ignore"):
            x = (self.features - self.offset) / self.scale
        if not np.isfinite(x[:, np.isfinite(self.scale)]).all():
            raise MotionctlError("its features overflow once normalised (a damaged offset or scale)")

    # --- storage

    def arrays(self):
        return {}, {"features": self.features.astype(np.float32), "offset": self.offset,
                                             "scale": self.scale}

    @classmethod
    def from_archive(cls, base, meta, z):
        return cls(base["settings"], base["summary"], base["clip_names"], base["fps"], base["heading_smooth"],
                   np.asarray(z["features"]), np.asarray(z["offset"]), np.asarray(z["scale"]))

    # --- the database

    def on_bind(self, table) -> None:
        work = table.clips
        if table.n_frames != len(self.features):  # other motion of the same names: ``Model.frame_table``
            self.table = self.frames = None
            raise MotionctlError("these clips differ from the ones motion matching was trained on: train it again")
        s = self.settings
        self.table = table
        self.rows: Rows = row_info(work, table, s.end_margin, s.ignore_near)
        rot = table.local_rot
        first = np.zeros(table.n_frames, dtype=bool)
        first[table.first] = True
        prev = np.where(first, np.arange(table.n_frames) + 1, np.arange(table.n_frames) - 1)
        prev = np.minimum(prev, table.n_frames - 1)
        sign = np.where(first, -1.0, 1.0)  # a clip's first frame: its velocity is the next frame's
        self.ang_vel = (sign[:, None, None] * quat.log(quat.mul(rot, quat.conj(rot[prev]))) * table.fps
                        ).astype(np.float64)
        self.h_vel = sign * (table.height - table.height[prev]) * table.fps
        self.m_vel = sign[:, None] * (table.motion - table.motion[prev]) * table.fps
        self.x = (self.features - self.offset) / self.scale
        self.x[:, ~np.isfinite(self.scale)] = 0.0
        self.indexes = {}

    def _need(self):
        if self.table is None:
            raise MotionctlError("motion matching plays on no clips yet: bind it to its frame table (Model.play(clips))")
        return self.table

    def index(self, kind: int, entries: bool = False) -> Index:
        """The search over locomotion (kind 0) or one action's lead-ins (``entries``)."""
        key = (kind, entries)
        if key not in self.indexes:
            r = self.rows
            ok = r.searchable & (r.kind == kind) & (r.entry if entries else r.lands)
            if kind == 0 and not ok.any():  # a library of action clips only: search them all
                ok = r.searchable
            self.indexes[key] = Index(self.x, np.flatnonzero(ok), self.settings.search)
        return self.indexes[key]

    # --- memory

    def memory_at(self, row: int) -> MatchMemory:
        """Memory of a character playing table row ``row`` at its captured speed."""
        table, r = self._need(), int(row)
        j = table.local_rot.shape[1]
        v = table.motion[r, :2] * table.fps
        return MatchMemory(r, 0.0, -1, np.array([v[0], v[1], 0.0]), np.zeros((j, 3)), np.zeros((j, 3)), np.zeros(1),
                           np.zeros(1), np.zeros(3), np.zeros(3), v.copy(), np.zeros(2), 0.0,
                           float(table.motion[r, 2] * table.fps), r)

    def start(self, table, frame: int):
        self._need()
        return self.memory_at(min(max(int(frame), 0), table.n_frames - 1))

    def memory_key(self, memory):
        """The clip and half-second playing (certification's entries)."""
        table = self._need()
        c = int(self.rows.clip[memory.row])
        return c, int(memory.row - table.first[c]) // max(1, round(CERTIFY_BUCKET * table.fps))

    # --- deciding

    def goal(self, yaw: float, command: Command) -> tuple[np.ndarray, float]:
        """(wanted velocity [2] in the character's frame, wanted facing relative to it) for a command:
        a heading at its speed (else the stick's, else a walk), or the stick as given, turned by its
        turning rate over TURN_LOOK seconds; the facing follows the travel (a stick at rest: the
        turning rate's)."""
        c = command.control
        if command.heading is not None:
            speed = command.speed if command.speed is not None else (float(np.hypot(*c[:2])) or DEFAULT_SPEED)
            face = float(wrap(command.heading - yaw))
            return to_world(np.array([0.0, speed]), face), face
        turn = float(c[2]) * TURN_LOOK
        v = to_world(c[:2], turn)
        if command.speed is not None and np.hypot(*v) > 1e-9:
            v = v / np.hypot(*v) * command.speed
        face = float(yaw_of(v)) if np.hypot(*v) > 1e-6 else turn
        return v, face

    def query(self, memory: MatchMemory, row: int, goal_v, goal_face) -> np.ndarray:
        """The normalised query: row ``row``'s pose features and the predicted trajectory."""
        s = self.settings
        pos, dirs = springs.predict(memory.sim_v, memory.sim_a, goal_v, memory.sim_face, memory.sim_w, goal_face,
                                    np.asarray(TIMES), s.velocity_halflife, s.rotation_halflife)
        raw = np.concatenate((self.features[row, :POSE_DIMS], pos.ravel(), dirs.ravel()))
        q = (raw - self.offset) / self.scale
        q[~np.isfinite(self.scale)] = 0.0
        q[:POSE_DIMS] = self.x[row, :POSE_DIMS]
        return q

    def decide(self, state: State, command: Command):
        """One frame: the next captured frame, or the nearest to the query when a search is due."""
        table, s, r = self._need(), self.settings, self.rows
        goal_v, goal_face = self.goal(state.yaw, command)
        m = state.memory.copy() if state.memory is not None else self._first(goal_v, goal_face)
        dt = 1.0 / table.fps
        nxt = m.row + 1
        ended = nxt > r.last[m.row] or not r.searchable[min(nxt, table.n_frames - 1)]
        held = nxt > r.last[m.row]
        if held:
            nxt = m.row  # a clip's last frame holds (standing still) until the search below leaves it
        committed = 0 <= m.commit and nxt <= m.commit and r.clip[nxt] == r.clip[m.commit]
        sharp = (np.hypot(*(goal_v - m.goal[:2])) > SHARP_SPEED
                 or abs(float(wrap(goal_face - m.goal[2]))) > s.sharp_turn)
        kind = self.asked(command)
        m.since += dt
        for off, vel in (("off_rot", "off_rot_v"), ("off_h", "off_h_v"), ("off_m", "off_m_v")):
            x, v = springs.decay(getattr(m, off), getattr(m, vel), s.blend_halflife, dt)
            setattr(m, off, x)
            setattr(m, vel, v)
        jumped = False
        start_action = kind > 0 and r.kind[nxt] != kind
        if ended or (not committed and (sharp or start_action or m.since >= s.search_interval - 1e-9)):
            best = self._search(m, nxt, goal_v, goal_face, kind, ended)
            if best >= 0:
                self._transition(m, nxt, best)
                m.entered = best
                nxt, jumped, held = best, True, False
            m.since, m.goal = 0.0, np.array([goal_v[0], goal_v[1], goal_face])
        if not committed and m.commit >= 0 and not (nxt <= m.commit and r.clip[nxt] == r.clip[m.commit]):
            m.commit = -1
        m.row = nxt
        rot = quat.normalize(quat.mul(quat.exp(m.off_rot), table.local_rot[nxt]))
        height = table.height[nxt] + m.off_h[0]
        motion = (0.0 if held else table.motion[nxt]) + m.off_m  # a held pose does not glide
        if s.warp_rate > 0:  # turn toward the simulated facing, beyond the frame's own turn
            motion = motion.copy()
            motion[2] += facing_warp(m.sim_face - motion[2], s.warp_rate, dt)[2]
        self._simulate(m, goal_v, goal_face, motion, dt)
        return Step(frames=Frames(rot[None], np.array([height]), motion[None], table.contact[nxt][None]),
                    switch=jumped), m

    def _first(self, goal_v, goal_face) -> MatchMemory:
        """The model's own start for a first command: the locomotion frame whose trajectory best
        matches it, met at its goal velocity."""
        idx = self.index(0)
        m = self.memory_at(int(idx.rows[0]))
        m.sim_v, m.sim_face, m.sim_w = np.asarray(goal_v, float).copy(), float(goal_face), 0.0
        q = self.query(m, int(idx.rows[0]), goal_v, goal_face)
        q[:POSE_DIMS] = 0.0  # any pose: the mean one
        row, _ = idx.nearest(q)
        m = self.memory_at(row)
        m.sim_v, m.sim_face = np.asarray(goal_v, float).copy(), float(goal_face)
        m.goal = np.array([goal_v[0], goal_v[1], goal_face])
        return m

    def asked(self, command: Command) -> int:
        """The kind of clip the command asks for: an action the data has (the jump button, or
        ``Command.action``), else 0 (locomotion)."""
        asked = "jump" if command.control[3] > 0.5 else canonical(command.action) if command.action else ""
        return self.rows.kinds.index(asked) if asked and asked in self.rows.kinds else 0

    def _search(self, m: MatchMemory, nxt: int, goal_v, goal_face, kind: int, ended: bool) -> int:
        """The row to jump to, or -1 to play on."""
        r, table = self.rows, self.table
        q = self.query(m, nxt, goal_v, goal_face)
        if kind and r.kind[nxt] != kind:  # enter the action at the best of its lead-ins
            best, _ = self.index(kind, entries=True).nearest(q)
            if best >= 0:
                m.commit = int(r.commit[best])
                return best
        idx = self.index(r.kind[nxt] if kind and r.kind[nxt] == kind else 0)
        natural = np.inf if ended else float(np.sum((self.x[nxt] - q) ** 2))
        near = max(0, int(round(self.settings.ignore_near * table.fps)))
        # A clip that ended is left: its last frames are never chosen again (chosen, the held frame
        # stood still while the root glided on at its speed, for as long as the query stayed put).
        skip = (max(int(table.first[r.clip[nxt]]), nxt - near), nxt) if ended else (0, -1)
        if not ended and 0 <= m.entered < nxt - near and r.clip[m.entered] == r.clip[nxt]:
            # nor back into the piece playing: where no captured motion answers the stick it looped
            # it (12 frames of a turn on the spot, three times a second)
            skip = (m.entered, nxt - near - 1)
        best, _ = idx.nearest(q, natural, skip)
        if best < 0 or (not ended and r.clip[best] == r.clip[nxt] and abs(best - nxt) <= near):
            return -1
        if ended and (best + 1 > r.last[best] or not r.searchable[best + 1]):
            return -1  # from one clip's end to another's (a stop's mirror image, say): play this one out
        return best

    def _transition(self, m: MatchMemory, src: int, dst: int) -> None:
        """Inertialize a jump from row ``src`` (what would have played) to ``dst``: the offsets
        become what makes ``dst`` look like ``src`` with its offsets, in pose and velocity."""
        t = self.table
        shown = quat.mul(quat.exp(m.off_rot), t.local_rot[src])
        m.off_rot = quat.log(quat.mul(shown, quat.conj(t.local_rot[dst])))
        m.off_rot_v = m.off_rot_v + self.ang_vel[src] - self.ang_vel[dst]
        m.off_h = m.off_h + t.height[src] - t.height[dst]
        m.off_h_v = m.off_h_v + self.h_vel[src] - self.h_vel[dst]
        m.off_m = m.off_m + t.motion[src] - t.motion[dst]
        m.off_m_v = m.off_m_v + self.m_vel[src] - self.m_vel[dst]

    def _simulate(self, m: MatchMemory, goal_v, goal_face, motion, dt) -> None:
        """Advance the simulated trajectory one frame toward the goal, then carry every vector the
        memory holds into the new root frame (moved by ``motion``)."""
        s = self.settings
        _, v, a = springs.velocity_spring(m.sim_v, m.sim_a, np.asarray(goal_v, float), s.velocity_halflife, dt)
        face, w = springs.angle_spring(m.sim_face, m.sim_w, goal_face, s.rotation_halflife, dt)
        turn = float(motion[2])
        m.sim_v, m.sim_a = to_local(v, turn), to_local(a, turn)
        m.sim_face, m.sim_w = float(wrap(face - turn)), float(w)
        m.goal = np.array([*to_local(m.goal[:2], turn), float(wrap(m.goal[2] - turn))])


def fit(library, settings: MatchingSettings | None = None, *, progress=None, should_stop=None,
        cache: dict | None = None) -> MatchingModel:
    """Motion matching's database of ``library``'s clips: every frame's features and their
    normalisation (seconds: there is nothing else to learn)."""
    t0 = time.perf_counter()
    s = settings or MatchingSettings()
    if not np.any(s.weights() > 0):
        raise MotionctlError("every feature weight is 0: motion matching needs at least one")
    clips = clips_of(library)
    if progress is not None:
        progress(0.0, "resampling the clips")
    work = working_set(clips, s.fps, s.mirror)
    names = [c.name for c in work]
    raw = []
    for i, c in enumerate(work):
        if i % 8 == 0:
            check_stop(should_stop, "motion matching")
            if progress is not None:
                progress(RESAMPLED + (FEATURED - RESAMPLED) * i / len(work), f"features of {c.name}")
        raw.append(raw_features(c))
    if progress is not None:
        progress(FEATURED, "the frames' table")
    raw = np.concatenate(raw)
    offset, scale = normalisation(raw, s.weights())
    table = frame_table(work, work[0].skeleton, 0.2)
    # The features as saved (float32): a model plays the same before and after saving (a near tie
    # between two frames went one way in memory and the other once loaded).
    model = MatchingModel(s, {}, names, s.fps, 0.2, raw.astype(np.float32), offset, scale)
    model.remember(work)
    if progress is not None:
        progress(TABLED, "the search's rows")
    model.bind(table)
    rows = model.rows
    speed = np.hypot(table.motion[:, 0], table.motion[:, 1]) * s.fps
    loco = rows.searchable & (rows.kind == 0)
    if not rows.searchable.any():
        raise MotionctlError(f"every clip is shorter than the End Margin ({s.end_margin} s): nothing to jump to")
    model.info = {"frames": int(table.n_frames), "searchable": int(loco.sum()), "clips": len(clips),
                  "seconds_of_capture": float(table.n_frames / s.fps), "feature_dims": int(raw.shape[1]),
                  "actions": rows.kinds[1:], "typical_speed": float(np.median(speed[loco])) if loco.any() else 1.3,
                  "top_speed": float(np.percentile(speed[loco], 95)) if loco.any() else 2.0,
                  "feature_bytes": int(raw.astype(np.float32).nbytes), "seconds": time.perf_counter() - t0}
    model.typical_speed = float(model.info["typical_speed"])
    if progress is not None:
        progress(1.0, f"done: {model.info['frames']} frames")
    return model


# Shares of the job done after resampling, the features, the frames' table (measured on CMU subject 16).
RESAMPLED, FEATURED, TABLED = 0.05, 0.45, 0.8


__all__ = ["MatchMemory", "MatchingModel", "MatchingSettings", "fit"]
