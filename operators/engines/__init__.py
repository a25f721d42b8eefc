"""Engines' own Blender operators, one module per engine that has any, named after the engine
(``active.py``: the Active Learning panel's loop).  Loaded for the engines registered now: an
engine without a module here gets every generic operator (train, drive, play, bake, evaluate)
with no Blender code of its own."""

from __future__ import annotations

import importlib
import os

from ...motionctl.engines import ENGINES


def extras(kind: str) -> list:
    """The modules of ``<kind>/engines/<engine name>.py`` for the registered engines that have one."""
    here = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), kind, "engines")
    base = __package__.rsplit(".", 2)[0]  # the extension's package
    return [importlib.import_module(f"{base}.{kind}.engines.{name}") for name in ENGINES
            if os.path.exists(os.path.join(here, f"{name}.py"))]
