"""Left and right: which joint mirrors which, and the mirror image of a clip (paper 000's suggested
reflection, used by every engine that mirrors its clips)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..clip import Clip
from ..skeleton import Skeleton
from .roles import mirror_joint_map

MIRROR_SUFFIX = "_mirror"  # a mirrored clip's name: its own plus this (the one place that knows)


def mirror_source(name: str) -> tuple[str, bool]:
    """(the library clip's name, mirrored?) of a working clip's ``name`` (see ``mirror_clip``)."""
    return (name[: -len(MIRROR_SUFFIX)], True) if name.endswith(MIRROR_SUFFIX) else (name, False)


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
    return replace(clip, name=clip.name + MIRROR_SUFFIX, skeleton=msk, root_pos=clip.root_pos * _MIRROR_POS,
                   local_rot=local_rot, local_pos=local_pos, tags=tags, annotations=ann)
