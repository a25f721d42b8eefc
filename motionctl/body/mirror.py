"""Left and right: which joint mirrors which, and the mirror image of a clip (paper 000's suggested
reflection, used by every engine that mirrors its clips)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .. import quat
from ..clip import Clip
from ..skeleton import Skeleton, forward_kinematics
from .body import Body

MIRROR_SUFFIX = "_mirror"  # a mirrored clip's name: its own plus this (the one place that knows)


def mirror_source(name: str) -> tuple[str, bool]:
    """(the library clip's name, mirrored?) of a working clip's ``name`` (see ``mirror_clip``)."""
    return (name[: -len(MIRROR_SUFFIX)], True) if name.endswith(MIRROR_SUFFIX) else (name, False)


# Reflection through the world plane x = 0: positions negate x; a rotation's axis is a
# pseudovector, so quaternions (w, x, y, z) become (w, x, -y, -z).
_MIRROR_POS = np.array([-1.0, 1.0, 1.0])
_MIRROR_QUAT = np.array([1.0, 1.0, -1.0, -1.0])
_SIDE_TAGS = {"left": "right", "right": "left"}


def _turn(a: np.ndarray, b: np.ndarray, rigid: int, prefer: np.ndarray) -> np.ndarray:
    """The rotation [4] taking directions ``a`` [K, 3] to ``b`` [K, 3] (paired): two frames (TRIAD) on
    the longest of the first ``rigid`` pairs (bones: matched exactly) or, with none, of all, and on
    the pair most square to it (a bone before a mean); where all lie in line, of the rotations taking
    the one direction to its pair the nearest to ``prefer`` [4]; with no direction ``prefer``.
    Exact where ``b`` is a rotation of ``a``."""
    la, lb = np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=1)
    keep = (la > 1e-9 * max(float(la.max(initial=0.0)), 1e-300)) & (lb > 1e-12)
    if not keep.any():
        return prefer
    a, b = a / np.where(keep, la, 1.0)[:, None], b / np.where(keep, lb, 1.0)[:, None]
    pool = keep & (np.arange(len(a)) < rigid) if (keep[:rigid]).any() else keep
    first = int(np.argmax(np.where(pool, la, -1.0)))
    side = np.where(keep, np.linalg.norm(np.cross(a[first], a), axis=1), -1.0)
    firm = np.where(pool, side, -1.0)
    second = int(np.argmax(firm)) if firm.max() >= 0.02 else int(np.argmax(side))  # a bone (over 1 degree) before a mean
    if side[second] < (0.02 if firm[second] >= 0.02 else 0.2):  # in line (bones within 1 degree, means 12)
        arc = quat.between(a[first], b[first])
        # The turn about the bone: ``prefer``'s (its twist about a[first] once the arc is undone).
        v = quat.mul(quat.conj(arc), prefer)
        twist = np.concatenate((v[:1], np.sum(v[1:] * a[first]) * a[first]))
        size = float(np.linalg.norm(twist, axis=-1))
        return quat.mul(arc, twist / size) if size > 1e-9 else arc
    frames = []
    for v in (a, b):
        x = v[first]
        z = np.cross(x, v[second])
        z = z / np.linalg.norm(z, axis=-1)
        frames.append(np.column_stack((x, np.cross(z, x), z)))
    return quat.from_matrix((frames[1][:, None, :] * frames[0][None, :, :]).sum(axis=-1))  # Fb Fa^T, no BLAS


def _below(clip, j: int, m: np.ndarray, means: bool) -> tuple[np.ndarray, np.ndarray, int]:
    """(points [K, 3] in joint ``j``'s frame, their mirror images' [K, 3], how many come first as
    bones): its children and end sites at rest, then its grandchildren and theirs where the clip
    carries them on average (below a child without rotation channels, CMU's hip joints, bones too;
    below a turning child only with ``means``), each paired with its counterpart's below ``m[j]``,
    reflected."""
    sk = clip.skeleton
    src, dst = [], []
    kids = sk.children(j)
    ends, mends = np.flatnonzero(sk.end_parent == j), np.flatnonzero(sk.end_parent == m[j])
    for c in kids:
        src.append(sk.offsets[c])
        dst.append(sk.offsets[m[c]] * _MIRROR_POS)
    if len(ends) == len(mends):  # end sites pair in file order
        src.extend(sk.end_offsets[ends])
        dst.extend(sk.end_offsets[mends] * _MIRROR_POS)
    rigid = len(src)
    kids = sorted(kids, key=lambda c: any(ch.endswith("rotation") for ch in sk.channels[c]))  # fixed joints first
    for c in kids:
        mc = m[c]
        if len(sk.children(c)) != len(sk.children(mc)):
            continue
        pairs = [(sk.offsets[g], sk.offsets[m[g]]) for g in sk.children(c)]
        ce, me = np.flatnonzero(sk.end_parent == c), np.flatnonzero(sk.end_parent == mc)
        if len(ce) == len(me):
            pairs += list(zip(sk.end_offsets[ce], sk.end_offsets[me]))
        fixed = not any(ch.endswith("rotation") for ch in sk.channels[c] + sk.channels[mc])
        if not (fixed or means):
            continue
        for g, mg in pairs:
            src.append(sk.offsets[c] + quat.rotate(clip.local_rot[:, c], np.broadcast_to(g, (clip.n_frames, 3))).mean(0))
            dst.append((sk.offsets[mc] + quat.rotate(clip.local_rot[:, mc],
                                                     np.broadcast_to(mg, (clip.n_frames, 3))).mean(0)) * _MIRROR_POS)
            rigid += fixed and len(src) == rigid + 1  # below a joint that cannot turn: a bone too
    return np.array(src).reshape(-1, 3), np.array(dst).reshape(-1, 3), rigid


def mirror_turns(clip, m: np.ndarray | None = None) -> np.ndarray:
    """Quaternions [J, 4]: per joint of ``clip``'s skeleton, the rotation taking its frame to its
    mirror image's, so that a mirrored pose plays on the skeleton's own offsets once each joint's
    rotation is followed by its turn (``mirror_clip``); ``m`` the joint map (``mirror_joint_map``
    unless given).

    A turn takes a joint's bones (children and end sites) to its counterpart's, reflected, exactly:
    the mirrored body keeps this skeleton's lengths, and every world position is the reflection
    wherever the two sides are the same bones in any rest orientation (CMU's T-pose, a Maya-style
    rig whose every bone lies along its local X, random rest orientations).  Two bones decide it
    (``_turn``: the hips, the chest); the root, which decides where the mirrored body faces, also
    takes the points below its children where the clip carries them (the thighs below CMU's
    zero-length hip joints), so its turn follows the frame it rests in.  About a lone bone (and at
    a joint without one) no point decides the turn; it is the one that gives the mirrored joint the
    joint's own mean rotation in its parent's frame over the clip, so that nothing depends on the
    frames the file rests its joints in: a re-rested copy mirrors to the same rotations, turned by
    its own rest turns (issue 58).  On CMU this turns a mirrored hand about its forearm, or the
    head about the neck, by up to 22 degrees against the T-pose's frames (the capture's mean pose
    is not symmetric), which no joint position shows; the shortest arc, which followed the file's
    frames, left every engine playing another run on a re-rested copy (0.5-1.5 m apart).  Applied
    twice it gives the clip back.  Elementwise arithmetic only (no LAPACK), the same bits on every
    CPU.
    """
    sk = clip.skeleton
    m = Body.of(sk).mirror if m is None else m
    mean = quat.mean(clip.local_rot, axis=0)  # [J, 4]: each joint's mean rotation in its parent's frame
    out = quat.identity((sk.n_joints,))
    for j in range(sk.n_joints):  # parents before children
        p = sk.parents[j]
        # The turn a lone bone leaves free: the one whose mirrored mean rotation is the joint's own.
        prefer = quat.mul(quat.conj(mean[m[j]] * _MIRROR_QUAT), quat.mul(out[p], mean[j]) if p >= 0 else mean[j])
        out[j] = _turn(*_below(clip, j, m, means=j == 0), prefer=quat.normalize(prefer))
    return quat.normalize(out)


def mirror_clip(clip: Clip) -> Clip:
    """The left/right mirror image of a clip (the paper's suggested reflection), on the clip's own
    skeleton.

    Joints swap with their counterparts (LeftHip <-> RightHip) and the motion is reflected through
    the world plane x = 0; each rotation is then re-expressed for the skeleton's own offsets
    (``mirror_turns``), so the mirrored clip plays on the same skeleton as every other clip whatever
    its rest pose: its world joint positions are the reflection of the original's wherever the two
    sides are the same bones (exact on CMU's T-pose and on any re-rested copy of it).  Tagged
    "mirrored"; "left"/"right" tags swap.
    """
    sk = clip.skeleton
    m = Body.of(sk).mirror
    local_rot, back = sk.turned(mirror_turns(clip, m), clip.local_rot[:, m] * _MIRROR_QUAT)
    local_pos = None
    if clip.local_pos is not None:  # translations a joint's channels carry, mirrored; the rest its own bones
        moves = sk.has_position_channels()
        local_pos = clip.local_pos.copy()
        local_pos[:, ~moves] = sk.offsets[~moves]
        local_pos[:, moves] = quat.rotate(np.broadcast_to(back[moves], (clip.n_frames, int(moves.sum()), 4)),
                                          clip.local_pos[:, m[moves]] * _MIRROR_POS)
    tags = {_SIDE_TAGS.get(t, t) for t in clip.tags} | {"mirrored"}
    ann = dict(clip.annotations)
    if "contacts" in ann:
        ann["contacts"] = ann["contacts"][:, ::-1]
    return replace(clip, name=clip.name + MIRROR_SUFFIX, root_pos=clip.root_pos * _MIRROR_POS,
                   local_rot=quat.make_continuous(quat.normalize(local_rot)), local_pos=local_pos, tags=tags,
                   annotations=ann)
