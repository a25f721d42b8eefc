"""Feet on the floor: one planted-foot detector (``foot_contacts``) and the one skating measure
(``skating``) every part of the program uses (the floor itself is the body's: ``Body.floor``): the
scoreboard and the Compare box, the retarget's report, the engines' cuts and foot locking.

A foot is seen by up to three points: its ankle (standing in for the heel), its toe joint (the
ball) and the toe's end site (the tip), so a rolling foot always has a point that stays put: the
heel at heel strike, the ball on the flat foot, the tip at toe-off.  Each point is *low* within
``height_on`` of its own planted height (a low percentile of its heights: skeletons put the ankle
5-10 cm above the sole), with hysteresis (it stays low until it rises above ``height_off``).  A low
point *lands* when it is also slower than ``speed_on``, or when it has stayed low and slower than
``speed_max`` for ``settle`` seconds: a foot dragged over the floor is on it however fast it slides,
while a swinging foot, which skims the floor by 1-4 cm at 2-4 m/s for a few hundredths of a second,
is not.  A landed point stays in contact while it is low and slower than ``speed_max``.  A foot is
in contact when any of its points is.

Skating, as the literature measures it (the foot-skate ratio of Karunratanakul et al., "Guided
Motion Diffusion", ICCV 2023: the share of frames whose foot in contact slides more than 2.5 cm in
a 20 Hz frame, i.e. 0.5 m/s): the share of contact frames whose contact point (the slowest of the
foot's points in contact, over ``window`` seconds) moves faster than ``skate_speed`` over the
ground, leaving out the first and last ``edge`` seconds of each contact (the foot landing and
lifting: a point at the ground then moves by definition).  Calibrated on the capture in
``../shared/mocap`` at these defaults: 1-3% of contact frames of clean capture skate (every set:
CMU 16, other CMU subjects, the CC rigs), 33-43% with the root drifting at 0.5 m/s and 99% at 1
m/s.  With it, the sliding distance of each contact (cm the contact point travels over the ground
while the foot is down, its edges left out) and the share of foot-frames in contact.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..clip import Clip
from ..settings import internal
from ..skeleton import end_site_positions
from .body import Body


@dataclass
class ContactSettings:
    """How a planted foot is told from a moving one (metres above each point's planted height,
    metres per second, seconds); see the module docstring."""

    height_on: float = internal(0.025, min=0.0, max=1.0)
    height_off: float = internal(0.04, min=0.0, max=1.0)
    speed_on: float = internal(0.5, min=0.0, max=20.0)
    speed_max: float = internal(2.0, min=0.0, max=50.0)
    settle: float = internal(0.15, min=0.0, max=5.0)
    window: float = internal(0.05, min=0.0, max=5.0)
    rest_percentile: float = internal(5.0, min=0.0, max=100.0)
    skate_speed: float = internal(0.5, min=0.0, max=20.0)
    edge: float = internal(0.05, min=0.0, max=5.0)


# --------------------------------------------------------------------------- the feet's points

def foot_point_joints(skeleton) -> tuple[np.ndarray, np.ndarray]:
    """(joints [2, 2] (left, right) x (ankle, toe), end sites [2] (each toe's first end site, -1
    for none)): the points ``foot_points`` reads."""
    feet = Body.of(skeleton).feet
    joints = np.array([feet["L"], feet["R"]], dtype=np.int64)
    ends = np.full(2, -1, dtype=np.int64)
    parents = np.asarray(skeleton.end_parent)
    for i, toe in enumerate(joints[:, 1]):
        hit = np.flatnonzero(parents == toe)
        if len(hit) and toe != joints[i, 0]:
            ends[i] = hit[0]
    return joints, ends


def foot_points(clip: Clip, pos=None, rot=None) -> np.ndarray:
    """[F, 2, 3, 3] world positions of each foot's (left, right) ankle, toe and toe tip (the toe
    again where the skeleton has no toe end site)."""
    if pos is None or rot is None:
        pos, rot = clip.world()
    joints, ends = foot_point_joints(clip.skeleton)
    pts = np.empty((clip.n_frames, 2, 3, 3))
    pts[:, :, :2] = pos[:, joints]
    pts[:, :, 2] = pts[:, :, 1]
    if np.any(ends >= 0):
        tips = end_site_positions(clip.skeleton, pos, rot)
        for i in np.flatnonzero(ends >= 0):
            pts[:, i, 2] = tips[:, ends[i]]
    return pts


# --------------------------------------------------------------------------- contacts

def _hysteresis(on: np.ndarray, off: np.ndarray, initial=False) -> np.ndarray:
    """bool like ``on``: True from each frame where ``on`` holds until the next where ``off`` holds
    (along axis 0; ``on`` wins a tie; ``initial`` before the first event)."""
    events = np.where(on, 1, np.where(off, -1, 0)).astype(np.int8)
    at = np.arange(len(events)).reshape((-1,) + (1,) * (events.ndim - 1))
    last = np.maximum.accumulate(np.where(events != 0, at, -1), axis=0)
    state = np.take_along_axis(events, np.maximum(last, 0), axis=0) == 1
    return np.where(last >= 0, state, initial)


def run_length(mask: np.ndarray) -> np.ndarray:
    """int like ``mask``: how many frames in a row (this one included) ``mask`` has held (axis 0)."""
    at = np.arange(len(mask)).reshape((-1,) + (1,) * (mask.ndim - 1))
    last_false = np.maximum.accumulate(np.where(~mask, at, -1), axis=0)
    return np.where(mask, at - last_false, 0)


def true_runs(mask: np.ndarray) -> np.ndarray:
    """[K, 2] (start, stop) of each run of True in a bool [F] ``mask`` (stop exclusive)."""
    return np.flatnonzero(np.diff(np.r_[0, np.asarray(mask).astype(np.int8), 0])).reshape(-1, 2)


def ground_speed(points: np.ndarray, fps: float, window: float) -> np.ndarray:
    """[F, ...] ground speed (m/s) of points [F, ..., 3], over ``window`` seconds centred on each
    frame (the clip's ends repeat)."""
    w = max(1, int(round(0.5 * window * fps)))
    pad = np.concatenate((np.repeat(points[:1, ..., :2], w, axis=0), points[..., :2],
                          np.repeat(points[-1:, ..., :2], w, axis=0)))
    return np.linalg.norm(pad[2 * w:] - pad[:-2 * w], axis=-1) * fps / (2 * w)


def rest_heights(points: np.ndarray, settings: ContactSettings | None = None) -> np.ndarray:
    """[2, P] each point's planted height: a low percentile of its heights."""
    s = settings or ContactSettings()
    return np.percentile(points[..., 2], s.rest_percentile, axis=0)


def point_contacts(points: np.ndarray, fps: float, settings: ContactSettings | None = None, rest=None,
                   speed=None) -> np.ndarray:
    """bool [F, 2, P]: which of the feet's points [F, 2, P, 3] are on the floor (see the module
    docstring); ``rest`` [2, P] their planted heights (default ``rest_heights``), ``speed`` their
    ground speeds (default ``ground_speed``)."""
    s = settings or ContactSettings()
    rest = rest_heights(points, s) if rest is None else rest
    v = ground_speed(points, fps, s.window) if speed is None else speed
    z = points[..., 2] - rest
    low = _hysteresis(z < s.height_on, z > s.height_off)
    held = low & (v < s.speed_max)
    land = held & ((v < s.speed_on) | (run_length(held) >= max(1, int(round(s.settle * fps)))))
    return _hysteresis(land, ~held)


def foot_contacts(clip: Clip, settings: ContactSettings | None = None) -> np.ndarray:
    """bool [F, 2] (left, right): a foot is planted when any of its points is (``point_contacts``)."""
    return point_contacts(foot_points(clip), clip.fps, settings).any(axis=-1)


# --------------------------------------------------------------------------- skating

def skating_frames(points: np.ndarray, fps: float, s: ContactSettings | None = None, rest=None) -> dict:
    """Per frame and foot [F, 2] of feet seen by their points [F, 2, P, 3] (``rest``: their planted
    heights, default their own): "planted" (a point on the floor), "counted" (planted and not within
    ``edge`` of the contact's ends: the frames skating is judged on), "sliding" (counted and faster
    than ``skate_speed``), "travel" (metres the contact point slides in the frame, counted frames)
    and "starts" (a contact's first frame).  ``points_skating`` sums them over a run; the look
    metrics over each second of it."""
    s = s or ContactSettings()
    v = ground_speed(points, fps, s.window)
    contact = point_contacts(points, fps, s, rest=rest, speed=v)
    foot = contact.any(axis=-1)  # [F, 2]
    slide = np.where(contact, v, np.inf).min(axis=-1)  # the contact point's speed
    edge = max(0, int(round(s.edge * fps)))
    inner = foot & (run_length(foot) > edge) & (run_length(foot[::-1])[::-1] > edge)
    starts = foot & ~np.concatenate((np.zeros((1, 2), bool), foot[:-1]))
    return {"planted": foot, "counted": inner, "sliding": inner & (slide > s.skate_speed),
            "travel": np.where(inner, np.where(np.isfinite(slide), slide, 0.0) / fps, 0.0), "starts": starts}


def _skate(points: np.ndarray, fps: float, s: ContactSettings, rest=None) -> tuple:
    """(contact frames counted, of them sliding, each contact's sliding distance [K] in cm,
    foot-frames in contact, foot-frames) of feet seen by their points [F, 2, P, 3] (``rest``: their
    planted heights, default their own)."""
    f = skating_frames(points, fps, s, rest)
    foot = f["planted"]
    contact_id = np.cumsum(f["starts"].T.ravel()).reshape(2, -1).T  # [F, 2] each frame's contact number
    ids = contact_id[foot]
    per = np.bincount(ids, weights=f["travel"][foot])[np.unique(ids)] * 100.0 if ids.size else np.zeros(0)
    return int(f["counted"].sum()), int(f["sliding"].sum()), per, int(foot.sum()), foot.size


def _summary(parts) -> dict:
    inner, skated, per, planted, total = (sum(p[i] for p in parts) if i != 2 else np.concatenate([p[2] for p in parts])
                                          for i in range(5))
    return {"skating": skated / inner if inner else 0.0,
            "sliding_cm": float(np.median(per)) if per.size else 0.0,
            "sliding_cm_p90": float(np.percentile(per, 90)) if per.size else 0.0,
            "planted": planted / max(total, 1), "contacts": int(per.size), "contact_frames": int(inner)}


def points_skating(points, fps: float, settings: ContactSettings | None = None, rest=None) -> dict:
    """The skating of feet seen by their points [F, 2, P, 3] (any rig; a list of such arrays: several
    runs together; see the module docstring): {"skating": share of contact frames sliding,
    "sliding_cm": median sliding distance per contact (cm), "sliding_cm_p90", "planted": share of
    foot-frames in contact, "contacts": how many, "contact_frames": contact frames counted}.
    ``rest`` [2, P]: the points' planted heights (default each run's own ``rest_heights``; a run
    measured against its capture takes the capture's, so a body hovering above the floor has no
    foot down)."""
    runs = [points] if isinstance(points, np.ndarray) else list(points)
    if not runs or any(len(p) < 2 for p in runs):
        raise ValueError("at least 2 frames are needed to measure foot speed")
    return _summary([_skate(p, fps, settings or ContactSettings(), rest) for p in runs])


def foot_skating(clip: Clip, settings: ContactSettings | None = None, pos=None, rot=None, rest=None) -> dict:
    """``points_skating`` of a clip's feet (``pos``/``rot``: its ``world()`` when already known;
    ``rest``: the capture's planted heights of its points)."""
    if clip.n_frames < 2:
        raise ValueError(f"clip {clip.name!r}: at least 2 frames are needed to measure foot speed")
    return points_skating(foot_points(clip, pos, rot), clip.fps, settings, rest)


def skating_of(clips, settings: ContactSettings | None = None) -> dict:
    """``foot_skating`` of several clips together (the source capture): every contact frame and
    every contact of them all."""
    s = settings or ContactSettings()
    parts = [_skate(foot_points(c), c.fps, s) for c in clips if c.n_frames >= 2]
    if not parts:
        raise ValueError("no clip of at least 2 frames to measure")
    return _summary(parts)
