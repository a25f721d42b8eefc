"""The body of one skeleton, as a value (``Body.of(skeleton)``): built once per skeleton and asked by
import, play, retargeting and every engine, so that what a file's representation could change
(its rest orientations, names, axes) is read in one place.

A ``Body`` holds
- by topology alone, for a skeleton whose up axis is not known yet (reading a file): the ``hips``
  (where legs and spine part), the ``joints`` of the body below them (no extra roots), the
  ``upper`` body, the ``leg_ends`` and the ``head`` named so; its ``points`` among sampled
  positions, and its ``floor``: the one floor statistic, the 20th percentile of each frame's lowest
  body point (stance feet stand on it; airborne frames and a glitching marker do not move it);
- from the one finder of roles (``roles.find_roles``) on the rest pose: ``roles``, the ``feet``,
  ``thighs``, ``hands``, ``head_or_top``, ``chest``;
- what no rest orientation changes: the ``facing`` bones (``rootframe.root_frame`` turns them into a
  heading), the ``mirror`` map of left and right joints and the ``bone_height``;
- the rest pose's ``rest_forward``, for the few uses that are about the rest pose itself.

A skeleton is never modified, so its body is found once and kept with it."""

from __future__ import annotations

from functools import cached_property

import numpy as np

from ..errors import MotionctlError
from ..skeleton import Skeleton
from .roles import SIDES, Bones, find_roles, mirror_joint_map, side_of

LIMB_LEVELS = 4  # a leg is this many joints deep below the hips (thigh, shin, foot, toe); a game rig's
                 # ik_hand_root -> ik_hand_gun -> ik_hand_l is 3
FLOOR_PERCENTILE = 20  # of each frame's lowest body point: the floor (see ``Body.floor``)


class Body:
    """The parts of ``skeleton``'s body (module docstring); ``Body.of`` gives each skeleton's one."""

    def __init__(self, skeleton: Skeleton):
        self.skeleton = skeleton

    @classmethod
    def of(cls, skeleton: Skeleton) -> "Body":
        """The body of ``skeleton``, found once and kept with it."""
        body = getattr(skeleton, "_body", None)
        if body is None:
            body = skeleton._body = cls(skeleton)
        return body

    # ------------------------------------------------------------------ by topology alone

    @cached_property
    def hips(self) -> int:
        """The hips of a human rig: following the largest subtree from the root, the first joint with
        at least two children whose subtrees are ``LIMB_LEVELS`` deep (the legs and the spine), so a
        root's helper children (a prop, a game rig's ik_foot_root) are passed by; for a rig with no
        such joint, the first joint with more than one child."""
        sk = self.skeleton
        deepest = np.zeros(sk.n_joints, dtype=np.int64)  # levels of the deepest joint below each
        size = np.ones(sk.n_joints, dtype=np.int64)
        for k in range(sk.n_joints - 1, 0, -1):  # children after parents
            p = sk.parents[k]
            deepest[p] = max(deepest[p], deepest[k] + 1)
            size[p] += size[k]
        j = 0
        while True:
            kids = sk.children(j)
            if len(kids) == 0:
                break
            if np.count_nonzero(deepest[kids] + 1 >= LIMB_LEVELS) >= 2:
                return j
            j = int(kids[np.argmax(size[kids])])
        j = 0
        while len(sk.children(j)) == 1:
            j = int(sk.children(j)[0])
        return j

    @cached_property
    def joints(self) -> np.ndarray:
        """The hips and every joint below them: the body, without extra roots above."""
        return self.subtree(self.hips)

    @cached_property
    def head(self) -> int | None:
        """The joint named head (the shallowest), or None."""
        depth = self.skeleton.depth()
        heads = [j for j, n in enumerate(n.lower() for n in self.skeleton.names)
                 if "head" in n and "end" not in n and "top" not in n]
        return min(heads, key=lambda j: depth[j]) if heads else None

    @cached_property
    def upper(self) -> np.ndarray:
        """Joints whose mean position is above the hips in an upright body: the head (and its
        descendants) if a joint is named head, else the largest subtree below the hips (the spine,
        arms and head; legs are the smaller subtrees)."""
        names = [n.lower() for n in self.skeleton.names]
        depth = self.skeleton.depth()
        heads = [j for j, n in enumerate(names) if "head" in n and "end" not in n]
        if heads:
            return np.array([min(heads, key=lambda j: depth[j])])
        kids = self.skeleton.children(self.hips)
        if len(kids) == 0:
            return np.array([self.hips])
        sub = self.child_subtrees(self.hips)
        return sub[max(sub, key=lambda k: len(sub[k]))]

    @cached_property
    def leg_ends(self) -> np.ndarray:
        """The last joint of each leg: the deepest joint of every subtree at the hips other than the
        upper body (toes or ankles on a human rig).  Empty for a rig with no such subtrees."""
        upper = set(self.upper.tolist())
        depth = self.skeleton.depth()
        out = [int(sub[np.argmax(depth[sub])]) for sub in self.child_subtrees(self.hips).values()
               if not upper & set(sub.tolist())]
        return np.array(out, dtype=np.int64)

    def subtree(self, j: int) -> np.ndarray:
        """Joint ``j`` and every joint below it."""
        inside = np.zeros(self.skeleton.n_joints, dtype=bool)
        inside[j] = True
        for k in range(j + 1, self.skeleton.n_joints):  # parents come before children
            inside[k] = inside[self.skeleton.parents[k]]
        return np.flatnonzero(inside)

    def child_subtrees(self, j: int) -> dict:
        """{child of ``j``: the joints of its subtree}, in one pass over the joints (a subtree per child
        took a pass each: 20,000 children of one joint took minutes)."""
        sk = self.skeleton
        below = np.full(sk.n_joints, -1, dtype=np.int64)  # the child of j each joint descends from
        for k in range(j + 1, sk.n_joints):  # parents come before children
            p = sk.parents[k]
            below[k] = k if p == j else below[p]
        kids = sk.children(j)
        order = np.argsort(below, kind="stable")
        split = np.searchsorted(below[order], kids)
        ends = np.searchsorted(below[order], kids, side="right")
        return {int(k): np.sort(order[a:b]) for k, a, b in zip(kids, split, ends)}

    def points(self, points: np.ndarray) -> np.ndarray:
        """[F, P', ...] the body's joints and end sites among sampled positions [F, J + E, ...]."""
        sk, body = self.skeleton, self.joints
        if len(body) == sk.n_joints:
            return points
        return np.concatenate((points[:, body], points[:, sk.n_joints:][:, np.isin(sk.end_parent, body)]), axis=1)

    def floor(self, points_z: np.ndarray) -> float:
        """The height of the floor the feet stand on, from vertical positions [F, J + E] of joints
        and end sites: ``FLOOR_PERCENTILE`` of each frame's lowest body point (low enough that
        airborne frames do not count, high enough that a marker glitch does not)."""
        return float(np.percentile(self.points(points_z[..., None])[..., 0].min(axis=1), FLOOR_PERCENTILE))

    # ------------------------------------------------------------------ what no rest orientation changes

    @cached_property
    def mirror(self) -> np.ndarray:
        """int [J]: each joint's mirror image by name (itself on the centre line)."""
        return mirror_joint_map(self.skeleton.names)

    @cached_property
    def bone_height(self) -> float:
        """The body's height along its bones (metres): from the hips the longest bone path up the head
        (the upper body's, to its end site) plus the longest down a leg.  Bone lengths only, so the
        same for any rest orientation of the joints (the rest pose's height is not: a re-rested file
        stands its bones elsewhere); 1.0 for a body with no bones."""
        sk = self.skeleton
        reach = np.linalg.norm(sk.offsets, axis=1)  # bone path length from the root to each joint
        for k in range(1, sk.n_joints):  # parents come before children
            reach[k] += reach[sk.parents[k]]
        tips = np.concatenate((reach, reach[sk.end_parent] + np.linalg.norm(sk.end_offsets, axis=1)))
        owner = np.concatenate((np.arange(sk.n_joints), sk.end_parent))
        up = set((self.subtree(self.head) if self.head is not None else self.upper).tolist())
        legs = {int(a) for sub in self.child_subtrees(self.hips).values() if up.isdisjoint(sub.tolist()) for a in sub}
        total = 0.0
        for part in (up, legs):
            inside = np.isin(owner, list(part))
            if inside.any():
                total += float(tips[inside].max() - reach[self.hips])
        return total if total > 0 else 1.0

    @cached_property
    def facing(self) -> tuple[int, tuple, np.ndarray | None]:
        """How the body shows which way it faces, read from its own bones so that any rest
        orientation gives the same facing in the world: (the pelvis joint, the joints from it down to
        each thigh (left, right), the spine [3] in the pelvis's own frame or None).

        The pelvis is where the two legs part (the thighs' nearest common joint): its hip axis runs
        from the right thigh to the left as the clip's rotations place them (``rootframe.root_frame``),
        and its spine is the rest offset of the child that leads to the head.  Neither reads the rest
        pose, so a rig whose every bone lies along its own X, or whose joints rest in any other
        orientation, faces the same way once its rotations are applied.  The spine is None where the
        pelvis holds only the legs (Character Creator's CC_Base_Pelvis) or its offset lies along the
        hip axis: the world's up as the pelvis carries it then stands in.  A skeleton without two
        thighs: (root, None, None), the rest pose's facing (``rest_forward``)."""
        sk, thighs = self.skeleton, self.thighs
        if thighs is None:
            return 0, None, None
        paths = [sk.chain(t) for t in thighs]
        shared = [a for a, b in zip(*paths) if a == b]
        if not shared or shared[-1] in thighs:
            return 0, None, None
        pelvis = shared[-1]
        legs = tuple(p[len(shared):] for p in paths)
        top = self.head if self.head is not None else int(self.upper[0])
        path = sk.chain(top)
        spine = None
        if pelvis in path and path.index(pelvis) + 1 < len(path) and path[path.index(pelvis) + 1] not in legs[0] + legs[1]:
            v = sk.offsets[path[path.index(pelvis) + 1]]
            if np.linalg.norm(v, axis=-1) > 1e-9 * max(float(np.abs(sk.offsets).max()), 1e-300):
                spine = v
        return int(pelvis), legs, spine

    # ------------------------------------------------------------------ roles (the one finder)

    @cached_property
    def roles(self) -> dict:
        """``find_roles`` of the skeleton's rest pose ({} when its legs cannot be found)."""
        try:
            return find_roles(Bones.from_skeleton(self.skeleton))
        except MotionctlError:
            return {}

    @cached_property
    def feet(self) -> dict:
        """{'L': (ankle, toe), 'R': (ankle, toe)} joint indices: the feet and toes ``find_roles``
        finds, else the lowest rest joints on each side (a rig with no legs to speak of)."""
        roles = self.roles
        if all(f"foot.{s}" in roles for s in SIDES):
            return {s: (roles[f"foot.{s}"], roles.get(f"toe.{s}", roles[f"foot.{s}"])) for s in SIDES}
        return self._lowest_joints()

    def _lowest_joints(self) -> dict:
        sk = self.skeleton
        depth = sk.depth()
        result = {}
        for side in "LR":
            def pick(words):
                cands = [j for j, n in enumerate(sk.names) if side_of(n) == side and any(w in n.lower() for w in words)]
                return min(cands, key=lambda j: depth[j]) if cands else None

            toe = pick(("toe",))
            ankle = pick(("ankle", "foot"))
            if ankle is None and toe is not None:
                ankle = int(sk.parents[toe])
            if toe is None and ankle is not None:
                kids = sk.children(ankle)
                toe = int(kids[0]) if len(kids) else ankle
            if ankle is not None:
                result[side] = (int(ankle), int(toe))
        if len(result) < 2:
            # Geometry fallback: the lowest rest joints on each side of the body (x sign).
            rest = sk.rest_positions()
            for side, sign in (("L", -1.0), ("R", 1.0)):
                if side in result:
                    continue
                mask = np.sign(rest[:, 0] * sign) > 0
                if not mask.any():
                    mask[:] = True
                order = np.flatnonzero(mask)[np.argsort(rest[mask, 2], kind="stable")]
                result[side] = (int(order[min(1, len(order) - 1)]), int(order[0]))
        return result

    @cached_property
    def thighs(self) -> tuple[int, int] | None:
        """(left, right) thighs (``find_roles``), else the joints nearest the root that mirror each
        other, for the facing direction."""
        sk, roles = self.skeleton, self.roles
        if "thigh.L" in roles and "thigh.R" in roles:
            return roles["thigh.L"], roles["thigh.R"]
        depth, rest = sk.depth(), sk.rest_positions()
        pairs = [(j, int(self.mirror[j])) for j in range(sk.n_joints)
                 if self.mirror[j] != j and side_of(sk.names[j]) == "L"]
        pairs = [p for p in pairs if np.linalg.norm(rest[p[0], :2] - rest[p[1], :2], axis=-1) > 1e-4]
        if not pairs:
            return None
        # Prefer the leg chain (joints below the root) over the arms.
        pairs.sort(key=lambda p: (rest[p[0], 2] > rest[0, 2] + 1e-6, depth[p[0]]))
        return pairs[0]

    @cached_property
    def hands(self) -> list:
        """[left, right] joint indices of the hands (``find_roles``; else the shallowest joint named
        hand or wrist on each side); fewer when not found."""
        roles = self.roles
        if "hand.L" in roles and "hand.R" in roles:
            return [roles["hand.L"], roles["hand.R"]]
        names = [n.lower() for n in self.skeleton.names]
        depth = self.skeleton.depth()
        out = []
        for side in ("l", "r"):
            cands = [j for j, n in enumerate(names) if ("hand" in n or "wrist" in n) and
                     (n.startswith(side) or f"_{side}_" in n or ("left" if side == "l" else "right") in n)]
            if cands:
                out.append(min(cands, key=lambda j: depth[j]))
        return out

    @cached_property
    def head_or_top(self) -> int:
        """The head (``find_roles``; else a joint named head; else the highest rest joint)."""
        if "head" in self.roles:
            return self.roles["head"]
        heads = [j for j, n in enumerate(self.skeleton.names) if "head" in n.lower()]
        return heads[0] if heads else int(np.argmax(self.skeleton.rest_positions()[:, 2]))

    @cached_property
    def chest(self) -> int:
        """The chest joint (where the arms branch off the spine; else a joint named so; else the root)."""
        if "chest" in self.roles:
            return self.roles["chest"]
        names = [n.lower() for n in self.skeleton.names]
        for key in ("chest", "spine", "thorax", "upperback"):
            for j, n in enumerate(names):
                if key in n:
                    return j
        return 0

    @cached_property
    def rest_forward(self) -> np.ndarray:
        """Unit forward direction [3] of the rest pose (left-to-right hip axis crossed with up)."""
        if self.thighs is None:
            return np.array([0.0, -1.0, 0.0])  # Blender's convention for characters
        rest = self.skeleton.rest_positions()
        left = rest[self.thighs[0]] - rest[self.thighs[1]]
        left[2] = 0.0
        f = np.cross(left, [0.0, 0.0, 1.0])
        return f / np.linalg.norm(f, axis=-1)
