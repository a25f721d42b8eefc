"""A seeded fuzz of every way data gets in (the generators of bench/fuzz.py): mutants of real
capture, of saved models of every engine, of traces, timelines, rooms and bone-map presets.  Every
failure must be motionctl's own error naming the file (and line, for the readers), and whatever
loads must play finite.  bench/fuzz.py runs 160,000 cases, each in a worker process with a
memory cap and a hang watchdog, and 1,000 concurrent saves."""

import os
import sys
from collections import Counter

import pytest

from conftest import ROOT

sys.path.insert(0, os.path.join(ROOT, "bench"))
import fuzz  # noqa: E402

pytestmark = pytest.mark.mocap


@pytest.mark.parametrize("n_bvh, n_asf, seed", [(800, 0, 11), (0, 600, 12)], ids=["bvh", "asf_amc"])
def test_mutants_fail_only_with_our_error(mocap, n_bvh, n_asf, seed):
    bvh_seeds, amc_seeds = fuzz.seeds(mocap)
    counts, problems = Counter(), []
    for kind, label, data, asf in fuzz.cases(bvh_seeds, amc_seeds, n_bvh, n_asf, seed):
        outcome, _, detail = fuzz.run_case(kind, data, asf)
        counts["slow" if outcome == "slow" else outcome] += 1
        if outcome in ("crash", "nonfinite", "no_line"):
            problems.append((label, outcome, detail))
    assert not problems, problems[:3]
    # The mutants exercised both paths: some still read, most were refused with a line number.
    assert counts["ok"] > 0.05 * sum(counts.values()) and counts["error"] > 0.5 * sum(counts.values())


@pytest.fixture(scope="module")
def surfaces(mocap, tmp_path_factory):
    """The seed files of bench/fuzz.py's other surfaces (small models of every engine, a trace, a
    timeline, rooms, a bone-map preset) and a worker's context."""
    folder = str(tmp_path_factory.mktemp("fuzz_seeds"))
    names = fuzz.seed_files(mocap, folder)
    files = {s: [(n, open(os.path.join(folder, n), "rb").read()) for n in names[s]] for s in names}
    return files, fuzz.Context(mocap, folder), folder


@pytest.mark.parametrize("surface, n", [("models", 150), ("traces", 60), ("timelines", 60), ("rooms", 200),
                                        ("presets", 200)])
def test_mutants_of_models_and_small_files_fail_only_with_our_error(surfaces, surface, n):
    """Damaged models of every engine (arrays and header), traces, timelines, rooms and presets are
    refused with motionctl's own error naming the file, or load and are used (played, rasterised,
    retargeted) with every value finite."""
    files, ctx, folder = surfaces
    scratch = os.path.join(folder, surface)
    os.makedirs(scratch, exist_ok=True)
    counts, problems = Counter(), []
    for k in range(n):
        label, data, _ = fuzz.mutant(surface, k, 21, ([], []), files)
        outcome, detail = fuzz.run_file_case(surface, data, ctx, scratch)
        counts[outcome] += 1
        if outcome in fuzz.BUGS:
            problems.append((k, label, outcome, detail))
    assert not problems, problems[:3]
    assert counts["ok"] > 0.05 * n and counts["error"] > 0.3 * n, counts


def test_two_writers_and_killed_saves_never_leave_a_corrupt_file(tmp_path):
    """Two processes save one path while a third reads it; saves killed mid-write leave the last
    whole archive, and their temporaries go once stale (bench/fuzz.py runs 1,000 saves, 50 kills)."""
    from fuzz_saves import concurrent_saves

    r = concurrent_saves(60, str(tmp_path), kills=4)
    assert r["failed"] == 0 and r["corrupt"] == 0 and r["reads"] > 0, r
    assert r["whole_after_kill"] == 4 and r["temporaries_cleaned"] == r["temporaries_left"], r
