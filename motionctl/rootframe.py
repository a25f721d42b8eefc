"""The root frame: where a character stands and which way it faces, and moving between frames.

Per frame, the root frame is the ground projection of the hips plus a heading (yaw, radians about
+Z) taken from the hips' forward axis and lightly smoothed.  In a root frame +Y is forward, +X
the character's right, and a positive yaw change a turn to the left.  Every engine expresses
poses, root motion, task targets and footprints in it, through the few functions below: this is
the one place its geometry is written.
"""

from __future__ import annotations

import numpy as np

from . import fmath, quat
from .body import Body


def wrap(a):
    """Angles to [-pi, pi)."""
    return (np.asarray(a) + np.pi) % (2 * np.pi) - np.pi


def to_local(d: np.ndarray, yaw) -> np.ndarray:
    """World ground vectors ``d`` [..., 2] seen in root frames facing ``yaw`` [...] (x right, y forward)."""
    d = np.asarray(d, dtype=float)
    c, s = np.cos(yaw), np.sin(yaw)
    return np.stack((c * d[..., 0] + s * d[..., 1], -s * d[..., 0] + c * d[..., 1]), axis=-1)


def to_world(v: np.ndarray, yaw) -> np.ndarray:
    """Root-frame ground vectors ``v`` [..., 2] (x right, y forward) in the world, facing ``yaw``."""
    v = np.asarray(v, dtype=float)
    c, s = np.cos(yaw), np.sin(yaw)
    return np.stack((c * v[..., 0] - s * v[..., 1], s * v[..., 0] + c * v[..., 1]), axis=-1)


def yaw_of(d) -> np.ndarray:
    """The yaw that faces ground direction(s) ``d`` [..., 2] (world, or a root frame's x right, y
    forward: then the turn to face it)."""
    d = np.asarray(d, dtype=float)
    return fmath.arctan2(-d[..., 0], d[..., 1])


def rotation_2d(yaw: float) -> np.ndarray:
    """[2, 2] matrix taking root-frame ground vectors to the world (``to_world`` as a matrix)."""
    c, s = np.cos(yaw), np.sin(yaw)
    return np.array([[c, -s], [s, c]])


def displacement(ground: np.ndarray, yaw: np.ndarray, a, b) -> np.ndarray:
    """[K, 3] (dx right, dy forward, dyaw) from frame(s) ``a`` to ``b``, in the root frame at ``a``
    (ground [N, 2] and yaw [N] of a clip or frame table; a, b int arrays)."""
    a, b = np.asarray(a), np.asarray(b)
    local = to_local(ground[b] - ground[a], yaw[a])
    return np.column_stack((local.reshape(-1, 2), np.ravel(yaw[b] - yaw[a])))


def integrate(motion: np.ndarray, ground0=(0.0, 0.0), yaw0: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Per-frame root motion [N, 3] (dx, dy in the previous frame's root frame, dyaw) played from
    (ground0, yaw0): (ground [N, 2], yaw [N]) after each frame."""
    yaw = yaw0 + np.cumsum(motion[:, 2])
    before = np.concatenate(([yaw0], yaw[:-1]))
    ground = np.asarray(ground0, dtype=float) + np.cumsum(to_world(motion[:, :2], before), axis=0)
    return ground, yaw


def heading(yaw) -> np.ndarray:
    """Quaternions [..., 4] turning by ``yaw`` about +Z."""
    return quat.about_axis(2, yaw)


def gaussian_smooth(x: np.ndarray, sigma: float, axis: int = 0) -> np.ndarray:
    """Gaussian filter along ``axis`` with edge values repeated (no scipy needed)."""
    if sigma <= 0:
        return x.copy()
    radius = int(np.ceil(3 * sigma))
    k = fmath.exp(-0.5 * (np.arange(-radius, radius + 1) / sigma) ** 2)
    k /= k.sum()
    x = np.moveaxis(np.asarray(x, dtype=float), axis, 0)
    pad = np.concatenate((np.repeat(x[:1], radius, 0), x, np.repeat(x[-1:], radius, 0)), 0)
    # One shifted copy per kernel tap, summed in a fixed order: bit-for-bit the same result on
    # every run (a BLAS product over a sliding window differed in the last bit between runs,
    # enough to flip ties between a step and its mirror image in the planner's training).
    n = len(x)
    out = k[0] * pad[:n]
    for i in range(1, len(k)):
        out = out + k[i] * pad[i:i + n]
    return np.moveaxis(out, 0, axis)


def _pelvis_forward(clip) -> tuple[np.ndarray, np.ndarray]:
    """(the pelvis's rotation in the world [F, 4], its forward direction [3] in its own frame): the
    right-to-left hip axis crossed with the spine (``body.facing``), both in the pelvis's frame as
    the clip carries them on average (the spine's offset where the pelvis has one, else the world's
    up).  Read from the bones and the motion alone, never from the rest pose, so a body faces the
    same way whatever orientations its joints rest in."""
    sk = clip.skeleton
    pelvis, legs, spine = Body.of(sk).facing
    rot = clip.local_rot[:, 0]
    if legs is None:
        return rot, Body.of(sk).rest_forward
    for j in sk.chain(pelvis)[1:]:
        rot = quat.mul(rot, clip.local_rot[:, j])
    sides = []
    for leg in legs:  # the thigh in the pelvis's frame, down the leg's joints
        at, turn = 0.0, quat.identity(rot.shape[:-1])
        for j in leg:
            step = sk.offsets[j] if clip.local_pos is None else clip.local_pos[:, j]
            at = at + quat.rotate(turn, np.broadcast_to(step, rot.shape[:-1] + (3,)))
            turn = quat.mul(turn, clip.local_rot[:, j])
        sides.append(at)
    left = (sides[0] - sides[1]).mean(axis=0)
    if spine is None:
        spine = quat.rotate(quat.conj(rot), np.broadcast_to([0.0, 0.0, 1.0], rot.shape[:-1] + (3,))).mean(axis=0)
    forward = np.cross(left, spine)
    size = np.linalg.norm(forward, axis=-1)  # axis: elementwise, not BLAS's dot (FMA or not by CPU)
    if not size > 1e-12 * max(np.linalg.norm(left, axis=-1) * np.linalg.norm(spine, axis=-1), 1e-300):
        return clip.local_rot[:, 0], Body.of(sk).rest_forward
    return rot, forward / size


def root_frame(clip, smooth_seconds: float = 0.2) -> tuple[np.ndarray, np.ndarray]:
    """Per frame of a clip: ground position [F, 2] of the hips and heading [F] (radians, unwrapped),
    smoothed with a Gaussian of ``smooth_seconds`` (the pelvis swings a few degrees every step)."""
    raw = quat.yaw_about_z(*_pelvis_forward(clip))
    yaw = np.unwrap(raw)
    sigma = smooth_seconds * clip.fps
    if sigma > 0 and clip.n_frames > 1:
        yaw = gaussian_smooth(yaw, sigma)
    return clip.root_pos[:, :2].copy(), yaw


MOVING = 0.3  # m/s: hips faster than this travel (a slow walk is 0.8-1.0)
WORLD_SIDES = ("+Y", "-X", "-Y", "+X")  # a heading of 0, 90, 180, 270 degrees (about +Z from +Y)


def facing_ahead(clip, yaw=None) -> np.ndarray:
    """[F, J, 4] the clip's local rotations with the root's heading taken out (``root_frame``'s yaw
    unless given), as if every frame faced yaw 0."""
    yaw = root_frame(clip)[1] if yaw is None else yaw
    rot = clip.local_rot.copy()
    rot[:, 0] = quat.mul(quat.about_axis(2, -np.asarray(yaw)), clip.local_rot[:, 0])
    return rot


def mean_pose(clips) -> tuple[np.ndarray, np.ndarray]:
    """(root position [3], local rotations [J, 4]) of the clips' mean pose facing yaw 0: each joint's
    mean rotation in its parent's frame over every frame (``quat.mean``, the root's with its heading
    out), the root at its median height.  The same body in the world whatever rest frames a file
    gives its joints (a rest turn B turns a joint's mean by B as it turns every frame's)."""
    root = np.zeros(3)
    root[2] = float(np.median(np.concatenate([c.root_pos[:, 2] for c in clips])))
    return root, quat.mean_of([facing_ahead(c) for c in clips])


def facing_evidence(clip) -> tuple[str, list]:
    """What shows which way ``clip``'s body faces, for the import summary: (one note, warnings).

    The facing is ``root_frame``'s (the hips' axis and the spine); the note says where the body
    starts facing in the world, how often the feet point within 60 degrees of it and how often the
    hips travel ahead along it (within 45 degrees, of frames moving over ``MOVING``).  A warning
    where the body does not show it: feet pointing away (left and right swapped in the names, or
    the hips' axis misread), hips that hardly travel (standing: the hips and spine alone decide),
    or hips travelling mostly backwards or sideways."""
    ground, yaw = root_frame(clip)
    warnings = []
    note = f"facing from the hips and spine: starts facing {WORLD_SIDES[int(np.round(np.degrees(yaw[0]) / 90.0)) % 4]}"

    def ahead_share(v: np.ndarray, degrees: float) -> np.ndarray:
        """bool [F]: ground vectors ``v`` [F, 2] within ``degrees`` of the facing (root frame: +Y ahead)."""
        local = to_local(v, yaw)
        return local[:, 1] > np.cos(np.radians(degrees)) * np.hypot(*local.T)

    pos = clip.world()[0]
    toes = [pos[:, t, :2] - pos[:, a, :2] for a, t in Body.of(clip.skeleton).feet.values() if t != a]
    if toes:
        note += f", the feet point within 60° of it on {100 * np.mean(ahead_share(sum(toes), 60)):.0f}% of frames"
        away = float(np.mean(~ahead_share(sum(toes), 90)))
        if away > 0.5:
            warnings.append(f"the feet point away from the facing read from the hips and spine on {100 * away:.0f}% "
                            "of frames: left and right may be swapped in the joint names")
    if clip.n_frames > 2:
        vel = gaussian_smooth(np.gradient(ground, axis=0) * clip.fps, 0.2 * clip.fps)
        moving = np.hypot(*vel.T) > MOVING
        if moving.mean() < 0.1:
            warnings.append(f"the hips travel on {100 * moving.mean():.0f}% of frames: which way the body faces "
                            "is read from the hips and spine alone")
        else:
            fwd = float(np.mean(ahead_share(vel, 45)[moving]))
            back = float(np.mean(ahead_share(-vel, 45)[moving]))
            note += f", travels ahead on {100 * fwd:.0f}% of moving frames"
            if back > 0.5:
                warnings.append(f"the hips travel backwards on {100 * back:.0f}% of moving frames: the facing is "
                                "read from the hips and spine, not from where the body goes")
            elif fwd + back < 0.5:
                warnings.append(f"the hips travel sideways on {100 * (1 - fwd - back):.0f}% of moving frames: the "
                                "facing is read from the hips and spine, not from where the body goes")
    return note, warnings


def root_motion(clip, smooth_seconds: float = 0.2) -> np.ndarray:
    """[F, 3] per-frame (dx, dy, dyaw) in the previous frame's root frame; row 0 is zero."""
    ground, yaw = root_frame(clip, smooth_seconds)
    out = np.zeros((clip.n_frames, 3))
    if clip.n_frames > 1:
        n = clip.n_frames
        out[1:] = displacement(ground, yaw, np.arange(n - 1), np.arange(1, n))
    return out


def to_root_frame(points: np.ndarray, ground: np.ndarray, yaw: np.ndarray) -> np.ndarray:
    """World points [F, K, 3] in per-frame root frames (ground [F, 2], yaw [F])."""
    rel = np.array(points, dtype=float)
    rel[..., :2] = to_local(rel[..., :2] - ground[:, None, :], yaw[:, None])
    return rel


def positions_in_root_frame(clip, smooth_seconds: float = 0.2) -> np.ndarray:
    """[F, J, 3] joint positions relative to each frame's root frame (ground position, heading)."""
    pos, _ = clip.world()
    ground, yaw = root_frame(clip, smooth_seconds)
    return to_root_frame(pos, ground, yaw)


WARP_RATE = float(np.radians(150.0))  # rad/s: the clip engines' default Warp Rate. At 90 °/s a stick pulled
# back took 1.7-2.5 s to turn round in planning, the graph and active learning (a walk's 180° at the
# warp alone is 2 s); at 150 °/s 0.9-1.5 s on subject 16's clips, feet as planted (bench_stress.py)


def facing_warp(turn: float, rate: float, seconds: float) -> np.ndarray:
    """``Step.edit`` turning a step's facing by ``turn`` (rad, wrapped), at most ``rate`` rad/s
    over its ``seconds``: every engine's Warp Rate (the rest of a turn toward the asked heading).
    The seconds are the step's captured length: Plant Feet may play a step up to
    ``play.feet``'s ``max_rate`` faster, and its warp with it."""
    limit = rate * seconds
    return np.array([0.0, 0.0, float(np.clip(wrap(turn), -limit, limit))])


__all__ = ["WARP_RATE", "facing_warp", "wrap", "yaw_of", "displacement", "gaussian_smooth", "heading", "integrate", "positions_in_root_frame", "root_frame",
           "root_motion", "rotation_2d", "to_local", "to_root_frame", "to_world"]
