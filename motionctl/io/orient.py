"""Units, up axis and floor of a clip, decided from the body and its motion, not the file's origin.

Exporters disagree about everything a rest pose or a root joint could tell: Rokoko-style rigs rest
with their bones along X, Z-up exports lie down in a Y-up reader, Character Creator puts the floor
a metre below the feet, DCC tools add a motionless root at the origin with the body metres away
(folded into the hips when the file is read: ``motionctl.io.roots``).  What every capture of a person
shares is the body: head above hips above feet, feet coming back to one floor, travel along the
ground.  So, with the clip read in its file's own frame and units, and only the body counted (the
hips, the first joint with more than one child, and everything below it):

- up axis: the mean direction from the feet (the ends of the legs: the smaller subtrees at the
  hips) to the head (a joint named head, else the largest subtree there), over frames, signed
  so the head is up; its evidence (how well that direction holds frame by frame, how much taller
  the body is along it than across it, whether the hips travel across it rather than along it)
  gives a confidence.  With weak evidence the file's convention (Y) is kept unless the body
  clearly points elsewhere, and the import report says so with the setting to change;
- unit: the candidate (metres, decimetres, centimetres, millimetres, inches, CMU's 1/0.45-inch
  units, feet) that makes the body's stature closest to a human's 1.7 m, on a log scale;
- stature: floor to the top of the head as animators measure a character: the highest point of
  the skeleton (end sites included) above its lowest, the 75th percentile over frames (arms
  raised or crouching aside); a head joint without an end site or child gets its top estimated
  (``HEAD_TOP``);
- floor: levelled first when the capture's floor is slightly tilted (the plane through each
  frame's lowest point, 0.2-5 degrees), then the 20th percentile over frames of the lowest joint
  or end site, so stance feet stand on z = 0 and airborne frames (jumps) do not lift the floor.

Each decision is either given by the user (kept as is) or detected, and ``Orientation`` records
which, with the measured stature, the evidence and any warning (a body over 2.3 m or under 1 m
tall, feet never near the floor, an up axis the body does not clearly show), for the import report.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .. import fmath, quat
from ..body import Body
from ..skeleton import Skeleton, axis_conversion, end_site_positions, forward_kinematics

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
CLEAR_ALIGNMENT = 0.7  # mean unit feet-to-head vector along the axis: an upright body gives 0.95-1
# A head joint without an end site sits at the skull base, at about 0.91 of stature (ear level in
# standard anthropometric proportions): its top is estimated this share of its height above it.
HEAD_TOP = 1 / 0.91 - 1
PLAUSIBLE_STATURE = (1.0, 2.3)  # metres: outside, the import report says which setting to check
FEET_NEAR_FLOOR = 0.15  # metres: feet whose lowest point stays higher than this "never reach the floor"


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
    evidence: str = ""                                # what the up axis was decided from
    confidence: float = float("nan")                  # 0-1: how clearly the body shows its up axis
    warnings: list = field(default_factory=list)      # one line each, naming the setting to check
    notes: list = field(default_factory=list)         # what reading did (an extra root folded...)

    def source(self, what: str) -> str:
        """How a decision ("unit", "up", "floor") was made: detected, from the file, or set."""
        return "detected" if what in self.detected else ("from the file" if what in self.declared else "set")

    def describe(self) -> str:
        """One line for the import report."""
        unit = self.unit or f"{self.unit_scale:g} m per unit"
        src = {k: self.source(k) for k in ("unit", "up", "floor")}
        text = f"units {unit} ({src['unit']}; body {self.height:.2f} m tall), up axis {self.up} ({src['up']}"
        if "up" in self.detected and self.evidence:
            text += f": {self.evidence}"
        text += ")"
        if abs(self.floor) >= 0.005:
            text += f", floor: moved {100 * self.floor:+.1f} cm ({src['floor']})"
        if self.tilt:
            text += f", floor levelled by {self.tilt:.1f}°"
        for note in self.notes:
            text += f"; {note}"
        for warning in self.warnings:
            text += f"; WARNING: {warning}"
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
    return float(scales[np.argmin(np.abs(fmath.log(height_in_file_units * scales / HUMAN_HEIGHT)))])


def sample_points(skeleton: Skeleton, root_pos: np.ndarray, local_rot: np.ndarray, local_pos=None,
                  max_frames: int = MAX_FRAMES) -> np.ndarray:
    """[F', J + E, 3] joint and end-site positions of up to ``max_frames`` evenly spread frames."""
    n = len(root_pos)
    idx = np.unique(np.linspace(0, n - 1, min(n, max_frames)).astype(np.int64))
    lp = None if local_pos is None else local_pos[idx]
    pos, rot = forward_kinematics(skeleton, root_pos[idx], local_rot[idx], lp)
    return np.concatenate((pos, end_site_positions(skeleton, pos, rot)), axis=1)


def detect_up(skeleton: Skeleton, points: np.ndarray, default: str = "Y") -> tuple[str, float, str]:
    """(the file axis pointing up, e.g. "Y" or "-Z"; confidence 0-1; the evidence in words) from
    sampled positions [F, P, 3] (joints first, then end sites), counting the body only.

    The axis is the one the mean feet-to-head direction lies along (``CLEAR_ALIGNMENT``: upright
    bodies give 0.95-1), or, for a rig without legs and head, the one the body is clearly tallest
    along (``CLEAR_RATIO``); ``default`` (BVH's convention) when neither is clear.  Confidence is
    low when the evidence is weak or contradicted (the hips travelling along the chosen axis)."""
    body = Body.of(skeleton)
    pts = body.points(points)
    extent = np.median(pts.max(axis=1) - pts.min(axis=1), axis=0)  # [3]
    hips, upper, legs = body.hips, body.upper, body.leg_ends
    sizes = sorted(len(v) for v in body.child_subtrees(hips).values())  # one pass (a pass per child: J²)
    if body.head is None and (len(sizes) < 2 or sizes[-1] == sizes[-2]):
        legs = legs[:0]  # no head and no subtree larger than the others: nothing tells the upper body
        upper = np.array([hips]) if len(sizes) < 1 else upper
    if len(legs):
        v = points[:, upper].mean(axis=1) - points[:, legs].mean(axis=1)  # feet to head, [F, 3]
    else:
        v = points[:, upper].mean(axis=1) - points[:, hips]
    u = v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)
    mean = u.mean(axis=0)
    axis = int(np.argmax(np.abs(mean)))
    alignment = float(abs(mean[axis]))
    ratio = float(extent[axis] / max(np.delete(extent, axis).max(), 1e-12))
    clear = alignment >= CLEAR_ALIGNMENT if len(legs) else ratio >= CLEAR_RATIO
    if not clear:
        by_extent = int(np.argmax(extent))
        if len(legs) == 0 or ratio < CLEAR_RATIO:
            axis = "XYZ".index(default.lstrip("-"))
            alignment = float(abs(mean[axis]))
        else:
            axis = by_extent
    sign = 1.0 if mean[axis] >= 0 else -1.0
    head_up = float(np.mean(sign * u[:, axis] > 0))
    # The hips travel along the ground: their farthest point from the start lying along the axis
    # contradicts it (only when they go farther than half the body's size: a jump does not).
    away = points[:, hips] - points[:0 + 1, hips]
    far = away[int(np.argmax(np.linalg.norm(away, axis=1)))]
    moved = float(np.linalg.norm(far)) > 0.5 * extent.max()
    along = float(abs(far[axis]) / np.linalg.norm(far)) if moved else 0.0
    confidence = float(np.clip(min(alignment / CLEAR_ALIGNMENT, 1.0) * head_up * (1.0 - max(0.0, along - 0.5)), 0, 1))
    if not clear:
        confidence = min(confidence, 0.5)
    travel = f", travels {100 * (1 - along):.0f}% across it" if moved else ""
    evidence = (f"head above {'feet' if len(legs) else 'hips'} in {100 * head_up:.0f}% of frames, "
                f"alignment {alignment:.2f}, body {ratio:.1f}x taller than wide{travel}")
    return ("" if sign > 0 else "-") + "XYZ"[axis], confidence, evidence


def upright_share(skeleton: Skeleton, points: np.ndarray) -> float:
    """Share of frames in which the head (or upper body) stands clearly above the feet (by a third of
    the body's length along the feet-to-head direction), in Z-up sampled positions [F, P, 3]; 1 for a
    rig without legs (nothing to tell)."""
    body = Body.of(skeleton)
    legs = body.leg_ends
    if len(legs) == 0:
        return 1.0
    v = points[:, body.upper].mean(axis=1) - points[:, legs].mean(axis=1)
    return float(np.mean(v[:, 2] > np.linalg.norm(v, axis=1) / 3))


def body_height(points_z: np.ndarray) -> float:
    """The body's height from vertical positions [F, P]: 75th percentile of the per-frame extent."""
    return float(np.percentile(points_z.max(axis=1) - points_z.min(axis=1), 75))


def stature(skeleton: Skeleton, points_z: np.ndarray) -> float:
    """Floor to top of head, as animators measure a character, from vertical positions [F, P]
    (joints, then end sites) of an upright body: ``body_height`` of the body's points, with a
    head joint that has neither an end site nor a child joint given its estimated top (``HEAD_TOP``
    of its height above the body's lowest point)."""
    head = Body.of(skeleton).head
    lengths = np.linalg.norm(skeleton.end_offsets, axis=1) if len(skeleton.end_parent) else np.zeros(0)
    size = max(float(np.linalg.norm(skeleton.offsets, axis=1).sum()), 1e-12)
    has_top = head is not None and (len(skeleton.children(head)) > 0 or
                                     bool(np.any(lengths[skeleton.end_parent == head] > 0.005 * size)))
    body = Body.of(skeleton).points(points_z[..., None])[..., 0]
    if head is None or has_top:
        return body_height(body)
    low = body.min(axis=1)
    top = np.maximum(body.max(axis=1), points_z[:, head] + HEAD_TOP * (points_z[:, head] - low))
    return float(np.percentile(top - low, 75))


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
    points = sample_points(skeleton, root_pos, local_rot, local_pos)
    confidence, evidence = float("nan"), ""
    if axis_up is None:
        axis_up, confidence, evidence = detect_up(skeleton, points)
        if not axis_forward or axis_forward.lstrip("-") == axis_up.lstrip("-"):
            axis_forward = FORWARD_FOR_UP[axis_up]
        detected.add("up")
    axis_forward = axis_forward or FORWARD_FOR_UP.get(axis_up, "-Z")
    conv = axis_conversion(axis_forward, axis_up)
    height_file = stature(skeleton, (points @ conv.T)[..., 2])
    if unit_scale is None:
        unit_scale = guess_unit_scale(height_file)
        detected.add("unit")
    sk, root, rot, lpos = reorient(skeleton, root_pos, local_rot, local_pos, conv, unit_scale)
    info = Orientation(up=axis_up, forward=axis_forward, unit_scale=float(unit_scale), unit=unit_name(unit_scale),
                       height=height_file * unit_scale, detected=detected, evidence=evidence, confidence=confidence)
    standing = upright_share(skeleton, points @ conv.T)
    if "up" not in detected and standing < 0.5:
        info.warnings.append(f"with up axis {axis_up} the body does not stand (head above the feet in "
                             f"{100 * standing:.0f}% of frames): check Up (--axis-up), or leave it Automatic")
    if "up" in detected and confidence < 0.5:
        info.warnings.append(f"the body does not clearly show which way is up ({evidence}): up axis {axis_up} "
                             f"kept; set Up (--axis-up) if the body lies down")
    lo, hi = PLAUSIBLE_STATURE
    if not lo <= info.height <= hi:
        how = "detected" if "unit" in detected else "set"
        info.warnings.append(f"the body comes out {info.height:.2f} m tall in {info.unit or 'the given unit'} ({how}):"
                             f" set Units (--unit-scale) if that is wrong")
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
    # Rounded far below what a floor's tilt can show: the fit's last bits depend on the CPU's BLAS
    # and LAPACK kernels, and a tilt 1e-17 off turned every frame of a clip by that much.
    return np.round(grad, 9), pivot


def level_floor(skeleton: Skeleton, root_pos, local_rot, local_pos=None):
    """Turn motion whose capture floor is slightly tilted (CMU walks rise up to 7 cm over a few
    metres) so the feet's plane is level: a rotation about a horizontal axis through the contacts'
    centre, applied to the root.  Returns (root_pos, local_rot, degrees turned); tilts under
    ``MIN_TILT`` or over ``MAX_TILT`` degrees are left alone (0 degrees returned)."""
    points = Body.of(skeleton).points(sample_points(skeleton, root_pos, local_rot, local_pos))
    grad, pivot = floor_tilt(points)
    normal = np.array([-grad[0], -grad[1], 1.0])
    normal /= np.linalg.norm(normal)
    degrees = float(np.degrees(fmath.arccos(np.clip(normal[2], -1.0, 1.0))))
    if not MIN_TILT <= degrees <= MAX_TILT:
        return root_pos, local_rot, 0.0
    q = quat.between(normal, np.array([0.0, 0.0, 1.0]))
    root = pivot + quat.rotate(q, root_pos - pivot)
    rot = local_rot.copy()
    rot[:, 0] = quat.mul(q, local_rot[:, 0])
    return root, rot, degrees


def feet_off_floor(skeleton: Skeleton, root_pos, local_rot, local_pos=None) -> float:
    """Metres (Z up, floor at z = 0): how high the legs' lowest point (joints and end sites below
    the hips other than the upper body) stays in the frames where it is lowest (10th percentile).
    Capture of a person standing, walking or running gives about 0; NaN for a rig with no legs."""
    body = Body.of(skeleton)
    legs = np.setdiff1d(body.joints, np.concatenate((body.upper, [body.hips])))
    if len(legs) == 0:
        return float("nan")
    points = sample_points(skeleton, root_pos, local_rot, local_pos)
    n_j = skeleton.n_joints
    z = np.concatenate((points[:, legs, 2], points[:, n_j:][:, np.isin(skeleton.end_parent, legs), 2]), axis=1)
    return float(np.percentile(z.min(axis=1), 10))


def floor_lift(skeleton: Skeleton, root_pos, local_rot, local_pos=None, mode: str = "auto") -> float:
    """Metres to raise (+) or lower (-) Z-up motion so its feet stand on z = 0: "auto" the floor
    the stance feet stand on (``Body.floor``), "lowest" the lowest point of any frame, "keep" 0."""
    if mode not in FLOOR_MODES:
        raise ValueError(f"floor must be one of {FLOOR_MODES}, got {mode!r}")
    if mode == "keep":
        return 0.0
    max_frames = MAX_FRAMES if mode == "auto" else len(root_pos)
    body = Body.of(skeleton)
    z = sample_points(skeleton, root_pos, local_rot, local_pos, max_frames)[..., 2]
    lift = -(body.floor(z) if mode == "auto" else float(body.points(z[..., None]).min()))
    return lift if abs(lift) >= 1e-6 else 0.0


__all__ = ["FLOOR_MODES", "FORWARD_FOR_UP", "HUMAN_HEIGHT", "Orientation", "UNITS", "body_height", "detect_up",
           "feet_off_floor", "floor_lift", "guess_unit_scale", "orient", "reorient", "sample_points", "stature",
           "unit_name"]

