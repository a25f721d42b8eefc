"""Clips, the root frame, resampling, foot contacts and the motion database.

A ``Clip`` is one take on one ``Skeleton``: ``root_pos [F, 3]`` metres and
``local_rot [F, J, 4]`` unit quaternions (w, x, y, z), Z up.  The root frame of a pose is the
ground projection of the hips plus a heading; root motion is expressed in the previous root
frame, with local +Y forward, +X to the character's right and positive yaw a turn to the left.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field, replace

import numpy as np

from . import quat
from .errors import MotionFileError, SkeletonMismatchError
from .skeleton import Skeleton, end_site_positions, forward_kinematics
from .store import open_archive, save_archive
from .tags import FOOT_ACTIONS, canonical_set, tags_from_text


@dataclass(eq=False)
class Clip:
    """One motion take.

    root_pos   [F, 3] metres, world, Z up
    local_rot  [F, J, 4] unit quaternions, rest-aligned axes (see skeleton module)
    local_pos  [F, J, 3] or None: per-frame translations of joints with position channels
    frame_offset  leading frames of the source file that were trimmed (calibration pose)
    annotations   name -> array; e.g. "contacts" bool [F, 2], "action_centres" int [K]
    """

    name: str
    skeleton: Skeleton
    fps: float
    root_pos: np.ndarray
    local_rot: np.ndarray
    local_pos: np.ndarray | None = None
    tags: set = field(default_factory=set)
    annotations: dict = field(default_factory=dict)
    source: str = ""
    frame_offset: int = 0

    def __post_init__(self):
        self.root_pos = np.asarray(self.root_pos, dtype=float)
        self.local_rot = np.asarray(self.local_rot, dtype=float)
        self.tags = set(self.tags)
        f, j = self.local_rot.shape[:2]
        if self.local_rot.shape != (f, self.skeleton.n_joints, 4) or self.root_pos.shape != (f, 3):
            raise ValueError(f"clip {self.name!r}: arrays do not match {self.skeleton.n_joints} joints")
        if self.local_pos is not None and self.local_pos.shape != (f, j, 3):
            raise ValueError(f"clip {self.name!r}: local_pos must be [F, J, 3]")
        if not self.fps > 0:
            raise ValueError(f"clip {self.name!r}: fps must be positive, got {self.fps}")

    @property
    def n_frames(self) -> int:
        return self.local_rot.shape[0]

    @property
    def duration(self) -> float:
        """Seconds from the first to one past the last frame."""
        return self.n_frames / self.fps

    def world(self) -> tuple[np.ndarray, np.ndarray]:
        """World joint positions [F, J, 3] and rotations [F, J, 4]."""
        return forward_kinematics(self.skeleton, self.root_pos, self.local_rot, self.local_pos)

    def slice(self, start: int, stop: int) -> "Clip":
        ann = {k: v[start:stop] for k, v in self.annotations.items() if _is_per_frame(v, self.n_frames)}
        return replace(
            self,
            root_pos=self.root_pos[start:stop].copy(),
            local_rot=self.local_rot[start:stop].copy(),
            local_pos=None if self.local_pos is None else self.local_pos[start:stop].copy(),
            annotations=ann,
            frame_offset=self.frame_offset + start,
            tags=set(self.tags),
        )


def _is_per_frame(value, n_frames: int) -> bool:
    return isinstance(value, np.ndarray) and value.ndim >= 1 and value.shape[0] == n_frames


# --------------------------------------------------------------------------- joint roles

_ASF_LIMBS = {"hipjoint", "femur", "tibia", "foot", "toes", "clavicle", "humerus", "radius",
              "wrist", "hand", "fingers", "thumb"}


def _side(name: str) -> str | None:
    """'L', 'R' or None from common rig naming (LeftArm, LHipJoint, lfemur, CC_Base_L_Thigh, Arm.L)."""
    low = name.lower()
    if "left" in low:
        return "L"
    if "right" in low:
        return "R"
    tokens = re.split(r"[_.:|\s-]+", low)
    if "l" in tokens:
        return "L"
    if "r" in tokens:
        return "R"
    if len(name) > 1 and name[0] in "LR" and name[1].isupper():
        return name[0]
    if name[:1] in ("l", "r") and low[1:] in _ASF_LIMBS:
        return name[0].upper()
    return None


_SWAPS = (
    ("Left", "Right"), ("left", "right"), ("LEFT", "RIGHT"),
    ("_L_", "_R_"), ("_l_", "_r_"), (".L", ".R"), (".l", ".r"), ("_L", "_R"), ("_l", "_r"),
)


def mirror_joint_map(names) -> np.ndarray:
    """int [J]: for each joint, its left/right counterpart (itself for centre joints)."""
    names = list(names)
    lookup = {n: i for i, n in enumerate(names)}
    out = np.arange(len(names))
    for i, n in enumerate(names):
        cands = []
        for a, b in _SWAPS:
            if a in n:
                cands.append(n.replace(a, b))
            if b in n:
                cands.append(n.replace(b, a))
        if len(n) > 1 and n[0] in "lLrR":
            other = {"l": "r", "L": "R", "r": "l", "R": "L"}[n[0]]
            cands.append(other + n[1:])
        for c in cands:
            if c in lookup and c != n and _side(c) != _side(n):
                out[i] = lookup[c]
                break
    return out


def foot_joints(skeleton: Skeleton) -> dict:
    """{'L': (ankle, toe), 'R': (ankle, toe)} joint indices found by name, else by geometry."""
    depth = skeleton.depth()
    result = {}
    for side in "LR":
        def pick(words):
            cands = [
                j for j, n in enumerate(skeleton.names)
                if _side(n) == side and any(w in n.lower() for w in words)
            ]
            return min(cands, key=lambda j: depth[j]) if cands else None

        toe = pick(("toe",))
        ankle = pick(("ankle", "foot"))
        if ankle is None and toe is not None:
            ankle = int(skeleton.parents[toe])
        if toe is None and ankle is not None:
            kids = skeleton.children(ankle)
            toe = int(kids[0]) if len(kids) else ankle
        if ankle is not None:
            result[side] = (int(ankle), int(toe))
    if len(result) < 2:
        # Geometry fallback: the lowest rest joints on each side of the body (x sign).
        rest = skeleton.rest_positions()
        for side, sign in (("L", -1.0), ("R", 1.0)):
            if side in result:
                continue
            mask = np.sign(rest[:, 0] * sign) > 0
            if not mask.any():
                mask[:] = True
            order = np.flatnonzero(mask)[np.argsort(rest[mask, 2])]
            result[side] = (int(order[min(1, len(order) - 1)]), int(order[0]))
    return result


def hip_joints(skeleton: Skeleton) -> tuple[int, int] | None:
    """(left, right) joints nearest the root that mirror each other, for the facing direction."""
    mirror = mirror_joint_map(skeleton.names)
    depth = skeleton.depth()
    rest = skeleton.rest_positions()
    pairs = [(j, int(mirror[j])) for j in range(skeleton.n_joints) if mirror[j] != j and _side(skeleton.names[j]) == "L"]
    pairs = [p for p in pairs if np.linalg.norm(rest[p[0], :2] - rest[p[1], :2]) > 1e-4]
    if not pairs:
        return None
    # Prefer the leg chain (joints below the root) over the arms.
    pairs.sort(key=lambda p: (rest[p[0], 2] > rest[0, 2] + 1e-6, depth[p[0]]))
    return pairs[0]


def rest_forward(skeleton: Skeleton) -> np.ndarray:
    """Unit forward direction [3] of the rest pose (left-to-right hip axis crossed with up)."""
    hips = hip_joints(skeleton)
    if hips is None:
        return np.array([0.0, -1.0, 0.0])  # Blender's convention for characters
    rest = skeleton.rest_positions()
    left = rest[hips[0]] - rest[hips[1]]
    left[2] = 0.0
    f = np.cross(left, [0.0, 0.0, 1.0])
    return f / np.linalg.norm(f)


# Reflection through the world plane x = 0: positions negate x; a rotation's axis is a
# pseudovector, so quaternions (w, x, y, z) become (w, x, -y, -z).
_MIRROR_POS = np.array([-1.0, 1.0, 1.0])
_MIRROR_QUAT = np.array([1.0, 1.0, -1.0, -1.0])
_SIDE_TAGS = {"left": "right", "right": "left"}


def mirror_clip(clip: Clip) -> Clip:
    """The left/right mirror image of a clip (the paper's suggested reflection).

    Joints swap with their counterparts (LeftHip <-> RightHip), and the mirrored clip carries the
    mirrored bone offsets, so its world joint positions are exactly the reflection of the
    original's even on an asymmetric skeleton.  Tagged "mirrored"; "left"/"right" tags swap.
    """
    sk = clip.skeleton
    m = mirror_joint_map(sk.names)
    offsets = sk.offsets[m] * _MIRROR_POS
    end_parent = m[sk.end_parent]
    end_offsets = sk.end_offsets * _MIRROR_POS
    order = np.argsort(end_parent, kind="stable")
    msk = Skeleton(sk.names, sk.parents, offsets, sk.channels, end_parent[order], end_offsets[order], sk.unit_scale)
    local_rot = clip.local_rot[:, m] * _MIRROR_QUAT
    local_pos = None if clip.local_pos is None else clip.local_pos[:, m] * _MIRROR_POS
    tags = {_SIDE_TAGS.get(t, t) for t in clip.tags} | {"mirrored"}
    ann = dict(clip.annotations)
    if "contacts" in ann:
        ann["contacts"] = ann["contacts"][:, ::-1]
    return replace(clip, name=clip.name + "_mirror", skeleton=msk, root_pos=clip.root_pos * _MIRROR_POS,
                   local_rot=local_rot, local_pos=local_pos, tags=tags, annotations=ann)


# --------------------------------------------------------------------------- root frame

def root_frame(clip: Clip, smooth_seconds: float = 0.2) -> tuple[np.ndarray, np.ndarray]:
    """Per frame: ground position [F, 2] of the hips and heading [F] (radians, unwrapped).

    The heading is the hips' forward axis projected on the ground, smoothed with a Gaussian of
    ``smooth_seconds`` (the pelvis swings a few degrees every step).
    """
    forward = rest_forward(clip.skeleton)
    raw = quat.yaw_about_z(clip.local_rot[:, 0], forward)
    yaw = np.unwrap(raw)
    sigma = smooth_seconds * clip.fps
    if sigma > 0 and clip.n_frames > 1:
        yaw = gaussian_smooth(yaw, sigma)
    return clip.root_pos[:, :2].copy(), yaw


def gaussian_smooth(x: np.ndarray, sigma: float, axis: int = 0) -> np.ndarray:
    """Gaussian filter along ``axis`` with edge values repeated (no scipy needed)."""
    if sigma <= 0:
        return x.copy()
    radius = int(np.ceil(3 * sigma))
    k = np.exp(-0.5 * (np.arange(-radius, radius + 1) / sigma) ** 2)
    k /= k.sum()
    x = np.moveaxis(np.asarray(x, dtype=float), axis, 0)
    pad = np.concatenate((np.repeat(x[:1], radius, 0), x, np.repeat(x[-1:], radius, 0)), 0)
    # Sliding window over the padded signal, weighted by the kernel.
    win = np.lib.stride_tricks.sliding_window_view(pad, len(k), axis=0)
    out = np.tensordot(win, k, axes=([-1], [0]))
    return np.moveaxis(out, 0, axis)


def root_motion(clip: Clip, smooth_seconds: float = 0.2) -> np.ndarray:
    """[F, 3] per-frame (dx, dy, dyaw) in the previous frame's root frame; row 0 is zero."""
    ground, yaw = root_frame(clip, smooth_seconds)
    out = np.zeros((clip.n_frames, 3))
    if clip.n_frames < 2:
        return out
    d = ground[1:] - ground[:-1]
    c, s = np.cos(yaw[:-1]), np.sin(yaw[:-1])
    # World -> local: rotate by -yaw.
    out[1:, 0] = c * d[:, 0] + s * d[:, 1]
    out[1:, 1] = -s * d[:, 0] + c * d[:, 1]
    out[1:, 2] = np.diff(yaw)
    return out


def positions_in_root_frame(clip: Clip, smooth_seconds: float = 0.2) -> np.ndarray:
    """[F, J, 3] joint positions relative to each frame's root frame (ground position, heading)."""
    pos, _ = clip.world()
    ground, yaw = root_frame(clip, smooth_seconds)
    return to_root_frame(pos, ground, yaw)


def to_root_frame(points: np.ndarray, ground: np.ndarray, yaw: np.ndarray) -> np.ndarray:
    """Express world points [F, K, 3] in per-frame root frames (ground [F, 2], yaw [F])."""
    rel = points.copy()
    rel[..., :2] -= ground[:, None, :]
    c, s = np.cos(yaw)[:, None], np.sin(yaw)[:, None]
    x, y = rel[..., 0].copy(), rel[..., 1].copy()
    rel[..., 0] = c * x + s * y
    rel[..., 1] = -s * x + c * y
    return rel


# --------------------------------------------------------------------------- resampling

def resample(clip: Clip, fps: float) -> Clip:
    """The clip at another frame rate: slerp for rotations, linear for positions."""
    if fps <= 0:
        raise ValueError(f"fps must be positive, got {fps}")
    if abs(fps - clip.fps) < 1e-9:
        return clip
    n_out = max(1, int(np.floor((clip.n_frames - 1) * fps / clip.fps + 1e-9)) + 1)
    t = np.arange(n_out) * (clip.fps / fps)
    i0 = np.minimum(np.floor(t).astype(np.int64), clip.n_frames - 1)
    i1 = np.minimum(i0 + 1, clip.n_frames - 1)
    w = t - i0
    rot = quat.slerp(clip.local_rot[i0], clip.local_rot[i1], w[:, None])
    root = clip.root_pos[i0] * (1 - w[:, None]) + clip.root_pos[i1] * w[:, None]
    lpos = None
    if clip.local_pos is not None:
        lpos = clip.local_pos[i0] * (1 - w[:, None, None]) + clip.local_pos[i1] * w[:, None, None]
    nearest = np.rint(t).astype(np.int64).clip(0, clip.n_frames - 1)
    ann = {}
    for k, v in clip.annotations.items():
        if _is_per_frame(v, clip.n_frames):
            ann[k] = v[nearest]
        elif k == "action_centres":
            ann[k] = np.rint(np.asarray(v) * fps / clip.fps).astype(np.int64)
        else:
            ann[k] = v
    return replace(clip, fps=float(fps), root_pos=root, local_rot=rot, local_pos=lpos, annotations=ann, tags=set(clip.tags))


# --------------------------------------------------------------------------- foot contacts

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
    floor = np.percentile(pos[:, toes, 2], s.floor_percentile)
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


# --------------------------------------------------------------------------- calibration pose

def detect_calibration_frames(clip: Clip, max_seconds: float = 0.1, root_speed: float = 20.0,
                              joint_speed: float = 5.0, joint_fraction: float = 0.5) -> int:
    """Number of leading frames that are a calibration pose (0 if none).

    A calibration frame is followed by a change no captured body makes in one frame: the root
    moving faster than ``root_speed`` m/s (a T-pose stored elsewhere, then a teleport), or more
    than ``joint_fraction`` of the joints moving faster than ``joint_speed`` m/s relative to the
    root (a T-pose snapping to the first captured pose).  On ../shared/mocap, calibration frames
    score 0.58-0.81 and real motion at most 0.32 (dives, jumps); single-joint marker glitches
    (CMU 16_15, 16_28) stay below 0.2 and are not trimmed.
    """
    if clip.n_frames < 3:
        return 0
    max_frames = max(1, int(round(max_seconds * clip.fps)))
    k = min(max_frames + 1, clip.n_frames - 1)
    pos, _ = forward_kinematics(clip.skeleton, clip.root_pos[: k + 1], clip.local_rot[: k + 1],
                                None if clip.local_pos is None else clip.local_pos[: k + 1])
    local = pos - pos[:, :1]
    root_v = np.linalg.norm(np.diff(clip.root_pos[: k + 1], axis=0), axis=-1) * clip.fps
    fast = (np.linalg.norm(np.diff(local, axis=0), axis=-1) * clip.fps > joint_speed).mean(axis=-1)
    jumps = np.flatnonzero((root_v > root_speed) | (fast > joint_fraction))
    jumps = jumps[jumps < max_frames]
    return int(jumps[-1] + 1) if len(jumps) else 0


# --------------------------------------------------------------------------- actions

def action_centres(clip: Clip) -> np.ndarray:
    """Action centre frames: annotated (sidecar "action_centres"), else found from the body:
    picks at the lowest hand, punches and strikes at the hand farthest from the chest, kicks at
    the foot farthest from the hips, ducks at the lowest head, jumps at the highest hips; one
    per extreme at least 1 s apart (empty for clips without an action tag)."""
    if "action_centres" in clip.annotations:
        return np.asarray(clip.annotations["action_centres"], dtype=np.int64)
    tags = canonical_set(clip.tags)
    if not tags & ({"pick", "reach", "punch", "duck", "jump"} | FOOT_ACTIONS):
        return np.zeros(0, dtype=np.int64)
    pos, _ = clip.world()
    if tags & {"pick", "reach"} and hand_joints(clip):
        score = -pos[:, hand_joints(clip), 2].min(axis=1)
    elif tags & {"punch"} and hand_joints(clip):
        chest = pos[:, _chest_joint(clip)]
        score = np.linalg.norm(pos[:, hand_joints(clip)] - chest[:, None], axis=-1).max(axis=1)
    elif tags & FOOT_ACTIONS:
        feet = [v[1] for v in foot_joints(clip.skeleton).values()]
        score = np.linalg.norm(pos[:, feet] - pos[:, :1], axis=-1).max(axis=1)
    elif tags & {"duck"}:
        score = -pos[:, _head_joint(clip), 2]
    elif tags & {"jump"}:
        score = pos[:, 0, 2]
    else:
        return np.zeros(0, dtype=np.int64)
    gap = int(round(clip.fps))
    order = np.argsort(-score)
    chosen = []
    threshold = np.percentile(score, 90)
    for f in order:
        if score[f] < threshold:
            break
        if all(abs(f - g) >= gap for g in chosen):
            chosen.append(int(f))
    return np.array(sorted(chosen), dtype=np.int64)


def hand_joints(clip: Clip) -> list:
    names = [n.lower() for n in clip.skeleton.names]
    depth = clip.skeleton.depth()
    out = []
    for side in ("l", "r"):
        cands = [j for j, n in enumerate(names) if ("hand" in n or "wrist" in n) and
                 (n.startswith(side) or f"_{side}_" in n or ("left" if side == "l" else "right") in n)]
        if cands:
            out.append(min(cands, key=lambda j: depth[j]))
    return out


def _head_joint(clip: Clip) -> int:
    names = [n.lower() for n in clip.skeleton.names]
    heads = [j for j, n in enumerate(names) if "head" in n]
    return heads[0] if heads else int(np.argmax(clip.skeleton.rest_positions()[:, 2]))


def _chest_joint(clip: Clip) -> int:
    names = [n.lower() for n in clip.skeleton.names]
    for key in ("chest", "spine", "thorax", "upperback"):
        for j, n in enumerate(names):
            if key in n:
                return j
    return 0


# --------------------------------------------------------------------------- tags

def tags_from_name(name: str) -> set:
    """Tags read from a file or clip name (see ``motionctl.tags``)."""
    return tags_from_text(name)


def sidecar_path(path: str) -> str:
    return os.path.splitext(path)[0] + ".json"


def read_sidecar(path: str) -> dict:
    """Tags, description and annotations from ``<file>.json`` beside a motion file ({} if absent).

    Format: {"tags": ["walk", ...], "description": "walk, veer left", "action_centres": [frame, ...]};
    every key is optional.
    """
    side = sidecar_path(path)
    if not os.path.isfile(side):
        return {}
    try:
        with open(side, encoding="utf-8") as fh:
            data = json.load(fh)
    except json.JSONDecodeError as exc:
        raise MotionFileError(side, f"invalid JSON: {exc.msg}", exc.lineno) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise MotionFileError(side, f"cannot read sidecar: {exc}") from None
    if not isinstance(data, dict):
        raise MotionFileError(side, 'expected an object like {"tags": ["walk"]} or {"description": "walk"}')
    tags = data.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise MotionFileError(side, '"tags" must be a list of words, like ["walk", "turn"]')
    if not isinstance(data.get("description", ""), str):
        raise MotionFileError(side, '"description" must be text')
    centres = data.get("action_centres", [])
    if not isinstance(centres, list) or not all(isinstance(f, int) and not isinstance(f, bool) for f in centres):
        raise MotionFileError(side, '"action_centres" must be a list of frame numbers')
    return data


def apply_tags(clip: Clip, path: str) -> Clip:
    """Tags from the sidecar's "tags"; else from its "description" (the CMU index's words) and the
    file name; without a sidecar, from the file name.  Always in the canonical vocabulary."""
    side = read_sidecar(path)
    if side.get("tags"):
        clip.tags |= canonical_set(side["tags"])
    else:
        clip.tags |= tags_from_text(side.get("description", "")) | tags_from_name(clip.name)
    if "action_centres" in side:
        clip.annotations["action_centres"] = np.asarray(side["action_centres"], dtype=np.int64) - clip.frame_offset
    return clip


# --------------------------------------------------------------------------- database

class MotionDatabase:
    """Many clips on one skeleton topology, with concatenated per-frame arrays.

    Clips may differ in bone lengths (CMU subjects do); each keeps its own offsets.
    ``clip_start[c]`` is the first global frame of clip c; ``frame_clip`` maps back.
    """

    def __init__(self, skeleton: Skeleton, clips=()):
        self.skeleton = skeleton
        self.clips: list[Clip] = []
        for c in clips:
            self.add(c)

    def add(self, clip: Clip) -> None:
        diff = self.skeleton.first_difference(clip.skeleton)
        if diff is not None:
            raise SkeletonMismatchError(clip.name, *diff)
        if self.clips and abs(clip.fps - self.fps) > 1e-6:
            raise ValueError(f"clip {clip.name!r} is at {clip.fps} fps, the database at {self.fps}; resample it first")
        if clip.n_frames == 0:
            raise ValueError(f"clip {clip.name!r} has no frames")
        self.clips.append(clip)
        self._cache = None

    @property
    def fps(self) -> float:
        return self.clips[0].fps if self.clips else 0.0

    @property
    def n_frames(self) -> int:
        return int(sum(c.n_frames for c in self.clips))

    @property
    def clip_start(self) -> np.ndarray:
        return np.concatenate(([0], np.cumsum([c.n_frames for c in self.clips])))[:-1].astype(np.int64)

    def _concat(self):
        if getattr(self, "_cache", None) is None:
            self._cache = (
                np.concatenate([c.root_pos for c in self.clips]),
                np.concatenate([c.local_rot for c in self.clips]),
                np.repeat(np.arange(len(self.clips)), [c.n_frames for c in self.clips]),
            )
        return self._cache

    @property
    def root_pos(self) -> np.ndarray:
        return self._concat()[0]

    @property
    def local_rot(self) -> np.ndarray:
        return self._concat()[1]

    @property
    def frame_clip(self) -> np.ndarray:
        return self._concat()[2]

    def locate(self, frame: int) -> tuple[int, int]:
        """(clip index, frame within the clip) of a global frame index."""
        c = int(self.frame_clip[frame])
        return c, int(frame - self.clip_start[c])

    def save(self, path) -> None:
        """Write every clip to one ``.npz`` (plain arrays and JSON text, no pickle)."""
        sk = self.skeleton
        meta = {
            "names": list(sk.names),
            "channels": [list(c) for c in sk.channels],
            "unit_scale": sk.unit_scale,
            "clips": [
                {
                    "name": c.name, "fps": c.fps, "tags": sorted(c.tags), "source": c.source,
                    "frame_offset": c.frame_offset, "n_frames": c.n_frames,
                    "has_local_pos": c.local_pos is not None,
                    "annotations": sorted(k for k, v in c.annotations.items() if isinstance(v, np.ndarray)),
                }
                for c in self.clips
            ],
        }
        arrays = {"parents": sk.parents, "offsets": sk.offsets, "end_parent": sk.end_parent, "end_offsets": sk.end_offsets}
        for i, c in enumerate(self.clips):
            arrays[f"c{i}_root_pos"] = c.root_pos
            arrays[f"c{i}_local_rot"] = c.local_rot
            arrays[f"c{i}_offsets"] = c.skeleton.offsets
            arrays[f"c{i}_end_offsets"] = c.skeleton.end_offsets
            if c.local_pos is not None:
                arrays[f"c{i}_local_pos"] = c.local_pos
            for k, v in c.annotations.items():
                if isinstance(v, np.ndarray):
                    arrays[f"c{i}_ann_{k}"] = v
        save_archive(path, DATABASE_FORMAT, meta, arrays)

    @classmethod
    def load(cls, path) -> "MotionDatabase":
        with open_archive(path, DATABASE_FORMAT, "database cache") as (meta, z):
            sk = Skeleton(meta["names"], z["parents"], z["offsets"], meta["channels"],
                          z["end_parent"], z["end_offsets"], meta["unit_scale"])
            db = cls(sk)
            for i, cm in enumerate(meta["clips"]):
                csk = sk.with_offsets(z[f"c{i}_offsets"], z[f"c{i}_end_offsets"])
                ann = {k: z[f"c{i}_ann_{k}"] for k in cm["annotations"]}
                db.add(Clip(
                    cm["name"], csk, cm["fps"], z[f"c{i}_root_pos"], z[f"c{i}_local_rot"],
                    z[f"c{i}_local_pos"] if cm["has_local_pos"] else None,
                    set(cm["tags"]), ann, cm["source"], cm["frame_offset"],
                ))
        return db


DATABASE_FORMAT = "motionctl.database/1"


def world_with_ends(clip: Clip) -> np.ndarray:
    """[F, J + E, 3] world positions of joints then end sites."""
    pos, rot = clip.world()
    return np.concatenate((pos, end_site_positions(clip.skeleton, pos, rot)), axis=1)
