"""What every benchmark records beside its figures: the commit, the package versions, the machine."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from importlib import metadata

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGES = ("numpy", "scipy", "scikit-learn", "joblib", "threadpoolctl", "bpy")


def environment() -> dict:
    """{"commit", "dirty", "python", "packages", "machine", "cpu", "simd", "cores"} of this run.  The
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
            "python": sys.version.split()[0], "packages": packages, "machine": platform.platform(),
            "cpu": _cpu(), "simd": _simd(), "cores": os.cpu_count()}


def _cpu() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            return next((line.split(":", 1)[1].strip() for line in fh if line.startswith("model name")), "")
    except OSError:
        return platform.processor()


def _simd() -> list:
    try:
        from numpy.core._multiarray_umath import __cpu_features__
    except ImportError:
        return []
    return sorted(k for k, v in __cpu_features__.items() if v)
