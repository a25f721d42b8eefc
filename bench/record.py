"""What every benchmark records beside its figures: the commit, the package versions, the machine."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from importlib import metadata

from packaging.markers import Marker

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGES = ("numpy", "scipy", "scikit-learn", "joblib", "threadpoolctl", "bpy", "dask", "distributed", "ufbx")
THREAD_VARIABLES = ("MOTIONCTL_JOBS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def environment() -> dict:
    """{"commit", "dirty", "python", "packages", "unpinned", "machine", "cpu", "simd", "cores", "threads"} of
    this run, as they were when the benchmark imported this module (a commit made while a long
    benchmark runs is not the code that ran)."""
    return dict(_START)


def previous(name: str):
    """The figures of ``bench/results/previous/<name>.json`` (a benchmark's results before issue 14's
    fixes, kept to be shown beside the new ones), or None when there are none."""
    path = os.path.join(ROOT, "bench", "results", "previous", name + ".json")
    if not os.path.exists(path):
        return None
    with open(path) as fh:
        return json.load(fh)


def _snapshot() -> dict:
    """What ``environment`` returns, now.  The
    CPU and numpy's SIMD extensions matter: numpy picks its vector loops by them, and floating-point
    results in the last bits (which chaotic trainings such as fitted iteration amplify) differ
    between machines."""
    def git(*args):
        try:
            return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True).stdout.strip()
        except OSError:
            return ""

    packages = {}
    for p in PACKAGES:
        try:
            packages[p] = metadata.version(p)
        except metadata.PackageNotFoundError:
            pass
    return {"commit": git("rev-parse", "HEAD"), "dirty": bool(git("status", "--porcelain", "--untracked-files=no")),
            "python": sys.version.split()[0], "packages": packages, "unpinned": unpinned(),
            "machine": platform.platform(), "cpu": _cpu(), "simd": _simd(), "cores": os.cpu_count(),
            "threads": {k: os.environ[k] for k in THREAD_VARIABLES if k in os.environ}}


def unpinned() -> dict:
    """{package: (installed, pinned)} for every package of constraints.txt that applies to this Python
    installed at another version (or missing); printed as a warning, since figures are only reproducible in the pinned environment."""
    out = {}
    try:
        with open(os.path.join(ROOT, "constraints.txt"), encoding="utf-8") as fh:
            pins = [line.split("#")[0].strip() for line in fh]
    except OSError:
        return {"constraints.txt": ("missing", "")}
    for pin in filter(None, pins):
        pin, _, marker = pin.partition(";")
        if marker and not Marker(marker).evaluate():  # a pin for the other stack (Python 3.11 or 3.13)
            continue
        name, _, version = pin.strip().partition("==")
        try:
            have = metadata.version(name)
        except metadata.PackageNotFoundError:
            have = "missing"
        if have != version:
            out[name] = (have, version)
    if out:
        print(f"warning: not the pinned benchmark environment (constraints.txt): {out}", file=sys.stderr)
    return out


def _cpu() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            return next((line.split(":", 1)[1].strip() for line in fh if line.startswith("model name")), "")
    except OSError:
        return platform.processor()


def _simd() -> list:
    try:  # numpy 2 renamed numpy.core to numpy._core (the old name warns)
        from numpy._core._multiarray_umath import __cpu_features__
    except ImportError:
        try:
            from numpy.core._multiarray_umath import __cpu_features__
        except ImportError:
            return []
    return sorted(k for k, v in __cpu_features__.items() if v)


_START = _snapshot()
