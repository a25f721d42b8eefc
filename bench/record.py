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
    """{"commit", "dirty", "python", "packages", "machine", "cores"} of this run."""
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
            "cores": os.cpu_count()}
