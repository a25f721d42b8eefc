"""The extension zip, with its bundled wheels, in every Blender release it claims, each holding
nothing but numpy.

.ci/run builds the linux-x64 zip and one clean environment per release of
``tools/blender_releases.RELEASES`` (only that release's ``bpy`` module and its numpy), and sets
``MOTIONCTL_EXTENSION_ZIP`` and ``MOTIONCTL_CLEAN_BLENDERS`` (the folder of those environments).
Each release then gets its own validator and installer and the full check of
``tools/clean_blender_check.py`` (its smoke steps, import -> train -> play -> bake -> graph on
real capture, then every other engine, the room evaluation, retargeting onto Rigify and active
learning): at 10-16 s a release the whole check costs little more than the smoke test.  A
release whose environment is missing fails, it is never skipped.  To run it yourself:

    .venv/bin/python tools/build_extension.py --out build/ci_dist --platforms linux-x64
    python3 tools/blender_releases.py make-envs build/blenders
    MOTIONCTL_EXTENSION_ZIP=build/ci_dist/motionctl-0.1.0-linux_x64.zip MOTIONCTL_CLEAN_BLENDERS=build/blenders \\
        .venv/bin/python -m pytest tests/test_clean_blender.py
"""

import glob
import json
import os
import re
import subprocess
import sys
import zipfile

import pytest

from conftest import ROOT
from tools.blender_releases import RELEASES, env_python
from tools import build_extension
from tools.build_extension import PACKAGES

ZIP = os.environ.get("MOTIONCTL_EXTENSION_ZIP")
BLENDERS = os.environ.get("MOTIONCTL_CLEAN_BLENDERS")


@pytest.mark.skipif(not (ZIP and BLENDERS), reason="set MOTIONCTL_EXTENSION_ZIP and MOTIONCTL_CLEAN_BLENDERS "
                                                   "(.ci/run does)")
@pytest.mark.parametrize("release", RELEASES, ids=lambda r: r.blender)
def test_the_zip_works_in_each_blender_with_nothing_but_numpy(release, mocap, tmp_path):
    python = env_python(BLENDERS, release)
    assert os.path.exists(python), f"no clean environment for Blender {release.label} at {python}"
    _assert_holds_the_licence(ZIP)
    env = dict(os.environ, BLENDER_USER_RESOURCES=str(tmp_path / "user"))
    env.pop("PYTHONPATH", None)
    res = subprocess.run([python, os.path.join(ROOT, "tools", "clean_blender_check.py"), "--zip", ZIP, "--mocap",
                          mocap, "--user", str(tmp_path / "user"), "--level", "full"], capture_output=True, text=True,
                         env=env, cwd=str(tmp_path), timeout=1200)
    print(res.stdout[-4000:])
    assert res.returncode == 0 and "\nOK " in res.stdout, res.stdout[-4000:] + res.stderr[-4000:]
    result = json.loads(res.stdout.split("\nOK ", 1)[1].splitlines()[0])
    # count: version strings
    assert result["blender"].split()[0] == release.blender and result["python"].startswith(release.python + ".")
    # count: version strings and booleans
    assert result["numpy"] == release.numpy and result["validates"] and result["installs"] and result["enables"]
    assert f"scikit-learn=={result['scikit_learn']}" in PACKAGES  # from the zip's own wheels
    record = os.environ.get("MOTIONCTL_CLEAN_RECORD")  # .ci/run collects the table of the closing note
    if record:
        with open(record, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(result) + "\n")


def test_the_readme_table_lists_every_release_ci_installs():
    """README's table of supported Blender versions names exactly the releases CI tests."""
    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    section = text.split("### Supported Blender versions", 1)[1].split("\n#", 1)[0]
    rows = re.findall(r"^\| (\d\.\d+)(?: LTS)? +\| ([\d.]+) +\| (3\.\d+) +\| ([\d.]+) +\|", section, re.M)
    # count: version strings
    assert [(r[1], r[2], r[3]) for r in rows] == [(r.blender, r.python, r.numpy) for r in RELEASES], rows


def _assert_holds_the_licence(zip_path: str) -> None:
    """The zip carries LICENSE at its root, the GPL v3 text the manifest's SPDX:GPL-3.0-or-later names."""
    with zipfile.ZipFile(zip_path) as z:
        assert "LICENSE" in z.namelist(), f"{zip_path} holds no LICENSE"
        head = z.read("LICENSE")[:200].decode("utf-8")
    assert "GNU GENERAL PUBLIC LICENSE" in head and "Version 3" in head, head


@pytest.mark.blender
def test_blenders_builder_keeps_the_licence_in_the_zip(tmp_path):
    """build_extension's staging and the manifest's own paths_exclude_pattern, through Blender's builder
    (without the wheels, which need a download): LICENSE is in the zip, the guide in docs/ is not."""
    staging, out = tmp_path / "extension", tmp_path / "dist"
    build_extension.stage(str(staging))
    build_extension.write_manifest(str(staging / "blender_manifest.toml"), [], ["linux-x64"])
    out.mkdir()
    res = subprocess.run([sys.executable, build_extension.blender_ext_cli(), "build", "--source-dir", str(staging),
                          "--output-dir", str(out)], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    (zip_path,) = glob.glob(str(out / "*.zip"))
    _assert_holds_the_licence(zip_path)
    with zipfile.ZipFile(zip_path) as z:
        names = z.namelist()
    assert "README.md" in names and "blender_manifest.toml" in names
    assert not [n for n in names if n.startswith(("docs/", "tests/", "tools/"))], names
