"""bpy operators: thin adapters from Blender data to motionctl calls and back.

``common`` (settings, the one error report, the chosen group, its clips and models), ``state``
(what lives only in memory, per file), ``cache`` (per-file cache files and the save/load
handlers), ``background`` (long jobs in a worker thread), ``armature`` (armatures and baking),
``compat`` (every difference between Blender releases), ``props`` (properties generated from the
core's settings), then one module per panel: ``library``, ``controller``, ``preview``,
``evaluate``, ``retarget`` (with ``export``: game engines, and ``gamefile``: their files) and ``mannequin``; ``demo`` writes the demo's .blend; ``engines/`` holds
an engine's own operators (loaded for the registered engines).
"""

import bpy

from . import background, cache, controller, demo, evaluate, export, gamefile, library, mannequin, preview, retarget  # noqa: F401  (demo: tools/demo.py; gamefile: tests)
from .engines import extras
from .state import STATE

_classes: list = []


def classes() -> list:
    """Every operator class, the registered engines' own included."""
    return [*library.classes, *background.classes, *controller.classes, *preview.classes, *mannequin.classes,
            *evaluate.classes, *(c for m in extras("operators") for c in m.classes), *retarget.classes,
            *export.classes]


def register():
    _classes[:] = classes()
    for cls in _classes:
        bpy.utils.register_class(cls)
    bpy.types.TOPBAR_MT_file_import.append(library.menu_import)
    cache.register()


def unregister():
    cache.unregister()  # also clears the per-file state: jobs cancelled, overlays removed
    STATE.clear()
    bpy.types.TOPBAR_MT_file_import.remove(library.menu_import)
    for cls in reversed(_classes):
        bpy.utils.unregister_class(cls)
    _classes.clear()
