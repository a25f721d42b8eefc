"""Acclaim ASF/AMC reader: the CMU database's own format, read into the same Skeleton/Clip.

Each ASF bone becomes one joint placed at the bone's start (its parent's end), which gives the
31-joint topology of the CMU BVH conversions.  A bone's rotation honours its ``axis`` (the local
frame C, angles applied in the listed order) and its ``dof`` order: L = C · R_dof · C⁻¹, with the
first listed degree of freedom applied first.  Lengths are converted with the ASF's
``:units length`` (CMU: 1 unit = 1/0.45 inch), Y up becomes Z up as for BVH.  Every problem in
either file (a cycle in the hierarchy, a bone defined twice, a NaN length, a frame missing a
bone) is a ``MotionFileError`` naming the file and line.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

import numpy as np

from .. import quat
from ..errors import MotionFileError
from ..clip import Clip
from ..tags import apply_tags
from ..store import read_bytes
from .orient import Orientation, floor_lift, orient
from ..skeleton import Y_UP_TO_Z_UP, Skeleton

CMU_FPS = 120.0
INCH = 0.0254


@dataclass
class AsfBone:
    """One ASF bone: direction [3] (unit, file axes), length (file units), axis [3] (the bone's local frame,
    degrees or radians) applied in ``axis_order``, its dof names, and the line it was defined on."""
    name: str
    direction: np.ndarray
    length: float
    axis: np.ndarray  # degrees or radians as in the file
    axis_order: str
    dof: tuple = ()
    line: int = 0


@dataclass
class AsfSkeleton:
    """A parsed ASF file: its bones, hierarchy and the Skeleton built from them.

    ``file_skeleton`` is in the file's own axes and length units; ``skeleton`` in motionctl's
    (Z up, metres: the ASF convention is Y up, lengths in ``length_unit`` metres).
    """

    path: str
    bones: dict
    children: dict
    root_order: tuple
    root_axis_order: str
    root_position: np.ndarray
    root_orientation: np.ndarray
    length_unit: float  # metres per file length unit
    degrees: bool
    skeleton: Skeleton = field(init=False)
    file_skeleton: Skeleton = field(init=False)
    dof: dict = field(init=False)  # joint name -> dof tuple as listed in the AMC

    def __post_init__(self):
        self.file_skeleton = self._build()
        conv = Y_UP_TO_Z_UP * self.length_unit
        sk = self.file_skeleton
        self.skeleton = Skeleton(sk.names, sk.parents, sk.offsets @ conv.T, sk.channels, sk.end_parent,
                                 sk.end_offsets @ conv.T, self.length_unit)
        self.dof = {"root": tuple(o.lower() for o in self.root_order)}
        self.dof.update({b.name: b.dof for b in self.bones.values()})

    def _build(self) -> Skeleton:
        names, parents, offsets, channels, end_parent, end_offsets = ["root"], [-1], [self.root_position], [], [], []
        channels.append(("Xposition", "Yposition", "Zposition", "Zrotation", "Yrotation", "Xrotation"))
        stack = [(c, 0) for c in reversed(self.children.get("root", []))]
        while stack:
            name, parent = stack.pop()
            idx = len(names)
            names.append(name)
            parents.append(parent)
            pname = names[parent]
            offsets.append(np.zeros(3) if pname == "root" else self.bones[pname].direction * self.bones[pname].length)
            bone = self.bones[name]
            channels.append(("Zrotation", "Yrotation", "Xrotation") if bone.dof else ())
            kids = self.children.get(name, [])
            if not kids:
                end_parent.append(idx)
                end_offsets.append(bone.direction * bone.length)
            stack.extend((c, idx) for c in reversed(kids))
        return Skeleton(names, parents, np.array(offsets), channels, end_parent, np.array(end_offsets).reshape(-1, 3),
                        1.0)

    def axis_quat(self, name: str) -> np.ndarray:
        """C of a bone (or the root's orientation) in the file's Y-up frame."""
        if name == "root":
            angles, order = self.root_orientation, self.root_axis_order
        else:
            angles, order = self.bones[name].axis, self.bones[name].axis_order
        rad = np.radians(angles) if self.degrees else np.asarray(angles, dtype=float)
        # First listed axis applied first: C = R_last ... R_first.
        return quat.from_euler(rad[::-1], order[::-1])


def _asf_error(path, line, msg):
    return MotionFileError(path, msg, line)


ROOT_ORDER = ("TX", "TY", "TZ", "RX", "RY", "RZ")
BONE_DOFS = ("rx", "ry", "rz")
AXIS_ORDERS = ("XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX")
MAX_LENGTH = 1e6  # file units


def read_asf(path, unit_scale: float | None = None) -> AsfSkeleton:
    """Parse an ASF skeleton file.  ``unit_scale`` overrides metres per length unit."""
    path = os.fspath(path)
    return parse_asf(read_bytes(path), path, unit_scale)


def parse_asf(data: bytes, path: str = "<memory>", unit_scale: float | None = None) -> AsfSkeleton:
    """An ASF skeleton from a file's bytes; every problem is a MotionFileError naming the line."""
    lines = data.decode("latin-1").replace("\r", "").split("\n")
    head = {"length": 1.0, "length_line": None, "degrees": True, "order": ROOT_ORDER, "axis": "XYZ",
            "position": np.zeros(3), "orientation": np.zeros(3)}
    bones: dict[str, AsfBone] = {}
    cur, hierarchy_lines, section = None, [], None
    for n, raw in enumerate(lines, 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith(":"):
            section = line.split()[0][1:].lower()
            continue
        words = line.split()
        key = words[0].lower()
        if section in ("units", "root"):
            _header_line(path, n, section, key, words, head)
        elif section == "bonedata":
            cur = _bone_line(path, n, key, words, cur, bones)
        elif section == "hierarchy" and key not in ("begin", "end"):
            hierarchy_lines.append((n, words))
    if cur is not None:
        raise _asf_error(path, cur["line"], "bone block is not closed with 'end'")
    children = _link(path, bones, hierarchy_lines, len(lines))
    if unit_scale is not None:
        metres = float(unit_scale)
    else:
        metres = INCH / head["length"]
        if not 1e-6 <= metres <= 1e3:
            raise _asf_error(path, head["length_line"], f"length unit {head['length']:g} gives {metres:g} m per unit")
    return AsfSkeleton(path, bones, children, head["order"], head["axis"], head["position"], head["orientation"],
                       metres, head["degrees"])


def _header_line(path, n, section, key, words, head) -> None:
    """A line of the :units or :root section, into ``head``."""
    if section == "units":
        if key == "length":
            head["length"] = float(_floats(path, n, words[1:2], 1, "length unit")[0])
            head["length_line"] = n
            if not head["length"] > 0:
                raise _asf_error(path, n, f"length unit must be positive, got {head['length']:g}")
        elif key == "angle":
            head["degrees"] = len(words) < 2 or words[1].lower().startswith("deg")
    elif key == "order":
        head["order"] = tuple(w.upper() for w in words[1:])
        if sorted(head["order"]) != sorted(ROOT_ORDER):
            raise _asf_error(path, n, f"root order must list each of {' '.join(ROOT_ORDER)} once")
    elif key == "axis":
        head["axis"] = _axis_order(path, n, words[1] if len(words) > 1 else "")
    elif key in ("position", "orientation"):
        head[key] = _floats(path, n, words[1:4], 3, f"root {key}")


def _bone_line(path, n, key, words, cur, bones):
    """A line of the :bonedata section; returns the bone block being read (None once closed)."""
    if key == "begin":
        if cur is not None:
            raise _asf_error(path, n, f"'begin' inside the bone block opened at line {cur['line']}")
        return {"line": n, "dof": ()}
    if key == "end":
        if cur is None or "name" not in cur:
            raise _asf_error(path, n, "bone block without a name")
        for need in ("direction", "length", "axis"):
            if need not in cur:
                raise _asf_error(path, cur["line"], f"bone {cur['name']!r} has no {need}")
        if cur["name"] in bones or cur["name"] == "root":
            first = bones[cur["name"]].line if cur["name"] in bones else "the root section"
            raise _asf_error(path, cur["line"], f"bone {cur['name']!r} is defined twice (also at line {first})")
        bones[cur["name"]] = AsfBone(cur["name"], cur["direction"], cur["length"], cur["axis"], cur["axis_order"],
                                     cur["dof"], cur["line"])
        return None
    if cur is None:
        return None
    if key == "name":
        if len(words) < 2:
            raise _asf_error(path, n, "bone name missing")
        cur["name"] = words[1]
    elif key == "direction":
        cur["direction"] = _floats(path, n, words[1:4], 3, "direction")
    elif key == "length":
        cur["length"] = float(_floats(path, n, words[1:2], 1, "length")[0])
        if cur["length"] < 0:
            raise _asf_error(path, n, f"bone length must not be negative, got {cur['length']:g}")
    elif key == "axis":
        cur["axis"] = _floats(path, n, words[1:4], 3, "axis")
        cur["axis_order"] = _axis_order(path, n, words[4] if len(words) > 4 else "XYZ")
    elif key == "dof":
        dof = tuple(w.lower() for w in words[1:])
        bad = [d for d in dof if d not in BONE_DOFS]
        if bad:
            raise _asf_error(path, n, f"dof {bad[0]!r} is not supported (bones rotate: rx ry rz)")
        if len(set(dof)) != len(dof):
            raise _asf_error(path, n, "a dof is listed twice")
        cur["dof"] = dof
    return cur


def _link(path, bones: dict, hierarchy_lines: list, n_lines: int) -> dict:
    """{parent: [children]} from the :hierarchy lines; a bone with two parents, a name that is not
    a bone, or a bone not connected to the root (a cycle) is an error naming the line."""
    children: dict[str, list] = {}
    parent_line: dict[str, int] = {}
    for n, words in hierarchy_lines:
        parent = words[0]
        if parent != "root" and parent not in bones:
            raise _asf_error(path, n, f"hierarchy names unknown bone {parent!r}")
        for c in words[1:]:
            if c not in bones:
                raise _asf_error(path, n, f"hierarchy names unknown bone {c!r}")
            if c in parent_line:
                raise _asf_error(path, n, f"bone {c!r} is given a second parent (first at line {parent_line[c]})")
            parent_line[c] = n
        children.setdefault(parent, []).extend(words[1:])
    if not children.get("root"):
        raise _asf_error(path, n_lines, "no :hierarchy below 'root'")
    # Every bone has at most one parent, so walking down from the root visits each once; bones
    # never reached sit on a cycle or hang below one.
    reached, stack = set(), ["root"]
    while stack:
        b = stack.pop()
        reached.add(b)
        stack.extend(children.get(b, []))
    missing = [b for b in bones if b not in reached]
    if missing:
        b = missing[0]
        where = f"line {parent_line[b]}" if b in parent_line else "the hierarchy"
        raise _asf_error(path, parent_line.get(b, bones[b].line),
                         f"bone {b!r} is not connected to the root (a cycle, or missing from {where})")
    return children


def _axis_order(path, line, word):
    order = word.upper()
    if order not in AXIS_ORDERS:
        raise _asf_error(path, line, f"axis order must be one of {', '.join(AXIS_ORDERS)}, got {word!r}")
    return order


def _floats(path, line, words, count, what):
    if len(words) < count:
        raise _asf_error(path, line, f"{what} needs {count} numbers")
    try:
        values = np.array([float(w) for w in words[:count]])
    except ValueError:
        raise _asf_error(path, line, f"non-numeric {what}: {' '.join(words[:count])[:60]!r}") from None
    if not np.all(np.abs(values) <= MAX_LENGTH):
        raise _asf_error(path, line, f"{what} is not a finite number in range: {' '.join(words[:count])[:60]!r}")
    return values


_INT = re.compile(rb"^\s*(\d+)\s*$")


def read_amc_oriented(path, asf: AsfSkeleton, fps: float = CMU_FPS, tags: bool = True, axis_up: str | None = "Y",
                      axis_forward: str | None = None, floor: str = "keep") -> tuple[Clip, Orientation]:
    """Read an AMC motion on its subject's ASF skeleton (frames numbered from 1), in the ASF's
    length unit; ``axis_up`` is the ASF convention (Y) unless given, or None to detect it."""
    path = os.fspath(path)
    data = read_bytes(path)
    return parse_amc(data, path, asf, fps, tags, axis_up, axis_forward, floor)


def read_amc(path, asf: AsfSkeleton, fps: float = CMU_FPS, tags: bool = True, axis_up: str | None = "Y",
             axis_forward: str | None = None, floor: str = "keep") -> Clip:
    """Read an AMC motion (see ``read_amc_oriented``)."""
    return read_amc_oriented(path, asf, fps, tags, axis_up, axis_forward, floor)[0]


def parse_amc(data: bytes, path: str, asf: AsfSkeleton, fps: float = CMU_FPS, tags: bool = True,
              axis_up: str | None = "Y", axis_forward: str | None = None, floor: str = "keep"):
    """(Clip, Orientation) of an AMC file's bytes on ``asf``; errors name the file and line."""
    if not (np.isfinite(fps) and 0.1 <= fps <= 10000):
        raise MotionFileError(path, f"frame rate {fps:g} is not between 0.1 and 10000 fps")
    values, order = _parse_amc(data, path, asf)
    sk_file, root_pos, local_rot = _amc_motion(values, order, asf)
    try:
        sk, root_pos, local_rot, _, info = orient(sk_file, root_pos, local_rot, None, asf.length_unit, axis_up,
                                                  axis_forward or ("-Z" if axis_up == "Y" else None))
        info.floor = floor_lift(sk, root_pos, local_rot, None, floor)
    except ValueError as exc:
        raise MotionFileError(path, str(exc)) from None
    root_pos[:, 2] += info.floor
    if floor == "auto":
        info.detected.add("floor")
    clip = Clip(os.path.splitext(os.path.basename(path))[0], sk, fps, root_pos, local_rot, None, source=path)
    return (apply_tags(clip, path) if tags else clip), info


def _parse_amc(data: bytes, path: str, asf: AsfSkeleton):
    """Frame values [F, V] and the bone layout [(name, n_values)] shared by every frame."""
    data = data.replace(b"\r", b"")
    lines = data.split(b"\n")
    # Header: comments and ':' keywords before the first frame number.
    first = next((i for i, ln in enumerate(lines) if _INT.match(ln)), None)
    if first is None:
        raise MotionFileError(path, "no frames (expected a frame number line)", len(lines))
    degrees = not any(ln.strip().upper() == b":RADIANS" for ln in lines[:first])
    layout = []
    i = first + 1
    while i < len(lines) and lines[i].strip() and not _INT.match(lines[i]):
        words = lines[i].split()
        layout.append((words[0].decode("latin-1"), len(words) - 1, i + 1))
        i += 1
    seen = {}
    for name, count, line in layout:
        if name in seen:
            raise MotionFileError(path, f"bone {name!r} is listed twice in frame 1 (also at line {seen[name]})", line)
        seen[name] = line
        if name not in asf.dof:
            raise MotionFileError(path, f"unknown bone {name!r} (not in {os.path.basename(asf.path)})", line)
        if count != len(asf.dof[name]):
            raise MotionFileError(path, f"bone {name!r} has {count} values, its dof lists {len(asf.dof[name])}", line)
    listed = {n for n, _, _ in layout}
    missing = [b for b, d in asf.dof.items() if d and b not in listed]
    if missing:
        raise MotionFileError(path, f"frame 1 is missing bone {missing[0]!r}", first + 1)
    per_frame = 1 + sum(1 + c for _, c, _ in layout)
    tokens = np.array(b"\n".join(lines[first:]).split())
    n_frames = len(tokens) // per_frame
    ok = n_frames > 0 and len(tokens) == n_frames * per_frame
    if ok:
        grid = tokens.reshape(n_frames, per_frame)
        name_cols = np.cumsum([1] + [1 + c for _, c, _ in layout])[:-1]
        expected = np.array([n.encode("latin-1") for n, _, _ in layout])
        ok = bool(np.all(grid[:, name_cols] == expected))
        if ok:
            try:
                numbers = grid[:, 0].astype(np.int64)
                ok = bool(np.all(numbers == np.arange(numbers[0], numbers[0] + n_frames)))
                value_cols = np.setdiff1d(np.arange(1, per_frame), name_cols)
                values = grid[:, value_cols].astype(np.float64)
            except (ValueError, OverflowError):
                ok = False
    if not ok:
        _locate_amc_error(lines, first, layout, path)
        raise MotionFileError(path, "frames do not all list the same bones", first + 1)
    bad = np.argwhere(~(np.abs(values) <= MAX_LENGTH))
    if len(bad):
        f, k = (int(v) for v in bad[0])
        col = np.cumsum([0] + [c for _, c, _ in layout])
        b = int(np.searchsorted(col, k, side="right") - 1)
        raise MotionFileError(path, f"frame {f + 1}: bone {layout[b][0]!r} has a value that is not a finite number in "
                              f"range ({values[f, k]:g})", first + 1 + f * (len(layout) + 1) + b + 1)
    if not degrees:
        values = np.degrees(values)
    return values, [(n, c) for n, c, _ in layout]


def _locate_amc_error(lines, first, layout, path):
    """Walk the lines (error path only) and raise at the first one that breaks the layout."""
    expect_frame = None
    k = len(layout)
    for i in range(first, len(lines)):
        words = lines[i].split()
        if not words:
            continue
        if _INT.match(lines[i]):
            num = int(words[0])
            if k != len(layout):
                raise MotionFileError(path, f"frame {expect_frame - 1} is missing bone {layout[k][0]!r}", i + 1)
            if expect_frame is not None and num != expect_frame:
                raise MotionFileError(path, f"missing frame: expected frame {expect_frame}, found {num}", i + 1)
            expect_frame, k = num + 1, 0
            continue
        name = words[0].decode("latin-1")
        if k >= len(layout):
            raise MotionFileError(path, f"unexpected line {name!r} after all bones of frame {expect_frame - 1}", i + 1)
        if name != layout[k][0]:
            known = {n for n, _, _ in layout}
            if name not in known:
                raise MotionFileError(path, f"unknown bone {name!r}", i + 1)
            raise MotionFileError(path, f"frame {expect_frame - 1} is missing bone {layout[k][0]!r}", i + 1)
        if len(words) - 1 != layout[k][1]:
            raise MotionFileError(path, f"bone {name!r} has {len(words) - 1} values, expected {layout[k][1]}", i + 1)
        for w in words[1:]:
            try:
                float(w)
            except ValueError:
                raise MotionFileError(path, f"non-numeric value {w.decode('latin-1')!r}", i + 1) from None
        k += 1
    if k != len(layout):
        raise MotionFileError(path, f"truncated: last frame is missing bone {layout[k][0]!r}", len(lines))


def _amc_motion(values: np.ndarray, order, asf: AsfSkeleton):
    """(file skeleton, root positions [F, 3], local rotations [F, J, 4]) in the file's axes and units."""
    sk = asf.file_skeleton
    n_frames = len(values)
    local_rot = quat.identity((n_frames, sk.n_joints))
    root_pos = np.broadcast_to(asf.root_position, (n_frames, 3)).copy()
    col = 0
    for name, count in order:
        vals = values[:, col:col + count]
        col += count
        j = sk.index(name)
        dof = asf.dof[name]
        rot_idx = [k for k, d in enumerate(dof) if d.startswith("r")]
        for k, d in enumerate(dof):
            if d.startswith("t"):
                root_pos[:, "xyz".index(d[1])] = vals[:, k]
        if not rot_idx:
            continue
        axes = "".join(dof[k][1].upper() for k in rot_idx)
        rad = np.radians(vals[:, rot_idx])
        m = quat.from_euler(rad[:, ::-1], axes[::-1])  # first listed dof applied first
        c = asf.axis_quat(name)
        local_rot[:, j] = quat.mul(quat.mul(c, m), quat.conj(c))
    return sk, root_pos, local_rot


def find_asf_for(amc_path: str) -> str | None:
    """The subject's ASF for ``SS_TT.amc``: ``SS.asf`` beside it, else the only ASF there."""
    folder = os.path.dirname(os.path.abspath(amc_path))
    stem = os.path.splitext(os.path.basename(amc_path))[0]
    subject = stem.split("_")[0]
    cand = os.path.join(folder, subject + ".asf")
    if os.path.exists(cand):
        return cand
    try:
        asfs = [f for f in os.listdir(folder) if f.lower().endswith(".asf")]
    except OSError:
        return None
    return os.path.join(folder, asfs[0]) if len(asfs) == 1 else None
