"""One two-bone IK for the whole program: a hip, knee and ankle turned so the ankle reaches a goal,
the knee bending the way the pose bends it (its side of the pose's own hip-ankle line, the least
swivel), the ankle keeping its world rotation.  Vectorised over any leading axes (frames of a retarget, one pose of a live decision)."""

from __future__ import annotations

import numpy as np

from .. import fmath, quat

POLE_WEIGHT = 0.02  # share of the leg's length: a knee bent less than this points (mostly) along the pole


def two_bone(a: np.ndarray, b: np.ndarray, c: np.ndarray, goal: np.ndarray, soft: float = 0.0,
             pole: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """World rotations (r_hip, r_knee) [..., 4] for hip ``a``, knee ``b`` and ankle ``c`` [..., 3] so the
    ankle reaches ``goal`` (as near as the leg's length allows): the thigh turns by ``r_hip``, the
    shin by ``r_knee · r_hip`` (its new world rotation is ``r_knee r_hip`` times its old).

    ``soft`` (a share of the leg's length): within it of full stretch, the change of the hip-ankle
    distance is damped (soft IK), since there the knee's angle changes without bound for a change of
    distance, and a goal a few millimetres farther or nearer from one frame to the next snaps the
    knee; the ankle then falls short of the goal by at most that share.  A goal where the ankle is
    always leaves the leg as it is.

    ``pole`` [..., 3] (a unit direction, e.g. the foot's forward): where the knee points when the
    pose's leg is (nearly) straight.  A straight leg's own bend is millimetres, its direction noise:
    a goal that bends the knee more would swing it round from one frame to the next; the pose's
    bend outweighs the pole beyond ``POLE_WEIGHT`` of the leg's length."""
    l1, l2 = np.linalg.norm(b - a, axis=-1), np.linalg.norm(c - b, axis=-1)
    at = goal - a
    d = np.linalg.norm(at, axis=-1)
    if soft > 0:
        full, zone = l1 + l2, soft * (l1 + l2)
        damp = lambda x: np.where(x < full - zone, x, full - zone * fmath.exp(-(x - full + zone) / zone))  # noqa: E731
        own = np.linalg.norm(c - a, axis=-1)
        d = own + damp(d) - damp(own)
    d = np.clip(d, np.abs(l1 - l2) + 1e-6, l1 + l2 - 1e-6)
    u = at / np.maximum(np.linalg.norm(at, axis=-1, keepdims=True), 1e-9)
    # The knee's side: its side of the pose's own hip-ankle line (so a goal a little off that line
    # cannot flip a nearly straight knee to the line's other side), across the hip-goal line.
    ac = (c - a) / np.maximum(np.linalg.norm(c - a, axis=-1, keepdims=True), 1e-9)
    bend = (b - a) - np.sum((b - a) * ac, axis=-1, keepdims=True) * ac
    if pole is not None:
        bend = bend + POLE_WEIGHT * (l1 + l2)[..., None] * pole
    v = bend - np.sum(bend * u, axis=-1, keepdims=True) * u
    v_n = np.linalg.norm(v, axis=-1, keepdims=True)
    v = np.where(v_n > 1e-9, v / np.maximum(v_n, 1e-9), np.cross(u, [1.0, 0.0, 0.0]))
    cos_a = np.clip((l1 ** 2 + d ** 2 - l2 ** 2) / (2 * l1 * d), -1.0, 1.0)
    knee = a + l1[..., None] * (cos_a[..., None] * u + np.sqrt(1 - cos_a ** 2)[..., None] * v)
    r_hip = quat.between(b - a, knee - a)
    r_knee = quat.between(quat.rotate(r_hip, c - b), a + u * d[..., None] - knee)
    return r_hip, r_knee


def two_bone_local(rot: np.ndarray, chain, pos: np.ndarray, grot: np.ndarray, goal: np.ndarray) -> np.ndarray:
    """``two_bone`` on one pose in local rotations: ``rot`` [J, 4] with the hip and knee of the leg
    ``chain`` (root ... hip, knee, ankle; ``pos``/``grot`` [K, 3]/[K, 4] its joints' positions and
    global rotations) turned so the ankle reaches ``goal``, the ankle keeping its global rotation."""
    hip, knee, ankle = chain[-3:]
    r_hip, r_knee = two_bone(pos[-3], pos[-2], pos[-1], np.asarray(goal, dtype=float))
    parent, g_hip, g_knee = grot[-4], grot[-3], grot[-2]
    hip_new = quat.mul(r_hip, g_hip)
    knee_new = quat.mul(quat.mul(r_knee, r_hip), g_knee)
    out = rot.copy()
    out[hip] = quat.normalize(quat.mul(quat.conj(parent), hip_new))
    out[knee] = quat.normalize(quat.mul(quat.conj(hip_new), knee_new))
    out[ankle] = quat.normalize(quat.mul(quat.conj(knee_new), grot[-1]))
    return out
