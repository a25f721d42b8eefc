"""motionctl Blender extension: turn motion capture into steerable character controllers.

The engine lives in ``motionctl/`` (no bpy); ``operators/`` and ``panels/`` adapt it to Blender.
"""

from . import operators, panels  # noqa: F401


def register():
    panels.register()
    operators.register()


def unregister():
    operators.unregister()
    panels.unregister()
