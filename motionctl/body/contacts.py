"""Feet on the floor: one planted-foot detector (``foot_contacts``), one floor estimate
(``floor_height``) and the skating measures every part of the program uses (the scoreboard, the
retarget's report, the engines' own checks)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..clip import Clip
from .parts import foot_joints

@dataclass
class ContactSettings:
    """Thresholds for foot contacts (metres above the clip's floor, metres per second)."""

    toe_height: float = 0.06
    ankle_height: float = 0.12
    max_speed: float = 0.6
    floor_percentile: float = 2.0


def foot_contacts(clip: Clip, settings: ContactSettings | None = None) -> np.ndarray:
    """bool [F, 2] (left, right): a foot is planted when its toe or ankle is low and slow.

    Heights are measured from the clip's floor, estimated as a low percentile of the toe heights.
    """
    s = settings or ContactSettings()
    feet = foot_joints(clip.skeleton)
    pos, _ = clip.world()
    ankles = np.array([feet["L"][0], feet["R"][0]])
    toes = np.array([feet["L"][1], feet["R"][1]])
    floor = floor_height(pos[:, toes, 2], s.floor_percentile)
    out = np.zeros((clip.n_frames, 2), dtype=bool)
    for idx, limit, in ((toes, s.toe_height), (ankles, s.ankle_height)):
        p = pos[:, idx]
        v = np.zeros(p.shape[:2])
        if clip.n_frames > 1:
            sp = np.linalg.norm(np.diff(p, axis=0), axis=-1) * clip.fps
            v[1:] = sp
            v[0] = sp[0]
            v[1:-1] = 0.5 * (sp[:-1] + sp[1:])
        out |= (p[..., 2] - floor < limit) & (v < s.max_speed)
    return out


# --------------------------------------------------------------------------- skating

FLOOR_HEIGHT = 0.05  # m
SKATE_SPEED = 0.5  # m/s


def floor_height(z: np.ndarray, percentile: float, axis=None) -> np.ndarray | float:
    """The floor under feet whose heights are ``z``: a low percentile of them (low enough that
    airborne frames do not count, high enough that a marker glitch does not).  Each caller names its
    statistic: contacts take the 2nd percentile of the toes, skating the 5th of the ankles, the import
    the 20th of each frame's lowest point."""
    return np.percentile(z, percentile, axis=axis)


def foot_skating(clip, height: float = FLOOR_HEIGHT, speed: float = SKATE_SPEED, pos=None) -> dict:
    """{"skating": share of frames with a foot on the floor moving faster than ``speed``,
    "sliding": mean ground speed (m/s) of feet on the floor, "planted": share of foot-frames on
    the floor} of a clip (see the module docstring)."""
    if clip.n_frames < 2:
        raise ValueError(f"clip {clip.name!r}: at least 2 frames are needed to measure foot speed")
    pos = clip.world()[0] if pos is None else pos
    feet = foot_joints(clip.skeleton)
    return ankle_skating(pos[:, [feet["L"][0], feet["R"][0]]], clip.fps, height, speed)


def ankle_skating(ankles: np.ndarray, fps: float, height: float = FLOOR_HEIGHT, speed: float = SKATE_SPEED) -> dict:
    """``foot_skating`` from the ankles' world positions [F, 2, 3] (any rig: a retargeted one too)."""
    z = ankles[:, :, 2] - floor_height(ankles[:, :, 2], 5, axis=0)
    v = np.linalg.norm(np.diff(ankles[:, :, :2], axis=0), axis=-1) * fps  # [F-1, 2]
    low = np.maximum(z[1:], z[:-1]) < height
    skate = low & (v > speed)
    return {"skating": float(np.mean(skate.any(axis=1))), "sliding": float(v[low].mean()) if low.any() else 0.0,
            "planted": float(low.mean())}


def skating_of(clips) -> dict:
    """``foot_skating`` of several clips (the source capture), weighted by their frames."""
    rows = [foot_skating(c) for c in clips if c.n_frames >= 2]
    w = np.array([c.n_frames for c in clips if c.n_frames >= 2], float)
    return {k: float(np.average([r[k] for r in rows], weights=w)) for k in rows[0]}
