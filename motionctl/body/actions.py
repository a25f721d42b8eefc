"""What a clip's body does beyond walking: a leading calibration pose, the action centres (the frame a
pick, punch, kick, duck or jump peaks) and a jump's flight."""

from __future__ import annotations

import numpy as np

from ..clip import Clip
from ..skeleton import forward_kinematics
from ..tags import FOOT_ACTIONS, canonical_set
from .contacts import foot_contacts, true_runs
from .body import Body

def detect_calibration_frames(clip: Clip, max_seconds: float = 0.1, root_speed: float = 20.0,
                              joint_speed: float = 5.0, joint_fraction: float = 0.5) -> int:
    """Number of leading frames that are a calibration pose (0 if none).

    A calibration frame is followed by a change no captured body makes in one frame: the root
    moving faster than ``root_speed`` m/s (a T-pose stored elsewhere, then a teleport), or more
    than ``joint_fraction`` of the joints moving faster than ``joint_speed`` m/s relative to the
    root (a T-pose snapping to the first captured pose).  On ../shared/mocap, calibration frames
    score 0.58-0.81 and real motion at most 0.32 (dives, jumps); single-joint marker glitches
    (CMU 16_15, 16_28) stay below 0.2 and are not trimmed.
    """
    if clip.n_frames < 3:
        return 0
    max_frames = max(1, int(round(max_seconds * clip.fps)))
    k = min(max_frames + 1, clip.n_frames - 1)
    pos, _ = forward_kinematics(clip.skeleton, clip.root_pos[: k + 1], clip.local_rot[: k + 1],
                                None if clip.local_pos is None else clip.local_pos[: k + 1])
    local = pos - pos[:, :1]
    root_v = np.linalg.norm(np.diff(clip.root_pos[: k + 1], axis=0), axis=-1) * clip.fps
    fast = (np.linalg.norm(np.diff(local, axis=0), axis=-1) * clip.fps > joint_speed).mean(axis=-1)
    jumps = np.flatnonzero((root_v > root_speed) | (fast > joint_fraction))
    jumps = jumps[jumps < max_frames]
    return int(jumps[-1] + 1) if len(jumps) else 0



def action_centres(clip: Clip) -> np.ndarray:
    """Action centre frames: annotated (sidecar "action_centres"), else found from the body:
    picks at the lowest hand, punches and strikes at the hand farthest from the chest, kicks at
    the foot farthest from the hips, ducks at the lowest head, jumps at the highest hips; one
    per extreme at least 1 s apart (empty for clips without an action tag)."""
    if "action_centres" in clip.annotations:
        return np.asarray(clip.annotations["action_centres"], dtype=np.int64)
    tags = canonical_set(clip.tags)
    if not tags & ({"pick", "reach", "punch", "duck", "jump"} | FOOT_ACTIONS):
        return np.zeros(0, dtype=np.int64)
    pos, _ = clip.world()
    if tags & {"pick", "reach"} and Body.of(clip.skeleton).hands:
        score = -pos[:, Body.of(clip.skeleton).hands, 2].min(axis=1)
    elif tags & {"punch"} and Body.of(clip.skeleton).hands:
        chest = pos[:, Body.of(clip.skeleton).chest]
        score = np.linalg.norm(pos[:, Body.of(clip.skeleton).hands] - chest[:, None], axis=-1).max(axis=1)
    elif tags & FOOT_ACTIONS:
        feet = [v[1] for v in Body.of(clip.skeleton).feet.values()]
        score = np.linalg.norm(pos[:, feet] - pos[:, :1], axis=-1).max(axis=1)
    elif tags & {"duck"}:
        score = -pos[:, Body.of(clip.skeleton).head_or_top, 2]
    elif tags & {"jump"}:
        score = pos[:, 0, 2]
    else:
        return np.zeros(0, dtype=np.int64)
    gap = int(round(clip.fps))
    order = np.argsort(-score, kind="stable")
    chosen = []
    threshold = np.percentile(score, 90)
    for f in order:
        if score[f] < threshold:
            break
        if all(abs(f - g) >= gap for g in chosen):
            chosen.append(int(f))
    return np.array(sorted(chosen), dtype=np.int64)


def flight(clip: Clip, centres=None) -> np.ndarray:
    """bool [F]: the frames a jump is in the air: each run of frames with neither foot in contact
    (``foot_contacts``) that holds a jump centre (``centres``, default the clip's own
    ``action_centres``; with none given and none found, the longest such run).  Only this part of a
    jump may pass over a chasm: the run-up and the landing are on the ground."""
    runs = true_runs(~foot_contacts(clip).any(axis=1))  # [start, stop) of each airborne run
    out = np.zeros(clip.n_frames, dtype=bool)
    if len(runs) == 0:
        return out
    centres = action_centres(clip) if centres is None else np.asarray(centres, dtype=np.int64)
    if len(centres) == 0:
        a, b = runs[np.argmax(runs[:, 1] - runs[:, 0])]
        out[a:b] = True
        return out
    for a, b in runs:
        if np.any((centres >= a) & (centres < b)):
            out[a:b] = True
    return out
