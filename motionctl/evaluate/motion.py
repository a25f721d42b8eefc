"""How a controller's motion looks and answers, measured the same way for every engine (DESIGN.md
3.7): foot skating, and the response time to a new direction (paper 002's protocol).

Foot skating: a foot (its ankle) is on the floor when it is within ``height`` of its planted
height (the ankle's 5th-percentile height in the clip: skeletons put the ankle 5-10 cm above
the sole, and a toe clears the floor by only 1-2 cm in swing, so the lowest point would count a
swinging foot as planted); the skating share is the share of frames where a foot on the floor
moves faster than ``speed`` over the ground, the sliding speed the mean ground speed of feet on
the floor (both in the previous and the next frame).

Response: a Session holds the current facing for ``settle`` seconds, then the desired direction
turns by the trial's angle; the response time is the time from the change until the heading
(the root frame's yaw of the played clip) comes within ``tolerance`` of the new direction and
stays there for ``hold`` seconds (the line task: also within ``line_tolerance`` of the line).
"""

from __future__ import annotations

import numpy as np

from ..body import foot_joints
from ..rootframe import root_frame, to_local, wrap
from ..session import Command, Session

FLOOR_HEIGHT = 0.05  # m
SKATE_SPEED = 0.5  # m/s


def foot_heights(clip) -> tuple[np.ndarray, np.ndarray]:
    """(ground positions [F, 2, 2], heights above the floor [F, 2]) of the ankles (left, right);
    each ankle's floor is its own planted height, the 5th percentile of its height in the clip."""
    pos, _ = clip.world()
    feet = foot_joints(clip.skeleton)
    ankles = pos[:, [feet["L"][0], feet["R"][0]]]
    z = ankles[:, :, 2]
    return ankles[:, :, :2], z - np.percentile(z, 5, axis=0)


def foot_skating(clip, height: float = FLOOR_HEIGHT, speed: float = SKATE_SPEED) -> dict:
    """{"skating": share of frames with a foot on the floor moving faster than ``speed``,
    "sliding": mean ground speed (m/s) of feet on the floor, "planted": share of foot-frames on
    the floor} of a clip (see the module docstring)."""
    if clip.n_frames < 2:
        raise ValueError(f"clip {clip.name!r}: at least 2 frames are needed to measure foot speed")
    ground, z = foot_heights(clip)
    v = np.linalg.norm(np.diff(ground, axis=0), axis=-1) * clip.fps  # [F-1, 2]
    low = np.maximum(z[1:], z[:-1]) < height
    skate = low & (v > speed)
    return {"skating": float(np.mean(skate.any(axis=1))), "sliding": float(v[low].mean()) if low.any() else 0.0,
            "planted": float(low.mean())}


def response_time(model, table, frame: int, angle: float, settle: float = 0.5, limit: float = 6.0,
                  tolerance: float = np.radians(5.0), hold: float = 0.3, line: bool = False,
                  line_offset: float = 0.0, line_tolerance: float = 0.1) -> float:
    """Seconds until the model, started at table row ``frame``, faces a direction turned by
    ``angle`` (radians) and keeps it (see the module docstring); inf when not within ``limit``.
    ``line``: the command is a line through a point ``line_offset`` metres to the side, in the new
    direction, and the response also needs the character within ``line_tolerance`` of it."""
    session = Session(model, table, frame=frame)
    rate = model.decision_rate
    for _ in range(max(1, round(settle * rate))):
        session.decide(Command(heading=session.synth.yaw))
    n0 = session.n_frames
    yaw0, ground0 = session.synth.yaw, session.synth.ground.copy()
    target = yaw0 + angle
    side = np.array([np.cos(target), np.sin(target)])  # the new direction's right, in the world
    point = ground0 + line_offset * side
    command = Command(heading=target, line=np.array([point[0], point[1], target]) if line else None)
    while (session.n_frames - n0) / table.fps < limit + hold:
        session.decide(command)
    clip = session.clip()
    ground, yaw = root_frame(clip, 0.2)
    ok = np.abs(wrap(yaw[n0:] - target)) < tolerance
    if line:
        d = to_local(ground[n0:] - point, target)[:, 0]
        ok &= np.abs(d) < line_tolerance
    need = max(1, round(hold * table.fps))
    # The first frame from which the next ``need`` frames are all on target.
    run = np.convolve(ok.astype(np.int64), np.ones(need, dtype=np.int64), "valid") == need
    hit = np.flatnonzero(run)
    t = hit[0] / table.fps if len(hit) else np.inf
    return float(t) if t <= limit else float("inf")


__all__ = ["FLOOR_HEIGHT", "SKATE_SPEED", "foot_heights", "foot_skating", "response_time"]
