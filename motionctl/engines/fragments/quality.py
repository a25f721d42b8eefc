"""Transition and control qualities of paper 000, vectorised over all fragment pairs.

Quality(f -> f' | c) = MotionQuality(f -> f') · ControlQuality(f' | c)            (eq. 1)
MotionQuality = (1 + Σ_i ω_i Dis(Refl(f_{m-δ_i}, f_m), f'_{δ_i}))⁻¹               (eq. 9)
                (Dis in ``dis_unit`` metres: the paper does not state its length unit)
ControlQuality = (1 + ControlDis(Ev(f'), c))⁻¹                                     (eq. 10)
ControlDis = w_v |P(v) - P(v')|² + w_t (t - t')² + w_a (a - a')²                   (eq. 11)
P(v) = log(|v| + 1) v / |v|                                                        (eq. 12)

Refl reflects the pose at frame m-δ over the pose at m in joint-angle space (each joint's
rotation applied once more), Dis sums Euclidean distances between bone tips, both in the root
frame; the root's ground displacement over the δ frames counts as one more tip, so a transition
also has to continue the root's velocity.  The F x F distance matrices are built in row blocks
(never F x F x bones) and kept per δ, so changing ω costs one weighted sum.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.spatial.distance import cdist

from ... import fmath, quat
from ...arrays import ranks
from ...errors import MotionctlError
from ...jobs import Shared, check_memory, memory_budget, n_workers, parallel_map
from ...rootframe import displacement
from ...settings import setting
from .cut import FragmentSet, tip_joints, tips_of


DENSE_LIMIT_GB = 2.0  # automatic Successors: the full F x F tables while they take less than this
AUTO_SUCCESSORS = 500  # and beyond it each fragment's best 500 (a memory choice: bench_sparse.py measures the cost)


@dataclass
class QualitySettings:
    """Weights of paper 000 (its values are the defaults)."""

    omegas: tuple = setting((0.8, 0.5, 0.3), "ω", "Motion quality: weight of the pose mismatch δ frames after a "
                            "transition (higher: smoother transitions matter more than following the control)",
                            min=0.0, max=100.0, group="Quality weights", name="omega")
    deltas: tuple = setting((1, 2, 3), "δ", "Motion quality: frames after a transition at which poses are compared",
                            min=1, max=60, group="Quality weights", name="delta")
    stutter_window: float = setting(0.25, "Stutter Window", "Jumping back in a clip by less than this scores zero "
                                    "(no stuttering)", min=0.0, max=5.0, unit="TIME", group="Quality weights",
                                    name="stutter")
    dis_unit: float = setting(1.0, "Dis Unit", "Motion quality: the length unit of the pose mismatch, in metres "
                              "(eq. 9's 1 + Dis makes the balance between smooth transitions and following the control "
                              "depend on it; the paper does not say which it used: 1 m, 0.0254 inches, 0.0564 the CMU "
                              "unit)", min=1e-4, max=100.0, group="Quality weights")
    successors: int = setting(0, "Successors", "Keep each fragment's best this many successors by motion quality "
                              "instead of every fragment (a nearest-neighbour search: memory and training grow with "
                              "fragments x successors, not fragments²); 0: automatic, all while the full table takes "
                              f"under {DENSE_LIMIT_GB:g} GB, else {AUTO_SUCCESSORS}", min=0, max=100000,
                              group="Quality weights")
    w_v: float = setting(10.0, "w_v", "Control quality: weight of the ground-velocity mismatch (log-magnitude)",
                         min=0.0, max=1000.0, group="Quality weights")
    w_t: float = setting(6.0, "w_t", "Control quality: weight of the turning-rate mismatch", min=0.0,
                         max=1000.0, group="Quality weights")
    w_a: float = setting(20.0, "w_a", "Control quality: weight of the airborne mismatch", min=0.0,
                         max=1000.0, group="Quality weights")

    def successors_for(self, n: int) -> int:
        """Successors kept per fragment for ``n`` fragments: n (dense) or fewer (sparse)."""
        if self.successors > 0:
            return int(min(self.successors, n))
        return n if dense_bytes(n, len(self.deltas)) < DENSE_LIMIT_GB * 2**30 else int(min(AUTO_SUCCESSORS, n))

    def check(self, n_frames: int | None = None) -> None:
        if len(self.omegas) != len(self.deltas):
            raise MotionctlError(f"omegas {self.omegas} and deltas {self.deltas} must have the same length")
        if any(d < 1 for d in self.deltas):
            raise MotionctlError(f"deltas must be at least 1 frame, got {self.deltas}")
        if n_frames is not None and max(self.deltas) >= n_frames:
            raise MotionctlError(f"delta {max(self.deltas)} needs fragments of more than {max(self.deltas)} poses "
                                 f"(they have {n_frames})")
        for name in ("w_v", "w_t", "w_a", "stutter_window", "successors"):
            if getattr(self, name) < 0:
                raise MotionctlError(f"{name} must not be negative")
        if not self.dis_unit > 0:
            raise MotionctlError(f"dis_unit must be a positive length in metres, got {self.dis_unit}")


def pose_features(fs: FragmentSet, deltas) -> tuple[np.ndarray, np.ndarray]:
    """(predicted, actual) bone tips [len(deltas), F, B + 1, 3] for every fragment.

    predicted[i, f]: Refl(f_{m-δ}, f_m), the pose δ frames after f's last pose, extrapolated;
    actual[i, f']: f'_δ, the pose δ frames into f'.  The last "tip" is the root's ground
    displacement over δ frames (predicted from f's last δ frames, actual from f''s first).
    """
    pf = fs.frame_table()
    joints = tip_joints(fs.skeleton)
    g0 = pf.first[fs.clip] + fs.start  # first pose of each fragment
    gm = g0 + fs.n_frames - 1  # last pose
    preds, acts = [], []
    for d in deltas:
        lm, lb = pf.local_rot[gm], pf.local_rot[gm - d]
        refl = quat.mul(lm, quat.mul(quat.conj(lb), lm))
        h = 2 * pf.height[gm] - pf.height[gm - d]
        pred = tips_of(fs.skeleton, refl, h, pf.offsets[gm], pf.end_offsets[gm], joints)
        act = tips_of(fs.skeleton, pf.local_rot[g0 + d - 1], pf.height[g0 + d - 1], pf.offsets[g0 + d - 1],
                      pf.end_offsets[g0 + d - 1], joints)
        preds.append(np.concatenate((pred, _ground_step(pf, gm - d, gm)[:, None]), axis=1))
        acts.append(np.concatenate((act, _ground_step(pf, g0, g0 + d)[:, None]), axis=1))
    return np.stack(preds), np.stack(acts)


def _ground_step(pf, a, b) -> np.ndarray:
    """Root ground displacement from frame a to b, in a's root frame, as a tip [K, 3] (z = 0)."""
    step = displacement(pf.ground, pf.yaw, a, b)
    step[:, 2] = 0.0
    return step


def motion_distances(fs: FragmentSet, settings: QualitySettings | None = None, block: int = 512,
                     n_jobs: int | None = None, progress=None, should_stop=None) -> np.ndarray:
    """D [len(deltas), F, F] float32: Dis(Refl(f_{m-δ}, f_m), f'_δ) for every pair, in row blocks."""
    s = settings or QualitySettings()
    s.check(fs.n_frames)
    n = fs.n
    check_memory(dense_bytes(n, len(s.deltas)), f"the full motion-quality table of {n} fragments",
                 "set Successors (--successors) to keep only each fragment's best successors, or cut fewer fragments "
                 "(a longer Stride)")
    pred, act = pose_features(fs, s.deltas)
    return _blocked_distances(pred, act, block, n_jobs, progress, should_stop, "motion distance blocks")


def _blocked_distances(pred, act, block, n_jobs, progress, should_stop, what) -> np.ndarray:
    """D [n_d, F, columns] float32 from predicted tips [n_d, F, ...] to actual tips [n_d, columns, ...],
    in row blocks run as ``parallel_map`` pieces."""
    n_d, n = pred.shape[:2]
    out = np.empty((n_d, n, act.shape[1]), dtype=np.float32)
    blocks = [(k, r, min(r + block, n)) for k in range(n_d) for r in range(0, n, block)]

    def put(i, acc):
        k, r0, r1 = blocks[i]
        out[k, r0:r1] = acc

    parallel_map(_distance_block, blocks, n_jobs, Shared(pred=pred, act=act), should_stop, progress, what,
                 collect=put)
    return out


def _distance_block(item, pred, act) -> np.ndarray:
    """Rows r0:r1 of D for δ number k: the summed tip distances, float32 [r1 - r0, F]."""
    k, r0, r1 = item
    acc = np.zeros((r1 - r0, act.shape[1]))
    for b in range(pred.shape[2]):
        acc += cdist(pred[k, r0:r1, b], act[k, :, b])
    return acc.astype(np.float32)


def column_distances(fs: FragmentSet, columns: np.ndarray, settings: QualitySettings | None = None, block: int = 512,
                     n_jobs: int | None = None, should_stop=None) -> np.ndarray:
    """D [len(deltas), F, len(columns)] float32: Dis(Refl(f_{m-δ}, f_m), f'_δ) from every fragment
    into the fragments ``columns`` only (a sparse table's hub columns); infinite for stuttering
    back-jumps and stance flips, as in ``successor_distances``."""
    s = settings or QualitySettings()
    s.check(fs.n_frames)
    columns = np.asarray(columns, dtype=np.int64)
    n, h = fs.n, len(columns)
    check_memory(4.0 * (2 * len(s.deltas) + 1) * n * h, f"{h} hub columns of {n} fragments",
                 "lower Successors (--successors) or cut fewer fragments (a longer Stride)")
    pred, act = pose_features(fs, s.deltas)
    out = _blocked_distances(pred, act[:, columns], block, n_jobs, None, should_stop, "hub column blocks")
    lo, hi = stutter_window(fs, s.stutter_window)
    out[:, _stutters(fs.clip, fs.start.astype(np.int64), lo, hi, np.arange(n)[:, None], columns[None])] = np.inf
    out[:, _flips(*stances(fs), np.arange(n)[:, None], columns[None])] = np.inf
    return out


KNN_OVERSAMPLE = 2  # candidates per kept successor taken from the nearest-neighbour search, then re-ranked exactly


def dense_bytes(n: int, n_deltas: int) -> float:
    """Bytes of the dense tables of ``n`` fragments: a distance matrix per δ and MotionQuality."""
    return 4.0 * (n_deltas + 1) * n * n


def knn_features(pred: np.ndarray, act: np.ndarray, omegas) -> tuple[np.ndarray, np.ndarray]:
    """(query, data) float32 [F, D]: each fragment's ω-weighted predicted tips of every δ in one
    row, and its actual tips likewise, so the Euclidean distance between a query row and a data
    row approximates eq. 9's distance (a sum of per-tip distances) for nearest-neighbour search."""
    w = np.asarray(omegas, dtype=np.float32)[:, None, None, None]
    n = pred.shape[1]
    return tuple(np.ascontiguousarray((x * w).transpose(1, 0, 2, 3).reshape(n, -1), dtype=np.float32)
                 for x in (pred, act))


def successor_budget(n: int, k: int, n_deltas: int) -> float:
    """Bytes the sparse successor tables of ``n`` fragments keep at ``k`` successors: columns,
    per-δ distances, the transition table's values and its look-up keys."""
    return float(n) * k * (4 + 4 * n_deltas + 4 + 4 + 8)


def successor_distances(fs: FragmentSet, k: int, settings: QualitySettings | None = None, block: int = 256,
                        n_jobs: int | None = None, progress=None, should_stop=None) -> tuple[np.ndarray, np.ndarray]:
    """Each fragment's ``k`` best successors by motion quality, without the F x F table.

    A nearest-neighbour search over the pose features proposes ``KNN_OVERSAMPLE * k`` candidates
    per fragment (exact Euclidean distance between the ω-weighted predicted and actual tips of
    all δ at once, by blocked matrix products), which are then re-ranked by the exact eq. 9
    distance (a sum of per-tip distances, which the Euclidean one only approximates); stuttering
    back-jumps and stance flips (``stances``) are never kept.  Returns (successors int32 [F, k], each row's columns ascending;
    distances float32 [len(deltas), F, k] in metres, per δ, so MotionQuality follows any ω and
    Dis unit without searching again)."""
    s = settings or QualitySettings()
    s.check(fs.n_frames)
    n, n_d = fs.n, len(s.deltas)
    k = int(min(k, n))
    if k < 1:
        raise MotionctlError(f"Successors must be at least 1, got {k}")
    m = int(min(n, KNN_OVERSAMPLE * k))
    pred, act = pose_features(fs, s.deltas)
    # A block row holds its distances to every fragment and one δ's tip differences to m candidates
    # (and their squares); blocks of at most 256 MB, smaller when memory is short.
    per_row = 4.0 * (n + 2 * m * pred.shape[2] * 3)
    workers = n_workers(n_jobs)
    rows = int(max(1, min(block, min(2**28, memory_budget() / (4 * workers)) // per_row)))
    check_memory(successor_budget(n, k, n_d) + workers * rows * per_row,
                 f"the best {k} successors of {n} fragments", "lower Successors (--successors)")
    query, data = knn_features(pred, act, s.omegas)
    lo, hi = stutter_window(fs, s.stutter_window)
    shared = Shared(query=query, data=data, data_sq=np.einsum("ij,ij->i", data, data), pred=pred.astype(np.float32),
                    act=act.astype(np.float32), omegas=np.asarray(s.omegas, dtype=np.float64), clip=fs.clip,
                    start=fs.start.astype(np.int64), lo=lo, hi=hi, **dict(zip(("end", "begin"), stances(fs))))
    succ = np.empty((n, k), dtype=np.int32)
    dist = np.empty((n_d, n, k), dtype=np.float32)
    blocks = [(r, min(r + rows, n), m, k) for r in range(0, n, rows)]

    def put(i, res):
        r0, r1 = blocks[i][:2]
        succ[r0:r1], dist[:, r0:r1] = res

    parallel_map(_successor_block, blocks, n_jobs, shared, should_stop, progress, "successor blocks", collect=put)
    return succ, dist


def _successor_block(item, query, data, data_sq, pred, act, omegas, clip, start, lo, hi, end, begin):
    """Rows r0:r1: candidates by Euclidean distance, re-ranked by eq. 9's distance; see
    ``successor_distances``.  Returns (columns int32 [b, k] ascending, distances [n_d, b, k])."""
    r0, r1, m, k = item
    n = len(data)
    d2 = data_sq[None, :] - 2.0 * (query[r0:r1] @ data.T)  # + |q|², the same along a row
    cand = np.argpartition(d2, m - 1, axis=1)[:, :m] if m < n else np.broadcast_to(np.arange(n), (r1 - r0, n))
    per = np.empty((len(omegas), r1 - r0, cand.shape[1]), dtype=np.float32)
    for j in range(len(omegas)):
        diff = pred[j, r0:r1, None] - act[j][cand]  # [b, m, tips, 3]
        per[j] = np.sqrt(np.einsum("bmtx,bmtx->bmt", diff, diff)).sum(axis=2)
    per[:, _stutters(clip, start, lo, hi, np.arange(r0, r1)[:, None], cand)] = np.inf
    per[:, _flips(end, begin, np.arange(r0, r1)[:, None], cand)] = np.inf
    total = np.tensordot(omegas, per, axes=1)
    best = np.argpartition(total, k - 1, axis=1)[:, :k] if k < cand.shape[1] else np.argsort(total, axis=1, kind="stable")[:, :k]
    cols = np.take_along_axis(cand, best, axis=1)
    order = np.argsort(cols, axis=1, kind="stable")
    cols = np.take_along_axis(cols, order, axis=1)
    best = np.take_along_axis(best, order, axis=1)
    return cols.astype(np.int32), np.take_along_axis(per, best[None], axis=2)


def stutter_window(fs: FragmentSet, window: float) -> tuple[np.ndarray, np.ndarray]:
    """Per fragment, the first and last start frame (in its clip) a successor must not start at
    to count as stuttering (see ``stutter_mask``)."""
    w = int(round(window * fs.fps))
    start = fs.start.astype(np.int64)
    return start - w, start + fs.n_frames - 1


def _stutters(clip, start, lo, hi, rows, cols) -> np.ndarray:
    """bool [rows x cols broadcast]: going from fragment ``rows`` to ``cols`` stutters (``stutter_window``'s
    range of the same clip)."""
    return (clip[cols] == clip[rows]) & (start[cols] >= lo[rows]) & (start[cols] <= hi[rows])


def stutter_mask(fs: FragmentSet, window: float) -> tuple[np.ndarray, np.ndarray]:
    """(rows, cols) of pairs where f' starts in the same clip between ``window`` seconds before f
    and f's last pose: playing f' would replay what was just shown (paper 000: "stuttering")."""
    first, last = stutter_window(fs, window)
    order = np.lexsort((fs.start, fs.clip))
    base = fs.clip.astype(np.int64) << 32
    key = (base + fs.start)[order]
    lo = np.searchsorted(key, base + first, side="left")
    hi = np.searchsorted(key, base + last, side="right")
    counts = hi - lo
    rows = np.repeat(np.arange(fs.n), counts)
    cols = order[np.repeat(lo, counts) + ranks(counts)]
    return rows, cols


def motion_quality(distances: np.ndarray, fs: FragmentSet, settings: QualitySettings | None = None) -> np.ndarray:
    """MotionQuality [F, F] float32 in [0, 1] (eq. 9), zero for stuttering back-jumps and stance
    flips (``stances``)."""
    s = settings or QualitySettings()
    s.check()
    mq = quality_of(distances, s)
    rows, cols = stutter_mask(fs, s.stutter_window)
    mq[rows, cols] = 0.0
    end, start = stances(fs)
    for a in np.unique(end):  # a stance flip or a step back: block by block, never an F x F mask
        for b in np.unique(start):
            if FORBIDDEN[a, b]:
                mq[np.ix_(np.flatnonzero(end == a), np.flatnonzero(start == b))] = 0.0
    return mq


TRAIL_SPREAD = 0.15  # hip heights the feet must be apart along the travel to tell which one is ahead
TRAIL_SPEED = 0.2  # hip heights per second the root must travel for "ahead" to mean anything
TRAIL_WINDOW = 0.05  # s either side of a pose over which its direction of travel is taken
# Gait phases along the travel: 1 the left foot alone planted, the right behind; 2 the left alone,
# the right ahead; 3 both, the left behind; 4 the right alone, the left behind; 5 the right alone,
# the left ahead; 6 both, the right behind; then 1 again.  A transition may stay in its phase,
# go on to the next, or skip a double support (2 to 4, 5 to 1): anything else puts a foot back.
_NEXT = {1: (1, 2), 2: (2, 3, 4), 3: (3, 4), 4: (4, 5), 5: (5, 6, 1), 6: (6, 1)}


def _forbidden_table() -> np.ndarray:
    """bool [28, 28] over codes 4 * phase + stance (stance: 0 both or neither, 1 the left alone, 2
    the right alone): which transitions ``stances`` forbids (the stance rule where a phase is
    unknown: where both are known, the phases say more, and a skipped double support is allowed)."""
    code = np.arange(28)
    phase, stance = code // 4, code % 4
    unknown = (phase[:, None] == 0) | (phase[None, :] == 0)
    out = unknown & ((stance[:, None] * stance[None, :]) == 2)  # the stance leg swapped
    for a, allowed in _NEXT.items():
        out[np.ix_(phase == a, (phase > 0) & ~np.isin(phase, allowed))] = True
    return out


FORBIDDEN = _forbidden_table()


def stances(fs: FragmentSet) -> tuple[np.ndarray, np.ndarray]:
    """(end, start) int8 [F] codes of each fragment's last pose and of its first: 4 * gait phase
    + stance.  Stance: 1 the left foot alone planted, 2 the right alone, 0 both or neither.  Gait
    phase (``_NEXT``; 0 unknown: neither foot planted, the root barely travelling, or the feet
    side by side): where each foot is along the root's travel, so a walk forwards, backwards or
    sideways goes through the same phases.  A transition in ``FORBIDDEN`` is never taken: from
    one foot alone to the other alone (the stance leg swapped in one frame), or to a phase other
    than its own, the next, or the one after a double support it skips (a foot swinging ahead put
    down behind again).  The pose distance sees either only as a few bone tips off, and a turn
    the library holds once could be looped a step at a time, one foot never landing ahead (issue
    59: CMU 16_23's veer at 0.6 rad/s played frames 30-60 over and over; CMU 02_01's walk, asked
    to turn, its frames 6-36, one step, and then 15-33 and 81-99, the same stance twice)."""
    pf = fs.frame_table()
    g0 = pf.first[fs.clip] + fs.start
    gm = g0 + fs.n_frames - 1
    c = pf.contact
    stance = np.where(c[:, 0] & ~c[:, 1], 1, np.where(c[:, 1] & ~c[:, 0], 2, 0)).astype(np.int8)
    code = stance.copy()
    wanted = np.unique(np.concatenate((g0, gm)))  # only the poses a transition meets
    code[wanted] += 4 * _phases(pf, wanted)
    end, start = code[gm], code[g0]
    # A clip's own continuation is never forbidden (a contact the detector flickers on could say
    # so): such an end is left unknown.
    cont = fs.continuation()
    has = np.flatnonzero(cont >= 0)
    end[has[FORBIDDEN[end[has], start[cont[has]]]]] = 0
    return end, start


def _phases(pf, rows: np.ndarray) -> np.ndarray:
    """int8 [len(rows)]: the gait phase (``_NEXT``) of frame-table ``rows``; 0 where unknown."""
    which = np.searchsorted(pf.first, rows, side="right") - 1
    w = max(1, int(round(TRAIL_WINDOW * pf.fps)))
    lo = np.maximum(rows - w, pf.first[which])
    hi = np.minimum(rows + w, pf.first[which] + pf.length[which] - 1)
    travel = pf.ground[hi] - pf.ground[lo]
    apart = pf.ankles[rows, 0] - pf.ankles[rows, 1]
    hip = pf.height[rows]
    dist = np.sqrt(travel[:, 0] * travel[:, 0] + travel[:, 1] * travel[:, 1])  # elementwise: same bits anywhere
    ahead = (apart[:, 0] * travel[:, 0] + apart[:, 1] * travel[:, 1]) / np.maximum(dist, 1e-12)  # the left ahead by
    known = (dist > TRAIL_SPEED * hip * np.maximum(hi - lo, 1) / pf.fps) & (np.abs(ahead) > TRAIL_SPREAD * hip)
    left, right = pf.contact[rows, 0], pf.contact[rows, 1]
    phase = np.select([left & right, left], [np.where(ahead < 0, 3, 6), np.where(ahead > 0, 1, 2)],
                      np.where(ahead < 0, 4, 5))
    return np.where(known & (left | right), phase, 0).astype(np.int8)


def _flips(end, start, rows, cols) -> np.ndarray:
    """bool [rows x cols broadcast]: going from fragment ``rows`` to ``cols`` is ``FORBIDDEN``
    (codes of ``stances``)."""
    return FORBIDDEN[end[rows], start[cols]]


def quality_of(distances: np.ndarray, settings: QualitySettings | None = None) -> np.ndarray:
    """Eq. 9 from per-δ distances [n_d, ...] in metres (any trailing shape: all pairs, or each
    fragment's kept successors): float32 [...] in [0, 1], 0 where a distance is infinite."""
    s = settings or QualitySettings()
    if len(s.omegas) != len(distances):
        raise MotionctlError(f"{len(s.omegas)} omegas for {len(distances)} distance tables (deltas {s.deltas})")
    acc = np.zeros(distances.shape[1:], dtype=np.float32)
    for w, d in zip(s.omegas, distances):  # Dis in dis_unit
        acc += np.float32(w / s.dis_unit) * d
    acc += 1.0
    return np.reciprocal(acc, out=acc)


def project_velocity(v: np.ndarray) -> np.ndarray:
    """P(v) = log(|v| + 1) v / |v| (eq. 12), 0 at v = 0; v [..., 2]."""
    mag = np.linalg.norm(v, axis=-1, keepdims=True)
    scale = np.where(mag > 1e-12, fmath.log1p(mag) / np.where(mag > 1e-12, mag, 1.0), 1.0)
    return v * scale


def control_features(controls: np.ndarray, settings: QualitySettings | None = None) -> np.ndarray:
    """Controls [..., 4] mapped so ControlDis is a squared Euclidean distance: [..., 4]."""
    s = settings or QualitySettings()
    c = np.asarray(controls, dtype=float)
    return np.concatenate((np.sqrt(s.w_v) * project_velocity(c[..., :2]), np.sqrt(s.w_t) * c[..., 2:3],
                           np.sqrt(s.w_a) * c[..., 3:4]), axis=-1)


def control_distance(a: np.ndarray, b: np.ndarray, settings: QualitySettings | None = None) -> np.ndarray:
    """ControlDis (eq. 11) between control vectors a [..., 4] and b [..., 4] (broadcasting)."""
    d = control_features(a, settings) - control_features(b, settings)
    return np.sum(d * d, axis=-1)


def control_quality(evident: np.ndarray, centres: np.ndarray, settings: QualitySettings | None = None) -> np.ndarray:
    """ControlQuality [F, C] float32 (eq. 10) of every fragment for every control bin."""
    fa = control_features(evident, settings)
    fb = control_features(centres, settings)
    d = cdist(fa, fb, "sqeuclidean")
    return (1.0 / (1.0 + d)).astype(np.float32)


def top_transitions(mq: np.ndarray, percent: float) -> np.ndarray:
    """bool [F, F]: exactly the top ``percent`` % of transitions by MotionQuality (ties broken by
    index).  Rows left with no transition keep their single best one, so no fragment is a dead end
    (reported by ``dead_ends_repaired``)."""
    if not 0 < percent <= 100:
        raise MotionctlError(f"threshold percent must be in (0, 100], got {percent}")
    n = mq.size
    k = int(round(n * percent / 100.0))
    flat = mq.ravel()
    keep = np.zeros(n, dtype=bool)
    if k > 0:
        idx = np.argpartition(-flat, k - 1)[:k] if k < n else np.arange(n)
        keep[idx] = True
    keep = keep.reshape(mq.shape)
    return keep


def repair_dead_ends(allowed: np.ndarray, mq: np.ndarray) -> int:
    """Give every row with no allowed transition its best one; returns how many rows needed it."""
    empty = ~allowed.any(axis=1)
    rows = np.flatnonzero(empty)
    allowed[rows, np.argmax(mq[rows], axis=1)] = True
    return len(rows)
