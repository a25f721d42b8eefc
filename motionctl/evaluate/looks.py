"""What an animator sees in a run, in numbers: the one module the scoreboard, the Compare box, the
engines' summary boxes and the command line measure motion with.

- Feet: ``body.contacts.foot_skating`` (contacts from ankle, toe and toe tip with hysteresis; the
  share of contact frames that slide, the sliding distance per contact).
- Poses: each frame's distance to the nearest captured pose (``PoseReference``).  A pose is the
  body's joints relative to the root joint, in the root frame (x right, y forward, z up), and how
  they move: each joint's displacement over the next ``MOTION_SECONDS`` in the same terms (so a
  frozen pose that should be striding is as far from capture as a pose no clip holds).  The
  distance is the root mean square over joints of the difference of both, in metres.  The capture's
  own figure is the same for each clip against the others (``held_out``: leave one clip out, and its
  mirror image), the bar a run's poses are read against.  The reference holds every clip and its
  mirror image: a mirrored step is as plausible as the captured one.
- The root's height (p5, p95) against the capture's: a crouched glide shows there too.
- Length: a run plays as long as the trace it answers (``run_seconds`` beside ``trace_seconds``).
- Following the command: the character's heading and ground position against the *capsule*, the
  command integrated exactly (what a game moves; paper 000's game fixes the root to it).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..arrays import window_sums
from ..body.contacts import ContactSettings, foot_points, foot_skating, points_skating, rest_heights, skating_of, skating_frames
from ..body.mirror import mirror_clip, mirror_source
from ..clip import Clip, resample
from ..play.commands import Trace
from ..rootframe import integrate, root_frame, to_local, wrap
from .reach import library_reach

RATE = 30.0  # fps poses are compared at
MOTION_SECONDS = 0.1
BLOCK = 2048  # query rows per block of the nearest-pose search (bounded memory)


# --------------------------------------------------------------------------- poses

def pose_features(clip: Clip, rate: float = RATE) -> np.ndarray:
    """[F', 6J] float32 of a clip resampled to ``rate``: its root-relative joint positions and their
    displacement over ``MOTION_SECONDS``, scaled so the Euclidean distance between two rows is the
    root mean square over joints (metres; see the module docstring)."""
    c = resample(clip, rate) if abs(clip.fps - rate) > 1e-6 else clip
    pos, _ = c.world()
    _, yaw = root_frame(c, 0.2)
    rel = pos - pos[:, :1]
    rel[..., :2] = to_local(rel[..., :2], yaw[:, None])
    k = min(max(1, int(round(MOTION_SECONDS * rate))), len(rel) - 1)
    moved = np.zeros_like(rel)
    if k > 0:  # the displacement over the next k frames (the last k frames: over the k before them)
        moved[:-k] = rel[k:] - rel[:-k]
        moved[-k:] = rel[-k:] - rel[-2 * k:-k] if len(rel) >= 2 * k else moved[max(len(rel) - 2 * k, 0)]
    feats = np.concatenate((rel, moved), axis=1).reshape(len(rel), -1)
    return (feats / np.sqrt(pos.shape[1])).astype(np.float32)


def nearest_distance(queries: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """[Q] Euclidean distance of each query row to its nearest reference row (blocked brute force:
    exact, memory bounded by ``BLOCK``)."""
    ref = np.asarray(reference, dtype=np.float32)
    r2 = np.einsum("nd,nd->n", ref, ref)
    out = np.empty(len(queries))
    for a in range(0, len(queries), BLOCK):
        q = np.asarray(queries[a:a + BLOCK], dtype=np.float32)
        d2 = np.einsum("nd,nd->n", q, q)[:, None] - 2.0 * (q @ ref.T) + r2[None]
        out[a:a + BLOCK] = np.sqrt(np.maximum(d2.min(axis=1), 0.0))
    return out


@dataclass(eq=False)
class PoseReference:
    """The captured poses a run is measured against: ``features`` [N, D] of every clip and its
    mirror image, ``owner`` [N] the library clip each row came from, ``heights`` the root heights."""

    features: np.ndarray
    owner: np.ndarray
    names: list
    heights: np.ndarray
    rate: float = RATE
    rest: np.ndarray | None = None  # [2, P] the capture's planted heights of the foot points
    toe_limit: float | None = None  # m/s: the capture's fastest toe (``toe_speeds``)
    own_rows: np.ndarray | None = None  # [clips] each clip's own rows (before its mirror image's)

    @classmethod
    def of(cls, clips, rate: float = RATE, mirror: bool = True) -> "PoseReference":
        """The reference of library clips (a model's working clips too: their mirror images are
        left out, every clip is mirrored here)."""
        clips = [c for c in clips if c.n_frames >= 2 and "mirrored" not in c.tags]
        if not clips:
            raise ValueError("no captured clip of at least 2 frames to measure poses against")
        feats, owner, names, heights, feet, toes, rows = [], [], [], [], [], [], []
        for i, c in enumerate(clips):
            names.append(mirror_source(c.name)[0])
            heights.append(c.root_pos[:, 2])
            pos, rot = c.world()  # once, for the feet and the toes
            feet.append(foot_points(c, pos, rot))
            toes.append(float(toe_speeds(c, pos, rot).max()))
            for k, m in enumerate((c, mirror_clip(c)) if mirror else (c,)):
                f = pose_features(m, rate)
                feats.append(f)
                owner.append(np.full(len(f), i))
                if k == 0:
                    rows.append(len(f))
        return cls(np.concatenate(feats), np.concatenate(owner), names, np.concatenate(heights), rate,
                   rest_heights(np.concatenate(feet)), max(toes), np.array(rows))

    def distance(self, clip: Clip) -> np.ndarray:
        """[F'] each frame's (at ``rate``) distance to the nearest captured pose (metres)."""
        return nearest_distance(pose_features(clip, self.rate), self.features)

    def held_out_by_clip(self) -> dict:
        """{clip index: each of its rows' (its frames, then its mirror image's) distance to the
        nearest pose of the *other* clips and their mirror images}; none for a lone clip."""
        out = {}
        for i in np.unique(self.owner):
            mine = self.owner == i
            if not mine.all():
                out[int(i)] = nearest_distance(self.features[mine], self.features[~mine])
        return out

    def held_out(self, by_clip: dict | None = None) -> np.ndarray:
        """Every captured frame's distance to the nearest pose of the *other* clips (and their
        mirror images): what plausible unseen capture scores (``by_clip``: ``held_out_by_clip``
        when already known)."""
        out = list((self.held_out_by_clip() if by_clip is None else by_clip).values())
        return np.concatenate(out) if out else np.zeros(0)


def spread_of(values) -> dict:
    """{"p50", "p95"} of values (None for none)."""
    v = np.asarray(values, dtype=float)
    if v.size == 0:
        return {"p50": None, "p95": None}
    return {"p50": float(np.percentile(v, 50)), "p95": float(np.percentile(v, 95))}


# --------------------------------------------------------------------------- following the command

def capsule(times, controls, fps: float, n_frames: int, ground0, yaw0: float) -> tuple[np.ndarray, np.ndarray]:
    """(ground [N, 2], yaw [N]) of the capsule: the local controls [S, 4] (vx right, vy forward,
    turn; each from its time [S] on) integrated exactly, frame by frame at ``fps``, from (ground0,
    yaw0), the yaw and position after each frame."""
    t = np.arange(n_frames) / fps
    i = np.clip(np.searchsorted(np.asarray(times, float), t + 1e-9, side="right") - 1, 0, len(controls) - 1)
    return integrate(np.asarray(controls, float)[i, :3] / fps, ground0, yaw0)


def command_error(clip: Clip, times, controls, ground0=(0.0, 0.0), yaw0: float = 0.0) -> dict:
    """How far the character was from the capsule (``capsule``): {"heading_deg": p50/p95 of the
    heading error (the root frame's smoothed yaw), "position_m": p50/p95 of the ground distance}."""
    ground, yaw = root_frame(clip, 0.2)
    cg, cy = capsule(times, controls, clip.fps, clip.n_frames, ground0, yaw0)
    return {"heading_deg": spread_of(np.degrees(np.abs(wrap(yaw - cy)))),
            "position_m": spread_of(np.linalg.norm(ground - cg, axis=1))}


# --------------------------------------------------------------------------- one run

def height_spread(z) -> dict:
    """{"p5", "p95"} of root heights (m)."""
    return {"p5": float(np.percentile(z, 5)), "p95": float(np.percentile(z, 95))}


def root_height(clip: Clip) -> dict:
    """{"p5", "p95"} of the root's height (m)."""
    return height_spread(clip.root_pos[:, 2])


BACKWARD = 0.3  # m/s: hips travelling against their facing faster than this go backwards


def backward_seconds(clip: Clip, speed: float = BACKWARD, window: float = 0.2) -> float:
    """Seconds the hips travel backwards: their ground velocity over ``window`` s (the position's
    change, so a step's sway cancels) against the facing by more than ``speed`` m/s.  A reversal of
    the stick answered by gliding back rather than turning round shows here (captured backward
    steps count as well: compare with the capture's own)."""
    ground, yaw = root_frame(clip)
    k = max(1, int(round(window * clip.fps)))
    if clip.n_frames <= k:
        return 0.0
    v = (ground[k:] - ground[:-k]) * (clip.fps / k)
    face = yaw[k // 2: k // 2 + len(v)]
    along = v[:, 1] * np.cos(face) - v[:, 0] * np.sin(face)  # forward is (-sin, cos) of the heading
    return float(np.count_nonzero(along < -speed) / clip.fps)


def looks(clip: Clip, reference: PoseReference | None = None, trace_seconds: float | None = None, pos=None,
          rot=None) -> dict:
    """Everything above for one run: ``foot_skating``'s figures, "pose_distance" (p50/p95, with a
    reference), its worst second ("worst": ``worst_windows``, toe spikes against the reference's
    fastest toe), "root_height" and, with the trace's length, "run_seconds" beside "trace_seconds"
    (``pos``/``rot``: the clip's ``world()`` when the caller has it already)."""
    if pos is None or rot is None:
        pos, rot = clip.world()
    rest = None if reference is None else reference.rest
    out = dict(foot_skating(clip, pos=pos, rot=rot, rest=rest))
    d = None
    if reference is not None:
        d = reference.distance(clip)
        out["pose_distance"] = spread_of(d)
    if clip.n_frames >= 2:
        out["worst"] = worst_windows(clip, None, None if reference is None else reference.toe_limit, pos, rot, rest, d)
    out["root_height"] = root_height(clip)
    out["run_seconds"] = clip.n_frames / clip.fps
    if trace_seconds is not None:
        out["trace_seconds"] = float(trace_seconds)
    return out


def capture_looks(clips, reference: PoseReference | None = None) -> dict:
    """The same figures for the source capture: its skating, its held-out pose distance, its own
    worst second ("worst": ``capture_worst_windows``) and its root height range (the bars a run is
    read against)."""
    out = dict(skating_of(clips))
    held = None
    if reference is not None:
        held = reference.held_out_by_clip()
        out["pose_distance"] = spread_of(reference.held_out(held))
    out["worst"] = capture_worst_windows(clips, reference, held)
    out["reach"] = library_reach(clips)
    out["root_height"] = height_spread(np.concatenate([c.root_pos[:, 2] for c in clips]))
    return out


SLIDING_FACTOR, SLIDING_MARGIN = 2.0, 0.05  # a contact may slide twice the capture's, or 5 cm more
PLANTED_FACTOR = 0.5  # a run should have a foot down at least half as often as the capture


def targets_missed(run: dict, source: dict, skating_margin: float = 0.05, pose_factor: float = 1.5) -> list:
    """The targets a run misses against the capture, as short sentences: skating more than
    ``skating_margin`` above the capture's; a contact sliding further (median) than the capture's
    by ``SLIDING_FACTOR`` and ``SLIDING_MARGIN`` both (a slow glide: each frame under the skating
    threshold, a foot dragged over the floor all the same); a foot down on fewer frames than
    ``PLANTED_FACTOR`` of the capture's (a body hovering or frozen in the air scores no skating);
    pose distance p95 more than ``pose_factor`` times the held-out capture's; a run shorter or
    longer than its trace by more than a frame; and where both carry their worst second ("worst"),
    ``windows_missed``: an average hides a bad second."""
    out = []
    if run["skating"] > source["skating"] + skating_margin:
        out.append(f"feet slide on {100 * run['skating']:.0f}% of contact frames (capture "
                   f"{100 * source['skating']:.0f}%)")
    slide, src_slide = run.get("sliding_cm"), source.get("sliding_cm")
    if slide is not None and src_slide is not None and slide > max(SLIDING_FACTOR * src_slide,
                                                                   src_slide + 100 * SLIDING_MARGIN):
        out.append(f"a planted foot slides {slide:.0f} cm per step (capture {src_slide:.0f} cm)")
    if run.get("planted") is not None and source.get("planted") and run["planted"] < PLANTED_FACTOR * source["planted"]:
        out.append(f"a foot is on the floor on {100 * run['planted']:.0f}% of frames (capture "
                   f"{100 * source['planted']:.0f}%)")
    pd, ps = run.get("pose_distance"), source.get("pose_distance")
    if pd and ps and pd["p95"] is not None and ps["p95"] and pd["p95"] > pose_factor * ps["p95"]:
        out.append(f"poses {100 * pd['p95']:.0f} cm from any captured one (p95; held-out capture "
                   f"{100 * ps['p95']:.0f} cm)")
    if run.get("trace_seconds") is not None and abs(run["run_seconds"] - run["trace_seconds"]) > 1.5 / RATE:
        out.append(f"the run lasts {run['run_seconds']:.2f} s for a {run['trace_seconds']:.2f} s trace")
    if run.get("worst") and source.get("worst"):  # and the worst second, beside the capture's own
        out += windows_missed(run["worst"], source["worst"], skating_margin, pose_factor)
    return out


# --------------------------------------------------------------------------- the worst second

WINDOW_SECONDS = 1.0  # a run is judged by its worst window of this length (sliding, frame by frame)
MIN_COUNTED = 0.1  # seconds of counted contact (both feet) a window needs for its skating to count


def toe_speeds(clip: Clip, pos=None, rot=None) -> np.ndarray:
    """[F] the faster toe's speed (m/s, 3D: a toe that jumps up counts) from each frame to the next
    (the last frame repeats the one before)."""
    toes = foot_points(clip, pos, rot)[:, :, 1]  # [F, 2, 3]
    if len(toes) < 2:
        return np.zeros(len(toes))
    v = np.linalg.norm(np.diff(toes, axis=0), axis=-1).max(axis=1) * clip.fps
    return np.r_[v, v[-1]]


def _worst(values: np.ndarray, n: int, fps: float, largest: bool = True) -> dict:
    """{"value", "frames" [first, last], "seconds" [start, end]} of the worst window (NaN: none counts)."""
    if not np.isfinite(values).any():
        return {"value": None, "frames": None, "seconds": None}
    i = int(np.nanargmax(values) if largest else np.nanargmin(values))
    last = i + n - 1  # n: the frames a window holds (``window_sums``: all of them when fewer)
    return {"value": float(values[i]), "frames": [i, last], "seconds": [round(i / fps, 3), round((last + 1) / fps, 3)]}


def worst_windows(clip: Clip, reference: PoseReference | None = None, toe_limit: float | None = None,
                  pos=None, rot=None, rest=None, distances=None, seconds: float = WINDOW_SECONDS) -> dict:
    """A clip's worst ``seconds`` (sliding frame by frame), each figure on its own: "skating" (the
    share of counted contact frames that slide; windows with under ``MIN_COUNTED`` s of counted
    contact are left out), "planted" (the share of foot-frames on the floor: the lowest),
    "sliding_cm" (the sliding distance per contact touching the window), "toe_spikes" (frames whose
    toe is faster than ``toe_limit``, the capture's fastest) and "pose_p95" (the 95th percentile of
    the frames' distance to the nearest captured pose, at ``reference.rate``; ``distances``: those
    distances when already known).  Each as {"value", "frames" [first, last] (the clip's frames, from
    0), "seconds"}.  ``rest``: the feet's planted heights (the capture's for a run)."""
    fps = clip.fps
    n = min(max(2, int(round(seconds * fps))), clip.n_frames)  # a clip shorter than the window: one window
    if pos is None or rot is None:
        pos, rot = clip.world()
    f = skating_frames(foot_points(clip, pos, rot), fps, ContactSettings(), rest)
    counted, sliding = window_sums(f["counted"].sum(1).astype(float), n), window_sums(f["sliding"].sum(1).astype(float), n)
    skating = np.where(counted >= MIN_COUNTED * fps, sliding / np.maximum(counted, 1), np.nan)
    planted = window_sums(f["planted"].sum(1).astype(float), n) / (2 * n)
    ongoing = f["planted"] & ~f["starts"]  # a contact begun before a window's first frame counts there too
    touching = window_sums(f["starts"].sum(1).astype(float), n) + ongoing[: len(counted)].sum(1)
    sliding_cm = np.where(touching > 0, 100.0 * window_sums(f["travel"].sum(1), n) / np.maximum(touching, 1), np.nan)
    out = {"skating": _worst(skating, n, fps), "planted": _worst(planted, n, fps, largest=False),
           "sliding_cm": _worst(sliding_cm, n, fps)}
    if toe_limit is not None:
        out["toe_spikes"] = _worst(window_sums((toe_speeds(clip, pos, rot) > toe_limit).astype(float), n), n, fps)
        out["toe_limit"] = float(toe_limit)
    if reference is not None or distances is not None:
        d = reference.distance(clip) if distances is None else np.asarray(distances, float)
        rate = reference.rate if reference is not None else RATE
        m = min(max(2, int(round(seconds * rate))), len(d))
        if m >= 1 and len(d):
            view = np.lib.stride_tricks.sliding_window_view(d, m)
            w = _worst(np.percentile(view, 95, axis=1), m, rate)
            if w["frames"] is not None:  # frames at the pose rate -> the clip's
                w["frames"] = [int(round(w["frames"][0] * fps / rate)), min(clip.n_frames - 1, int(round((w["frames"][1] + 1) * fps / rate)) - 1)]
            out["pose_p95"] = w
    return out


def capture_worst_windows(clips, reference: PoseReference | None = None, held: dict | None = None,
                          seconds: float = WINDOW_SECONDS) -> dict:
    """The capture's own worst windows on the same clips (``worst_windows`` of each clip, its own
    planted heights, pose distances held out: against the other clips), the worst over clips with
    the clip named; and "toe_limit": the fastest toe of the capture (m/s), the bar a run's toe
    spikes are counted against (``held``: ``reference.held_out_by_clip()`` when already known)."""
    clips = [c for c in clips if c.n_frames >= 2 and "mirrored" not in c.tags]
    worlds = [c.world() for c in clips]  # once per clip, for the toes and the windows
    limit = reference.toe_limit if reference is not None else float(max(toe_speeds(c, *w).max() for c, w in zip(clips, worlds)))
    if reference is not None and held is None:
        held = reference.held_out_by_clip()
    own = {i: d[: reference.own_rows[i]] for i, d in (held or {}).items()}  # its mirror image's rows after
    out = {"toe_limit": limit}
    for i, (c, (pos, rot)) in enumerate(zip(clips, worlds)):
        w = worst_windows(c, None, limit, pos, rot, distances=own.get(i), seconds=seconds)
        for key, v in w.items():
            if key == "toe_limit" or v["value"] is None:
                continue
            worse = key not in out or (v["value"] < out[key]["value"] if key == "planted" else v["value"] > out[key]["value"])
            if worse:
                out[key] = dict(v, clip=c.name)
    return out


def worst_line(run: dict, capture: dict | None = None, frame_rate: float | None = None, first_frame: int = 1) -> str:
    """One line of a run's worst second, each figure where it is (seconds into the run; with a
    ``frame_rate``, the frames of an action baked from ``first_frame`` at that rate, to scrub to)
    and, with the capture's worst second, beside it: skating, the share of frames with a foot down,
    the pose distance p95 and any toe spikes."""
    capture = capture or {}

    def where(w):
        a, b = w["seconds"]
        if frame_rate:
            return f"frames {first_frame + round(a * frame_rate)}-{first_frame + round(b * frame_rate) - 1}"
        return f"{a:.1f}-{b:.1f} s"

    def part(key, text, scale, unit):
        w = run.get(key)
        if not w or w.get("value") is None:
            return None
        c = capture.get(key)
        beside = f" (capture {scale * c['value']:.0f}{unit})" if c and c.get("value") is not None else ""
        return f"{text} {scale * w['value']:.0f}{unit} at {where(w)}{beside}"

    parts = [part("skating", "skating", 100, "%"), part("planted", "a foot down", 100, "%"),
             part("pose_p95", "poses", 100, " cm")]
    spikes = run.get("toe_spikes")
    if spikes and spikes.get("value"):
        parts.append(f"{spikes['value']:.0f} toe spikes at {where(spikes)}")
    return "worst second: " + ", ".join(p for p in parts if p)


def windows_missed(run: dict, capture: dict, skating_margin: float = 0.05, pose_factor: float = 1.5) -> list:
    """The targets a run's worst windows miss against the capture's, as short sentences that say
    where (seconds into the run): skating over the capture's worst second by ``skating_margin``, a
    foot down less than ``PLANTED_FACTOR`` of the capture's worst second, a contact sliding further
    than the capture's worst second by ``SLIDING_FACTOR`` and ``SLIDING_MARGIN``, any toe faster than
    the capture's fastest, the worst second's pose p95 over ``pose_factor`` times held-out
    capture's worst second."""
    out = []

    def at(w):
        return f"at {w['seconds'][0]:.1f}-{w['seconds'][1]:.1f} s"

    def both(key):
        r, c = run.get(key), capture.get(key)
        return (r, c) if r and c and r["value"] is not None and c["value"] is not None else (None, None)

    r, c = both("skating")
    if r and r["value"] > c["value"] + skating_margin:
        out.append(f"worst second: feet slide on {100 * r['value']:.0f}% of contact frames {at(r)} (capture's worst "
                   f"second {100 * c['value']:.0f}%)")
    r, c = both("planted")
    if r and r["value"] < PLANTED_FACTOR * c["value"]:
        out.append(f"worst second: a foot is on the floor on {100 * r['value']:.0f}% of frames {at(r)} (capture's "
                   f"worst second {100 * c['value']:.0f}%)")
    r, c = both("sliding_cm")
    if r and r["value"] > max(SLIDING_FACTOR * c["value"], c["value"] + 100 * SLIDING_MARGIN):
        out.append(f"worst second: a planted foot slides {r['value']:.0f} cm per step {at(r)} (capture's worst "
                   f"second {c['value']:.0f} cm)")
    r = run.get("toe_spikes")
    if r and r["value"]:
        out.append(f"a toe moves faster than any captured toe ({run['toe_limit']:.1f} m/s) on {r['value']:.0f} "
                   f"frames {at(r)}")
    r, c = both("pose_p95")
    if r and r["value"] > pose_factor * c["value"]:
        out.append(f"worst second: poses {100 * r['value']:.0f} cm from any captured one {at(r)} (p95; held-out "
                   f"capture's worst second {100 * c['value']:.0f} cm)")
    return out


# --------------------------------------------------------------------------- a trained model

CHECK_SECONDS = 10.0  # the check trace: walk, turn left half of it, then right
CHECK_SPEED = 1.3  # m/s, or 70% of a slower model's top speed
CHECK_TURN = 0.5  # rad/s


def check_trace(model) -> Trace:
    """The trace a freshly trained model is looked at with (``model_looks``): walking forward at
    ``CHECK_SPEED`` (70% of the top speed of a slower model), turning left at ``CHECK_TURN`` for the
    first half and right for the second, ``CHECK_SECONDS`` at 10 Hz."""
    n = int(CHECK_SECONDS * 10)
    samples = np.zeros((n, 4))
    samples[:, 1] = min(CHECK_SPEED, 0.7 * model.top_speed)
    samples[: n // 2, 2], samples[n // 2:, 2] = CHECK_TURN, -CHECK_TURN
    return Trace(samples, 10.0, "check")


def model_looks(model, library) -> dict:
    """How a trained model's motion looks beside its capture, for its summary box: the model plays
    ``check_trace`` as Play Trace plays it (default play settings, feet planted) on ``library``'s
    clips, and ``looks`` measures the run against the capture (``capture_looks``).  Summary entries:
    "looks" (the run's and the capture's figures), readable "looks_skating", "looks_sliding" and
    "looks_pose" (each beside the capture's), and "looks_missed" (``targets_missed``: the summary
    box warns with it).  Never raises: a run that cannot play reports why in "looks_missed"."""
    from ..play.commands import PlaySettings
    from ..play.session import Session

    clips = list(getattr(library, "clips", library))
    try:
        reference = PoseReference.of(clips)
        source = capture_looks(clips, reference)
        trace = check_trace(model)
        table = model.frames if model.frames is not None else model.play(clips)  # bound by fit, or bind now
        run = looks(Session(model, table, play=PlaySettings()).play_trace(trace), reference, trace.duration)
    except Exception as err:  # noqa: BLE001  (the summary says what failed; training itself succeeded)
        return {"looks_missed": [f"the check run could not play: {err}"]}
    pick = ("skating", "sliding_cm", "planted", "pose_distance", "root_height", "worst")
    out = {"looks": {"run": {k: run[k] for k in pick + ("run_seconds", "trace_seconds") if k in run},
                     "capture": {k: source[k] for k in pick if k in source}},
           "looks_worst": worst_line(run.get("worst", {}), source.get("worst")),
           "looks_skating": f"{100 * run['skating']:.1f}% (capture {100 * source['skating']:.1f}%)",
           "looks_sliding": f"{run['sliding_cm']:.1f} cm (capture {source['sliding_cm']:.1f} cm)",
           "looks_missed": targets_missed(run, source),
           "library_cannot": source["reach"]["cannot"]}
    if run["pose_distance"]["p95"] is not None and source["pose_distance"]["p95"] is not None:
        out["looks_pose"] = (f"{100 * run['pose_distance']['p95']:.1f} cm (held-out capture "
                             f"{100 * source['pose_distance']['p95']:.1f} cm)")
    return out


__all__ = ["BACKWARD", "CHECK_SECONDS", "MOTION_SECONDS", "PoseReference", "RATE", "backward_seconds", "capsule", "capture_looks", "command_error", "foot_points",
           "check_trace", "looks", "model_looks", "nearest_distance", "points_skating", "pose_features", "root_height", "spread_of", "targets_missed",
           "capture_worst_windows", "toe_speeds", "windows_missed", "worst_line", "worst_windows"]
