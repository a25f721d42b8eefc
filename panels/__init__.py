"""Sidebar UI (tab "Motion"), property groups, UI lists and viewport overlays.

Built when the extension registers, from the engines registered then: each engine's settings
(``properties.build``), a panel of its own for an engine that asks for one
(``controller.engine_panels``), and an engine's own panels (``engines/``)."""

import bpy
from bpy.props import PointerProperty

from ..operators.engines import extras
from . import controller, evaluate, library, properties, retarget

_classes: list = []


def classes() -> list:
    """Every class to register, in order: property groups first (the scene's settings last of them)."""
    modules = extras("panels")
    return [*properties.build(modules), *library.classes, *controller.classes, *controller.engine_panels(),
            *evaluate.classes, *(c for m in modules for c in m.classes), *retarget.classes]


def register():
    _classes[:] = classes()
    for cls in _classes:
        bpy.utils.register_class(cls)
    settings = next(c for c in _classes if c.__name__ == "MOTIONCTL_PG_settings")
    bpy.types.Scene.motionctl = PointerProperty(type=settings)


def unregister():
    del bpy.types.Scene.motionctl
    for cls in reversed(_classes):
        bpy.utils.unregister_class(cls)
    _classes.clear()
