"""Benchmarks give the same figures from a clean checkout: the paper-004 bench graph does not depend
on how many threads BLAS and motionctl's own pools use (its costs are matrix products, and a sum
split differently across threads can round differently)."""

import os
import sys

import numpy as np
import pytest

from conftest import ROOT

sys.path.insert(0, ROOT)


@pytest.mark.slow
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
    assert a.n > 50 and a.stats["candidates"] == b.stats["candidates"]  # count: integers (candidates)
    for name in ("source", "start", "end", "edges"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert a.types == b.types and a.actions == b.actions  # count: strings


@pytest.mark.slow
@pytest.mark.mocap
def test_every_engine_trains_the_recorded_model_on_this_stack_on_another_cpu_and_thread_count(mocap):
    """The same seed gives the same model on both stacks Blender embeds (Python 3.11 with numpy 1.26,
    Python 3.13 with numpy 2.x, each with its own OpenBLAS), on an older CPU and on one core: every
    engine trained in this process (BLAS and motionctl's pools on every core, as by default; the models
    ``model_digests.trained`` keeps, which the fuzz and header tests may have trained first in this
    process), and in a second process as an older one-core machine runs it (OpenBLAS's SSE3 kernels
    instead of AVX2 or AVX-512 ones, numpy's AVX-512 code switched off where this CPU has it, one thread
    for BLAS and motionctl), hashed by its saved arrays, equals the digests recorded in
    ``tests/model_digests.json``; each suite checks its own stack against them.  (Where they differ,
    ``python tests/model_digests.py MOCAP`` under each of those settings alone says which one does.) The
    fragments policy once changed with the BLAS thread count (its user-model expectation and GMRES sums,
    before it ran BLAS on one thread).  Before, on the other kernels five engines' models differed (the
    planner's trees and figures were another model's: step displacements and costs 1e-16 off, from BLAS
    products, a floor fit and quaternion table products), and on numpy 2 fragments' values (a float32
    mean) and active learning's RBF scales (a tie broken by float noise).  On a CPU with AVX-512 the
    models are also trained with numpy's AVX-512 code switched off, as an AVX2 CPU runs them: before
    ``motionctl.fmath`` and stable sorts, five of six engines trained other models there (numpy's
    AVX-512 exp, log, arctan2, arccos, power round the last bit differently; its AVX-512 argsort orders
    ties differently).  What each model plays for a fixed trace is compared too (within 1e-9: active
    learning's blends are BLAS products), and a graph on eleven clips: there a near tie of BLAS-rounded
    frame costs built a graph of 101 clips on AVX-512 kernels and of 109 on AVX2 ones, which then
    followed a turning stick within 5° on one CPU and 55° off on the other."""
    import json
    import subprocess
    import tempfile

    from model_digests import RECORDED, main

    script = os.path.join(ROOT, "tests", "model_digests.py")
    folders = {k: tempfile.mkdtemp(prefix=f"runs_{k}_") for k in ("here", "other")}
    wide = avx512_targets()  # this CPU's AVX-512 code paths in numpy: switched off there, as an AVX2 CPU's numpy
    older = {"OPENBLAS_CORETYPE": "Prescott", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
             "MOTIONCTL_JOBS": "1", **({"NPY_DISABLE_CPU_FEATURES": " ".join(wide)} if wide else {})}
    other = subprocess.Popen([sys.executable, script, mocap, "--runs", folders["other"]], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env={**os.environ, **older})
    here = main(mocap, folders["here"])
    out, err = other.communicate(timeout=1800)
    assert other.returncode == 0, err[-2000:]  # count: an exit status
    there = json.loads(out.strip().splitlines()[-1])
    how = "on SSE3 kernels, one thread" + (f", without numpy's AVX-512 code ({wide})" if wide else "")
    with open(RECORDED, encoding="utf-8") as fh:
        recorded = json.load(fh)
    models = {k: v for k, v in here.items() if ":" not in k}
    assert len(recorded) >= 6 and models.keys() == recorded.keys() and "graph:mix" in here
    stack = f"Python {sys.version_info.major}.{sys.version_info.minor}"
    # exact: digests of the saved models' bytes, which the code promises bit for bit on any CPU, BLAS
    # kernel and thread count (README); the played motion below is compared within a tolerance
    assert {k for k in models if models[k] != recorded[k]} == set(), \
        f"{stack} trains other models than recorded (if meant: python tests/model_digests.py MOCAP --write)"
    assert {k for k in here if here[k] != there.get(k)} == set(), f"{stack} {how}"  # exact: digests, as above
    for name in models:  # play: the same choices, so the same motion but for BLAS's last bits in blends
        a = np.load(os.path.join(folders["here"], f"{name}.npz"))
        b = np.load(os.path.join(folders["other"], f"{name}.npz"))
        for k in ("root", "rot"):
            assert a[k].shape == b[k].shape and np.allclose(a[k], b[k], rtol=0, atol=1e-9), (name, k, how)


def avx512_targets() -> list:
    """numpy's AVX-512 code paths this CPU runs (names NPY_DISABLE_CPU_FEATURES takes; empty: none)."""
    try:
        from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__
    except ImportError:  # numpy 1.26
        from numpy.core._multiarray_umath import __cpu_dispatch__, __cpu_features__
    return [t for t in __cpu_dispatch__ if ("AVX512" in t or t == "X86_V4") and __cpu_features__.get(t)]


def test_the_engine_package_calls_no_function_that_rounds_otherwise_on_avx512():
    """What the models are trained from goes through ``motionctl.fmath`` and stable sorts: numpy's
    own exp, log, power, arctan2, arccos, arcsin (and log1p, expm1) and an unstable argsort give
    other bits on a CPU with AVX-512 (see the test above); a new call slips in easily."""
    import re

    from conftest import ROOT as root

    risky = re.compile(r"\bnp\.(exp|log|log1p|expm1|power|arctan2|arccos|arcsin|tan|arctan|exp2|log2|cbrt)\(")
    found = []
    for folder, _, files in os.walk(os.path.join(root, "motionctl")):
        for name in files:
            path = os.path.join(folder, name)
            if not name.endswith(".py") or path.endswith(os.path.join("motionctl", "fmath.py")):
                continue
            for i, line in enumerate(open(path, encoding="utf-8"), 1):
                code = line.split("#")[0]
                if risky.search(code) or ("argsort(" in code and "kind=" not in code):
                    found.append(f"{os.path.relpath(path, root)}:{i}: {line.strip()}")
    assert not found, "use motionctl.fmath / argsort(kind=\"stable\"):\n" + "\n".join(found)
