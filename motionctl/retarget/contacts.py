"""Feet on the target's floor: leg lengths, the rig's own planted ankle height and soles (its rest
pose's ground), and where planted feet go."""

from __future__ import annotations


import numpy as np

from .. import quat
from ..body.roles import SIDES
from .mapping import Rig

def leg_length(rig: Rig, roles: dict) -> float:
    """Mean over both legs of hip-to-knee plus knee-to-ankle (world units)."""
    h = rig.heads
    return float(np.mean([np.linalg.norm(h[roles[f"shin.{s}"]] - h[roles[f"thigh.{s}"]]) +
                          np.linalg.norm(h[roles[f"foot.{s}"]] - h[roles[f"shin.{s}"]]) for s in SIDES]))


def planted_ankle_height(rig: Rig, roles: dict) -> float | None:
    """How high a flat foot's ankle stands above the ground, in the rig's own rest pose: each foot
    bone's head above the lowest point (heads and tails) of its own subtree (heel, ball, toe tip),
    when the rest pose stands (both shins point down) and the foot has such points; None otherwise
    (the source's planted height, scaled, is used).  Where the rest pose stands in the world does
    not matter: a motionctl armature rests with its hips at the origin."""
    legs = leg_length(rig, roles)
    out = []
    for s in SIDES:
        foot, shin = roles[f"foot.{s}"], roles[f"shin.{s}"]
        d = rig.heads[foot] - rig.heads[shin]
        if d[2] > -0.8 * np.linalg.norm(d):
            return None
        sub = rig.subtree(foot)
        points = rig.heads[sub] if rig.tails is None else np.vstack((rig.heads[sub], rig.tails[sub]))
        height = rig.heads[foot, 2] - points[:, 2].min()
        if not 0.02 * legs < height < 0.3 * legs:  # a foot with no points below its ankle, or not a foot
            return None
        out.append(height)
    return float(np.mean(out))


def soles_of(rig: Rig, roles: dict, pos: np.ndarray, q: np.ndarray) -> np.ndarray | None:
    """[F, 2] the height of each foot's lowest point (the heads and tails of the foot bone and the
    bones below it), posed by world heads ``pos`` [F, B, 3] and world deltas ``q`` [F, B, 4];
    None for a rig whose bone ends are unknown."""
    if rig.tails is None:
        return None
    out = []
    for side in SIDES:
        sub = np.flatnonzero(rig.subtree(roles[f"foot.{side}"]))
        tails = pos[:, sub] + quat.rotate(q[:, sub], rig.tails[sub] - rig.heads[sub])
        out.append(np.minimum(pos[:, sub, 2].min(axis=1), tails[..., 2].min(axis=1)))
    return np.stack(out, axis=1)


def plant_goals(cur, src, contact, s, h_t, h_s) -> np.ndarray:
    """Where a planted foot's head should be: from its position where each contact begins, moving
    as the source's foot does (scaled), at the source's height above its planted height (scaled)."""
    frames = np.arange(len(contact))
    begins = contact & ~np.r_[False, contact[:-1]]
    start = np.maximum.accumulate(np.where(begins, frames, 0))  # each frame's contact's first frame
    goal = cur.copy()
    goal[contact, :2] = (cur[start, :2] + s * (src[:, :2] - src[start, :2]))[contact]
    goal[:, 2] = h_t + s * (src[:, 2] - h_s)
    return goal
