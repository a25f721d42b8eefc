"""Retargeting: any motionctl ``Clip`` (an imported take, a controller run, a best path) onto another
rig, with the rest of the pipeline in plain numpy (the Blender side reads the rig and writes the
action).

- Roles: every rig gets the same body roles (hips, spine, chest, neck, head and, per side, shoulder,
  upper arm, forearm, hand, thigh, shin, foot, toe) from its bone names (CMU ASF and MotionBuilder
  names, Mixamo ``mixamorig:``, Character Creator ``CC_Base_``, Rigify metarig, ``DEF-``/``ORG-`` and
  FK control bones, UE Mannequin), and from its topology where the names say nothing: the legs are
  the two lowest branches, the arms the two widest off the spine, and in a limb's chain the two
  longest consecutive bones are the upper and lower limb.  The hips, spine, chest and neck always
  come from topology (the hips join legs and head; the chest is where the arms branch).
- Rest poses: every mapped bone's rest is aligned to its source joint's by its directions to its
  mapped children (Kabsch, with the body's forward and up as weak extra pairs so a single child
  keeps its twist), so a T-pose, an A-pose or arms-down rest all give the same motion.
- Proportions: the root motion is scaled by the ratio of leg lengths (hip to knee to ankle), the
  hips placed so the thighs' midpoint follows the scaled source's, then (``floor``) the whole body is
  shifted vertically, frame by frame, so a planted ankle is as high above the floor as the source's
  (scaled): feet stay on the floor without IK.  ``foot_plant`` then turns hips and knees (two-bone IK)
  so a planted foot moves only as the source's did: skating that proportions would add is removed.
- Root motion: on a root bone (the rig's, or one the Blender side adds; ground-projected hips with
  the smoothed heading, the engine's root frame), on the armature object, or in place.

Rotations are handled as world-space deltas from each rig's rest pose, so objects rotated or scaled
(uniformly, as FBX imports are) and bones with any roll work alike: a pose bone's basis is
``r⁻¹ (Q_parent⁻¹ Q) r`` with ``r`` its rest rotation in world and ``Q`` its world delta.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field

import numpy as np

from . import quat
from .body import _ASF_LIMBS, _side, foot_contacts
from .errors import MotionctlError, MotionFileError
from .rootframe import gaussian_smooth, yaw_of

SIDES = ("L", "R")
LIMB = ("shoulder", "upper_arm", "forearm", "hand", "thigh", "shin", "foot", "toe")
ROLES = ("root", "hips", "spine", "chest", "neck", "head") + tuple(f"{r}.{s}" for s in SIDES for r in LIMB)
LEG_ROLES = tuple(f"{r}.{s}" for s in SIDES for r in ("thigh", "shin", "foot"))
ROOT_MOTION = ("BONE", "OBJECT", "IN_PLACE")
PRESET_FORMAT = "motionctl-bone-map"

_WORDS = {  # a bone name's word (prefix, side, digits and separators removed) -> its role
    "thigh": "thigh", "upleg": "thigh", "femur": "thigh", "upperleg": "thigh",
    "leg": "shin", "calf": "shin", "shin": "shin", "tibia": "shin", "lowerleg": "shin", "knee": "shin",
    "foot": "foot", "ankle": "foot",
    "toe": "toe", "toes": "toe", "toebase": "toe", "ball": "toe",
    "clavicle": "shoulder", "collar": "shoulder",
    "arm": "upper_arm", "upperarm": "upper_arm", "humerus": "upper_arm",
    "forearm": "forearm", "lowerarm": "forearm", "radius": "forearm", "elbow": "forearm",
    "hand": "hand", "wrist": "hand",
    "head": "head", "neck": "neck",
}
_RIGIFY = {"spine.006": "head", "spine.004": "neck"}  # the metarig numbers its spine up to the head
_PREFIX = re.compile(r"^(mixamorig\d*[:_]|cc_base_|def[-_]|org[-_]|bip\d*[ _]|rl_)", re.IGNORECASE)
_HELPER = re.compile(r"^(mch|vis|wgt|tweak|ctrl|ik|pole)[-_.]", re.IGNORECASE)


@dataclass(eq=False)
class Rig:
    """A skeleton's rest pose in world space: bone ``names``, ``parents`` (int [B], -1 for none),
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
        depth = np.zeros(n, dtype=np.int64)
        for _ in range(n):  # a few passes at most (bone lists are nearly in order)
            new = np.where(self.parents >= 0, depth[np.maximum(self.parents, 0)] + 1, 0)
            if np.array_equal(new, depth):
                break
            depth = new
        self.depth = depth
        self.order = np.argsort(depth, kind="stable")  # parents before children

    @classmethod
    def from_skeleton(cls, skeleton, name: str = "source") -> "Rig":
        """A motionctl skeleton: its rest positions, identity rest rotations (rest-aligned axes), each
        joint's tail the mean of its bone tips (children and end sites; a leaf without one: itself)."""
        heads = skeleton.rest_positions()
        joint, tip = skeleton.bone_tips()
        sums = np.zeros_like(heads)
        np.add.at(sums, joint, heads[joint] + tip)
        count = np.bincount(joint, minlength=skeleton.n_joints)[:, None]
        tails = np.where(count > 0, sums / np.maximum(count, 1), heads)
        return cls(skeleton.names, skeleton.parents, heads, quat.identity((skeleton.n_joints,)), name=name,
                   tails=tails)

    def subtree(self, top: int) -> np.ndarray:
        """bool [B]: ``top`` and every bone below it."""
        m = np.zeros(len(self.names), dtype=bool)
        m[top] = True
        for b in self.order:  # parents before children
            if self.parents[b] >= 0 and m[self.parents[b]]:
                m[b] = True
        return m

    def ancestors(self, b: int) -> list:
        out = []
        while self.parents[b] >= 0:
            b = int(self.parents[b])
            out.append(b)
        return out

    def height(self) -> float:
        return float(np.ptp(self.heads[:, 2])) or 1.0


def with_root_bone(rig: Rig, roles: dict, name: str = "root") -> tuple[Rig, float]:
    """The rig with a new root bone at the armature's origin, parent of its top bone (what the
    Blender side adds for Root Motion on a root bone), and the new bone's length (armature units):
    it points along the armature's +Y with no roll, so its rest rotation is the object's."""
    while name in rig.names:  # the ASF hips are called "root"
        name += "_motion"
    top = ([roles["hips"]] + rig.ancestors(roles["hips"]))[-1]
    parents = np.append(np.where(np.arange(len(rig.names)) == top, len(rig.names), rig.parents), -1)
    length = 0.2 * rig.height() / rig.scale
    tails = None if rig.tails is None else np.vstack((rig.tails, rig.origin + quat.rotate(
        rig.object_rest, np.array([0.0, length * rig.scale, 0.0]))))
    out = Rig(rig.names + [name], parents, np.vstack((rig.heads, rig.origin)), np.vstack((rig.rest, rig.object_rest)),
              rig.scale, np.append(rig.connected, False), rig.name, rig.origin, rig.object_rest, tails)
    return out, length


# --------------------------------------------------------------------------- roles

def name_role(name: str) -> tuple[str | None, int]:
    """(role such as "thigh.L" or "head", or None; rank: 0 plain or FK control, 1 ``ORG-``, 2
    ``DEF-``) read from a bone name alone.  "hip" and "shoulder" come back as "hip?"/"shoulder?":
    joint-named skeletons call the thigh and upper arm that (``find_roles`` decides)."""
    if _HELPER.match(name):
        return None, 0
    low = name.lower()
    rank = 2 if low.startswith(("def-", "def_")) else 1 if low.startswith(("org-", "org_")) else 0
    core = _PREFIX.sub("", name)
    side = _side(core) or _side(name)
    if len(core) > 1 and core[0] in "LR" and (core[1].isupper() or core[1:].lower() in _ASF_LIMBS):
        core = core[1:]
    elif core[:1] in ("l", "r") and core[1:].lower() in _ASF_LIMBS:
        core = core[1:]
    tokens = [t for t in re.split(r"[_.:|\s-]+", core.lower()) if t and t not in ("l", "r", "left", "right")]
    word = re.sub(r"\d+", "", "".join(tokens)).replace("left", "").replace("right", "")
    if word.endswith("fk") and word[:-2] in _WORDS:
        word = word[:-2]
    role = _RIGIFY.get(core.lower()) or _WORDS.get(word) or {"hip": "hip?", "shoulder": "shoulder?"}.get(word)
    if role is None:
        return None, rank
    if role in ("head", "neck"):
        return role, rank
    return (f"{role}.{side}", rank) if side else (None, rank)


def _lca(rig: Rig, bones) -> int:
    paths = [[b] + rig.ancestors(b) for b in bones]
    common = set(paths[0]).intersection(*map(set, paths[1:]))
    return next(b for b in paths[0] if b in common) if common else -1


def _path(rig: Rig, top: int, bottom: int) -> list:
    """Bones from ``top`` down to ``bottom`` (both included), or [] when not an ancestor."""
    chain = [bottom] + rig.ancestors(bottom)
    return chain[:chain.index(top) + 1][::-1] if top in chain else []


def _leaf_below(rig: Rig, b: int, key) -> int:
    """The bone of ``b``'s subtree (``b`` included) that minimises ``key(bone)``."""
    return min(np.flatnonzero(rig.subtree(b)).tolist(), key=key)


def _limb_roles(rig: Rig, path: list, roles: tuple, first: int) -> dict:
    """Roles along a limb chain: the two longest consecutive bones are roles[first], roles[first+1]."""
    if len(path) < 3:
        return {}
    seg = np.linalg.norm(np.diff(rig.heads[path], axis=0), axis=1)
    k = int(np.argmax(seg[:-1] + seg[1:])) if len(seg) > 1 else 0
    out = {}
    for i, role in enumerate(roles):
        at = k + i - first
        if 0 <= at < len(path):
            out[role] = path[at]
    return out


def find_roles(rig: Rig) -> dict:
    """{role: bone index} for a rig (see the module docstring); raises naming what is missing when
    the legs cannot be found (retargeting needs both legs)."""
    found: dict = {}
    cands: dict = {}
    for b, n in enumerate(rig.names):
        role, rank = name_role(n)
        if role:
            cands.setdefault(role, []).append((rank, rig.depth[b], b))
    for s in SIDES:  # joint names: LeftHip is the thigh and LeftShoulder the upper arm of their rigs
        if f"hip?.{s}" in cands and f"thigh.{s}" not in cands:
            cands[f"thigh.{s}"] = cands[f"hip?.{s}"]
        if f"shoulder?.{s}" in cands:  # with a collar bone too, "shoulder" is the upper arm
            key = f"upper_arm.{s}" if f"shoulder.{s}" in cands else f"shoulder.{s}"
            cands.setdefault(key, cands[f"shoulder?.{s}"])
    for role, cs in cands.items():
        if role in ROLES:
            found[role] = min(cs)[2]
    up = np.array([0.0, 0.0, 1.0])
    if not all(f"thigh.{s}" in found and f"foot.{s}" in found for s in SIDES):
        found.update(_legs_by_geometry(rig, found))
    # limbs: fill the chain between the named ends (shin between thigh and foot, ...)
    for s in SIDES:
        for upper, lower, mid in (("thigh", "foot", "shin"), ("upper_arm", "hand", "forearm")):
            u, lo = found.get(f"{upper}.{s}"), found.get(f"{lower}.{s}")
            if u is not None and lo is not None and f"{mid}.{s}" not in found:
                p = _path(rig, u, lo)
                if len(p) >= 3:
                    found[f"{mid}.{s}"] = p[1]
        foot = found.get(f"foot.{s}")
        if foot is not None and f"toe.{s}" not in found:
            kids = np.flatnonzero(rig.parents == foot)
            if len(kids):
                found[f"toe.{s}"] = int(max(kids, key=lambda k: np.linalg.norm(rig.heads[k] - rig.heads[foot])))
    missing = [r for r in LEG_ROLES if r not in found]
    if missing:
        raise MotionctlError(f"rig {rig.name!r}: cannot find its {', '.join(missing)} by name or shape; "
                             "map those bones by hand in the Retarget panel's list")
    if "head" not in found:
        found["head"] = _leaf_below(rig, int(rig.order[0]), lambda i: -rig.heads[i] @ up)
    hips = _lca(rig, [found["thigh.L"], found["thigh.R"], found["head"]])
    if hips < 0:
        raise MotionctlError(f"rig {rig.name!r}: the legs and the head are not in one hierarchy")
    found["hips"] = hips
    if rig.parents[hips] >= 0:
        found["root"] = ([hips] + rig.ancestors(hips))[-1]
    if not all(f"upper_arm.{s}" in found for s in SIDES):
        found.update({k: v for k, v in _arms_by_geometry(rig, found).items() if k not in found})
    spine = _path(rig, hips, found["head"])[1:-1]
    arms = [found.get(f"shoulder.{s}", found.get(f"upper_arm.{s}")) for s in SIDES]
    chest = _lca(rig, [a for a in arms if a is not None] + [found["head"]]) if all(a is not None for a in arms) else -1
    if chest in spine:
        found["chest"] = chest
        above = spine[spine.index(chest) + 1:]
        if above and "neck" not in found:
            found["neck"] = above[0]
        below = spine[:spine.index(chest)]
        if below:
            found["spine"] = below[0]
    elif spine:
        found["chest"] = spine[-1]
    return found


def _forward(rig: Rig, roles: dict) -> np.ndarray:
    """The rig's rest facing (unit, horizontal): the hips' left-to-right axis crossed with up, else
    the feet's heel-to-toe direction."""
    if "thigh.L" in roles and "thigh.R" in roles:
        left = rig.heads[roles["thigh.L"]] - rig.heads[roles["thigh.R"]]
        f = np.cross(left, [0.0, 0.0, 1.0])
        f[2] = 0.0
        if np.linalg.norm(f) > 1e-6:
            return f / np.linalg.norm(f)
    return _toe_forward(rig, [{r: roles[f"{r}.{s}"] for r in ("foot", "toe") if f"{r}.{s}" in roles} for s in SIDES])


def _toe_forward(rig: Rig, feet: list) -> np.ndarray:
    """The mean heel-to-toe direction (unit, horizontal) of ``feet`` [{"foot": bone, "toe": bone}],
    Blender's front (-Y) when they have no toes."""
    d = np.zeros(3)
    for g in feet:
        if "foot" in g and "toe" in g:
            d += rig.heads[g["toe"]] - rig.heads[g["foot"]]
    d[2] = 0.0
    return d / np.linalg.norm(d) if np.linalg.norm(d) > 1e-6 else np.array([0.0, -1.0, 0.0])


def _legs_by_geometry(rig: Rig, named: dict) -> dict:
    """The two lowest branches of one bone are the legs (a standing rest pose); left is the side
    the toes' direction has on its left."""
    h = rig.height()
    low = _leaf_below(rig, int(rig.order[0]), lambda i: rig.heads[i, 2])
    for x in rig.ancestors(low):
        kids = np.flatnonzero(rig.parents == x)
        lows = [(_leaf_below(rig, int(k), lambda i: rig.heads[i, 2]), int(k)) for k in kids]
        lows = [(leaf, k) for leaf, k in lows if rig.heads[leaf, 2] < rig.heads[low, 2] + 0.1 * h]
        if len(lows) >= 2:
            break
    else:
        raise MotionctlError(f"rig {rig.name!r}: cannot find two legs by name or shape; "
                             "map the thighs, shins and feet by hand in the Retarget panel's list")
    lows.sort(key=lambda lk: rig.heads[lk[0], 2])
    chains = [_path(rig, k, leaf) for leaf, k in lows[:2]]
    legs = [_limb_roles(rig, c, ("thigh", "shin", "foot", "toe"), 0) for c in chains]
    left = np.cross([0.0, 0.0, 1.0], _toe_forward(rig, legs))
    side = [float((rig.heads[c].mean(axis=0) - rig.heads[x]) @ left) for c in chains]
    out = {}
    for g, sd in zip(legs, side):
        s = "L" if sd == max(side) else "R"
        out.update({f"{r}.{s}": b for r, b in g.items()})
    return {k: v for k, v in out.items() if k not in named}


def _arms_by_geometry(rig: Rig, roles: dict) -> dict:
    """The two branches off the spine (hips to head) reaching furthest sideways are the arms."""
    spine = _path(rig, roles["hips"], roles["head"])
    fwd = _forward(rig, roles)
    left = np.cross([0.0, 0.0, 1.0], fwd)
    taken = set(roles.values())
    branches = []
    for p in spine:
        for k in np.flatnonzero(rig.parents == p):
            if int(k) in spine or int(k) in taken:
                continue
            tip = _leaf_below(rig, int(k), lambda i: -abs((rig.heads[i] - rig.heads[p]) @ left))
            reach = float((rig.heads[tip] - rig.heads[p]) @ left)
            if abs(reach) > 0.15 * rig.height():
                branches.append((abs(reach), np.sign(reach), _path(rig, int(k), tip)))
    out = {}
    for _, sign, chain in sorted(branches, key=lambda b: -b[0]):
        s = "L" if sign > 0 else "R"
        if f"upper_arm.{s}" in out:
            continue
        # bones starting at the spine's centre line are the collar bone; the arm starts out at the side
        lateral = np.abs((rig.heads[chain] - rig.heads[chain[0]]) @ left) + abs((rig.heads[chain[0]] - rig.heads[
            rig.parents[chain[0]]]) @ left)
        at = int(np.argmax(lateral > 0.05 * rig.height()))
        arm = _limb_roles(rig, chain[at:], ("upper_arm", "forearm", "hand"), 0)
        if at:
            arm["shoulder"] = chain[at - 1]
        out.update({f"{r}.{s}": b for r, b in arm.items()})
    return out


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
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(doc, fh, indent=1)
    os.replace(tmp, path)


def load_preset(path: str) -> dict:
    """{target bone: source joint} from a preset file (errors name the file)."""
    try:
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
    except FileNotFoundError:
        raise MotionFileError(path, "no such bone-map preset") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise MotionFileError(path, f"not a bone-map preset (JSON): {exc}") from None
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


def leg_length(rig: Rig, roles: dict) -> float:
    """Mean over both legs of hip-to-knee plus knee-to-ankle (world units)."""
    h = rig.heads
    return float(np.mean([np.linalg.norm(h[roles[f"shin.{s}"]] - h[roles[f"thigh.{s}"]]) +
                          np.linalg.norm(h[roles[f"foot.{s}"]] - h[roles[f"shin.{s}"]]) for s in SIDES]))


def planted_ankle_height(rig: Rig, roles: dict) -> float | None:
    """How high a flat foot's ankle stands above the ground, in the rig's own rest pose: each foot
    bone's head above the lowest point (heads and tails) of its own subtree (heel, ball, toe tip),
    when the rest pose stands (both shins point down) and the foot has such points; None otherwise
    (the source's planted height, scaled, is used).  Where the rest pose stands in the world does
    not matter: a motionctl armature rests with its hips at the origin."""
    legs = leg_length(rig, roles)
    out = []
    for s in SIDES:
        foot, shin = roles[f"foot.{s}"], roles[f"shin.{s}"]
        d = rig.heads[foot] - rig.heads[shin]
        if d[2] > -0.8 * np.linalg.norm(d):
            return None
        sub = rig.subtree(foot)
        points = rig.heads[sub] if rig.tails is None else np.vstack((rig.heads[sub], rig.tails[sub]))
        height = rig.heads[foot, 2] - points[:, 2].min()
        if not 0.02 * legs < height < 0.3 * legs:  # a foot with no points below its ankle, or not a foot
            return None
        out.append(height)
    return float(np.mean(out))


# --------------------------------------------------------------------------- the retarget

@dataclass
class RetargetSettings:
    """How a clip is put on the target (the Retarget panel's options)."""

    root_motion: str = "BONE"  # BONE, OBJECT or IN_PLACE
    floor: bool = True  # shift the body so planted feet stand on the floor (no IK)
    foot_plant: bool = False  # two-bone IK so planted feet move only as the source's did
    scale: float = 0.0  # root-motion scale; 0 = the ratio of leg lengths
    heading_smooth: float = 0.2  # s, the root's heading smoothing (the engine's root frame)
    plant_blend: float = 0.1  # s, IK blends in and out over this at each contact's ends

    def __post_init__(self):
        if self.root_motion not in ROOT_MOTION:
            raise MotionctlError(f"root_motion must be one of {', '.join(ROOT_MOTION)}, got {self.root_motion!r}")
        if self.scale < 0 or self.heading_smooth < 0 or self.plant_blend < 0:
            raise MotionctlError("scale, heading_smooth and plant_blend must not be negative")


@dataclass(eq=False)
class Retargeted:
    """A clip on the target rig: pose-bone channels to key and what they look like in the world.

    bones        names of the bones with rotation keys; ``rotation`` [F, K, 4] their basis quaternions
    locations    {bone name: [F, 3]} basis locations (armature units): the hips, and the root bone
    object_loc   [F, 3] world location and ``object_rot`` [F, 4] the world rotation added to the
                 armature object's per frame (root motion on the object), else None
    world        [F, B, 3] every target bone's head in the world as posed (for checks and metrics)
    scale        the root-motion scale used; ``contacts`` [F, 2] the source's planted feet (L, R)
    planted_height  the world height of a planted ankle (the floor plus the target's own ankle height)
    """

    name: str
    fps: float
    bones: list
    rotation: np.ndarray
    locations: dict
    world: np.ndarray
    scale: float
    contacts: np.ndarray
    planted_height: float
    object_loc: np.ndarray | None = None
    object_rot: np.ndarray | None = None
    roles: dict = field(default_factory=dict)
    added_root: tuple | None = None  # (name, length, children): a root bone the rig lacked, to add to it
    soles: np.ndarray | None = None  # [F, 2] each foot's lowest point above the floor (rigs with bone ends)

    @property
    def n_frames(self) -> int:
        return len(self.world)


def _fk(rig: Rig, q: np.ndarray, top: int, top_pos: np.ndarray) -> np.ndarray:
    """World heads [F, B, 3] of the bones from world deltas ``q`` [F, B, 4], ``top`` at ``top_pos``
    [F, 3] and the bones below it placed one tree level at a time (the rest stay at rest)."""
    pos = np.broadcast_to(rig.heads, (len(q),) + rig.heads.shape).copy()
    pos[:, top] = top_pos
    below = rig.subtree(top)
    for level in range(rig.depth[top] + 1, rig.depth.max() + 1):
        bs = np.flatnonzero(below & (rig.depth == level))
        p = rig.parents[bs]
        pos[:, bs] = pos[:, p] + quat.rotate(q[:, p], rig.heads[bs] - rig.heads[p])
    return pos


def _fill(rig: Rig, q: np.ndarray, mapped: set, spine: set) -> None:
    """World deltas of unmapped bones, in place: on the spine (hips to head), between two mapped
    bones, a share of the way from one to the other (extra spine and neck bones bend together);
    anywhere else the parent's (hip joints, twist and helper bones ride along)."""
    for b in rig.order:
        b = int(b)
        if b in mapped:
            continue
        up = next((a for a in rig.ancestors(b) if a in mapped), None)
        if up is None:
            continue
        if b not in spine:
            q[:, b] = q[:, int(rig.parents[b])]
            continue
        chain, c = [], b
        while True:  # follow single children down to a mapped bone
            kids = np.flatnonzero(rig.parents == c)
            if len(kids) != 1:
                break
            c = int(kids[0])
            chain.append(c)
            if c in mapped:
                break
        if chain and chain[-1] in mapped:
            n_above = rig.ancestors(b).index(up) + 1
            t = n_above / (n_above + len(chain))
            q[:, b] = quat.slerp(q[:, up], q[:, chain[-1]], t)
        else:
            q[:, b] = q[:, int(rig.parents[b])]


def _segments_weight(contact: np.ndarray, ramp: int) -> np.ndarray:
    """Per frame in [0, 1]: 1 inside a contact, ramping down over ``ramp`` frames at its ends."""
    if ramp < 1:
        return contact.astype(float)
    frames = np.arange(len(contact))  # distance to the nearest frame outside the contact, either side
    before = np.maximum.accumulate(np.where(~contact, frames, -len(contact) - ramp))
    after = np.minimum.accumulate(np.where(~contact, frames, 2 * len(contact) + ramp)[::-1])[::-1]
    d = np.minimum(frames - before, after - frames)
    return np.where(contact, np.clip(d / ramp, 0.0, 1.0), 0.0)


def _two_bone_ik(q, pos, thigh, shin, foot, goal, w) -> None:
    """Turn thigh and shin (world deltas ``q``, in place) so the foot's head reaches ``goal``
    [F, 3] with weight ``w`` [F], the knee staying in its plane; the foot keeps its world rotation."""
    a, b, c = pos[:, thigh], pos[:, shin], pos[:, foot]
    t = c + w[:, None] * (goal - c)
    l1, l2 = np.linalg.norm(b - a, axis=1), np.linalg.norm(c - b, axis=1)
    at = t - a
    d = np.clip(np.linalg.norm(at, axis=1), np.abs(l1 - l2) + 1e-6, l1 + l2 - 1e-6)
    u = at / np.maximum(np.linalg.norm(at, axis=1, keepdims=True), 1e-9)
    v = (b - a) - np.sum((b - a) * u, axis=1, keepdims=True) * u  # the knee's side of the hip-goal line
    v_n = np.linalg.norm(v, axis=1, keepdims=True)
    v = np.where(v_n > 1e-9, v / np.maximum(v_n, 1e-9), np.cross(u, [1.0, 0.0, 0.0]))
    cos_a = np.clip((l1 ** 2 + d ** 2 - l2 ** 2) / (2 * l1 * d), -1.0, 1.0)
    knee = a + l1[:, None] * (cos_a[:, None] * u + np.sqrt(1 - cos_a ** 2)[:, None] * v)
    r1 = quat.between(b - a, knee - a)
    r2 = quat.between(quat.rotate(r1, c - b), a + u * d[:, None] - knee)
    q[:, thigh] = quat.mul(r1, q[:, thigh])
    q[:, shin] = quat.mul(quat.mul(r2, r1), q[:, shin])


def retarget(clip, source: Rig, target: Rig, mapping: dict, settings: RetargetSettings | None = None,
             source_roles: dict | None = None, target_roles: dict | None = None) -> Retargeted:
    """``clip`` (on ``source``'s skeleton) on ``target`` with the bone ``mapping`` {target: source}."""
    st = settings or RetargetSettings()
    if len(source.names) != clip.skeleton.n_joints or list(clip.skeleton.names) != source.names:
        raise MotionctlError(f"clip {clip.name!r} is not on the source skeleton {source.name!r}")
    if clip.n_frames < 1:
        raise MotionctlError(f"clip {clip.name!r} has no frames")
    rs = source_roles or find_roles(source)
    rt = target_roles or find_roles(target)
    added_root = None
    if st.root_motion == "BONE" and "root" not in rt:  # the root bone Bake adds (any motionctl skeleton)
        target, length = with_root_bone(target, rt)
        rt = dict(rt, root=len(target.names) - 1)
        added_root = (target.names[-1], length, [target.names[b] for b in np.flatnonzero(target.parents == rt["root"])])
    pairs = check_mapping(mapping, source, target)
    tb = np.array([b for b, _ in pairs])
    sj = np.array([j for _, j in pairs])
    for role in ("hips",) + LEG_ROLES:
        if target.names[rt[role]] not in mapping:
            raise MotionctlError(f"bone map: the {role} bone {target.names[rt[role]]!r} is not mapped "
                                 "(the legs and hips place the body)")
    fwd_s, fwd_t = _forward(source, rs), _forward(target, rt)
    align = rest_alignment(source, target, pairs, fwd_s, fwd_t)
    s = st.scale or leg_length(target, rt) / leg_length(source, rs)

    pos_s, rot_s = clip.world()
    dq_s = quat.mul(rot_s, quat.conj(source.rest))  # the source's world deltas from its rest
    f, n = clip.n_frames, len(target.names)
    q = quat.identity((f, n))
    q[:, tb] = quat.mul(dq_s[:, sj], align[None])
    mapped = set(tb.tolist())
    hips = rt["hips"]
    spine = set(_path(target, hips, rt["head"]))
    _fill(target, q, mapped, spine)

    # the hips so the thighs' midpoint follows the scaled source's
    mid_s = 0.5 * (pos_s[:, rs["thigh.L"]] + pos_s[:, rs["thigh.R"]])
    body = target.subtree(hips)
    pos = _fk(target, q, hips, np.zeros((f, 3)))
    # the capture's origin is the target object's: the motion starts where the character stands
    hips_pos = target.origin + s * mid_s - 0.5 * (pos[:, rt["thigh.L"]] + pos[:, rt["thigh.R"]])
    pos[:, body] += hips_pos[:, None]

    contacts = foot_contacts(clip)
    z_s = pos_s[:, [rs["foot.L"], rs["foot.R"]], 2]
    h_s = np.percentile(z_s, 5, axis=0)
    h_t = planted_ankle_height(target, rt)  # on the target's own feet; else the source's, scaled
    h_t = float(target.origin[2] + (s * h_s.mean() if h_t is None else h_t))  # the floor: the object's height
    # With both rigs' bone ends known, the soles (each foot's lowest point: heel, ball, toe tip) are
    # put on the floor, else the ankles at their planted height.
    sole_s = _soles(source, rs, pos_s, quat.mul(rot_s, quat.conj(source.rest)))
    soles = sole_s is not None and target.tails is not None
    if soles:
        z_s = sole_s
        h_s = np.percentile(z_s, 5, axis=0)
    if st.floor:
        z_t = _soles(target, rt, pos, q) if soles else pos[:, [rt["foot.L"], rt["foot.R"]], 2]
        # planted soles on the floor; the ankles at their planted height plus the source's lift (scaled)
        err = z_t - target.origin[2] if soles else (z_t - h_t) - s * (z_s - h_s)
        any_c = contacts.any(axis=1)
        per = np.where(contacts, err, 0.0).sum(1) / np.maximum(contacts.sum(1), 1)
        frames = np.arange(f)
        dz = np.interp(frames, frames[any_c], per[any_c]) if any_c.any() else np.full(f, np.median(err))
        dz = -gaussian_smooth(dz, 0.05 * clip.fps)
        hips_pos[:, 2] += dz
        pos[:, body, 2] += dz[:, None]
    if st.foot_plant:
        ramp = int(round(st.plant_blend * clip.fps))
        for k, side in enumerate(SIDES):
            src = pos_s[:, rs[f"foot.{side}"]]
            cur = pos[:, rt[f"foot.{side}"]]
            goal = _plant_goals(cur, src, contacts[:, k], s, h_t, h_s[k])
            if soles:  # the ankle where it stands now, less what its sole is still off the floor
                goal[:, 2] = cur[:, 2] - (_soles(target, rt, pos, q)[:, k] - target.origin[2])
            _two_bone_ik(q, pos, rt[f"thigh.{side}"], rt[f"shin.{side}"], rt[f"foot.{side}"], goal,
                         _segments_weight(contacts[:, k], ramp))
        _fill(target, q, mapped, spine)
        pos = _fk(target, q, hips, hips_pos)

    sole_t = _soles(target, rt, pos, q)  # in the world, before the root motion moves the frame of q

    # root motion: the engine's root frame of the retargeted hips
    yaw = np.unwrap(quat.yaw_about_z(q[:, hips], fwd_t))
    if st.heading_smooth > 0 and f > 1:
        yaw = gaussian_smooth(yaw, st.heading_smooth * clip.fps)
    turn = quat.from_axis_angle(np.array([0.0, 0.0, 1.0]), yaw - float(yaw_of(fwd_t[:2])))
    ground = np.concatenate((hips_pos[:, :2], np.zeros((f, 1))), axis=1)
    locations, object_loc, object_rot = {}, None, None
    root = rt.get("root")
    heads = pos
    if st.root_motion == "BONE":
        q[:, _path(target, root, hips)[:-1]] = turn[:, None]  # the root and any bones down to the hips
        heads = _fk(target, q, root, ground + [0.0, 0.0, target.heads[root, 2]])
        heads[:, body] = pos[:, body]
        locations[target.names[root]] = _location(target, q, heads, root)
    else:
        # the object turns about its origin o and moves by the ground's travel: world = o + g + R(x - o)
        inv = quat.conj(turn)
        o = target.origin
        ground = ground - o * [1.0, 1.0, 0.0]
        heads = o + quat.rotate(inv[:, None], pos - o - ground[:, None])
        q = quat.mul(inv[:, None], q)
        if root is not None:  # bones above the hips stay at rest
            q[:, ~body] = quat.identity()
            heads[:, ~body] = target.heads[~body]
        if st.root_motion == "OBJECT":
            object_loc, object_rot = o + ground, turn
    locations[target.names[hips]] = _location(target, q, heads, hips)
    world = pos if st.root_motion == "OBJECT" else heads  # the object carries the rest of the way
    parent_q = np.where((target.parents >= 0)[None, :, None], q[:, np.maximum(target.parents, 0)], quat.identity())
    local = quat.mul(quat.conj(parent_q), q)
    basis = quat.mul(quat.mul(quat.conj(target.rest)[None], local), target.rest[None])
    basis = quat.make_continuous(quat.normalize(basis), axis=0)
    keyed = np.flatnonzero(np.abs(basis - quat.identity()).max(axis=(0, 2)) > 1e-7)
    keyed = np.union1d(keyed, [hips])
    return Retargeted(clip.name, clip.fps, [target.names[b] for b in keyed], basis[:, keyed], locations, world, s,
                      contacts, h_t, object_loc, object_rot, {r: target.names[b] for r, b in rt.items()}, added_root,
                      None if sole_t is None else sole_t - target.origin[2])


def _location(rig: Rig, q, heads, b: int) -> np.ndarray:
    """Basis location [F, 3] (armature units) putting bone ``b``'s head at ``heads[:, b]``, given
    its parent's world delta and head."""
    p = int(rig.parents[b])
    if p < 0:
        v = heads[:, b] - rig.heads[b]
    else:
        v = quat.rotate(quat.conj(q[:, p]), heads[:, b] - heads[:, p]) + rig.heads[p] - rig.heads[b]
    if rig.connected[b]:
        return np.zeros_like(v)
    return quat.rotate(quat.conj(rig.rest[b])[None], v) / rig.scale


def _soles(rig: Rig, roles: dict, pos: np.ndarray, q: np.ndarray) -> np.ndarray | None:
    """[F, 2] the height of each foot's lowest point (the heads and tails of the foot bone and the
    bones below it), posed by world heads ``pos`` [F, B, 3] and world deltas ``q`` [F, B, 4];
    None for a rig whose bone ends are unknown."""
    if rig.tails is None:
        return None
    out = []
    for side in SIDES:
        sub = np.flatnonzero(rig.subtree(roles[f"foot.{side}"]))
        tails = pos[:, sub] + quat.rotate(q[:, sub], rig.tails[sub] - rig.heads[sub])
        out.append(np.minimum(pos[:, sub, 2].min(axis=1), tails[..., 2].min(axis=1)))
    return np.stack(out, axis=1)


def _plant_goals(cur, src, contact, s, h_t, h_s) -> np.ndarray:
    """Where a planted foot's head should be: from its position where each contact begins, moving
    as the source's foot does (scaled), at the source's height above its planted height (scaled)."""
    frames = np.arange(len(contact))
    begins = contact & ~np.r_[False, contact[:-1]]
    start = np.maximum.accumulate(np.where(begins, frames, 0))  # each frame's contact's first frame
    goal = cur.copy()
    goal[contact, :2] = (cur[start, :2] + s * (src[:, :2] - src[start, :2]))[contact]
    goal[:, 2] = h_t + s * (src[:, 2] - h_s)
    return goal


# --------------------------------------------------------------------------- how good it is

LANDMARKS = {"legs": tuple(f"{r}.{s}" for s in SIDES for r in ("thigh", "shin", "foot", "toe")),
             "arms": tuple(f"{r}.{s}" for s in SIDES for r in ("upper_arm", "forearm", "hand")) + ("head",)}


def quality(result: Retargeted, clip, source: Rig, target: Rig, world=None) -> dict:
    """How close the retargeted motion is to the source's scaled by the leg-length ratio.

    ``world`` [F, B, 3]: the target's heads as Blender evaluated them (else the core's).
    legs_error / arms_error  median and p95 (m) over frames of |target joint - scale * source joint|
                  at the joints both bodies have (hip, knee, ankle, toe; shoulder, elbow, wrist, head:
                  spine joints sit at different heights in different rigs, so they are left out);
                  ``leg_length`` the target's, to read them against
    stance_offset median / p95 (m) of |planted ankle height - the source's (scaled)| on the source's
                  contact frames
    sole_median / sole_p95  (rigs with bone ends) the planted feet's lowest point above the floor on
                  the source's contact frames: the signed median and the p95 of its size (m)
    skating, sliding  ``ankle_skating`` of the target; ``skating_scaled`` with the sliding threshold
                  scaled too (a foot the source slid at 0.5 m/s slides at 0.5 * scale); the source's
    """
    from .evaluate.motion import SKATE_SPEED, ankle_skating, foot_skating

    world = result.world if world is None else world
    pos_s, _ = clip.world()
    rs = find_roles(source)
    rt = {r: target.names.index(b) for r, b in result.roles.items() if b in target.names}  # not an added root
    out = {"scale": result.scale, "leg_length": leg_length(target, rt)}
    for group, roles in LANDMARKS.items():
        roles = [r for r in roles if r in rs and r in rt]
        if roles:
            e = np.linalg.norm(world[:, [rt[r] for r in roles]] - target.origin - result.scale * pos_s[:, [rs[r] for r in roles]],
                               axis=-1)
            out[f"{group}_error_median"], out[f"{group}_error_p95"] = float(np.median(e)), float(np.percentile(e, 95))
    ank = world[:, [rt["foot.L"], rt["foot.R"]]]
    z_s = pos_s[:, [rs["foot.L"], rs["foot.R"]], 2]
    off = np.abs((ank[..., 2] - result.planted_height) - result.scale * (z_s - np.percentile(z_s, 5, axis=0)))
    off = off[result.contacts]
    out["stance_offset_median"] = float(np.median(off)) if off.size else 0.0
    out["stance_offset_p95"] = float(np.percentile(off, 95)) if off.size else 0.0
    if result.soles is not None:  # planted soles above the floor (signed median, p95 of the distance)
        sole = result.soles[result.contacts]
        out["sole_median"] = float(np.median(sole)) if sole.size else 0.0
        out["sole_p95"] = float(np.percentile(np.abs(sole), 95)) if sole.size else 0.0
    sk_t = ankle_skating(ank, clip.fps)
    sk_s = foot_skating(clip, pos=pos_s)
    out.update(skating=sk_t["skating"], sliding=sk_t["sliding"],
               skating_scaled=ankle_skating(ank, clip.fps, speed=SKATE_SPEED * result.scale)["skating"],
               source_skating=sk_s["skating"], source_sliding=sk_s["sliding"])
    return out
