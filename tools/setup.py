"""Set up motionctl's environment for the demo and the tests, in one line per Python:

    python3 tools/setup.py 3.11     # Blender 4.2-5.0's stack: numpy 1.26, bpy 5.0.1
    python3 tools/setup.py 3.13     # Blender 5.1 and newer: numpy 2.x, bpy 5.3.0

Finds that Python ($PYTHON3_13, the PATH, pyenv's installs, the usual prefixes; each candidate is
run, so a pyenv shim that would answer "command not found" is passed over), makes ``.venv`` with it
(an existing ``.venv`` of another Python is replaced, said so), installs motionctl with what its
demo and tests need at the versions ``constraints.txt`` pins, and checks that Blender's ``bpy``
module loads, naming the system libraries it links against when it does not.  On a Python that
has no ``bpy`` (3.12, 3.14) it stops before installing anything, in one line saying which to use.
Runs on any Python 3.8 or newer (the standard library only).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from blender_releases import RELEASES, find_python  # noqa: E402  (tools/ is not a package)

# The Pythons Blender embeds, each with the newest release's bpy on it (pyproject's [test] extra).
STACKS = {r.python: r for r in RELEASES}  # the last release of each Python wins: the newest
# Debian/Ubuntu packages of the system libraries bpy links against (ldd of bpy's __init__.so).
SYSTEM_LIBS = "libx11-6 libxrender1 libxfixes3 libxi6 libxkbcommon0 libxext6 libxxf86vm1 libsm6 libgl1"


def version_of(python: str) -> str | None:
    """"3.11" of a Python executable, or None where it does not run."""
    try:
        out = subprocess.run([python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                             capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def refuse(version: str) -> str:
    """The one line for a Python with no bpy."""
    have = " or ".join(sorted(STACKS))
    engine = ("the engine alone (command line, no Blender) installs here: python -m pip install -c constraints.txt -e ."
              if (3, 11) <= tuple(int(p) for p in version.split(".")) < (3, 14) else
              "motionctl supports Python 3.11 to 3.13")
    return (f"error: Python {version} has no bpy (Blender as a Python module: wheels exist for Python {have} only), "
            f"which the demo and the tests need: run python3 tools/setup.py {max(STACKS)} (or {min(STACKS)}); "
            f"{engine}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0].rstrip(":") + ".")
    ap.add_argument("version", nargs="?", help="the Python to use: 3.11 or 3.13 (default: the one running this)")
    ap.add_argument("--venv", default=os.path.join(ROOT, ".venv"), help="where to make it (default: .venv)")
    args = ap.parse_args(argv)
    version = args.version or "%d.%d" % sys.version_info[:2]
    if version not in STACKS:
        print(refuse(version), file=sys.stderr)
        return 2
    release = STACKS[version]
    python = sys.executable if version == "%d.%d" % sys.version_info[:2] else find_python(version)
    if python is None:
        print(f"error: no Python {version} found (PATH, pyenv, /usr/local/bin, /usr/bin): install it (python.org, "
              f"your package manager or 'pyenv install {version}') or set PYTHON{version.replace('.', '_')} to its path",
              file=sys.stderr)
        return 2
    venv = os.path.abspath(args.venv)
    here = os.path.join(venv, "bin", "python")
    if os.path.exists(venv):
        had = version_of(here)
        if had != version:
            print(f"{os.path.relpath(venv)} holds Python {had or 'that does not run'}: replacing it with Python {version}")
            shutil.rmtree(venv)
    print(f"Python {version}: {python}")
    pip = [here, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    steps = [] if os.path.exists(here) else [([python, "-m", "venv", venv], f"making {os.path.relpath(venv)}")]
    steps += [(pip + ["--upgrade", "pip"], "updating pip"),
              (pip + ["-c", os.path.join(ROOT, "constraints.txt"), "-e", f"{ROOT}[test]"],
               f"installing motionctl, numpy {release.numpy}, scipy, scikit-learn, pytest, dask and bpy "
               f"{release.blender} (about 1 GB: a few minutes)")]
    for cmd, what in steps:
        print(what, flush=True)
        if subprocess.run(cmd).returncode != 0:
            print(f"error: {what} failed (see above)", file=sys.stderr)
            return 1
    load = subprocess.run([here, "-c", "import bpy, numpy; print(bpy.app.version_string, numpy.__version__)"],
                          capture_output=True, text=True)
    if load.returncode != 0:
        last = (load.stderr.strip().splitlines() or ["?"])[-1]
        print(f"error: bpy is installed but does not load ({last}): it needs these system libraries "
              f"(Debian/Ubuntu): sudo apt-get install {SYSTEM_LIBS}", file=sys.stderr)
        return 1
    blender, numpy = load.stdout.split()
    rel = os.path.relpath(venv)
    print(f"ready: {rel} with Python {version}, numpy {numpy}, bpy {blender}. The demo: {rel}/bin/python "
          f"tools/demo.py --out demo_out; the tests: {rel}/bin/python -m pytest -q")
    return 0


if __name__ == "__main__":
    sys.exit(main())
