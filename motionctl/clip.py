"""Clips and the motion database.

A ``Clip`` is one take on one ``Skeleton``: ``root_pos [F, 3]`` metres and ``local_rot [F, J, 4]``
unit quaternions (w, x, y, z), Z up.  A ``MotionDatabase`` holds many clips on one skeleton
topology with concatenated per-frame arrays, saved as one ``.npz`` (never pickle).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from . import quat
from .errors import MotionctlError, SkeletonMismatchError
from .skeleton import Skeleton, end_site_positions, forward_kinematics
from .store import open_archive, save_archive


@dataclass(eq=False)
class Clip:
    """One motion take.

    root_pos   [F, 3] metres, world, Z up
    local_rot  [F, J, 4] unit quaternions, rest-aligned axes (see skeleton module)
    local_pos  [F, J, 3] or None: per-frame translations of joints with position channels
    frame_offset  leading frames of the source file that were trimmed (calibration pose)
    annotations   name -> array; e.g. "contacts" bool [F, 2], "action_centres" int [K]
    """

    name: str
    skeleton: Skeleton
    fps: float
    root_pos: np.ndarray
    local_rot: np.ndarray
    local_pos: np.ndarray | None = None
    tags: set = field(default_factory=set)
    annotations: dict = field(default_factory=dict)
    source: str = ""
    frame_offset: int = 0

    def __post_init__(self):
        self.root_pos = np.asarray(self.root_pos, dtype=float)
        self.local_rot = np.asarray(self.local_rot, dtype=float)
        self.tags = set(self.tags)
        f, j = self.local_rot.shape[:2]
        if self.local_rot.shape != (f, self.skeleton.n_joints, 4) or self.root_pos.shape != (f, 3):
            raise ValueError(f"clip {self.name!r}: arrays do not match {self.skeleton.n_joints} joints")
        if self.local_pos is not None and self.local_pos.shape != (f, j, 3):
            raise ValueError(f"clip {self.name!r}: local_pos must be [F, J, 3]")
        if not self.fps > 0:
            raise ValueError(f"clip {self.name!r}: fps must be positive, got {self.fps}")

    @property
    def n_frames(self) -> int:
        return self.local_rot.shape[0]

    @property
    def duration(self) -> float:
        """Seconds from the first to one past the last frame."""
        return self.n_frames / self.fps

    def world(self) -> tuple[np.ndarray, np.ndarray]:
        """World joint positions [F, J, 3] and rotations [F, J, 4]."""
        return forward_kinematics(self.skeleton, self.root_pos, self.local_rot, self.local_pos)

    def slice(self, start: int, stop: int) -> "Clip":
        """Frames [start, stop) as a new clip (per-frame annotations sliced with them)."""
        ann = {k: v[start:stop] for k, v in self.annotations.items() if _is_per_frame(v, self.n_frames)}
        return replace(
            self,
            root_pos=self.root_pos[start:stop].copy(),
            local_rot=self.local_rot[start:stop].copy(),
            local_pos=None if self.local_pos is None else self.local_pos[start:stop].copy(),
            annotations=ann,
            frame_offset=self.frame_offset + start,
            tags=set(self.tags),
        )


def _is_per_frame(value, n_frames: int) -> bool:
    return isinstance(value, np.ndarray) and value.ndim >= 1 and value.shape[0] == n_frames



# --------------------------------------------------------------------------- resampling

def resample(clip: Clip, fps: float) -> Clip:
    """The clip at another frame rate: slerp for rotations, linear for positions."""
    if fps <= 0:
        raise MotionctlError(f"fps must be positive, got {fps}")
    if abs(fps - clip.fps) < 1e-9:
        return clip
    n_out = max(1, int(np.floor((clip.n_frames - 1) * fps / clip.fps + 1e-9)) + 1)
    t = np.arange(n_out) * (clip.fps / fps)
    i0 = np.minimum(np.floor(t).astype(np.int64), clip.n_frames - 1)
    i1 = np.minimum(i0 + 1, clip.n_frames - 1)
    w = t - i0
    rot = quat.slerp(clip.local_rot[i0], clip.local_rot[i1], w[:, None])
    root = clip.root_pos[i0] * (1 - w[:, None]) + clip.root_pos[i1] * w[:, None]
    lpos = None
    if clip.local_pos is not None:
        lpos = clip.local_pos[i0] * (1 - w[:, None, None]) + clip.local_pos[i1] * w[:, None, None]
    nearest = np.rint(t).astype(np.int64).clip(0, clip.n_frames - 1)
    ann = {}
    for k, v in clip.annotations.items():
        if _is_per_frame(v, clip.n_frames):
            ann[k] = v[nearest]
        elif k == "action_centres":
            ann[k] = np.rint(np.asarray(v) * fps / clip.fps).astype(np.int64)
        else:
            ann[k] = v
    return replace(clip, fps=float(fps), root_pos=root, local_rot=rot, local_pos=lpos, annotations=ann, tags=set(clip.tags))



# --------------------------------------------------------------------------- database

class MotionDatabase:
    """Many clips on one skeleton topology, with concatenated per-frame arrays.

    Clips may differ in bone lengths (CMU subjects do); each keeps its own offsets.
    ``clip_start[c]`` is the first global frame of clip c; ``frame_clip`` maps back.
    """

    def __init__(self, skeleton: Skeleton, clips=()):
        self.skeleton = skeleton
        self.clips: list[Clip] = []
        for c in clips:
            self.add(c)

    def add(self, clip: Clip) -> None:
        """Add a clip; one on another skeleton or at another frame rate is refused, naming it."""
        diff = self.skeleton.first_difference(clip.skeleton)
        if diff is not None:
            raise SkeletonMismatchError(clip.name, *diff)
        if self.clips and abs(clip.fps - self.fps) > 1e-6:
            raise MotionctlError(f"clip {clip.name!r} is at {clip.fps} fps, the database at {self.fps}; resample it first")
        if clip.n_frames == 0:
            raise MotionctlError(f"clip {clip.name!r} has no frames")
        self.clips.append(clip)
        self._cache = None

    @property
    def fps(self) -> float:
        return self.clips[0].fps if self.clips else 0.0

    @property
    def n_frames(self) -> int:
        return int(sum(c.n_frames for c in self.clips))

    @property
    def clip_start(self) -> np.ndarray:
        return np.concatenate(([0], np.cumsum([c.n_frames for c in self.clips])))[:-1].astype(np.int64)

    def _concat(self):
        if getattr(self, "_cache", None) is None:
            self._cache = (
                np.concatenate([c.root_pos for c in self.clips]),
                np.concatenate([c.local_rot for c in self.clips]),
                np.repeat(np.arange(len(self.clips)), [c.n_frames for c in self.clips]),
            )
        return self._cache

    @property
    def root_pos(self) -> np.ndarray:
        return self._concat()[0]

    @property
    def local_rot(self) -> np.ndarray:
        return self._concat()[1]

    @property
    def frame_clip(self) -> np.ndarray:
        return self._concat()[2]

    def locate(self, frame: int) -> tuple[int, int]:
        """(clip index, frame within the clip) of a global frame index."""
        c = int(self.frame_clip[frame])
        return c, int(frame - self.clip_start[c])

    def save(self, path) -> str:
        """Write every clip to one ``.npz`` (plain arrays and JSON text, no pickle)."""
        sk = self.skeleton
        meta = {
            "names": list(sk.names),
            "channels": [list(c) for c in sk.channels],
            "unit_scale": sk.unit_scale,
            "clips": [
                {
                    "name": c.name, "fps": c.fps, "tags": sorted(c.tags), "source": c.source,
                    "frame_offset": c.frame_offset, "n_frames": c.n_frames,
                    "has_local_pos": c.local_pos is not None,
                    "annotations": sorted(k for k, v in c.annotations.items() if isinstance(v, np.ndarray)),
                }
                for c in self.clips
            ],
        }
        arrays = {"parents": sk.parents, "offsets": sk.offsets, "end_parent": sk.end_parent, "end_offsets": sk.end_offsets}
        for i, c in enumerate(self.clips):
            arrays[f"c{i}_root_pos"] = c.root_pos
            arrays[f"c{i}_local_rot"] = c.local_rot
            arrays[f"c{i}_offsets"] = c.skeleton.offsets
            arrays[f"c{i}_end_offsets"] = c.skeleton.end_offsets
            if c.local_pos is not None:
                arrays[f"c{i}_local_pos"] = c.local_pos
            for k, v in c.annotations.items():
                if isinstance(v, np.ndarray):
                    arrays[f"c{i}_ann_{k}"] = v
        return save_archive(path, DATABASE_FORMAT, meta, arrays)

    @classmethod
    def load(cls, path) -> "MotionDatabase":
        """A database saved by ``save`` (MotionFileError if the file is missing or damaged)."""
        with open_archive(path, DATABASE_FORMAT, "database cache") as (meta, z):
            sk = Skeleton(meta["names"], z["parents"], z["offsets"], meta["channels"],
                          z["end_parent"], z["end_offsets"], meta["unit_scale"])
            db = cls(sk)
            for i, cm in enumerate(meta["clips"]):
                csk = sk.with_offsets(z[f"c{i}_offsets"], z[f"c{i}_end_offsets"])
                ann = {k: z[f"c{i}_ann_{k}"] for k in cm["annotations"]}
                db.add(Clip(
                    cm["name"], csk, cm["fps"], z[f"c{i}_root_pos"], z[f"c{i}_local_rot"],
                    z[f"c{i}_local_pos"] if cm["has_local_pos"] else None,
                    set(cm["tags"]), ann, cm["source"], cm["frame_offset"],
                ))
        return db


DATABASE_FORMAT = "motionctl.database/1"


def world_with_ends(clip: Clip) -> np.ndarray:
    """[F, J + E, 3] world positions of joints then end sites."""
    pos, rot = clip.world()
    return np.concatenate((pos, end_site_positions(clip.skeleton, pos, rot)), axis=1)
