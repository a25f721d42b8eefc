"""Blender properties generated from self-describing settings (``motionctl.settings``): the one
declaration that also gives the command line its options.  An engine's property group, the import
operator's options and any other settings dataclass go through here."""

from __future__ import annotations

from bpy.props import BoolProperty, EnumProperty, FloatProperty, FloatVectorProperty, IntProperty, \
    IntVectorProperty, StringProperty

from ..motionctl.settings import from_flat, options

UNITS = {"LENGTH": "LENGTH", "TIME": "TIME_ABSOLUTE", "VELOCITY": "VELOCITY", "ROTATION": "ROTATION"}


def _range(o, kw) -> dict:
    for key in ("min", "max", "soft_max"):
        if getattr(o, key) is not None:
            kw[key] = getattr(o, key)
    return kw


def property_for(o):
    """The bpy property of one settings option."""
    kw = {"name": o.label, "description": o.description}
    if o.kind == "bool":
        return BoolProperty(default=bool(o.default), **kw)
    if o.kind == "str":
        if o.choices:
            return EnumProperty(items=[tuple(c) for c in o.choices], default=o.default, **kw)
        return StringProperty(default=o.default, subtype=o.subtype or "NONE", **kw)
    if o.kind == "int":
        return IntProperty(default=int(o.default), **_range(o, kw))
    if o.kind == "float":
        value = o.default if o.default is not None else (o.on_value if o.on_value is not None else (o.min or 0.0))
        if o.unit in UNITS:
            kw["unit"] = UNITS[o.unit]
        if o.subtype:
            kw["subtype"] = o.subtype
        return FloatProperty(default=float(value), **_range(o, kw))
    if o.kind == "floats":
        return FloatVectorProperty(size=o.size, default=tuple(float(v) for v in o.default), **_range(o, kw))
    if o.kind == "ints":
        return IntVectorProperty(size=o.size, default=tuple(int(v) for v in o.default), **_range(o, kw))
    raise TypeError(f"no Blender property for option {o.name!r} ({o.kind})")


def setting_properties(cls) -> dict:
    """{name: bpy property} for every shown option of settings class ``cls``; an optional one also
    gets ``use_<name>`` (its toggle)."""
    ann = {}
    for o in options(cls):
        if not o.ui:
            continue
        ann[o.name] = property_for(o)
        if o.optional:
            ann["use_" + o.name] = BoolProperty(name=o.label, default=o.default is not None,
                                                description=f"Turn {o.label} on ({o.description})")
    return ann


def settings_values(cls, owner) -> dict:
    """{option name: value} of the properties ``setting_properties(cls)`` made on ``owner`` (a
    property group or an operator): what ``motionctl.settings.from_flat`` takes; an optional
    option switched off is None."""
    out = {}
    for o in options(cls):
        if not o.ui:
            continue
        v = getattr(owner, o.name)
        if o.kind in ("floats", "ints"):
            v = tuple(v)
        if o.kind == "float":  # Blender stores float32: 0.999 reads back as 0.99900001...
            v = float(f"{v:.7g}")
        elif o.kind == "floats":
            v = tuple(float(f"{x:.7g}") for x in v)
        if o.optional and not getattr(owner, "use_" + o.name):
            v = None
        out[o.name] = v
    return out


def settings_from(cls, owner):
    """A validated ``cls`` instance from the properties on ``owner`` (MotionctlError names the option)."""
    return from_flat(cls, settings_values(cls, owner))
