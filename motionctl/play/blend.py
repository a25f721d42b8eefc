"""Switches without pops (issue 59 item 4): inertialization (D. Bollo, "Inertialization:
High-Performance Animation Transitions in Gears of War", GDC 2018), in the synthesis every engine
plays through.

Where a decision does not continue the clip piece played before (a jump to another clip or frame,
a blend, engine frames that say they join new motion (``Step.joins``: active learning's cycles,
whose root motion is then their own at once: inertialized, it turned 0.6 s later); other engine
frames are the engine's to keep continuous: a motion field blends every frame, motion matching
inertializes its own jumps), the new motion plays at once, offset so it starts where the old one was going:
the difference between the pose the last frame's velocity carries on to and the new first pose
(each joint's rotation, as a rotation vector; the root height; the root's motion per frame), and
between their velocities, become an offset that a quintic polynomial takes to zero over ``time``
seconds with its velocity and acceleration, so the pose and its velocity stay continuous across the
switch and the new motion is exactly its own from then on.  A crossfade (the old way) blends two
motions' poses but not their velocities: its first frames jumped by a share of the whole pose
difference per frame.

The offset lives in the synthesis state (``Inertia``), so a live session that synthesizes one step
at a time blends exactly as a whole run synthesized at once; a step that continues its clip carries
the decaying offset on.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import quat


@dataclass(eq=False)
class Inertia:
    """The last frame played (local rotations [J, 4] with the root's relative to the heading,
    height, root motion [3]) and its velocities (``w`` [J, 3] rad/s, ``h_v`` m/s); the offset being
    taken to zero (rotation vectors ``x`` [J, 3] with velocity ``x_v``, height ``h_x`` / ``h_xv``,
    root motion ``m_x`` [3]) and the seconds since it was set (``t``)."""

    rot: np.ndarray
    w: np.ndarray
    height: float
    h_v: float
    motion: np.ndarray
    x: np.ndarray
    x_v: np.ndarray
    h_x: float = 0.0
    h_xv: float = 0.0
    m_x: np.ndarray | None = None
    t: float = np.inf


def quintic(x0, v0, t, time: float):
    """The offset at times ``t`` [n] of a quintic from ``x0`` (velocity ``v0``, no acceleration) to
    zero at ``time`` with zero velocity and acceleration (minimum jerk); 0 after.  ``x0``/``v0``
    [...] broadcast to [n, ...]."""
    x0, v0 = np.asarray(x0, dtype=float), np.asarray(v0, dtype=float)
    t = np.asarray(t, dtype=float).reshape((-1,) + (1,) * x0.ndim)
    s = np.clip(t / time, 0.0, 1.0)
    vt = v0 * time
    c3 = -(20.0 * x0 + 12.0 * vt) / 2.0
    c4 = (30.0 * x0 + 16.0 * vt) / 2.0
    c5 = -(12.0 * x0 + 6.0 * vt) / 2.0
    out = x0 + s * (vt + s * s * (c3 + s * (c4 + s * c5)))
    return np.where(t < time, out, 0.0)


def inertialize(rot, height, motion, counts, switch, state: Inertia | None, fps: float, time: float,
                pose_only=None) -> Inertia:
    """Steps' frames (``rot`` [N, J, 4], ``height`` [N], ``motion`` [N, 3]; ``counts`` [S] frames
    per step; ``switch`` [S]: the steps that do not continue the one before) with each switch's
    offset applied (in place); returns the ``Inertia`` after the last frame.  ``state``: the one
    before the first frame (None: nothing played yet; a first step starts as it is).  ``time`` 0:
    no blending, only the state kept (from the last frames, no loop).  One short loop over the
    steps otherwise (a session synthesizes one at a time); the frames within a step at once.
    ``pose_only`` [S]: switches whose root motion is the new frames' own from their first."""
    dt = 1.0 / fps
    if len(height) == 0:
        return state
    if time <= 0:  # nothing to blend: the state after the last frame
        return _after(state, rot, height, motion, fps, dt * len(height))
    start = 0
    for i, n in enumerate(np.asarray(counts, dtype=np.int64)):
        a, start = start, start + int(n)
        if n == 0:
            continue
        if state is not None and switch[i]:
            state = _switch(state, rot[a:start], height[a:start], motion[a:start], fps,
                            pose_only is not None and bool(pose_only[i]))
        tk = (state.t if state is not None else np.inf) + dt * np.arange(n)  # t since the switch (0 at it)
        if tk[0] < time:
            x = quintic(state.x, state.x_v, tk, time)
            rot[a:start] = quat.normalize(quat.mul(quat.exp(x), rot[a:start]))
            height[a:start] += quintic(state.h_x, state.h_xv, tk, time).reshape(-1)
            motion[a:start] += quintic(state.m_x, np.zeros(3), tk, time)
        state = _after(state, rot[a:start], height[a:start], motion[a:start], fps, dt * n)
    return state


def _switch(state: Inertia, rot, height, motion, fps: float, pose_only: bool = False) -> Inertia:
    """The offset that starts new frames where the last frame's velocity carries it: in pose and
    velocity (a one-frame step's own velocity unknown: taken as the last frame's), and in root
    motion unless ``pose_only`` (the new frames' root motion their own from the first)."""
    dt = 1.0 / fps
    carried = quat.mul(quat.exp(state.w * dt), state.rot)
    x = quat.log(quat.mul(carried, quat.conj(rot[0])))
    own_w = quat.log(quat.mul(rot[1], quat.conj(rot[0]))) * fps if len(rot) > 1 else state.w
    own_hv = (height[1] - height[0]) * fps if len(height) > 1 else state.h_v
    h_x = state.height + state.h_v * dt - float(height[0])
    return Inertia(state.rot, state.w, state.height, state.h_v, state.motion, x, state.w - own_w, h_x,
                   state.h_v - float(own_hv), np.zeros(3) if pose_only else state.motion - motion[0], 0.0)


def _after(state: Inertia | None, rot, height, motion, fps: float, seconds: float) -> Inertia:
    """The state after frames played (their last frame and velocity; the offset carried on, none
    before anything was played)."""
    prev_rot = rot[-2] if len(rot) > 1 else (state.rot if state is not None else rot[-1])
    prev_h = height[-2] if len(height) > 1 else (state.height if state is not None else height[-1])
    w = quat.log(quat.mul(rot[-1], quat.conj(prev_rot))) * fps
    before = state if state is not None else Inertia(rot[-1], w, 0.0, 0.0, motion[-1], np.zeros_like(w),
                                                     np.zeros_like(w), m_x=np.zeros(3), t=np.inf)
    return Inertia(rot[-1].copy(), w, float(height[-1]), float(height[-1] - prev_h) * fps, motion[-1].copy(),
                   before.x, before.x_v, before.h_x, before.h_xv,
                   before.m_x if before.m_x is not None else np.zeros(3), before.t + seconds)


__all__ = ["Inertia", "inertialize", "quintic"]
