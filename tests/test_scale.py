"""Large libraries (issue 17): sparse fragment successors against the dense table, memory guards,
and the parallel pieces on a real Dask cluster (a LocalCluster of 2 worker processes) giving the
local run's results bit for bit."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from motionctl import jobs
from motionctl.engines.fragments import ControllerSettings, FragmentModel, evaluate_controllers, learn_user_model
from motionctl.engines.fragments.quality import QualitySettings, motion_distances, successor_distances
from motionctl.engines.fragments.solver import Transitions, optimal_path
from motionctl.errors import Cancelled, MotionctlError
from motionctl.io.library import import_library
from motionctl.settings import from_flat

import os

pytestmark = pytest.mark.mocap
MOCAP = None
TAKES = ("11", "15", "17", "35", "37", "05", "01", "09")


def amc(*takes) -> list:
    return [os.path.join(MOCAP, "cmu_amc", "16", f"16_{t}.amc") for t in takes]


@pytest.fixture(scope="module")
def clips(mocap):
    global MOCAP
    MOCAP = mocap
    files = amc(*TAKES)
    return import_library(files).groups[0].database.clips


@pytest.fixture(scope="module")
def dense(clips):
    return FragmentModel.build(clips, quality=QualitySettings())


def test_successors_are_the_best_by_motion_quality_and_keep_the_dense_distances(dense, clips):
    q = QualitySettings(successors=60)
    sparse = FragmentModel.build(clips, quality=q)
    assert sparse.sparse and not dense.sparse and sparse.n == dense.n
    mq = dense.motion_quality(q)
    n, k = sparse.successors.shape
    assert k == 60 and np.all(np.diff(sparse.successors, axis=1) > 0)  # ascending, no repeats
    exact = np.argpartition(-mq, k - 1, axis=1)[:, :k]
    found = np.mean([len(np.intersect1d(a, b)) / k for a, b in zip(exact, sparse.successors)])
    assert found > 0.97, found
    rows = np.repeat(np.arange(n), k)
    # The stored per-δ distances are the dense table's (float32 sums in another order).
    finite = np.isfinite(sparse.distances[0].ravel())
    for i in range(len(q.deltas)):
        np.testing.assert_allclose(sparse.distances[i].ravel()[finite],
                                   dense.distances[i][rows, sparse.successors.ravel()][finite], rtol=1e-4, atol=1e-4)
    # Stuttering back-jumps are never transitions, and every kept one scores as in the dense table.
    trans = sparse.motion_quality(q)
    assert np.all(mq[np.repeat(np.arange(n), np.diff(trans.indptr)), trans.indices] > 0)
    np.testing.assert_allclose(trans.data, mq[np.repeat(np.arange(n), np.diff(trans.indptr)), trans.indices],
                               rtol=1e-4)


def test_sparse_threshold_matches_dense_when_every_top_transition_is_kept(dense, clips):
    q = QualitySettings(successors=400)
    sparse = FragmentModel.build(clips, quality=q)
    for pct in (1.0, 4.0):
        d, s = dense.transitions(q, pct), sparse.transitions(q, pct)
        dk = set(zip(np.repeat(np.arange(dense.n), np.diff(d.indptr)).tolist(), d.indices.tolist()))
        sk = set(zip(np.repeat(np.arange(sparse.n), np.diff(s.indptr)).tolist(), s.indices.tolist()))
        # Dense rows keep at most 400 here, so the same global top is found (ties aside).
        assert len(dk ^ sk) <= 0.002 * len(dk), (pct, len(dk ^ sk), len(dk))


@pytest.mark.slow
def test_sparse_controller_with_hubs_scores_like_the_dense_one(dense, clips):
    # Each fragment keeps its best 8% of successors by motion quality; training adds hub columns
    # (the fragments worth most per control bin).  Without them the policy loses points: paper
    # 000's score rewards reaching a good future over one smooth transition.
    s = ControllerSettings()
    s.quality.successors = int(0.08 * dense.n)
    sparse = FragmentModel.build(clips, quality=s.quality)
    from motionctl.engines.fragments.model import evaluation_traces, training_traces

    traces = training_traces(s, dense.fragments)
    bins = dense.make_bins(s, traces)
    t = learn_user_model(traces, bins, s.smoothing)
    rd = dense.train(s, bins, t)
    s.policy.hubs_per_bin = 0
    bare = sparse.train(s, bins, t)
    s.policy.hubs_per_bin = 10
    rs = sparse.train(s, bins, t)
    assert bare.hubs == 0 and 10 <= rs.hubs <= 10 * bins.n and rs.hubs == len(sparse.hubs)
    # The sparse policy only ever plays kept successors or hubs, at their exact dense quality.
    trans = sparse.motion_quality(s.quality)
    kept = trans.lookup(np.arange(sparse.n)[:, None], rs.table)
    in_table = np.isin(rs.table, sparse.hubs) | (kept > 0)
    assert np.all(in_table)
    mq = dense.motion_quality(s.quality)
    np.testing.assert_allclose(trans.hub_data, mq[:, sparse.hubs], rtol=1e-4, atol=1e-6)
    held = evaluation_traces(dense.fragments, 4, 3)
    res = evaluate_controllers(dense, {"dense": rd.table, "sparse": rs.table, "bare": bare.table}, bins, held,
                               s.quality)
    assert abs(res["dense"]["mean"] - res["sparse"]["mean"]) < 1.0, (res["dense"]["mean"], res["sparse"]["mean"])
    # margin: 86.7 against 92.3 here
    assert res["bare"]["mean"] < res["sparse"]["mean"] - 1.0, (res["bare"]["mean"], res["sparse"]["mean"])


def test_memory_guard_refuses_the_dense_table_and_names_the_setting(clips, monkeypatch):
    monkeypatch.setenv("MOTIONCTL_MEMORY_GB", "0.01")
    with pytest.raises(jobs.MemoryLimitError, match="Successors"):
        FragmentModel.build(clips, quality=QualitySettings())
    # Each fragment's best 20 successors fit in 10 MB.
    assert FragmentModel.build(clips, quality=QualitySettings(successors=20)).sparse
    monkeypatch.setenv("MOTIONCTL_MEMORY_GB", "lots")
    with pytest.raises(MotionctlError, match="MOTIONCTL_MEMORY_GB"):
        jobs.memory_budget()


def test_automatic_successors_switch_to_sparse_beyond_the_dense_limit():
    q = QualitySettings()
    assert q.successors_for(5000) == 5000
    assert q.successors_for(40000) == 500
    assert QualitySettings(successors=50).successors_for(30) == 30


def test_parallel_map_orders_results_stops_and_reports_progress():
    seen = []
    out = jobs.parallel_map(lambda x, base: base + x, range(7), 2, {"base": 10}, progress=lambda f, m: seen.append(f))
    assert out == list(range(10, 17)) and seen[-1] == 1.0
    calls = []

    def stop():
        calls.append(1)
        return len(calls) > 2

    with pytest.raises(Cancelled):
        jobs.parallel_map(lambda x: x, range(50), 1, should_stop=stop, what="blocks")


# ----------------------------------------------------------------------------- a real Dask cluster

@pytest.fixture(scope="module")
def cluster():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as lc:
        yield lc.scheduler_address
    jobs.use_scheduler(None)


@pytest.fixture
def on_cluster(cluster):
    jobs.use_scheduler(cluster)
    yield jobs.cluster()
    jobs.use_scheduler(None)


def test_fragment_pieces_on_a_cluster_equal_the_local_run_bit_for_bit(dense, on_cluster, clips):
    fs = dense.fragments
    q = QualitySettings()
    d = motion_distances(fs, q, block=300)
    assert np.array_equal(d, dense.distances)
    succ, dist = successor_distances(fs, 40, q, block=200)
    jobs.use_scheduler(None)
    succ0, dist0 = successor_distances(fs, 40, q, block=200)
    assert np.array_equal(succ, succ0) and np.array_equal(dist, dist0)


@pytest.mark.slow
def test_training_and_the_optimum_on_a_cluster_equal_the_local_run(dense, cluster):
    s = from_flat(ControllerSettings, {"trace_seconds": 30.0})  # equality, not quality: short traces do
    s.quality.successors = 80
    from motionctl.engines.fragments.model import training_traces

    sparse = FragmentModel.build(dense.fragments.clips, s.fragments.__class__(mirror=False), s.quality)
    traces = training_traces(s, sparse.fragments)
    bins = sparse.make_bins(s, traces)
    t = learn_user_model(traces, bins, s.smoothing)
    cq = np.random.default_rng(0).random((sparse.n, 5)).astype(np.float32)
    twin = copy.deepcopy(sparse)  # training adds hub columns to the model: both start without
    local = sparse.train(s, bins, t)
    path0 = optimal_path(sparse.transitions(s.quality, None), cq, np.arange(40) % 5)
    jobs.use_scheduler(cluster)
    try:
        remote = twin.train(s, bins, t)
        path1 = optimal_path(twin.transitions(s.quality, None), cq, np.arange(40) % 5)
        dense_t = Transitions.from_dense(dense.motion_quality(s.quality))
        cq_d = np.random.default_rng(1).random((dense.n, 3)).astype(np.float32)
        path_d1 = optimal_path(dense_t, cq_d, np.arange(30) % 3)
    finally:
        jobs.use_scheduler(None)
    assert local.hubs > 0 and np.array_equal(sparse.hubs, twin.hubs)
    assert np.array_equal(local.table, remote.table) and np.array_equal(local.values, remote.values)
    # exact: the same computation on a local or a distributed scheduler (what this test checks)
    assert np.array_equal(path0[0], path1[0]) and path0[1] == path1[1]
    assert np.array_equal(path_d1[0], optimal_path(dense_t, cq_d, np.arange(30) % 3)[0])


def test_graph_build_and_room_metrics_on_a_cluster_equal_the_local_run(clips, cluster):
    from motionctl.engines.graph import GraphSettings, build_graph
    from motionctl.evaluate import Environment, evaluate

    env = Environment((0.0, 0.0, 6.0, 4.0), [], "small room")
    g0 = build_graph(clips[:5], GraphSettings(min_clip=0.3, block=700))
    r0 = evaluate(g0, env, pairs=20, lm_sample=0.05)
    jobs.use_scheduler(cluster)
    try:
        g1 = build_graph(clips[:5], GraphSettings(min_clip=0.3, block=700))
        r1 = evaluate(g1, env, pairs=20, lm_sample=0.05)
    finally:
        jobs.use_scheduler(None)
    assert np.array_equal(g0.edges, g1.edges) and np.array_equal(g0.start, g1.start)
    assert r0["nodes"] == r1["nodes"]  # count: integers (nodes)
    # exact: the same computation on a local or a distributed scheduler (what this test checks)
    assert r0["path_efficiency"] == r1["path_efficiency"]


def test_a_cluster_job_can_be_cancelled(on_cluster):
    calls = []

    def stop():
        calls.append(1)
        return len(calls) > 1

    with pytest.raises(Cancelled, match="blocks cancelled"):
        jobs.parallel_map(_slow_square, range(12), shared={"big": np.ones(1000)}, should_stop=stop, what="blocks")


def _slow_square(x, big):
    import time

    time.sleep(0.05)
    return x * x + big.sum()


@pytest.mark.slow
def test_cli_trains_on_a_cluster_and_names_an_unreachable_scheduler(clips, cluster, tmp_path, capsys):
    from motionctl.cli import main

    files = amc("15", "35")
    args = ["fragments", "train", "--clips", *files, "--held-out", "0", "--successors", "50", "--trace-seconds", "20"]
    assert main(["--scheduler", cluster, *args, "--out", str(tmp_path / "c.npz")]) == 0
    jobs.use_scheduler(None)
    assert main([*args, "--out", str(tmp_path / "l.npz")]) == 0
    a, b = np.load(tmp_path / "c.npz"), np.load(tmp_path / "l.npz")
    assert np.array_equal(a["table"], b["table"])
    assert main(["--scheduler", "tcp://127.0.0.1:9", *args, "--out", str(tmp_path / "x.npz")]) == 2
    assert "tcp://127.0.0.1:9" in capsys.readouterr().err
    assert not (tmp_path / "x.npz").exists()
    jobs.use_scheduler(None)


@pytest.mark.slow
def test_fit_cache_rebuilds_when_successors_or_the_sparse_stutter_window_change(clips):
    from motionctl.engines.fragments import fit

    s = ControllerSettings(held_out=0)
    s.fragments.mirror = False
    s.quality.successors = 20
    cache = {}
    fit(clips[:3], s, cache=cache)
    first = next(iter(cache["fragments"].values()))
    assert first.successors.shape[1] == 20
    s.quality.successors = 30
    fit(clips[:3], s, cache=cache)
    second = next(iter(cache["fragments"].values()))
    assert second is not first and second.successors.shape[1] == 30
    s.quality.stutter_window = 0.5
    fit(clips[:3], s, cache=cache)
    assert next(iter(cache["fragments"].values())).stutter_window == 0.5
    with pytest.raises(MotionctlError, match="stutter window"):
        second.motion_quality(s.quality)
