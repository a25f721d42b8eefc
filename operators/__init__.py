"""bpy operators: thin adapters from Blender data to motionctl calls and back."""

import bpy

from . import controller, demo, graph, jobs, library, mannequin, preview  # noqa: F401  (demo: used by the CLI demo)

classes = (*library.classes, *jobs.classes, *controller.classes, *preview.classes, *mannequin.classes, *graph.classes)

_register, _unregister = bpy.utils.register_classes_factory(classes)


def register():
    _register()
    bpy.types.TOPBAR_MT_file_import.append(library.menu_import)


def unregister():
    bpy.types.TOPBAR_MT_file_import.remove(library.menu_import)
    _unregister()
