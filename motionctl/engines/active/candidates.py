"""Active learning's requests (paper 003, section 4.1): for every cluster start state, random task
inputs scored by each metric (task error relative to the nearest example, per task metric; summed
task error; distance from the existing examples), the worst of each refined by Nelder-Mead
maximising its badness; face candidates (past a face of the box no example of a cluster reaches:
a blend completes only what lies between its examples); transition candidates (the end state of
each cluster's average motion or of an example when no start state is within the tolerance of
it); start candidates (the library's start states no cluster starts near, the densest first).
Sorted by score within each metric; requests near ones the performer rejected are searched no
more.  Apart from these, ``take_candidates``: what the library's takes from the clusters' starts
do, which the learner asks once its gains expect nothing more.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize

from ...jobs import check_stop
from .controller import Controller, simplex_weights
from .motion import blend, distances, distances_to

METRICS = ("relative", "summed", "distance", "transition", "start")  # the metrics; "relative" per task metric
RANDOM_INPUTS = 200
NM_EVALS = 60
REJECTED_RADIUS = 0.15  # normalised task-input distance around a rejected request not asked again (same start)
GAIN_INPUTS = 300  # about as many task inputs, on a grid over the box, as a request's gain in coverage is estimated on
FACE_PAST = 3.0  # tolerances past a face of the box a request asks where no example of its cluster reaches the face


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
    gain: float = 0.0  # the share of coverage its answer is expected to add (``gains``)

    @property
    def opens(self) -> bool:
        """It asks from a state no cluster starts from (a transition's end state, a start request)."""
        return self.metric in ("transition", "start")

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
    the face candidates (``face_candidates``), the transition candidates and, given the
    ``library`` (a ``Pool``), its start candidates (``start_candidates``), sorted by score (worst
    first).  Task inputs within ``REJECTED_RADIUS`` of a ``rejected`` request from the same start
    are searched no more (what the performer said cannot be done is not the controller's to
    improve): the search looks past them."""
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
    out += face_candidates(ctrl)
    out += transition_candidates(ctrl)
    if library is not None:
        out += start_candidates(ctrl, library, per_metric, rejected)
    return sorted(out, key=lambda k: -k.score)


def face_candidates(ctrl: Controller, past: float = FACE_PAST) -> list:
    """Requests past the box's faces (the distance metric's, ``distance:face``): per cluster, per
    task dimension and side whose face none of its examples reaches, the examples' mean (inside the
    box) with that input ``past`` tolerances beyond the face (not below 0 where the box starts at 0
    or above).  A blend completes what lies between its examples (``reach``), so a face is
    completed only from examples at or past it, and a request inside the box is answered with the
    take nearest it, inside: on subject 16's walks the 90-degree turns (64-92° a stride against the
    box's 45°) answer no request inside the box, and were what random picks held over active ones
    at 20 and 30 examples (``bench/bench_active.py``'s answerable baseline)."""
    task = ctrl.task
    out = []
    for ci, c in enumerate(ctrl.clusters):
        f = np.array([e.features for e in c.examples])
        mean = np.clip(f.mean(axis=0), task.low, task.high)
        for d in range(task.dim):
            for side, face, reached in ((-1.0, task.low[d], f[:, d].min() <= task.low[d]),
                                        (1.0, task.high[d], f[:, d].max() >= task.high[d])):
                v = face + side * past * task.tol[d]
                if side < 0 and task.low[d] >= 0.0:
                    v = max(v, 0.0)  # no speed or stride below nothing
                if reached or v == face:
                    continue
                u = mean.copy()
                u[d] = v
                out.append(Candidate("distance:face", ci, c.start_state, u, float(past), start_pose(c)))
    return out


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


def take_candidates(ctrl: Controller, library, rng) -> list:
    """What the ``library``'s takes not yet given do (``distance:library``; clipped to the task
    box, so the performer may answer a take past it with another), each asked from the start of
    the cluster serving its start (the nearest within the tolerance), in a random order:
    what ``Learner.order`` asks first once the gains expect next to nothing of any request (late in
    a session the metrics' requests ask for strides and speeds between or just past what the
    performer has given, and get near-duplicates of it; on seed examples ``bench_active.py`` never
    uses, random picks then added up to three times as much, mid-box walks that make the blends
    more exact, which a model of blends as the weighted sums of their examples cannot value)."""
    if not ctrl.clusters:
        return []
    d = distances(library.states, ctrl.starts)
    ci = np.argmin(d, axis=1)
    served = np.flatnonzero((d.min(axis=1) <= ctrl.tolerance) & ~library.used)
    task = ctrl.task
    return [Candidate("distance:library", int(ci[i]), ctrl.clusters[ci[i]].start_state,
                      np.clip(library.features[i], task.low, task.high), 0.0, start_pose(ctrl.clusters[ci[i]]))
            for i in rng.permutation(served)]


def gain_inputs(task) -> np.ndarray:
    """[G, D] about ``GAIN_INPUTS`` task inputs on a grid over the box, its faces included (a stand
    asks the least speed there is)."""
    per = max(2, int(round(GAIN_INPUTS ** (1.0 / task.dim))))
    axes = [np.linspace(0.0, 1.0, per)] * task.dim
    return task.denormalise(np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, task.dim))


def soft_zone(task) -> float:
    """Half a ``gain_inputs`` grid cell in tolerances (the mean over the task metrics): how far past
    its tolerance an input's cell is still partly completed."""
    per = max(2, int(round(GAIN_INPUTS ** (1.0 / task.dim))))
    return float(max(0.25, np.mean((task.high - task.low) / (per - 1) / (2.0 * task.tol))))


def held(task, d: np.ndarray) -> np.ndarray:
    """The share of each grid input's cell completed, from how near (``reach``, tolerances) the
    controller comes to the input: falling linearly from 1 at a half cell inside the tolerance
    (``soft_zone``) through 1/2 at the tolerance to 0 a half cell past it (a
    count of the inputs within tolerance moves by whole cells, and misses what an answer between
    them adds)."""
    z = soft_zone(task)
    return np.clip((1.0 + z - d) / (2.0 * z), 0.0, 1.0)


def reach(task, features: np.ndarray, inputs: np.ndarray) -> np.ndarray:
    """[G] how far (tolerances, the worst task metric) the best blend of ``features`` [K, D] comes
    from each input, a blend's features taken as linear in the weights (``simplex_weights``)."""
    got = features if len(features) == 1 else simplex_weights(task, features, inputs, locality=0.0) @ features
    return np.sqrt(task.errors(got, inputs).max(axis=1))


def _held(ctrl: Controller, library) -> tuple:
    """(inputs [G, D], each cluster's example features, which clusters serve each ``library``
    start state [N, clusters], how near [N, G] the controller comes to each input from each state)."""
    inputs = gain_inputs(ctrl.task)
    feats = [np.array([e.features for e in c.examples]) for c in ctrl.clusters]
    serves = distances(library.states, ctrl.starts) <= ctrl.tolerance
    now = np.stack([reach(ctrl.task, f, inputs) for f in feats])  # [clusters, G]
    return inputs, feats, serves, np.where(serves[:, :, None], now[None], np.inf).min(axis=1)


def held_share(ctrl: Controller, library) -> float:
    """The share of the ``library``'s start states and the inputs of ``gain_inputs`` the
    controller completes, blends taken as linear in the weights (what ``gains`` measures a
    request's answer against)."""
    return float(np.mean(held(ctrl.task, _held(ctrl, library)[3]))) if ctrl.clusters else 0.0


def gains(ctrl: Controller, cands: list, library, given=()) -> np.ndarray:
    """[C] the coverage each request's answer is expected to add: over the ``library``'s example
    start states (what coverage asks from) and the task inputs of ``gain_inputs``, the share of
    their grid cells (``held``) its answer newly completes where the request's cluster (or, from a
    state no cluster starts near, the new cluster it opens) serves the state and no cluster
    serving it completes the input yet.
    Blends are taken as linear in the weights (``reach``).  The answer is
    expected to do what is asked, or what the performer gave before for nearly the same from the
    same start, or for a request far from anything they did from there (``expected_answer``;
    ``given``: (state, u asked, features given)): asked more of the same, they give the same
    again.  Pool-based, as the start requests: the learner weighs the states the library starts
    from, not what its takes do."""
    task = ctrl.task
    inputs, feats, serves, best = _held(ctrl, library)
    now = held(task, best)
    out = np.zeros(len(cands))
    for j, k in enumerate(cands):
        f = expected_answer(ctrl, k, given)[None]
        if k.opens:
            served, d = distances_to(library.states, k.state) <= ctrl.tolerance, reach(task, f, inputs)
        else:
            served, d = serves[:, k.cluster], reach(task, np.vstack((feats[k.cluster], f)), inputs)
        out[j] = np.sum(np.maximum(held(task, d)[None] - now[served], 0.0)) / now.size
    return out


def expected_answer(ctrl: Controller, cand: Candidate, given=(), reject: float = 3.0) -> np.ndarray:
    """[D] what the performer is expected to do for ``cand``: what it asks, unless an earlier
    request from a start within the tolerance asked nearly the same (within ``REJECTED_RADIUS``),
    or was answered with a motion that missed it by more than ``reject`` tolerances (what was
    asked is far from anything done from there) and ``cand`` asks nearer that request than what
    was given for it; then, what was given (the latest such)."""
    task = ctrl.task
    x = task.normalise(cand.u)
    for state, u, features in reversed(given):
        if distances_to(np.asarray(state, np.float32)[None], cand.state)[0] > ctrl.tolerance:
            continue
        asked, gave = np.linalg.norm(task.normalise(u) - x), np.linalg.norm(task.normalise(features) - x)
        if asked < REJECTED_RADIUS or (np.any(task.errors(features, u) > reject ** 2) and asked < gave):
            return np.asarray(features, dtype=float)
    return np.asarray(cand.u, dtype=float)


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


__all__ = ["FACE_PAST", "GAIN_INPUTS", "METRICS", "REJECTED_RADIUS", "Candidate", "candidates", "expected_answer",
           "face_candidates", "gains", "held", "held_share", "is_open", "refused_inputs", "start_candidates", "start_pose",
           "take_candidates", "transition_candidates"]
