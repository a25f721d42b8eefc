"""Writing an armature's takes with Blender's own exporters (io_scene_fbx, io_scene_gltf2) for a game
engine's preset (``motionctl.retarget.export``), and reading such a file back with Blender's own
importers to check it.

The animator's armature is never changed: a copy is made with the armature object's transform (and,
for Unreal, centimetres) baked into its bones, so the file carries no object rotation or scale that
an engine would multiply root motion by; each take is a copy of its action (bone locations scaled by
the same factor) on its own NLA track, which both exporters write as one animation named after it.
The file is written beside its final name and moved there only once complete: a failed or cancelled
export leaves nothing.  Operator arguments are passed only where the running Blender's exporter has
them (4.2 to 5.3 share every one used here; ``compat.operator_kwargs`` drops any a release lacks).
"""

from __future__ import annotations

import os
import re

import bpy
import numpy as np
from mathutils import Matrix

from ..motionctl.errors import MotionctlError
from ..motionctl.retarget import find_roles
from ..motionctl.retarget.export import ExportPreset, glb_animation_names, rig_problems
from .compat import action_fcurves, assign_action, operator_kwargs, set_strip_slot

TRACK = "motionctl takes"


def takes_of(ob) -> list:
    """[(name, action, (first, last))]: the armature's unmuted NLA strips, one take each, else its
    active action (what the Retarget panel bakes), named as Batch Export names them (the strip's
    name, or the name the action was baked under: never Blender's ".001")."""
    from .retarget import take_name

    ad = ob.animation_data
    out = []
    if ad is not None:
        for track in ad.nla_tracks:
            if not track.mute:
                out += [(s.name, s.action, (int(round(s.action.frame_range[0])), int(round(s.action.frame_range[1]))))
                        for s in track.strips if not s.mute and s.action is not None]
        if not out and ad.action is not None:
            first, last = ad.action.frame_range
            out = [(take_name(ad.action), ad.action, (int(round(first)), int(round(last))))]
    if not out:
        raise MotionctlError(f"{ob.name!r} has no take to export: bake one (Retarget) or push actions to NLA")
    names = [n for n, _, _ in out]
    if len(set(names)) != len(names):
        raise MotionctlError(f"two takes of {ob.name!r} are named alike ({names}): each animation needs its own name")
    return out


def check_rig(ob, p: ExportPreset, takes) -> None:
    """Refuse, in one line, a rig or take the preset cannot carry."""
    from .retarget import rig_from_object

    rig = rig_from_object(ob)
    problems = rig_problems(p, rig.names, rig.parents, find_roles(rig))
    for name, act, _ in takes:
        if any(not fc.data_path.startswith("pose.bones") for fc in action_fcurves(act)):
            problems.append(f"take {name!r} moves the armature object: exports carry root motion on a bone "
                            "(bake with Root Motion 'Root Bone' or 'In Place')")
            break
    if problems:
        raise MotionctlError(f"{p.label} export of {ob.name!r}: " + "; ".join(problems))


def _scale_locations(act, factor: float) -> None:
    """Bone locations of ``act`` times ``factor`` (armature units changed), keys and handles, in bulk."""
    for fc in action_fcurves(act):
        if not fc.data_path.endswith(".location"):
            continue
        kp = fc.keyframe_points
        for attr in ("co", "handle_left", "handle_right"):
            v = np.empty(2 * len(kp), dtype=np.float32)
            kp.foreach_get(attr, v)
            v[1::2] *= factor
            kp.foreach_set(attr, v)
        fc.update()


def _shift_keys(act, frames: float) -> None:
    """Every key of ``act`` (and its handles) ``frames`` later, in bulk."""
    for fc in action_fcurves(act):
        kp = fc.keyframe_points
        for attr in ("co", "handle_left", "handle_right"):
            v = np.empty(2 * len(kp), dtype=np.float32)
            kp.foreach_get(attr, v)
            v[0::2] += frames
            kp.foreach_set(attr, v)
        fc.update()


def _export_copy(ob, p: ExportPreset, takes):
    """The armature's copy for the file (object transform and unit baked into the bones, identity
    object, each take's action copy on its own NLA track); returns (copy, [made data-blocks])."""
    mw = np.array(ob.matrix_world)
    scale = float(np.linalg.norm(mw[:3, :3], axis=0).mean())
    data = ob.data.copy()
    copy = ob.copy()
    copy.data = data
    copy.animation_data_clear()
    copy.parent = None
    copy.constraints.clear()
    made = [copy, data]
    bpy.context.scene.collection.objects.link(copy)
    data.transform(Matrix.Scale(p.unit_scale, 4) @ ob.matrix_world)
    copy.matrix_world = Matrix.Identity(4)
    ad = copy.animation_data_create()
    for name, act, (first, _) in takes:
        a = act.copy()
        made.append(a)
        a.use_fake_user = False
        _scale_locations(a, p.unit_scale * scale)
        track = ad.nla_tracks.new()
        track.name = name
        strip = track.strips.new(name, first, a)
        strip.name = name
        strip.extrapolation = "NOTHING"  # outside the takes the copy stands in its rest pose
        set_strip_slot(strip, a)
    return copy, made


def _rename_clashing(name: str) -> list:
    """Move other objects off ``name`` (the copy must carry it exactly); [(object, old name)]."""
    out = []
    ob = bpy.data.objects.get(name)
    if ob is not None:
        out.append((ob, ob.name))
        ob.name = name + "_motionctl_export"
    return out


def fbx_arguments(p: ExportPreset) -> dict:
    """Blender's FBX exporter arguments for preset ``p`` (the scene's unit handled by the caller)."""
    return dict(use_selection=True, object_types={"ARMATURE"}, add_leaf_bones=False, armature_nodetype="NULL",
                use_armature_deform_only=False, bake_anim=True, bake_anim_use_all_bones=True,
                bake_anim_use_nla_strips=True, bake_anim_use_all_actions=False, bake_anim_force_startend_keying=True,
                bake_anim_step=1.0, bake_anim_simplify_factor=0.0, use_custom_props=False, global_scale=1.0,
                apply_unit_scale=True,
                # Unreal: cm in the data, the scene's unit 0.01: no scale anywhere (UnitScaleFactor 1);
                # Unity: m in the data, the unit carried by UnitScaleFactor 100, no node scale
                apply_scale_options="FBX_SCALE_NONE" if p.unit_scale != 1.0 else "FBX_SCALE_ALL",
                axis_forward="-Z", axis_up="Y", primary_bone_axis="Y", secondary_bone_axis="X")


def gltf_arguments(p: ExportPreset) -> dict:
    return dict(export_format="GLB", use_selection=True, export_animations=True, export_animation_mode="NLA_TRACKS",
                export_force_sampling=True, export_frame_step=1, export_anim_slide_to_zero=True,
                export_optimize_animation_size=False, export_def_bones=False, export_leaf_bone=False,
                export_rest_position_armature=True, export_skins=True, export_yup=True, export_apply=False,
                export_bake_animation=False, export_materials="NONE", export_cameras=False, export_lights=False)


def exporter(p: ExportPreset):
    """Blender's own exporter operator for the preset's format."""
    return bpy.ops.export_scene.fbx if p.format == "FBX" else bpy.ops.export_scene.gltf


def export_armature(ob, p: ExportPreset, path: str, takes=None) -> dict:
    """Write ``ob``'s takes (default ``takes_of``) to ``path`` with preset ``p``; the file appears only
    once complete.  Returns {"path", "takes": [(name, (first, last))], "bones": [names]}."""
    import addon_utils

    takes = takes_of(ob) if takes is None else takes
    check_rig(ob, p, takes)
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder) or not os.access(folder, os.W_OK):
        raise MotionctlError(f"{folder}: cannot write there (no such folder, or not writable)")
    module = "io_scene_fbx" if p.format == "FBX" else "io_scene_gltf2"
    addon_utils.enable(module, default_set=False)
    part = os.path.join(folder, f".{os.path.basename(path)}.part{p.ext}")
    scene = bpy.context.scene
    view_layer = bpy.context.view_layer
    selected = [o for o in view_layer.objects if o.select_get()]
    active = view_layer.objects.active
    node = p.armature_node or ob.name  # the file's armature node: Unreal's importer drops one named "Armature"
    renamed = _rename_clashing(node)
    unit = (scene.unit_settings.system, scene.unit_settings.scale_length)
    frame = scene.frame_current
    made = []
    try:
        copy, made = _export_copy(ob, p, takes)
        copy.name = node
        for o in selected:
            o.select_set(False)
        copy.select_set(True)
        view_layer.objects.active = copy
        # the file's rest pose (FBX: the bones' transforms when no mesh gives a bind pose) is the
        # rig's: the frame before every take, where the copy is not posed
        scene.frame_set(min(r[0] for _, _, r in takes) - 1)
        if p.format == "FBX" and p.unit_scale != 1.0:
            scene.unit_settings.system, scene.unit_settings.scale_length = "METRIC", 1.0 / p.unit_scale
        op = exporter(p)
        kwargs = fbx_arguments(p) if p.format == "FBX" else gltf_arguments(p)
        result = op(filepath=part, **operator_kwargs(op, kwargs))
        if result != {"FINISHED"} or not os.path.exists(part):
            raise MotionctlError(f"{path}: Blender's {p.format} exporter did not write it ({result})")
        bones = [b.name for b in copy.data.bones]
        os.replace(part, path)
    finally:
        if os.path.exists(part):
            os.remove(part)
        scene.unit_settings.system, scene.unit_settings.scale_length = unit
        scene.frame_set(frame)
        for block in made:
            if isinstance(block, bpy.types.Object):
                bpy.data.objects.remove(block)
            elif isinstance(block, bpy.types.Armature):
                bpy.data.armatures.remove(block)
            else:
                bpy.data.actions.remove(block)
        for o, name in renamed:
            o.name = name
        for o in selected:
            if o.name in view_layer.objects:
                o.select_set(True)
        view_layer.objects.active = active
    return {"path": path, "takes": [(n, r) for n, _, r in takes], "bones": bones}


def import_file(path: str):
    """Read a file back with Blender's own importer: (its armature, {take name: action}); the names
    are the file's (FBX: the importer's "object|take" undone; glTF: the animation names in the file, which
the importer decorates with "_<object>" on 4.2 and ".001" where an action of that name exists).  Both
    formats' time 0 is the scene's first frame, where the importers play a take (the FBX importer's
    Animation Offset; the glTF importer keys time 0 at frame 0 and plays it from an NLA strip there)."""
    import addon_utils

    before_obs, before_acts = set(bpy.data.objects), set(bpy.data.actions)
    first = bpy.context.scene.frame_start
    if path.lower().endswith(".fbx"):
        addon_utils.enable("io_scene_fbx", default_set=False)
        result = bpy.ops.import_scene.fbx(filepath=path, anim_offset=float(first))
    else:
        addon_utils.enable("io_scene_gltf2", default_set=False)
        result = bpy.ops.import_scene.gltf(filepath=path)
    if result != {"FINISHED"}:
        raise MotionctlError(f"{path}: Blender's importer could not read it ({result})")
    arms = [o for o in set(bpy.data.objects) - before_obs if o.type == "ARMATURE"]
    if len(arms) != 1:
        raise MotionctlError(f"{path}: expected one armature, found {len(arms)}")
    _disconnect(arms[0])
    if path.lower().endswith(".fbx"):
        files = None
    else:  # the names in the file; the importer adds "_<object>" (4.2) or ".001" (a clash) to them
        files = sorted(glb_animation_names(path), key=len, reverse=True)
    acts = {}
    for a in set(bpy.data.actions) - before_acts:
        name = a.name.split("|", 1)[1] if "|" in a.name else a.name
        if files is not None:
            name = next((n for n in files if a.name == n or re.match(re.escape(n) + r"(_|\.\d{3}$)", a.name)), a.name)
        elif re.search(r"\.\d{3}$", name):  # Blender's suffix: a data-block had the name
            name = name[:-4]
        if files is not None:
            _shift_keys(a, first)
        acts[name] = a
    return arms[0], acts


def _disconnect(ob) -> None:
    """Blender's FBX importer connects a bone whose only child lies along its axis (a Y-up rig's root
    under the hips), and a connected bone's location is ignored: the file's hips translation would
    be lost in Blender only (no engine connects bones).  Read back as the engines read it."""
    if not any(b.use_connect for b in ob.data.bones):
        return
    view_layer = bpy.context.view_layer
    prev = view_layer.objects.active
    view_layer.objects.active = ob
    bpy.ops.object.mode_set(mode="EDIT")
    try:
        for eb in ob.data.edit_bones:
            eb.use_connect = False
    finally:
        bpy.ops.object.mode_set(mode="OBJECT")
        view_layer.objects.active = prev


def evaluate(ob, act, frames, root: str, feet: list) -> dict:
    """What Blender plays of ``act`` on ``ob`` (NLA muted meanwhile): per frame the ``root`` bone's
    world head and world rotation delta from rest, and the world heads of the ``feet`` bones
    [[ankle, toe] left, [ankle, toe] right] -> {"root_pos" [F, 3], "root_rot" [F, 4], "feet" [F, 2, 2, 3]}."""
    from ..motionctl import quat

    ad = ob.animation_data or ob.animation_data_create()
    saved = (ad.action, [t.mute for t in ad.nla_tracks])
    for t in ad.nla_tracks:
        t.mute = True
    slot = None
    if hasattr(ad, "action_slot") and len(getattr(act, "slots", ())):
        slot = act.slots[0]
    assign_action(ob, act, slot)
    for b in ob.pose.bones:  # channels a take does not key would keep the last take's values
        b.matrix_basis = Matrix.Identity(4)
    pb, rest = ob.pose.bones[root], np.array(ob.data.bones[root].matrix_local)
    names = [n for side in feet for n in side]
    scene = bpy.context.scene
    pos, rot, pts = [], [], []
    for f in frames:  # Blender evaluates one frame at a time
        scene.frame_set(int(f))
        mw = np.array(ob.matrix_world)
        m = mw @ np.array(pb.matrix)
        r = m[:3, :3] / np.linalg.norm(m[:3, :3], axis=0)
        r0 = (mw @ rest)[:3, :3]
        r0 = r0 / np.linalg.norm(r0, axis=0)
        pos.append(m[:3, 3])
        rot.append(quat.from_matrix(r @ r0.T))
        pts.append([mw[:3, :3] @ np.array(ob.pose.bones[n].head) + mw[:3, 3] for n in names])
    ad.action = saved[0]
    for t, m in zip(ad.nla_tracks, saved[1]):
        t.mute = m
    return {"root_pos": np.array(pos), "root_rot": np.array(rot), "feet": np.array(pts).reshape(len(frames), 2, 2, 3)}


def fbx_facts(path: str) -> dict:
    """What an engine reads first from an FBX file, parsed with io_scene_fbx's own reader:
    {"unit_scale_factor" (centimetres per file unit: 1 = cm, 100 = m), "models": {name: (kind,
    Lcl Scaling)}, "stacks": [animation stack names]}."""
    import addon_utils

    addon_utils.enable("io_scene_fbx", default_set=False)
    from io_scene_fbx import parse_fbx

    root, _ = parse_fbx.parse(path)

    def find(elem, name):
        return next((e for e in elem.elems if e.id == name.encode()), None)

    def prop(elem, name):
        p70 = find(elem, "Properties70")
        for p in (p70.elems if p70 is not None else ()):
            if p.props[0] == name.encode():
                return p.props[4:]
        return None

    unit = prop(find(root, "GlobalSettings"), "UnitScaleFactor")
    objects = find(root, "Objects")
    models, stacks = {}, []
    for e in objects.elems:
        name = e.props[1].split(b"\x00\x01")[0].decode()
        if e.id == b"Model":
            scaling = prop(e, "Lcl Scaling")
            models[name] = (e.props[2].decode(), tuple(scaling) if scaling else (1.0, 1.0, 1.0))
        elif e.id == b"AnimationStack":
            stacks.append(name)
    return {"unit_scale_factor": float(unit[0]) if unit else 1.0, "models": models, "stacks": stacks}
