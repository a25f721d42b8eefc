"""Critically damped springs, in closed form (exact for any time step): the trajectory a command
predicts and the decay of inertialization offsets, as motion matching systems use them
(D. Holden, "Spring-It-On: The Game Developer's Spring-Roll-Call", 2021).

A critically damped spring with half-life ``h`` has damping ``y = 2 ln 2 / h`` (half of the
usual "damping" constant): a displacement halves about every ``h`` seconds, never overshooting.
"""

from __future__ import annotations

import numpy as np

from ... import fmath
from ...rootframe import to_world, wrap

LN2 = float(fmath.log(2.0))


def damping(halflife: float) -> float:
    """y of a critically damped spring with this half-life (s)."""
    return 2.0 * LN2 / max(float(halflife), 1e-5)


def decay(x, v, halflife: float, dt):
    """(x, v) after ``dt`` of a critically damped spring pulling ``x`` (with velocity ``v``) to 0.
    ``dt`` may be an array of times (broadcast against x)."""
    y = damping(halflife)
    j1 = v + x * y
    e = fmath.exp(-y * dt)
    return e * (x + j1 * dt), e * (v - j1 * y * dt)


def velocity_spring(v, a, goal, halflife: float, t):
    """(displacement, velocity, acceleration) after times ``t`` [T] (or one time) of a point whose
    velocity ``v`` [..., 2] (acceleration ``a``) is pulled to ``goal`` by a critically damped
    spring; displacement from where it is now.  Arrays: [T, ..., 2] for t [T]."""
    y = damping(halflife)
    t = np.asarray(t, dtype=float)
    tt = t.reshape(t.shape + (1,) * np.ndim(v))
    j0 = v - goal
    j1 = a + j0 * y
    e = fmath.exp(-y * tt)
    x = e * (-j1 / (y * y) + (-j0 - j1 * tt) / y) + j1 / (y * y) + j0 / y + goal * tt
    return x, e * (j0 + j1 * tt) + goal, e * (a - j1 * y * tt)


def angle_spring(angle, w, goal, halflife: float, t):
    """(angle, angular velocity) after times ``t`` of an angle (rad, angular velocity ``w``)
    pulled to ``goal`` the short way round by a critically damped spring."""
    y = damping(halflife)
    t = np.asarray(t, dtype=float)
    j0 = wrap(angle - goal)
    j1 = w + j0 * y
    e = fmath.exp(-y * t)
    return goal + e * (j0 + j1 * t), e * (w - j1 * y * t)


def predict(v, a, goal_v, facing, w, goal_facing, times, velocity_halflife: float, rotation_halflife: float):
    """The trajectory a command predicts (in the character's root frame: x right, y forward):
    (positions [T, 2], facing directions [T, 2]) at ``times`` [T] seconds ahead, from the simulated
    velocity ``v`` [2] and acceleration ``a`` [2] pulled toward ``goal_v`` [2], and the simulated
    facing ``facing`` (radians relative to the character's, angular velocity ``w``) toward
    ``goal_facing``."""
    x, _, _ = velocity_spring(np.asarray(v, float), np.asarray(a, float), np.asarray(goal_v, float),
                              velocity_halflife, times)
    ang, _ = angle_spring(float(facing), float(w), float(goal_facing), rotation_halflife, times)
    return x, to_world(np.array([0.0, 1.0]), ang)


__all__ = ["angle_spring", "damping", "decay", "predict", "velocity_spring"]
