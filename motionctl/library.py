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
from collections import Counter
from dataclasses import dataclass, field, replace

import numpy as np

from . import quat
from .asfamc import AsfSkeleton, find_asf_for, read_amc, read_asf
from .bvh import read_bvh
from .errors import MotionFileError
from .motion import Clip, MotionDatabase, detect_calibration_frames, resample
from .skeleton import Skeleton, end_site_positions, forward_kinematics

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
    """How files become clips.

    unit_scale        metres per file unit; None reads ASF units or guesses from the height
    keep_calibration  keep leading calibration frames (T-pose) instead of trimming them
    snap_to_floor     shift each clip vertically so its lowest joint touches z = 0
    amc_fps           frame rate of AMC files (not stored in them; CMU's is 120)
    axis_forward, axis_up   BVH file axes (Blender's importer defaults)
    """

    unit_scale: float | None = None
    axis_forward: str = "-Z"
    axis_up: str = "Y"
    keep_calibration: bool = False
    snap_to_floor: bool = False
    amc_fps: float = 120.0


@dataclass
class ClipGroup:
    """Clips on one skeleton: their database and what was done to make them fit."""

    skeleton: Skeleton
    database: MotionDatabase
    files: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    convention: str = ""

    def describe(self) -> str:
        db = self.database
        minutes = db.n_frames / db.fps / 60.0
        root = self.skeleton.names[0]
        text = (f"{self.skeleton.n_joints} joints (root {root!r}{', ' + self.convention if self.convention else ''}): "
                f"{len(db.clips)} clips, {minutes:.2f} min at {db.fps:g} fps")
        return text


@dataclass
class LibraryImport:
    groups: list
    failed: list  # (path, message)
    skipped: list  # (path, reason): files that are not motion (sidecars, ASF skeletons)

    def summary(self) -> str:
        n_files = sum(len(g.files) for g in self.groups) + len(self.failed)
        lines = [f"{len(self.groups)} skeleton group(s) from {n_files} motion file(s), {len(self.failed)} failed"]
        for i, g in enumerate(self.groups, 1):
            lines.append(f"  group {i}: {g.describe()}")
            lines.extend(f"    - {n}" for n in g.notes)
        for path, msg in self.failed:
            lines.append(f"  FAILED {path}: {msg}")
        return "\n".join(lines)


def motion_files(paths) -> tuple[list, list]:
    """Expand files and folders (recursively) into motion files, sorted; plus skipped files."""
    found, skipped = [], []
    for p in [paths] if isinstance(paths, (str, os.PathLike)) else paths:
        p = os.fspath(p)
        if os.path.isdir(p):
            for dirpath, dirnames, filenames in os.walk(p):
                dirnames.sort()
                for f in sorted(filenames):
                    full = os.path.join(dirpath, f)
                    (found if f.lower().endswith(MOTION_EXTENSIONS) else skipped).append(full)
        elif os.path.exists(p):
            (found if p.lower().endswith(MOTION_EXTENSIONS) else skipped).append(p)
        else:
            raise FileNotFoundError(f"{p}: no such file or folder")
    skipped = [(s, "skeleton file, read with its AMC motions" if s.lower().endswith(".asf") else "not a motion file")
               for s in skipped]
    return found, skipped


def read_clip(path: str, settings: ImportSettings, asf_cache: dict | None = None) -> Clip:
    """One BVH or AMC file as a Clip (AMC: with its subject's ASF from beside it)."""
    if path.lower().endswith(".amc"):
        asf_path = find_asf_for(path)
        if asf_path is None:
            raise MotionFileError(path, "no ASF skeleton found beside this AMC (expected SUBJECT.asf)")
        cache = asf_cache if asf_cache is not None else {}
        if asf_path not in cache:
            cache[asf_path] = read_asf(asf_path, settings.unit_scale)
        return read_amc(path, cache[asf_path], settings.amc_fps)
    return read_bvh(path, settings.unit_scale, axis_forward=settings.axis_forward, axis_up=settings.axis_up)


def import_library(paths, settings: ImportSettings | None = None, progress=None, should_stop=None) -> LibraryImport:
    """Read every motion file under ``paths`` and group the clips by skeleton."""
    settings = settings or ImportSettings()
    files, skipped = motion_files(paths)
    clips, failed, notes = [], [], {}
    asf_cache: dict[str, AsfSkeleton] = {}
    for i, path in enumerate(files):
        if should_stop is not None and should_stop():
            from .errors import Cancelled

            raise Cancelled("import cancelled")
        if progress is not None:
            progress(i / max(len(files), 1), f"reading {os.path.basename(path)}")
        try:
            clip = read_clip(path, settings, asf_cache)
        except (MotionFileError, OSError, ValueError) as exc:
            failed.append((path, str(exc)))
            continue
        n_cal = 0 if settings.keep_calibration else detect_calibration_frames(clip)
        if n_cal:
            if n_cal >= clip.n_frames - 1:
                failed.append((path, "only calibration frames"))
                continue
            clip = clip.slice(n_cal, clip.n_frames)
            notes.setdefault(path, []).append(f"trimmed {n_cal} calibration frame(s)")
        if settings.snap_to_floor:
            clip = snap_to_floor(clip)
        clips.append((path, clip))
    groups = group_clips(clips, notes)
    if progress is not None:
        progress(1.0, f"{len(groups)} group(s)")
    return LibraryImport(groups, failed, skipped)


def snap_to_floor(clip: Clip) -> Clip:
    pos, rot = clip.world()
    ends = end_site_positions(clip.skeleton, pos, rot)
    low = min(pos[..., 2].min(), ends[..., 2].min() if ends.size else np.inf)
    root = clip.root_pos.copy()
    root[:, 2] -= low
    return replace(clip, root_pos=root, tags=set(clip.tags))


# --------------------------------------------------------------------------- grouping

def naming_convention(skeleton: Skeleton) -> tuple[str, dict] | tuple[None, None]:
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
