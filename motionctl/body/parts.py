"""The parts of a motionctl skeleton's body, asked of the one finder (``roles.find_roles``): feet,
thighs, hands, head, chest and the rest facing; and the same body by topology alone, for a
skeleton whose up axis is not known yet (reading a file): ``branch_joint`` (the hips),
``upper_body``, ``leg_ends``, ``head_joint``, ``body_joints``."""

from __future__ import annotations

import numpy as np

from ..clip import Clip
from ..errors import MotionctlError
from ..skeleton import Skeleton
from .roles import SIDES, Bones, _side, find_roles, mirror_joint_map

def skeleton_roles(skeleton: Skeleton) -> dict:
    """``find_roles`` of a skeleton's rest pose ({} when its legs cannot be found), found once per
    skeleton (a skeleton is never modified)."""
    if getattr(skeleton, "_roles", None) is None:
        try:
            skeleton._roles = find_roles(Bones.from_skeleton(skeleton))
        except MotionctlError:
            skeleton._roles = {}
    return skeleton._roles


def foot_joints(skeleton: Skeleton) -> dict:
    """{'L': (ankle, toe), 'R': (ankle, toe)} joint indices: the feet and toes ``find_roles`` finds,
    else the lowest rest joints on each side (a rig with no legs to speak of)."""
    roles = skeleton_roles(skeleton)
    if all(f"foot.{s}" in roles for s in SIDES):
        return {s: (roles[f"foot.{s}"], roles.get(f"toe.{s}", roles[f"foot.{s}"])) for s in SIDES}
    return _lowest_joints(skeleton)


def _lowest_joints(skeleton: Skeleton) -> dict:
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
            order = np.flatnonzero(mask)[np.argsort(rest[mask, 2], kind="stable")]
            result[side] = (int(order[min(1, len(order) - 1)]), int(order[0]))
    return result


def hip_joints(skeleton: Skeleton) -> tuple[int, int] | None:
    """(left, right) thighs (``find_roles``), else the joints nearest the root that mirror each other,
    for the facing direction."""
    roles = skeleton_roles(skeleton)
    if "thigh.L" in roles and "thigh.R" in roles:
        return roles["thigh.L"], roles["thigh.R"]
    mirror = mirror_joint_map(skeleton.names)
    depth = skeleton.depth()
    rest = skeleton.rest_positions()
    pairs = [(j, int(mirror[j])) for j in range(skeleton.n_joints) if mirror[j] != j and _side(skeleton.names[j]) == "L"]
    pairs = [p for p in pairs if np.linalg.norm(rest[p[0], :2] - rest[p[1], :2], axis=-1) > 1e-4]
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
    return f / np.linalg.norm(f, axis=-1)


def facing(skeleton: Skeleton) -> tuple[int, tuple, np.ndarray | None]:
    """How the body shows which way it faces, read from its own bones so that any rest orientation
    gives the same facing in the world: (the pelvis joint, the joints from it down to each thigh
    (left, right), the spine [3] in the pelvis's own frame or None).

    The pelvis is where the two legs part (the thighs' nearest common joint): its hip axis runs
    from the right thigh to the left as the clip's rotations place them (``rootframe.root_frame``),
    and its spine is the rest offset of the child that leads to the head.  Neither reads the rest
    pose, so a rig whose every bone lies along its own X, or whose joints rest in any other
    orientation, faces the same way once its rotations are applied.  The spine is None where the
    pelvis holds only the legs (Character Creator's CC_Base_Pelvis) or its offset lies along the
    hip axis: the world's up as the pelvis carries it then stands in.  A skeleton without two
    thighs: (root, None, None), the rest pose's facing (``rest_forward``)."""
    if getattr(skeleton, "_facing", None) is not None:
        return skeleton._facing
    out = (0, None, None)
    thighs = hip_joints(skeleton)
    if thighs is not None:
        paths = [skeleton.chain(t) for t in thighs]
        shared = [a for a, b in zip(*paths) if a == b]
        if shared and shared[-1] not in thighs:
            pelvis = shared[-1]
            legs = tuple(p[len(shared):] for p in paths)
            head = head_joint(skeleton)
            top = head if head is not None else int(upper_body(skeleton)[0])
            path = skeleton.chain(top)
            spine = None
            if pelvis in path and path.index(pelvis) + 1 < len(path) and path[path.index(pelvis) + 1] not in legs[0] + legs[1]:
                v = skeleton.offsets[path[path.index(pelvis) + 1]]
                if np.linalg.norm(v, axis=-1) > 1e-9 * max(float(np.abs(skeleton.offsets).max()), 1e-300):
                    spine = v
            out = (int(pelvis), legs, spine)
    skeleton._facing = out
    return out


def hand_joints(clip: Clip) -> list:
    """[left, right] joint indices of the hands (``find_roles``; else the shallowest joint named hand or
    wrist on each side); fewer when not found."""
    roles = skeleton_roles(clip.skeleton)
    if "hand.L" in roles and "hand.R" in roles:
        return [roles["hand.L"], roles["hand.R"]]
    names = [n.lower() for n in clip.skeleton.names]
    depth = clip.skeleton.depth()
    out = []
    for side in ("l", "r"):
        cands = [j for j, n in enumerate(names) if ("hand" in n or "wrist" in n) and
                 (n.startswith(side) or f"_{side}_" in n or ("left" if side == "l" else "right") in n)]
        if cands:
            out.append(min(cands, key=lambda j: depth[j]))
    return out


def head_of(clip: Clip) -> int:
    """The head joint of a clip's skeleton (else its highest rest joint)."""
    roles = skeleton_roles(clip.skeleton)
    if "head" in roles:
        return roles["head"]
    names = [n.lower() for n in clip.skeleton.names]
    heads = [j for j, n in enumerate(names) if "head" in n]
    return heads[0] if heads else int(np.argmax(clip.skeleton.rest_positions()[:, 2]))


def chest_of(clip: Clip) -> int:
    """The chest joint (where the arms branch off the spine; else a joint named so; else the root)."""
    roles = skeleton_roles(clip.skeleton)
    if "chest" in roles:
        return roles["chest"]
    names = [n.lower() for n in clip.skeleton.names]
    for key in ("chest", "spine", "thorax", "upperback"):
        for j, n in enumerate(names):
            if key in n:
                return j
    return 0


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
    sub = _child_subtrees(skeleton, j)
    return sub[max(sub, key=lambda k: len(sub[k]))]


def _subtree(skeleton: Skeleton, j: int) -> np.ndarray:
    inside = np.zeros(skeleton.n_joints, dtype=bool)
    inside[j] = True
    for k in range(j + 1, skeleton.n_joints):  # parents come before children
        inside[k] = inside[skeleton.parents[k]]
    return np.flatnonzero(inside)


def _child_subtrees(skeleton: Skeleton, j: int) -> dict:
    """{child of ``j``: the joints of its subtree}, in one pass over the joints (a subtree per child
    took a pass each: 20,000 children of one joint took minutes)."""
    below = np.full(skeleton.n_joints, -1, dtype=np.int64)  # the child of j each joint descends from
    parents = skeleton.parents
    for k in range(j + 1, skeleton.n_joints):  # parents come before children
        p = parents[k]
        below[k] = k if p == j else below[p]
    kids = skeleton.children(j)
    order = np.argsort(below, kind="stable")
    split = np.searchsorted(below[order], kids)
    ends = np.searchsorted(below[order], kids, side="right")
    return {int(k): np.sort(order[a:b]) for k, a, b in zip(kids, split, ends)}


LIMB_LEVELS = 4  # a leg is this many joints deep below the hips (thigh, shin, foot, toe); a game rig's
                 # ik_hand_root -> ik_hand_gun -> ik_hand_l is 3


def branch_joint(skeleton: Skeleton) -> int:
    """The hips of a human rig: following the largest subtree from the root, the first joint with
    at least two children whose subtrees are ``LIMB_LEVELS`` deep (the legs and the spine), so a
    root's helper children (a prop, a game rig's ik_foot_root) are passed by; for a rig with no
    such joint, the first joint with more than one child."""
    deepest = np.zeros(skeleton.n_joints, dtype=np.int64)  # levels of the deepest joint below each
    size = np.ones(skeleton.n_joints, dtype=np.int64)
    for k in range(skeleton.n_joints - 1, 0, -1):  # children after parents
        p = skeleton.parents[k]
        deepest[p] = max(deepest[p], deepest[k] + 1)
        size[p] += size[k]
    j = 0
    while True:
        kids = skeleton.children(j)
        if len(kids) == 0:
            break
        if np.count_nonzero(deepest[kids] + 1 >= LIMB_LEVELS) >= 2:
            return j
        j = int(kids[np.argmax(size[kids])])
    j = 0
    while len(skeleton.children(j)) == 1:
        j = int(skeleton.children(j)[0])
    return j


def body_joints(skeleton: Skeleton) -> np.ndarray:
    """The hips (``branch_joint``) and every joint below them: the body, without extra roots above."""
    return _subtree(skeleton, branch_joint(skeleton))


def body_points(skeleton: Skeleton, points: np.ndarray) -> np.ndarray:
    """[F, P', 3] the body's joints and end sites among sampled positions [F, J + E, 3]."""
    body = body_joints(skeleton)
    if len(body) == skeleton.n_joints:
        return points
    return np.concatenate((points[:, body], points[:, skeleton.n_joints:][:, np.isin(skeleton.end_parent, body)]),
                          axis=1)


def leg_ends(skeleton: Skeleton) -> np.ndarray:
    """The last joint of each leg: the deepest joint of every subtree at the hips other than the
    upper body (toes or ankles on a human rig).  Empty for a rig with no such subtrees."""
    hips = branch_joint(skeleton)
    upper = set(upper_body(skeleton).tolist())
    depth = skeleton.depth()
    out = []
    for sub in _child_subtrees(skeleton, hips).values():
        if upper & set(sub.tolist()):
            continue
        out.append(int(sub[np.argmax(depth[sub])]))
    return np.array(out, dtype=np.int64)


def bone_height(skeleton: Skeleton) -> float:
    """The body's height along its bones (metres): from the hips the longest bone path up the head
    (the upper body's, to its end site) plus the longest down a leg.  Bone lengths only, so the same
    for any rest orientation of the joints (the rest pose's height is not: a re-rested file stands
    its bones elsewhere); 1.0 for a body with no bones."""
    lengths = np.linalg.norm(skeleton.offsets, axis=1)
    reach = lengths.copy()  # bone path length from the root to each joint
    for k in range(1, skeleton.n_joints):  # parents come before children
        reach[k] += reach[skeleton.parents[k]]
    tips = np.concatenate((reach, reach[skeleton.end_parent] + np.linalg.norm(skeleton.end_offsets, axis=1)))
    owner = np.concatenate((np.arange(skeleton.n_joints), skeleton.end_parent))
    hips = branch_joint(skeleton)
    head = head_joint(skeleton)
    up = set((_subtree(skeleton, head) if head is not None else upper_body(skeleton)).tolist())
    legs = set(np.concatenate([_subtree(skeleton, int(j)) for j in leg_ends(skeleton)] or [[]]).astype(int).tolist())
    legs |= {int(a) for sub in _child_subtrees(skeleton, hips).values() for a in sub if up.isdisjoint(sub.tolist())}
    in_up = np.isin(owner, list(up))
    in_leg = np.isin(owner, list(legs))
    total = ((tips[in_up].max() - reach[hips]) if in_up.any() else 0.0) + \
            ((tips[in_leg].max() - reach[hips]) if in_leg.any() else 0.0)
    return float(total) if total > 0 else 1.0


def head_joint(skeleton: Skeleton) -> int | None:
    """The joint named head (the shallowest), or None."""
    names = [n.lower() for n in skeleton.names]
    depth = skeleton.depth()
    heads = [j for j, n in enumerate(names) if "head" in n and "end" not in n and "top" not in n]
    return min(heads, key=lambda j: depth[j]) if heads else None
