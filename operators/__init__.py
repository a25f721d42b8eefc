"""bpy operators: thin adapters from Blender data to motionctl calls and back.

``common`` (settings, the one error report, the chosen group, its clips and models), ``state``
(what lives only in memory, per file), ``cache`` (per-file cache files and the save/load
handlers), ``background`` (long jobs in a worker thread), ``armature`` (armatures and baking),
then one module per panel: ``library``, ``controller``, ``preview``, ``evaluate``, ``active``,
``retarget`` and ``mannequin``; ``demo`` writes the demo's .blend.
"""

import bpy

from . import active, cache, controller, demo, evaluate, library, mannequin, preview, retarget  # noqa: F401  (demo: tools/demo.py)
from . import background
from .state import STATE

classes = (*library.classes, *background.classes, *controller.classes, *preview.classes, *mannequin.classes,
           *evaluate.classes, *active.classes, *retarget.classes)

_register, _unregister = bpy.utils.register_classes_factory(classes)


def register():
    _register()
    bpy.types.TOPBAR_MT_file_import.append(library.menu_import)
    cache.register()


def unregister():
    cache.unregister()  # also clears the per-file state: jobs cancelled, overlays removed
    STATE.clear()
    bpy.types.TOPBAR_MT_file_import.remove(library.menu_import)
    _unregister()
