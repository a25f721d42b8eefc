"""Planted feet stay planted: foot locking for every engine, in the synthesis every run goes through.

When the root is moved otherwise than the capture moved it (``synth``'s correction toward the
control), a foot the capture had planted would slide with it.  Each frame of a run has the
capture's contacts (``FrameTable.contact``, from ``body.contacts.foot_contacts``); where a contact
begins, the foot is *locked*: for as long as the contact lasts, the foot moves as it moved in the
capture (its heel-to-toe roll kept), in the world frame the correction had when it landed, and the
leg reaches it with the one two-bone IK (``body.ik``), the foot keeping its captured turn relative
to the ground; where the capture's pivot leaves the floor while still a contact (the toe-off,
which the contact detector ends late: rising past ``LIFTING``, faster than ``LEAVING``), the lock
moves it as the capture does, so it lets go of a foot already on its way.  A lock lets go early
when the foot would be pulled more than ``unlock_radius`` from where the pose puts it, or out of
the leg's reach; a foot let go (early, or when its contact ends and it lifts) springs back to its
pose over ``release_halflife`` (a critically damped spring), in the air where the capture lifts it.
A foot that lands while it still springs back eases from where the spring has it, so neither a
release nor a landing moves it further in one frame than it goes.

Everything is vectorised over a step's frames; the state between steps (``FeetState``: each
foot's lock and its spring) travels with the synthesis state, so a live session and a whole run
give the same frames.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .. import fmath, quat
from ..body.ik import two_bone
from ..body import Body
from ..rootframe import heading, to_local, to_world

REACH = 0.995  # share of the leg's length a locked foot may be from the hip
MAX_HEEL = 1.0  # rad: how far a locked foot on its toe may be turned, heel up, to stay in reach
HEEL_HALFLIFE = 0.02  # s: how fast a raised heel let go comes down (a frame or two; the foot: release_halflife)
LEAVING = (0.5, 1.0, 10.0)  # m/s: a planted pivot the capture moves faster than the first follows it, fully at
# the second, not at all past the third (faster than any captured toe: a jump, not a step)
LIFTING = (0.03, 0.05)  # m: ... and it is this far above its planted height (the capture's toe-offs: 5-6 cm median)
SOFT = 0.03  # share of the leg's length within full stretch where the IK damps (``body.ik.two_bone``)


@dataclass
class FeetSettings:
    """How a run meets its control without sliding its feet: each step played up to ``max_rate``
    times faster or slower to meet the asked speed (``synth.playback_rates``); what is left
    corrected on the root at most ``max_speed`` m/s plus ``speed_share`` of the capture's own speed
    and ``max_turn`` rad/s (the leg of a locked foot bends or stretches to absorb it: a stride a
    sixth longer), the rest carried as lag, up to ``max_lag`` m and ``max_lag_turn`` rad; how
    locked feet let go, and how long a foot let go while its contact goes on springs back before it
    is locked again where it is; how long a lock takes to stop a foot that lands moving (``landing``:
the lock eases in, so a foot an offset still carries decelerates as a landing foot does rather
than stopping in one frame) (metres, seconds)."""

    max_rate: float = 1.25
    max_speed: float = 0.1
    speed_share: float = 0.15
    max_turn: float = 0.6
    max_lag: float = 0.5
    max_lag_turn: float = 0.8
    unlock_radius: float = 0.45
    release_halflife: float = 0.15
    relock_after: float = 0.25
    landing: float = 0.1


@dataclass
class FeetState:
    """Per foot [2]: in contact at the last frame, locked, the yaw its lock keeps (the run's yaw
    minus the capture's at landing), where its pivot is held (``anchor`` [2, 2], world) and which
    point pivots (0 the ankle, 1 the toe); the spring of the foot's last release: its offset [2, 3]
    (world) and yaw offset when released and the frames since (``age``), kept while a new lock eases
    in; the lock held at the last frame: its gap from the pose (``gap`` [2, 2], ``gap_turn``); the
    frames since each lock began (``held``); a raised heel's turn (rotation vectors [2, 3], root
    frame) held at the last frame (``heel``) and in the spring (``offset_heel``); where the capture
    had each foot's ankle and toe at the last frame (``points`` [2, 2, 2], in the world of the
    capture's own root motion; NaN: none yet)."""

    contact: np.ndarray = field(default_factory=lambda: np.zeros(2, dtype=bool))
    locked: np.ndarray = field(default_factory=lambda: np.zeros(2, dtype=bool))
    turn: np.ndarray = field(default_factory=lambda: np.zeros(2))
    anchor: np.ndarray = field(default_factory=lambda: np.zeros((2, 2)))
    pivot: np.ndarray = field(default_factory=lambda: np.zeros(2, dtype=np.int64))
    offset: np.ndarray = field(default_factory=lambda: np.zeros((2, 3)))
    offset_turn: np.ndarray = field(default_factory=lambda: np.zeros(2))
    age: np.ndarray = field(default_factory=lambda: np.full(2, 1e9))
    held: np.ndarray = field(default_factory=lambda: np.full(2, 1e9))
    gap: np.ndarray = field(default_factory=lambda: np.zeros((2, 2)))
    gap_turn: np.ndarray = field(default_factory=lambda: np.zeros(2))
    heel: np.ndarray = field(default_factory=lambda: np.zeros((2, 3)))
    offset_heel: np.ndarray = field(default_factory=lambda: np.zeros((2, 3)))
    points: np.ndarray = field(default_factory=lambda: np.full((2, 2, 2), np.nan))

    def copy(self) -> "FeetState":
        return FeetState(*(np.array(getattr(self, k), copy=True) for k in
                           ("contact", "locked", "turn", "anchor", "pivot", "offset", "offset_turn", "age", "held",
                            "gap", "gap_turn", "heel", "offset_heel", "points")))


@dataclass(eq=False)
class Legs:
    """Both legs of a skeleton: ``chains`` [2, K] joints root ... hip, knee, ankle (equal lengths:
    the shorter padded at the root), ``toes`` [2] each ankle's toe (the ankle itself for none),
    ``lengths`` [2] thigh + shin, ``offsets`` the rest offsets and ``heel_up`` [2] how far above
    its toe an ankle is when its heel has left the floor (its planted height over the toe's, plus
    ``HEEL_LIFT``) and ``rest`` [2, 2] the ankles' and toes' planted heights (both set from the
    capture by ``frame_table``)."""

    chains: np.ndarray
    toes: np.ndarray
    lengths: np.ndarray
    offsets: np.ndarray
    heel_up: np.ndarray = field(default_factory=lambda: np.full(2, np.inf))
    rest: np.ndarray = field(default_factory=lambda: np.zeros((2, 2)))

    @classmethod
    def of(cls, skeleton) -> "Legs | None":
        feet = Body.of(skeleton).feet
        chains = []
        for side in "LR":
            chain = [int(feet[side][0])]
            while chain[-1] > 0:
                chain.append(int(skeleton.parents[chain[-1]]))
            chain = chain[::-1]
            if len(chain) < 4 or chain[0] != 0:
                return None
            chains.append(chain)
        k = max(len(c) for c in chains)
        chains = np.array([[0] * (k - len(c)) + c for c in chains], dtype=np.int64)
        toes = np.array([feet["L"][1], feet["R"][1]], dtype=np.int64)
        off = np.asarray(skeleton.offsets, dtype=float)
        lengths = np.linalg.norm(off[chains[:, -2]], axis=1) + np.linalg.norm(off[chains[:, -1]], axis=1)
        return cls(chains, toes, lengths, off)


def body_scales(clips, skeleton, legs: "Legs | None") -> np.ndarray:
    """Per clip, ``skeleton``'s leg length (thigh + shin) over the clip's own: a library of several
    performers (one skeleton's joints, each its own bone lengths) plays on one skeleton, so each
    clip's root height and travel are scaled by it, or a shorter performer's clips sink the feet
    into the floor and slide them (CMU subjects 01, 02, 14 and 131: legs 0.80 to 0.85 m).  1 where
    the legs are equal or not found (``legs``: the skeleton's)."""
    out = np.ones(len(clips))
    if legs is None:
        return out
    seen = {}
    for i, c in enumerate(clips):
        if c.skeleton is skeleton:
            continue
        key = id(c.skeleton)
        if key not in seen:
            own = Legs.of(c.skeleton)
            mine = own.lengths.mean() if own is not None else 0.0
            seen[key] = float(legs.lengths.mean() / mine) if mine > 0 else 1.0
        out[i] = seen[key]
    return out


HEEL_LIFT = 0.02  # m: an ankle this much higher over its toe than when planted has lifted its heel


def leg_globals(legs: Legs, rot: np.ndarray, height: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Positions [N, 2, K, 3] and global rotations [N, 2, K, 4] of both legs' chains in the root
    frame (the root at ``height`` [N] above its ground point; ``rot`` [N, J, 4] with the root's
    rotation relative to the heading; padding at the root repeats it), and the toes' positions
    [N, 2, 3]."""
    n, (_, k) = len(rot), legs.chains.shape
    pos, grot = np.empty((n, 2, k, 3)), np.empty((n, 2, k, 4))
    pos[:, :, 0] = np.stack((np.zeros(n), np.zeros(n), height), axis=-1)[:, None]
    grot[:, :, 0] = rot[:, None, 0]
    for i in range(1, k):
        j = legs.chains[:, i]
        same = j == legs.chains[:, i - 1]  # root padding
        g = quat.mul(grot[:, :, i - 1], rot[:, j])
        p = pos[:, :, i - 1] + quat.rotate(grot[:, :, i - 1], np.broadcast_to(legs.offsets[j], (n, 2, 3)))
        grot[:, :, i] = np.where(same[None, :, None], grot[:, :, i - 1], g)
        pos[:, :, i] = np.where(same[None, :, None], pos[:, :, i - 1], p)
    toe = pos[:, :, -1] + quat.rotate(grot[:, :, -1], np.broadcast_to(legs.offsets[legs.toes], (n, 2, 3)))
    return pos, grot, np.where((legs.toes == legs.chains[:, -1])[None, :, None], pos[:, :, -1], toe)


def _spring(age: np.ndarray, halflife: float, fps: float) -> np.ndarray:
    """Share of a released offset left ``age`` frames later (critically damped, from rest: a
    spring from the velocity the gap had at its release was measured to slide the feet more, the
    worst seconds' skating up to 14 points, for no smaller switch jumps)."""
    y = 2.0 * fmath.log(2.0) / max(halflife, 1e-6)
    t = np.maximum(age, 0.0) / fps
    return (1.0 + y * t) * fmath.exp(-y * t)


def _since(start: np.ndarray, values: np.ndarray, initial: np.ndarray) -> np.ndarray:
    """[n, 2, ...] the value of ``values`` at each frame's latest ``start`` (``initial`` [2, ...]
    before the first): a forward fill along the frames."""
    at = np.arange(len(start))[:, None]
    last = np.maximum.accumulate(np.where(start, at, -1), axis=0)
    picked = values[np.maximum(last, 0), np.arange(2)[None]]
    keep = (last >= 0).reshape(last.shape + (1,) * (values.ndim - 2))
    return np.where(keep, picked, initial[None])


def plant(legs: Legs, fps: float, rot: np.ndarray, height: np.ndarray, contact: np.ndarray, data_ground: np.ndarray,
          data_yaw: np.ndarray, ground: np.ndarray, yaw: np.ndarray, state: FeetState | None,
          settings: FeetSettings | None = None) -> tuple[np.ndarray, FeetState]:
    """Lock the feet of ``n`` frames (see the module docstring): ``rot`` [n, J, 4] (root relative to
    the heading) and ``height`` [n] the poses, ``contact`` [n, 2] the capture's contacts,
    ``data_yaw`` [n] the headings the capture's own root motion gives and ``ground``/``yaw`` the
    root frames the run shows.  A locked foot pivots on its heel (the ankle) while the heel is
    down, then on its toe: the pivot stays where it was put down, and the ankle moves about it as
    in the capture.  Returns the rotations with the legs bent and the state after the last frame."""
    s = settings or FeetSettings()
    st = state.copy() if state is not None else FeetState()
    n = len(rot)
    if n == 0:
        return rot, st
    pos, grot, toe = leg_globals(legs, rot, height)
    ankle = pos[:, :, -1]  # [n, 2, 3] in the root frame
    turn_now = yaw - data_yaw  # [n]: how far the run has turned the capture
    free = ground[:, None] + to_world(ankle[..., :2], yaw[:, None])  # where the pose puts each ankle
    contact = np.asarray(contact, dtype=bool)
    start = contact & ~np.concatenate((st.contact[None], contact[:-1]))
    pivot = ((ankle[..., 2] - toe[..., 2]) > legs.heel_up[None]).astype(np.int64)  # 1: on the toe
    # the capture's own pivot motion where it leaves the ground: a foot rolling off its toe, still a
    # contact, moves like the capture's (a held toe let go at up to 2 m/s popped in one frame)
    points = data_ground[:, None, None] + to_world(np.stack((ankle[..., :2], toe[..., :2]), axis=2),
                                                  data_yaw[:, None, None])  # [n, 2, 2 (ankle, toe), 2]
    step = points - np.concatenate((st.points[None], points[:-1]))
    step = np.where(np.isfinite(step), step, 0.0)[np.arange(n)[:, None], np.arange(2)[None], pivot]  # [n, 2, 2]
    speed = np.linalg.norm(step, axis=-1) * fps
    up = np.where(pivot == 1, toe[..., 2] - legs.rest[None, :, 1], ankle[..., 2] - legs.rest[None, :, 0])
    leaving = np.clip((speed - LEAVING[0]) / (LEAVING[1] - LEAVING[0]), 0.0, 1.0) \
        * np.clip((up - LIFTING[0]) / (LIFTING[1] - LIFTING[0]), 0.0, 1.0)
    step = step * (leaving * (speed < LEAVING[2]))[..., None]  # (no jump of the capture's own world is followed)
    # A foot let go while its contact goes on (pulled too far, out of reach) springs back; once it
    # has for ``relock_after`` it is locked again where it is (one pass per such relock).
    first, relock = start, np.zeros_like(start)
    put, put_turn = np.zeros((n, 2, 2)), np.zeros((n, 2))  # where a relock finds the foot off its pose
    wait = max(1, int(round(s.relock_after * fps)))
    for _ in range(n + 1):
        start = first | relock
        lock_turn = _since(start, turn_now[:, None] + put_turn, st.turn)
        # the ankle's offset from its pivot, in the world the lock keeps (its turn at landing)
        face = data_yaw[:, None] + lock_turn
        heel_to_toe = to_world(toe[..., :2] - ankle[..., :2], face)  # [n, 2, 2]
        d = np.where(pivot[..., None] == 1, -heel_to_toe, 0.0)  # ankle - pivot
        prev_pivot = np.concatenate((st.pivot[None], pivot[:-1]))
        switch = contact & ~start & (pivot != prev_pivot)
        jump = np.where(switch[..., None], np.where(pivot[..., None] == 1, heel_to_toe, -heel_to_toe), 0.0)
        jump += np.where((contact & ~start)[..., None], to_world(step, lock_turn), 0.0)
        # where each lock's pivot was put down: the free pivot at landing, moved by every switch since
        moved = np.cumsum(jump, axis=0)
        anchor = _since(start, free + put - d - moved, st.anchor) + moved
        target = anchor + d  # [n, 2, 2] where a locked ankle goes
        # a lock holds from its contact's start while the ankle stays near its pose and within reach
        target_rel = np.concatenate((to_local(target - ground[:, None], yaw[:, None]), ankle[..., 2:]), axis=-1)
        heel = np.zeros((n, 2, 4))
        heel[..., 0] = 1.0
        long = contact & (np.linalg.norm(target_rel - pos[:, :, -3], axis=-1) > REACH * legs.lengths[None])
        if long.any():  # out of reach: the heel rises (the foot turns about its toe) as far as it takes
            fr, side = np.nonzero(long)
            v = np.concatenate((to_local(-heel_to_toe[fr, side], yaw[fr]), (ankle[fr, side, 2] - toe[fr, side, 2])[:, None]),
                               axis=-1)
            new, heel[fr, side] = heel_raise(pos[fr, side, -3], target_rel[fr, side] - v, v, REACH * legs.lengths[side])
            target_rel[fr, side] = new
            target[fr, side] = ground[fr] + to_world(new[:, :2], yaw[fr])
        reach = np.linalg.norm(target_rel - pos[:, :, -3], axis=-1) > REACH * legs.lengths[None] + 1e-6
        pulled = np.linalg.norm(target - free, axis=-1) > s.unlock_radius
        fail = contact & (reach | pulled)
        carried = np.maximum.accumulate(np.where(start, np.arange(n)[:, None], -1), axis=0) < 0
        held = contact & ~(carried & ~st.locked[None])  # a carried contact already let go stays free
        run = np.cumsum(start, axis=0)  # the contact each frame belongs to (0: carried in)
        failed = np.maximum.accumulate(np.where(fail, run, -1), axis=0) == run  # a failure since it began
        locked = held & ~failed
        # releases: where a lock ends (failure or the contact's end), the offset it leaves springs back
        release = np.concatenate((st.locked[None], locked[:-1])) & ~locked
        gap = np.where(locked[..., None], target - free, 0.0)
        gap_turn = np.where(locked, lock_turn - turn_now[:, None], 0.0)
        off0 = _since(release, np.concatenate((st.gap[None], gap[:-1])), st.offset[:, :2])
        turn0 = _since(release, np.concatenate((st.gap_turn[None], gap_turn[:-1])), st.offset_turn)
        at = np.arange(n)[:, None]
        ev_at = np.maximum.accumulate(np.where(release, at, -1), axis=0)
        age = np.where(ev_at >= 0, at - ev_at, st.age[None] + at + 1)
        k = _spring(age, s.release_halflife, fps)
        resid = off0 * k[..., None]  # [n, 2, 2] the spring's offset at each frame
        resid_turn = turn0 * k
        due = contact & ~locked & ~relock & (age >= wait)
        due &= np.cumsum(due, axis=0) == 1  # each foot's first
        if not due.any():
            break
        relock |= due
        put = np.where(due[..., None], resid, put)  # a relock holds the foot where the spring has it
        put_turn = np.where(due, resid_turn, put_turn)
    # a lock eases in over ``landing`` from where the foot goes on its own, the spring of its last
    # release included (smoothstep: the foot's velocity stays continuous as it stops), to where its
    # pose lands it (holding it where the spring had it instead left the lock a gap to grow: measured,
    # worst seconds sliding 30 cm more)
    began = np.maximum.accumulate(np.where(start, at, -1), axis=0)
    held_for = np.where(began >= 0, at - began, st.held[None] + at + 1)
    ease = np.clip(held_for / max(s.landing * fps, 1e-9), 0.0, 1.0)
    ease = ease * ease * (3.0 - 2.0 * ease)
    sprung = free + resid
    goal = np.where(locked[..., None], sprung + (target - sprung) * ease[..., None], sprung)
    foot_turn = np.where(locked, resid_turn + (gap_turn - resid_turn) * ease, resid_turn)
    # a raised heel comes down after its release too (snapped back, the toe jumped up to 14 cm in a frame)
    raised = np.zeros((n, 2, 3))  # [n, 2, 3] a locked foot's heel turn
    if long.any():
        raised[locked] = quat.log(heel[locked])
    heel0 = _since(release, np.concatenate((st.heel[None], raised[:-1])), st.offset_heel)
    resid_heel = heel0 * _spring(age, HEEL_HALFLIFE, fps)[..., None]
    foot_heel = np.where(locked[..., None], resid_heel + (raised - resid_heel) * ease[..., None], resid_heel)
    held_gap = np.where(locked, np.linalg.norm(goal - free, axis=-1) + np.abs(foot_turn), 0.0)
    need = (held_gap > 1e-5) | (np.linalg.norm(foot_heel, axis=-1) > 1e-4) \
        | (~locked & ((np.linalg.norm(resid, axis=-1) > 1e-4) | (np.abs(resid_turn) > 1e-4)))
    out = rot
    if need.any():
        out = rot.copy()
        goal_rel = np.concatenate((to_local(goal - ground[:, None], yaw[:, None]), ankle[..., 2:]), axis=-1)
        fr, side = np.nonzero(need)
        out = _bend(legs, out, pos[fr, side], grot[fr, side], toe[fr, side], goal_rel[fr, side], foot_turn[fr, side],
                    fr, side, quat.exp(foot_heel[fr, side]))
    end_locked = locked[-1]
    new = FeetState(contact[-1].copy(), end_locked.copy(), lock_turn[-1].copy(), anchor[-1].copy(), pivot[-1].copy(),
                    np.zeros((2, 3)), turn0[-1].copy(), age[-1].astype(float), held_for[-1].astype(float),
                    gap[-1].copy(), gap_turn[-1].copy(), raised[-1].copy(), heel0[-1].copy(), points[-1].copy())
    new.offset[:, :2] = off0[-1]  # the last release's spring
    return out, new


def heel_raise(hip: np.ndarray, toe: np.ndarray, v: np.ndarray, reach: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(ankle [K, 3], the foot's turn [K, 4]): feet on their toes ``toe`` [K, 3] with the ankle at
    ``toe + v``, turned about the toe (about the horizontal axis across the foot, heel up, at most
    ``MAX_HEEL`` radians) just enough that the ankle is within ``reach`` [K] of the ``hip``."""
    flat = np.stack((v[:, 0], v[:, 1], np.zeros(len(v))), axis=-1)
    f = flat / np.maximum(np.linalg.norm(flat, axis=-1, keepdims=True), 1e-9)
    a = np.stack((-f[:, 1], f[:, 0], np.zeros(len(v))), axis=-1)  # across the foot
    v_par = np.sum(v * a, axis=-1, keepdims=True) * a
    v_perp = v - v_par
    w = np.cross(a, v_perp)
    p = toe - hip
    big_a, big_b = np.sum(p * v_perp, -1), np.sum(p * w, -1)
    c = 0.5 * (reach ** 2 - np.sum(p * p, -1) - np.sum(v * v, -1)) - np.sum(p * v_par, -1)
    rho = np.maximum(np.hypot(big_a, big_b), 1e-9)
    phi = fmath.arctan2(big_b, big_a)
    spread = fmath.arccos(np.clip(c / rho, -1.0, 1.0))
    best = np.full(len(v), np.inf)
    for theta in (phi + spread, phi - spread):
        theta = (theta + np.pi) % (2 * np.pi) - np.pi
        up = (np.cos(theta) - 1.0) * v_perp[:, 2] + np.sin(theta) * w[:, 2] >= -1e-9  # the ankle rises
        best = np.where(up & (np.abs(theta) < np.abs(best)), theta, best)
    theta = np.clip(np.where(np.isfinite(best), best, 0.0), -MAX_HEEL, MAX_HEEL)
    ankle = toe + v_par + np.cos(theta)[:, None] * v_perp + np.sin(theta)[:, None] * w
    return ankle, quat.from_axis_angle(a, theta)


def _bend(legs: Legs, rot, pos, grot, toe, goal, turn, frames, sides, heel) -> np.ndarray:
    """IK on the listed (frame, side) pairs: the hip and knee turned so the ankle reaches ``goal``
    (root frame; a straight leg's knee toward its ``toe``), the ankle's global rotation turned by
    ``heel`` (root frame) and then by ``turn`` about the vertical (in place on ``rot``, returned)."""
    forward = toe - pos[:, -1]
    forward[:, 2] = 0.0  # the foot's forward on the ground: where a straight leg's knee points
    forward /= np.maximum(np.linalg.norm(forward, axis=-1, keepdims=True), 1e-9)
    r_hip, r_knee = two_bone(pos[:, -3], pos[:, -2], pos[:, -1], goal, SOFT, forward)
    parent, g_hip, g_knee, g_ankle = grot[:, -4], grot[:, -3], grot[:, -2], grot[:, -1]
    hip_new = quat.mul(r_hip, g_hip)
    knee_new = quat.mul(quat.mul(r_knee, r_hip), g_knee)
    ankle_new = quat.mul(heel, quat.mul(heading(turn), g_ankle))
    hip, knee, ankle = legs.chains[sides, -3], legs.chains[sides, -2], legs.chains[sides, -1]
    rot[frames, hip] = quat.normalize(quat.mul(quat.conj(parent), hip_new))
    rot[frames, knee] = quat.normalize(quat.mul(quat.conj(hip_new), knee_new))
    rot[frames, ankle] = quat.normalize(quat.mul(quat.conj(knee_new), ankle_new))
    return rot


__all__ = ["FeetSettings", "FeetState", "Legs", "body_scales", "leg_globals", "plant"]
