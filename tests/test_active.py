"""Active learning (paper 003): the RBF blend map, candidates, pseudoexamples, the oracle,
coverage and the engine on real capture (CMU subject 16 walks and jumps)."""

import json
import os

import numpy as np
import pytest

from motionctl.body import mirror_clip
from motionctl.clip import resample
from motionctl.engines.active import ActiveSettings, fit
from motionctl.engines.active.controller import BlendMap, Controller, profile, simplex_weights
from motionctl.engines.active.learning import (
    Candidate, CoverageSample, Learner, Oracle, Pool, candidates, coverage, pseudoexample)
from motionctl.engines.active.tasks import task_named
from motionctl.errors import MotionctlError
from motionctl.io.library import import_library
from motionctl.play.session import Session
from motionctl.play.commands import Command, PlaySettings
from motionctl.rootframe import wrap


def test_cubic_profile_values():
    x = np.array([0.0, 0.25, 0.5, 1.0, 1.5, -0.25])
    assert np.allclose(profile(x), [1.0, 0.84375, 0.5, 0.0, 0.0, 0.84375])


def test_blend_map_interpolates_its_examples_and_clamps():
    rng = np.random.default_rng(0)
    x = rng.random((7, 3))
    w = np.vstack((np.eye(6), [[0.2, 0.3, 0.5, 0, 0, 0]]))  # six examples and one pseudoexample
    m = BlendMap(x, w, np.full((7, 3), 0.4))
    assert np.allclose(m.raw(x), w, atol=1e-9)
    assert np.allclose(m(x), w, atol=1e-9)
    far = rng.random((200, 3)) * 3 - 1  # extrapolation: the raw map leaves [0, 1]
    raw, out = m.raw(far), m(far)
    assert raw.min() < 0 or raw.max() > 1
    assert out.min() >= 0 and out.max() <= 1 and np.allclose(out.sum(axis=1), 1.0)


@pytest.fixture(scope="module")
def walk_clips(mocap):
    files = [os.path.join(mocap, "cmu_amc", "16", f"16_{t}.amc") for t in ("15", "17", "19", "23", "25", "32")]
    clips = [resample(c, 30) for c in import_library(files).groups[0].database.clips]
    return clips + [mirror_clip(c) for c in clips]


@pytest.fixture(scope="module")
def walk_pool(walk_clips):
    return Pool.of(walk_clips, task_named("walk"), walk_clips[0].skeleton, 30)


def controller_of(pool, idx, **kw):
    ctrl = Controller(pool.task, pool.clips[0].skeleton, 30, **kw)
    for i in idx:
        ctrl.add_example(pool.take(i), pool.states[i])
    return ctrl


def test_examples_are_gait_cycles_with_what_they_do(walk_pool):
    f = walk_pool.features
    assert walk_pool.n >= 15
    assert np.all((f[:, 0] > 0.3) & (f[:, 0] < 1.0))  # stride length, m
    assert np.all((f[:, 1] > 0.4) & (f[:, 1] < 2.5))  # speed, m/s
    assert f[:, 2].max() > 0.4 and f[:, 2].min() < -0.4  # 90° turns both ways (mirrors)


def test_add_example_trims_the_clip_at_the_requested_start_and_names_a_clip_without_one(walk_pool, walk_clips):
    clip = walk_clips[0]
    rows = np.flatnonzero(walk_pool.clip == 0)
    second = rows[1]
    ctrl = Controller(walk_pool.task, clip.skeleton, 30)
    ctrl.add_example(clip, walk_pool.states[second])
    assert np.array_equal(ctrl.clusters[0].examples[0].keys, walk_pool.keys[second])
    with pytest.raises(MotionctlError, match=clip.name):
        ctrl.add_example(clip.slice(0, 12))


def test_a_controller_reproduces_its_examples_and_blends_between_them(walk_pool):
    ctrl = controller_of(walk_pool, range(0, walk_pool.n, 3))
    for ci, c in enumerate(ctrl.clusters):
        u = np.array([e.features for e in c.examples])
        assert np.all(ctrl.errors(ci, u) < 1e-6)
    assert ctrl.n_examples == len(range(0, walk_pool.n, 3))


def test_a_controller_completes_what_each_of_its_examples_completes_alone(walk_pool):
    """Near each example's own task the controller plays at least as well as that example (where
    the paper's map alone, blending neighbours that each meet u, misses some)."""
    ctrl = controller_of(walk_pool, range(walk_pool.n))
    task, rng = walk_pool.task, np.random.default_rng(0)
    map_misses = 0
    for ci, c in enumerate(ctrl.clusters):
        f = np.repeat(np.array([e.features for e in c.examples]), 8, axis=0)
        u = f + rng.uniform(-0.7, 0.7, f.shape) * task.tol  # each example alone completes these
        assert np.all(task.errors(f, u) <= 1.0)
        assert np.all(ctrl.errors(ci, u) <= 1.0)
        w_map = c.map(task.normalise(u))
        map_misses += int(np.sum(np.any(task.errors(ctrl.features(ci, w_map), u) > 1.0, axis=1)))
    assert map_misses > 0


def test_simplex_weights_meet_what_a_convex_blend_of_the_features_does():
    task, rng = task_named("walk"), np.random.default_rng(1)
    feats = task.sample(rng, 7)
    true = rng.dirichlet(np.ones(7), 50)
    w = simplex_weights(task, feats, true @ feats, locality=0.0)
    assert np.all(w >= 0) and np.allclose(w.sum(axis=1), 1.0)
    assert np.all(task.errors(w @ feats, true @ feats) < 0.01)
    far = task.high + 10 * task.tol  # outside the hull: the nearest blend, not a blend past the examples
    w = simplex_weights(task, feats, far[None])[0]
    assert np.all(w >= 0) and np.isclose(w.sum(), 1.0)


def test_a_controller_aims_past_what_its_blend_misses_by_what_it_missed(walk_pool, monkeypatch):
    """A blend's stride, speed and turn are not its examples' weighted sum: where the blend that the
    features' sum says meets u misses it by a little, the controller aims past u by the miss and
    plays what meets u (on subject 16's walks about a tenth more of the coverage sample)."""
    from motionctl.engines.active import controller as ctl
    ctrl = controller_of(walk_pool, range(walk_pool.n))
    task, rng = walk_pool.task, np.random.default_rng(3)
    ci = int(np.argmax([c.k for c in ctrl.clusters]))
    u = task.sample(rng, 2000)
    monkeypatch.setattr(ctl, "AIM_PAST", 0)
    before = ctrl.errors(ci, u).max(axis=1)
    monkeypatch.setattr(ctl, "AIM_PAST", 2)
    after = ctrl.errors(ci, u).max(axis=1)
    # margin: equal where not aimed (the same arithmetic), below where aimed; 1e-9 on errors of ~1-50
    assert np.all(after <= before + 1e-9)  # a blend aimed past is played only where it does better
    # margin: counts 272 > 1.1 x 232 = 255 here
    assert np.sum(after <= 1.0) > 1.1 * np.sum(before <= 1.0)  # a tenth more of the box completed
    # exact: rows missed by more than AIM_WITHIN are never aimed: the same arithmetic both runs
    assert np.all(after[before > ctl.AIM_WITHIN ** 2] == before[before > ctl.AIM_WITHIN ** 2])  # far misses: as they were


def test_a_controller_completes_the_halfway_blends_of_its_examples(walk_pool):
    """Every task input that a 50/50 blend of two of a cluster's examples does, the controller
    completes; the paper's map (or one data point) alone misses a quarter of them, its linear part
    fitted through close examples blending past them."""
    ctrl = controller_of(walk_pool, range(walk_pool.n))
    task = walk_pool.task
    done = map_done = total = 0
    for ci, c in enumerate(ctrl.clusters):
        if c.k < 3:
            continue
        pairs = np.array([(i, j) for i in range(c.k) for j in range(i + 1, c.k)])
        w = np.zeros((len(pairs), c.k))
        w[np.arange(len(pairs)), pairs[:, 0]] = w[np.arange(len(pairs)), pairs[:, 1]] = 0.5
        u = ctrl.features(ci, w)
        u = u[np.all((u >= task.low) & (u <= task.high), axis=1)]
        done += int(np.sum(np.all(ctrl.errors(ci, u) <= 1.0, axis=1)))
        by_map = task.errors(ctrl.features(ci, c.map(task.normalise(u))), u).max(axis=1)
        by_point = task.errors(ctrl.features(ci, c.w)[None], u[:, None]).max(axis=2).min(axis=1)
        map_done += int(np.sum(np.minimum(by_map, by_point) <= 1.0))
        total += len(u)
    assert total > 50
    assert done == total  # count: integers (the worst halfway blend misses by 0.97 of a tolerance here)
    assert map_done < 0.9 * total  # margin: 110 < 137 inputs here


def test_candidates_look_past_the_requests_the_performer_rejected(walk_pool):
    from motionctl.engines.active.learning import REJECTED_RADIUS
    ctrl = controller_of(walk_pool, [0, 5, 9])
    first = [c for c in candidates(ctrl, np.random.default_rng(1), n_random=30) if c.metric != "transition"]
    rejected = first[:6]
    again = [c for c in candidates(ctrl, np.random.default_rng(1), n_random=30, rejected=rejected)
             if c.metric != "transition"]
    assert len(again) >= len(first) // 2
    x = lambda k: ctrl.task.normalise(k.u)  # noqa: E731
    # margin: the search stops short of the radius (4e-5 here); 1e-9 for a norm rounded otherwise than is_open's
    assert all(np.linalg.norm(x(k) - x(r)) >= REJECTED_RADIUS * (1 - 1e-9) for k in again for r in rejected)


def test_a_request_is_worth_what_its_answer_would_add_to_the_states_its_cluster_serves(walk_pool):
    from motionctl.engines.active.candidates import Candidate, gains
    ctrl = controller_of(walk_pool, [0, 5])
    c = ctrl.clusters[0]
    have = np.array([e.features for e in c.examples])
    turn = have.mean(axis=0) + np.array([0.0, 0.0, 0.6])  # a sharper turn than either example
    ask = lambda u: Candidate("summed", 0, c.start_state, u, 1.0)  # noqa: E731
    known, new = gains(ctrl, [ask(have[0]), ask(turn)], walk_pool)
    assert known == 0.0 and new > 0.0  # what an example already does adds nothing
    assert new <= 1.0
    gave = [(c.start_state, turn, have[1])]  # asked that turn, the performer gave this walk: not the same again
    assert gains(ctrl, [ask(turn)], walk_pool, gave)[0] == 0.0
    elsewhere = Candidate("start", -1, walk_pool.states[0] + 10.0, turn, 1.0)  # a state no library start is near
    assert gains(ctrl, [elsewhere], walk_pool)[0] == 0.0


def test_a_request_at_the_box_faces_is_worth_asking(walk_pool):
    from motionctl.engines.active.candidates import Candidate, gain_inputs, gains
    task = walk_pool.task
    inputs = gain_inputs(task)
    assert np.allclose(inputs.min(axis=0), task.low) and np.allclose(inputs.max(axis=0), task.high)
    ctrl = controller_of(walk_pool, [0])
    c = ctrl.clusters[0]
    corner = Candidate("summed", 0, c.start_state, task.low.copy(), 1.0)  # a stand asks the least speed there is
    assert gains(ctrl, [corner], walk_pool)[0] > 0.0  # cell centres alone: no input within its tolerances


def test_a_cluster_asks_past_the_faces_its_examples_do_not_reach(walk_pool):
    """A blend completes what lies between its examples: a face of the box no example reaches is
    asked past (the performer's nearest take there reaches it), and a face an example passes is not."""
    from motionctl.engines.active.candidates import FACE_PAST, Candidate, face_candidates, gains
    task = walk_pool.task
    straight = int(np.argmin(np.abs(walk_pool.features[:, 2])))
    ctrl = controller_of(walk_pool, [straight])
    f = ctrl.clusters[0].examples[0].features
    faces = face_candidates(ctrl)
    assert faces and all(k.metric == "distance:face" and k.cluster == 0 for k in faces)
    mean = np.clip(f, task.low, task.high)
    asked = {}
    for k in faces:
        d = int(np.flatnonzero(~np.isclose(k.u, mean))[0])  # one input moved, the others the examples' mean
        assert np.allclose(np.delete(k.u, d), np.delete(mean, d))
        asked[(d, int(np.sign(k.u[d] - mean[d])))] = k.u[d]
    assert asked[(2, 1)] == pytest.approx(task.high[2] + FACE_PAST * task.tol[2])  # a turn past 45 degrees
    assert asked[(2, -1)] == pytest.approx(task.low[2] - FACE_PAST * task.tol[2])
    assert asked[(1, -1)] == pytest.approx(task.low[1] - FACE_PAST * task.tol[1])  # a slower walk than the box asks
    assert all(v >= 0.0 for (d, side), v in asked.items() if task.low[d] >= 0.0)  # no speed or stride below nothing
    turner = int(np.argmax(walk_pool.features[:, 2]))  # a 90-degree turn: past the left face
    assert walk_pool.features[turner, 2] > task.high[2]  # margin: a 1.61 rad turn against the box's 0.785
    ctrl.add_example(walk_pool.take(turner), ctrl.clusters[0].start_state)
    assert ctrl.clusters[0].k == 2
    # exact: a mean past the face is clipped to task.high itself; a face's request is 3 tolerances past
    assert not [k for k in face_candidates(ctrl) if k.cluster == 0 and k.u[2] > task.high[2]]  # reached: not asked
    one = controller_of(walk_pool, [straight])
    past = next(k for k in face_candidates(one) if k.u[2] > task.high[2])
    inside = Candidate("distance", 0, past.state, np.array([*past.u[:2], task.high[2]]), 0.0)
    g_past, g_inside = gains(one, [past, inside], walk_pool)
    # Answered as asked, the turn past the face completes at least what one at the face does: here
    # the same cells exactly (the grid's inputs end at the face), so the two gains tie and either
    # came out 3 ulp ahead by the BLAS kernels of the CPU (strictly greater failed on AVX-512).
    # margin: a relative 1e-9 (the two gains tie here: the same cells)
    assert g_inside > 0.0 and g_past >= g_inside * (1.0 - 1e-9)


def test_a_grid_input_counts_the_share_of_its_cell_the_controller_comes_within_tolerance_of(walk_pool):
    from motionctl.engines.active.candidates import held, soft_zone
    task = walk_pool.task
    z = soft_zone(task)  # half a cell of the walk's grid, in tolerances
    assert 0.9 < z < 1.4
    d = np.array([0.0, 1.0, 1.0 + z / 2, 1.0 + z, 5.0])
    share = held(task, d)
    assert np.allclose(share[1:], [0.5, 0.25, 0.0, 0.0])  # an answer between inputs adds a part
    assert share[0] == pytest.approx((1.0 + z) / (2.0 * z))  # on the input: all of the cell a tolerance reaches


def test_a_new_learner_asks_a_lattice_over_the_box_first_then_by_gain(walk_pool):
    from motionctl.engines.active.learning import PLAN_PER_DIM, active_step
    before = walk_pool.used.copy()
    try:
        walk_pool.used[:] = False
        ctrl = controller_of(walk_pool, [0])
        walk_pool.used[0] = True
        learner = Learner(ctrl, Oracle(walk_pool), np.random.default_rng(0))
        plan = learner.planned()
        task = walk_pool.task
        assert len(plan) == PLAN_PER_DIM ** task.dim and all(k.metric == "plan" and k.cluster == 0 for k in plan)
        x = task.normalise(np.stack([k.u for k in plan]))
        centres = (np.arange(PLAN_PER_DIM) + 0.5) / PLAN_PER_DIM
        assert np.allclose(np.sort(np.unique(np.round(x, 6))), centres)  # the cells' centres, every one
        assert all(np.array_equal(k.state, ctrl.clusters[0].start_state) for k in plan)
        from motionctl.engines.active.candidates import gains
        g = gains(ctrl, plan, walk_pool, learner.given)
        # margin: the gains are 1e-5 apart or more, the first 11x the last
        assert np.allclose([k.gain for k in plan], g) and np.all(np.diff(g) <= 0) and g[0] > g[-1]  # the most first
        steps = [active_step(learner, i, None) for i in range(3)]
        assert [e.metric for e in steps] == ["plan"] * 3 and ctrl.n_examples == 4
        # count: strings (the step's request as described)
        assert steps[0].candidate == plan[steps[0].rejected].describe(task)  # the greatest gain the performer can do
        left = learner.planned()
        assert len(left) == len(plan) - 3 - sum(e.rejected for e in steps)  # answered and refused: not asked again
        assert Learner(ctrl, Oracle(walk_pool), np.random.default_rng(0)).planned() == []  # a continued controller
        from motionctl.engines.active.motion import distances_to
        far = distances_to(walk_pool.states, ctrl.clusters[0].start_state) > ctrl.tolerance
        other = int(np.flatnonzero(far & ~walk_pool.used)[0])
        ci, new = walk_pool.give(ctrl, other, walk_pool.states[other])
        assert new and ci == 1
        learner.answered(left[0], ci, 0.0)  # a plan's answer in a cluster not the seed's: the plan ends
        assert learner.planned() == []
    finally:
        walk_pool.used[:] = before


def test_a_learner_trusts_a_start_as_far_as_its_answers_brought_what_was_hoped(walk_pool):
    ctrl = controller_of(walk_pool, [0])
    learner = Learner(ctrl, Oracle(walk_pool), np.random.default_rng(0))
    assert learner.trust(0) == 1.0  # nothing asked yet
    learner.yields[0] = [(0.05, 0.05), (0.04, 0.0), (0.04, 0.0), (0.02, 0.001)]
    assert learner.trust(0) == pytest.approx(0.001 / 0.10)  # the last three answers only
    learner.yields[1] = [(0.01, 0.03)]
    assert learner.trust(1) == 1.0  # never more than hoped
    before = walk_pool.used.copy()
    try:
        from motionctl.engines.active.candidates import held_share
        start = held_share(ctrl, walk_pool)
        i = next(j for j in range(walk_pool.n) if not walk_pool.used[j])
        cand = next(k for k in candidates(ctrl, np.random.default_rng(0), n_random=20) if not k.opens)
        cand.gain = 0.5
        ci, _ = walk_pool.give(ctrl, i, cand.state)
        learner.answered(cand, ci, start)
        hoped, got = learner.yields[cand.cluster][-1]
        assert hoped == 0.5 and got == pytest.approx(held_share(ctrl, walk_pool) - start)
        # an answer from the cluster's start that opens a cluster of its own counts against the cluster asked
        from motionctl.engines.active.motion import distances_to
        far = distances_to(walk_pool.states, ctrl.clusters[0].start_state) > ctrl.join
        j = int(np.flatnonzero(far & ~walk_pool.used)[0])
        asked = Candidate("summed", 0, ctrl.clusters[0].start_state, cand.u, 1.0, gain=0.4)
        start = held_share(ctrl, walk_pool)
        ci, new = walk_pool.give(ctrl, j, walk_pool.states[j])
        counts = {k: len(v) for k, v in learner.yields.items()}
        learner.answered(asked, ci, start)
        assert new and ci != 0 and learner.yields[0][-1][0] == 0.4
        # count: integers (answers per cluster)
        assert {k: len(v) for k, v in learner.yields.items()} == {**counts, 0: counts[0] + 1}
        assert np.allclose(learner.given[-1][2], ctrl.clusters[ci].examples[-1].features)
        assert learner.pseudo_since == 0
        learner.pseudo_taken(cand)  # a pseudoexample answers: the metrics' turn moves past the one asked
        from motionctl.engines.active.candidates import METRICS
        # count: an integer and metric names
        assert learner.pseudo_since == 1 and METRICS[learner.turn - 1] == cand.metric.split(":")[0]
    finally:
        walk_pool.used[:] = before


def test_a_learner_whose_gains_expect_next_to_nothing_asks_for_the_library_takes_first(walk_pool):
    from motionctl.engines.active.candidates import REJECTED_RADIUS
    from motionctl.engines.active.learning import LATE_GAIN, LATE_TAKES
    from motionctl.engines.active.motion import distances_to
    ctrl = controller_of(walk_pool, [0])
    task = ctrl.task
    cands = [k for k in candidates(ctrl, np.random.default_rng(0), n_random=20) if not k.opens]
    learner = Learner(ctrl, Oracle(walk_pool), np.random.default_rng(0))
    early = learner.order(cands)
    best = max(k.gain for k in early)
    assert best > 0 and learner.top_gain == best  # exact: top_gain is max() of these very gains (the same float)
    assert "distance:library" not in {k.metric for k in early}  # the gains still expect something

    def late(seed, top=best / LATE_GAIN * 1.01, rejected=()):  # as if it had once expected ten times as much
        learner = Learner(ctrl, Oracle(walk_pool), np.random.default_rng(seed), top_gain=top, rejected=list(rejected))
        return learner.order(cands)

    assert "distance:library" not in {k.metric for k in late(0, best / LATE_GAIN * 0.99)}  # not yet a tenth
    asked = late(0)
    takes = asked[:LATE_TAKES]
    assert [k.metric for k in takes] == ["distance:library"] * LATE_TAKES  # count: metric names
    # count: object ids (the same requests, in the same order)
    assert [id(k) for k in asked[LATE_TAKES:]] == [id(k) for k in early]  # then the requests as before
    inside = np.clip(walk_pool.features, task.low, task.high)
    for k in takes:  # each what a take not yet given does, from the start of the cluster serving the take's start
        i = np.flatnonzero(np.all(np.isclose(inside, k.u), axis=1) & ~walk_pool.used)
        # margin: 0.108 against the tolerance 0.12 at the nearest
        assert len(i) and np.any(distances_to(walk_pool.states[i], ctrl.starts[k.cluster]) <= ctrl.tolerance)
        assert np.array_equal(k.state, ctrl.starts[k.cluster])
    assert len({tuple(k.u) for k in takes}) == LATE_TAKES
    assert {tuple(k.u) for k in takes} != {tuple(k.u) for k in late(1)[:LATE_TAKES]}  # in a random order
    refused = late(0, rejected=[takes[0]])  # the performer said no: neither it nor a take near it is asked
    x = task.normalise(takes[0].u)
    assert sum(k.metric == "distance:library" for k in refused) == LATE_TAKES  # count: integers
    # margin: 0.24 against the radius 0.15 at the nearest
    assert all(np.linalg.norm(task.normalise(k.u) - x) >= REJECTED_RADIUS
               for k in refused if k.metric == "distance:library")
    before = walk_pool.used.copy()
    try:
        walk_pool.used[np.all(np.isclose(inside, takes[0].u), axis=1)] = True  # given: not asked again
        assert not any(np.allclose(k.u, takes[0].u) for k in late(0)[:LATE_TAKES])
    finally:
        walk_pool.used[:] = before


def test_coverage_on_a_hand_made_case(walk_pool):
    ctrl = controller_of(walk_pool, [0])
    f = ctrl.clusters[0].examples[0].features
    tol = walk_pool.task.tol
    s = ctrl.clusters[0].start_state
    far = s + np.float32(0.5)
    states = np.stack([s, far, s, s])
    u = np.stack([f, f, f + 2 * tol * np.array([1, 0, 0]), f + 0.5 * tol])
    assert coverage(ctrl, CoverageSample(states, u)).tolist() == [True, False, False, True]


def test_nelder_mead_finds_the_largest_gap_between_examples(walk_pool):
    ctrl = controller_of(walk_pool, [0, 5, 9])
    task = ctrl.task
    cands = [c for c in candidates(ctrl, np.random.default_rng(1), n_random=30) if c.metric == "distance"]
    grid = np.stack(np.meshgrid(*[np.linspace(0, 1, 21)] * 3, indexing="ij"), -1).reshape(-1, 3)
    x = ctrl.clusters[0].x[:ctrl.clusters[0].k]
    true_max = np.linalg.norm(grid[:, None] - x[None], axis=-1).min(axis=1).max()
    best = max(cands, key=lambda c: c.score)
    # margin: 0.892 >= 0.869 here (2.6%)
    assert best.score >= 0.95 * true_max  # 30 random inputs alone rarely get this close
    found = np.linalg.norm(task.normalise(best.u) - x, axis=1).min()
    assert found == pytest.approx(best.score, rel=1e-6)


@pytest.mark.slow
def test_a_step_searches_again_past_what_the_performer_rejected(walk_pool, monkeypatch):
    """A performer who comes within 1.5 tolerances or refuses: every request of the first search is
    refused; searching again past them finds one the pool answers within the same step.  (Task
    and transition requests only: a start request asks for what the library holds, and is
    answered at once.)"""
    import importlib
    requests = importlib.import_module("motionctl.engines.active.candidates")  # the module, not the function
    from motionctl.engines.active.learning import Learner, active_step

    monkeypatch.setattr(requests, "start_candidates", lambda *a, **k: [])
    steps = []
    for rounds in (1, 8):
        walk_pool.used[:] = False
        ctrl = Controller(walk_pool.task, walk_pool.clips[0].skeleton, 30)
        for i in (12, 17, 21):
            walk_pool.give(ctrl, i, walk_pool.states[i])
        learner = Learner(ctrl, Oracle(walk_pool, reject=1.5), np.random.default_rng(0))
        steps.append((active_step(learner, 0, None, rounds=rounds), ctrl.n_examples))
    walk_pool.used[:] = False
    (once, n_once), (again, n_again) = steps
    assert once.action == "rejected" and n_once == 3
    # count: integers (requests refused)
    assert again.action == "example" and n_again == 4 and again.rejected > once.rejected


def test_accepting_a_pseudoexample_changes_the_map(walk_pool):
    ctrl = controller_of(walk_pool, [0, 3, 6, 9])
    feats = ctrl.clusters[0].examples
    u = np.mean([e.features for e in feats[:2]], axis=0)
    cand = Candidate("summed", 0, ctrl.clusters[0].start_state, u, 0.0)
    before_w, before_err = ctrl.weights(0, u)[0], ctrl.errors(0, u[None]).sum()
    p = pseudoexample(ctrl, cand)
    assert p is not None and p.errors.sum() <= before_err + 1e-9  # margin: 0.203 <= 0.236 here
    ctrl.add_pseudo(p.cluster, p.u, p.w)
    assert ctrl.n_pseudo == 1
    assert np.allclose(ctrl.weights(0, u)[0], p.w / p.w.sum(), atol=1e-6)
    assert not np.allclose(ctrl.weights(0, u)[0], before_w, atol=1e-3) or np.allclose(p.w, before_w, atol=1e-3)


def test_the_oracle_answers_with_the_matching_take_once_and_rejects_the_impossible(walk_pool):
    walk_pool.used[:] = False
    oracle = Oracle(walk_pool)
    i = 4
    cand = Candidate("summed", 0, walk_pool.states[i], walk_pool.features[i].copy(), 0.0)
    assert oracle.answer(cand) == i and walk_pool.used[i]  # count: pool indices
    assert oracle.answer(cand) != i  # never the same take twice
    far = Candidate("summed", 0, walk_pool.states[i] + np.float32(1.0), walk_pool.features[i].copy(), 0.0)
    assert oracle.answer(far) is None  # no take starts there
    assert oracle.answer(cand, current=0.5) is None  # nothing would do better than the controller already does
    short_and_fast = walk_pool.task.low[:1].tolist() + walk_pool.task.high[1:2].tolist() + [0.0]  # 0.2 m at 1.8 m/s
    # margin: the nearest error is 10.9 against 9
    assert not np.any(np.all(walk_pool.task.errors(walk_pool.features, short_and_fast) <= oracle.reject ** 2, axis=1))
    assert oracle.answer(Candidate("summed", 0, walk_pool.states[i], np.array(short_and_fast), 0.0)) is None
    walk_pool.used[:] = False


def test_the_answerable_baseline_holds_only_takes_a_request_inside_the_box_can_get(walk_pool):
    """bench_active's diagnosis of random's lead: ``answerable`` marks the takes the oracle gives
    for some request inside the task box, and that baseline picks from them alone."""
    from motionctl.engines.active.learning import answerable, baseline
    task = walk_pool.task
    ok = answerable(walk_pool)
    assert ok.any() and not ok.all()  # 16_17 and 16_19 turn 90 degrees in a stride or two; the box asks 45 at most
    before = walk_pool.used.copy()
    try:
        oracle = Oracle(walk_pool)
        for i in (int(np.flatnonzero(ok)[0]), int(np.flatnonzero(~ok)[0])):
            walk_pool.used[:] = True
            walk_pool.used[i] = False  # the performer has take i alone
            nearest = np.clip(walk_pool.features[i], task.low, task.high)  # the request in the box nearest what it does
            # count: booleans (the oracle's answer is take i exactly where answerable says so)
            assert (oracle.answer(Candidate("summed", 0, walk_pool.states[i], nearest, 0.0)) == i) == ok[i]
        held = {}
        for how in ("random", "answerable"):
            walk_pool.used[:] = False
            ctrl = controller_of(walk_pool, [0])
            walk_pool.used[0] = True
            baseline(ctrl, walk_pool, 12, how, seed=3)
            held[how] = np.setdiff1d(np.flatnonzero(walk_pool.used), [0])
            assert ctrl.n_examples == 12
        assert ok[held["answerable"]].all() and not ok[held["random"]].all()
    finally:
        walk_pool.used[:] = before


@pytest.fixture(scope="module")
def jump_model(mocap):
    files = [os.path.join(mocap, "cmu_amc", "16", f"16_{t}.amc") for t in ("01", "03", "05", "06", "07", "09", "10")]
    clips = import_library(files).groups[0].database.clips
    return fit(clips, ActiveSettings(task="jump", budget=6)), clips


@pytest.mark.slow
def test_the_jump_lands_near_the_target(jump_model):
    model, clips = jump_model
    table = model.play(clips)
    feats = model.ctrl.example_features()
    assert feats[:, 0].max() > 1.2 and model.summary()["examples"] >= 3  # examples reach the farther target
    for forward in (0.6, 1.2):
        session = Session(model, table)
        session.decide(Command(target=np.array([0.0, forward])))
        clip = session.clip()
        landed = clip.root_pos[-1, 1] - clip.root_pos[0, 1]
        assert abs(landed - forward) < 0.35, (forward, landed)


@pytest.fixture(scope="module")
def walks5(walk_clips):
    """Five examples on the six walks (mirrored by the fit): the model the slow tests below share."""
    return fit(walk_clips[:6], ActiveSettings(budget=5, mirror=True))


@pytest.mark.slow
def test_fit_on_walks_learns_and_summarises(walks5):
    model = walks5
    s = model.summary()
    # margin: coverage 0.0015 against 0.003 (a normalised share of 0.5); 1e-9 on top
    assert s["examples"] == 5 and 0 < s["coverage"] <= s["coverage"] / max(s["coverage_normalised"], 1e-9) + 1e-9
    assert len(model.log) >= 4 and all(e["action"] in ("example", "pseudoexample", "rejected") for e in model.log)


@pytest.mark.slow
def test_a_walk_controller_warps_its_cycles_toward_the_heading_at_most_the_warp_rate(walk_clips, walks5):
    """A cycle turns at most 45° (the walk task's box) in about a second: Warp Rate also turns its
    facing toward the asked heading, by at most the rate over the cycle, so a 90° turn is made in
    about a cycle rather than two or three (Warp Rate 0: the blend's own turn, the paper's)."""
    model = walks5
    table = model.play(walk_clips[:6])
    rate = model.settings.warp_rate

    def turn_time(warp_rate: float) -> float:
        model.settings.warp_rate = warp_rate
        times = []
        for frame in (20, 200, 400):
            session = Session(model, table, frame=frame, play=PlaySettings())
            target = session.synth.yaw + np.radians(90)
            while session.n_frames < 6 * table.fps and abs(wrap(target - session.synth.yaw)) > np.radians(5):
                session.decide(Command(heading=target, speed=1.3))
                step = session.steps[-1]
                if warp_rate > 0:
                    seconds = len(step.frames.height) / table.fps
                    # margin: 1.03 against 1.47 at the nearest; 1e-9 on top
                    assert abs(step.edit[2]) <= warp_rate * seconds + 1e-9
                else:
                    assert step.edit is None
            times.append(session.n_frames / table.fps)
        return float(np.mean(times))

    try:
        warped, unwarped = turn_time(rate), turn_time(0.0)
    finally:
        model.settings.warp_rate = rate
    # The mean of three turns, each a whole number of frames: a near tie flipped on another CPU changes
    # a turn by about a cycle (1 s), the mean by a third of that, which keeps both sides apart.
    # margin: 0.93 s against 2.0 and against 0.75 x 2.80 s = 2.10 here
    assert warped < 2.0 and warped < 0.75 * unwarped, (warped, unwarped)


@pytest.mark.slow
def test_a_session_answers_rejects_accepts_and_continues_after_saving(walk_clips, tmp_path):
    from motionctl.engines.active import ActiveModel
    from motionctl.engines.active.session import ActiveSession
    from motionctl.errors import Cancelled

    library = walk_clips[:6]  # the six walks; the session mirrors them itself
    s = ActiveSettings(seed_clip="16_15", mirror=True)
    session = ActiveSession(library, s)
    assert session.ctrl.n_examples == 1 and session.pool.used.sum() == 1
    with pytest.raises(MotionctlError, match="press Suggest"):
        session.answer(0, library[1])
    cands = session.suggest()
    assert cands and all(cands[i].metric.split(":")[0] for i in range(len(cands)))

    def stop():
        return True
    with pytest.raises(Cancelled):  # a cancelled suggestion leaves the last list as it was
        session.suggest(should_stop=stop)
    assert session.candidates is cands

    entry = session.answer(0, library[2], mirrored=True)
    assert entry.action == "example" and session.ctrl.n_examples == 2 and session.candidates == []
    assert "16_19_mirror" in entry.answer and session.pool.used.sum() == 2  # that cycle is no longer offered
    assert entry.coverage is not None

    session.suggest()
    n = len(session.candidates)
    rejected = session.candidates[0]
    session.reject(0)
    assert len(session.candidates) < n and rejected not in session.candidates and session.ctrl.n_examples == 2
    with_pseudo = [k for k, c in enumerate(session.candidates) if c.pseudo is not None]
    assert with_pseudo, "a cluster of two examples offers pseudoexamples"
    without = [k for k, c in enumerate(session.candidates) if c.pseudo is None]
    if without:
        with pytest.raises(MotionctlError, match="no pseudoexample"):
            session.accept_pseudo(without[0])
    session.accept_pseudo(with_pseudo[0])
    assert session.ctrl.n_pseudo == 1
    session.auto()
    assert [e.action for e in session.logs][:3] == ["example", "rejected", "pseudoexample"] and len(session.logs) == 4

    path = session.model().save(tmp_path / "taught.npz")
    saved = ActiveModel.load(path)
    again = ActiveSession(library, s, controller=saved.ctrl, log=saved.log)
    assert again.ctrl.n_examples == session.ctrl.n_examples and again.ctrl.n_pseudo == 1
    assert np.array_equal(again.pool.used, session.pool.used) and len(again.logs) == 4
    assert again.summary()["coverage"] == pytest.approx(session.summary()["coverage"])
    with pytest.raises(MotionctlError, match=f"learns '{s.task}'"):
        ActiveSession(library, ActiveSettings(task="jump"), controller=saved.ctrl)


@pytest.mark.slow
def test_cli_runs_a_learning_session_and_logs_each_step(mocap, tmp_path, capsys):
    from motionctl.cli import main
    pool = tmp_path / "pool"
    pool.mkdir()
    for name in ("16.asf", "16_15.amc", "16_17.amc", "16_19.amc"):
        os.symlink(os.path.join(mocap, "cmu_amc", "16", name), pool / name)
    out = tmp_path / "walk.npz"
    assert main(["active", "run", "--pool", str(pool), "--task", "walk", "--budget", "3", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert text.count("step ") >= 2 and "coverage" in text
    log = json.loads((tmp_path / "walk.steps.json").read_text())
    assert log["summary"]["examples"] == 3 and len(log["steps"]) >= 2
    assert main(["active", "run", "--out", str(tmp_path / "x")]) == 2  # neither --pool nor --model


@pytest.mark.slow
def test_a_turning_stick_turns_the_walk_with_the_feet_planted(walk_clips, walks5):
    """Q/E held with Plant Feet on: the blended walk turns with the stick.  The Session asks a
    turning stick as a heading; told "no yaw forced" for it, as for a heading the player set, the
    root kept the blend's own (nearly straight) heading and the walk went straight on."""
    model = walks5
    table = model.play(walk_clips[:6])
    for sign in (1, -1):
        session = Session(model, table, play=PlaySettings())  # the Preview panel's defaults
        while session.n_frames < 6 * table.fps:
            session.decide(Command(np.array([0.0, 1.2, sign * 0.6, 0.0])))
        asked = sign * 0.6 * session.n_frames / table.fps
        turned = session.synth.yaw  # starts at 0; under 2π here
        assert sign * turned > 0.5 * abs(asked), (turned, asked)  # margin: twice the half asked here
