"""Units, up axis and floor of a clip, decided from its motion rather than its rest pose.

Exporters disagree about everything a rest pose could tell: Rokoko-style rigs rest with their
bones along X, Z-up exports lie down in a Y-up reader, Character Creator puts the floor a metre
below the feet.  What every capture of a person shares is the motion: a body about 1.7 m tall
whose feet come back to one floor.  So, with the clip read in its file's own frame and units:

- up axis: the axis along which the body is tallest in most frames (the median over frames of
  the joints' extent along each axis, clearly taller than the other two, else the file's
  convention, Y), signed so the head (or, without a joint named head, the upper body: the
  largest subtree below the first branching joint) is above the hips;
- unit: the candidate (metres, decimetres, centimetres, millimetres, inches, CMU's 1/0.45-inch
  units, feet) that makes the body's height (the 75th percentile over frames of the extent
  along up, arms raised or crouching aside) closest to a human's 1.7 m, on a log scale;
- floor: levelled first when the capture's floor is slightly tilted (the plane through each
  frame's lowest point, 0.2-5 degrees), then the 20th percentile over frames of the lowest joint
  or end site, so stance feet stand on z = 0 and airborne frames (jumps) do not lift the floor.

Each decision is either given by the user (kept as is) or detected, and ``Orientation`` records
which, with the measured height, for the import report.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import quat
from .skeleton import Skeleton, axis_conversion, end_site_positions, forward_kinematics

# Metres per unit of common capture units, with the names reports use.
UNITS = {
    "metres": 1.0,
    "decimetres": 0.1,
    "centimetres": 0.01,
    "millimetres": 0.001,
    "inches": 0.0254,
    "CMU units (1/0.45 inch)": 0.0254 / 0.45,
    "feet": 0.3048,
}
HUMAN_HEIGHT = 1.7  # metres
# The forward axis paired with each detected up axis: Blender's importer default for Y up, the
# identity for Z up; any perpendicular choice only turns the clip about the vertical.
FORWARD_FOR_UP = {"Y": "-Z", "-Y": "Z", "Z": "Y", "-Z": "-Y", "X": "Y", "-X": "Y"}
MAX_FRAMES = 600  # frames sampled for the detection (evenly spread)
CLEAR_RATIO = 1.25  # the up axis must be this much taller than the others (a walking body: about 2x)


@dataclass
class Orientation:
    """What was decided for one clip: ``up``/``forward`` file axes, ``unit_scale`` metres per file
    unit (``unit`` its name), ``height`` the body's measured height in metres, ``floor`` metres
    the clip was raised (+) or lowered (-) to put its feet on z = 0, and ``detected`` the
    decisions taken from the motion (the others were given)."""

    up: str = "Y"
    forward: str = "-Z"
    unit_scale: float = 1.0
    unit: str = ""
    height: float = float("nan")
    floor: float = 0.0
    tilt: float = 0.0
    detected: set = field(default_factory=set)
    declared: set = field(default_factory=set)

    def source(self, what: str) -> str:
        """How a decision ("unit", "up", "floor") was made: detected, from the file, or set."""
        return "detected" if what in self.detected else ("from the file" if what in self.declared else "set")

    def describe(self) -> str:
        """One line for the import report."""
        unit = self.unit or f"{self.unit_scale:g} m per unit"
        src = {k: self.source(k) for k in ("unit", "up", "floor")}
        text = f"units {unit} ({src['unit']}; body {self.height:.2f} m tall), up axis {self.up} ({src['up']})"
        if abs(self.floor) >= 0.005:
            text += f", floor: moved {100 * self.floor:+.1f} cm ({src['floor']})"
        if self.tilt:
            text += f", floor levelled by {self.tilt:.1f}°"
        return text


def unit_name(scale: float) -> str:
    """The name of a unit in ``UNITS`` ("" if it is none of them)."""
    for name, s in UNITS.items():
        if abs(s - scale) <= 1e-9 * s:
            return name
    return ""


def guess_unit_scale(height_in_file_units: float) -> float:
    """Metres per file unit among ``UNITS`` that makes a body of this height closest to a human's."""
    if not np.isfinite(height_in_file_units) or not height_in_file_units > 0:
        return 1.0
    scales = np.array(list(UNITS.values()))
    return float(scales[np.argmin(np.abs(np.log(height_in_file_units * scales / HUMAN_HEIGHT)))])


def sample_points(skeleton: Skeleton, root_pos: np.ndarray, local_rot: np.ndarray, local_pos=None,
                  max_frames: int = MAX_FRAMES) -> np.ndarray:
    """[F', J + E, 3] joint and end-site positions of up to ``max_frames`` evenly spread frames."""
    n = len(root_pos)
    idx = np.unique(np.linspace(0, n - 1, min(n, max_frames)).astype(np.int64))
    lp = None if local_pos is None else local_pos[idx]
    pos, rot = forward_kinematics(skeleton, root_pos[idx], local_rot[idx], lp)
    return np.concatenate((pos, end_site_positions(skeleton, pos, rot)), axis=1)


def upper_body(skeleton: Skeleton) -> np.ndarray:
    """Joints whose mean position is above the hips in an upright body: the head (and its
    descendants) if a joint is named head, else the largest subtree below the first joint with
    more than one child (the spine, arms and head; legs are the smaller subtrees)."""
    names = [n.lower() for n in skeleton.names]
    depth = skeleton.depth()
    heads = [j for j, n in enumerate(names) if "head" in n and "end" not in n]
    if heads:
        return np.array([min(heads, key=lambda j: depth[j])])
    j = branch_joint(skeleton)
    kids = skeleton.children(j)
    if len(kids) == 0:
        return np.array([j])
    sub = {int(k): _subtree(skeleton, int(k)) for k in kids}
    return sub[max(sub, key=lambda k: len(sub[k]))]


def _subtree(skeleton: Skeleton, j: int) -> np.ndarray:
    inside = np.zeros(skeleton.n_joints, dtype=bool)
    inside[j] = True
    for k in range(j + 1, skeleton.n_joints):  # parents come before children
        inside[k] = inside[skeleton.parents[k]]
    return np.flatnonzero(inside)


def branch_joint(skeleton: Skeleton) -> int:
    """The first joint (from the root) with more than one child: the hips of a human rig."""
    j = 0
    while len(skeleton.children(j)) == 1:
        j = int(skeleton.children(j)[0])
    return j


def detect_up(skeleton: Skeleton, points: np.ndarray, default: str = "Y") -> str:
    """The file axis pointing up ("Y", "-Z", ...) from sampled positions [F, P, 3] (joints first);
    ``default`` (BVH's convention) when no axis is clearly the tallest (a T-pose, a body lying
    down, a synthetic rig), so only clear evidence overrides the file's convention."""
    extent = np.median(points.max(axis=1) - points.min(axis=1), axis=0)  # [3]
    order = np.argsort(extent)[::-1]
    axis = int(order[0])
    if not extent[axis] >= CLEAR_RATIO * extent[order[1]]:
        axis = "XYZ".index(default.lstrip("-"))
    hips = branch_joint(skeleton)
    upper = upper_body(skeleton)
    above = float(np.median(points[:, upper, axis].mean(axis=1) - points[:, hips, axis]))
    return ("" if above >= 0 else "-") + "XYZ"[axis]


def body_height(points_z: np.ndarray) -> float:
    """The body's height from vertical positions [F, P]: 75th percentile of the per-frame extent."""
    return float(np.percentile(points_z.max(axis=1) - points_z.min(axis=1), 75))


def floor_height(points_z: np.ndarray) -> float:
    """Height of the floor the feet stand on: 20th percentile of the per-frame lowest point."""
    return float(np.percentile(points_z.min(axis=1), 20))


def reorient(skeleton: Skeleton, root_pos, local_rot, local_pos, conv: np.ndarray, scale: float):
    """A change of basis ``conv`` [3, 3] (file -> world) and a scale: the skeleton, root positions,
    local rotations (C R Cᵀ) and local positions in the new frame."""
    q = quat.from_matrix(conv)
    sk = Skeleton(skeleton.names, skeleton.parents, skeleton.offsets @ conv.T * scale, skeleton.channels,
                  skeleton.end_parent, skeleton.end_offsets @ conv.T * scale, skeleton.unit_scale * scale)
    rot = quat.mul(quat.mul(q, local_rot), quat.conj(q))
    root = root_pos @ conv.T * scale
    lpos = None if local_pos is None else local_pos @ conv.T * scale
    return sk, root, rot, lpos


def orient(skeleton: Skeleton, root_pos, local_rot, local_pos=None, unit_scale: float | None = None,
           axis_up: str | None = None, axis_forward: str | None = None):
    """Decide the unit and up axis of motion given in its file's frame and units, and convert it
    to motionctl's (Z up, metres).

    unit_scale  metres per file unit, or None to detect it
    axis_up, axis_forward   the file's axes, or None to detect up (forward then follows it)
    Returns (skeleton, root_pos [F, 3], local_rot [F, J, 4], local_pos or None, Orientation).
    """
    detected = set()
    points = None
    if axis_up is None:
        points = sample_points(skeleton, root_pos, local_rot, local_pos)
        axis_up = detect_up(skeleton, points)
        if not axis_forward or axis_forward.lstrip("-") == axis_up.lstrip("-"):
            axis_forward = FORWARD_FOR_UP[axis_up]
        detected.add("up")
    axis_forward = axis_forward or FORWARD_FOR_UP.get(axis_up, "-Z")
    conv = axis_conversion(axis_forward, axis_up)
    if points is None:
        points = sample_points(skeleton, root_pos, local_rot, local_pos)
    height_file = body_height((points @ conv.T)[..., 2])
    if unit_scale is None:
        unit_scale = guess_unit_scale(height_file)
        detected.add("unit")
    sk, root, rot, lpos = reorient(skeleton, root_pos, local_rot, local_pos, conv, unit_scale)
    info = Orientation(up=axis_up, forward=axis_forward, unit_scale=float(unit_scale), unit=unit_name(unit_scale),
                       height=height_file * unit_scale, detected=detected)
    return sk, root, rot, lpos, info


FLOOR_MODES = ("auto", "keep", "lowest")
MAX_TILT = 5.0  # degrees: a steeper fitted floor is a slope in the capture, not a level error
MIN_TILT = 0.2  # degrees: below this the floor is level enough to leave alone
TILT_SPREAD = 0.5  # metres (standard deviation): contacts spread less than this along a direction do not tilt it


def floor_tilt(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(gradient [2], pivot [3]) of the plane the feet stand on, from sampled Z-up positions
    [F, P, 3]: the lowest point of each frame (the lower 60%, so airborne frames do not count)
    fitted by least squares, z = a·x + b·y + c, only along ground directions in which the contacts
    spread more than ``TILT_SPREAD`` metres (a straight walk says nothing about the sideways tilt)."""
    low = points[np.arange(len(points)), points[..., 2].argmin(axis=1)]  # [F, 3]
    low = low[low[:, 2] <= np.percentile(low[:, 2], 60)]
    pivot = low.mean(axis=0)
    d = low - pivot
    var, axes = np.linalg.eigh(np.cov(d[:, :2].T) if len(d) > 2 else np.zeros((2, 2)))
    grad = np.zeros(2)
    for v, axis in zip(var, axes.T):
        if v > TILT_SPREAD**2:
            t = d[:, :2] @ axis
            grad += axis * float(t @ d[:, 2] / (t @ t))
    return grad, pivot


def level_floor(skeleton: Skeleton, root_pos, local_rot, local_pos=None):
    """Turn motion whose capture floor is slightly tilted (CMU walks rise up to 7 cm over a few
    metres) so the feet's plane is level: a rotation about a horizontal axis through the contacts'
    centre, applied to the root.  Returns (root_pos, local_rot, degrees turned); tilts under
    ``MIN_TILT`` or over ``MAX_TILT`` degrees are left alone (0 degrees returned)."""
    points = sample_points(skeleton, root_pos, local_rot, local_pos)
    grad, pivot = floor_tilt(points)
    normal = np.array([-grad[0], -grad[1], 1.0])
    normal /= np.linalg.norm(normal)
    degrees = float(np.degrees(np.arccos(np.clip(normal[2], -1.0, 1.0))))
    if not MIN_TILT <= degrees <= MAX_TILT:
        return root_pos, local_rot, 0.0
    q = quat.between(normal, np.array([0.0, 0.0, 1.0]))
    root = pivot + quat.rotate(q, root_pos - pivot)
    rot = local_rot.copy()
    rot[:, 0] = quat.mul(q, local_rot[:, 0])
    return root, rot, degrees


def floor_lift(skeleton: Skeleton, root_pos, local_rot, local_pos=None, mode: str = "auto") -> float:
    """Metres to raise (+) or lower (-) Z-up motion so its feet stand on z = 0: "auto" the floor
    the stance feet stand on (``floor_height``), "lowest" the lowest point of any frame, "keep" 0."""
    if mode not in FLOOR_MODES:
        raise ValueError(f"floor must be one of {FLOOR_MODES}, got {mode!r}")
    if mode == "keep":
        return 0.0
    max_frames = MAX_FRAMES if mode == "auto" else len(root_pos)
    z = sample_points(skeleton, root_pos, local_rot, local_pos, max_frames)[..., 2]
    lift = -(floor_height(z) if mode == "auto" else float(z.min()))
    return lift if abs(lift) >= 1e-6 else 0.0


__all__ = ["FLOOR_MODES", "FORWARD_FOR_UP", "HUMAN_HEIGHT", "Orientation", "UNITS", "body_height", "detect_up",
           "floor_height", "floor_lift", "guess_unit_scale", "orient", "reorient", "sample_points", "unit_name"]

