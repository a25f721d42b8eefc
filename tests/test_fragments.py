"""Motion fragments and tabular policies (paper 000)."""

import itertools
import json
import os

import numpy as np
import pytest

from motionctl.io import bvh
from motionctl.errors import Cancelled, MotionctlError, MotionFileError
from motionctl.body import mirror_clip
from motionctl.engines import load_model, train_to_file
from motionctl.engines.fragments import ControllerSettings, FragmentController, FragmentModel, PolicySettings, QualitySettings, Transitions, control_distance, control_quality, evaluate_controllers, fit, learn_user_model, optimal_path, paper_bins, project_velocity, solve, top_transitions
from motionctl.play.commands import PlayerSettings, Trace, commands_from_controls, generate_trace, read_trace, write_trace
from motionctl.play.commands import Command, PlaySettings
from motionctl.rootframe import wrap
from motionctl.play.session import Session


# ----------------------------------------------------------------------------- tiny MDPs

def tiny_problem(n=5, c=3, seed=0):
    rng = np.random.default_rng(seed)
    mq = rng.uniform(0, 1, (n, n)).astype(np.float32)
    cq = rng.uniform(0.05, 1, (n, c)).astype(np.float32)
    t = rng.uniform(0, 1, (c, c))
    t /= t.sum(1, keepdims=True)
    return mq, cq, t


def brute_force_values(mq, cq, t, lam, iters=4000):
    """Plain value iteration with explicit loops (eq. 2), to convergence."""
    n, c = cq.shape
    r = np.zeros((n, c))
    for _ in range(iters):
        new = np.empty_like(r)
        for f in range(n):
            for k in range(c):
                new[f, k] = max(mq[f, g] * cq[g, k] + lam * sum(t[k, kk] * r[g, kk] for kk in range(c)) for g in range(n))
        r = new
    table = np.empty((n, c), dtype=int)
    for f in range(n):
        for k in range(c):
            table[f, k] = int(np.argmax([mq[f, g] * cq[g, k] + lam * (t[k] @ r[g]) for g in range(n)]))
    return r, table


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_policy_iteration_matches_brute_force_value_iteration_on_tiny_mdp(seed):
    mq, cq, t = tiny_problem(seed=seed)
    lam = 0.9
    r_ref, table_ref = brute_force_values(mq, cq, t, lam, iters=400)
    res = solve(Transitions.from_dense(mq), cq, PolicySettings(kind="model", discount=lam, tol=1e-7), t)
    assert res.converged
    assert np.array_equal(res.table, table_ref)
    # Relative values: equal to the true ones up to a constant.
    assert np.allclose(res.values - res.values.mean(), r_ref - r_ref.mean(), atol=2e-4)


def test_thresholded_sparse_solver_matches_dense_solver_on_the_same_transitions():
    mq, cq, t = tiny_problem(n=12, c=4, seed=5)
    allowed = top_transitions(mq, 40.0)
    allowed[np.arange(12), np.argmax(mq, 1)] = True
    masked = np.where(allowed, mq, -1e3).astype(np.float32)  # disallowed = hopeless in the dense solver
    dense = solve(Transitions.from_dense(masked), cq, PolicySettings(discount=0.95, tol=1e-7), t)
    sparse = solve(Transitions.from_mask(mq, allowed), cq, PolicySettings(discount=0.95, tol=1e-7), t)
    assert np.array_equal(dense.table, sparse.table)
    assert np.all(allowed[np.arange(12)[:, None], sparse.table])


def test_model_equals_steady_with_identity_and_spread_with_uniform_user_model():
    mq, cq, _ = tiny_problem(n=8, c=4, seed=3)
    tr = Transitions.from_dense(mq)
    s = dict(discount=0.95, tol=1e-7)
    model_id = solve(tr, cq, PolicySettings(kind="model", **s), np.eye(4))
    steady = solve(tr, cq, PolicySettings(kind="steady", **s))
    assert np.array_equal(model_id.table, steady.table)
    model_uni = solve(tr, cq, PolicySettings(kind="model", **s), np.full((4, 4), 0.25))
    spread = solve(tr, cq, PolicySettings(kind="spread", **s))
    assert np.array_equal(model_uni.table, spread.table)


def test_greedy_is_the_model_controller_without_discount():
    mq, cq, t = tiny_problem(n=9, c=4, seed=4)
    tr = Transitions.from_dense(mq)
    greedy = solve(tr, cq, PolicySettings(kind="greedy"))
    model0 = solve(tr, cq, PolicySettings(kind="model", discount=0.0), t)
    assert np.array_equal(greedy.table, model0.table)
    assert np.array_equal(greedy.table, np.argmax(mq[:, :, None] * cq[None], axis=1))


@pytest.mark.parametrize("start", [None, 2])
def test_optimal_path_matches_exhaustive_enumeration(start):
    mq, cq, _ = tiny_problem(n=4, c=3, seed=6)
    trace = np.array([0, 2, 1, 1, 0])
    best, best_path = -1.0, None
    firsts = range(4) if start is None else [start]
    for path in itertools.product(range(4), repeat=len(trace) + 1):
        if path[0] not in firsts:
            continue
        q = sum(mq[path[i], path[i + 1]] * cq[path[i + 1], trace[i]] for i in range(len(trace)))
        if q > best + 1e-9:
            best, best_path = q, path
    path, total = optimal_path(Transitions.from_dense(mq), cq, trace, start=start)
    assert total == pytest.approx(best, abs=1e-5)
    assert tuple(path) == best_path
    # The same on sparse transitions allowing everything.
    path_s, total_s = optimal_path(Transitions.from_mask(mq, np.ones((4, 4), bool)), cq, trace, start=start)
    assert total_s == pytest.approx(best, abs=1e-5)


def test_threshold_keeps_exactly_the_top_percent():
    rng = np.random.default_rng(0)
    mq = rng.uniform(0, 1, (40, 40)).astype(np.float32)
    mq[3, :] = 0.5  # ties
    keep = top_transitions(mq, 8.0)
    assert keep.sum() == round(0.08 * 1600)  # count: integers (transitions kept)
    assert mq[keep].min() >= mq[~keep].max()  # exact: a sort of the same float32 values (no arithmetic)


def test_cancel_stops_the_solver_and_leaves_no_policy_file(tmp_path, demo_library):
    clips = [bvh.read_bvh(os.path.join(demo_library, f)) for f in ("demo_walk.bvh", "demo_run.bvh")]
    calls = [0]

    def stop_later():
        calls[0] += 1
        return calls[0] > 12

    out = tmp_path / "policy.npz"
    with pytest.raises(Cancelled):
        train_to_file("fragments", clips, ControllerSettings(trace_seconds=30, held_out=0), str(out),
                      should_stop=stop_later)
    assert calls[0] > 12 and not out.exists() and not list(tmp_path.iterdir())


# ----------------------------------------------------------------------------- fragments, qualities

@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_transition_of_quality_zero_is_never_taken_however_good_what_follows(seed):
    """MotionQuality 0 marks a stutter or a stance flip: not a transition.  A backup that scores it
    0 x CQ + E[f'] still took it when the successor's future was good (CMU 131_03's hop replayed
    0.1 s back and forth on a sidestep).  Dense, sparse and hub columns alike; a row with nothing
    but zeros keeps them (no dead end)."""
    from motionctl.engines.fragments.solver import backup

    mq, cq, t = tiny_problem(n=6, c=3, seed=seed)
    mq = np.maximum(mq, 0.05)  # every allowed transition's quality at least 0.05 from the forbidden 0
    mq[:, 1] = 0.0  # fragment 1 reachable only by forbidden transitions ...
    mq[5] = 0.0  # ... and one row with nothing else
    cq[1] = 1.0
    future = np.zeros((3, 6), np.float32)
    future[:, 1] = 100.0  # ... with a future far better than any other
    for trans in (Transitions.from_dense(mq), Transitions.from_mask(mq, np.ones_like(mq, bool)),
                  Transitions.from_mask(mq, np.ones_like(mq, bool) & (np.arange(6)[None] != 2)).with_hubs(
                      np.array([2]), mq[:, [2]])):
        values, arg = backup(trans, cq.T, future)
        assert np.all(arg[:5] != 1) and np.all(np.isfinite(values))
        # margin: a forbidden transition's quality is 0, every other at least 0.05
        assert np.all(mq[np.arange(5)[:, None], arg[:5]] > 0.025)
        assert np.all(arg[5] == 1)  # margin: an index, its future 100 against the others' 0 (no tie)
    res = solve(Transitions.from_dense(mq), cq, PolicySettings(kind="model", discount=0.9), t)
    assert np.all(mq[np.arange(5)[:, None], res.table[:5]] > 0.025)  # margin: 0 forbidden, the others >= 0.05


@pytest.fixture(scope="module")
def demo_model(demo_library):
    names = ["demo_walk", "demo_run", "demo_walk_turn_left", "demo_sidestep_right", "demo_jump"]
    clips = [bvh.read_bvh(os.path.join(demo_library, n + ".bvh")) for n in names]
    return FragmentModel.build(clips), clips


def test_evident_control_recovers_generated_speed_and_turn_rate(demo_model, demo_library):
    model, clips = demo_model
    fs = model.fragments
    for i, clip in enumerate(clips):
        side = json.load(open(os.path.join(demo_library, clip.name + ".json")))["control"]
        ev = fs.control[(fs.clip == 2 * i)]  # the original (mirrors are odd)
        core = ev[len(ev) // 4: 3 * len(ev) // 4]
        if clip.name == "demo_jump":
            assert ev[:, 3].any() and not ev[:len(ev) // 4, 3].any()
            continue
        assert np.median(core[:, 1]) == pytest.approx(side["forward"], abs=0.12)
        assert np.median(core[:, 0]) == pytest.approx(side["lateral"], abs=0.12)  # both: + = to the right
        assert np.median(core[:, 2]) == pytest.approx(side["turn"], abs=0.1)
        assert not core[:, 3].any()


def test_mirrored_fragments_reflect_controls_and_keep_motion_distances(demo_model):
    model, _ = demo_model
    fs = model.fragments
    orig = np.flatnonzero(fs.clip % 2 == 0)
    mirr = np.flatnonzero(fs.clip % 2 == 1)
    assert len(orig) == len(mirr)
    assert np.allclose(fs.control[mirr], fs.control[orig] * [-1, 1, -1, 1], atol=1e-6)
    assert "mirrored" in fs.clips[1].tags and "left" in fs.clips[4].tags and "right" in fs.clips[5].tags
    d = model.distances
    assert np.allclose(d[:, mirr[:, None], mirr[None]], d[:, orig[:, None], orig[None]], rtol=1e-4, atol=1e-5)


def test_mirror_clip_reflects_world_positions_exactly(demo_library):
    clip = bvh.read_bvh(os.path.join(demo_library, "demo_walk_turn_left.bvh"))
    m = mirror_clip(clip)
    p, _ = clip.world()
    q, _ = m.world()
    from motionctl.body import mirror_joint_map

    swap = mirror_joint_map(clip.skeleton.names)
    assert np.allclose(q[:, swap], p * [-1, 1, 1], atol=1e-9)


def test_motion_quality_ranges_natural_continuations_and_stutter(demo_model):
    model, _ = demo_model
    fs = model.fragments
    mq = model.motion_quality(QualitySettings())
    assert mq.dtype == np.float32 and mq.min() >= 0 and mq.max() <= 1
    nxt = fs.continuation()
    has = nxt >= 0
    natural = mq[np.flatnonzero(has), nxt[has]]
    assert np.median(natural) > np.percentile(mq, 95)  # margin: 0.80 against 0.34 here
    assert np.all(np.diag(mq) == 0)  # replaying a fragment stutters
    f = np.flatnonzero(has)[10]
    assert mq[f, f + 1] == 0  # overlapping fragment of the same clip: a jump back
    # Heavier omegas lower every quality.
    heavy = model.motion_quality(QualitySettings(omegas=(1.6, 1.0, 0.6)))
    # margin: heavier omegas never raise a float32 quality (monotone IEEE ops); equal at 1; 1e-7 on top
    assert np.all(heavy <= mq + 1e-7)
    # Dis in inches is Dis in metres / 0.0254: the same as omegas 39.4 times larger.
    inches = model.motion_quality(QualitySettings(dis_unit=0.0254))
    scaled = model.motion_quality(QualitySettings(omegas=tuple(w / 0.0254 for w in QualitySettings().omegas)))
    # margin: larger omegas never raise a float32 quality (monotone IEEE ops); equal at 1; 1e-7 on top
    assert np.allclose(inches, scaled, rtol=1e-5) and np.all(inches <= mq + 1e-7)
    with pytest.raises(MotionctlError, match="dis_unit"):
        model.motion_quality(QualitySettings(dis_unit=0.0))


def test_control_quality_and_distance_properties():
    rng = np.random.default_rng(1)
    a = np.column_stack((rng.normal(0, 2, (50, 3)), rng.integers(0, 2, 50)))
    b = np.column_stack((rng.normal(0, 2, (50, 3)), rng.integers(0, 2, 50)))
    assert np.allclose(control_distance(a, b), control_distance(b, a))
    assert np.allclose(control_distance(a, a), 0)
    cq = control_quality(a, a)
    assert np.allclose(np.diag(cq), 1.0) and cq.min() > 0 and cq.max() <= 1
    v = np.array([[3.0, 4.0]])
    assert np.allclose(project_velocity(v), v / 5 * np.log(6))
    assert np.allclose(project_velocity(np.zeros((1, 2))), 0)
    # Airborne mismatch alone costs w_a = 20: quality 1/21.
    assert control_quality(np.array([[0, 1.0, 0, 0]]), np.array([[0, 1.0, 0, 1]]))[0, 0] == pytest.approx(1 / 21)


def test_paper_bins_and_user_model():
    bins = paper_bins(np.array([0.5, 1.0, 2.0, 4.0] * 10))
    assert bins.n == 150
    speeds = np.unique(np.round(np.linalg.norm(bins.centres[:, :2], axis=1), 6))
    assert len(speeds) == 4 and speeds[0] == 0 and speeds[-1] == pytest.approx(np.percentile([0.5, 1, 2, 4] * 10, 95))
    assert set(np.unique(bins.centres[:, 2])) == {-1.0, 0.0, 1.0} and set(np.unique(bins.centres[:, 3])) == {0.0, 1.0}
    assert bins.nearest(bins.centres[37]) == 37
    trace = Trace(np.repeat(bins.centres[[0, 5, 0, 5, 0, 9]], 10, axis=0), 10.0)  # 0->5 twice, 0->9 once
    t = learn_user_model([trace], bins, smoothing=1.0)
    assert np.allclose(t.sum(1), 1) and t.min() > 0
    assert t[0, 0] > 0.5 and t[0, 5] > t[0, 9] > t[0, 100]  # margin: 0.065 > 0.032 > 1e-5 (counts 2, 1, 0)


def test_generated_traces_are_seeded_and_realistic():
    p = PlayerSettings(jump_rate=0.5)
    a, b = generate_trace(p, 120, 10, seed=3), generate_trace(p, 120, 10, seed=3)
    assert np.array_equal(a.samples, b.samples)
    assert not np.array_equal(a.samples, generate_trace(p, 120, 10, seed=4).samples)
    s = a.samples
    assert s.shape == (1200, 4) and set(np.unique(s[:, 3])) == {0.0, 1.0}
    steps = np.linalg.norm(np.diff(s[:, :2], axis=0), axis=1)
    assert np.mean(steps < 1e-9) > 0.5  # holds
    # margin: 7.0 against 1.4 here
    assert np.max(steps) > p.max_speed * 0.4  # sudden changes
    assert np.abs(s[:, 2]).max() > 0.1 and np.mean(np.abs(np.diff(s[:, 2])) < 0.3) > 0.95  # gradual turns


# ----------------------------------------------------------------------------- traces on disk

@pytest.mark.parametrize("ext", ["csv", "json"])
def test_trace_files_round_trip(tmp_path, ext):
    t = generate_trace(PlayerSettings(), 5, 10, seed=1)
    path = tmp_path / f"t.{ext}"
    write_trace(t, path)
    back = read_trace(path)
    assert back.rate == 10 and np.allclose(back.samples, t.samples, atol=1e-5)


@pytest.mark.parametrize(
    "text,line,message",
    [
        ("# rate: 10\nvx,vy,turn,airborne\n0,1,0,0\n0,nan,0,0\n", 4, "NaN"),
        ("vx,vy,turn,airborne\n0,1,0,0\n0,1,0\n", 3, "3 values, expected 4"),
        ("vx,vy,turn,airborne\n", 1, "empty trace"),
        ("", 1, "empty trace"),
        ("vx,vy,turn,airborne\n0,1,0,0.5\n", 2, "airborne must be 0 or 1"),
        ("vx,vy,turn,airborne\n0,1,zero,0\n", 2, "non-numeric value 'zero'"),
    ],
)
def test_bad_csv_traces_raise_errors_naming_file_and_line(tmp_path, text, line, message):
    p = tmp_path / "bad.csv"
    p.write_text(text)
    with pytest.raises(MotionFileError) as err:
        read_trace(p)
    # count: a line number and strings
    assert message in str(err.value) and str(p) in str(err.value) and err.value.line == line


@pytest.mark.parametrize(
    "data,message",
    [({"samples": []}, "empty trace"), ({"samples": [[0, 1, 0]]}, "sample 0 has 3 values"),
     ({"samples": [[0, 1, 0, 0], [0, float("nan"), 0, 0]]}, "sample 1: NaN"), ({"rate": 10}, "expected")],
)
def test_bad_json_traces_raise_errors_naming_file(tmp_path, data, message):
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(data))
    with pytest.raises(MotionFileError, match="bad.json") as err:
        read_trace(p)
    assert message in str(err.value)


def test_trace_in_memory_is_validated():
    with pytest.raises(ValueError, match="NaN"):
        Trace(np.array([[0, 1, np.nan, 0]]))
    with pytest.raises(ValueError, match="4 values"):
        Trace(np.zeros((3, 2)))


# ----------------------------------------------------------------------------- end to end

@pytest.mark.slow
def test_trained_controller_saves_loads_runs_and_beats_greedy(tmp_path, demo_model):
    model, clips = demo_model
    trace_files = []
    for k in (1, 2):
        trace_files.append(str(tmp_path / f"train{k}.csv"))
        write_trace(generate_trace(PlayerSettings(max_speed=3.0), 60, 10, seed=k), trace_files[-1])
    settings = ControllerSettings(traces="files", trace_files=tuple(trace_files), held_out=0)
    cache = {}
    controller = fit(clips, settings, cache=cache)
    assert controller.summary()["converged"] and controller.summary()["training_traces"] == 2
    out = controller.save(tmp_path / "p")
    assert out.endswith("p.npz")
    back = load_model(out)
    assert isinstance(back, FragmentController) and np.array_equal(back.table, controller.table)
    # count: file names and strings
    assert back.settings.trace_files == settings.trace_files and back.summary()["kind"] == "model"
    ctrl = np.array([0.0, 1.2, 0.0, 0.0])
    f = back.first_fragment(ctrl)
    # count: fragment indices
    assert back.next_fragments([f], [ctrl])[0] == controller.table[f, controller.bins.nearest(ctrl)]
    with pytest.raises(MotionFileError, match="missing"):
        load_model(tmp_path / "none.npz")
    # Evaluation against the optimum, with the fragment model fit() kept in its cache.
    (fm,) = cache["fragments"].values()
    evals = [generate_trace(PlayerSettings(max_speed=3.0, hold_mean=0.8), 10, 10, seed=s) for s in (11, 12, 13)]
    settings.policy = PolicySettings(kind="greedy")
    greedy = fm.train(settings, controller.bins, None)
    res = evaluate_controllers(fm, {"model": back.table, "greedy": greedy.table}, back.bins, evals, settings.quality)
    assert res["opt"]["mean"] == pytest.approx(100.0)
    assert 0 < res["greedy"]["mean"] <= res["model"]["mean"] <= 100.0 + 1e-6  # margin: 85.1 <= 88.3 <= 100 here
    # Against the raw controls the optimum follows the exact input; the policies still see bins.
    raw = evaluate_controllers(fm, {"model": back.table}, back.bins, evals, settings.quality, against="raw")
    assert raw["opt"]["mean"] == pytest.approx(100.0) and 0 < raw["model"]["mean"] <= 100.0 + 1e-6
    assert raw["model"]["quality"] != res["model"]["quality"]  # scored against other controls
    # Run on a trace: one fragment per decision, synthesized continuously.
    commands = commands_from_controls(evals[0].samples)
    session = Session(back, back.frame_table(clips), warp=1.0, plant_feet=False)
    clip = session.run(commands)
    assert len(session.steps) == len(commands) and clip.n_frames == len(commands) * back.n_frames
    # Warped root follows the control exactly: ground speed per frame is the control's.
    speed = np.linalg.norm(np.diff(clip.root_pos[:, :2], axis=0), axis=1) * clip.fps
    want = np.linalg.norm(np.repeat(evals[0].samples, back.n_frames, axis=0)[1:, :2], axis=1)
    assert np.allclose(speed, want, atol=1e-6)
    # Played as Play Trace plays it (feet planted: steps faster or slower), exactly as long as the trace.
    planted = Session(back, back.frame_table(clips), play=PlaySettings()).play_trace(evals[0])
    assert planted.n_frames == round(evals[0].duration * back.fps)


def test_player_styles_differ_in_how_often_the_input_changes():
    """Smooth players ramp their sticks, so consecutive samples differ a little on most steps; abrupt and
    game-pad players snap them and change less often but by whole jumps; game-pad players reverse often."""
    from motionctl.play.commands import PLAYER_STYLES

    def stats(style):
        s = np.concatenate([generate_trace(PLAYER_STYLES[style], 120.0, 10.0, seed).samples for seed in range(3)])
        d = np.linalg.norm(np.diff(s[:, :3], axis=0), axis=1)
        moving = d > 1e-9
        reversals = np.sum(s[1:, :2] * s[:-1, :2], axis=1) < -1e-9
        return moving.mean(), np.median(d[moving]), reversals.mean()

    smooth, abrupt, gamepad = stats("smooth"), stats("abrupt"), stats("gamepad")
    # margin: 0.27 against 0.19, 0.59 against 2.6 here
    assert smooth[0] > abrupt[0] and smooth[1] < abrupt[1]  # many small changes against few whole jumps
    # margin: 0.063 against 0.044 and 0.059 here (seeded traces)
    assert gamepad[2] > 2 * smooth[2] and gamepad[2] > abrupt[2]


def test_turn_bins_reach_the_captures_sharp_turns_and_the_controller_asks_them():
    """Fitted turn bins add ± the capture's sharp turning rate; a heading far off asks that bin, a near
    one the paper's 1 rad/s (with the paper's bins it could ask no more than 1 rad/s: 90° in 1.6 s)."""
    from motionctl.engines.fragments.control import fitted_turns
    from motionctl.play.commands import Command
    from motionctl.play.session import State

    rng = np.random.default_rng(0)
    sharp = np.r_[rng.uniform(-0.5, 0.5, 900), rng.choice([-1, 1], 100) * rng.uniform(1.5, 2.2, 100)]
    levels = fitted_turns(sharp)
    # exact: the fitted levels are ±the same float
    assert len(levels) == 5 and levels[0] == -levels[-1] and 1.5 < levels[-1] < 2.2
    assert fitted_turns(rng.uniform(-1.1, 1.1, 1000)) == (-1.0, 0.0, 1.0)  # no turn much past 1 rad/s
    bins = paper_bins(np.array([0.5, 1.0, 2.0, 4.0] * 10), turns=levels)
    assert bins.n == 250 and bins.top_turn == pytest.approx(levels[-1])
    n = bins.n
    model = FragmentController(ControllerSettings(), {}, ["c"], 30.0, 0.2, np.zeros((1, n)), np.zeros((1, n)), bins,
                               [0], [0], 3, 1.3)
    asked = {}
    for off in (30.0, 120.0):
        step, _ = model.decide(State(np.zeros(2), 0.0, 0), Command(heading=np.radians(off), speed=1.3))
        asked[off] = float(bins.centres[bins.nearest(step.control), 2])
    assert asked[30.0] == 1.0 and asked[120.0] == pytest.approx(levels[-1])


def test_a_user_model_without_smoothing_is_a_distribution_in_every_row():
    """Smoothing 0 (its range allows it): a control bin no training trace visited took 0/0, so its
    row was NaN, and so was the trained table (``fragments train --smoothing 0`` exited 0)."""
    from motionctl.play.commands import Trace

    bins = paper_bins(np.array([0.5, 1.3, 3.0]))
    samples = np.tile([0.0, 1.3, 0.0, 0.0], (50, 1))
    samples[25:, 2] = 1.0
    t = learn_user_model([Trace(samples, 10.0, "walk, then turn")], bins, smoothing=0.0)
    assert np.isfinite(t).all() and np.allclose(t.sum(axis=1), 1.0)
    seen = bins.nearest(samples)
    assert t[seen[0], seen[0]] > 0.9  # a visited row is its counts


@pytest.mark.slow
def test_facing_a_heading_each_fragment_turns_its_way_and_warps_at_most_the_warp_rate(demo_model):
    """Asked to face a heading, a fragment plays its own turn and its facing turns by at most Warp
    Rate more over the fragment (as the other engines warp); without it the root follows the bin's
    turning rate (1 rad/s), as far as planted feet take it (0.6 rad/s more): slower."""
    _, clips = demo_model
    model = fit(clips, ControllerSettings(held_out=0))
    table = model.play(clips)
    rate = model.settings.warp_rate
    times = {}
    for warp in (rate, 0.0):
        model.settings.warp_rate = warp
        got = []
        for c in range(min(3, len(clips))):
            session = Session(model, table, frame=int(table.first[c]) + 5, play=PlaySettings())
            target = session.synth.yaw + 2.0
            while session.n_frames < 6 * table.fps and abs(wrap(target - session.synth.yaw)) > np.radians(5):
                session.decide(Command(heading=target, speed=1.2))
                step = session.steps[-1]
                if warp > 0:
                    # margin: 1e-9 on the bound (reached exactly here)
                    assert np.isnan(step.control[2]) and abs(step.edit[2]) <= warp * model.n_frames / model.fps + 1e-9
            got.append(session.n_frames / table.fps)
        times[warp] = float(np.mean(got))
    model.settings.warp_rate = rate
    assert times[rate] < 0.8 * times[0.0], times  # margin: 0.82 s against 1.25 s here


def test_no_transition_swaps_the_stance_leg_or_puts_a_foot_back(mocap):
    """A transition from a fragment ending on one foot to one starting on the other swaps the stance
    leg in a frame, and one landing a phase back puts the foot that swung ahead down behind again;
    the pose distance alone rates some as well as the transitions it keeps (CMU 16_23, a veer:
    played on a 0.6 rad/s turn, fragments looped its frames 30-60, half a stride, and one foot never
    landed; CMU 02_01's walk looped one step).  Motion quality is zero there, dense and sparse
    alike; a clip's own continuation is never forbidden; a walk's poses go through the gait phases
    in order."""
    from motionctl.engines.fragments.cut import FragmentSettings, cut_fragments
    from motionctl.engines.fragments.quality import (FORBIDDEN, _phases, motion_distances, motion_quality, quality_of,
                                                     stances, successor_distances)
    from motionctl.io.library import import_library

    db = import_library([os.path.join(mocap, "cmu_amc", "16", f"16_{t}.amc") for t in ("23", "13")]).groups[0].database
    fs = cut_fragments(db, FragmentSettings(mirror=False))
    q = QualitySettings()
    d = motion_distances(fs, q)
    raw, mq = quality_of(d, q), motion_quality(d, fs, q)
    end, start = stances(fs)
    flip = FORBIDDEN[end[:, None], start[None, :]]
    assert flip.sum() > 100  # margin: 7,968 pairs of two walks (3,990 under the stance rule alone)
    assert np.all(mq[flip] == 0.0)  # exact: set to zero
    # the pose distance alone would have kept some: better than the median transition it keeps
    assert raw[flip].max() > np.median(mq[mq > 0])  # margin: measured 0.60 against 0.20 (0.34 and 0.16, stance rule alone)
    succ, dist = successor_distances(fs, 40, q)
    kept = flip[np.arange(fs.n)[:, None], succ]  # a row short of 40 others keeps some, at quality zero
    assert np.all(quality_of(dist, q)[kept] == 0.0)  # exact: infinite distances, and 1 / inf is 0 in IEEE arithmetic
    cont = fs.continuation()
    has = cont >= 0
    assert not FORBIDDEN[end[has], start[cont[has]]].any()
    assert np.all(mq[np.flatnonzero(has), cont[has]] > 0)
    # a one-step-back transition (the left foot alone, the right swinging ahead -> the left alone,
    # the right behind) is forbidden; going on to the next phase is not
    assert FORBIDDEN[4 * 2 + 1, 4 * 1 + 1] and not FORBIDDEN[4 * 1 + 1, 4 * 2 + 1] and not FORBIDDEN[4 * 2 + 1, 4 * 3]
    # the phases of a straight walk's poses, frame by frame, only go forward (or are unknown)
    pf = fs.frame_table()
    walk = fs.clips[0]  # 16_23
    rows = np.arange(pf.first[0], pf.first[0] + walk.n_frames)
    phase = _phases(pf, rows)
    known = phase[phase > 0]
    assert len(known) > 0.5 * len(phase) and len(set(known.tolist())) == 6
    steps = (np.diff(known.astype(int)) % 6)[np.diff(known.astype(int)) != 0]
    assert np.mean(steps <= 2) > 0.95  # forward by a phase (or two, a double support skipped); measured: all 16 by one
