"""A seeded fuzz of the readers (the generator of bench/fuzz.py, a few thousand mutants of real
capture): every failure must be motionctl's own error naming the file and line, and every clip
that comes out must be finite.  bench/fuzz.py runs 120,000 with a time limit per case."""

import os
import sys
from collections import Counter

import pytest

from conftest import ROOT

sys.path.insert(0, os.path.join(ROOT, "bench"))
import fuzz  # noqa: E402

pytestmark = pytest.mark.mocap


@pytest.mark.parametrize("n_bvh, n_asf, seed", [(1500, 0, 11), (0, 1000, 12)], ids=["bvh", "asf_amc"])
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
