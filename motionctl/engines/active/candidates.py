"""Active learning's requests (paper 003, section 4.1): for every cluster start state, random task
inputs scored by each metric (task error relative to the nearest example, per task metric; summed
task error; distance from the existing examples), the worst of each refined by Nelder-Mead
maximising its badness; transition candidates (the end state of each cluster's average motion or
of an example when no start state is within the tolerance of it); start candidates (the
library's start states no cluster starts near, the densest first).  Sorted by score within each
metric; requests near ones the performer rejected are searched no more.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize

from ...jobs import check_stop
from .controller import Controller
from .motion import blend, distances, distances_to

METRICS = ("relative", "summed", "distance", "transition", "start")  # the metrics; "relative" per task metric
RANDOM_INPUTS = 200
NM_EVALS = 60
REJECTED_RADIUS = 0.15  # normalised task-input distance around a rejected request not asked again (same start)


@dataclass(eq=False)
class Candidate:
    """A request: start ``state`` (cluster ``cluster``'s start, or a transition's end state, with
    ``pose`` (rot [J, 4], height) to show), task input ``u``, the ``metric`` that found it and its
    ``score`` (higher is worse); ``pseudo`` when a suggestion proposed one for it."""

    metric: str
    cluster: int
    state: np.ndarray
    u: np.ndarray
    score: float
    pose: tuple = None
    pseudo: object = None  # a learning.Pseudo: a blend of existing examples proposed in place of a capture

    def describe(self, task) -> str:
        parts = ", ".join(f"{n} {v:.2f} {unit}" for n, v, unit in zip(task.names, self.u, task.units))
        return f"{self.metric}: {parts} (score {self.score:.2f})"


def _badness(ctrl: Controller, ci: int, u: np.ndarray) -> dict:
    """Every metric's badness at task inputs ``u`` [B, D] of cluster ``ci``."""
    c = ctrl.clusters[ci]
    err = ctrl.errors(ci, u)
    x = ctrl.task.normalise(u)
    dist = np.linalg.norm(x[:, None] - c.x[None, :c.k], axis=-1)
    near = np.argmin(dist, axis=1)
    feats = np.array([e.features for e in c.examples])
    near_err = ctrl.task.errors(feats[near], u)
    out = {f"relative:{n}": err[:, i] - near_err[:, i] for i, n in enumerate(ctrl.task.names)}
    out["summed"] = err.sum(axis=1)
    out["distance"] = dist.min(axis=1)
    return out


def candidates(ctrl: Controller, rng, n_random: int = RANDOM_INPUTS, nm_evals: int = NM_EVALS, per_metric: int = 3,
               should_stop=None, progress=None, rejected=(), library=None) -> list:
    """Every metric's ``per_metric`` worst random inputs per cluster, each refined by Nelder-Mead,
    the transition candidates and, given the ``library`` (a ``Pool``), its start candidates
    (``start_candidates``), sorted by score (worst first).  Task inputs within
    ``REJECTED_RADIUS`` of a ``rejected`` request from the same start are searched no more (what the
    performer said cannot be done is not the controller's to improve): the search looks past them."""
    task = ctrl.task
    out = []
    bounds = list(zip(task.low, task.high))
    for ci, c in enumerate(ctrl.clusters):
        check_stop(should_stop, "suggesting")
        if progress:
            progress(ci / max(1, len(ctrl.clusters)), f"cluster {ci + 1} of {len(ctrl.clusters)}")
        done = refused_inputs(ctrl, rejected, c.start_state)
        u = task.sample(rng, n_random)
        u = u[is_open(ctrl, done, u)]
        if not len(u):
            continue
        bad = _badness(ctrl, ci, u)
        for metric, score in bad.items():
            for u0 in u[np.argsort(-score, kind="stable")[:per_metric]]:
                def negative(v, metric=metric, ci=ci, done=done):
                    v = np.clip(v, task.low, task.high)[None]
                    return -float(_badness(ctrl, ci, v)[metric][0]) if is_open(ctrl, done, v)[0] else np.inf

                res = minimize(negative, u0, method="Nelder-Mead", bounds=bounds,
                               options={"maxfev": nm_evals, "xatol": 1e-3, "fatol": 1e-3})
                start = -negative(u0)
                best = np.clip(res.x, task.low, task.high) if -res.fun >= start else u0
                out.append(Candidate(metric, ci, c.start_state, best, float(max(-res.fun, start)), start_pose(c)))
    out += transition_candidates(ctrl)
    if library is not None:
        out += start_candidates(ctrl, library, per_metric, rejected)
    return sorted(out, key=lambda k: -k.score)


def start_candidates(ctrl: Controller, library, n: int = 3, rejected=()) -> list:
    """States the task starts from that the controller cannot start from: of the ``library``'s
    example start states (a ``Pool``: what its capture does, the states coverage asks from; its
    examples not yet given) those farther than the tolerance from every cluster's start, the ``n`` with the most such starts
    within the tolerance (the request that opens the most), each asking what the library's
    example there does.  Section 4.1's transition candidates take the states the controller
    plays into; a controller seeded with a walk never plays into a run or a stand when the
    capture holds no walk that becomes one, and these ask for them (pool-based active learning:
    the learner sees the library's starts, not which motion answers them).  Starts within the
    tolerance of a ``rejected`` start request are not asked again."""
    if not ctrl.clusters:
        return []
    states = library.states
    far = (distances(states, ctrl.starts).min(axis=1) > ctrl.tolerance) & ~library.used
    refused = [r.state for r in rejected if r.metric == "start"]
    if refused:  # the performer said no from there: ask from elsewhere
        far &= distances(states, np.stack(refused)).min(axis=1) > ctrl.tolerance
    far = np.flatnonzero(far)
    if not len(far):
        return []
    near = distances(states[far], states[far]) <= ctrl.tolerance
    density = near.sum(axis=1)
    out, taken = [], np.zeros(len(far), dtype=bool)
    for j in np.argsort(-density, kind="stable"):
        if len(out) >= n:
            break
        if taken[j]:
            continue
        taken |= near[j]  # the next asks from elsewhere
        i = int(far[j])
        u = np.clip(library.features[i], ctrl.task.low, ctrl.task.high)
        out.append(Candidate("start", -1, states[i].copy(), u, float(density[j]), library.pose(i)))
    return out


def refused_inputs(ctrl: Controller, rejected: list, state: np.ndarray) -> np.ndarray:
    """[R, D] the normalised task inputs of the ``rejected`` requests from a start within the state
    tolerance of ``state``."""
    if not rejected:
        return np.zeros((0, ctrl.task.dim))
    states = np.stack([r.state for r in rejected]).astype(np.float32)
    near = distances_to(states, np.asarray(state, dtype=np.float32)) < ctrl.tolerance
    return ctrl.task.normalise(np.stack([r.u for r in rejected])[near]).reshape(-1, ctrl.task.dim)


def is_open(ctrl: Controller, done: np.ndarray, u: np.ndarray) -> np.ndarray:
    """bool [B]: task inputs ``u`` [B, D] farther than ``REJECTED_RADIUS`` (normalised) from every
    refused input ``done`` [R, D] (``refused_inputs``): those asked again."""
    x = ctrl.task.normalise(np.atleast_2d(u))
    return np.all(np.linalg.norm(x[:, None] - done[None], axis=-1) >= REJECTED_RADIUS, axis=1)


def start_pose(cluster) -> tuple:
    """(rot [J, 4], height) of a cluster's start (its first example's first pose)."""
    return cluster.aligned.rot[0, 0].copy(), float(cluster.aligned.height[0, 0])


def transition_candidates(ctrl: Controller, per_cluster: int = 3) -> list:
    """States the controller plays into that no cluster starts from (section 4.1): per cluster, the
    end states of its average motion and of each example farther than the tolerance from every
    start state, the ``per_cluster`` farthest, each with u what that motion did (the paper takes
    the average motion's state and the centre of the domain; on walks a cluster's average ends
    where it starts, while its fast or turning examples end in states nothing starts from, and
    a walk asked at the centre from a fast walk's end is one no performer does)."""
    if not ctrl.clusters:
        return []
    out = []
    starts = ctrl.starts
    for ci, c in enumerate(ctrl.clusters):
        mean = blend(c.aligned, np.full((1, c.k), 1.0 / c.k))
        ends = np.vstack((c.aligned.end_state.mean(axis=0)[None], c.aligned.end_state[:c.k]))
        feats = np.vstack((ctrl.task.features(ctrl.skeleton, mean, ctrl.fps), np.array([e.features for e in c.examples])))
        d = distances(ends.astype(np.float32), starts).min(axis=1)
        for j in np.argsort(-d, kind="stable")[:per_cluster]:
            if d[j] <= ctrl.tolerance:
                break
            pose = (mean.rot[0, -1].copy(), float(mean.height[0, -1])) if j == 0 else \
                (c.aligned.rot[j - 1, -1].copy(), float(c.aligned.height[j - 1, -1]))
            u = np.clip(feats[j], ctrl.task.low, ctrl.task.high)
            out.append(Candidate("transition", ci, ends[j].astype(np.float32), u, float(d[j]), pose))
    return out


__all__ = ["METRICS", "REJECTED_RADIUS", "Candidate", "candidates", "is_open", "refused_inputs", "start_candidates",
           "start_pose", "transition_candidates"]
