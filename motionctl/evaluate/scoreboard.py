"""How a controller's motion looks and answers, measured the same way for every engine (DESIGN.md
3.7): by the scoreboard (bench/bench_scoreboard.py), the field's benchmark and the Preview panel's
Compare box, always from what a ``Session`` played.

How a run looks (feet, poses, length) is ``evaluate.looks``: one module for the scoreboard, the
Compare box and the command line.

Responses: a command that changes the wanted direction (by at least ``min_change``), speed (by at
least 30% and 0.3 m/s) or asks to stop (a speed below ``STAND_SPEED`` after one above it) starts a
trial, when the character's own heading or speed then is that far from the new one too; the
response time is the time from that decision until the heading (the root frame's yaw) is within 5°
of the new direction, the speed (the ground speed averaged over one second, a stride) within 10% of
the new speed, or that speed below ``STAND_SPEED`` (standing), and stays there for ``hold`` seconds
(or until the command changes).  Every trial counts: one not reached within ``limit`` seconds, or
before the next command replaced it, is a miss (inf); only a trial the run's end cut short of
``limit`` + ``hold`` seconds is not counted.  ``response_spread`` reports the share reached beside
the median and p90 of those reached.

Discontinuity: at every switch (a decision that does not simply continue the captured clip it
played: a jump to another clip or frame, a blend, a motion field's every frame) the largest jump
of any joint's velocity, angular (deg/s, local rotations) and linear (m/s, world positions),
across the switch's two frames; ``velocity_jumps`` gives the same per frame for the source
capture's own figure.

Path following: the character is steered along a polyline as a player would (toward the point
``lead`` metres ahead of the nearest point on it); the error is every frame's distance to it.
"""

from __future__ import annotations

import os
import time
import tracemalloc
from dataclasses import dataclass

import numpy as np

from .. import quat
from ..clip import resample
from .looks import PoseReference, capture_looks, looks, targets_missed
from ..engines import load_model
from ..jobs import check_stop
from ..rootframe import root_frame, to_local, to_world, wrap, yaw_of
from ..play.session import Session
from ..play.commands import Command, PlaySettings

HEADING_TOLERANCE = float(np.radians(5.0))
SPEED_TOLERANCE = 0.1  # share of the new speed
SPEED_WINDOW = 1.0  # s: speed is averaged over a stride
MIN_TURN = float(np.radians(30.0))  # a change of direction smaller than this is no trial
MIN_SPEED_CHANGE = (0.3, 0.3)  # a change of speed is a trial when it is at least 30% and 0.3 m/s
STAND_SPEED = 0.2  # m/s over a stride: standing (and a command asking less asks to stop)


# --------------------------------------------------------------------------- what a session played

@dataclass(eq=False)
class Run:
    """A session's motion and what was asked: ``clip``; per decision its first frame ``start`` [S],
    ``heading`` [S] (the command's world direction, nan without one), ``speed`` [S] (the speed
    asked) and ``switch`` [S] (``switches``)."""

    clip: object
    start: np.ndarray
    heading: np.ndarray
    speed: np.ndarray
    switch: np.ndarray

    @property
    def fps(self) -> float:
        return self.clip.fps


def switches(steps) -> np.ndarray:
    """[S] bool: the decisions that do not simply continue the captured clip played before (see
    the module docstring).  Engine frames say so themselves (``Step.switch``; None: every frame is
    a new blend)."""
    steps = list(steps)
    out = np.ones(len(steps), dtype=bool)
    if not steps:
        return out
    frames = np.array([s.frames is not None for s in steps])
    own = np.array([bool(s.switch) if s.switch is not None else True for s in steps])
    single = np.array([s.single for s in steps])
    heavy = np.array([s.heaviest() if s.frames is None else (-1, -1, 0) for s in steps], dtype=np.int64).reshape(-1, 3)
    cont = np.zeros(len(steps), dtype=bool)
    cont[1:] = single[1:] & single[:-1] & (heavy[1:, 0] == heavy[:-1, 0]) & (heavy[1:, 1] == heavy[:-1, 1] + heavy[:-1, 2])
    out = np.where(frames, own, ~cont)
    out[0] = False  # the first decision starts the run: nothing to jump from
    return out


def run_of(session: Session, name: str = "run") -> Run:
    """The ``Run`` of everything a session played."""
    counts = np.array([len(r) for r in session.roots], dtype=np.int64)
    heading = np.array([c.heading if c.heading is not None else np.nan for c in session.commands], dtype=float)
    speed = np.array([c.speed if c.speed is not None else float(np.hypot(*c.control[:2])) for c in session.commands])
    return Run(session.clip(name), np.cumsum(counts) - counts, heading, speed, switches(session.steps))


def _held_on(ok: np.ndarray, need: int) -> np.ndarray:
    """Frames from which ``need`` frames in a row are ``ok``."""
    if len(ok) < need:
        return np.zeros(0, dtype=np.int64)
    return np.flatnonzero(np.convolve(ok.astype(np.int64), np.ones(need, dtype=np.int64), "valid") == need)


def _first_held(ok: np.ndarray, need: int) -> int | None:
    """The first frame from which ``ok`` holds ``need`` frames in a row, or to the end of ``ok``
    (a command replaced while it was held was reached); None: never."""
    hit = _held_on(ok, need)
    if len(hit):
        return int(hit[0])
    bad = np.flatnonzero(~ok)
    tail = int(bad[-1]) + 1 if len(bad) else 0  # ok from here to the end
    return tail if tail < len(ok) else None


def ground_speed(clip) -> np.ndarray:
    """[F] the root's ground speed (m/s) averaged over ``SPEED_WINDOW`` (a stride), centred."""
    ground = clip.root_pos[:, :2]
    w = max(1, round(SPEED_WINDOW * clip.fps))
    pad = np.pad(ground, ((w // 2, w - w // 2), (0, 0)), mode="edge")
    return np.linalg.norm(pad[w:] - pad[:-w], axis=1) * clip.fps / w


def _trial_starts(run: Run, what: str, min_change: float):
    """(changed [S] bool: the decisions that start a trial, same [S] bool: the decisions that
    repeat the one before, values [S] the asked value, measure(target) -> [F] bool)."""
    fps = run.fps
    if what == "direction":
        h = run.heading
        prev = np.concatenate(([np.nan], h[:-1]))
        _, yaw = root_frame(run.clip, 0.2)
        facing = yaw[np.maximum(run.start - 1, 0)]  # where the character faces when it is asked
        new = np.isfinite(h) & (~np.isfinite(prev) | (np.abs(wrap(h - np.nan_to_num(prev))) > 1e-6))
        changed = new & (np.abs(wrap(np.nan_to_num(h) - facing)) >= min_change)
        same = np.isfinite(h) & np.isfinite(prev) & (np.abs(wrap(h - np.nan_to_num(prev))) <= 1e-6)
        measure = lambda target: np.abs(wrap(yaw - target)) < HEADING_TOLERANCE  # noqa: E731
        values = h
    elif what in ("speed", "stop"):
        v = run.speed
        prev = np.concatenate(([v[0]], v[:-1]))
        step = np.abs(v - prev)
        same = step < 1e-6
        speed = ground_speed(run.clip)
        w = max(1, round(SPEED_WINDOW * fps))
        was = speed[np.maximum(run.start - w // 2, 0)]  # over the stride before the change
        if what == "speed":
            gap = np.abs(v - was)
            changed = (v >= STAND_SPEED) & (step >= MIN_SPEED_CHANGE[1]) & \
                (step >= MIN_SPEED_CHANGE[0] * np.maximum(v, prev)) & \
                (gap >= MIN_SPEED_CHANGE[1]) & (gap >= MIN_SPEED_CHANGE[0] * np.maximum(v, was))
            measure = lambda target: np.abs(speed - target) <= SPEED_TOLERANCE * max(target, 0.1)  # noqa: E731
        else:
            changed = (v < STAND_SPEED) & (prev >= STAND_SPEED) & (was >= STAND_SPEED)
            measure = lambda target: speed < STAND_SPEED  # noqa: E731
        values = v
    else:
        raise ValueError(f"what must be 'direction', 'speed' or 'stop', not {what!r}")
    changed = changed.copy()
    changed[0] = False
    return changed, same, values, measure


def responses(run: Run, what: str = "direction", limit: float = 6.0, hold: float = 0.3,
              min_change: float = MIN_TURN) -> np.ndarray:
    """Response times (s; inf: a miss) of every direction, speed or stop trial in a run (see the
    module docstring: every trial counts)."""
    fps = run.fps
    n = run.clip.n_frames
    need = max(1, round(hold * fps))
    ends_frame = np.append(run.start[1:], n)
    changed, same, values, measure = _trial_starts(run, what, min_change)
    out = []
    for i in np.flatnonzero(changed).tolist():
        held = i + 1
        while held < len(same) and same[held]:
            held += 1
        a, b = int(run.start[i]), int(ends_frame[held - 1])
        cut = held >= len(same)  # held until the run ended, not replaced by another command
        ok = measure(values[i])[a:b]
        first = _held_on(ok, need) if cut else None
        hit = (int(first[0]) if len(first) else None) if cut else _first_held(ok, need)
        if hit is not None and hit / fps <= limit:
            out.append(hit / fps)
        elif not cut or (b - a) / fps >= limit + hold:
            out.append(np.inf)
    return np.array(out, dtype=float)


def response_spread(values) -> dict:
    """{"median", "p90" of the trials reached, "reached": their share, "n": trials} of response
    times (inf: a miss; nan: no trial, left out)."""
    v = np.asarray(values, dtype=float).ravel()
    v = v[~np.isnan(v)]
    ok = v[np.isfinite(v)]
    q = lambda p: float(np.quantile(ok, p, method="inverted_cdf")) if len(ok) else None  # noqa: E731
    return {"median": q(0.5), "p90": q(0.9), "reached": float(len(ok) / len(v)) if len(v) else None, "n": int(len(v))}


def velocity_jumps(clip, pos=None) -> tuple[np.ndarray, np.ndarray]:
    """([F] deg/s, [F] m/s): at every frame, the largest change of any joint's angular velocity
    (its local rotation's) and linear velocity (its world position's) over the frames before and
    after it (0 at the first and last two frames)."""
    n = clip.n_frames
    deg, lin = np.zeros(n), np.zeros(n)
    if n < 3:
        return deg, lin
    q = clip.local_rot
    w = quat.log(quat.mul(q[1:], quat.conj(q[:-1]))) * clip.fps  # [F-1, J, 3]: from frame k to k+1
    pos = clip.world()[0] if pos is None else pos
    v = np.diff(pos, axis=0) * clip.fps
    deg[1:-1] = np.degrees(np.linalg.norm(np.diff(w, axis=0), axis=-1).max(axis=1))
    lin[1:-1] = np.linalg.norm(np.diff(v, axis=0), axis=-1).max(axis=1)
    return deg, lin


def discontinuity(run: Run, pos=None) -> dict:
    """{"deg_s": [K], "m_s": [K]}: at each of the run's K switches, the largest joint-velocity jump
    (angular, linear) over the switch's two frames (see the module docstring)."""
    deg, lin = velocity_jumps(run.clip, pos)
    s = run.start[run.switch]
    s = s[(s >= 1) & (s < run.clip.n_frames - 1)]
    return {"deg_s": np.maximum(deg[s], deg[s - 1]), "m_s": np.maximum(lin[s], lin[s - 1])}


def natural_jumps(clips, fps: float | None = None) -> dict:
    """{"deg_s": [F], "m_s": [F]}: the same jump at every frame of the source capture, as a switch's
    is taken (the larger over a frame and the one before), at ``fps`` (a run's own rate; default
    the clips'): what a perfectly seamless switch would show.  A velocity's change from one frame
    to the next grows with the time between them (at 30 fps CMU's walks change twice as much as at
    120 fps), so a run is judged against its capture at the rate it plays."""
    out = []
    for c in clips:
        c = resample(c, fps) if fps else c
        if c.n_frames >= 4:
            d, m = velocity_jumps(c)
            out.append((np.maximum(d[2:-1], d[1:-2]), np.maximum(m[2:-1], m[1:-2])))
    return {"deg_s": np.concatenate([d for d, _ in out]), "m_s": np.concatenate([m for _, m in out])}


def spread(values) -> dict:
    """{"median", "p90", "n"} of values (inf allowed: a median of inf means most never got there;
    nan, no trial, left out)."""
    v = np.asarray(values, dtype=float).ravel()
    v = v[~np.isnan(v)]
    if len(v) == 0:
        return {"median": None, "p90": None, "n": 0}
    q = lambda p: float(np.quantile(v, p, method="inverted_cdf"))  # noqa: E731
    return {"median": q(0.5), "p90": q(0.9), "n": int(len(v))}


def measure(session: Session, reference: PoseReference | None = None, trace_seconds: float | None = None) -> dict:
    """Everything the Compare box shows of one run: how it looks (``looks``: skating, sliding,
    pose distance against ``reference``, root height, run and trace seconds), direction and speed
    direction, speed and stop responses (``response_spread``: reached share, median and p90 of those
    reached), discontinuities at switches (each as median, p90 and count)."""
    run = run_of(session)
    pos, rot = run.clip.world()  # once, for the feet and the jumps
    disc = discontinuity(run, pos)
    return {"seconds": run.clip.n_frames / run.fps, "decisions": int(len(run.start)),
            **looks(run.clip, reference, trace_seconds, pos, rot),
            **{f"{w}_s": response_spread(responses(run, w)) for w in ("direction", "speed", "stop")},
            "switches": int(run.switch.sum()), "jump_deg_s": spread(disc["deg_s"]), "jump_m_s": spread(disc["m_s"])}


def timed_decisions(session: Session, commands, times=None, seconds: float | None = None) -> np.ndarray:
    """Play ``commands`` one decision each (or, with their ``times``, on that clock for exactly
    ``seconds``, as ``Session.play``), returning the milliseconds each decision took
    (``Session.decide``: the engine's choice and its synthesis, feet locked)."""
    out = []
    if times is None:
        for command in commands:
            t0 = time.perf_counter()
            session.decide(command)
            out.append((time.perf_counter() - t0) * 1e3)
        return np.array(out)
    times = np.asarray(times, dtype=float)
    target = int(round(float(seconds) * session.fps))
    while session.n_frames < target:
        i = max(int(np.searchsorted(times, session.n_frames / session.fps + 1e-9, side="right")) - 1, 0)
        t0 = time.perf_counter()
        session.decide(commands[i])
        out.append((time.perf_counter() - t0) * 1e3)
    session.trim(target)
    return np.array(out)


def model_memory(path, clips) -> dict:
    """{"file_bytes": the saved model's size, "held_bytes": what loading it and building its frame
    table from ``clips`` hold (traced allocations)}."""

    tracemalloc.start()
    try:
        model = load_model(path)
        table = model.frame_table(clips)
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    del model, table
    return {"file_bytes": os.path.getsize(path), "held_bytes": int(held)}


def timeline(session: Session) -> tuple[np.ndarray, list]:
    """(the time [S] in seconds at which each decision was made, its command): a run's commands
    on a clock, to replay them through another engine whatever its decision rate."""
    counts = np.array([len(r) for r in session.roots], dtype=float)
    return (np.cumsum(counts) - counts) / session.fps, list(session.commands)


def replay(model, table, times, commands, seconds: float | None = None, play: PlaySettings | None = None,
           should_stop=None) -> Session:
    """A session of ``model`` given, at every decision, the command that was active then on the
    clock of ``times`` [S] (a ``timeline``), for exactly ``seconds`` (default: until the last
    command's time plus 1 s; ``Session.play``)."""
    times = np.asarray(times, dtype=float)
    if len(times) == 0 or len(commands) != len(times):
        raise ValueError("a replay needs one command per time, and at least one")
    seconds = float(times[-1] + 1.0) if seconds is None else float(seconds)
    session = Session(model, table, play=play or PlaySettings())
    session.play(times, commands, seconds, should_stop)
    return session


def compare(players, times, commands, clips, play: PlaySettings | None = None, progress=None, should_stop=None,
            seconds: float | None = None) -> dict:
    """The same commands (a ``timeline``) through every one of ``players`` [(engine name, label,
    saved model path)] playing the library ``clips``: {"rows": [{"engine", "label", **measure}],
    "source": the clips' skating}.  What the Preview panel's Compare button runs (in a job: models
    load here)."""

    rows = []
    reference = PoseReference.of(clips)
    for k, (name, label, path) in enumerate(players):
        if progress is not None:
            progress(k / max(len(players), 1), f"{label}: playing the run")
        check_stop(should_stop, "comparing engines")
        model = load_model(path)
        table = model.frame_table(clips)
        session = replay(model, table, times, commands, seconds, play, should_stop=should_stop)
        asked = float(times[-1] + 1.0) if seconds is None else float(seconds)  # what replay was asked to play
        rows.append({"engine": name, "label": label, **measure(session, reference, asked)})
    source = capture_looks(clips, reference)
    for r in rows:
        r["missed"] = targets_missed(r, source)
    return {"rows": rows, "source": source}


def picture(rows, source_skating: float | None = None, width: int = 300, height: int = 200):
    """(RGBA [height, width, 4] rows bottom-up, caption) of compared runs: the median response to a
    new direction against foot skating, one point per run in its engine's colour (its "marker":
    "o" disc by default, "s" square)."""
    from .plot import bottom_up, colour, scatter

    pts = [(r["skating"], r["direction_s"]["median"] if r["direction_s"]["median"] is not None else np.inf,
            colour(r["engine"]),
            r.get("marker", "o")) for r in rows]
    finite = [y for _, y, _, _ in pts if np.isfinite(y)]
    x_max = max([x for x, _, _, _ in pts] + [source_skating or 0.0, 0.05]) * 1.2
    img = scatter(pts, x_max, max(finite + [1.0]) * 1.25, vline=source_skating, width=width, height=height)
    return bottom_up(img), "direction response (s) against foot skating; cross: none measured or never reached"


# --------------------------------------------------------------------------- designed trials

def _settle(model, table, frame: int, settle: float, speed: float | None = None, play=None) -> Session:
    session = Session(model, table, frame=frame, play=play)
    for _ in range(max(1, round(settle * model.decision_rate))):
        session.decide(Command(heading=session.synth.yaw, speed=speed))
    return session


def response_time(model, table, frame: int, angle: float, settle: float = 0.5, limit: float = 6.0,
                  tolerance: float = HEADING_TOLERANCE, hold: float = 0.3, line: bool = False,
                  line_offset: float = 0.0, line_tolerance: float = 0.1, play: PlaySettings | None = None,
                  record: dict | None = None) -> float:
    """Seconds until the model, started at table row ``frame`` and walking on for ``settle``
    seconds, faces a direction turned by ``angle`` (radians) and keeps it (``responses``); inf when
    not within ``limit``.  ``line``: the command is a line through a point ``line_offset`` metres
    to the side, in the new direction, and the response also needs the character within
    ``line_tolerance`` of it.  ``play``: how the session plays (default: the data's root motion)."""
    session = _settle(model, table, frame, settle, play=play)
    n0 = session.n_frames
    yaw0, ground0 = session.synth.yaw, session.synth.ground.copy()
    target = yaw0 + angle
    side = np.array([np.cos(target), np.sin(target)])  # the new direction's right, in the world
    point = ground0 + line_offset * side
    command = Command(heading=target, line=np.array([point[0], point[1], target]) if line else None)
    while (session.n_frames - n0) / table.fps < limit + hold:
        session.decide(command)
    clip = session.clip()
    ground, yaw = root_frame(clip, 0.2)
    ok = np.abs(wrap(yaw[n0:] - target)) < tolerance
    if line:
        ok &= np.abs(to_local(ground[n0:] - point, target)[:, 0]) < line_tolerance
    hit = _held_on(ok, max(1, round(hold * table.fps)))
    t = hit[0] / table.fps if len(hit) else np.inf
    if record is not None:
        record.update({"t": (np.arange(len(yaw) - n0) / table.fps).tolist(), "asked": float(np.degrees(angle)),
                       "heading": np.degrees(np.unwrap(yaw[n0 - 1:]) - yaw0)[1:].tolist()})
    return float(t) if t <= limit else float("inf")


def speed_response_time(model, table, frame: int, before: float, after: float, settle: float = 2.0,
                        limit: float = 6.0, hold: float = 0.3, play: PlaySettings | None = None,
                        record: dict | None = None) -> dict:
    """{"speed": seconds until the model, walking straight at ``before`` m/s for ``settle`` seconds,
    moves at ``after`` m/s (within 10%, averaged over a stride) and keeps it (``responses``; inf when
    not within ``limit``, and when it was not moving at ``before`` either when asked: it follows no
    speed), "settled": its mean speed over the last 2 s over ``after`` (where it ends up when it never
    gets there)}.  ``after`` below ``STAND_SPEED`` is a stop (``stop_response_time``).  ``record``:
    filled with the trial's course ("t" [F] s from the command, "asked" m/s, "speed" [F] m/s over a
    stride), the settling included (negative times)."""
    step = abs(after - before)
    if after >= STAND_SPEED and (step < MIN_SPEED_CHANGE[1] or step < MIN_SPEED_CHANGE[0] * max(before, after)):
        raise ValueError(f"a speed change from {before} to {after} m/s is too small to time (30% and 0.3 m/s)")
    session = _settle(model, table, frame, settle, before, play)
    yaw, n0 = session.synth.yaw, session.n_frames
    while (session.n_frames - n0) / table.fps < limit + hold + SPEED_WINDOW:
        session.decide(Command(heading=yaw, speed=after))
    run = run_of(session)
    t = responses(run, "stop" if after < STAND_SPEED else "speed", limit, hold)
    if record is not None:
        w = max(1, round(SPEED_WINDOW * table.fps))
        keep = slice(w // 2, run.clip.n_frames - (w - w // 2))  # a whole stride on both sides of each frame
        record.update({"t": ((np.arange(run.clip.n_frames) - n0) / table.fps)[keep].tolist(), "asked": float(after),
                       "before": float(before), "speed": ground_speed(run.clip)[keep].tolist()})
    ground = run.clip.root_pos[-round(2.0 * table.fps):, :2]
    moved = float(np.linalg.norm(np.diff(ground, axis=0), axis=1).sum() / 2.0)
    return {"speed": float(t[-1]) if len(t) else float("inf"),
            "settled": moved / after if after >= STAND_SPEED else moved}


def stop_response_time(model, table, frame: int, before: float, settle: float = 2.0, limit: float = 6.0,
                       hold: float = 0.3, play: PlaySettings | None = None) -> dict:
    """{"stop": seconds until the model, moving straight at ``before`` m/s for ``settle`` seconds and
    then asked to stand (speed 0, the same heading), stands (ground speed over a stride below
    ``STAND_SPEED``) and keeps standing (inf: not within ``limit``, or it was not moving when
    asked), "settled": its mean speed (m/s) over the last 2 s}."""
    got = speed_response_time(model, table, frame, before, 0.0, settle, limit, hold, play)
    return {"stop": got["speed"], "settled": got["settled"]}


def path_commands(path: np.ndarray, ground, speed: float, progress: float = 0.0, lead: float = 1.0,
                  window: float = 3.0) -> tuple[Command, float, float]:
    """(the command a player gives to follow ``path`` [P, 2] from ``ground``, the distance to the
    path, the progress along it): walk toward the point ``lead`` metres past the nearest point of
    the path within ``window`` metres ahead of the progress so far (a path may cross itself)."""
    seg = np.diff(path, axis=0)
    length = np.linalg.norm(seg, axis=1)
    cum = np.concatenate(([0.0], np.cumsum(length)))
    rel = np.asarray(ground, float) - path[:-1]
    t = np.clip(np.einsum("sd,sd->s", rel, seg) / np.maximum(length**2, 1e-12), 0.0, 1.0)
    at = cum[:-1] + t * length
    lo, hi = progress - 0.5, progress + window
    t = np.where(at < lo, np.clip((lo - cum[:-1]) / np.maximum(length, 1e-12), 0.0, 1.0), t)
    at = cum[:-1] + t * length
    d = np.linalg.norm(path[:-1] + t[:, None] * seg - ground, axis=1)
    d = np.where((cum[1:] >= lo) & (cum[:-1] <= hi), d, np.inf)
    i = int(np.argmin(d))
    now = max(progress, float(at[i]))
    s = now + lead
    k = int(np.clip(np.searchsorted(cum, s) - 1, 0, len(seg) - 1))
    aim = path[k] + seg[k] * min(1.0, (s - cum[k]) / max(length[k], 1e-12))
    return Command(heading=float(yaw_of(aim - ground)), speed=speed), float(d[i]), now


def path_distance(path: np.ndarray, points: np.ndarray) -> np.ndarray:
    """[N] distance of each point [N, 2] to the polyline ``path`` [P, 2]."""
    a, seg = path[:-1], np.diff(path, axis=0)
    rel = points[:, None, :] - a[None]
    t = np.clip(np.einsum("nsd,sd->ns", rel, seg) / np.maximum(np.einsum("sd,sd->s", seg, seg), 1e-12), 0.0, 1.0)
    return np.linalg.norm(rel - t[..., None] * seg[None], axis=-1).min(axis=1)


def follow_path(model, table, frame: int, path_local: np.ndarray, speed: float, limit: float | None = None,
                settle: float = 1.0, play: PlaySettings | None = None) -> dict:
    """Steer a model along ``path_local`` [P, 2] (metres, in the starting character's frame: x right,
    y forward; the path starts where it stands) at ``speed``: {"errors": [F] every frame's distance
    to the path after the first ``settle`` seconds, "reached": whether its end was reached,
    "seconds": the time taken, "session"}."""
    session = Session(model, table, frame=frame, play=play)
    path = session.synth.ground + to_world(np.asarray(path_local, float), session.synth.yaw)
    total = float(np.linalg.norm(np.diff(path, axis=0), axis=1).sum())
    limit = limit if limit is not None else 3.0 * total / max(speed, 0.1) + 5.0
    progress, reached = 0.0, False
    while session.n_frames / table.fps < limit:
        command, _, progress = path_commands(path, session.synth.ground, speed, progress)
        reached = progress >= total - 0.3
        if reached:
            break
        session.decide(command)
    clip = session.clip()
    skip = round(settle * table.fps)
    return {"errors": path_distance(path, clip.root_pos[skip:, :2]), "reached": bool(reached),
            "seconds": session.n_frames / table.fps, "session": session}


__all__ = ["Run", "compare", "discontinuity", "follow_path",
           "measure", "model_memory", "natural_jumps", "path_commands", "path_distance", "picture", "replay", "ground_speed", "responses", "response_spread", "response_time",
           "run_of", "speed_response_time", "spread", "stop_response_time", "switches", "timed_decisions", "timeline", "velocity_jumps"]
