"""Control bins, traces (files and a stochastic player), and the user model of paper 000.

A trace is a sequence of control signals ``[vx, vy, turn, airborne]`` sampled at the decision
rate (one per fragment played, 10 Hz for 0.1 s fragments).  The user model T[c, c'] is the
probability that the next signal falls in bin c' given the current one is in bin c, counted on
training traces with additive smoothing towards the players' overall habits.
"""

from __future__ import annotations

import csv
import io
import json
import os
from dataclasses import asdict, dataclass

import numpy as np

from ...errors import MotionctlError, MotionFileError
from .cut import CONTROL_COLUMNS
from .quality import QualitySettings, control_features


# ----------------------------------------------------------------------------- bins

@dataclass(eq=False)
class ControlBins:
    """Bin centres [C, 4]; a control signal belongs to the nearest centre under ControlDis."""

    centres: np.ndarray
    kind: str = "paper"
    quality: QualitySettings = None

    def __post_init__(self):
        self.centres = np.asarray(self.centres, dtype=float).reshape(-1, 4)
        if self.quality is None:
            self.quality = QualitySettings()
        if len(self.centres) == 0:
            raise MotionctlError("control bins need at least one centre")
        self._fb = control_features(self.centres, self.quality)  # the centres in ControlDis space
        self._fb2 = (self._fb * self._fb).sum(1)

    @property
    def n(self) -> int:
        return len(self.centres)

    def nearest(self, controls: np.ndarray) -> np.ndarray:
        """int [N]: bin of each control vector [N, 4] (or a single [4] -> int), nearest under
        ControlDis (eq. 11); the one bin lookup every controller and trace uses."""
        c = np.asarray(controls, dtype=float)
        single = c.ndim == 1
        fa = control_features(np.atleast_2d(c), self.quality)
        d = (fa * fa).sum(1)[:, None] - 2 * fa @ self._fb.T + self._fb2[None]
        idx = np.argmin(d, axis=1)
        return int(idx[0]) if single else idx


def ring_radii(speeds: np.ndarray, rings: int = 3, top_percentile: float = 95.0) -> np.ndarray:
    """Radii of the velocity rings: the outer one at the data's top speed (a percentile), the
    others evenly spaced in log-magnitude (eq. 12's space), e.g. ~0.7, 1.9, 4 m/s."""
    top = float(np.percentile(speeds, top_percentile)) if len(speeds) else 1.0
    top = max(top, 0.1)
    return np.expm1(np.log1p(top) * np.arange(1, rings + 1) / rings)


def paper_bins(speeds: np.ndarray, quality: QualitySettings | None = None, directions: int = 8,
               turns=(-1.0, 0.0, 1.0), airborne=(0.0, 1.0), radii=None) -> ControlBins:
    """The paper's 150 bins: 25 ground velocities (the origin and three rings of 8, radii fitted
    to ``speeds`` unless given) x turning rate {-1, 0, 1} rad/s x airborne {0, 1}."""
    radii = ring_radii(np.asarray(speeds)) if radii is None else np.asarray(radii, dtype=float)
    ang = 2 * np.pi * np.arange(directions) / directions
    vel = [np.zeros(2)] + [r * np.array([np.sin(a), np.cos(a)]) for r in radii for a in ang]
    centres = [[v[0], v[1], t, a] for v in vel for t in turns for a in airborne]
    return ControlBins(np.array(centres), "paper", quality)


def kmeans_bins(traces, k: int = 150, quality: QualitySettings | None = None, seed: int = 0) -> ControlBins:
    """Bins learned by k-means vector quantisation of trace samples in ControlDis space."""
    from sklearn.cluster import KMeans

    q = quality or QualitySettings()
    samples = np.concatenate([t.samples for t in traces])
    uniq = np.unique(samples, axis=0)
    k = min(k, len(uniq))
    if k < 1:
        raise MotionctlError("k-means bins need at least one trace sample")
    feats = control_features(samples, q)
    km = KMeans(n_clusters=k, n_init=4, random_state=seed).fit(feats)
    # Map the feature-space centres back to controls: the sample nearest each centre.
    nearest = np.argmin(((feats[:, None] - km.cluster_centers_[None]) ** 2).sum(-1), axis=0)
    return ControlBins(samples[nearest], "kmeans", q)


def bin_occupancy(bins: ControlBins, controls: np.ndarray) -> float:
    """Share of the bins that are the nearest bin of at least one control (e.g. the fragments' evident
    controls): a bin no fragment is nearest to is one the data cannot serve well."""
    return float(len(np.unique(bins.nearest(controls))) / bins.n)


# ----------------------------------------------------------------------------- traces

@dataclass(eq=False)
class Trace:
    """Control signals [T, 4] at ``rate`` samples per second."""

    samples: np.ndarray
    rate: float = 10.0
    name: str = ""

    def __post_init__(self):
        self.samples = np.asarray(self.samples, dtype=float)
        validate_samples(self.samples, self.name or "trace")
        if not self.rate > 0:
            raise MotionctlError(f"{self.name or 'trace'}: rate must be positive, got {self.rate}")

    @property
    def duration(self) -> float:
        return len(self.samples) / self.rate


def sample_problem(samples: np.ndarray) -> tuple[int | None, str] | None:
    """(row, message) of the first problem in trace samples, or None: empty, wrong width, NaN,
    or an airborne value other than 0/1."""
    if samples.ndim != 2 or samples.shape[0] == 0:
        return None, "empty trace: no control samples"
    if samples.shape[1] != 4:
        return None, f"each sample needs 4 values {CONTROL_COLUMNS}, found {samples.shape[1]}"
    bad = np.flatnonzero(~np.isfinite(samples).all(axis=1))
    if len(bad):
        col = CONTROL_COLUMNS[int(np.flatnonzero(~np.isfinite(samples[bad[0]]))[0])]
        return int(bad[0]), f"NaN or infinite value in {col}"
    air = samples[:, 3]
    bad = np.flatnonzero((air != 0) & (air != 1))
    if len(bad):
        return int(bad[0]), f"airborne must be 0 or 1, found {air[bad[0]]:g}"
    return None


def validate_samples(samples: np.ndarray, where: str) -> None:
    """Raise MotionctlError naming ``where`` (and the sample) if trace samples [T, 4] are not valid."""
    problem = sample_problem(samples)
    if problem is not None:
        row, msg = problem
        raise MotionctlError(f"{where}: {msg}" + (f" (sample {row})" if row is not None else ""))


def resample_trace(samples: np.ndarray, rate: float, target_rate: float) -> np.ndarray:
    """Trace samples [T, 4] at another rate (each output step takes the sample in force at its time)."""
    if abs(rate - target_rate) < 1e-9:
        return samples
    n = max(1, int(np.floor(len(samples) / rate * target_rate)))
    idx = np.minimum((np.arange(n) * rate / target_rate).astype(np.int64), len(samples) - 1)
    return samples[idx]


def write_trace(trace: Trace, path) -> None:
    """CSV (header ``vx,vy,turn,airborne``, a ``# rate: 10`` comment) or JSON by extension."""
    path = os.fspath(path)
    tmp = path + ".partial"
    try:
        with open(tmp, "w", encoding="utf-8", newline="") as fh:
            if path.lower().endswith(".json"):
                json.dump({"rate": trace.rate, "columns": list(CONTROL_COLUMNS), "samples": trace.samples.tolist()}, fh)
            else:
                fh.write(f"# rate: {trace.rate:g}\n")
                fh.write(",".join(CONTROL_COLUMNS) + "\n")
                np.savetxt(fh, trace.samples, delimiter=",", fmt="%.6g")
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def read_trace(path) -> Trace:
    """Read a CSV or JSON trace; any problem names the file and line (CSV) or sample (JSON)."""
    path = os.fspath(path)
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as exc:
        raise MotionFileError(path, f"cannot read trace: {exc.strerror}") from None
    name = os.path.splitext(os.path.basename(path))[0]
    if path.lower().endswith(".json"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise MotionFileError(path, f"invalid JSON: {exc.msg}", exc.lineno) from None
        if not isinstance(data, dict) or "samples" not in data:
            raise MotionFileError(path, 'expected {"rate": 10, "samples": [[vx, vy, turn, airborne], ...]}')
        rows = data["samples"]
        if not isinstance(rows, list) or not rows:
            raise MotionFileError(path, "empty trace: no control samples")
        widths = [len(r) if isinstance(r, list) else -1 for r in rows]
        bad = [i for i, w in enumerate(widths) if w != 4]
        if bad:
            raise MotionFileError(path, f"sample {bad[0]} has {max(widths[bad[0]], 0)} values, expected 4 {CONTROL_COLUMNS}")
        try:
            samples = np.array(rows, dtype=float)
        except (TypeError, ValueError):
            raise MotionFileError(path, "samples must be numbers") from None
        problem = sample_problem(samples)
        if problem is not None:
            row, msg = problem
            raise MotionFileError(path, msg if row is None else f"sample {row}: {msg}")
        return Trace(samples, float(data.get("rate", 10.0)), name)
    rate = 10.0
    lines = text.splitlines()
    data_rows, line_numbers = [], []
    for n, line in enumerate(lines, 1):
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("#"):
            key, _, value = stripped[1:].partition(":")
            if key.strip().lower() == "rate":
                try:
                    rate = float(value)
                except ValueError:
                    raise MotionFileError(path, f"bad rate {value.strip()!r}", n) from None
            continue
        if stripped.replace(" ", "").lower().startswith("vx,"):
            continue  # header
        data_rows.append(stripped)
        line_numbers.append(n)
    if not data_rows:
        raise MotionFileError(path, "empty trace: no control samples", len(lines) or 1)
    parsed = list(csv.reader(io.StringIO("\n".join(data_rows))))
    for row, n in zip(parsed, line_numbers):
        if len(row) != 4:
            raise MotionFileError(path, f"{len(row)} values, expected 4 {CONTROL_COLUMNS}", n)
        for v in row:
            try:
                float(v)
            except ValueError:
                raise MotionFileError(path, f"non-numeric value {v.strip()!r}", n) from None
    samples = np.array(parsed, dtype=float)
    problem = sample_problem(samples)
    if problem is not None:
        row, msg = problem
        raise MotionFileError(path, msg, None if row is None else line_numbers[row])
    return Trace(samples, rate, name)


# ----------------------------------------------------------------------------- player model

@dataclass
class PlayerSettings:
    """A stochastic gamepad player.  One stick sets the ground velocity in the character's frame,
    the other the turning rate, a button jumps.  Inputs are held for exponential durations,
    sometimes reversed at once, otherwise moved smoothly; turns ramp in gradually."""

    name: str = "player"
    max_speed: float = 3.5  # m/s at full stick
    hold_mean: float = 1.2  # s an input is held on average
    reversal: float = 0.15  # chance a change is a sudden reversal of direction
    forward_bias: float = 0.65  # chance a new direction is mostly forward
    stop: float = 0.12  # chance a change is letting go of the stick
    turn_chance: float = 0.35  # chance a change also starts a turn
    max_turn: float = 1.2  # rad/s at full stick
    ramp: float = 0.3  # s to move the stick to a new position (0: at once)
    turn_ramp: float = 0.5  # s for a turn to build up (0: at once)
    jump_rate: float = 0.12  # jumps per second
    jump_time: float = 0.5  # s the character stays airborne


def generate_trace(player: PlayerSettings, seconds: float, rate: float = 10.0, seed: int = 0) -> Trace:
    """A realistic, seeded gamepad trace from ``player`` (holds, reversals, gradual turns, jumps)."""
    rng = np.random.default_rng(seed)
    n = max(1, int(round(seconds * rate)))
    target = np.zeros((n, 3))
    t = 0
    vel = np.array([0.0, player.max_speed * 0.4])
    turn = 0.0
    while t < n:
        hold = max(1, int(round(rng.exponential(player.hold_mean) * rate)))
        r = rng.random()
        if r < player.reversal:
            vel = -vel
        elif r < player.reversal + player.stop:
            vel = np.zeros(2)
        else:
            speed = player.max_speed * rng.choice([0.25, 0.5, 0.75, 1.0], p=[0.2, 0.3, 0.25, 0.25])
            if rng.random() < player.forward_bias:
                ang = rng.normal(0.0, 0.35)
            else:
                ang = rng.choice([np.pi / 2, -np.pi / 2, np.pi, np.pi / 4, -np.pi / 4, 3 * np.pi / 4, -3 * np.pi / 4])
            vel = speed * np.array([np.sin(ang), np.cos(ang)])
        turn = player.max_turn * rng.uniform(-1, 1) if rng.random() < player.turn_chance else 0.0
        target[t:t + hold, :2] = vel
        target[t:t + hold, 2] = turn
        t += hold
    # Smooth stick motion (sudden reversals stay sudden: they are single-step jumps anyway).
    k = max(1, int(round(player.ramp * rate)))
    kernel = np.ones(k) / k
    pad = np.concatenate((np.repeat(target[:1], k - 1, 0), target), 0)
    smooth = np.stack([np.convolve(pad[:, i], kernel, mode="valid") for i in range(3)], axis=1)
    reversal = np.concatenate(([False], np.sum(target[1:, :2] * target[:-1, :2], axis=1) < -1e-9))
    smooth[reversal, :2] = target[reversal, :2]
    # Turns ramp in over turn_ramp seconds.
    tk = max(1, int(round(player.turn_ramp * rate)))
    tpad = np.concatenate((np.repeat(target[:1, 2], tk - 1), target[:, 2]))
    smooth[:, 2] = np.convolve(tpad, np.ones(tk) / tk, mode="valid")
    air = np.zeros(n)
    jumps = np.flatnonzero(rng.random(n) < player.jump_rate / rate)
    span = max(1, int(round(player.jump_time * rate)))
    for j in jumps:
        air[j:j + span] = 1.0
    return Trace(np.column_stack((smooth, air)), rate, f"{player.name}_{seed}")


TRAINING_PLAYERS = (
    PlayerSettings("steady", max_speed=3.5, hold_mean=1.6, reversal=0.08, turn_chance=0.3, jump_rate=0.08),
    PlayerSettings("twitchy", max_speed=4.0, hold_mean=0.7, reversal=0.25, turn_chance=0.45, ramp=0.15, jump_rate=0.2),
)
EVALUATION_PLAYER = PlayerSettings("evaluator", max_speed=3.8, hold_mean=1.0, reversal=0.18, turn_chance=0.4,
                                   ramp=0.25, jump_rate=0.15)


# Three styles of playing, for training on two and evaluating on the third (paper 000 trains its user
# model on some players and evaluates on another).  "smooth" moves the sticks slowly, so a trace rarely
# changes bin and there is little for a model of the user to predict; "abrupt" snaps the sticks and holds
# briefly; "gamepad" snaps too, holds a little longer and often reverses at once.
PLAYER_STYLES = {
    "smooth": PlayerSettings("smooth", hold_mean=1.4, reversal=0.08, turn_chance=0.35, ramp=0.3, turn_ramp=0.5,
                             jump_rate=0.1),
    "abrupt": PlayerSettings("abrupt", hold_mean=0.5, reversal=0.1, turn_chance=0.45, ramp=0.0, turn_ramp=0.0,
                             jump_rate=0.15),
    "gamepad": PlayerSettings("gamepad", hold_mean=0.8, reversal=0.35, turn_chance=0.4, ramp=0.05, turn_ramp=0.1,
                              jump_rate=0.15),
}


def player_traces(players, seconds: float, rate: float, seed: int, count: int = 1) -> list:
    """``count`` traces of ``seconds`` from each player, seeds derived from ``seed``."""
    return [generate_trace(p, seconds, rate, seed * 1000 + 17 * i + k) for i, p in enumerate(players) for k in range(count)]


def scale_player(player: PlayerSettings, max_speed: float) -> PlayerSettings:
    """The same player on a character whose top speed is ``max_speed`` (m/s)."""
    return PlayerSettings(**{**asdict(player), "max_speed": max_speed})


# ----------------------------------------------------------------------------- user model

def learn_user_model(traces, bins: ControlBins, smoothing: float = 1.0) -> np.ndarray:
    """T [C, C] float: row c is the distribution of the next bin after bin c.

    Frequency counts of consecutive samples, each row smoothed by ``smoothing`` pseudo-counts
    spread like the players' general habits: the overall chance of holding the current input
    (on the diagonal) and the overall frequency of each bin (elsewhere, plus one count per bin).
    Rows never seen in training thus assume the player mostly holds, as players do, rather than
    jumping anywhere (which would make the model controller behave like "spread").
    """
    c = bins.n
    counts = np.zeros((c, c))
    for t in traces:
        b = bins.nearest(t.samples)
        np.add.at(counts, (b[:-1], b[1:]), 1.0)
    total = counts.sum()
    stay = float(np.trace(counts) / total) if total > 0 else 0.0
    marginal = counts.sum(axis=0) + 1.0
    marginal /= marginal.sum()
    prior = (1.0 - stay) * marginal[None, :] + stay * np.eye(c)
    t_model = counts + smoothing * prior
    return t_model / t_model.sum(axis=1, keepdims=True)
