"""The extension zip, with its bundled wheels, in a Blender that has nothing but numpy.

.ci/run builds the linux-x64 zip and a second virtual environment holding only ``bpy``, and
points ``MOTIONCTL_EXTENSION_ZIP`` and ``MOTIONCTL_CLEAN_PYTHON`` at them; this test then installs
the zip into a fresh user folder with that Python and drives import -> train -> graph -> evaluate
-> play -> bake on real capture (``tools/clean_blender_check.py``).  To run it yourself:

    .venv/bin/python tools/build_extension.py --out build/ci_dist --platforms linux-x64
    python3.11 -m venv .venv-blender && .venv-blender/bin/pip install bpy==5.0.1
    MOTIONCTL_EXTENSION_ZIP=build/ci_dist/motionctl-0.1.0-linux_x64.zip \\
        MOTIONCTL_CLEAN_PYTHON=.venv-blender/bin/python .venv/bin/python -m pytest tests/test_clean_blender.py
"""

import os
import subprocess

import pytest

from conftest import ROOT

ZIP = os.environ.get("MOTIONCTL_EXTENSION_ZIP")
PYTHON = os.environ.get("MOTIONCTL_CLEAN_PYTHON")


@pytest.mark.skipif(not (ZIP and PYTHON), reason="set MOTIONCTL_EXTENSION_ZIP and MOTIONCTL_CLEAN_PYTHON (.ci/run does)")
def test_the_zip_works_in_a_blender_with_nothing_but_numpy(mocap, tmp_path):
    env = dict(os.environ, BLENDER_USER_RESOURCES=str(tmp_path / "user"))
    env.pop("PYTHONPATH", None)
    res = subprocess.run([PYTHON, os.path.join(ROOT, "tools", "clean_blender_check.py"), "--zip", ZIP, "--mocap",
                          mocap, "--user", str(tmp_path / "user")], capture_output=True, text=True, env=env,
                         cwd=str(tmp_path), timeout=1200)
    print(res.stdout[-4000:])
    assert res.returncode == 0 and "\nOK " in res.stdout, res.stdout[-4000:] + res.stderr[-4000:]
