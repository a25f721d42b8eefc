"""The README's set-up line (``tools/setup.py VERSION``): it finds the Python asked for where a pyenv
shim of that name is on the PATH, and on a Python with no bpy it stops before doing anything."""

import os
import subprocess
import sys

from conftest import ROOT

SETUP = os.path.join(ROOT, "tools", "setup.py")
sys.path.insert(0, os.path.join(ROOT, "tools"))


def test_a_python_with_no_bpy_is_refused_in_one_line_before_anything_is_made(tmp_path):
    venv = tmp_path / "venv"
    for version in ("3.12", "3.14"):
        out = subprocess.run([sys.executable, SETUP, version, "--venv", str(venv)], capture_output=True, text=True,
                             timeout=60)
        assert out.returncode == 2, out.stderr
        lines = out.stderr.strip().splitlines()
        assert len(lines) == 1 and f"Python {version} has no bpy" in lines[0]
        assert "tools/setup.py 3.13" in lines[0] and "3.11" in lines[0]
        assert not venv.exists() and out.stdout == ""
    assert "engine alone" in subprocess.run([sys.executable, SETUP, "3.12"], capture_output=True, text=True).stderr


def test_a_pyenv_shim_that_does_not_run_is_passed_over(tmp_path, monkeypatch):
    from blender_releases import find_python

    shim = tmp_path / "python3.13"
    shim.write_text("#!/bin/sh\necho 'pyenv: python3.13: command not found' >&2\nexit 127\n")
    shim.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.delenv("PYTHON3_13", raising=False)
    found = find_python("3.13")
    assert found != str(shim)
    if found is not None:  # this machine has a real 3.13 elsewhere (pyenv's versions, /usr/bin...)
        out = subprocess.run([found, "-c", "import sys; print(sys.version_info[:2])"], capture_output=True, text=True)
        assert out.stdout.strip() == "(3, 13)"
