"""Mirroring, cutting clips into short fragments, and each fragment's evident control.

Paper 000 (McCann & Pollard 2007): fragments 0.1 s long start every 0.05 s in every clip; each
is annotated with the control it evidently performs, Ev(f) = (ground velocity of the centre of
mass in the character's frame, turning rate, airborne flag).  Control vectors throughout are
``[vx, vy, turn, airborne]``: m/s to the character's right, m/s forward, rad/s (+ = left), 0/1.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ... import quat
from ...arrays import same_everywhere_matmul
from ...jobs import check_stop
from ...body import ContactSettings, foot_contacts
from ..base import working_set
from ...clip import Clip, MotionDatabase
from ...rootframe import root_frame, to_local
from ...skeleton import Skeleton, forward_kinematics
from ...errors import MotionctlError
from ...settings import internal, setting
from ...play.commands import CONTROL_COLUMNS  # noqa: F401  (the columns fragments' controls have)
from ...play.synth import frame_table



@dataclass
class FragmentSettings:
    """How clips are cut.  Lengths in seconds; ``fps`` is the working rate clips are resampled to."""

    length: float = setting(0.1, "Fragment Length", "Seconds each fragment plays: the controller reacts this often",
                            min=0.05, max=1.0, unit="TIME", group="Fragments")
    stride: float = setting(0.05, "Stride", "A new fragment starts every this many seconds in every clip",
                            min=0.01, max=1.0, unit="TIME", group="Fragments")
    fps: float = internal(60.0, min=10.0, max=240.0)
    mirror: bool = setting(True, "Mirror Clips", "Add left/right mirrored copies (doubles the fragments, balances "
                           "turns)", group="Fragments")
    heading_smooth: float = internal(0.2, min=0.0, max=5.0)
    min_flight: float = internal(0.2, min=0.0, max=5.0)  # s without a planted foot that counts as airborne (running strides: ~0.1)
    contacts: ContactSettings = field(default_factory=ContactSettings)

    def frames(self) -> tuple[int, int]:
        """(frames per fragment, frames between fragment starts) at the working rate."""
        n = int(round(self.length * self.fps))
        s = int(round(self.stride * self.fps))
        if n < 4:
            raise MotionctlError(f"fragment length {self.length:g} s is {n} frames at {self.fps:g} fps; "
                                 "motion quality needs at least 4 poses per fragment")
        if s < 1:
            raise MotionctlError(f"fragment stride {self.stride:g} s is under one frame at {self.fps:g} fps")
        return n, s

    def check(self) -> None:
        self.frames()


@dataclass(eq=False)
class FragmentSet:
    """All fragments of a set of clips.

    clips     working-rate clips (mirrored copies included), indexed by ``clip``
    clip      int [F] source clip of each fragment; start int [F] its first frame
    n_frames  poses per fragment; stride frames between fragment starts
    control   [F, 4] evident control (vx, vy, turn, airborne)
    """

    settings: FragmentSettings
    skeleton: Skeleton
    clips: list
    clip: np.ndarray
    start: np.ndarray
    n_frames: int
    stride: int
    control: np.ndarray

    @property
    def n(self) -> int:
        return len(self.clip)

    @property
    def fps(self) -> float:
        return self.settings.fps

    @property
    def decision_rate(self) -> float:
        """Decisions per second: a new fragment is chosen when the current one has played."""
        return self.settings.fps / self.n_frames

    def frame_table(self):
        """Root-frame data of the working clips (built once), for quality and synthesis."""
        if getattr(self, "_table", None) is None:
            self._table = frame_table(self.clips, self.skeleton, self.settings.heading_smooth)
        return self._table

    def pieces(self, fragments) -> np.ndarray:
        """[K, 3] (clip, start frame, frame count) of fragment ids, for ``motionctl.play.synth``."""
        f = np.asarray(fragments, dtype=np.int64)
        return np.column_stack((self.clip[f], self.start[f], np.full(len(f), self.n_frames)))

    def top_speed(self, percentile: float = 95.0) -> float:
        """The data's top ground speed (m/s): a percentile of the fragments' evident speeds, so a
        few glitches do not set it.  Players' full-stick speed and certification use it."""
        return float(np.percentile(np.linalg.norm(self.control[:, :2], axis=1), percentile))

    def continuation(self) -> np.ndarray:
        """int [F]: the fragment that naturally follows each one in its clip (-1 at clip ends)."""
        if self.n == 0:
            return np.zeros(0, dtype=np.int64)
        key = self.clip.astype(np.int64) * (int(self.start.max()) + self.n_frames + 1) + self.start
        order = np.argsort(key, kind="stable")
        want = key + self.n_frames
        at = np.minimum(np.searchsorted(key[order], want), self.n - 1)
        return np.where(key[order][at] == want, order[at], -1)


def centre_of_mass(clip: Clip) -> np.ndarray:
    """[F, 3] centre of mass estimate: bone midpoints weighted by bone length."""
    pos, _ = clip.world()
    sk = clip.skeleton
    child = np.arange(1, sk.n_joints)
    length = np.linalg.norm(sk.offsets[child], axis=1)
    if length.sum() <= 0:
        return pos[:, 0]
    mid = 0.5 * (pos[:, child] + pos[:, sk.parents[child]])
    return same_everywhere_matmul(np.moveaxis(mid, 1, -1), (length / length.sum())[:, None])[..., 0]  # [F, 3]


def evident_control(clip: Clip, starts: np.ndarray, n_frames: int, settings: FragmentSettings | None = None) -> np.ndarray:
    """[K, 4] evident control of the fragments starting at ``starts`` (``n_frames`` poses each).

    Velocity: centre-of-mass ground displacement from the first to one past the last pose,
    in the root frame at the fragment's middle; turning rate from the smoothed heading;
    airborne when no foot is planted for most of the fragment.
    """
    s = settings or FragmentSettings()
    com = centre_of_mass(clip)
    _, yaw = root_frame(clip, s.heading_smooth)
    contacts = foot_contacts(clip, s.contacts)
    last = clip.n_frames - 1
    a = np.asarray(starts)
    b = np.minimum(a + n_frames, last)
    a = np.minimum(a, b - 1) if last > 0 else a
    dt = np.maximum(b - a, 1) / clip.fps
    d = com[b, :2] - com[a, :2]
    v = to_local(d, 0.5 * (yaw[a] + yaw[b])) / dt[:, None]
    vx, vy = v[:, 0], v[:, 1]
    turn = (yaw[b] - yaw[a]) / dt
    # Airborne: most of the fragment's poses are in a flight lasting longer than
    # ``min_flight`` (a jump), not the brief flight phase of every running stride.
    flying = flights(~contacts.any(axis=1), int(round(s.min_flight * clip.fps)))
    planted = (~flying).astype(float)
    csum = np.concatenate(([0.0], np.cumsum(planted)))
    end = np.minimum(np.asarray(starts) + n_frames, clip.n_frames)
    frac_planted = (csum[end] - csum[np.asarray(starts)]) / np.maximum(end - np.asarray(starts), 1)
    airborne = (frac_planted < 0.5).astype(float)
    return np.column_stack((vx, vy, turn, airborne))


def flights(off_ground: np.ndarray, min_frames: int) -> np.ndarray:
    """bool [F]: frames inside runs of ``off_ground`` at least ``min_frames`` long."""
    x = np.concatenate(([False], off_ground, [False])).astype(np.int8)
    edges = np.diff(x)
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    keep = (ends - starts) >= min_frames
    mark = np.zeros(len(off_ground) + 1, dtype=np.int64)
    np.add.at(mark, starts[keep], 1)
    np.add.at(mark, ends[keep], -1)
    return np.cumsum(mark)[:-1] > 0


def cut_fragments(source, settings: FragmentSettings | None = None, progress=None, should_stop=None) -> FragmentSet:
    """Cut every clip of ``source`` (a MotionDatabase or a list of clips on one skeleton) into
    fragments, after resampling to the working rate and adding mirrored copies."""
    s = settings or FragmentSettings()
    n, stride = s.frames()
    clips = list(source.clips if isinstance(source, MotionDatabase) else source)
    if not clips:
        raise MotionctlError("no clips to cut into fragments: select at least one clip")
    skeleton = source.skeleton if isinstance(source, MotionDatabase) else clips[0].skeleton
    work = working_set(clips, s.fps, s.mirror)
    frag_clip, frag_start, controls = [], [], []
    for i, c in enumerate(work):
        check_stop(should_stop, "cutting fragments")
        if c.n_frames < n:
            continue
        starts = np.arange(0, c.n_frames - n + 1, stride)
        frag_clip.append(np.full(len(starts), i))
        frag_start.append(starts)
        controls.append(evident_control(c, starts, n, s))
        if progress is not None:
            progress((i + 1) / len(work), f"fragments of {c.name}")
    if not frag_clip:
        raise MotionctlError(f"every clip is shorter than one fragment ({s.length} s)")
    return FragmentSet(s, skeleton, work, np.concatenate(frag_clip), np.concatenate(frag_start), n, stride,
                       np.concatenate(controls))


# ----------------------------------------------------------------------------- poses for quality

def tip_joints(skeleton: Skeleton, min_length: float = 0.01) -> np.ndarray:
    """Joints whose position is a bone tip worth comparing: the root and every joint more than
    ``min_length`` metres from its parent (zero-length joints duplicate their parent)."""
    keep = np.linalg.norm(skeleton.offsets, axis=1) > min_length
    keep[0] = True
    return np.flatnonzero(keep)


def tips_of(skeleton: Skeleton, local_rot: np.ndarray, height: np.ndarray, offsets: np.ndarray,
            end_offsets: np.ndarray, joints: np.ndarray) -> np.ndarray:
    """[K, B, 3] bone-tip positions of root-frame poses (root above the origin)."""
    root = np.zeros((len(height), 3))
    root[:, 2] = height
    pos, rot = forward_kinematics(skeleton, root, local_rot, offsets=offsets)
    p = skeleton.end_parent
    ends = pos[:, p] + quat.rotate(rot[:, p], end_offsets)
    return np.concatenate((pos[:, joints], ends), axis=1)
