"""Shared fixtures: real capture, generated demo clips, and the extension loaded into bpy."""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for _path in (os.path.join(ROOT, "bench"), ROOT):  # the benchmarks' own modules import ``harness``
    if _path not in sys.path:
        sys.path.insert(0, _path)


def _mocap_dir():
    env = os.environ.get("MOTIONCTL_MOCAP_DIR")
    if env:
        return env if os.path.isdir(env) else None
    default = os.path.normpath(os.path.join(ROOT, "..", "shared", "mocap"))
    return default if os.path.isdir(default) else None


MOCAP = _mocap_dir()


@pytest.fixture(scope="session", autouse=True)
def _own_temp_folder(tmp_path_factory):
    """Everything the tests put in the temp folder (unsaved sessions' caches, Blender's and the
    subprocesses' scratch files) goes under pytest's own base folder, which pytest prunes, instead of
    piling up in the machine's /tmp run after run (a full suite leaves some 2.6 GB of caches)."""
    import tempfile

    folder = tmp_path_factory.getbasetemp() / "tmp"
    folder.mkdir(exist_ok=True)
    before = tempfile.tempdir, os.environ.get("TMPDIR")
    tempfile.tempdir = str(folder)
    os.environ["TMPDIR"] = str(folder)
    yield str(folder)
    tempfile.tempdir = before[0]
    if before[1] is None:
        os.environ.pop("TMPDIR", None)
    else:
        os.environ["TMPDIR"] = before[1]


@pytest.fixture(scope="session")
def mocap():
    """Folder of real capture ($MOTIONCTL_MOCAP_DIR, default ../shared/mocap)."""
    if MOCAP is None:
        pytest.skip("real mocap not found: set MOTIONCTL_MOCAP_DIR or provide ../shared/mocap")
    return MOCAP


def mocap_files(pattern_ext: str, sub: str = ""):
    """Real files for parametrisation (empty when the capture is absent)."""
    if MOCAP is None:
        return []
    out = []
    for dirpath, _, files in os.walk(os.path.join(MOCAP, sub)):
        out += [os.path.join(dirpath, f) for f in files if f.lower().endswith(pattern_ext)]
    return sorted(out)


@pytest.fixture(scope="session")
def demo_library(tmp_path_factory):
    """The generated demo clips written as BVH (with sidecar JSON), once per session."""
    from motionctl.io import demo_data

    folder = tmp_path_factory.mktemp("demo_bvh")
    demo_data.write_demo_library(str(folder), seed=0)
    return str(folder)


@pytest.fixture(scope="session")
def ext():
    """The extension package imported into Blender-as-a-module and registered."""
    try:
        importlib.import_module("bpy")
    except ImportError:
        pytest.skip("bpy (Blender as a Python module) is not installed")
    from tools.extension import load_extension

    return load_extension()


@pytest.fixture
def bpy_clean(ext):
    """An empty factory scene with the extension registered."""
    import bpy

    bpy.ops.wm.read_factory_settings(use_empty=True)
    return bpy


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """The slow set (``-m slow``; the README's command runs the rest): a test marked
    ``@pytest.mark.slow``, and in a module that lists ``SLOW_CASES``, each parametrised case whose
    id holds every '-'-separated part of one of them (a fixture combination, "active-capture"; prefixed
    "test_name::", in that test alone).
    First, so that ``-m`` sees the marks."""
    for item in items:
        cases = getattr(getattr(item, "module", None), "SLOW_CASES", ())
        spec = getattr(item, "callspec", None)
        if cases and spec is not None:
            parts = set(spec.id.split("-"))
            for case in cases:
                test, _, case = case.rpartition("::")  # "test_name::case": that test's case alone
                if (not test or test == item.originalname) and set(case.split("-")) <= parts:
                    item.add_marker(pytest.mark.slow)
                    break


_EXIT_STATUS = [0]


def pytest_sessionfinish(session, exitstatus):
    _EXIT_STATUS[0] = int(exitstatus)


def pytest_unconfigure(config):
    """Blender 4.2 and 4.3 as a Python module crash at interpreter exit once Rigify has been enabled
    (``import bpy; addon_utils.enable("rigify")`` alone exits with SIGSEGV; the Rigify retarget
    tests enable it): there the run ends with its own status, after pytest has reported everything,
    without the interpreter's teardown."""
    bpy = sys.modules.get("bpy")
    if bpy is not None and tuple(bpy.app.version) < (4, 4, 0):
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(_EXIT_STATUS[0])
