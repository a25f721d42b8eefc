"""Build the Blender extension zips, one per platform, with Blender's own builder.

    .venv/bin/python tools/build_extension.py --out dist                        # every platform
    .venv/bin/python tools/build_extension.py --out dist --platforms linux-x64  # one

Steps: copy the extension's files into a staging folder; for each platform and each Python that a
supported Blender embeds (``PYTHONS``: 3.11 in Blender 4.2-5.0, 3.13 from 5.1) let pip resolve the
whole dependency closure of our requirements (scikit-learn, scipy and whatever they import:
joblib, threadpoolctl, narwhals, cloudpickle...) as wheels for that platform and Python, against
the numpy that Blender ships with it, and drop numpy itself (never bundled: Blender has it); write
the manifest's ``wheels`` (cp311 and cp313 side by side: Blender installs the ones that match its
own Python) and ``platforms``; validate; then ``blender_ext.py build --split-platforms``, which
keeps in each zip only the wheels for its platform.  The builder and validator come from the
``bpy`` wheel.
"""

from __future__ import annotations

import argparse
import glob
import importlib.util
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from tools.blender_releases import RELEASES, plain_constraints  # noqa: E402

INCLUDE = ["__init__.py", "blender_manifest.toml", "LICENSE", "README.md", "motionctl", "operators", "panels"]
# What the engine imports; pip adds their own dependencies.  One version for every Blender: each
# declares a numpy range that holds both numpy 1.26 and 2.x (scipy 1.17.1: numpy>=1.26.4,<2.7;
# scikit-learn 1.9.1: numpy>=1.24.1), and has wheels for cp311 and cp313.
PACKAGES = ["scikit-learn==1.9.1", "scipy==1.17.1"]
# Each Python a supported Blender embeds -> the oldest numpy shipped with it, which the wheels must
# accept (3.11: Blender 4.2 LTS - 5.0 with numpy 1.26; 3.13: Blender 5.1 and newer with numpy 2.x).
PYTHONS = {py: min((r.numpy for r in RELEASES if r.python == py), key=lambda v: tuple(map(int, v.split("."))))
           for py in sorted({r.python for r in RELEASES})}
PROVIDED_BY_BLENDER = ("numpy",)
PLATFORMS = {
    "linux-x64": ["manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64"],
    "windows-x64": ["win_amd64"],
    "macos-arm64": ["macosx_14_0_arm64", "macosx_12_0_arm64", "macosx_11_0_arm64"],
    "macos-x64": ["macosx_14_0_x86_64", "macosx_10_14_x86_64", "macosx_10_13_x86_64", "macosx_10_9_x86_64"],
}


def blender_ext_cli() -> str:
    """Path of Blender's extension command line (shipped inside the bpy wheel)."""
    spec = importlib.util.find_spec("bpy")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("Blender's extension builder needs Blender's Python module, bpy (5.0.1 on Python 3.11, "
                         "5.3.0 on Python 3.13; none for other Pythons): python3 tools/setup.py 3.11 (or 3.13) makes .venv with it")
    base = list(spec.submodule_search_locations)[0]
    found = glob.glob(os.path.join(base, "*", "scripts", "addons_core", "bl_pkg", "cli", "blender_ext.py"))
    if not found:
        found = glob.glob(os.path.join(os.path.dirname(base), "bpy", "*", "scripts", "addons_core", "bl_pkg", "cli",
                                       "blender_ext.py"))
    if not found:
        raise SystemExit(f"blender_ext.py not found under {base}")
    return found[0]


def stage(dest: str) -> None:
    if os.path.exists(dest):
        shutil.rmtree(dest)
    os.makedirs(dest)
    for name in INCLUDE:
        src = os.path.join(ROOT, name)
        if os.path.isdir(src):
            shutil.copytree(src, os.path.join(dest, name), ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        elif os.path.exists(src):
            shutil.copy2(src, os.path.join(dest, name))


def download_wheels(dest: str, platforms, pythons=tuple(PYTHONS)) -> list:
    """Every wheel the engine needs on each platform and Python (pip resolves the closure), minus numpy."""
    os.makedirs(dest, exist_ok=True)
    constraints = plain_constraints(os.path.join(ROOT, "build", "wheel_pins"))  # outside the staged extension
    for plat in platforms:
        for version in pythons:
            abi, numpy = "cp" + version.replace(".", ""), "numpy==" + PYTHONS[version]
            cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--only-binary=:all:",
                   "--python-version", version, "--implementation", "cp", "--abi", abi, "--abi", "abi3",
                   "--abi", "none", "-d", dest]
            for tag in PLATFORMS[plat]:
                cmd += ["--platform", tag]
            cmd += ["--platform", "any"]
            print(f"resolving and downloading wheels for {plat}, Python {version}", flush=True)
            subprocess.run(cmd + (["-c", constraints] if constraints else []) + PACKAGES + [numpy], check=True)
    for name in PROVIDED_BY_BLENDER:
        for whl in glob.glob(os.path.join(dest, f"{name}-*.whl")):
            os.remove(whl)
    return sorted(os.path.basename(p) for p in glob.glob(os.path.join(dest, "*.whl")))


def write_manifest(path: str, wheels, platforms) -> None:
    text = open(path, encoding="utf-8").read()
    text = re.sub(r"(?m)^(platforms|wheels)\s*=.*\n", "", text)
    extra = f"platforms = [{', '.join(repr(p).replace(chr(39), chr(34)) for p in platforms)}]\n"
    if wheels:
        extra += "wheels = [\n" + "".join(f'  "./wheels/{w}",\n' for w in wheels) + "]\n"
    text = text.replace('license = ["SPDX:GPL-3.0-or-later"]\n', 'license = ["SPDX:GPL-3.0-or-later"]\n' + extra)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "dist"))
    ap.add_argument("--platforms", nargs="+", default=list(PLATFORMS), choices=list(PLATFORMS))
    args = ap.parse_args(argv)
    cli = blender_ext_cli()
    staging = os.path.join(ROOT, "build", "extension")
    stage(staging)
    wheels = download_wheels(os.path.join(staging, "wheels"), args.platforms)
    write_manifest(os.path.join(staging, "blender_manifest.toml"), wheels, args.platforms)
    subprocess.run([sys.executable, cli, "validate", staging], check=True)
    os.makedirs(args.out, exist_ok=True)
    build = [sys.executable, cli, "build", "--source-dir", staging, "--output-dir", os.path.abspath(args.out)]
    build.append("--split-platforms")
    subprocess.run(build, check=True)
    for z in sorted(glob.glob(os.path.join(args.out, "*.zip"))):
        subprocess.run([sys.executable, cli, "validate", z], check=True, stdout=subprocess.DEVNULL)
        print(f"{os.path.basename(z)}: {os.path.getsize(z) / 2**20:.1f} MB, validated")
    return 0


if __name__ == "__main__":
    sys.exit(main())
