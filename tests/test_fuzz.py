"""A seeded fuzz of every way data gets in (the generators of bench/fuzz.py): mutants of real
capture, of saved models of every engine, of traces, timelines, rooms, bone-map presets, exported
.glb files and command lines.  Every failure must be motionctl's own error naming the file (and
line, for the readers; one line and status 2 for a command line, its outputs as they were), and
whatever loads must play finite.  bench/fuzz.py runs hundreds of thousands of cases, each in a
worker process with a memory cap and a hang watchdog, and 1,000 concurrent saves."""

import os
import sys
from collections import Counter

import pytest

from conftest import ROOT

sys.path.insert(0, os.path.join(ROOT, "bench"))
import fuzz  # noqa: E402

pytestmark = pytest.mark.mocap


@pytest.mark.parametrize("n_bvh, n_asf, seed", [(400, 0, 11), (0, 600, 12)], ids=["bvh", "asf_amc"])
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
    # count: integers (outcomes)
    assert counts["ok"] > 0.05 * sum(counts.values()) and counts["error"] > 0.5 * sum(counts.values())


def seeded(mocap, folder, engines=None):
    names = fuzz.seed_files(mocap, folder, engines)
    return fuzz.seed_bytes(folder, names), fuzz.Context(mocap, folder), folder


@pytest.fixture(scope="module")
def surfaces(mocap, tmp_path_factory):
    """The seed files of bench/fuzz.py's other surfaces (small models of the two engines that train
    in seconds, the graph and motion matching; a trace, a timeline, rooms, a bone-map preset) and a
    worker's context."""
    return seeded(mocap, str(tmp_path_factory.mktemp("fuzz_seeds")), ("graph", "matching"))


@pytest.fixture(scope="module")
def every_engine(mocap, tmp_path_factory):
    """The same with small models of every registered engine (minutes: the slow set's)."""
    return seeded(mocap, str(tmp_path_factory.mktemp("fuzz_seeds_all")))


@pytest.mark.parametrize("surface, n", [("models", 150), ("traces", 60), ("timelines", 30), ("rooms", 200),
                                        ("presets", 200), ("glb", 200), ("options", 15)])
def test_mutants_of_models_and_small_files_fail_only_with_our_error(surfaces, surface, n):
    """Damaged models (arrays and header), traces, timelines, rooms and presets are refused with
    motionctl's own error naming the file, or load and are used (played, rasterised, retargeted)
    with every value finite."""
    check_mutants(surfaces, surface, n)


@pytest.mark.slow
def test_mutants_of_every_engines_model_fail_only_with_our_error(every_engine):
    """The same for a model of each of the six engines (bench/fuzz.py runs thousands per engine)."""
    check_mutants(every_engine, "models", 300)


def check_mutants(seeds, surface: str, n: int) -> None:
    files, ctx, folder = seeds
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
    assert counts["ok"] > 0.05 * n and counts["error"] > 0.3 * n, counts  # count: integers (outcomes)


def test_the_generators_make_every_kind_issue_57_found(surfaces):
    """The mutants hold each kind of input that still ended in a traceback (issue 57), so a run would
    catch its like: a model header field near the top given another kind or size (a whole number as
    7.0, a number as a word, a word where a list belongs, 10^12), a room coordinate of 1e30, a .glb
    whose JSON chunk is not UTF-8 or JSON, and command lines with a negative seed and outputs sent to
    a read-only folder or a full disk."""
    import json

    files = surfaces[0]
    seeds = {name: _header(data) for name, data in files["models"]}
    changes = set()
    for k in range(600):
        name, data, _ = fuzz.mutant("models", k, 5, ([], []), files)
        meta = _header(data)
        for path, old in _near_top(seeds[name]):
            new = _at(meta, path)
            number = isinstance(old, (int, float)) and not isinstance(old, bool)
            if number and isinstance(old, int) and isinstance(new, float) and new == old:
                changes.add("whole number as 7.0")
            elif number and isinstance(new, str):
                changes.add("number as a word")
            elif isinstance(old, list) and isinstance(new, str):
                changes.add("word for a list")
            elif new in (10**12, 1e308) and new != old:
                changes.add("huge size")
    assert changes == {"whole number as 7.0", "number as a word", "word for a list", "huge size"}, changes
    rooms = [fuzz.mutant("rooms", k, 5, ([], []), files)[1] for k in range(2000)]
    assert any(b"1e+30" in r for r in rooms)
    glbs = [fuzz.mutant("glb", k, 5, ([], []), files)[1] for k in range(300)]
    assert sum(1 for g in glbs if not _utf8(g[20:20 + int.from_bytes(g[12:16], "little")])) > 10
    options = [json.loads(fuzz.mutant("options", k, 5, ([], []), files)[1]) for k in range(300)]
    assert any("--seed" in o["argv"] and o["argv"][o["argv"].index("--seed") + 1] == "-1" for o in options)
    assert {o["place"] for o in options} >= {"read-only", "full", "no-room", "missing", "file", "folder", None}


def _near_top(doc, path=()):
    """(path, value) of the values within three keys of a header's top (the fields the program reads)."""
    if isinstance(doc, dict) and len(path) < 3:
        for k, v in doc.items():
            yield path + (k,), v
            yield from _near_top(v, path + (k,))


def _at(doc, path):
    for k in path:
        if not isinstance(doc, dict) or k not in doc:
            return None
        doc = doc[k]
    return doc


def _header(data: bytes):
    """A model mutant's JSON header, or None where its bytes were damaged past reading."""
    import io
    import json

    import numpy as np

    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as z:
            return json.loads(bytes(z["meta"]).decode())
    except Exception:  # noqa: BLE001 - a zip, header or JSON damaged by the byte mutations
        return None


def _utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def test_an_accepted_input_that_numpy_cast_to_garbage_is_a_finding():
    """A room's 1e30 m circle was rasterised with exit status 0 after numpy's cast warning, which the
    workers ignored: ``cast_warned`` records it, and such a case counts as ``warned``, a bug."""
    import numpy as np

    with fuzz.cast_warned() as casts:
        np.array([1.0, 2.5]).astype(np.int64)
    assert casts == []
    with fuzz.cast_warned() as casts:
        np.array([1e30, np.nan]).astype(np.int64)
    assert len(casts) == 1 and "encountered in cast" in casts[0] and "warned" in fuzz.BUGS


def test_two_writers_and_killed_saves_never_leave_a_corrupt_file(tmp_path):
    """Two processes save one path while a third reads it; saves killed mid-write leave the last
    whole archive, and their temporaries go once stale (bench/fuzz.py runs 1,000 saves, 50 kills)."""
    from fuzz_saves import concurrent_saves

    r = concurrent_saves(60, str(tmp_path), kills=4)
    assert r["failed"] == 0 and r["corrupt"] == 0 and r["reads"] > 0, r
    assert r["whole_after_kill"] == 4 and r["temporaries_cleaned"] == r["temporaries_left"], r  # count: integers


def test_array_mutations_take_any_array_an_earlier_mutation_left():
    """A model's array may already be empty, a scalar or of another dtype when the next mutation comes
    (a 60,000-model run stopped at case 3,234 on an emptied 2-D array's transpose): each mutation
    returns an array (or a numpy scalar, which np.savez stores as one) or None for each."""
    import numpy as np

    sys.path.insert(0, os.path.join(ROOT, "bench"))
    import fuzz_surfaces

    shapes = [(0,), (0, 3), (4, 0), (0, 2, 3), (), (5,), (3, 4), (2, 3, 4)]
    rng = np.random.default_rng(0)
    for dtype in (np.float32, np.int64, np.bool_):
        for shape in shapes:
            for _ in range(60):
                arrays = {"meta": np.zeros(1), "x": np.zeros(shape, dtype)}
                out = fuzz_surfaces._mutate_array(arrays, "x", rng)
                assert out is None or isinstance(out, (np.ndarray, np.generic)), (dtype, shape, type(out))
