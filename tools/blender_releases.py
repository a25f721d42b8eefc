"""The Blender releases the extension supports, and clean environments that stand in for each.

    python3 tools/blender_releases.py find-python 3.13        # the path of a Python 3.13, or exit 2
    python3 tools/blender_releases.py make-envs build/blenders  # one folder per release: bpy + numpy only

A clean environment holds only that release's ``bpy`` module from PyPI (Blender as a Python module,
built from the same sources as the release) and the numpy that release embeds: what a user's
Blender has before the extension's own wheels arrive.  CI installs the extension zip into each
(tests/test_clean_blender.py).  This list is the one place that names the releases; the README's
table of supported versions is checked against it.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@dataclass(frozen=True)
class Release:
    blender: str   # the bpy module's version on PyPI
    python: str    # the Python that release embeds
    numpy: str     # the numpy pinned with it (Blender 4.2-5.0: 1.26; 5.1 and newer: 2.x)
    label: str     # as animators name it

    @property
    def series(self) -> str:
        return ".".join(self.blender.split(".")[:2])


RELEASES = (
    Release("4.2.23", "3.11", "1.26.4", "4.2 LTS"),
    Release("4.5.15", "3.11", "1.26.4", "4.5 LTS"),
    Release("5.0.1", "3.11", "1.26.4", "5.0"),
    Release("5.1.2", "3.13", "2.5.5", "5.1"),
    Release("5.2.3", "3.13", "2.5.5", "5.2 LTS"),
    Release("5.3.0", "3.13", "2.5.5", "5.3"),
)
OLDEST, NEWEST = RELEASES[0], RELEASES[-1]


def find_python(version: str) -> str | None:
    """A CPython ``version`` (e.g. "3.13") on this machine: $PYTHON3_13, then ``python3.13`` on the
    PATH, then pyenv's installs (these machines have 3.13 under pyenv, not on the PATH), then the
    usual prefixes.  Each candidate is run to confirm its version."""
    name = f"python{version}"
    candidates = [os.environ.get("PYTHON" + version.replace(".", "_"), ""), shutil.which(name) or ""]
    pyenv_root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    candidates += sorted(glob.glob(os.path.join(pyenv_root, "versions", f"{version}.*", "bin", name)), reverse=True)
    candidates += [f"/usr/local/bin/{name}", f"/usr/bin/{name}", f"/opt/python/{version}/bin/{name}"]
    for path in filter(None, candidates):
        try:
            out = subprocess.run([path, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                                 capture_output=True, text=True, timeout=30).stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            continue
        if out == version:
            return path
    return None


def env_python(folder: str, release: Release) -> str:
    return os.path.join(folder, release.blender, "bin", "python")


def make_env(folder: str, release: Release, constraints: str | None) -> str:
    """A new virtual environment holding only ``bpy`` and numpy (and what bpy itself requires)."""
    python = find_python(release.python)
    if python is None:
        raise SystemExit(f"Python {release.python} (for Blender {release.label}) was not found: install it "
                         f"(pyenv install {release.python}) or set PYTHON{release.python.replace('.', '_')}")
    dest = os.path.join(folder, release.blender)
    shutil.rmtree(dest, ignore_errors=True)
    subprocess.run([python, "-m", "venv", dest], check=True)
    cmd = [env_python(folder, release), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
           f"bpy=={release.blender}", f"numpy=={release.numpy}"]
    subprocess.run(cmd + (["-c", constraints] if constraints else []), check=True)
    check = "import bpy, numpy, sys; print(bpy.app.version_string, numpy.__version__, sys.version.split()[0])"
    out = subprocess.run([env_python(folder, release), "-c", check], capture_output=True, text=True, check=True)
    return f"Blender {release.label}: bpy/numpy/Python {out.stdout.strip()}"


def plain_constraints(folder: str) -> str | None:
    """constraints.txt for an environment or wheel set of another Python than the one running this:
    without bpy and numpy, which each release and each wheel set pin themselves, and without the
    environment markers (pip would judge them by the Python running pip, not the target's).
    Written to ``folder``/constraints.txt; None when there is no constraints.txt."""
    src = os.path.join(ROOT, "constraints.txt")
    if not os.path.exists(src):
        return None
    keep = [line.split("#")[0].split(";")[0].strip() for line in open(src, encoding="utf-8")]
    keep = [r for r in keep if r and re.split(r"[=<>!~\s\[]", r)[0].lower() not in ("bpy", "numpy")]
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "constraints.txt")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(keep) + "\n")
    return path


def table(results: list) -> str:
    """Blender release x (zip installs, add-on enables, scikit-learn imports, train + drive + bake on
    capture, seconds), one row per result of tools/clean_blender_check.py, in release order."""
    order = {r.blender: i for i, r in enumerate(RELEASES)}
    rows = ["| Blender | Python | numpy | validator | zip installs | add-on enables | scikit-learn imports | "
            "train + drive + bake on capture | test | seconds |", "|---|---|---|---|---|---|---|---|---|---|"]
    yes = {True: "yes", False: "**no**"}
    for r in sorted(results, key=lambda r: order.get(r["blender"].split()[0], 99)):
        drove = all(k in r["seconds"] for k in ("train_fragments", "play_trace", "bake"))
        rows.append(f"| {r['blender']} | {r['python']} | {r['numpy']} | {yes[bool(r.get('validates'))]} | "
                    f"{yes[bool(r['installs'])]} | "
                    f"{yes[bool(r['enables'])]} | {r['scikit_learn'] or '**no**'} | {yes[drove]} | {r['level']} | "
                    f"{r['total_seconds']:.0f} |")
    return "\n".join(rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    fp = sub.add_parser("find-python", help="print the path of a Python of this version")
    fp.add_argument("version")
    me = sub.add_parser("make-envs", help="one clean environment per release (in parallel: mostly downloads)")
    me.add_argument("folder")
    me.add_argument("--releases", nargs="+", default=[r.blender for r in RELEASES])
    pc = sub.add_parser("plain-constraints", help="write constraints.txt without bpy, numpy and markers")
    pc.add_argument("folder")
    tb = sub.add_parser("table", help="the markdown table of the zip tests' results (JSON lines)")
    tb.add_argument("record")
    rq = sub.add_parser("requirements", help="pip requirements of the oldest or newest release's bpy and numpy")
    rq.add_argument("which", choices=("oldest", "newest"))
    args = ap.parse_args(argv)
    if args.command == "requirements":
        r = OLDEST if args.which == "oldest" else NEWEST
        print(f"bpy=={r.blender} numpy=={r.numpy}")
        return 0
    if args.command == "plain-constraints":
        print(plain_constraints(args.folder))
        return 0
    if args.command == "table":
        print(table([json.loads(line) for line in open(args.record, encoding="utf-8") if line.strip()]))
        return 0
    if args.command == "find-python":
        path = find_python(args.version)
        if path is None:
            print(f"Python {args.version} not found (PATH, pyenv, /usr/local, /usr); install it or set "
                  f"PYTHON{args.version.replace('.', '_')}", file=sys.stderr)
            return 2
        print(path)
        return 0
    chosen = [r for r in RELEASES if r.blender in set(args.releases)]
    constraints = plain_constraints(args.folder)
    with ThreadPoolExecutor(3) as pool:
        for line in pool.map(lambda r: make_env(args.folder, r, constraints), chosen):
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
