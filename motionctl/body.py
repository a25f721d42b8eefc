"""The body in a clip: which joints are feet, hands, head and hips, left/right mirroring, foot
contacts, calibration poses and action centres (what the engines need to know about a skeleton
without being told)."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

import numpy as np

from .clip import Clip
from .skeleton import Skeleton, forward_kinematics
from .tags import FOOT_ACTIONS, canonical_set

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
    """{'L': (ankle, toe), 'R': (ankle, toe)} joint indices found by name, else by geometry
    (found once per skeleton: a skeleton is never modified)."""
    if getattr(skeleton, "_feet", None) is None:
        skeleton._feet = _find_feet(skeleton)
    return dict(skeleton._feet)


def _find_feet(skeleton: Skeleton) -> dict:
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


def flight(clip: Clip, centres=None) -> np.ndarray:
    """bool [F]: the frames a jump is in the air: each run of frames with neither foot in contact
    (``foot_contacts``) that holds a jump centre (``centres``, default the clip's own
    ``action_centres``; with none given and none found, the longest such run).  Only this part of a
    jump may pass over a chasm: the run-up and the landing are on the ground."""
    air = ~foot_contacts(clip).any(axis=1)
    edges = np.flatnonzero(np.diff(np.r_[0, air.astype(np.int8), 0]))
    runs = edges.reshape(-1, 2)  # [start, stop) of each airborne run
    out = np.zeros(clip.n_frames, dtype=bool)
    if len(runs) == 0:
        return out
    centres = action_centres(clip) if centres is None else np.asarray(centres, dtype=np.int64)
    if len(centres) == 0:
        a, b = runs[np.argmax(runs[:, 1] - runs[:, 0])]
        out[a:b] = True
        return out
    for a, b in runs:
        if np.any((centres >= a) & (centres < b)):
            out[a:b] = True
    return out


def hand_joints(clip: Clip) -> list:
    """[left, right] joint indices of the hands (or wrists), the shallowest match per side; fewer when not
    found."""
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


