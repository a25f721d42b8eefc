"""What every benchmark shares, in one place: where the checkout and the results are, the capture's
default folder (``--mocap``), what is recorded beside the figures (``record.environment``: commit,
package versions, machine, threads) and writing a result's JSON and markdown.

A benchmark is a script run as ``.venv/bin/python bench/<name>.py``; its first import is this
module, which puts the checkout first on the import path (so a benchmark measures this checkout's
motionctl whatever is installed, and a worktree of another commit measures that commit's: the one
path edit of the benchmarks) and the tests' shared fixtures next (``tests/conventions.py``,
``tests/rigs.py``).
"""

from __future__ import annotations

import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, "bench", "results")
for _path in (os.path.join(ROOT, "tests"), ROOT):
    if _path in sys.path:
        sys.path.remove(_path)
    sys.path.insert(0, _path)

from bench.record import environment, previous  # noqa: E402


def default_mocap() -> str:
    """``$MOTIONCTL_MOCAP_DIR``, else ``../shared/mocap`` beside the checkout."""
    return os.environ.get("MOTIONCTL_MOCAP_DIR", os.path.join(ROOT, "..", "shared", "mocap"))


def add_mocap(parser) -> None:
    """The ``--mocap`` option every benchmark on capture takes."""
    parser.add_argument("--mocap", default=default_mocap(), help="folder of capture (default: $MOTIONCTL_MOCAP_DIR, "
                        "else ../shared/mocap)")


def result_path(name: str, ext: str, folder: str | None = None) -> str:
    folder = folder or RESULTS
    os.makedirs(folder, exist_ok=True)
    return os.path.join(folder, f"{name}.{ext}")


def write_json(name: str, data: dict, folder: str | None = None, **dump) -> str:
    """Write ``bench/results/<name>.json`` (or in ``folder``), stamped with the environment when
    ``data`` does not hold one already; returns its path."""
    data = data if "environment" in data else {**data, "environment": environment()}
    path = result_path(name, "json", folder)
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(data, fh, **({"indent": 1, "default": float} | dump))
    return path


def merge_json(name: str, figures: dict, **sections) -> dict:
    """Add ``figures`` and replace ``sections`` in ``bench/results/<name>.json``, keeping what other
    benches wrote there (fidelity.json gathers the figures of several); returns what was written."""
    path = result_path(name, "json")
    old = json.load(open(path, encoding="utf-8")) if os.path.exists(path) else {}
    merged = {**old, **sections, "figures": {**old.get("figures", {}), **figures}}
    write_json(name, merged)
    return merged


def write_markdown(name: str, text, folder: str | None = None) -> str:
    """Write ``bench/results/<name>.md`` (or in ``folder``) from a string or a list of lines."""
    path = result_path(name, "md", folder)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text if isinstance(text, str) else "\n".join(text) + "\n")
    return path


__all__ = ["RESULTS", "ROOT", "add_mocap", "default_mocap", "environment", "previous", "result_path", "write_json",
           "write_markdown"]
