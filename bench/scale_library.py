"""A library of any length made from the real capture, for scale measurements (issue 17).

    .venv/bin/python bench/scale_library.py [--minutes 60] [--mocap DIR]

Prints the composition of the library it would build.  ``library(minutes)`` returns the clips.

Everything comes from ../shared/mocap (never copied, never committed):
- the 31-joint CMU clips (ASF/AMC and the cmu31 BVH conversions, one skeleton group);
- the Character Creator clips (cc_base, a 100-bone skeleton), put on the CMU skeleton with
  motionctl's own retargeting (``motionctl.retarget``), so every clip shares one skeleton;
- when more is asked than the real ~11 minutes: mirrored copies, then copies time-warped by
  0.8x-1.25x (played slower or faster, resampled), each also given other bone lengths (legs,
  arms and spine scaled by 0.85-1.15, root motion by the legs' scale), cycling through the real
  clips in a fixed shuffled order until the length is reached.  Shorter libraries take whole real
  clips in that order.

DERIVED DATA: mirrored, warped and re-proportioned copies are not new motion.  The library is
for measuring time and memory at scale, never for quality claims.
"""

from __future__ import annotations

import argparse
from dataclasses import replace

import numpy as np

from harness import ROOT, add_mocap, default_mocap  # noqa: E402,F401  (first: the checkout on the path)

from motionctl import retarget as rt  # noqa: E402
from motionctl import quat  # noqa: E402
from motionctl.body import mirror_clip  # noqa: E402
from motionctl.clip import Clip, resample  # noqa: E402
from motionctl.io.library import import_library  # noqa: E402

DERIVED_NOTE = ("derived data: real CMU capture plus mirrored, time-warped (0.8x-1.25x) and re-proportioned copies "
                "of it, for measuring time and memory at scale, not for quality claims")
WARPS = (0.8, 1.25, 0.9, 1.1, 0.85, 1.2)


def real_clips(mocap: str | None = None, fps: float = 60.0) -> tuple[list, dict]:
    """Every real clip on the 31-joint CMU skeleton at ``fps``: the CMU group as read, the CC clips
    retargeted onto its first clip's skeleton.  Returns (clips, {source: minutes})."""
    mocap = mocap or default_mocap()
    groups = import_library([mocap]).groups
    cmu = max(groups, key=lambda g: len(g.database.clips) if g.database.skeleton.n_joints == 31 else -1)
    clips = [resample(c, fps) for c in cmu.database.clips]
    target_sk = clips[0].skeleton
    target = rt.Rig.from_skeleton(target_sk, "cmu")
    t_roles = rt.find_roles(target)
    out = {"CMU 31-joint (ASF/AMC and BVH)": sum(c.duration for c in clips) / 60.0, "Character Creator, retargeted": 0}
    for g in groups:
        if g is cmu:
            continue
        src = rt.Rig.from_skeleton(g.database.skeleton, "cc")
        mapping = rt.auto_map(src, target)
        for c in g.database.clips:
            clips.append(on_skeleton(resample(c, fps), src, target, target_sk, mapping, t_roles))
            out["Character Creator, retargeted"] += clips[-1].duration / 60.0
    return clips, out


def on_skeleton(clip: Clip, source, target, skeleton, mapping, t_roles) -> Clip:
    """``clip`` retargeted onto ``skeleton`` (target is its rest rig): root motion on the hips."""
    r = rt.retarget(clip, source, target, mapping, rt.RetargetSettings(root_motion="OBJECT", floor=True),
                    target_roles=t_roles)
    n = clip.n_frames
    local = np.tile(quat.identity(), (n, skeleton.n_joints, 1))
    idx = [skeleton.index(b) for b in r.bones]
    local[:, idx] = r.rotation
    root = 0
    local[:, root] = quat.mul(r.object_rot, local[:, root])
    return Clip(clip.name + "_on_cmu", skeleton, clip.fps, r.world[:, root].copy(), quat.normalize(local),
                tags=set(clip.tags), source=clip.source)


def warped(clip: Clip, speed: float) -> Clip:
    """``clip`` played ``speed`` times as fast, resampled back to its own rate."""
    c = resample(replace(clip, fps=clip.fps * speed, annotations={}), clip.fps)
    return replace(c, name=f"{clip.name}_x{speed:g}")


def proportioned(clip: Clip, rng) -> Clip:
    """``clip`` on a body with other bone lengths: legs, arms and spine each scaled by 0.85-1.15
    (left and right alike), the root's motion by the legs' scale."""
    sk = clip.skeleton
    names = [n.lower() for n in sk.names]
    part = np.zeros(sk.n_joints, dtype=int)  # 0 spine/head, 1 legs, 2 arms
    for j, n in enumerate(names):
        if any(k in n for k in ("femur", "tibia", "foot", "toe", "hip", "knee", "ankle", "upleg", "leg")):
            part[j] = 1
        elif any(k in n for k in ("clavicle", "humerus", "radius", "wrist", "hand", "finger", "thumb", "shoulder",
                                  "collar", "elbow", "arm")):
            part[j] = 2
    scale = rng.uniform(0.85, 1.15, 3)
    sk2 = sk.with_offsets(sk.offsets * scale[part][:, None], sk.end_offsets * scale[part[sk.end_parent]][:, None])
    return replace(clip, name=f"{clip.name}_b{scale[1]:.2f}", skeleton=sk2, root_pos=clip.root_pos * scale[1],
                   annotations={})


def library(minutes: float, mocap: str | None = None, seed: int = 0, fps: float = 60.0) -> tuple[list, dict]:
    """About ``minutes`` of clips (see the module docstring) and its composition {kind: minutes}."""
    real, sources = real_clips(mocap, fps)
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(real))
    total_real = sum(c.duration for c in real) / 60.0
    comp = {"real": 0.0, "mirrored": 0.0, "time-warped and re-proportioned": 0.0}
    out, have = [], 0.0
    target = minutes * 60.0
    if minutes <= total_real:
        for i in order:
            if have >= target - 1e-6:
                break
            out.append(real[i])
            have += real[i].duration
        comp["real"] = have / 60.0
        return out, {"sources": sources, "composition": comp, "clips": len(out), "minutes": have / 60.0}
    out = list(real)
    have = total_real * 60.0
    comp["real"] = total_real
    for i in order:
        if have >= target:
            break
        out.append(mirror_clip(real[i]))
        have += out[-1].duration
        comp["mirrored"] += out[-1].duration / 60.0
    k = 0
    while have < target:
        i = order[k % len(order)]
        base = real[i] if (k // len(order)) % 2 == 0 else mirror_clip(real[i])
        c = proportioned(warped(base, WARPS[(k + k // len(order)) % len(WARPS)]), rng)
        out.append(c)
        have += c.duration
        comp["time-warped and re-proportioned"] += c.duration / 60.0
        k += 1
    return out, {"sources": sources, "composition": comp, "clips": len(out), "minutes": have / 60.0}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--minutes", type=float, default=60.0)
    add_mocap(ap)
    args = ap.parse_args()
    clips, info = library(args.minutes, args.mocap)
    print(f"{info['minutes']:.1f} min in {info['clips']} clips ({DERIVED_NOTE})")
    for k, v in info["sources"].items():
        print(f"  real source: {k}: {v:.2f} min")
    for k, v in info["composition"].items():
        print(f"  {k}: {v:.2f} min")


if __name__ == "__main__":
    main()
