"""Every difference between the Blender releases the extension supports (4.2 LTS to 5.3), in one place.

Nothing else in ``operators/`` or ``panels/`` tests ``bpy.app.version`` or probes for an API; they
call these.  What differs, as measured with each release's ``bpy`` module:

- Actions: 4.2 and 4.3 keep F-curves on ``Action.fcurves`` (legacy); 4.4 adds slots, layers and
  strips with channelbags (``strip.channelbag(slot, ensure=True)``), and ``Action.fcurves`` is gone
  in 5.0.  ``ChannelBag.fcurves.new`` takes ``group_name`` only from 5.0; 4.4 and 4.5 group a curve
  with ``channelbag.groups.new``.  ``bpy_extras.anim_utils.action_ensure_channelbag_for_slot`` is
  new in 5.0, so it is not used.
- ``StringProperty(options={"PATH_SUPPORTS_BLEND_RELATIVE"})`` registers from 4.5; 4.2-4.4 refuse
  the whole property group.
- ``Material.use_nodes`` is always on (and deprecated) from 5.0.
- Linked data and library overrides (the same in every release): see ``require_animatable`` and
  ``require_editable_bones``.
"""

from __future__ import annotations

import bpy

from ..motionctl.errors import MotionctlError

VERSION = tuple(bpy.app.version)
SLOTTED_ACTIONS = VERSION >= (4, 4, 0)
FCURVE_GROUP_NAME = VERSION >= (5, 0, 0)
# Options for file-path string properties: relative to the .blend where the release supports it.
PATH_OPTIONS = {"PATH_SUPPORTS_BLEND_RELATIVE"} if VERSION >= (4, 5, 0) else set()
SLOT_NAME = "motionctl"


def new_action(name: str, id_root: str = "OBJECT"):
    """A new empty action (kept with a fake user), its slot (None on 4.2/4.3) and the container
    whose ``fcurves`` to fill (the slot's channelbag, or the action itself)."""
    act = bpy.data.actions.new(name)
    act.use_fake_user = True  # kept in the .blend even when not assigned
    if not SLOTTED_ACTIONS:
        act.id_root = id_root
        return act, None, act
    slot = act.slots.new(id_type=id_root, name=SLOT_NAME)
    layer = act.layers[0] if len(act.layers) else act.layers.new("Layer")
    strip = layer.strips[0] if len(layer.strips) else layer.strips.new(type="KEYFRAME")
    return act, slot, strip.channelbag(slot, ensure=True)


def emptied_action(act):
    """``new_action``'s (action, slot, container) for an existing action, its F-curves removed:
    baking the same run again refills it instead of making "name.001"."""
    if not SLOTTED_ACTIONS:
        for fc in list(act.fcurves):
            act.fcurves.remove(fc)
        return act, None, act
    slot = act.slots[0] if len(act.slots) else act.slots.new(id_type="OBJECT", name=SLOT_NAME)
    layer = act.layers[0] if len(act.layers) else act.layers.new("Layer")
    strip = layer.strips[0] if len(layer.strips) else layer.strips.new(type="KEYFRAME")
    bag = strip.channelbag(slot, ensure=True)
    for fc in list(bag.fcurves):
        bag.fcurves.remove(fc)
    return act, slot, bag


def new_fcurve(channels, path: str, index: int, group: str):
    """An F-curve in ``channels`` (from ``new_action``) in the group named ``group``."""
    if FCURVE_GROUP_NAME:
        return channels.fcurves.new(path, index=index, group_name=group)
    if not SLOTTED_ACTIONS:
        return channels.fcurves.new(path, index=index, action_group=group)
    fc = channels.fcurves.new(path, index=index)
    grp = channels.groups.get(group) if hasattr(channels.groups, "get") else None
    if grp is None:
        found = [g for g in channels.groups if g.name == group]
        grp = found[0] if found else channels.groups.new(group)
    fc.group = grp
    return fc


def action_fcurves(act) -> list:
    """Every F-curve of an action: all slots' channelbags, or ``Action.fcurves`` on 4.2/4.3."""
    if not SLOTTED_ACTIONS:
        return list(act.fcurves)
    return [fc for layer in act.layers for strip in layer.strips for bag in strip.channelbags for fc in bag.fcurves]


def assign_action(ob, act, slot=None) -> None:
    """Make ``act`` the object's active action (and its slot, where actions have slots)."""
    ad = ob.animation_data or ob.animation_data_create()
    ad.action = act
    if SLOTTED_ACTIONS and act is not None:
        ad.action_slot = slot if slot is not None else (act.slots[0] if len(act.slots) else None)


def set_strip_slot(strip, act) -> None:
    """An NLA strip plays the action's first slot (slotted actions only)."""
    if SLOTTED_ACTIONS and len(act.slots) and hasattr(strip, "action_slot"):
        strip.action_slot = act.slots[0]


def enable_material_nodes(mat) -> None:
    if VERSION < (5, 0, 0):
        mat.use_nodes = True


def require_animatable(ob, what: str) -> None:
    """Refuse, in one line that says what to do, an object whose new action would not be kept.

    A linked object (from another .blend, not overridden) takes an action or a pose through Python
    but loses it when the file is saved (measured on 4.2 and 5.3), so it is refused.  A library
    override keeps its own local action, NLA tracks and pose over save and reload, system override
    or not, so it is used as it is.  ``what`` names the step (Preview, Drive, Retarget, Bake...).
    """
    if ob is not None and ob.library is not None and ob.override_library is None:
        raise MotionctlError(
            f"{ob.name!r} is linked from {bpy.path.basename(ob.library.filepath)!r} and would not keep an "
            f"action: make it a library override (Object > Library Override > Make) and run {what} again")


def require_editable_bones(ob, why: str) -> None:
    """Refuse to change the bones of an armature whose data comes from a library (linked or
    overridden: Blender cannot enter Edit Mode on it)."""
    arm = getattr(ob, "data", None)
    if arm is not None and (arm.library is not None or arm.override_library is not None):
        source = arm.library or (arm.override_library.reference.library if arm.override_library.reference else None)
        where = f" from {bpy.path.basename(source.filepath)!r}" if source is not None else ""
        raise MotionctlError(f"{why}, but the bones of {ob.name!r} come from a library{where} and cannot be "
                             f"changed here: change them in that file, or choose another option")


def operator_kwargs(op, kwargs: dict) -> dict:
    """``kwargs`` without the arguments this release's operator ``op`` does not have (the bundled
    exporters grow options between releases; every one motionctl relies on exists in 4.2 to 5.3)."""
    known = {p.identifier for p in op.get_rna_type().properties}
    return {k: v for k, v in kwargs.items() if k in known}
