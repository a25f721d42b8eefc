"""Import files and folders of capture into one MotionDatabase per skeleton.

Real folders mix skeletons.  Each file's extra root (a root joint with a single child: a still
joint_Root at the origin, RL_BoneRoot, a game rig's root) is folded into the hips when it is read
(``motionctl.io.roots``; ``fold_roots``), so the hips carry the root motion.  Clips are then grouped by
topology after two normalisations that keep every joint's world position: known naming
conventions of the same rig are renamed to one (CMU's ASF names, its 3ds Max-friendly and
MotionBuilder-friendly BVH releases), and rest poses that differ (arms down versus T-pose) are
retargeted onto the group's rest pose, keeping each clip's own bone lengths.  Files that cannot be
read are listed with the reason: none is dropped silently.
"""

from __future__ import annotations

import os
import stat
from collections import Counter
from dataclasses import dataclass, field, replace

import numpy as np

from .. import quat
from .asfamc import AsfSkeleton, find_asf_for, read_amc_oriented, read_asf
from .bvh import read_bvh_oriented
from ..errors import MotionctlError, MotionFileError
from ..jobs import check_stop
from ..body import detect_calibration_frames
from ..clip import Clip, MotionDatabase, resample
from .orient import FEET_NEAR_FLOOR, Orientation, feet_off_floor, floor_lift, level_floor
from .roots import fold_root
from ..rootframe import facing_evidence
from ..settings import setting, validate as settings_validate
from ..skeleton import AXES, Skeleton

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


AXIS_CHOICES = (("auto", "Automatic", "Decide from the body: the way its head points from its feet"),) + tuple(
    (a, a, f"The file's {a} axis") for a in AXES)


@dataclass
class ImportSettings:
    """How files become clips: one declaration for the Library panel's import options and the
    command line's (``motionctl.settings``).  "auto" and an unset unit mean "decide from the
    motion" (``motionctl.io.orient``)."""

    unit_scale: float | None = setting(
        None, "Metres per Unit", "Metres per file unit (centimetres: 0.01); off: the unit that makes the body "
        "human-sized (ASF files: their own units)", min=1e-6, max=1e3, soft_max=10.0, optional=True, on_value=0.01,
        group="Units and axes")
    axis_up: str = setting("auto", "Up", "The file's up axis; Automatic: from the body (head above feet)",
                           choices=AXIS_CHOICES, group="Units and axes")
    axis_forward: str = setting("auto", "Forward", "The file's forward axis, with a given Up (Automatic: paired "
                                "with Up as Blender's importer does)", choices=AXIS_CHOICES, group="Units and axes")
    floor: str = setting("auto", "Floor", "Where the floor goes", choices=(
        ("auto", "Feet on the Floor", "Level a tilted capture floor and put stance feet on z = 0"),
        ("keep", "As in the File", "Keep the file's floor (Blender's importer does)"),
        ("lowest", "Lowest Point", "Put the lowest point of each clip on z = 0")), group="Units and axes")
    fold_roots: bool = setting(True, "Fold Extra Roots", "Fold a root joint with a single child (a still "
                               "joint_Root at the origin, RL_BoneRoot, a game rig's root) into the hips, so the "
                               "hips carry the root motion the engines read; off: keep the file's joints")
    keep_calibration: bool = setting(False, "Keep Calibration Frames",
                                     "Keep leading T-pose calibration frames instead of trimming them")
    amc_fps: float = setting(120.0, "AMC Frame Rate", "AMC files do not store it; CMU's is 120", min=0.1, max=10000.0,
                             unit=None)

    def __post_init__(self):
        for name in ("axis_up", "axis_forward"):  # None, as older callers say, means automatic
            if getattr(self, name) is None:
                setattr(self, name, "auto")

    @property
    def up(self) -> str | None:
        """The given up axis, or None to detect it."""
        return None if self.axis_up == "auto" else self.axis_up

    @property
    def forward(self) -> str | None:
        """The given forward axis (only with a given up axis), or None."""
        return None if self.axis_forward == "auto" or self.up is None else self.axis_forward

    def validate(self) -> None:
        """Raise MotionctlError naming the setting that is out of range."""
        settings_validate(self)

    def check(self) -> None:
        """The rules between settings (``settings.validate`` runs them after each one's range)."""
        if self.axis_forward != "auto" and self.up is None:
            raise MotionctlError("axis_forward needs axis_up (the up axis is detected otherwise)")
        if self.up and self.forward and self.up.lstrip("-") == self.forward.lstrip("-"):
            raise MotionctlError(f"axis_forward {self.forward!r} and axis_up {self.up!r} must differ")


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

    def take(full, named=False):  # named: given by itself, not met in a folder (then a pipe is a failure)
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
            (failed if named else skipped).append((full, "not a regular file (a pipe, device or socket)"))
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
            take(p, named=True)
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
        up = settings.up or "Y"  # the ASF convention; its own units
        clip, info = read_amc_oriented(path, asf, settings.amc_fps, axis_up=up, axis_forward=settings.forward)
        info.declared = ({"unit"} if settings.unit_scale is None else set()) | \
            ({"up"} if settings.up is None else set())
        subject = os.path.basename(path).split("_")[0]
        if os.path.splitext(os.path.basename(asf_path))[0] != subject:  # not its own SUBJECT.asf: said so
            info.warnings.append(f"no {subject}.asf beside it: read on {os.path.basename(asf_path)}, the only ASF in "
                                 "its folder (another subject's skeleton would give wrong bone lengths)")
        return clip, info
    return read_bvh_oriented(path, settings.unit_scale, axis_forward=settings.forward, axis_up=settings.up,
                             fold_roots=settings.fold_roots)


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
    off = feet_off_floor(clip.skeleton, clip.root_pos, clip.local_rot, clip.local_pos)
    if off > FEET_NEAR_FLOOR:
        info.warnings.append(f"the feet never come near the floor (lowest {100 * off:.0f} cm above it): set Floor "
                             f"(--floor) or Up (--axis-up) if the body is not standing on it")
    facing_note, facing_warnings = facing_evidence(clip)
    info.warnings.extend(facing_warnings)
    clip, renamed = blender_safe_names(clip)
    if renamed:
        notes.append(f"{renamed} joint name(s) shortened to Blender's {MAX_NAME_BYTES} bytes")
    return clip, info, info.notes + [f"WARNING: {w}" for w in info.warnings] + notes + [facing_note]


def import_library(paths, settings: ImportSettings | None = None, progress=None, should_stop=None) -> LibraryImport:
    """Read every motion file under ``paths`` and group the clips by skeleton.  A file that cannot
    be read is listed in ``failed`` with the reason and never stops the others."""
    settings = settings or ImportSettings()
    settings.validate()
    files, skipped, failed = motion_files(paths)
    clips, notes, orientations = [], {}, {}
    asf_cache: dict[str, AsfSkeleton] = {}
    # Reading is 0-0.9 of the job by bytes (a folder mixes short and long takes), grouping the rest.
    read = np.cumsum([0] + [os.stat(p).st_size if os.path.isfile(p) else 0 for p in files], dtype=np.float64)
    for i, path in enumerate(files):
        check_stop(should_stop, "import")
        if progress is not None:
            progress(0.9 * read[i] / max(read[-1], 1.0), f"reading {os.path.basename(path)} ({i + 1}/{len(files)})")
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
    groups = group_clips(clips, notes, fold=settings.fold_roots)
    if progress is not None:
        progress(1.0, f"done: {len(clips)} clip(s) in {len(groups)} group(s)")
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
    """Remove a root that has one child, composing its motion into that child (``roots.fold_root``)."""
    try:
        sk, root, rot, pos = fold_root(clip.skeleton, clip.root_pos, clip.local_rot, clip.local_pos)
    except ValueError as exc:
        raise ValueError(f"clip {clip.name!r}: {exc}") from None
    return replace(clip, skeleton=sk, root_pos=root, local_rot=rot, local_pos=pos, tags=set(clip.tags))


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
        if np.max(np.abs(u - v)) < 1e-12:  # the same directions: exactly no rotation (an SVD's is
            continue                       # 1e-17 off, in bits that differ with the CPU's LAPACK kernels)
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
    inverse = np.argsort(order, kind="stable")
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


def group_clips(items, notes: dict | None = None, fold: bool = True) -> list:
    """Group (path, clip) pairs by skeleton; see the module docstring for what is normalised
    (``fold``: an extra root whose body matches another group is folded into it)."""
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
        if fold and len(sk.children(0)) == 1 and sk.n_joints > 2 and sk.children(0)[0] == 1:
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
