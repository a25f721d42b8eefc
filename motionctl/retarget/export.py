"""Getting a bake into a game engine: the three export presets (Unreal, Unity, Godot) as data, the
checks a rig must pass before one is used, and the round-trip figures that say whether what came
back out of the file is what the animator saw.  Blender's own exporters do the writing
(``operators/export.py``); nothing here touches a file format.

Decisions (the issue left them open):
- Unreal: FBX in centimetres with no scale anywhere in the file (UnitScaleFactor 1, the armature
  node unscaled, bone data in cm) and the armature node named ``Armature``, which Unreal's FBX
  importer drops instead of making it an extra root bone; root motion must be on a ``root`` bone
  (Unreal reads root motion only from the skeleton's root bone); no leaf (``_end``) bones.
- Unity: FBX in metres (UnitScaleFactor 100, data in m, the armature node unscaled), no leaf bones,
  the humanoid bones Unity's Avatar needs found and chained hips -> spine -> head and hips -> legs.
- Godot: glTF 2.0 binary (.glb), metres, Y up (the format's own convention); no leaf bones.
- Each take (an action, or an NLA strip) is its own animation named after it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import quat
from ..body.contacts import points_skating
from ..errors import MotionctlError
from ..rootframe import wrap


@dataclass(frozen=True)
class ExportPreset:
    """How one game engine wants a rig and its takes: the file ``format`` ("FBX" or "GLB") and
    extension, the length ``unit`` the file's numbers are in (world metres times ``unit_scale``),
    whether root motion must ride a bone named ``root_bone``, and which checks of the rig apply."""

    name: str
    label: str
    format: str
    ext: str
    unit_scale: float
    description: str
    root_bone: str = ""
    armature_node: str = ""
    humanoid: bool = False


PRESETS = {
    "UNREAL": ExportPreset("UNREAL", "Unreal Engine", "FBX", ".fbx", 100.0,
                           "FBX in centimetres, root motion on the 'root' bone, no extra bones", root_bone="root",
                           armature_node="Armature"),
    "UNITY": ExportPreset("UNITY", "Unity", "FBX", ".fbx", 1.0, "FBX in metres, a humanoid-compatible hierarchy",
                          humanoid=True),
    "GODOT": ExportPreset("GODOT", "Godot", "GLB", ".glb", 1.0, "glTF 2.0 binary (.glb), metres"),
}

# The UE5 mannequin's body bones (SK_Mannequin, without fingers, twist and IK bones): a rig named
# like it maps onto the mannequin's skeleton with no bone left over.
UE5_BODY = ("root", "pelvis", "spine_01", "spine_02", "spine_03", "spine_04", "spine_05", "neck_01", "head") + tuple(
    f"{b}_{s}" for s in "lr" for b in ("clavicle", "upperarm", "lowerarm", "hand", "thigh", "calf", "foot", "ball"))
UE5_PARENTS = {"pelvis": "root", "spine_01": "pelvis", "spine_02": "spine_01", "spine_03": "spine_02",
               "spine_04": "spine_03", "spine_05": "spine_04", "neck_01": "spine_05", "head": "neck_01",
               **{f"{b}_{s}": p.format(s=s) for s in "lr" for b, p in (
                   ("clavicle", "spine_05"), ("upperarm", "clavicle_{s}"), ("lowerarm", "upperarm_{s}"),
                   ("hand", "lowerarm_{s}"), ("thigh", "pelvis"), ("calf", "thigh_{s}"), ("foot", "calf_{s}"),
                   ("ball", "foot_{s}"))}}
# What Unity's humanoid Avatar cannot do without (its 15 required bones, by our body roles).
HUMANOID_ROLES = ("hips", "spine", "head") + tuple(f"{r}.{s}" for s in "LR" for r in (
    "upper_arm", "forearm", "hand", "thigh", "shin", "foot"))


def preset(name: str) -> ExportPreset:
    try:
        return PRESETS[name.upper()]
    except KeyError:
        raise MotionctlError(f"no export preset {name!r}: choose one of {', '.join(p.lower() for p in PRESETS)}") \
            from None


def rig_problems(p: ExportPreset, names: list, parents, roles: dict) -> list:
    """Why a rig (bone ``names``, ``parents`` indices, body ``roles`` {role: index}) cannot go out
    with preset ``p``, one sentence each (empty: it can)."""
    out = []
    parents = np.asarray(parents)
    if p.root_bone:
        tops = [names[b] for b in np.flatnonzero(parents < 0)]
        if tops != [p.root_bone]:
            out.append(f"{p.label} reads root motion from one top bone named {p.root_bone!r}; this rig's top bones are "
                       f"{', '.join(tops)} (bake with Root Motion 'Root Bone')")
    if p.humanoid:
        missing = [r for r in HUMANOID_ROLES if r not in roles]
        if missing:
            out.append(f"{p.label}'s humanoid Avatar needs bones for {', '.join(missing)}")
        else:
            def above(b, a):
                while b >= 0:
                    if b == a:
                        return True
                    b = int(parents[b])
                return False
            chains = [("hips", "spine"), ("spine", "head")] + [(a, b) for s in "LR" for a, b in (
                ("hips", f"thigh.{s}"), (f"thigh.{s}", f"shin.{s}"), (f"shin.{s}", f"foot.{s}"),
                ("spine", f"upper_arm.{s}"), (f"upper_arm.{s}", f"forearm.{s}"), (f"forearm.{s}", f"hand.{s}"))]
            broken = [f"{names[roles[b]]} is not below {names[roles[a]]}" for a, b in chains
                      if not above(roles[b], roles[a])]
            if broken:
                out.append(f"{p.label}'s humanoid Avatar needs the body's chain: " + "; ".join(broken))
    return out


def extra_bones(names) -> list:
    """Bones of an exported rig that the UE5 mannequin's skeleton does not have (empty for a rig
    named like it)."""
    return [n for n in names if n not in UE5_BODY]


def glb_animation_names(path: str) -> list:
    """The animation names a glTF 2.0 binary file holds (its JSON chunk), as Godot lists them.  The
    read-back check of an export: anything that is not a .glb with a JSON chunk of animations, each
    named by a string, is one MotionFileError naming the file (a damaged JSON chunk escaped as a
    UnicodeDecodeError or JSONDecodeError)."""
    import struct

    from ..errors import MotionFileError
    from ..store import parse_json, read_bytes

    data = read_bytes(path)
    if len(data) < 20 or data[:4] != b"glTF":
        raise MotionFileError(path, "not a glTF binary (.glb) file")
    length, kind = struct.unpack("<II", data[12:20])
    if kind != 0x4E4F534A:  # "JSON"
        raise MotionFileError(path, "a .glb whose first chunk is not JSON")
    if length > len(data) - 20:
        raise MotionFileError(path, f"its JSON chunk says {length:,} bytes where the file holds {len(data) - 20:,}")
    try:
        text = data[20:20 + length].decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MotionFileError(path, f"its JSON chunk is not UTF-8 text (byte {exc.start})") from None
    doc = parse_json(text, path)
    animations = doc.get("animations", []) if isinstance(doc, dict) else None
    if not isinstance(animations, list) or not all(isinstance(a, dict) and isinstance(a.get("name", ""), str)
                                                   for a in animations):
        raise MotionFileError(path, "its JSON chunk is not a glTF document with a list of named animations")
    return [a.get("name", "") for a in animations]


# --------------------------------------------------------------------------- round-trip figures

def heading(rot: np.ndarray) -> np.ndarray:
    """[F] yaw (radians about +Z) of world rotation deltas ``rot`` [F, 4] (pose from rest, so the
    bone's own axes and roll do not matter): the heading of +Y turned by them, unwrapped."""
    return np.unwrap(quat.yaw_about_z(rot, np.array([0.0, 1.0, 0.0])))


def root_errors(pos_a, rot_a, pos_b, rot_b) -> dict:
    """How far the root bone of one evaluation (``pos_a`` [F, 3] world head in metres, ``rot_a``
    [F, 4] world delta from rest) is from another's, per frame: displacement from the first frame
    (cm) and yaw (degrees); p95 and max."""
    da = np.asarray(pos_a) - pos_a[0]
    db = np.asarray(pos_b) - pos_b[0]
    cm = 100.0 * np.linalg.norm(da - db, axis=1)
    ya, yb = heading(rot_a), heading(rot_b)
    deg = np.degrees(np.abs(wrap((ya - ya[0]) - (yb - yb[0]))))
    return {"root_cm_p95": float(np.percentile(cm, 95)), "root_cm_max": float(cm.max()),
            "yaw_deg_p95": float(np.percentile(deg, 95)), "yaw_deg_max": float(deg.max()),
            "travel_m": float(np.linalg.norm(da[-1, :2]))}


def feet_skating(points, fps: float) -> float:
    """The scoreboard's skating (``body.contacts.points_skating``: share of contact frames a
    planted foot slides) of foot points [F, 2, P, 3] (world metres)."""
    return float(points_skating(np.asarray(points, dtype=float), fps)["skating"])


def round_trip(before: dict, after: dict, fps: float) -> dict:
    """The figures of one export read back: each of ``before`` / ``after`` is {"bones": [names],
    "takes": {name: {"frames": (first, last), "root_pos", "root_rot", "feet"}}} (``feet`` [F, 2, P, 3]).
    Root and yaw errors are the worst take's; skating is over every take together."""
    names_equal = sorted(before["takes"]) == sorted(after["takes"])
    rows = {"names_equal": names_equal, "bones_equal": sorted(before["bones"]) == sorted(after["bones"]),
            "bones_added": sorted(set(after["bones"]) - set(before["bones"])),
            "bones_lost": sorted(set(before["bones"]) - set(after["bones"]))}
    common = [t for t in before["takes"] if t in after["takes"]]
    rows["frames_equal"] = names_equal and all(
        tuple(before["takes"][t]["frames"]) == tuple(after["takes"][t]["frames"]) for t in common)
    errs = [root_errors(before["takes"][t]["root_pos"], before["takes"][t]["root_rot"],
                        after["takes"][t]["root_pos"], after["takes"][t]["root_rot"]) for t in common
            if len(before["takes"][t]["root_pos"]) == len(after["takes"][t]["root_pos"])]
    for k in ("root_cm_p95", "root_cm_max", "yaw_deg_p95", "yaw_deg_max"):
        rows[k] = max((e[k] for e in errs), default=float("inf"))
    rows["travel_m"] = min((e["travel_m"] for e in errs), default=0.0)
    for key, side in (("skating_before", before), ("skating", after)):
        pts = [side["takes"][t]["feet"] for t in common]
        rows[key] = float(points_skating([np.asarray(p, dtype=float) for p in pts], fps)["skating"]) if pts else None
    return rows
