"""Training and evaluating fragment controllers end to end (paper 000, DESIGN.md 3.1).

``FragmentModel`` holds what depends only on the clips (fragments and the per-δ motion distance
matrices, the expensive part) and derives, per settings, MotionQuality, ControlQuality and the
allowed transitions.  Retuning a weight therefore recomputes only what the weight touches, and
``train`` warm-starts from the previous values so the solver needs a few improvements.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ..jobs import check_stop
from ..policy import Policy, PolicySettings, SolveResult, Transitions, optimal_path, path_quality, run_table, solve
from .control import ControlBins, kmeans_bins, learn_user_model, paper_bins
from .cut import FragmentSet, FragmentSettings, cut_fragments
from .quality import (QualitySettings, control_quality, motion_distances, motion_quality, repair_dead_ends,
                      top_transitions)


@dataclass
class ControllerSettings:
    fragments: FragmentSettings = field(default_factory=FragmentSettings)
    quality: QualitySettings = field(default_factory=QualitySettings)
    policy: PolicySettings = field(default_factory=PolicySettings)
    bins: str = "paper"  # "paper" (150 hand-placed bins) or "kmeans" (learned from training traces)
    kmeans_bins: int = 150
    smoothing: float = 1.0  # user-model pseudo-counts per row


class FragmentModel:
    """Fragments of a clip set plus cached quality matrices."""

    def __init__(self, fragments: FragmentSet, distances: np.ndarray, deltas: tuple):
        self.fragments = fragments
        self.distances = distances
        self.deltas = tuple(deltas)
        self._mq_key = None
        self._mq = None
        self._trans = {}

    @classmethod
    def build(cls, source, fragment_settings: FragmentSettings | None = None, quality: QualitySettings | None = None,
              progress=None, should_stop=None, n_jobs=None) -> "FragmentModel":
        q = quality or QualitySettings()
        fs = cut_fragments(source, fragment_settings, _sub(progress, 0.0, 0.1), should_stop)
        d = motion_distances(fs, q, n_jobs=n_jobs, progress=_sub(progress, 0.1, 1.0), should_stop=should_stop)
        return cls(fs, d, q.deltas)

    @property
    def n(self) -> int:
        return self.fragments.n

    def motion_quality(self, q: QualitySettings) -> np.ndarray:
        if tuple(q.deltas) != self.deltas:
            raise ValueError(f"deltas changed from {self.deltas} to {tuple(q.deltas)}: rebuild the fragment model")
        key = (tuple(q.omegas), q.stutter_window)
        if key != self._mq_key:
            self._mq = motion_quality(self.distances, self.fragments, q)
            self._mq_key = key
            self._trans = {}
        return self._mq

    def transitions(self, q: QualitySettings, threshold: float | None) -> Transitions:
        mq = self.motion_quality(q)
        if threshold not in self._trans:
            if threshold is None:
                self._trans[threshold] = Transitions.from_dense(mq)
            else:
                allowed = top_transitions(mq, threshold)
                repair_dead_ends(allowed, mq)
                self._trans[threshold] = Transitions.from_mask(mq, allowed)
        return self._trans[threshold]

    def make_bins(self, settings: ControllerSettings, traces=()) -> ControlBins:
        if settings.bins == "kmeans":
            if not traces:
                raise ValueError("k-means control bins need training traces")
            return kmeans_bins(traces, settings.kmeans_bins, settings.quality)
        if settings.bins != "paper":
            raise ValueError(f"bins must be 'paper' or 'kmeans', got {settings.bins!r}")
        speeds = np.linalg.norm(self.fragments.control[:, :2], axis=1)
        return paper_bins(speeds, settings.quality)

    def train(self, settings: ControllerSettings, bins: ControlBins, user_model: np.ndarray | None,
              init: np.ndarray | None = None, progress=None, should_stop=None) -> tuple[Policy, SolveResult]:
        trans = self.transitions(settings.quality, settings.policy.threshold)
        cq = control_quality(self.fragments.control, bins.centres, settings.quality)
        result = solve(trans, cq, settings.policy, user_model, init, progress, should_stop)
        fs = self.fragments
        info = {"kind": settings.policy.kind, "discount": settings.policy.discount,
                "threshold": settings.policy.threshold, "improvements": result.improvements, "sweeps": result.sweeps,
                "converged": result.converged, "seconds": result.seconds, "bins": bins.kind,
                "omegas": list(settings.quality.omegas), "deltas": list(settings.quality.deltas)}
        policy = Policy(result.table, result.values, bins.centres,
                        (settings.quality.w_v, settings.quality.w_t, settings.quality.w_a),
                        [c.name for c in fs.clips], fs.clip, fs.start, fs.n_frames, fs.fps, info)
        return policy, result


def _sub(progress, lo, hi):
    if progress is None:
        return None
    return lambda f, m: progress(lo + (hi - lo) * f, m)


@dataclass
class TrainedController:
    model: FragmentModel
    bins: ControlBins
    user_model: np.ndarray
    policy: Policy
    result: SolveResult
    settings: ControllerSettings


def train_controller(source, traces, settings: ControllerSettings | None = None, model: FragmentModel | None = None,
                     init: np.ndarray | None = None, progress=None, should_stop=None) -> TrainedController:
    """Cut fragments (unless ``model`` is given), learn bins and the user model from training
    ``traces``, and solve the controller; ``init`` warm-starts from earlier values."""
    s = settings or ControllerSettings()
    traces = list(traces)
    if s.policy.kind == "model" and not traces:
        raise ValueError("the model controller needs training traces for its user model")
    built = model is None
    if built:
        model = FragmentModel.build(source, s.fragments, s.quality, _sub(progress, 0.0, 0.5), should_stop)
    check_stop(should_stop, "training")
    bins = model.make_bins(s, traces)
    t_model = learn_user_model(traces, bins, s.smoothing) if traces else np.full((bins.n, bins.n), 1.0 / bins.n)
    policy, result = model.train(s, bins, t_model, init, _sub(progress, 0.5 if built else 0.0, 1.0), should_stop)
    return TrainedController(model, bins, t_model, policy, result, s)


# ----------------------------------------------------------------------------- evaluation

def evaluate_controllers(model: FragmentModel, tables: dict, bins: ControlBins, traces, quality: QualitySettings,
                         thresholds: dict | None = None, progress=None, should_stop=None) -> dict:
    """Percent of the off-line optimum (the paper's Table 1) on evaluation ``traces``.

    tables      name -> policy table [F, C]
    thresholds  name -> percent for the optimum variants to compute ({"opt": None, "opt-t": 8})
    Every path starts at the fragment where the unthresholded optimum starts, and every path
    is scored with the full Quality function.
    Returns {name: {"percent": [per trace], "mean": m, "std": s, "quality": [sums]}}.
    """
    thresholds = {"opt": None} if thresholds is None else thresholds
    mq = model.motion_quality(quality)
    cq = control_quality(model.fragments.control, bins.centres, quality)
    out = {name: {"quality": [], "percent": []} for name in list(thresholds) + list(tables)}
    t0 = time.perf_counter()
    for k, trace in enumerate(traces):
        check_stop(should_stop, "evaluation")
        tb = bins.nearest(trace.samples)
        base_path, base_total = optimal_path(model.transitions(quality, None), cq, tb, should_stop=should_stop)
        start = int(base_path[0])
        sums = {}
        for name, thr in thresholds.items():
            path = base_path if thr is None else optimal_path(model.transitions(quality, thr), cq, tb, start=start,
                                                                should_stop=should_stop)[0]
            sums[name] = float(path_quality(mq, cq, path, tb).sum())
        for name, table in tables.items():
            sums[name] = float(path_quality(mq, cq, run_table(table, tb, start), tb).sum())
        reference = float(path_quality(mq, cq, base_path, tb).sum())
        for name, v in sums.items():
            out[name]["quality"].append(v)
            out[name]["percent"].append(100.0 * v / reference if reference > 0 else 0.0)
        if progress is not None:
            progress((k + 1) / len(traces), f"evaluated trace {k + 1}/{len(traces)} ({time.perf_counter() - t0:.0f} s)")
    for v in out.values():
        v["mean"] = float(np.mean(v["percent"]))
        v["std"] = float(np.std(v["percent"]))
    return out


# ----------------------------------------------------------------------------- files and runs

def settings_info(settings: ControllerSettings) -> dict:
    """Plain-JSON record of the settings a policy was trained with (stored in the policy)."""
    from dataclasses import asdict

    return {"fragments": {k: v for k, v in asdict(settings.fragments).items() if k != "contacts"},
            "quality": asdict(settings.quality), "policy": asdict(settings.policy), "bins": settings.bins,
            "kmeans_bins": settings.kmeans_bins, "smoothing": settings.smoothing}


def train_to_file(source, traces, out_path: str, settings: ControllerSettings | None = None,
                  model: FragmentModel | None = None, init: np.ndarray | None = None, sources=(),
                  progress=None, should_stop=None) -> TrainedController:
    """Train a controller and write its Policy to ``out_path`` (.npz) only once training has
    finished: a cancelled or failed job leaves no file, and an earlier file stays intact."""
    s = settings or ControllerSettings()
    trained = train_controller(source, traces, s, model, init, progress, should_stop)
    trained.policy.info.update({"settings": settings_info(s), "sources": [str(p) for p in sources]})
    trained.policy.save(out_path)
    return trained


def fragments_for_policy(policy: Policy, source) -> FragmentSet:
    """Re-cut the fragments a policy was trained on from its source clips (a MotionDatabase or
    clip list), checking they are the same ones."""
    info = policy.info.get("settings", {}).get("fragments", {})
    fs = cut_fragments(source, FragmentSettings(**info) if info else FragmentSettings())
    names = [c.name for c in fs.clips]
    if names != list(policy.clip_names) or fs.n != len(policy.table):
        raise ValueError(f"these clips do not match the policy: it was trained on {len(policy.clip_names)} clips "
                         f"({len(policy.table)} fragments), these give {len(names)} ({fs.n})")
    return fs


def resample_trace(samples: np.ndarray, rate: float, target_rate: float) -> np.ndarray:
    """Trace samples at another rate (each output step takes the sample in force at its time)."""
    if abs(rate - target_rate) < 1e-9:
        return samples
    n = max(1, int(np.floor(len(samples) / rate * target_rate)))
    idx = np.minimum((np.arange(n) * rate / target_rate).astype(np.int64), len(samples) - 1)
    return samples[idx]


def run_policy(policy: Policy, fs: FragmentSet, trace, warp: float = 0.0, crossfade: int = 3, start: int | None = None,
               name: str = "run"):
    """Drive ``policy`` with a trace: one decision per fragment, then synthesize the motion.

    Returns (Clip, fragment path [n + 1], per-decision controls [n, 4])."""
    from ..policy import run_table
    from ..synth import synthesize_clip

    samples = resample_trace(trace.samples, trace.rate, fs.decision_rate)
    bins = policy.bins(samples)
    first = policy.start_fragment(samples[0]) if start is None else int(start)
    path = run_table(policy.table, bins, first)
    pieces = fs.pieces(path[1:])
    clip = synthesize_clip(fs.frame_table(), pieces, crossfade, samples, warp, name)
    return clip, path, samples

