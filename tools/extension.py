"""Load this repository's Blender extension into Blender-as-a-module (``bpy``), registered.

For the demo, the tests and the benchmarks, which run Blender headless from a checkout.  In
Blender itself the extension is installed from its zip (tools/build_extension.py) and Blender
imports it as ``bl_ext.<repository>.motionctl``.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NAME = "motionctl_extension"


def load_extension():
    """The extension package, imported from the repository root and registered (once)."""
    if NAME in sys.modules:
        return sys.modules[NAME]
    try:
        importlib.import_module("bpy")
    except ImportError:
        raise SystemExit("this needs Blender's Python module, bpy (5.0.1 on Python 3.11, "
                         "5.3.0 on Python 3.13; none for other Pythons): python3 tools/setup.py 3.11 (or 3.13) makes .venv with it") from None
    spec = importlib.util.spec_from_file_location(NAME, os.path.join(ROOT, "__init__.py"),
                                                  submodule_search_locations=[ROOT])
    module = importlib.util.module_from_spec(spec)
    sys.modules[NAME] = module
    spec.loader.exec_module(module)
    module.register()
    return module
