"""Import files and folders of capture into one MotionDatabase per skeleton.

Real folders mix skeletons.  Clips are grouped by topology after three normalisations that keep
every joint's world position: known naming conventions of the same rig are renamed to one
(CMU's ASF names, its 3ds Max-friendly and MotionBuilder-friendly BVH releases); an extra root
that only carries the translation above the group's root is folded into it; and rest poses that
differ (arms down versus T-pose) are retargeted onto the group's rest pose, keeping each clip's
own bone lengths.  Files that cannot be read are listed with the reason: none is dropped silently.
"""

from __future__ import annotations

import os
import stat
from collections import Counter
from dataclasses import dataclass, field, replace

import numpy as np

from . import quat
from .asfamc import AsfSkeleton, find_asf_for, read_amc_oriented, read_asf
from .bvh import read_bvh_oriented
from .errors import MotionFileError
from .jobs import check_stop
from .body import detect_calibration_frames
from .clip import Clip, MotionDatabase, resample
from .orient import FLOOR_MODES, Orientation, floor_lift, level_floor
from .skeleton import AXES, Skeleton, forward_kinematics

MOTION_EXTENSIONS = (".bvh", ".amc")
# Rest poses whose bone directions differ by more than this are reported as another rest pose
# (arms down vs T-pose); CMU subjects' own ASF directions differ by up to 13 degrees.
RETARGET_DEGREES = 30.0

# The CMU 31-joint rig under its three names, in the same joint order (SOURCES.md name map).
CMU_ASF = (
    "root lhipjoint lfemur ltibia lfoot ltoes rhipjoint rfemur rtibia rfoot rtoes lowerback upperback thorax "
    "lowerneck upperneck head lclavicle lhumerus lradius lwrist lhand lfingers lthumb rclavicle rhumerus "
    "rradius rwrist rhand rfingers rthumb"
).split()
CMU_MAX = (
    "Hips LHipJoint LeftHip LeftKnee LeftAnkle LeftToe RHipJoint RightHip RightKnee RightAnkle RightToe lowerback "
    "Chest Chest2 lowerneck Neck Head LeftCollar LeftShoulder LeftElbow LeftWrist lhand LFingers LThumb RightCollar "
    "RightShoulder RightElbow RightWrist rhand RFingers RThumb"
).split()
CMU_MB = (
    "Hips LHipJoint LeftUpLeg LeftLeg LeftFoot LeftToeBase RHipJoint RightUpLeg RightLeg RightFoot RightToeBase "
    "LowerBack Spine Spine1 Neck Neck1 Head LeftShoulder LeftArm LeftForeArm LeftHand LeftFingerBase "
    "LeftHandIndex1 LThumb RightShoulder RightArm RightForeArm RightHand RightFingerBase RightHandIndex1 RThumb"
).split()
NAMING_CONVENTIONS = {
    "CMU ASF": dict(zip(CMU_ASF, CMU_ASF)),
    "CMU 3ds Max BVH": dict(zip(CMU_MAX, CMU_ASF)),
    "CMU MotionBuilder BVH": dict(zip(CMU_MB, CMU_ASF)),
}


@dataclass
class ImportSettings:
    """How files become clips.  None means "decide from the motion" (``motionctl.orient``).

    unit_scale        metres per file unit; None: ASF files use their own units, BVH files the
                      unit that makes the body human-sized
    axis_up           the file's up axis ("Y", "-Z", ...); None: detected (ASF: its convention, Y)
    axis_forward      the file's forward axis, with ``axis_up`` (default: paired with up)
    floor             "auto": stance feet on z = 0; "keep": the file's floor; "lowest": the
                      lowest point of the clip on z = 0
    keep_calibration  keep leading calibration frames (T-pose) instead of trimming them
    amc_fps           frame rate of AMC files (not stored in them; CMU's is 120)
    """

    unit_scale: float | None = None
    axis_up: str | None = None
    axis_forward: str | None = None
    floor: str = "auto"
    keep_calibration: bool = False
    amc_fps: float = 120.0

    def validate(self) -> None:
        """Raise ValueError naming the setting that is out of range."""
        if self.unit_scale is not None and not (np.isfinite(self.unit_scale) and 1e-6 <= self.unit_scale <= 1e3):
            raise ValueError(f"unit_scale must be between 1e-6 and 1000 metres per unit, got {self.unit_scale}")
        for name in ("axis_up", "axis_forward"):
            value = getattr(self, name)
            if value is not None and value not in AXES:
                raise ValueError(f"{name} must be one of {', '.join(AXES)}, got {value!r}")
        if self.axis_forward is not None and self.axis_up is None:
            raise ValueError("axis_forward needs axis_up (the up axis is detected otherwise)")
        if self.axis_up and self.axis_forward and self.axis_up.lstrip("-") == self.axis_forward.lstrip("-"):
            raise ValueError(f"axis_forward {self.axis_forward!r} and axis_up {self.axis_up!r} must differ")
        if self.floor not in FLOOR_MODES:
            raise ValueError(f"floor must be one of {', '.join(FLOOR_MODES)}, got {self.floor!r}")
        if not (np.isfinite(self.amc_fps) and 0.1 <= self.amc_fps <= 10000):
            raise ValueError(f"amc_fps must be between 0.1 and 10000, got {self.amc_fps}")


@dataclass
class ClipGroup:
    """Clips on one skeleton: their database and what was done to make them fit."""

    skeleton: Skeleton
    database: MotionDatabase
    files: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    convention: str = ""

    def describe(self) -> str:
        """One line: joints, root, naming convention, clips, minutes and frame rate."""
        db = self.database
        minutes = db.n_frames / db.fps / 60.0
        root = self.skeleton.names[0]
        text = (f"{self.skeleton.n_joints} joints (root {root!r}{', ' + self.convention if self.convention else ''}): "
                f"{len(db.clips)} clips, {minutes:.2f} min at {db.fps:g} fps")
        return text


@dataclass
class LibraryImport:
    """groups: one per skeleton; failed: (path, message) of files or folders that could not be
    read; skipped: (path, reason) of files that are not motion (sidecars, ASF skeletons);
    orientations: path -> Orientation, what was decided about each file's units, axes and floor."""

    groups: list
    failed: list
    skipped: list
    orientations: dict = field(default_factory=dict)

    def summary(self) -> str:
        """The import report: groups, what was decided about units and axes, notes, failures."""
        n_files = sum(len(g.files) for g in self.groups) + len(self.failed)
        lines = [f"{len(self.groups)} skeleton group(s) from {n_files} motion file(s), {len(self.failed)} failed"]
        for i, g in enumerate(self.groups, 1):
            lines.append(f"  group {i}: {g.describe()}")
            lines.extend(f"    - {n}" for n in orientation_summary([self.orientations[f] for f in g.files
                                                                     if f in self.orientations]))
            lines.extend(f"    - {n}" for n in g.notes)
        for path, msg in self.failed:
            lines.append(f"  FAILED {path}: {msg}")
        return "\n".join(lines)


def orientation_summary(infos) -> list:
    """Lines saying what was decided about units and axes (files grouped by decision) and which
    files' floors moved by more than a centimetre."""
    def key(o):
        return o.unit or f"{o.unit_scale:g} m/unit", o.up, o.source("unit"), o.source("up")

    by = Counter(key(o) for o in infos)
    lines = []
    for k, n in sorted(by.items(), key=lambda kv: -kv[1]):
        unit, up, how_unit, how_up = k
        heights = [o.height for o in infos if key(o) == k]
        lines.append(f"{n} file(s): units {unit} ({how_unit}), up axis {up} ({how_up}); "
                     f"body {min(heights):.2f}-{max(heights):.2f} m tall")
    moved = [o.floor for o in infos if abs(o.floor) >= 0.01]
    if moved:
        lines.append(f"floor: {len(moved)} file(s) moved onto z = 0 by {100 * min(moved, key=abs):+.0f} to "
                     f"{100 * max(moved, key=abs):+.0f} cm")
    tilted = [o.tilt for o in infos if o.tilt]
    if tilted:
        lines.append(f"floor: {len(tilted)} file(s) captured on a tilted floor, levelled by "
                     f"{min(tilted):.1f}-{max(tilted):.1f}°")
    return lines


def motion_files(paths) -> tuple[list, list, list]:
    """Expand files and folders (recursively) into motion files (sorted), skipped files (not
    motion, or not regular files such as pipes) and failed folders (unreadable), each with why."""
    found, skipped, failed = [], [], []

    def take(full):
        name = os.path.basename(full)
        try:
            regular = stat.S_ISREG(os.stat(full).st_mode)
        except OSError as exc:
            failed.append((full, f"cannot read: {exc.strerror}"))
            return
        if not name.lower().endswith(MOTION_EXTENSIONS):
            skipped.append((full, "skeleton file, read with its AMC motions" if name.lower().endswith(".asf")
                            else "not a motion file"))
        elif not regular:
            skipped.append((full, "not a regular file (a pipe, device or socket)"))
        else:
            found.append(full)

    for p in [paths] if isinstance(paths, (str, os.PathLike)) else paths:
        p = os.fspath(p)
        if os.path.isdir(p):
            def unreadable(err):
                failed.append((err.filename or p, f"cannot read folder: {err.strerror}"))

            for dirpath, dirnames, filenames in os.walk(p, onerror=unreadable):
                dirnames.sort()
                for f in sorted(filenames):
                    take(os.path.join(dirpath, f))
        elif os.path.lexists(p):
            take(p)
        else:
            raise FileNotFoundError(f"{p}: no such file or folder")
    return found, skipped, failed


def read_clip(path: str, settings: ImportSettings, asf_cache: dict | None = None) -> tuple[Clip, Orientation]:
    """One BVH or AMC file as a Clip (AMC: with its subject's ASF from beside it), in motionctl's
    units and axes, with what was decided about them.  The floor is not moved here."""
    if path.lower().endswith(".amc"):
        asf_path = find_asf_for(path)
        if asf_path is None:
            raise MotionFileError(path, "no ASF skeleton found beside this AMC (expected SUBJECT.asf)")
        cache = asf_cache if asf_cache is not None else {}
        if asf_path not in cache:
            try:
                cache[asf_path] = read_asf(asf_path, settings.unit_scale)
            except MotionFileError as exc:
                cache[asf_path] = exc  # read (and fail) once per folder, not once per motion
        asf = cache[asf_path]
        if isinstance(asf, MotionFileError):
            raise MotionFileError(path, f"its skeleton cannot be read: {asf}")
        up = settings.axis_up or "Y"  # the ASF convention; its own units
        clip, info = read_amc_oriented(path, asf, settings.amc_fps, axis_up=up,
                                       axis_forward=settings.axis_forward)
        info.declared = ({"unit"} if settings.unit_scale is None else set()) | \
            ({"up"} if settings.axis_up is None else set())
        return clip, info
    return read_bvh_oriented(path, settings.unit_scale, axis_forward=settings.axis_forward, axis_up=settings.axis_up)


def load_clip(path: str, settings: ImportSettings, asf_cache: dict | None = None):
    """Read one file and prepare it for a library: units and axes, calibration frames trimmed,
    feet on the floor, joint names Blender can hold.  Returns (clip, Orientation, notes).

    Any problem with the file is a MotionFileError naming it (and the line where there is one)."""
    clip, info = read_clip(path, settings, asf_cache)
    return prepare_clip(clip, info, settings, path)


def prepare_clip(clip: Clip, info: Orientation, settings: ImportSettings, path: str):
    """The steps after reading (see ``load_clip``); returns (clip, Orientation, notes)."""
    notes = []
    n_cal = 0 if settings.keep_calibration else detect_calibration_frames(clip)
    if n_cal:
        if n_cal >= clip.n_frames - 1:
            raise MotionFileError(path, "only calibration frames")
        clip = clip.slice(n_cal, clip.n_frames)
        notes.append(f"trimmed {n_cal} calibration frame(s)")
    if settings.floor == "auto":
        root, rot, info.tilt = level_floor(clip.skeleton, clip.root_pos, clip.local_rot, clip.local_pos)
        if info.tilt:
            clip = replace(clip, root_pos=root, local_rot=rot, tags=set(clip.tags))
        info.detected.add("floor")
    info.floor = floor_lift(clip.skeleton, clip.root_pos, clip.local_rot, clip.local_pos, settings.floor)
    if info.floor:
        root = clip.root_pos.copy()
        root[:, 2] += info.floor
        clip = replace(clip, root_pos=root, tags=set(clip.tags))
    clip, renamed = blender_safe_names(clip)
    if renamed:
        notes.append(f"{renamed} joint name(s) shortened to Blender's {MAX_NAME_BYTES} bytes")
    return clip, info, notes


def import_library(paths, settings: ImportSettings | None = None, progress=None, should_stop=None) -> LibraryImport:
    """Read every motion file under ``paths`` and group the clips by skeleton.  A file that cannot
    be read is listed in ``failed`` with the reason and never stops the others."""
    settings = settings or ImportSettings()
    settings.validate()
    files, skipped, failed = motion_files(paths)
    clips, notes, orientations = [], {}, {}
    asf_cache: dict[str, AsfSkeleton] = {}
    for i, path in enumerate(files):
        check_stop(should_stop, "import")
        if progress is not None:
            progress(0.9 * i / max(len(files), 1), f"reading {os.path.basename(path)} ({i + 1}/{len(files)})")
        try:
            clip, info, file_notes = load_clip(path, settings, asf_cache)
        except MotionFileError as exc:
            failed.append((path, str(exc)))
            continue
        orientations[path] = info
        notes[path] = file_notes
        clips.append((path, clip))
    check_stop(should_stop, "import")
    if progress is not None:
        progress(0.9, f"grouping {len(clips)} clip(s) by skeleton")
    groups = group_clips(clips, notes)
    if progress is not None:
        progress(1.0, f"{len(groups)} group(s)")
    return LibraryImport(groups, failed, skipped, orientations)


MAX_NAME_BYTES = 63  # Blender's limit for bone (and other data-block) names


def blender_safe_names(clip: Clip) -> tuple[Clip, int]:
    """The clip with joint names Blender can hold as bone names: control characters replaced,
    names longer than 63 bytes (UTF-8) shortened, kept unique.  Returns (clip, names changed)."""
    names = list(clip.skeleton.names)
    out, taken, changed = [], set(), 0
    for n in names:
        new = "".join(ch if ch.isprintable() else "_" for ch in n) or "joint"
        if len(new.encode("utf-8")) > MAX_NAME_BYTES or new in taken:
            base, k = new, 1
            while True:
                suffix = f".{k:03d}" if k > 1 or new in taken else ""
                cut = base.encode("utf-8")[: MAX_NAME_BYTES - len(suffix)].decode("utf-8", "ignore")
                new = cut + suffix
                if new not in taken:
                    break
                k += 1
        changed += new != n
        taken.add(new)
        out.append(new)
    if not changed:
        return clip, 0
    sk = clip.skeleton
    skeleton = Skeleton(out, sk.parents, sk.offsets, sk.channels, sk.end_parent, sk.end_offsets, sk.unit_scale)
    return replace(clip, skeleton=skeleton, tags=set(clip.tags)), changed


# --------------------------------------------------------------------------- grouping

def naming_convention(skeleton: Skeleton) -> tuple[str, dict] | tuple[None, None]:
    """(name, {name: canonical name}) of a known naming convention of the CMU rig, else (None, None)."""
    names = set(skeleton.names)
    for conv, mapping in NAMING_CONVENTIONS.items():
        if names == set(mapping):
            return conv, mapping
    return None, None


def _canonical(skeleton: Skeleton) -> tuple[str | None, list]:
    conv, mapping = naming_convention(skeleton)
    names = [mapping[n] for n in skeleton.names] if mapping else list(skeleton.names)
    return conv, names


def _key(skeleton: Skeleton, names: list) -> frozenset:
    return frozenset((n, names[p] if p >= 0 else None) for n, p in zip(names, skeleton.parents))


def fold_extra_root(clip: Clip) -> Clip:
    """Remove a root that has one child, composing its motion into that child."""
    sk = clip.skeleton
    kids = sk.children(0)
    if len(kids) != 1 or kids[0] != 1:
        raise ValueError(f"clip {clip.name!r}: root {sk.names[0]!r} has {len(kids)} children")
    pos, rot = forward_kinematics(sk, clip.root_pos, clip.local_rot, clip.local_pos)
    keep = np.arange(1, sk.n_joints)
    parents = np.where(sk.parents[keep] > 0, sk.parents[keep] - 1, -1)
    ends = sk.end_parent >= 1
    new_sk = Skeleton([sk.names[k] for k in keep], parents, sk.offsets[keep], [sk.channels[k] for k in keep],
                      sk.end_parent[ends] - 1, sk.end_offsets[ends], sk.unit_scale)
    # The child's rest offset from the old root becomes its position; ensure it has channels.
    if not any(c.endswith("position") for c in new_sk.channels[0]):
        chans = list(new_sk.channels)
        chans[0] = ("Xposition", "Yposition", "Zposition") + tuple(chans[0])
        new_sk = Skeleton(new_sk.names, new_sk.parents, new_sk.offsets, chans, new_sk.end_parent,
                          new_sk.end_offsets, new_sk.unit_scale)
    local_rot = clip.local_rot[:, keep].copy()
    local_rot[:, 0] = rot[:, 1]
    local_pos = None if clip.local_pos is None else clip.local_pos[:, keep].copy()
    return replace(clip, skeleton=new_sk, root_pos=pos[:, 1].copy(), local_rot=local_rot, local_pos=local_pos,
                   tags=set(clip.tags))


def _alignment(ref: Skeleton, sk: Skeleton) -> np.ndarray:
    """[J, 4] rest rotations A_j taking the reference's bone directions to this skeleton's."""
    a = quat.identity((sk.n_joints,))
    tips_joint, tips_ref = ref.bone_tips()
    _, tips_sk = sk.bone_tips()
    for j in range(sk.n_joints):
        sel = np.flatnonzero(tips_joint == j)
        u = tips_ref[sel]
        v = tips_sk[sel]
        good = (np.linalg.norm(u, axis=1) > 1e-6) & (np.linalg.norm(v, axis=1) > 1e-6)
        u, v = u[good], v[good]
        if len(u) == 0:
            continue
        u = u / np.linalg.norm(u, axis=1, keepdims=True)
        v = v / np.linalg.norm(v, axis=1, keepdims=True)
        # Children that all start at one point (ASF bones) give parallel directions: one axis.
        if len(u) == 1 or np.linalg.svd(u, compute_uv=False)[1] < 1e-3:
            a[j] = quat.between(u.mean(axis=0), v.mean(axis=0))
        else:  # Kabsch: best rotation R with R u ~ v
            h = u.T @ v
            us, _, vt = np.linalg.svd(h)
            d = np.sign(np.linalg.det(vt.T @ us.T))
            r = vt.T @ np.diag([1.0, 1.0, d]) @ us.T
            a[j] = quat.from_matrix(r)
    return a


def conform(clip: Clip, ref: Skeleton, names: list) -> tuple[Clip, bool]:
    """Rename/reorder a clip's joints to ``ref`` (``names`` = its canonical names, aligned with
    ref's canonical order) and retarget its rest pose onto ref's; bone lengths stay the clip's.
    Returns the clip and whether its rest pose was a different one (some bone more than
    RETARGET_DEGREES off; small per-subject differences are aligned too, silently)."""
    sk = clip.skeleton
    _, ref_canon = _canonical(ref)
    order = np.array([names.index(n) for n in ref_canon])
    inverse = np.argsort(order)
    parents = np.array([inverse[sk.parents[o]] if sk.parents[o] >= 0 else -1 for o in order])
    end_parent = inverse[sk.end_parent]
    end_sort = np.argsort(end_parent, kind="stable")
    moved = Skeleton(ref.names, parents, sk.offsets[order], ref.channels, end_parent[end_sort],
                     sk.end_offsets[end_sort], sk.unit_scale)
    local_rot = clip.local_rot[:, order]
    local_pos = None if clip.local_pos is None else clip.local_pos[:, order]
    a = _alignment(ref, moved)
    # Judge by bones long enough to see (CMU's 1 cm wrist bones point either way per subject).
    tip_joint, tip = moved.bone_tips()
    visible = np.unique(tip_joint[np.linalg.norm(tip, axis=1) > 0.05])
    angles = quat.angle(a[visible])
    retarget = bool(np.any(angles > np.radians(0.5)))
    major = bool(np.any(angles > np.radians(RETARGET_DEGREES)))
    if retarget:
        # G'_j = G_j A_j  =>  L'_j = A_parent^-1 L_j A_j
        a_parent = np.where((moved.parents >= 0)[:, None], a[np.maximum(moved.parents, 0)], quat.identity((len(a),)))
        local_rot = quat.mul(quat.mul(quat.conj(a_parent), local_rot), a)
        lengths = np.linalg.norm(moved.offsets, axis=1, keepdims=True)
        ref_dir = ref.offsets / np.maximum(np.linalg.norm(ref.offsets, axis=1, keepdims=True), 1e-12)
        offsets = np.where(np.linalg.norm(ref.offsets, axis=1, keepdims=True) > 1e-9, ref_dir * lengths, moved.offsets)
        offsets[0] = moved.offsets[0]
        if len(moved.end_parent) == len(ref.end_parent) and np.all(moved.end_parent == ref.end_parent):
            e_len = np.linalg.norm(moved.end_offsets, axis=1, keepdims=True)
            e_dir = ref.end_offsets / np.maximum(np.linalg.norm(ref.end_offsets, axis=1, keepdims=True), 1e-12)
            end_offsets = e_dir * e_len
        else:
            end_offsets = moved.end_offsets
        moved = Skeleton(ref.names, ref.parents, offsets, ref.channels, moved.end_parent, end_offsets, sk.unit_scale)
        if local_pos is not None:
            local_pos = local_pos.copy()
            local_pos[:, 1:] = np.linalg.norm(local_pos[:, 1:], axis=-1, keepdims=True) * ref_dir[1:]
    else:
        moved = Skeleton(ref.names, ref.parents, moved.offsets, ref.channels, moved.end_parent, moved.end_offsets,
                         sk.unit_scale)
    return replace(clip, skeleton=moved, local_rot=local_rot, local_pos=local_pos, tags=set(clip.tags)), major


def group_clips(items, notes: dict | None = None) -> list:
    """Group (path, clip) pairs by skeleton; see the module docstring for what is normalised."""
    notes = notes if notes is not None else {}
    info = []
    for path, clip in items:
        conv, names = _canonical(clip.skeleton)
        info.append([path, clip, conv, names, _key(clip.skeleton, names)])
    keys = Counter(k for *_, k in info)
    # Fold an extra root when what lies below it matches a group.
    for row in info:
        path, clip, conv, names, key = row
        sk = clip.skeleton
        if len(sk.children(0)) == 1 and sk.n_joints > 2 and sk.children(0)[0] == 1:
            folded = fold_extra_root(clip)
            fconv, fnames = _canonical(folded.skeleton)
            fkey = _key(folded.skeleton, fnames)
            if fkey in keys and fkey != key:
                notes.setdefault(path, []).append(f"extra root {sk.names[0]!r} folded into {folded.skeleton.names[0]!r}")
                row[1:] = [folded, fconv, fnames, fkey]
    by_key: dict = {}
    for row in info:
        by_key.setdefault(row[4], []).append(row)
    groups = []
    for rows in sorted(by_key.values(), key=lambda r: -len(r)):
        # Reference: the most common naming convention, first file in sorted order.
        conv_count = Counter(r[2] for r in rows)
        ref_row = next(r for r in rows if r[2] == conv_count.most_common(1)[0][0])
        ref = ref_row[1].skeleton
        fps_count = Counter(round(r[1].fps, 6) for r in rows)
        fps = fps_count.most_common(1)[0][0]
        db = MotionDatabase(ref)
        group = ClipGroup(ref, db, convention=ref_row[2] or "")
        used_names = set()
        retargeted, renamed = [], []
        for path, clip, conv, names, _ in rows:
            if clip is not ref_row[1]:
                if conv != ref_row[2]:
                    renamed.append(path)
                clip, did = conform(clip, ref, names)
                if did:
                    retargeted.append(path)
            if abs(clip.fps - fps) > 1e-6:
                notes.setdefault(path, []).append(f"resampled from {clip.fps:g} to {fps:g} fps")
                clip = resample(clip, fps)
            base, k = clip.name, 2
            while clip.name in used_names:
                clip = replace(clip, name=f"{base}_{k}", tags=set(clip.tags))
                k += 1
            used_names.add(clip.name)
            db.add(clip)
            group.files.append(path)
            for n in notes.get(path, []):
                group.notes.append(f"{os.path.basename(path)}: {n}")
        if renamed:
            group.notes.append(f"{len(renamed)} file(s) in another naming convention renamed to {group.convention or 'the group'}'s")
        if retargeted:
            group.notes.append(f"{len(retargeted)} file(s) with another rest pose retargeted onto the group's (world joint positions kept)")
        groups.append(group)
    return groups
