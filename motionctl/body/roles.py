"""One finder of the body's parts, used by everything (import, contacts, engines, retargeting).

- ``find_roles``: every skeleton or rig gets the same roles (hips, spine, chest, neck, head and, per
  side, shoulder, upper arm, forearm, hand, thigh, shin, foot, toe) from its bone names (CMU ASF and
  MotionBuilder names, Mixamo ``mixamorig:``, Character Creator ``CC_Base_``, Rigify metarig,
  ``DEF-``/``ORG-`` and FK control bones, UE Mannequin), and from its shape where the names say
  nothing: the legs are the two lowest branches, the arms the two widest off the spine, and in a
  limb's chain the two longest consecutive bones are the upper and lower limb.  The hips, spine,
  chest and neck always come from topology (the hips join legs and head; the chest is where the
  arms branch).  ``body.Body`` asks it of a motionctl skeleton (its ``feet``, ``thighs``...).
"""

from __future__ import annotations

import re

import numpy as np

from .. import quat
from ..errors import MotionctlError
from ..skeleton import Skeleton, forward_kinematics

SIDES = ("L", "R")
LIMB = ("shoulder", "upper_arm", "forearm", "hand", "thigh", "shin", "foot", "toe")
ROLES = ("root", "hips", "spine", "chest", "neck", "head") + tuple(f"{r}.{s}" for s in SIDES for r in LIMB)
LEG_ROLES = tuple(f"{r}.{s}" for s in SIDES for r in ("thigh", "shin", "foot"))

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


_ASF_LIMBS = {"hipjoint", "femur", "tibia", "foot", "toes", "clavicle", "humerus", "radius",
              "wrist", "hand", "fingers", "thumb"}


def side_of(name: str) -> str | None:
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
            if c in lookup and c != n and side_of(c) != side_of(n):
                out[i] = lookup[c]
                break
    return out


class Bones:
    """A skeleton's or a rig's bones in a rest pose: ``names``, ``parents`` (int [B], -1 for none),
    ``heads`` [B, 3] (Z up) and optional ``tails`` [B, 3]; ``depth`` and ``order`` (parents before
    children) follow.  What ``find_roles`` reads (``motionctl.retarget.Rig`` is one too)."""

    def __init__(self, names, parents, heads, tails=None, name: str = "skeleton"):
        self.names = list(names)
        self.parents = np.asarray(parents, dtype=np.int64)
        self.heads = np.asarray(heads, dtype=float).reshape(-1, 3)
        self.tails = None if tails is None else np.asarray(tails, dtype=float).reshape(-1, 3)
        self.name = name
        self.index_tree()

    def index_tree(self) -> None:
        """``depth`` and ``order`` from ``parents`` (bone lists need not be in order)."""
        n = len(self.names)
        depth = np.zeros(n, dtype=np.int64)
        for _ in range(n):  # a few passes at most (bone lists are nearly in order)
            new = np.where(self.parents >= 0, depth[np.maximum(self.parents, 0)] + 1, 0)
            if np.array_equal(new, depth):
                break
            depth = new
        self.depth = depth
        self.order = np.argsort(depth, kind="stable")  # parents before children

    @staticmethod
    def rest_of(skeleton: Skeleton) -> tuple[np.ndarray, np.ndarray]:
        """(heads, tails) [J, 3] of a skeleton's rest pose (``pose_of``)."""
        return Bones.pose_of(skeleton)[:2]

    @staticmethod
    def pose_of(skeleton: Skeleton, root=None, rot=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(heads, tails [J, 3], world rotations [J, 4]) of a skeleton in its rest pose, or with its root
        at ``root`` [3] and its joints at local rotations ``rot`` [J, 4]: each joint's tail the mean of
        its bone tips (children and end sites; a leaf without one: itself)."""
        joint, tip = skeleton.bone_tips()
        if rot is None:
            heads, world = skeleton.rest_positions(), quat.identity((skeleton.n_joints,))
        else:
            pos, world = forward_kinematics(skeleton, np.asarray(root, float)[None], np.asarray(rot, float)[None])
            heads, world = pos[0], world[0]
            tip = quat.rotate(world[joint], tip)  # each bone tip in the world, in that pose
        sums = np.zeros_like(heads)
        np.add.at(sums, joint, heads[joint] + tip)
        count = np.bincount(joint, minlength=skeleton.n_joints)[:, None]
        return heads, np.where(count > 0, sums / np.maximum(count, 1), heads), world

    @classmethod
    def from_skeleton(cls, skeleton: Skeleton, name: str = "skeleton") -> "Bones":
        heads, tails = cls.rest_of(skeleton)
        return cls(skeleton.names, skeleton.parents, heads, tails, name)

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

    def path(self, top: int, bottom: int) -> list:
        """Bones from ``top`` down to ``bottom`` (both included), or [] when not an ancestor."""
        chain = [bottom] + self.ancestors(bottom)
        return chain[:chain.index(top) + 1][::-1] if top in chain else []


def name_role(name: str) -> tuple[str | None, int]:
    """(role such as "thigh.L" or "head", or None; rank: 0 plain or FK control, 1 ``ORG-``, 2
    ``DEF-``) read from a bone name alone.  "hip" and "shoulder" come back as "hip?"/"shoulder?":
    joint-named skeletons call the thigh and upper arm that (``find_roles`` decides)."""
    if _HELPER.match(name):
        return None, 0
    low = name.lower()
    rank = 2 if low.startswith(("def-", "def_")) else 1 if low.startswith(("org-", "org_")) else 0
    core = _PREFIX.sub("", name)
    side = side_of(core) or side_of(name)
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


def _lca(rig: Bones, bones) -> int:
    paths = [[b] + rig.ancestors(b) for b in bones]
    common = set(paths[0]).intersection(*map(set, paths[1:]))
    return next(b for b in paths[0] if b in common) if common else -1


def _leaf_below(rig: Bones, b: int, key) -> int:
    """The bone of ``b``'s subtree (``b`` included) that minimises ``key(bone)``."""
    return min(np.flatnonzero(rig.subtree(b)).tolist(), key=key)


def _limb_roles(rig: Bones, path: list, roles: tuple, first: int) -> dict:
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


def find_roles(rig: Bones) -> dict:
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
                p = rig.path(u, lo)
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
    spine = rig.path(hips, found["head"])[1:-1]
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


def rest_facing(rig: Bones, roles: dict) -> np.ndarray:
    """The rig's rest facing (unit, horizontal): the hips' left-to-right axis crossed with up, else
    the feet's heel-to-toe direction."""
    if "thigh.L" in roles and "thigh.R" in roles:
        left = rig.heads[roles["thigh.L"]] - rig.heads[roles["thigh.R"]]
        f = np.cross(left, [0.0, 0.0, 1.0])
        f[2] = 0.0
        if np.linalg.norm(f) > 1e-6:
            return f / np.linalg.norm(f)
    return _toe_forward(rig, [{r: roles[f"{r}.{s}"] for r in ("foot", "toe") if f"{r}.{s}" in roles} for s in SIDES])


def _toe_forward(rig: Bones, feet: list) -> np.ndarray:
    """The mean heel-to-toe direction (unit, horizontal) of ``feet`` [{"foot": bone, "toe": bone}],
    Blender's front (-Y) when they have no toes."""
    d = np.zeros(3)
    for g in feet:
        if "foot" in g and "toe" in g:
            d += rig.heads[g["toe"]] - rig.heads[g["foot"]]
    d[2] = 0.0
    return d / np.linalg.norm(d) if np.linalg.norm(d) > 1e-6 else np.array([0.0, -1.0, 0.0])


def _legs_by_geometry(rig: Bones, named: dict) -> dict:
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
    chains = [rig.path(k, leaf) for leaf, k in lows[:2]]
    legs = [_limb_roles(rig, c, ("thigh", "shin", "foot", "toe"), 0) for c in chains]
    left = np.cross([0.0, 0.0, 1.0], _toe_forward(rig, legs))
    side = [float((rig.heads[c].mean(axis=0) - rig.heads[x]) @ left) for c in chains]
    out = {}
    for g, sd in zip(legs, side):
        s = "L" if sd == max(side) else "R"
        out.update({f"{r}.{s}": b for r, b in g.items()})
    return {k: v for k, v in out.items() if k not in named}


def _arms_by_geometry(rig: Bones, roles: dict) -> dict:
    """The two branches off the spine (hips to head) reaching furthest sideways are the arms."""
    spine = rig.path(roles["hips"], roles["head"])
    fwd = rest_facing(rig, roles)
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
                branches.append((abs(reach), np.sign(reach), rig.path(int(k), tip)))
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
