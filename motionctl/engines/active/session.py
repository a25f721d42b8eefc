"""The active-learning loop with a person in it (paper 003, section 4; the *Active Learning* panel).

``ActiveSession`` holds a controller learning from a library: the library is both what the
animator answers requests from and the pool the oracle (*Auto*) draws on.  One step is either

- ``suggest`` (the candidates in the order the loop asks them, with a pseudoexample proposed for
  the first few), then ``answer`` with a clip, ``reject``, or ``accept_pseudo``; or
- ``auto``: one oracle step (what ``fit`` repeats until the budget).

Every change refits the controller, measures coverage on a fixed sample and is logged; ``model``
turns the session into an ``ActiveModel`` at any point, so Drive, Play Trace and Bake can try the
controller between steps.  Plain Python: the panel runs each call as a background job.
"""

from __future__ import annotations

import time

import numpy as np

from ...body import mirror_clip
from ...clip import resample
from ...errors import MotionctlError
from ...jobs import check_stop, progress_range
from ..base import clips_of, working_set
from .controller import Controller
from .model import ActiveModel, ActiveSettings
from .learning import (Candidate, CoverageSample, Learner, Oracle, Pool, StepLog, active_step, candidates, held_share,
                       coverage, pseudoexample)
from .tasks import task_named

SAMPLE = 4000  # (state, u) pairs coverage is measured on
IDLE_STEPS = 5  # steps in a row with every request rejected: the pool has nothing more to give
PSEUDO_SHOWN = 3  # task candidates a suggestion proposes a pseudoexample for


class ActiveSession:
    """A controller being taught.  ``clips``: the library's clips (the group's); the working set
    is them at ``settings.fps`` and, with ``settings.mirror``, their mirror images.  ``controller``
    continues a saved one (its examples are marked used in the pool); else the seed clip's first
    example starts it."""

    def __init__(self, clips, settings, controller: Controller | None = None, log=()):
        self.settings = s = settings
        self.task = task_named(s.task)
        if controller is not None and controller.task.name != self.task.name:
            raise MotionctlError(f"the saved controller learns {controller.task.name!r}, the settings ask for "
                                 f"{self.task.name!r}: change Task or start again")
        self.clips = working(clips, s)
        self.pool = Pool.of(self.clips, self.task, self.clips[0].skeleton, s.fps)
        self.sample = CoverageSample.draw(self.pool, SAMPLE, s.search_seed)
        self.oracle = Oracle(self.pool, s.tolerance)
        self.logs = [StepLog(**e) for e in log]
        self.candidates: list[Candidate] = []
        self._reach = None
        if controller is None:
            controller = Controller(self.task, self.clips[0].skeleton, s.fps, s.tolerance, s.join)
            i = seed_index(self.pool, s.seed_clip)
            self.pool.give(controller, i, self.pool.states[i])
        else:
            joints = controller.clusters[0].aligned.rot.shape[2]
            if joints != len(self.clips[0].skeleton.names):
                raise MotionctlError(f"the saved controller was taught on a skeleton of {joints} joints; these clips "
                                     f"have {len(self.clips[0].skeleton.names)}: start again on them")
            controller.skeleton = self.clips[0].skeleton
            self._mark_used(controller)
        self.ctrl = controller
        self.learner = Learner(controller, self.oracle, np.random.default_rng(s.search_seed + len(self.logs)),
                               pseudo_per_example=1 if s.pseudoexamples else 0)

    def _mark_used(self, ctrl: Controller) -> None:
        """Pool examples the controller already holds (same clip and first key) are not offered again."""
        held = {(e.clip, int(e.keys[0])) for c in ctrl.clusters for e in c.examples}
        for i in range(self.pool.n):
            if (self.pool.name(i), int(self.pool.keys[i][0])) in held:
                self.pool.used[i] = True

    # --- the steps

    def suggest(self, progress=None, should_stop=None) -> list[Candidate]:
        """The candidates in the order the loop asks them (requests rejected before left out),
        and a pseudoexample for the first ``PSEUDO_SHOWN`` task candidates that have one."""
        cands = self.learner.planned() + self.learner.order(candidates(
            self.ctrl, self.learner.rng, should_stop=should_stop, progress=progress, rejected=self.learner.rejected,
            library=self.pool))
        if self.settings.pseudoexamples:
            shown = 0
            for cand in [c for c in cands if c.cluster >= 0 and c.metric != "transition"][:2 * PSEUDO_SHOWN]:
                cand.pseudo = pseudoexample(self.ctrl, cand)
                shown += cand.pseudo is not None
                if shown >= PSEUDO_SHOWN:
                    break
        self.candidates = cands
        return cands

    def candidate(self, k: int) -> Candidate:
        if not 0 <= k < len(self.candidates):
            raise MotionctlError(f"no candidate {k + 1}: press Suggest (the list holds {len(self.candidates)})")
        return self.candidates[k]

    def answer(self, k: int, clip, mirrored: bool = False) -> StepLog:
        """Candidate ``k`` answered with ``clip`` (a library clip or a new capture, its mirror image
        with ``mirrored``): trimmed at the gait cycle or jump nearest the requested start, added to
        the cluster it aligns with (or a new one)."""
        t0 = time.perf_counter()
        cand = self.candidate(k)
        if clip.skeleton.names != self.ctrl.skeleton.names:
            raise MotionctlError(f"clip {clip.name!r} is on another skeleton than the controller's clips")
        take = resample(clip, self.settings.fps)
        take = mirror_clip(take) if mirrored else take
        before = held_share(self.ctrl, self.learner.oracle.pool)
        ci, new = self.ctrl.add_example(take, cand.state, name=take.name)
        self._mark_used(self.ctrl)
        ex = self.ctrl.clusters[ci].examples[-1]
        self.learner.answered(cand, ci, before)
        return self._step("example", cand, f"{take.name} frames {int(ex.keys[0])}-{int(ex.keys[-1])} -> "
                          f"{'new ' if new else ''}cluster {ci}", t0)

    def reject(self, k: int) -> StepLog:
        """Candidate ``k`` cannot be captured: it and requests near it are not asked again."""
        t0 = time.perf_counter()
        cand = self.candidate(k)
        self.learner.refused(cand)
        self.candidates = [c for c in self.candidates if not self.learner.was_rejected(c)]
        return self._step("rejected", cand, "rejected by the animator", t0, changed=False)

    def accept_pseudo(self, k: int) -> StepLog:
        """Candidate ``k``'s pseudoexample joins its cluster's map."""
        t0 = time.perf_counter()
        cand = self.candidate(k)
        p = cand.pseudo
        if p is None:
            raise MotionctlError(f"candidate {k + 1} has no pseudoexample (its cluster has one example, or none "
                                 "starts at its state)")
        self.ctrl.add_pseudo(p.cluster, p.u, p.w)
        self.learner.pseudo_taken(cand)
        return self._step("pseudoexample", cand, f"weights {np.round(p.w, 2).tolist()} errors "
                          f"{np.round(p.errors, 2).tolist()}", t0)

    def auto(self, progress=None, should_stop=None) -> StepLog:
        """One oracle step: the first request the library can answer, or a pseudoexample it accepts."""
        if progress:
            progress(0.0, "suggesting")
        entry = active_step(self.learner, len(self.logs), self.sample, should_stop)
        self.logs.append(entry)
        self.candidates = []
        return entry

    def learn(self, budget: int, track: bool = False, max_steps: int | None = None, progress=None, should_stop=None,
              log=None) -> list[StepLog]:
        """Oracle steps until ``budget`` examples, ``max_steps`` steps (3 x budget) or IDLE_STEPS
        steps in a row where every request was rejected (what Train runs); ``track`` measures
        coverage after each; ``log(StepLog)`` hears every step.  Returns this call's steps."""
        first = len(self.logs)
        idle = 0
        had = self.ctrl.n_examples
        wanted = max(budget - had, 1)
        done = [0.0]  # share reported: each example wanted is an equal share, a step's search within it

        def report(f, m):
            done[0] = max(done[0], min(0.99, f))
            progress(done[0], m)

        steps = max_steps or 3 * budget
        for _ in range(steps):
            if self.ctrl.n_examples >= budget or idle >= IDLE_STEPS:
                break
            check_stop(should_stop, "active learning")
            gained = self.ctrl.n_examples - had
            within = None if not progress else (
                lambda f, m, g=gained: report((g + f) / wanted, f"example {had + g + 1} of {budget}: {m}"))
            entry = active_step(self.learner, len(self.logs), self.sample if track else None, should_stop,
                                progress=within)
            idle = idle + 1 if entry.action == "rejected" else 0
            self.logs.append(entry)
            if log:
                log(entry)
            if progress:
                report((self.ctrl.n_examples - had) / wanted,
                       f"{self.ctrl.n_examples} examples, {self.ctrl.n_pseudo} pseudoexamples")
        if progress:
            why = ("the budget" if self.ctrl.n_examples >= budget else
                   f"{IDLE_STEPS} steps in a row rejected" if idle >= IDLE_STEPS else f"{steps} steps")
            progress(1.0, f"{self.ctrl.n_examples} examples, {self.ctrl.n_pseudo} pseudoexamples (stopped at {why})")
        return self.logs[first:]

    def _step(self, action: str, cand: Candidate, answer: str, t0: float, changed: bool = True) -> StepLog:
        cov = float(coverage(self.ctrl, self.sample).mean()) if changed else (self.logs[-1].coverage if self.logs
                                                                              else None)
        entry = StepLog(len(self.logs), action, cand.describe(self.task), cand.metric, answer, self.ctrl.n_examples,
                        self.ctrl.n_pseudo, len(self.ctrl.clusters), cov, time.perf_counter() - t0,
                        int(action == "rejected"))
        self.logs.append(entry)
        if changed:
            self.candidates = []
        return entry

    # --- what it has learned

    def summary(self) -> dict:
        done = coverage(self.ctrl, self.sample)
        if self._reach is None:  # what the library's own examples complete: fixed for the session
            self._reach = self.pool.completes(self.sample.states, self.sample.u, self.settings.tolerance)
        reach = self._reach
        out = {"task": self.task.name, "examples": self.ctrl.n_examples, "pseudoexamples": self.ctrl.n_pseudo,
               "clusters": len(self.ctrl.clusters), "steps": len(self.logs),
               "rejected": int(sum(e.rejected for e in self.logs)), "coverage": float(done.mean()),
               "pool_coverage": float(reach.mean()),
               "coverage_normalised": float(done.mean() / max((done | reach).mean(), 1e-9)),
               "pool_examples": self.pool.n}
        if self.task.steers:
            out["top_speed"] = float(self.ctrl.example_features()[:, 1].max())
        return out

    def model(self):
        """The controller as it stands, as an ActiveModel (with this session's log)."""
        model = ActiveModel(self.settings, self.summary(), [c.name for c in self.clips], self.settings.fps, 0.2,
                            self.ctrl, [vars(e) for e in self.logs])
        model.remember(self.clips)
        return model


def working(library, settings) -> list:
    """The working clips: the library's at ``settings.fps``, and their mirror images with ``settings.mirror``."""
    return working_set(clips_of(library), settings.fps, settings.mirror, mirrors_last=True)


def seed_index(pool: Pool, name: str) -> int:
    """The pool example that seeds learning: the first of clip ``name`` (or of the first clip)."""
    names = [pool.clips[i].name for i in pool.clip]
    if name:
        hits = [i for i, n in enumerate(names) if n == name]
        if not hits:
            raise MotionctlError(f"seed clip {name!r} holds no {pool.task.name} example (or is not in the library)")
        return hits[0]
    return 0


def fit(library, settings: ActiveSettings | None = None, *, progress=None, should_stop=None, cache=None, log=None,
        track: bool = False):
    """Active learning against the oracle, the library being the capture it draws from: seeded
    with the seed clip's first example, then ``active_step`` until the budget of examples.
    ``log(StepLog)`` hears every step; ``track`` measures coverage after each (the command line)."""
    s = settings or ActiveSettings()
    if progress:
        progress(0.0, "the library's examples of the task")
    session = ActiveSession(library, s)
    session.learn(s.budget, track, progress=progress_range(progress, SESSION_SHARE, LEARN_SHARE),
                  should_stop=should_stop, log=log)
    if progress:
        progress(LEARN_SHARE, "measuring coverage")
    model = session.model()
    if progress:
        progress(1.0, f"done: {session.ctrl.n_examples} examples")
    return model


# Shares of the job (measured): finding the library's examples and the coverage sample, learning,
# then the summary's coverage.
SESSION_SHARE, LEARN_SHARE = 0.05, 0.97


__all__ = ["ActiveSession", "fit", "seed_index", "working"]
