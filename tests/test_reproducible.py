"""Benchmarks give the same figures from a clean checkout: the paper-004 bench graph does not depend
on how many threads BLAS and motionctl's own pools use (its costs are matrix products, and a sum
split differently across threads can round differently)."""

import os
import sys

import numpy as np
import pytest

from conftest import ROOT

sys.path.insert(0, ROOT)


@pytest.mark.mocap
def test_the_bench_graph_is_identical_with_one_or_two_threads(mocap, monkeypatch):
    from threadpoolctl import threadpool_limits

    from bench.bench_evaluate import BASELINE, load_clips
    from motionctl.engines.graph import build_graph

    db = load_clips(mocap)
    graphs = []
    for threads in (1, 2):
        monkeypatch.setenv("MOTIONCTL_JOBS", str(threads))
        with threadpool_limits(threads):
            graphs.append(build_graph(db, BASELINE))
    a, b = graphs
    assert a.n > 50 and a.stats["candidates"] == b.stats["candidates"]
    for name in ("source", "start", "end", "edges"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert a.types == b.types and a.actions == b.actions


@pytest.mark.mocap
@pytest.mark.parametrize("engine", ["fragments", "field", "active"])
def test_every_engine_trains_the_same_model_with_one_or_two_threads(mocap, monkeypatch, engine):
    """The fragments policy changed with the BLAS thread count (its user-model expectation and GMRES sums)
    before it ran BLAS on one thread; the field and active-learning engines are checked the same way."""
    from threadpoolctl import threadpool_limits

    from motionctl.engines import ENGINES
    from motionctl.io.library import import_library

    files = [os.path.join(mocap, "cmu_amc", "16", f"16_{t}.amc") for t in ("11", "15", "35")]
    db = import_library(files).groups[0].database
    eng = ENGINES[engine]
    settings = eng.Settings()
    if engine == "fragments":
        settings.trace_seconds, settings.held_out = 30, 0
    arrays = []
    for threads in (1, 2):
        monkeypatch.setenv("MOTIONCTL_JOBS", str(threads))
        with threadpool_limits(threads):
            arrays.append(eng.fit(db, settings).arrays()[1])
    a, b = arrays
    assert a.keys() == b.keys()
    for k in a:
        assert np.array_equal(np.asarray(a[k]), np.asarray(b[k])), k
