"""Tasks of the active-learning controller (paper 003, sections 4.1 and 5).

A task names its control vector u (bounds, tolerances), cuts the examples it can use out of a
clip at phase keys (foot contacts), measures a blended motion's features (what it actually did)
and turns them into task errors against u: one per metric, ((feature - u) / tolerance)², so a
motion *completes* the task when every error is at most 1 (the coverage test).

- ``walk``: the paper's parameterised walk: one gait cycle from a right heel strike to the next
  (the left strike between); u = stride length (the largest horizontal distance between the
  ankles in the cycle, m), speed (m/s over the cycle) and turn per stride (radians, + left).
- ``locomotion``: the walk's u over the whole speed range the capture holds, standing to running
  (0 to 4.5 m/s; stride up to 1.6 m), with three more kinds of example beside the gait cycles (of
  walks and of runs alike): a *stop* (from the last right heel strike with a left strike after it
  before standing, to where it stands; a closing right step may fall inside), a *stand* (half a second of standing) and a *start* (from standing to the
  first left strike and the right strike after it).  Their features are the walk's, so a stand is
  speed 0 and a stop its mean speed; the paper's walk has no speed below a slow walk and no stop
  (its catching controller's "stand" task is this stand, given the walk's u).
- ``jump``: a jump to a spot: from standing, take off, land, settle; u = where the feet land
  (forward and to the left, m, in the start's root frame).
"""

from __future__ import annotations

import numpy as np

from ...body import Body
from ...body.contacts import true_runs
from ...errors import MotionctlError
from ...play.tasks import Task as PlayTask
from ...rootframe import to_world, wrap
from .motion import PHASE, Blend, joint_positions


class Task(PlayTask):
    """The active learner's task (the project's ``Task`` protocol): ``name``, metric ``names``,
    bounds ``low``/``high`` [D] (``bounds()``), ``tol`` [D], ``n_keys``."""

    name = ""
    names: tuple = ()
    units: tuple = ()
    low = high = tol = np.zeros(0)
    n_keys = 2
    steers = False  # a stick steers it: u holds a speed and a turn (the walk-like tasks)

    @property
    def dim(self) -> int:
        return len(self.names)

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        return np.asarray(self.low, dtype=float), np.asarray(self.high, dtype=float)

    def normalise(self, u) -> np.ndarray:
        """u in [0, 1] per dimension (the RBF's and the distance metric's coordinates)."""
        return (np.asarray(u, dtype=float) - self.low) / (self.high - self.low)

    def denormalise(self, x) -> np.ndarray:
        return self.low + np.asarray(x, dtype=float) * (self.high - self.low)

    def sample(self, rng, n: int) -> np.ndarray:
        """[n, D] task inputs uniform in the bounds."""
        return self.low + rng.random((n, self.dim)) * (self.high - self.low)

    def errors(self, features: np.ndarray, u: np.ndarray) -> np.ndarray:
        """[..., D] ((feature - u) / tol)² (angles wrapped; features and u broadcast)."""
        d = np.asarray(features, dtype=float) - np.asarray(u, dtype=float)
        d = np.where(self.angular, wrap(d), d)
        return np.atleast_2d((d / self.tol) ** 2)

    angular = np.zeros(0, dtype=bool)

    def windows(self, clip, contacts) -> list:
        """[(keys [n_keys] absolute frames), ...]: the examples this clip holds, in order."""
        raise NotImplementedError

    def features(self, skeleton, bl: Blend, fps: float) -> np.ndarray:
        """[B, D] what each blend does."""
        raise NotImplementedError

    def u_of(self, command, yaw: float, local_target=None, natural=None) -> np.ndarray:
        """The task input a player's command asks for."""
        raise NotImplementedError

    def mark(self, u) -> tuple[np.ndarray, float]:
        """Where the motion u asks for should end up, in its start's root frame (x right, y
        forward): (ground point [2] m, heading there, rad, + left): what the panel marks."""
        raise NotImplementedError


def _starts(c: np.ndarray) -> np.ndarray:
    return np.flatnonzero(np.diff(c.astype(np.int8)) == 1) + 1


class WalkTask(Task):
    name = "walk"
    names = ("stride", "speed", "turn")
    units = ("m", "m/s", "rad")
    low = np.array([0.2, 0.6, -np.pi / 4])
    high = np.array([0.9, 1.8, np.pi / 4])
    tol = np.array([0.05, 0.1, 0.1])
    angular = np.array([False, False, True])
    n_keys = 3
    steers = True
    min_cycle, max_cycle = 0.6, 1.6  # s

    def windows(self, clip, contacts) -> list:
        return cycles(contacts, self.min_cycle * clip.fps, self.max_cycle * clip.fps, clip.n_frames)

    def features(self, skeleton, bl: Blend, fps: float) -> np.ndarray:
        feet = Body.of(skeleton).feet
        ankles = joint_positions(skeleton, bl, [feet["L"][0], feet["R"][0]])
        stride = np.max(np.linalg.norm(ankles[:, :, 0, :2] - ankles[:, :, 1, :2], axis=-1), axis=1)
        speed = np.linalg.norm(bl.ground[:, -1], axis=-1) / np.maximum(bl.length / fps, 1e-6)
        return np.column_stack((stride, speed, bl.yaw[:, -1]))

    def u_of(self, command, yaw: float, local_target=None, natural=None) -> np.ndarray:
        # The asked speed (a stop, or a run, gets the nearest a walk cycle does: its slowest or fastest).
        speed = float(np.clip(command.asked_speed(yaw), self.low[1], self.high[1]))
        stride = natural(speed) if natural is not None else 0.5 * (self.low[0] + self.high[0])
        cycle = 2.0 * float(np.clip(stride, self.low[0], self.high[0])) / max(speed, 0.1)  # s: two steps
        turn = float(np.clip(wrap(command.desired_heading(yaw, cycle) - yaw), self.low[2], self.high[2]))
        return np.array([float(np.clip(stride, self.low[0], self.high[0])), speed, turn])

    def mark(self, u) -> tuple[np.ndarray, float]:
        """The end of the cycle: two steps of the stride length along an arc turning by u's turn."""
        length, turn = 2.0 * float(u[0]), float(u[2])
        if abs(turn) < 1e-6:
            return np.array([0.0, length]), 0.0
        r = length / turn
        return np.array([-r * (1.0 - np.cos(turn)), r * np.sin(turn)]), turn


def cycles(contacts, lo: float, hi: float, n_frames: int) -> list:
    """Gait cycles: right heel strike, the one left strike, the next right strike, lasting
    ``lo``-``hi`` frames."""
    left, right = _starts(contacts[:, 0]), _starts(contacts[:, 1])
    out = []
    for a, b in zip(right[:-1], right[1:]):
        mid = left[(left > a) & (left < b)]
        if lo <= b - a <= hi and len(mid) == 1 and b < n_frames:
            out.append(np.array([a, mid[0], b]))
    return out


def standing(clip, contacts, speed: float, least: int) -> list:
    """[(first, end), ...] frame spans at least ``least`` long where both feet are down and the
    hips move under ``speed`` m/s (over a third of a second)."""
    w = max(1, round(clip.fps / 3))
    step = np.linalg.norm(np.diff(clip.root_pos[:, :2], axis=0), axis=1) * clip.fps
    step = np.r_[step[:1], step] if len(step) else np.zeros(clip.n_frames)
    padded = np.pad(step, (w // 2, w - 1 - w // 2), mode="edge")  # a clip's (or a take's) ends are not still
    slow = np.convolve(padded, np.ones(w) / w, mode="valid") < speed
    return [(int(a), int(b)) for a, b in true_runs(slow & contacts.all(axis=1)) if b - a >= least]


class LocomotionTask(WalkTask):
    name = "locomotion"
    low = np.array([0.1, 0.0, -np.pi / 4])
    high = np.array([1.6, 4.5, np.pi / 4])
    min_cycle, max_cycle = 0.5, 1.6  # s: a sprint's cycle is about 0.6 s
    stand_speed, stand_least, stand_length, max_stop = 0.2, 0.3, 0.5, 2.0  # m/s, s, s, s

    def windows(self, clip, contacts) -> list:
        fps, n = clip.fps, clip.n_frames
        out = cycles(contacts, self.min_cycle * fps, self.max_cycle * fps, n)
        left, right = _starts(contacts[:, 0]), _starts(contacts[:, 1])
        longest = self.max_stop * fps
        for a, b in standing(clip, contacts, self.stand_speed, max(2, round(self.stand_least * fps))):
            e = min(b - 1, a + round(self.stand_length * fps))
            out.append(np.array([a, (a + e) // 2, e]))  # a stand
            stop = [(r, left[(left > r) & (left < a)]) for r in right[(right < a) & (right >= a - longest)]]
            stop = [(r, ls[0]) for r, ls in stop if len(ls)]
            if a > 0 and stop:  # the last right strike with a left strike before it stands
                out.append(np.array([stop[-1][0], stop[-1][1], a]))
            k0 = max(a, b - round(fps / 5))
            lefts = left[left > b]
            rights = right[right > lefts[0]] if len(lefts) else right[:0]
            if len(rights) and rights[0] - k0 <= longest and rights[0] < n:  # a start
                out.append(np.array([k0, lefts[0], rights[0]]))
        return [np.array(k) for k in sorted({tuple(int(x) for x in k) for k in out})]  # (two stands may share a stop)


class JumpTask(Task):
    name = "jump"
    names = ("forward", "left")
    units = ("m", "m")
    low = np.array([0.0, -0.3])
    high = np.array([2.4, 0.3])
    tol = np.array([0.1, 0.1])
    angular = np.array([False, False])
    n_keys = 4
    min_flight, before, after = 0.25, 0.8, 0.8  # s

    def windows(self, clip, contacts) -> list:
        air = ~contacts.any(axis=1)
        take = _starts(air)
        land = _starts(~air)
        out = []
        for t in take:
            later = land[land > t]
            if len(later) == 0 or later[0] - t < self.min_flight * clip.fps:
                continue
            a = max(0, int(t - round(self.before * clip.fps)))
            b = min(clip.n_frames - 1, int(later[0] + round(self.after * clip.fps)))
            if a < t and later[0] < b:
                out.append(np.array([a, t, later[0], b]))
        return out

    def features(self, skeleton, bl: Blend, fps: float) -> np.ndarray:
        feet = Body.of(skeleton).feet
        ankles = joint_positions(skeleton, bl, [feet["L"][0], feet["R"][0]])[:, :, :, :2].mean(axis=2)  # [B, P, 2]
        k = int(round((PHASE - 1) * 2 / 3))  # the landing key's grid sample
        spot = bl.ground[:, k] + to_world(ankles[:, k], bl.yaw[:, k]) - ankles[:, 0]
        return np.column_stack((spot[:, 1], -spot[:, 0]))

    def u_of(self, command, yaw: float, local_target=None, natural=None) -> np.ndarray:
        if local_target is not None:
            forward, left = float(local_target[1]), -float(local_target[0])
        else:
            stick = np.asarray(command.control[:2], dtype=float)
            forward, left = (1.2 * stick[1] / max(np.hypot(*stick), 1.0), 0.0) if np.hypot(*stick) > 1e-3 else (1.0, 0.0)
        return np.clip(np.array([forward, left]), self.low, self.high)

    def mark(self, u) -> tuple[np.ndarray, float]:
        """The landing spot."""
        return np.array([-float(u[1]), float(u[0])]), 0.0


TASKS = {"walk": WalkTask(), "locomotion": LocomotionTask(), "jump": JumpTask()}


def task_named(name: str) -> Task:
    if name not in TASKS:
        raise MotionctlError(f"unknown task {name!r}: choose one of {', '.join(TASKS)}")
    return TASKS[name]


__all__ = ["TASKS", "JumpTask", "LocomotionTask", "Task", "WalkTask", "task_named"]
