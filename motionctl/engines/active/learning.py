"""Active learning (paper 003, section 4): pseudoexamples, the oracle, coverage, the loop (the
requests it makes: ``candidates``).

- ``pseudoexample``: Nelder-Mead over a cluster's blend weights minimising the summed task error
  at the candidate's u, from the best of its examples and the current prediction.
- ``Pool`` and ``Oracle``: capture the controller has not been given, cut into the task's
  examples; the oracle answers a request (start state, u) with the best-matching one (start-state
  distance + task error) or rejects it when none is within tolerance, as a performer in the
  capture volume would; it auto-accepts pseudoexamples that complete the task without more foot
  skating than their sources.
- ``CoverageSample`` and ``coverage``: the share of a fixed random sample of (state, u) the
  controller completes, and what the pool's examples themselves complete (the normaliser).
- ``active_step``: one step of the loop the *Auto* button, the command line, ``fit`` and the
  benchmark run (``session.ActiveSession`` repeats it); ``baseline`` adds examples at random or from a uniform grid plan instead.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import minimize

from ... import quat
from ...errors import MotionctlError
from ...jobs import progress_range
from ...rootframe import heading, root_frame
from ...body.contacts import foot_contacts, foot_skating
from .candidates import (METRICS, REJECTED_RADIUS, Candidate, candidates, gains, held_share, is_open, refused_inputs,  # noqa: F401
                         start_candidates, start_pose, take_candidates, transition_candidates)
from .controller import Controller, skating_of
from .motion import HEADING_SMOOTH, STATE_FRAMES, Aligned, align, blend, distances, distances_to, source_of, to_frames

TAKE_MARGIN = 6  # frames a take runs before its example's start (and after its end state)
SEARCH_ROUNDS = 8  # candidate searches in one automatic step while the oracle rejects every request
TRUST_ANSWERS = 3  # a cluster's last answers whose gains, against those expected, weigh its requests' expected gains
OPEN_EVERY = 3  # after this many answers from the clusters' starts, requests opening a cluster are asked first
GAIN_FLOOR = 0.25  # a request opening a cluster goes with those expected to add only for this share of the best gain
PLAN_PER_DIM = 3  # the first requests: a lattice of this many cell centres per task dimension, from the seed's start
LATE_GAIN = 0.1  # below this share of the greatest gain it ever expected, the learner asks for the library's takes
LATE_TAKES = 8  # the library's takes asked first then (``take_candidates``), in a random order


@dataclass
class Pseudo:
    """A proposed pseudoexample: cluster, task input, weights [K], its task errors [D] and skating."""

    cluster: int
    u: np.ndarray
    w: np.ndarray
    errors: np.ndarray
    skating: float
    source_skating: float

    @property
    def completes(self) -> bool:
        return bool(np.all(self.errors <= 1.0))


def _weights(v: np.ndarray) -> np.ndarray:
    w = np.clip(v, 0.0, 1.0)
    s = w.sum()
    return w / s if s > 1e-9 else np.full(len(w), 1.0 / len(w))


def pseudoexample(ctrl: Controller, cand: Candidate, nm_evals: int = 200) -> Pseudo | None:
    """Weights minimising the summed task error at ``cand.u`` over the clusters starting at its
    state (section 4.3); None when no cluster starts there or the cluster has one example."""
    d = distances_to(ctrl.starts, cand.state) if ctrl.clusters else np.zeros(0)
    best = None
    for ci in np.flatnonzero(d <= ctrl.tolerance):
        c = ctrl.clusters[int(ci)]
        if c.k < 2:
            continue
        guesses = np.vstack((np.eye(c.k), ctrl.weights(int(ci), cand.u)))
        err = ctrl.errors(int(ci), np.repeat(cand.u[None], len(guesses), axis=0), guesses).sum(axis=1)
        g = guesses[int(np.argmin(err))]
        if best is None or err.min() < best[2]:
            best = (int(ci), g, float(err.min()))
    if best is None:
        return None
    ci, w0, _ = best

    def summed(v):
        return float(ctrl.errors(ci, cand.u[None], _weights(v)[None]).sum())

    res = minimize(summed, w0, method="Nelder-Mead", options={"maxfev": nm_evals, "xatol": 1e-3, "fatol": 1e-4})
    w = _weights(res.x) if res.fun <= summed(w0) else w0
    errs = ctrl.errors(ci, cand.u[None], w[None])[0]
    c = ctrl.clusters[ci]
    used = np.flatnonzero(w > 1e-3)
    return Pseudo(ci, cand.u.copy(), w, errs, blend_skating(ctrl, ci, w),
                  float(max(c.examples[k].skating for k in used)))


def blend_clip(ctrl: Controller, ci: int, w: np.ndarray, name: str = "blend"):
    """The cluster's blend with weights ``w`` as a Clip from the origin (preview, skating)."""
    from ... import quat
    from ...clip import Clip
    from ...rootframe import heading, integrate
    bl = blend(ctrl.clusters[ci].aligned, np.asarray(w, float)[None])
    rot, height, motion = to_frames(bl, ctrl.task.n_keys)
    rot = np.concatenate((bl.rot[0, :1], rot))
    height = np.concatenate((bl.height[0, :1], height))
    ground, yaw = integrate(np.vstack((np.zeros((1, 3)), motion)))
    rot = rot.copy()
    rot[:, 0] = quat.mul(heading(yaw), rot[:, 0])
    return Clip(name, ctrl.skeleton, ctrl.fps, np.column_stack((ground, height)), quat.make_continuous(rot),
                tags={"synthesized"})


def blend_skating(ctrl: Controller, ci: int, w) -> float:
    return foot_skating(blend_clip(ctrl, ci, w))["skating"]


# --------------------------------------------------------------------------- the pool and the oracle

@dataclass(eq=False)
class Pool:
    """Capture cut into the task's examples: clips, and per example its clip, keys, start state
    and features (what it does alone)."""

    task: object
    clips: list
    clip: np.ndarray
    keys: list
    states: np.ndarray
    features: np.ndarray
    used: np.ndarray = None

    @classmethod
    def of(cls, clips, task, skeleton, fps) -> Pool:
        rows, keys, parts = [], [], []
        for i, clip in enumerate(clips):
            wins = task.windows(clip, foot_contacts(clip))
            if not wins:
                continue
            src = source_of(clip)
            rows += [i] * len(wins)
            keys += [np.asarray(k) for k in wins]
            parts += [align(src, k) for k in wins]
        if not rows:
            raise MotionctlError(f"no {task.name} examples in the pool's {len(clips)} clips")
        ex = Aligned.stack(parts)
        feats = task.features(skeleton, blend(ex, np.eye(ex.n)), fps)  # each example alone, in one pass
        return cls(task, list(clips), np.array(rows), keys, ex.start_state.astype(np.float32), feats,
                   np.zeros(len(rows), dtype=bool))

    @property
    def n(self) -> int:
        return len(self.clip)

    def take(self, i: int, margin: int = TAKE_MARGIN):
        """Example ``i`` as a take: its clip from a little before its start to a little after its
        end state (what a performer hands over)."""
        return self.clips[self.clip[i]].slice(*self._span(i, margin))

    def _span(self, i: int, margin: int) -> tuple[int, int]:
        clip = self.clips[self.clip[i]]
        return max(0, int(self.keys[i][0]) - margin), min(clip.n_frames, int(self.keys[i][-1]) + STATE_FRAMES + margin)

    def give(self, ctrl: Controller, i: int, state) -> tuple[int, bool]:
        """Hand example ``i`` to the controller as a take (trimmed there at ``state``); it is used."""
        self.used[i] = True
        return ctrl.add_example(self.take(i), state, name=self.name(i), offset=self._span(i, TAKE_MARGIN)[0])

    def pose(self, i: int) -> tuple:
        """(rot [J, 4], height) of example ``i``'s first pose (what the panel shows of its start)."""
        clip = self.clips[self.clip[i]]
        k = int(self.keys[i][0])
        yaw = root_frame(clip, HEADING_SMOOTH)[1][k]
        rot = clip.local_rot[k].copy()
        rot[0] = quat.mul(heading(-yaw), rot[0])  # the root relative to its heading, as clusters hold it
        return rot, float(clip.root_pos[k, 2])

    def name(self, i: int) -> str:
        """The name of example ``i``'s clip."""
        return self.clips[self.clip[i]].name

    def completes(self, states: np.ndarray, u: np.ndarray, tolerance: float) -> np.ndarray:
        """bool [M]: some pool example starts within ``tolerance`` of the state and completes u."""
        near = distances(states, self.states) <= tolerance  # [M, N]
        ok = np.zeros(len(u), dtype=bool)
        for a in range(0, len(u), 512):  # [512, N, D] errors at a time
            err = self.task.errors(self.features[None], u[a:a + 512, None])
            ok[a:a + 512] = np.any(near[a:a + 512] & np.all(err <= 1.0, axis=2), axis=1)
        return ok


@dataclass
class Oracle:
    """Stands in for the performer.  ``answer`` gives the unused pool example best matching a
    request (start distance / tolerance + summed task error), as a performer does their best at
    what is asked; it rejects the request (None) when no unused example starts within
    ``tolerance`` of the state, when the best misses u by more than ``reject`` tolerances in some
    metric (3: a performer comes that close to what is asked or says it cannot be done; most of
    the task box asks for no walk a person does, stride 0.2 m at 1.8 m/s, and a performer who
    answered it anyway with their nearest walk gave the learner the same few walks again and
    again), or when it would not do the task better than the controller already does
    (``current``: the controller's summed error there; a take that cannot help is not worth
    capturing).  ``accepts`` a pseudoexample that completes its task with no more skating than
    its sources (plus ``skate_margin``)."""

    pool: Pool
    tolerance: float = 0.12
    reject: float = 3.0
    skate_margin: float = 0.02

    def answer(self, cand: Candidate, current: float = np.inf):
        d = distances_to(self.pool.states, cand.state)
        err = self.pool.task.errors(self.pool.features, cand.u)
        total = err.sum(axis=1)
        ok = (d <= self.tolerance) & ~self.pool.used & np.all(err <= self.reject ** 2, axis=1) & (total < current - 1.0)
        if not ok.any():
            return None
        i = int(np.argmin(np.where(ok, d / self.tolerance + total, np.inf)))
        self.pool.used[i] = True
        return i

    def accepts(self, p: Pseudo | None) -> bool:
        return p is not None and p.completes and p.skating <= p.source_skating + self.skate_margin


# --------------------------------------------------------------------------- coverage

@dataclass(eq=False)
class CoverageSample:
    """A fixed random sample of (state, u): states are the pool examples' start states (the
    states a walk or a jump really starts from), u uniform in the task's bounds."""

    states: np.ndarray
    u: np.ndarray

    @classmethod
    def draw(cls, pool: Pool, n: int = 2000, seed: int = 0) -> CoverageSample:
        rng = np.random.default_rng(seed)
        return cls(pool.states[rng.integers(0, pool.n, n)], pool.task.sample(rng, n))


def coverage(ctrl: Controller, sample: CoverageSample) -> np.ndarray:
    """bool [M]: which samples the controller completes."""
    return ctrl.completes(sample.states, sample.u)


# --------------------------------------------------------------------------- the loop

@dataclass
class StepLog:
    step: int
    action: str  # "example", "pseudoexample", "rejected"
    candidate: str
    metric: str
    answer: str
    examples: int
    pseudo: int
    clusters: int
    coverage: float | None
    seconds: float
    rejected: int = 0


@dataclass
class Learner:
    """The active-learning loop's state: the requests rejected, and those answered with what was
    given for them (the automatic user weighs each request by the coverage its answer is expected
    to add, ``candidates.gains``, where the paper's user picks among the metrics' lists)."""

    ctrl: Controller
    oracle: Oracle
    rng: object
    rejected: list = field(default_factory=list)
    given: list = field(default_factory=list)  # (state, u asked, features given) of each request answered
    yields: dict = field(default_factory=dict)  # cluster: [(gain expected, gain got)] of its answers
    turn: int = 0  # the metric asked next when the gains tell nothing (``in_turn``)
    answers_since_open: int = 0  # answers since the last to a request from a state no cluster started from
    pseudo_per_example: int = 1
    pseudo_since: int = 0
    plan: list = None  # the lattice's task inputs still to ask (``planned``)
    top_gain: float = 0.0  # the greatest gain expected of a request so far (``order``)

    def planned(self) -> list:
        """The requests asked before any other: from the seed's start, the cell centres of a
        lattice of ``PLAN_PER_DIM`` per task dimension over the box, those not yet answered or
        rejected, the greatest expected gain first (``gains``, each candidate's ``gain``; ties in
        a random order) (paper 003's manual plans, Table 1, as the learner's first requests: with
        one or two examples a cluster's gains point at the box's corners, which the performer
        answers with the nearest walk they have, while a lattice spreads the first answers over
        what the performer can do; among its cells, the gains ask first the one whose answer
        adds the most to what the seed's cluster already blends, where a random order spent the
        first answers on cells beside the seed's own walk: on five seed examples bench_active
        never uses, active at 5 examples was then no better than random).  The plan
        ends at its first answer that does not join the seed's cluster (a jump in place asked to
        jump forward gives a forward jump, which does not blend with it: spreading the seed's
        cluster then spreads nothing).  Empty for a controller given more than its seed before
        (a session continued)."""
        if self.plan is None:
            task = self.ctrl.task
            self.plan = list(grid_plan(task, PLAN_PER_DIM ** task.dim, self.rng)) if self.ctrl.n_examples == 1 else []
        c = self.ctrl.clusters[0]
        plan = [k for k in (Candidate("plan", 0, c.start_state, u, 0.0, start_pose(c)) for u in self.plan)
                if not self.was_rejected(k)]
        for k, g in zip(plan, gains(self.ctrl, plan, self.oracle.pool, self.given) if plan else ()):
            k.gain = float(g)
        return sorted(plan, key=lambda k: -k.gain)

    def refused(self, cand: Candidate) -> None:
        """The performer cannot do ``cand``: it and requests near it are not asked again."""
        self.rejected.append(cand)
        self._unplan(cand)

    def _unplan(self, cand: Candidate) -> None:
        if cand.metric == "plan" and self.plan:
            self.plan = [u for u in self.plan if not np.array_equal(u, cand.u)]

    def order(self, cands: list) -> list:
        """The candidates not near a rejected request, in the order the automatic user asks them:
        those expected to add coverage first, the greatest expected gain first (each candidate's
        ``gain``, times its cluster's ``trust``); a request from a state no cluster starts from
        (``Candidate.opens``: the library answers a start request at once) among them only when
        expected to add at least ``GAIN_FLOOR`` of the best's gain, but first of all after
        ``OPEN_EVERY`` answers from the clusters' starts; then the others, the metrics in turn
        (``in_turn``: the gains tell nothing of answers that fall between the grid's inputs).
        Once the best gain expected falls below ``LATE_GAIN`` of the greatest it ever was, the
        first ``LATE_TAKES`` of ``take_candidates`` go before them all: when the gains expect next
        to nothing, what the library's takes do is asked in a random order, as random picks do."""
        cands = [k for k in cands if not self.was_rejected(k)]
        if not cands:
            return []
        for k, g in zip(cands, gains(self.ctrl, cands, self.oracle.pool, self.given)):
            k.gain = float(g) * (1.0 if k.opens else self.trust(k.cluster))
        best = max(k.gain for k in cands)
        self.top_gain = max(self.top_gain, best)
        opening = self.answers_since_open >= OPEN_EVERY
        first = [k for k in cands if k.gain > 0 and (not k.opens or opening or k.gain >= GAIN_FLOOR * best)]
        taken = {id(k) for k in first}
        out = sorted(first, key=lambda k: (not (opening and k.opens), -k.gain)) + \
            self.in_turn([k for k in cands if id(k) not in taken])
        if best >= LATE_GAIN * self.top_gain:
            return out
        takes = (k for k in take_candidates(self.ctrl, self.oracle.pool, self.rng) if not self.was_rejected(k))
        return [k for _, k in zip(range(LATE_TAKES), takes)] + out

    def in_turn(self, cands: list) -> list:
        """The candidates in the paper's user's order: metrics in turn (starting after the one
        that gave the last answer), worst first within each."""
        kinds = sorted({k.metric.split(":")[0] for k in cands}, key=METRICS.index)
        return [k for t in range(len(kinds)) for k in cands
                if k.metric.split(":")[0] == kinds[(self.turn + t) % len(kinds)]]

    def answered(self, cand: Candidate, ci: int, before: float) -> None:
        """``cand`` was answered with an example, now cluster ``ci``'s last (``before``: the
        controller's ``held_share`` before it was added): what it does is remembered (asked nearly
        the same again, the performer is expected to give the same again), and what it added
        against the gain hoped of it, for the cluster asked (``trust``: an answer from its start
        that opens a cluster of its own, a jump in place asked of a forward jump's start, did not
        bring what the asked cluster hoped of it, whatever the new cluster holds; a take asked
        late, ``take_candidates``, of which nothing was hoped, adds what it brought: a start whose
        takes still add is trusted again)."""
        features = self.ctrl.clusters[ci].examples[-1].features
        self.given.append((np.asarray(cand.state).copy(), np.asarray(cand.u, float).copy(),
                           np.asarray(features, float).copy()))
        if cand.metric != "plan" and not cand.opens:  # the start asked (a plan's asked whatever it would add)
            got = held_share(self.ctrl, self.oracle.pool) - before
            self.yields.setdefault(cand.cluster, []).append((cand.gain, got))
        self.answers_since_open = 0 if cand.opens else self.answers_since_open + 1
        self._passed(cand)
        self._unplan(cand)
        if cand.metric == "plan" and ci != 0:
            self.plan = []  # its answer does not blend with the seed's: the box holds motions of other kinds
        self.pseudo_since = 0

    def pseudo_taken(self, cand: Candidate) -> None:
        """``cand`` was answered with a pseudoexample: the metrics' turn moves on past it."""
        self._passed(cand)
        self._unplan(cand)
        self.pseudo_since += 1

    def _passed(self, cand: Candidate) -> None:
        """The metrics' turn moves on past ``cand``'s (the lattice's requests are no metric's)."""
        if cand.metric != "plan":
            self.turn = (METRICS.index(cand.metric.split(":")[0]) + 1) % len(METRICS)

    def trust(self, cluster: int) -> float:
        """The share of the gain expected of its last ``TRUST_ANSWERS`` answers that a cluster's
        answers brought (1 before any): where the performer's answers from a start stop adding
        what was hoped, other starts are asked."""
        last = self.yields.get(cluster, [])[-TRUST_ANSWERS:]
        hoped = sum(h for h, _ in last)
        return 1.0 if hoped <= 0 else float(np.clip(sum(g for _, g in last) / hoped, 0.0, 1.0))

    def was_rejected(self, k: Candidate) -> bool:
        return not is_open(self.ctrl, refused_inputs(self.ctrl, self.rejected, k.state), k.u)[0]


def active_step(learner: Learner, step: int, sample: CoverageSample | None = None, should_stop=None,
                pseudo_tries: int = 2, rounds: int = SEARCH_ROUNDS, progress=None) -> StepLog:
    """One automatic step: candidates; going down them in the user's order, the first whose
    pseudoexample the oracle accepts, or that the oracle answers with an example; the requests it
    rejects on the way are remembered and not asked again (asking costs nothing: it is the
    performer saying "I cannot do that from there").  When it rejects every one, the search runs
    again past them, up to ``rounds`` times (the box's impossible corners take a few rounds to
    rule out); the order is ``Learner.order``'s.  While a plan is left (``Learner.planned``), its
    requests are asked first and no search runs.  Pseudoexamples are tried
    for the first ``pseudo_tries`` task candidates, at most ``pseudo_per_example`` between two
    real examples; ``progress`` hears the searches (each an equal share of the step)."""
    t0 = time.perf_counter()
    ctrl = learner.ctrl
    rejected = tried = 0
    first = answered = None
    plan = learner.planned()
    if plan:
        first = plan[0]
        answered, rejected, _ = _ask(learner, plan, 0)
    for r in range(0 if answered else rounds):
        part = progress_range(progress, r / rounds, (r + 1) / rounds)
        cands = learner.order(candidates(ctrl, learner.rng, should_stop=should_stop, rejected=learner.rejected,
                                         library=learner.oracle.pool, progress=part))
        if not cands:
            break
        first = first or cands[0]
        answered, r, t = _ask(learner, cands, pseudo_tries - tried)
        rejected, tried = rejected + r, tried + t
        if answered:
            break
    if first is None:
        return StepLog(step, "rejected", "none", "none", "every candidate is near a rejected request", ctrl.n_examples,
                       ctrl.n_pseudo, len(ctrl.clusters), None, time.perf_counter() - t0, rejected)
    cand, action, answer = answered or (first, "rejected", f"{rejected} requests, none within tolerance")
    cov = float(coverage(ctrl, sample).mean()) if sample is not None else None
    return StepLog(step, action, cand.describe(ctrl.task), cand.metric, answer, ctrl.n_examples, ctrl.n_pseudo,
                   len(ctrl.clusters), cov, time.perf_counter() - t0, rejected)


def _ask(learner: Learner, cands: list, pseudo_tries: int) -> tuple:
    """Down the candidates: ((candidate, action, answer) of the first a pseudoexample or the oracle
    answers, or None; requests rejected; pseudoexamples tried)."""
    ctrl = learner.ctrl
    rejected = tried = 0
    for cand in cands:
        pseudo = None
        if cand.cluster >= 0 and cand.metric != "transition" and learner.pseudo_since < learner.pseudo_per_example and tried < pseudo_tries:
            pseudo, tried = pseudoexample(ctrl, cand), tried + 1
        if learner.oracle.accepts(pseudo):
            ctrl.add_pseudo(pseudo.cluster, pseudo.u, pseudo.w)
            learner.pseudo_taken(cand)
            return (cand, "pseudoexample", f"weights {np.round(pseudo.w, 2).tolist()} errors "
                    f"{np.round(pseudo.errors, 2).tolist()}"), rejected, tried
        current = float(ctrl.errors(cand.cluster, cand.u[None]).sum()) if cand.metric not in ("transition", "start") \
            else np.inf
        i = learner.oracle.answer(cand, current)
        if i is None:
            learner.refused(cand)
            rejected += 1
            continue
        pool = learner.oracle.pool
        before = held_share(ctrl, pool)
        ci, new = pool.give(ctrl, i, cand.state)
        learner.answered(cand, ci, before)
        return (cand, "example", f"{pool.name(i)} frames {int(pool.keys[i][0])}-{int(pool.keys[i][-1])} -> "
                f"{'new ' if new else ''}cluster {ci}"), rejected, tried
    return None, rejected, tried


def baseline(ctrl: Controller, pool: Pool, budget: int, how: str, seed: int = 0, sample: CoverageSample | None = None,
             oracle: Oracle | None = None) -> list:
    """Coverage (bool [M] per sample) after each example added without active learning: ``random`` (the pool's
    examples in a random order), ``answerable`` (the same order, only the examples a request inside
    the task box can be answered with, ``answerable``: what random picks add that no request can get)
    or ``grid`` (a uniform grid plan over the task inputs, all from the seed's start state, each
    answered by the oracle; requests it rejects are skipped)."""
    out = []
    rng = np.random.default_rng(seed)
    oracle = oracle or Oracle(pool)
    if how in ("random", "answerable"):
        order = rng.permutation(pool.n)
        if how == "answerable":
            order = order[answerable(pool, oracle.reject)[order]]
        for i in order:
            if ctrl.n_examples >= budget:
                break
            if pool.used[i]:
                continue
            pool.give(ctrl, i, pool.states[i])
            out.append(coverage(ctrl, sample) if sample is not None else None)
        return out
    if how != "grid":
        raise MotionctlError(f"unknown baseline {how!r}: random, answerable or grid")
    seed_state = ctrl.clusters[0].start_state
    for u in grid_plan(pool.task, budget - ctrl.n_examples, rng):
        i = oracle.answer(Candidate("grid", 0, seed_state, u, 0.0))
        if i is None:
            continue
        pool.give(ctrl, i, seed_state)
        out.append(coverage(ctrl, sample) if sample is not None else None)
    return out


def answerable(pool: Pool, reject: float = Oracle.reject) -> np.ndarray:
    """bool [N]: the pool's examples some request inside the task box can be answered with, what
    each does within ``reject`` tolerances of the box in every metric (the oracle's reach: a
    90-degree turn per stride answers no request of a box of 45 degrees)."""
    task = pool.task
    inside = np.clip(pool.features, task.low, task.high)
    return np.all(task.errors(pool.features, inside) <= reject ** 2, axis=1)


def grid_plan(task, n: int, rng) -> np.ndarray:
    """[n', D] a uniform grid over the task inputs with about ``n`` points (as many per dimension
    as fit), in a random order, cut to ``n``."""
    per = max(1, int(np.floor(n ** (1.0 / task.dim) + 1e-9)))
    axes = [np.linspace(lo + (hi - lo) / (2 * per), hi - (hi - lo) / (2 * per), per) for lo, hi in zip(task.low, task.high)]
    pts = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, task.dim)
    extra = task.sample(rng, max(0, n - len(pts)))
    return np.vstack((pts[rng.permutation(len(pts))], extra))[:n]


__all__ = ["Candidate", "CoverageSample", "Learner", "Oracle", "Pool", "Pseudo", "StepLog", "active_step", "answerable",
           "baseline", "blend_clip", "candidates", "coverage", "grid_plan", "pseudoexample", "skating_of"]
