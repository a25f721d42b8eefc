"""Sidebar UI (tab "Motion"), property groups, UI lists and viewport overlays."""

import bpy
from bpy.props import PointerProperty

from . import active, controller, graph, library, properties, retarget

classes = (*properties.classes, *library.classes, *controller.classes, *graph.classes, *active.classes, *retarget.classes)

_register, _unregister = bpy.utils.register_classes_factory(classes)


def register():
    _register()
    bpy.types.Scene.motionctl = PointerProperty(type=properties.MOTIONCTL_PG_settings)


def unregister():
    del bpy.types.Scene.motionctl
    _unregister()
