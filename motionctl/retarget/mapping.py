"""Which bone follows which joint: the target rig (``Rig``, its rest pose in the world), the root
bone a rig may lack (``with_root_bone``), the automatic bone map (``auto_map``, by the body's roles)
and its presets, and each mapped bone's rest aligned to its joint's (``rest_alignment``)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

import numpy as np

from .. import quat
from ..body import Body
from ..body.roles import ROLES, SIDES, Bones, find_roles, rest_facing
from ..errors import MotionctlError, MotionFileError
from ..rootframe import mean_pose
from ..store import atomic_file, read_json

PRESET_FORMAT = "motionctl-bone-map"

@dataclass(eq=False)
class Rig(Bones):
    """A skeleton's rest pose in world space (``body.roles.Bones``): bone ``names``, ``parents``,
    ``heads`` [B, 3] and ``rest`` [B, 4] (each bone's rest rotation, world), ``scale`` (world units
    per armature unit, for locations), ``connected`` (bool [B], bones whose head cannot move), the
    armature object's ``origin`` and rotation ``object_rest``; ``tails`` [B, 3] (optional) where each
    bone ends (a leaf bone's end site, a Blender bone's tail), for the ground of the rest pose."""

    names: list
    parents: np.ndarray
    heads: np.ndarray
    rest: np.ndarray
    scale: float = 1.0
    connected: np.ndarray | None = None
    name: str = "rig"
    origin: np.ndarray | None = None  # [3] the armature object's world location
    object_rest: np.ndarray | None = None  # [4] its world rotation
    tails: np.ndarray | None = None  # [B, 3] where each bone ends (world)

    def __post_init__(self):
        self.names = list(self.names)
        self.parents = np.asarray(self.parents, dtype=np.int64)
        self.heads = np.asarray(self.heads, dtype=float).reshape(-1, 3)
        self.rest = np.asarray(self.rest, dtype=float).reshape(-1, 4)
        n = len(self.names)
        self.connected = np.zeros(n, dtype=bool) if self.connected is None else np.asarray(self.connected, bool)
        self.origin = np.zeros(3) if self.origin is None else np.asarray(self.origin, dtype=float)
        self.object_rest = quat.identity() if self.object_rest is None else np.asarray(self.object_rest, dtype=float)
        self.tails = None if self.tails is None else np.asarray(self.tails, dtype=float).reshape(-1, 3)
        if self.tails is not None and len(self.tails) != n:
            raise ValueError(f"rig {self.name!r}: {len(self.tails)} tails for {n} bones")
        if self.parents.shape != (n,) or len(self.heads) != n or len(self.rest) != n:
            raise ValueError(f"rig {self.name!r}: names, parents, heads and rest disagree")
        self.index_tree()

    @classmethod
    def from_clips(cls, clips, name: str = "source") -> "Rig":
        """A retarget's source for ``clips`` (one skeleton): its rest pose (``from_skeleton``) when
        that is a standing body (``standing_rest``), the pose whose joint frames retargeting compares
        with the target's; else the capture's mean pose (``mean_pose_rig``).  A file whose joints rest
        in other frames (every bone along its own X, as a Maya rig's joint orients write it) has a
        rest pose that is no pose of the body: compared with the target's, its bones turned about
        themselves by up to 171 degrees (CMU 16_15 with its bones along X, onto a T-pose rig)."""
        sk = clips[0].skeleton
        return cls.from_skeleton(sk, name) if standing_rest(sk) else cls.mean_pose_rig(clips, name)

    @classmethod
    def mean_pose_rig(cls, clips, name: str = "source") -> "Rig":
        """The clips' skeleton in their mean pose (``rootframe.mean_pose``: facing yaw 0, each joint at
        its mean rotation), each bone's rest rotation its world rotation there: the same rig for the
        same motion whatever rest frames the file gives its joints."""
        sk = clips[0].skeleton
        heads, tails, world = Bones.pose_of(sk, *mean_pose(clips))
        return cls(sk.names, sk.parents, heads, world, name=name, tails=tails)

    @classmethod
    def from_skeleton(cls, skeleton, name: str = "source") -> "Rig":
        """A motionctl skeleton: its rest pose (``Bones.rest_of``), identity rest rotations (rest-aligned axes)."""
        heads, tails = Bones.rest_of(skeleton)
        return cls(skeleton.names, skeleton.parents, heads, quat.identity((skeleton.n_joints,)), name=name,
                   tails=tails)


def standing_rest(skeleton) -> bool:
    """Whether a skeleton's rest pose stands as a body does: every thigh and shin pointing down
    (within 45 degrees) and the spine from the hips to the head up (within 45 degrees), Z up.  T-
    and A-poses do; a rest whose joints lie in other frames (bones along X, random orients) does not."""
    roles = Body.of(skeleton).roles
    if not all(f"{r}.{s}" in roles for r in ("thigh", "shin", "foot") for s in SIDES) or "head" not in roles:
        return False
    rest = skeleton.rest_positions()
    legs = [rest[roles[f"{b}.{s}"]] - rest[roles[f"{a}.{s}"]] for s in SIDES for a, b in (("thigh", "shin"), ("shin", "foot"))]
    spine = rest[roles["head"]] - rest[roles.get("hips", 0)]
    down = all(v[2] < -np.cos(np.pi / 4) * np.linalg.norm(v, axis=-1) for v in legs)
    return bool(down and spine[2] > np.cos(np.pi / 4) * np.linalg.norm(spine, axis=-1))


def with_root_bone(rig: Rig, roles: dict, name: str = "root") -> tuple[Rig, np.ndarray]:
    """The rig with a new root bone at the armature's origin, parent of its top bone (what the
    Blender side adds for Root Motion on a root bone), and where the new bone's tail goes [3]
    (armature space and units): level in the world, facing the way the body faces at rest
    (``rest_facing``: the hips' axis crossed with up), with no roll (Blender's bone along a direction
    is +Y turned onto it by the shortest arc), so that a game engine that holds the root at its rest
    pose (Unreal's root lock, Godot's root-motion track) keeps the character facing its way."""
    while name in rig.names:  # the ASF hips are called "root"
        name += "_motion"
    top = ([roles["hips"]] + rig.ancestors(roles["hips"]))[-1]
    parents = np.append(np.where(np.arange(len(rig.names)) == top, len(rig.names), rig.parents), -1)
    length = 0.2 * rig.height() / rig.scale
    ahead = quat.rotate(quat.conj(rig.object_rest), rest_facing(rig, roles))  # level in the world; armature frame
    rest = quat.mul(rig.object_rest, quat.between(np.array([0.0, 1.0, 0.0]), ahead))  # Blender's bone of no roll
    tails = None if rig.tails is None else np.vstack((rig.tails, rig.origin + quat.rotate(
        rig.object_rest, length * rig.scale * ahead)))
    out = Rig(rig.names + [name], parents, np.vstack((rig.heads, rig.origin)), np.vstack((rig.rest, rest)),
              rig.scale, np.append(rig.connected, False), rig.name, rig.origin, rig.object_rest, tails)
    return out, length * ahead


# --------------------------------------------------------------------------- roles

def auto_map(source: Rig, target: Rig) -> dict:
    """{target bone: source joint} for every role both rigs have (root excluded: root motion is
    computed, not copied), and every other bone below the hips named as a source joint."""
    rs, rt = find_roles(source), find_roles(target)
    out = {target.names[rt[r]]: source.names[rs[r]] for r in ROLES if r != "root" and r in rs and r in rt}
    below = target.subtree(rt["hips"])  # bones of the same name (rigs of one convention) map too
    same = {n: n for b, n in enumerate(target.names) if below[b] and n in source.names and n not in out}
    return {**out, **{k: v for k, v in same.items() if v not in out.values()}}


def save_preset(path: str, mapping: dict, source: Rig | None = None, target: Rig | None = None) -> None:
    """The bone map as JSON, with the names of the rigs it was made for (a note for people)."""
    doc = {"format": PRESET_FORMAT, "version": 1, "map": dict(mapping),
           "source": source.name if source else "", "target": target.name if target else ""}
    with atomic_file(path, "w", encoding="utf-8") as fh:
        json.dump(doc, fh, indent=1)


def load_preset(path: str) -> dict:
    """{target bone: source joint} from a preset file (errors name the file)."""
    if not os.path.exists(path):
        raise MotionFileError(path, "no such bone-map preset")
    doc = read_json(path)
    if not isinstance(doc, dict) or doc.get("format") != PRESET_FORMAT or not isinstance(doc.get("map"), dict):
        raise MotionFileError(path, f"not a bone-map preset: expected {{'format': {PRESET_FORMAT!r}, 'map': {{...}}}}")
    bad = [k for k, v in doc["map"].items() if not isinstance(k, str) or not isinstance(v, str)]
    if bad:
        raise MotionFileError(path, f"bone map entry {bad[0]!r} is not a bone name -> joint name pair")
    return dict(doc["map"])


def check_mapping(mapping: dict, source: Rig, target: Rig) -> list:
    """[(target bone index, source joint index)] in target order; errors name the first unknown bone."""
    pairs = []
    for t, s in mapping.items():
        if not s:
            continue
        if t not in target.names:
            raise MotionctlError(f"bone map: {target.name!r} has no bone {t!r}")
        if s not in source.names:
            raise MotionctlError(f"bone map: {source.name!r} has no joint {s!r} (mapped to {t!r})")
        pairs.append((target.names.index(t), source.names.index(s)))
    if not pairs:
        raise MotionctlError("the bone map is empty: press Auto Map or map bones in the list")
    return sorted(pairs, key=lambda p: target.depth[p[0]])


# --------------------------------------------------------------------------- rest alignment

def _kabsch(t: np.ndarray, s: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Rotation [4] minimising sum w |R t_i - s_i|² (unit vectors t, s [K, 3])."""
    h = (t * w[:, None]).T @ s
    u, _, vt = np.linalg.svd(h)
    d = np.sign(np.linalg.det(vt.T @ u.T)) or 1.0
    return quat.from_matrix(vt.T @ np.diag([1.0, 1.0, d]) @ u.T)


def _frame(d: np.ndarray, forward: np.ndarray) -> np.ndarray:
    """Rotation [4] of the orthonormal frame with x along ``d`` and y toward ``forward`` (toward up
    when ``d`` points nearly forward, as feet do)."""
    d = d / np.linalg.norm(d)
    ref = forward if abs(d @ forward) < 0.9 else np.array([0.0, 0.0, 1.0])
    y = ref - (ref @ d) * d
    y /= np.linalg.norm(y)
    return quat.from_matrix(np.stack((d, y, np.cross(d, y)), axis=1))


def rest_alignment(source: Rig, target: Rig, pairs: list, fwd_s, fwd_t) -> np.ndarray:
    """[M, 4]: for each mapped pair, the rotation A with (source's world delta) · A the target
    bone's world delta (A takes the target's rest directions onto the source's)."""
    mapped = {b: j for b, j in pairs}
    up_mapped = {c: next((a for a in target.ancestors(c) if a in mapped), None) for c in mapped}
    up = np.array([0.0, 0.0, 1.0])
    out = {}
    for b, j in pairs:  # parents first, so a leaf can take its mapped ancestor's alignment
        ts, ss, ws = [], [], []
        for c, jc in pairs:
            if up_mapped[c] != b or j not in source.ancestors(jc):
                continue
            vt, vs = target.heads[c] - target.heads[b], source.heads[jc] - source.heads[j]
            if np.linalg.norm(vt) > 1e-6 and np.linalg.norm(vs) > 1e-6:
                ts.append(vt / np.linalg.norm(vt))
                ss.append(vs / np.linalg.norm(vs))
                ws.append(1.0)
        if not ts and up_mapped[b] is not None:
            out[b] = out[up_mapped[b]]
            continue
        if len(ts) == 1:  # one direction, matched exactly; the body's forward (or up) fixes the twist
            out[b] = quat.mul(_frame(ss[0], fwd_s), quat.conj(_frame(ts[0], fwd_t)))
        elif ts:
            out[b] = _kabsch(np.array(ts + [fwd_t]), np.array(ss + [fwd_s]), np.array(ws + [0.1]))
        else:
            out[b] = _kabsch(np.array([fwd_t, up]), np.array([fwd_s, up]), np.ones(2))
    return np.array([out[b] for b, _ in pairs])
