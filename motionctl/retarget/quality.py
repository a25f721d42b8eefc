"""How good a retarget is: the figures the Retarget panel and the benchmark report."""

from __future__ import annotations

import numpy as np

from dataclasses import replace

from ..body.contacts import ContactSettings, foot_points, points_skating
from ..body.roles import SIDES, find_roles
from .contacts import leg_length
from .mapping import Rig
from .solve import Retargeted

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
    skating, sliding_cm  ``points_skating`` of the target's feet (ankles and toes); ``skating_scaled``
                  with the thresholds scaled too (a foot the source slid at 0.5 m/s slides at
                  0.5 * scale); the source's, seen by the same points
    """

    world = result.world if world is None else world
    pos_s = clip.world()[0] - result.start  # where the retarget put the capture's origin
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
    toes = [rt.get(f"toe.{side}", rt[f"foot.{side}"]) for side in "LR"]
    pts = np.stack((ank, world[:, toes]), axis=2)  # [F, 2, 2, 3]
    sk_t = points_skating(pts, clip.fps)
    c = ContactSettings()
    scaled = replace(c, **{k: getattr(c, k) * result.scale for k in ("height_on", "height_off", "speed_on", "speed_max",
                                                                    "skate_speed")})
    sk_s = points_skating(foot_points(clip)[:, :, :2], clip.fps)  # the same points as the target's: ankle, toe
    out.update(skating=sk_t["skating"], sliding_cm=sk_t["sliding_cm"],
               skating_scaled=points_skating(pts, clip.fps, scaled)["skating"],
               source_skating=sk_s["skating"], source_sliding_cm=sk_s["sliding_cm"])
    return out
