"""Training and evaluating fragment controllers end to end (paper 000, DESIGN.md 3.1).

``FragmentModel`` holds what depends only on the clips (fragments and the per-δ motion distance
matrices, the expensive part) and derives, per settings, MotionQuality, ControlQuality and the
allowed transitions.  Retuning a weight therefore recomputes only what the weight touches, and
``train`` warm-starts from the previous values so the solver needs a few improvements.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

import numpy as np

from ...errors import MotionctlError
from ...jobs import check_stop, one_blas_thread, progress_range
from ...rootframe import WARP_RATE
from ...settings import nested, setting
from .solver import PolicySettings, SolveResult, Transitions, expectation, optimal_path, path_quality, run_table, solve
from .control import ControlBins, fitted_turns, kmeans_bins, learn_user_model, paper_bins
from .cut import FragmentSet, FragmentSettings, cut_fragments
from .quality import (QualitySettings, column_distances, control_quality, motion_distances, motion_quality,
                      quality_of, repair_dead_ends, successor_distances, top_transitions)


TRACE_SOURCES = (
    ("players", "Player Models", "The built-in generated players (steady and twitchy), scaled to the data's top speed"),
    ("custom", "Custom Player", "A generated player with the settings below"),
    ("files", "Files", "Recorded or loaded trace files (CSV or JSON)"),
)


@dataclass
class ControllerSettings:
    """Everything that makes a fragment controller: how clips are cut, the quality weights, the
    solver, the control bins, and the training traces its user model is learned from."""

    fragments: FragmentSettings = nested(FragmentSettings, "Fragments")
    quality: QualitySettings = nested(QualitySettings, "Quality weights")
    policy: PolicySettings = nested(PolicySettings, "Controller")
    bins: str = setting("paper", "Control Bins", "How the player's control signals are binned", choices=(
        ("paper", "Paper", "25 ground velocities (rings fitted to the data) x turning (Turn Bins) x airborne {0, 1}: "
                  "150, or 250 with fitted sharp turns"),
        ("kmeans", "K-Means", "Bins learned from the training traces")), group="Controller")
    turn_bins: str = setting("paper", "Turn Bins", "Turning rates the paper bins tell apart", choices=(
        ("paper", "Paper", "-1, 0, 1 rad/s (the paper's 150 bins): a stick turns the character at about 1 rad/s"),
        ("fitted", "Fitted", "-1, 0, 1 rad/s and ± the capture's sharp turns (its 98th percentile) when faster: "
         "quicker turns (on subject 16, 90° in 1.2 s rather than 1.6), rougher ones (poses further from the "
         "capture)")), group="Controller", shown_when=("bins", "paper"))
    kmeans_bins: int = setting(150, "Bins", "Number of k-means bins", min=2, max=1000, group="Controller")
    warp_rate: float = setting(WARP_RATE, "Warp Rate", "Facing a heading, each fragment's facing may also "
                               "turn toward it by up to this much per second beyond the fragment's own turn (as "
                               "the other engines' Warp Rate); 0: the root follows the bin's turning rate, as far "
                               "as planted feet allow", min=0.0, max=np.pi, unit="ROTATION", group="Controller")
    traces: str = setting("players", "Training Traces", "How the player is expected to play", choices=TRACE_SOURCES,
                          group="Training traces")
    trace_files: tuple = setting((), "Trace Files", "Trace files (CSV or JSON) when Training Traces is Files",
                                 group="Training traces", ui=False, kind="paths", shown_when=("traces", "files"))
    trace_seconds: float = setting(210.0, "Seconds", "Length of generated training play per player", min=10.0,
                                   max=36000.0, unit="TIME", group="Training traces")
    player_speed: float = setting(0.0, "Top Speed", "Custom player's full-stick speed (0: the data's top speed)",
                                  min=0.0, max=20.0, unit="VELOCITY", group="Training traces")
    player_hold: float = setting(1.2, "Hold", "Custom player: average seconds an input is held", min=0.1, max=60.0,
                                 unit="TIME", group="Training traces")
    player_reversal: float = setting(0.15, "Reversals", "Custom player: chance that an input change is a sudden "
                                     "reversal", min=0.0, max=1.0, subtype="FACTOR", group="Training traces")
    player_turns: float = setting(0.35, "Turns", "Custom player: chance that an input change also turns", min=0.0,
                                  max=1.0, subtype="FACTOR", group="Training traces")
    player_jumps: float = setting(0.12, "Jumps/s", "Custom player: jump presses per second", min=0.0, max=10.0,
                                  group="Training traces")
    smoothing: float = setting(1.0, "Smoothing", "User-model pseudo-counts per row (towards the player's overall "
                               "habits)", min=0.0, max=1000.0, group="Training traces")
    held_out: int = setting(3, "Held-out Traces", "Generated evaluation traces (10 s each) to report % of optimal on",
                            min=0, max=50, group="Evaluation")
    seed: int = setting(1, "Seed", "Seed of the generated traces", min=0, max=2**31 - 1, group="Evaluation", ui=False)


class FragmentModel:
    """Fragments of a clip set plus cached quality tables: per δ, the motion distance of every
    pair (dense, ``distances`` [n_d, F, F]) or of each fragment's best successors only (sparse,
    ``successors`` [F, k] and ``distances`` [n_d, F, k]; ``QualitySettings.successors``)."""

    def __init__(self, fragments: FragmentSet, distances: np.ndarray, deltas: tuple,
                 successors: np.ndarray | None = None, stutter_window: float | None = None):
        self.fragments = fragments
        self.stutter_window = stutter_window  # sparse: the window the successor search left out
        self.distances = distances
        self.deltas = tuple(deltas)
        self.successors = successors
        self.hubs = np.zeros(0, dtype=np.int64)  # sparse: hub columns found by training (``train``)
        self.hub_distances = np.zeros((len(self.deltas), fragments.n, 0), dtype=np.float32)
        self._mq_key = None
        self._mq = None
        self._trans = {}

    @classmethod
    def build(cls, source, fragment_settings: FragmentSettings | None = None, quality: QualitySettings | None = None,
              progress=None, should_stop=None, n_jobs=None) -> "FragmentModel":
        """Cut fragments of ``source`` and compute their motion distances: all pairs, or each
        fragment's best successors when ``quality.successors`` (or the automatic rule) asks."""
        q = quality or QualitySettings()
        fs = cut_fragments(source, fragment_settings, progress_range(progress, 0.0, 0.1), should_stop)
        k = q.successors_for(fs.n)
        if k < fs.n:
            succ, d = successor_distances(fs, k, q, n_jobs=n_jobs, progress=progress_range(progress, 0.1, 1.0),
                                          should_stop=should_stop)
            return cls(fs, d, q.deltas, succ, q.stutter_window)
        d = motion_distances(fs, q, n_jobs=n_jobs, progress=progress_range(progress, 0.1, 1.0), should_stop=should_stop)
        return cls(fs, d, q.deltas)

    @property
    def n(self) -> int:
        return self.fragments.n

    @property
    def sparse(self) -> bool:
        return self.successors is not None

    @property
    def successors_kept(self) -> int:
        """Successors kept per fragment: all fragments (dense) or the sparse table's K."""
        return self.n if self.successors is None else int(self.successors.shape[1])

    def motion_quality(self, q: QualitySettings):
        """MotionQuality for the weights: [F, F] (dense), or a sparse ``Transitions`` holding every
        kept successor (cached while omegas, the stutter window and Dis unit stay)."""
        if tuple(q.deltas) != self.deltas:
            raise MotionctlError(f"deltas changed from {self.deltas} to {tuple(q.deltas)}: rebuild the fragment model")
        if self.sparse and q.stutter_window != self.stutter_window:
            raise MotionctlError(f"stutter window changed from {self.stutter_window} to {q.stutter_window}: the kept "
                                 "successors were searched without stuttering jumps; rebuild the fragment model")
        key = (tuple(q.omegas), q.stutter_window, q.dis_unit)
        if key != self._mq_key:
            if self.sparse:
                mq = quality_of(self.distances, q)  # stuttering back-jumps: infinite distance, quality 0
                self._mq = Transitions.from_rows(self.n, self.successors, mq, mq > 0)
                if len(self.hubs):
                    self._mq = self._mq.with_hubs(self.hubs, quality_of(self.hub_distances, q))
            else:
                self._mq = motion_quality(self.distances, self.fragments, q)
            self._mq_key = key
            self._trans = {}
        return self._mq

    def transitions(self, q: QualitySettings, threshold: float | None) -> Transitions:
        """Allowed transitions: all (dense [F, F]; sparse: every kept successor) or the top
        ``threshold`` % of the F x F transitions (sparse; with kept successors, the top among them), cached."""
        mq = self.motion_quality(q)
        if threshold not in self._trans:
            if threshold is None:
                self._trans[threshold] = mq if self.sparse else Transitions.from_dense(mq)
            elif self.sparse:
                self._trans[threshold] = mq.top(threshold)
            else:
                allowed = top_transitions(mq, threshold)
                repair_dead_ends(allowed, mq)
                self._trans[threshold] = Transitions.from_mask(mq, allowed)
        return self._trans[threshold]

    def add_hubs(self, columns: np.ndarray, q: QualitySettings, n_jobs=None, should_stop=None) -> int:
        """Make ``columns`` hub columns (every fragment may go to them, at their exact motion
        quality); returns how many were new."""
        new = np.setdiff1d(np.asarray(columns, dtype=np.int64), self.hubs)
        if len(new):
            d = column_distances(self.fragments, new, q, n_jobs=n_jobs, should_stop=should_stop)
            hubs = np.concatenate((self.hubs, new))
            order = np.argsort(hubs, kind="stable")
            self.hubs = hubs[order]
            self.hub_distances = np.concatenate((self.hub_distances, d), axis=2)[:, :, order]
            self._mq_key = None
        return len(new)

    def make_bins(self, settings: ControllerSettings, traces=()) -> ControlBins:
        """Control bins: the paper's 150 (rings fitted to the fragments' speeds) or k-means of ``traces``."""
        if settings.bins == "kmeans":
            if not traces:
                raise MotionctlError("k-means control bins need training traces")
            return kmeans_bins(traces, settings.kmeans_bins, settings.quality)
        if settings.bins != "paper":
            raise MotionctlError(f"bins must be 'paper' or 'kmeans', got {settings.bins!r}")
        control = self.fragments.control
        turns = fitted_turns(control[:, 2]) if settings.turn_bins == "fitted" else (-1.0, 0.0, 1.0)
        return paper_bins(np.linalg.norm(control[:, :2], axis=1), settings.quality, turns=turns)

    def train(self, settings: ControllerSettings, bins: ControlBins, user_model: np.ndarray | None,
              init: np.ndarray | None = None, progress=None, should_stop=None) -> SolveResult:
        """The policy (table [F, C] and values) for ``settings`` over ``bins``.  BLAS runs on one thread
        (``one_blas_thread``): the user model's expectation and GMRES's sums otherwise depend on the
        thread count, and the policy with them."""
        q, p = settings.quality, settings.policy
        cq = control_quality(self.fragments.control, bins.centres, q)
        rounds = HUB_ROUNDS if self.sparse and p.threshold is None and p.hubs_per_bin > 0 else 0
        for r in range(rounds + 1):
            trans = self.transitions(q, p.threshold)
            sub = progress_range(progress, r / (rounds + 1), (r + 1) / (rounds + 1))
            # Rounds before the last only need values good enough to rank hubs: a few improvements.
            pr = p if r == rounds else replace(p, max_improvements=min(p.max_improvements, HUB_ROUND_IMPROVEMENTS))
            with one_blas_thread():
                result = solve(trans, cq, pr, user_model, init, sub, should_stop)
            if r == rounds:
                break
            check_stop(should_stop, "training")
            if not self.add_hubs(pick_hubs(trans, cq, result.values, p, user_model), q, p.n_jobs, should_stop):
                if progress is not None:  # the rounds left are not needed: the solve is done
                    progress(1.0, f"{p.kind}: solved (no more hub columns to add)")
                break
            init = result.values
        if rounds:
            result.hubs = len(self.hubs)
        return result


HUB_ROUNDS = 3  # sparse training: at most this many rounds of adding hub columns and solving again
HUB_ROUND_IMPROVEMENTS = 3  # policy improvements in each round before the last (which runs to convergence)


def pick_hubs(trans: Transitions, cq: np.ndarray, values: np.ndarray, policy: PolicySettings,
              user_model: np.ndarray | None) -> np.ndarray:
    """Hub columns for a sparse table: for each control bin, the ``policy.hubs_per_bin`` fragments
    with the best bound on what going to them is worth, (best motion quality into them) x
    ControlQuality + the discounted future E (from a policy's values).

    A fragment's best successor under its control is mostly decided by where it leads: with
    λ = 0.999 the future term E outweighs one transition's quality, and paper 000's quality (Dis
    in metres) varies little between successors.  So the dense controller often takes a
    transition far down a fragment's list by motion quality to reach a fragment worth more
    later; those fragments are few per bin and the same for every row, so keeping them for every
    fragment restores what the nearest-neighbour successors miss."""
    e = expectation(values, policy.kind, user_model, policy.discount)  # zero for greedy
    bound = trans.column_max()[:, None] * cq + e
    m = int(min(policy.hubs_per_bin, trans.n))
    return np.unique(np.argpartition(-bound, m - 1, axis=0)[:m].ravel())


@dataclass
class TrainedController:
    """What training made: the fragment model, bins, user model T [C, C], the solver's result and the
    settings."""
    model: FragmentModel
    bins: ControlBins
    user_model: np.ndarray
    result: SolveResult
    settings: ControllerSettings


def train_controller(source, traces, settings: ControllerSettings | None = None, model: FragmentModel | None = None,
                     init: np.ndarray | None = None, progress=None, should_stop=None) -> TrainedController:
    """Cut fragments (unless ``model`` is given), learn bins and the user model from training
    ``traces``, and solve the controller; ``init`` warm-starts from earlier values."""
    s = settings or ControllerSettings()
    traces = list(traces)
    if s.policy.kind == "model" and not traces:
        raise MotionctlError("the model controller needs training traces for its user model")
    built = model is None
    if built:
        model = FragmentModel.build(source, s.fragments, s.quality, progress_range(progress, 0.0, 0.5), should_stop)
    check_stop(should_stop, "training")
    bins = model.make_bins(s, traces)
    t_model = learn_user_model(traces, bins, s.smoothing) if traces else np.full((bins.n, bins.n), 1.0 / bins.n)
    result = model.train(s, bins, t_model, init, progress_range(progress, 0.5 if built else 0.0, 1.0), should_stop)
    return TrainedController(model, bins, t_model, result, s)


# ----------------------------------------------------------------------------- evaluation

def evaluate_controllers(model: FragmentModel, tables: dict, bins: ControlBins, traces, quality: QualitySettings,
                         thresholds: dict | None = None, progress=None, should_stop=None,
                         against: str = "centres") -> dict:
    """Percent of the off-line optimum (the paper's Table 1) on evaluation ``traces``.

    tables      name -> policy table [F, C]
    thresholds  name -> percent for the optimum variants to compute ({"opt": None, "opt-t": 8})
    against     "centres": control quality against the centre of each sample's bin (what the
                policies see); "raw": against the samples themselves (the optimum then follows the
                player's exact input, and binning costs the policies what it costs)
    Every path starts at the fragment where the unthresholded optimum starts, and every path
    is scored with the full Quality function.
    Returns {name: {"percent": [per trace], "mean": m, "std": s, "quality": [sums]}}.
    """
    if against not in ("centres", "raw"):
        raise MotionctlError(f"against must be 'centres' or 'raw', got {against!r}")
    thresholds = {"opt": None} if thresholds is None else thresholds
    mq = model.motion_quality(quality)
    centres_cq = control_quality(model.fragments.control, bins.centres, quality)
    out = {name: {"quality": [], "percent": []} for name in list(thresholds) + list(tables)}
    t0 = time.perf_counter()
    for k, trace in enumerate(traces):
        check_stop(should_stop, "evaluation")
        bins_of = bins.nearest(trace.samples)  # what the policies decide on
        if against == "raw":
            cq, tb = control_quality(model.fragments.control, trace.samples, quality), np.arange(len(trace.samples))
        else:
            cq, tb = centres_cq, bins_of
        base_path, base_total = optimal_path(model.transitions(quality, None), cq, tb, should_stop=should_stop)
        start = int(base_path[0])
        sums = {}
        for name, thr in thresholds.items():
            path = base_path if thr is None else optimal_path(model.transitions(quality, thr), cq, tb, start=start,
                                                                should_stop=should_stop)[0]
            sums[name] = float(path_quality(mq, cq, path, tb).sum())
        for name, table in tables.items():
            sums[name] = float(path_quality(mq, cq, run_table(table, bins_of, start), tb).sum())
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
