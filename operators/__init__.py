"""bpy operators: thin adapters from Blender data to motionctl calls and back."""

import bpy

from . import demo, library  # noqa: F401  (demo: used by the command-line demo)

classes = (*library.classes,)

_register, _unregister = bpy.utils.register_classes_factory(classes)


def register():
    _register()
    bpy.types.TOPBAR_MT_file_import.append(library.menu_import)


def unregister():
    bpy.types.TOPBAR_MT_file_import.remove(library.menu_import)
    _unregister()
