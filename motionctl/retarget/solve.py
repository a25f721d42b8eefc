"""The retarget itself: a clip (on the source skeleton) on the target rig with a bone map, its
settings (``RetargetSettings``) and result (``Retargeted``)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .. import quat
from ..body.ik import two_bone
from ..body.contacts import foot_contacts
from ..body.roles import LEG_ROLES, SIDES, find_roles, rest_facing
from ..errors import MotionctlError
from ..rootframe import gaussian_smooth, yaw_of
from ..settings import setting, validate
from .contacts import leg_length, plant_goals, soles_of, planted_ankle_height
from .mapping import Rig, check_mapping, rest_alignment, with_root_bone

# --------------------------------------------------------------------------- the retarget

@dataclass
class RetargetSettings:
    """How a clip is put on the target: declared once for the Retarget panel and any caller."""

    root_motion: str = setting("BONE", "Root Motion", "Where the character's travel and heading go", choices=(
        ("BONE", "Root Bone", "On the rig's root bone (added at the origin if it has none): the hips' ground "
         "position and smoothed heading, as game engines read root motion"),
        ("OBJECT", "Armature Object", "On the armature object (location and rotation); the bones move in place"),
        ("IN_PLACE", "In Place", "No root motion: the character walks on the spot, facing its rest direction")))
    floor: bool = setting(True, "Keep Feet on Floor", "Shift the body so each planted foot's lowest point stands "
                          "on the floor (the rig's own feet; no IK)")
    foot_plant: bool = setting(False, "Plant Feet (IK)", "Two-bone IK on the legs so planted feet slide no more "
                               "than the capture's (removes sliding that different proportions add)")
    scale: float = setting(0.0, "Root Motion Scale", "Scale of the travel; 0: the ratio of leg lengths", min=0.0,
                           max=100.0, ui=False)
    heading_smooth: float = setting(0.2, "Heading Smoothing", "Seconds of smoothing of the root's heading (the "
                                    "engines' root frame)", min=0.0, max=5.0, unit="TIME", ui=False)
    plant_blend: float = setting(0.1, "Plant Blend", "Seconds over which the IK blends in and out at each "
                                 "contact's ends", min=0.0, max=2.0, unit="TIME", ui=False)
    start_here: bool = setting(True, "Start Where It Stands", "The take starts with the hips over the character's "
                               "origin (off: where the capture put them, its origin at the character's)", ui=False)

    def __post_init__(self):
        validate(self)


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
    added_root: tuple | None = None  # (name, tail [3], children): a root bone the rig lacked, to add to it
    soles: np.ndarray | None = None  # [F, 2] each foot's lowest point above the floor (rigs with bone ends)
    start: np.ndarray = field(default_factory=lambda: np.zeros(3))  # the capture's point put at the origin

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
    [F, 3] with weight ``w`` [F] (``body.ik.two_bone``); the foot keeps its world rotation."""
    c = pos[:, foot]
    r1, r2 = two_bone(pos[:, thigh], pos[:, shin], c, c + w[:, None] * (goal - c))
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
        target, tail = with_root_bone(target, rt)
        rt = dict(rt, root=len(target.names) - 1)
        added_root = (target.names[-1], tail, [target.names[b] for b in np.flatnonzero(target.parents == rt["root"])])
    pairs = check_mapping(mapping, source, target)
    tb = np.array([b for b, _ in pairs])
    sj = np.array([j for _, j in pairs])
    for role in ("hips",) + LEG_ROLES:
        if target.names[rt[role]] not in mapping:
            raise MotionctlError(f"bone map: the {role} bone {target.names[rt[role]]!r} is not mapped "
                                 "(the legs and hips place the body)")
    fwd_s, fwd_t = rest_facing(source, rs), rest_facing(target, rt)
    align = rest_alignment(source, target, pairs, fwd_s, fwd_t)
    s = st.scale or leg_length(target, rt) / leg_length(source, rs)

    pos_s, rot_s = clip.world()
    start = np.zeros(3)
    if st.start_here:  # the capture's ground under its first frame's hips is the character's origin
        start[:2] = 0.5 * (pos_s[0, rs["thigh.L"], :2] + pos_s[0, rs["thigh.R"], :2])
        pos_s = pos_s - start
    dq_s = quat.mul(rot_s, quat.conj(source.rest))  # the source's world deltas from its rest
    f, n = clip.n_frames, len(target.names)
    q = quat.identity((f, n))
    q[:, tb] = quat.mul(dq_s[:, sj], align[None])
    mapped = set(tb.tolist())
    hips = rt["hips"]
    spine = set(target.path(hips, rt["head"]))
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
    sole_s = soles_of(source, rs, pos_s, quat.mul(rot_s, quat.conj(source.rest)))
    soles = sole_s is not None and target.tails is not None
    if soles:
        z_s = sole_s
        h_s = np.percentile(z_s, 5, axis=0)
    if st.floor:
        z_t = soles_of(target, rt, pos, q) if soles else pos[:, [rt["foot.L"], rt["foot.R"]], 2]
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
            goal = plant_goals(cur, src, contacts[:, k], s, h_t, h_s[k])
            if soles:  # the ankle where it stands now, less what its sole is still off the floor
                goal[:, 2] = cur[:, 2] - (soles_of(target, rt, pos, q)[:, k] - target.origin[2])
            _two_bone_ik(q, pos, rt[f"thigh.{side}"], rt[f"shin.{side}"], rt[f"foot.{side}"], goal,
                         _segments_weight(contacts[:, k], ramp))
        _fill(target, q, mapped, spine)
        pos = _fk(target, q, hips, hips_pos)

    sole_t = soles_of(target, rt, pos, q)  # in the world, before the root motion moves the frame of q

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
        q[:, target.path(root, hips)[:-1]] = turn[:, None]  # the root and any bones down to the hips
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
                      None if sole_t is None else sole_t - target.origin[2], start)


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
