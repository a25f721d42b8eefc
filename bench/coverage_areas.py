"""Branch coverage of the code every input enters through (issue 57), from the tests and the fuzz bench.

    .venv/bin/pip install coverage          # a development tool: not in constraints.txt, not shipped
    .venv/bin/python bench/coverage_areas.py [--fuzz-scale 1.0] [--tests tests/test_bvh.py ...] [--before JSON]

An earlier commit is measured the same way in a worktree of it, with this script copied in (its
own tests and fuzz bench run; functions it lacks are left out), and shown beside with --before:

    git worktree add --detach /tmp/before COMMIT && cp bench/coverage_areas.py /tmp/before/bench/
    (cd /tmp/before && MOTIONCTL_MOCAP_DIR=MOCAP CHECKOUT/.venv/bin/python bench/coverage_areas.py --mocap MOCAP \
        --out /tmp/before/results)          # MOCAP: the capture folder; CHECKOUT: this checkout
    .venv/bin/python bench/coverage_areas.py --before /tmp/before/results/coverage.json

Three areas, each a set of whole modules or of functions (their whole bodies):

  readers      motionctl/io: the BVH and ASF/AMC readers, orientation (units, axes, floor), extra roots,
               the library import (``demo_data``, which writes the generated demo, is not a reader)
  loaders      store.py, engines/base.py, engines/schema.py, and each engine's model load and check
               code (``from_archive``, ``from_arrays``, ``check``, ``Model.load`` and what they build)
  small files  ``store.read_bytes/read_text/read_json/parse_json`` and the parsers of traces,
               timelines, rooms, bone-map presets, sidecars and the exported .glb's read-back

Measured with coverage.py in branch mode over (1) the tests that exercise these areas (``TESTS``)
and (2) the fuzz bench's own generators run in this process (``bench/fuzz.py``: mutants of real
BVH, ASF/AMC, model files of the six engines, traces, timelines, rooms, presets, .glb files and
command lines; ``FUZZ`` cases of each, times ``--fuzz-scale``).  Each area's figure is coverage.py's
branch-mode "cover" (statements and branch exits run, over all of them) and, beside it, the share of
branch exits taken alone.  Writes bench/results/coverage.md and .json (the figures, the command, the
lines and branches never run, by file).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import subprocess
import sys
import time

from harness import (ROOT, RESULTS, add_mocap, environment, write_json,  # noqa: F401  (first: the checkout on the path)
                     write_markdown)

TESTS = ("tests/test_bvh.py", "tests/test_asfamc.py", "tests/test_orient.py", "tests/test_library.py",
         "tests/test_robust_import.py", "tests/test_tags.py", "tests/test_store.py", "tests/test_small_files.py",
         "tests/test_model_header.py", "tests/test_loaders.py", "tests/test_readers.py", "tests/test_fuzz.py",
         "tests/test_export_presets.py", "tests/test_cli_checks.py")
FUZZ = {"bvh": 4000, "asf_amc": 1500, "models": 1200, "traces": 400, "timelines": 300, "rooms": 600,
        "presets": 400, "glb": 400, "options": 0}
# {area: [(file, None for the whole file, or the functions (qualified names) counted)]}
AREAS = {
    "readers": [(f"motionctl/io/{m}.py", None) for m in ("bvh", "asfamc", "orient", "roots", "library")],
    "loaders": [("motionctl/store.py", None), ("motionctl/engines/base.py", None),
                ("motionctl/engines/schema.py", None)]
    + [(f"motionctl/engines/{e}/model.py", ("*.from_archive", "*.check")) for e in
       ("fragments", "planning", "graph", "field", "active", "matching")]
    + [("motionctl/engines/planning/planner.py", ("Planner.from_arrays",)),
       ("motionctl/engines/planning/forest.py", ("FlatForest.from_arrays",)),
       ("motionctl/play/graph.py", ("MotionGraph.from_arrays",)),
       ("motionctl/engines/active/motion.py", ("Aligned.from_arrays",)),
       ("motionctl/engines/field/model.py", ("FieldModel._attach", "task_of")),
       ("motionctl/engines/fragments/model.py", ("FragmentController.on_bind",))],
    "small files": [("motionctl/store.py", ("read_bytes", "read_text", "parse_json", "_bounded_int", "read_json")),
                    ("motionctl/play/commands.py", ("read_trace", "load_timeline", "sample_problem", "trace_rate")),
                    ("motionctl/play/csvtrace.py", None),
                    ("motionctl/evaluate/room/environment.py", ("read_environment", "environment_from_dict",
                                                                "_numbers", "_types")),
                    ("motionctl/retarget/mapping.py", ("load_preset",)),
                    ("motionctl/tags.py", ("read_sidecar",)),
                    ("motionctl/retarget/export.py", ("glb_animation_names",))],
}


# ----------------------------------------------------------------------------- the runs

def run_tests(tests, data: str) -> float:
    """The tests under coverage (branch mode); returns seconds."""
    t0 = time.perf_counter()
    cmd = [sys.executable, "-m", "coverage", "run", "--branch", "--parallel-mode", f"--data-file={data}",
           "--source=motionctl", "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests]
    subprocess.run(cmd, cwd=ROOT, check=False)
    return time.perf_counter() - t0


def run_fuzz(counts: dict, mocap: str, folder: str, data: str, seed: int) -> float:
    """The fuzz bench's cases run in one process under coverage: its seeds, then ``counts`` mutants
    of each surface (``fuzz.mutant`` and the worker's own case functions); returns seconds."""
    t0 = time.perf_counter()
    os.makedirs(folder, exist_ok=True)
    script = os.path.join(folder, "fuzz_cases.py")
    with open(script, "w", encoding="utf-8") as fh:
        fh.write(f"import sys\nsys.path[:0] = [{os.path.join(ROOT, 'bench')!r}, {ROOT!r}]\nimport coverage_areas\n"
                 f"coverage_areas.fuzz_in_process({counts!r}, {mocap!r}, {folder!r}, {seed})\n")
    subprocess.run([sys.executable, "-m", "coverage", "run", "--branch", "--parallel-mode", f"--data-file={data}",
                    "--source=motionctl", script], cwd=ROOT, check=False)
    return time.perf_counter() - t0


def fuzz_in_process(counts: dict, mocap: str, folder: str, seed: int) -> None:
    """What ``run_fuzz`` runs under coverage."""
    import warnings

    import fuzz
    from fuzz_surfaces import Context, seed_bytes, seed_files

    warnings.simplefilter("ignore")
    os.makedirs(folder, exist_ok=True)
    names = seed_files(mocap, folder)
    with open(os.path.join(folder, "seeds.json"), "w", encoding="utf-8") as fh:
        json.dump(names, fh)
    files = seed_bytes(folder, names)
    reader_seeds = fuzz.seeds(mocap)
    ctx = Context(mocap, folder)
    scratch = os.path.join(folder, "scratch")
    os.makedirs(scratch, exist_ok=True)
    # The bench worker's memory cap; no watchdog here: the cases are the first of the bench's own
    # (same seed), so a recorded bench run has met any that hangs.
    fuzz.cap_memory()
    for surface, n in counts.items():
        if surface not in fuzz.ALL:  # an older checkout's bench has fewer surfaces
            print(f"fuzz {surface}: not in this checkout's bench", flush=True)
            continue
        outcomes = {}
        for k in range(n):
            _, data, asf = fuzz.mutant(surface, k, seed, reader_seeds, files)
            if surface in fuzz.READERS:
                outcome = fuzz.run_case("bvh" if surface == "bvh" else "amc", data, asf)[0]
            else:
                outcome = fuzz.run_file_case(surface, data, ctx, scratch)[0]
            outcomes[outcome] = outcomes.get(outcome, 0) + 1
        print(f"fuzz {surface}: {n} cases {outcomes}", flush=True)


# ----------------------------------------------------------------------------- the figures

def spans(path: str, names) -> list:
    """[(first line, last line)] of the functions ``names`` ("Class.method", "*.method", "function")
    in the file ``path``; the whole file for None."""
    if names is None:
        return [(1, 10**9)]
    tree = ast.parse(open(path, encoding="utf-8").read())
    out = []

    def visit(node, prefix=""):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                qual = prefix + child.name
                if any(n == qual or (n.startswith("*.") and qual.endswith(n[1:]) and prefix) for n in names):
                    out.append((child.lineno, child.end_lineno))
            if isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")
    visit(tree)
    if not out:  # an older checkout may lack some (measuring "before"); none at all is a mistake
        raise SystemExit(f"{path}: none of {names} found (AREAS names a function that moved?)")
    return out


def figures(data: str) -> dict:
    """{area: {"statements", "run", "branches", "taken", "cover", "branch_cover", "missing": {file: [...]}}}."""
    import coverage

    cov = coverage.Coverage(data_file=data, branch=True)
    cov.load()
    out = {}
    for area, parts in AREAS.items():
        tot = {"statements": 0, "run": 0, "branches": 0, "taken": 0, "missing": {}}
        seen = set()
        for rel, names in parts:
            path = os.path.join(ROOT, rel)
            ranges = spans(path, names)
            analysis = cov._analyze(path)
            inside = lambda line: any(a <= line <= b for a, b in ranges)  # noqa: E731
            statements = {s for s in analysis.statements if inside(s) and (rel, s) not in seen}
            seen |= {(rel, s) for s in statements}
            missing = {s for s in analysis.missing if s in statements}
            exits = {line: n for line, n in analysis.branch_stats().items() if line in statements}
            missing_arcs = {line: arcs for line, arcs in analysis.missing_branch_arcs().items() if line in exits}
            total_exits = sum(n for n, _ in exits.values())
            taken = sum(t for _, t in exits.values())
            tot["statements"] += len(statements)
            tot["run"] += len(statements) - len(missing)
            tot["branches"] += total_exits
            tot["taken"] += taken
            if missing or missing_arcs:
                tot["missing"][rel] = {"lines": sorted(missing),
                                       "branches": {str(k): v for k, v in sorted(missing_arcs.items())}}
        tot["cover"] = (tot["run"] + tot["taken"]) / max(tot["statements"] + tot["branches"], 1)
        tot["branch_cover"] = tot["taken"] / max(tot["branches"], 1)
        out[area] = tot
    return out


def report(result: dict, before: dict | None = None) -> str:
    md = ["# Branch coverage of where input enters", "",
          f"`{result['command']}` at {result['commit'][:10]}: the tests ({result['tests_seconds']:.0f} s) and the fuzz "
          f"bench's generators in-process ({result['fuzz_seconds']:.0f} s: "
          + ", ".join(f"{n:,} {s}" for s, n in result["fuzz"].items() if n) + ") under coverage.py "
          f"{result['coverage_version']} in branch mode.", "",
          "| area | statements | run | branch exits | taken | cover (statements and branches) | branches alone |",
          "|---|---|---|---|---|---|---|"]
    for area, f in result["areas"].items():
        md.append(f"| {area} | {f['statements']:,} | {f['run']:,} | {f['branches']:,} | {f['taken']:,} | "
                  f"{100 * f['cover']:.1f}% | {100 * f['branch_cover']:.1f}% |")
    if before:
        md += ["", f"Before (`{before['command']}` at {before['commit'][:10]}, its own tests and fuzz bench: "
               + ", ".join(f"{n:,} {s}" for s, n in before["fuzz"].items() if n) + "):", "",
               "| area | cover then | now | branches alone then | now |", "|---|---|---|---|---|"]
        for area, f in result["areas"].items():
            b = before["areas"].get(area)
            if b:
                md.append(f"| {area} | {100 * b['cover']:.1f}% | {100 * f['cover']:.1f}% | {100 * b['branch_cover']:.1f}% "
                          f"| {100 * f['branch_cover']:.1f}% |")
    md += ["", "What each area holds: `bench/coverage_areas.py` (AREAS); the lines and branch exits never run are "
           "in coverage.json, by file."]
    return "\n".join(md) + "\n"


def main(argv=None) -> int:
    import tempfile

    import coverage

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tests", nargs="*", default=list(TESTS), help="test files to run under coverage")
    ap.add_argument("--fuzz-scale", type=float, default=1.0, help="times the fuzz cases of FUZZ (0: none)")
    ap.add_argument("--seed", type=int, default=0)
    add_mocap(ap)
    ap.add_argument("--out", default=RESULTS)
    ap.add_argument("--data", help="coverage data already gathered (skip the runs: only the figures)")
    ap.add_argument("--before", help="an earlier run's coverage.json, shown beside (e.g. measured in a worktree of "
                    "an earlier commit, with this script copied in)")
    args = ap.parse_args(argv)
    import fuzz

    env = environment()
    counts = {s: int(round(n * args.fuzz_scale)) for s, n in FUZZ.items() if s in fuzz.ALL}  # this checkout's
    args.tests = [t for t in args.tests if os.path.exists(os.path.join(ROOT, t))]
    tests_s = fuzz_s = 0.0
    data = args.data
    if data is None:
        folder = tempfile.mkdtemp(prefix="motionctl_coverage_")
        data = os.path.join(folder, ".coverage")
        tests_s = run_tests(args.tests, data) if args.tests else 0.0
        fuzz_s = run_fuzz(counts, args.mocap, os.path.join(folder, "fuzz"), data, args.seed) if any(counts.values()) \
            else 0.0
        subprocess.run([sys.executable, "-m", "coverage", "combine", f"--data-file={data}", folder], cwd=ROOT,
                       check=True, capture_output=True)
    result = {"command": "bench/coverage_areas.py " + " ".join(argv if argv is not None else sys.argv[1:]),
              "commit": env["commit"], "coverage_version": coverage.__version__, "tests": args.tests,
              "fuzz": counts, "tests_seconds": tests_s, "fuzz_seconds": fuzz_s, "areas": figures(data),
              "environment": env}
    write_json("coverage", result, args.out)
    before = json.load(open(args.before, encoding="utf-8")) if args.before else None
    md = report(result, before)
    write_markdown("coverage", md, args.out)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
