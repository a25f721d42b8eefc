"""Retarget panel operators: put motionctl clips and controller runs on the animator's own rig.

The core (``motionctl.retarget``) does the work on plain arrays; this module reads the target
armature into a ``Rig``, keeps the bone map on the scene (editable, savable as a JSON preset), and
writes the result as actions (slotted on 4.4+, legacy on 4.2) with bulk ``foreach_set``, in the
bones' own rotation modes, optionally pushed down to NLA strips.
"""

from __future__ import annotations

import json
from dataclasses import replace

import bpy
import numpy as np
from bpy_extras.io_utils import ExportHelper, ImportHelper

from ..motionctl import quat
from ..motionctl.clip import resample
from ..motionctl.engines import ENGINES, load_model
from ..motionctl.play.commands import PlaySettings, read_trace
from ..motionctl.errors import MotionctlError
from ..motionctl.jobs import check_stop
from ..motionctl.retarget import (RetargetSettings, Rig, auto_map, find_roles, load_preset, quality, retarget,
                                  save_preset, with_root_bone)
from ..motionctl.play.session import Session
from .armature import set_keys
from .compat import (assign_action, new_action, new_fcurve, require_animatable, require_editable_bones,
                     set_strip_slot)
from .background import BackgroundJobOperator
from .common import (chosen_group, clip_tags, database_path, load_clips, model_entry, model_file, report_error, settings,
                     ticked_clip_tags)
from .preview import last_run
from .props import settings_from

ROOT_BONE = "root"


def rig_from_object(ob) -> Rig:
    """The armature object's rest pose in the world (uniform object scale assumed, as FBX imports)."""
    if ob is None or ob.type != "ARMATURE":
        raise MotionctlError("choose a target armature in the Retarget panel")
    bones = ob.data.bones
    if not len(bones):
        raise MotionctlError(f"armature {ob.name!r} has no bones")
    n = len(bones)
    mw = np.array(ob.matrix_world, dtype=float)
    scales = np.linalg.norm(mw[:3, :3], axis=0)
    if np.ptp(scales) > 1e-4 * scales.max():
        raise MotionctlError(f"armature {ob.name!r} is scaled unevenly {tuple(np.round(scales, 4))}: apply its scale "
                             "(Object > Apply > Scale) first")
    scale = float(scales.mean())
    r0 = mw[:3, :3] / scale
    local = np.zeros(n * 16, dtype=np.float32)
    bones.foreach_get("matrix_local", local)
    local = local.reshape(n, 4, 4).transpose(0, 2, 1).astype(float)  # foreach_get is column-major
    heads = np.zeros(n * 3, dtype=np.float32)
    bones.foreach_get("head_local", heads)
    heads = heads.reshape(n, 3).astype(float) @ mw[:3, :3].T + mw[:3, 3]
    tails = np.zeros(n * 3, dtype=np.float32)
    bones.foreach_get("tail_local", tails)
    tails = tails.reshape(n, 3).astype(float) @ mw[:3, :3].T + mw[:3, 3]
    names = [b.name for b in bones]
    parents = [names.index(b.parent.name) if b.parent else -1 for b in bones]
    connected = np.array([b.use_connect for b in bones])
    return Rig(names, parents, heads, quat.from_matrix(r0[None] @ local[:, :3, :3]), scale, connected, ob.name,
               mw[:3, 3].copy(), quat.from_matrix(r0), tails)


def show_map(context, mapping: dict, target: Rig) -> None:
    """Fill the panel's list with the mapped bones, in the target's bone order."""
    rt = settings(context).retarget
    rt.bones.clear()
    for name in target.names:
        if name in mapping:
            p = rt.bones.add()
            p.target, p.source = name, mapping[name]


def add_root_bone(ob, name: str, tail, children: list) -> None:
    """A root bone from the armature's origin to ``tail`` (level, no roll), parent of ``children``
    (the hips' top bone: ``motionctl.retarget.with_root_bone`` made the same bone in the core's rig)."""
    prev = bpy.context.view_layer.objects.active
    prev_mode = prev.mode if prev is not None else "OBJECT"
    if prev is not None and prev_mode != "OBJECT":
        bpy.ops.object.mode_set(mode="OBJECT")
    bpy.context.view_layer.objects.active = ob
    bpy.ops.object.mode_set(mode="EDIT")
    try:
        eb = ob.data.edit_bones
        tops = [eb[c] for c in children]
        root = eb.new(name)
        root.head, root.tail, root.roll = (0.0, 0.0, 0.0), tuple(float(v) for v in tail), 0.0
        for b in tops:
            b.parent = root
            b.use_connect = False
    finally:
        bpy.ops.object.mode_set(mode="OBJECT")
        bpy.context.view_layer.objects.active = prev


def rotation_channels(q: np.ndarray, mode: str) -> tuple[str, np.ndarray]:
    """(data path, values [F, C]) of basis quaternions [F, 4] in a pose bone's or object's rotation mode."""
    if mode == "QUATERNION":
        return "rotation_quaternion", quat.make_continuous(q, axis=0)
    if mode == "AXIS_ANGLE":
        v = quat.log(q)
        a = np.linalg.norm(v, axis=1, keepdims=True)
        axis = np.where(a > 1e-9, v / np.maximum(a, 1e-9), [0.0, 1.0, 0.0])
        return "rotation_axis_angle", np.concatenate((a, axis), axis=1)
    # Blender's "YXZ" turns about Y first: R = Rz Rx Ry, from_euler's "ZXY" with the angles reversed;
    # rotation_euler keeps them by axis (x, y, z) whatever the order
    angles = quat.to_euler(q, mode[::-1])[:, ::-1]
    xyz = angles[:, [mode.index(a) for a in "XYZ"]]
    return "rotation_euler", np.unwrap(xyz, axis=0)


def bake_retargeted(ob, res, action_name: str, frame_start: int = 1, assign: bool = True):
    """One action on ``ob`` with the retargeted channels (bulk writes); returns it."""
    times = frame_start + np.arange(res.n_frames, dtype=np.float64)
    act, slot, channels = new_action(action_name)
    pb = ob.pose.bones
    for k, name in enumerate(res.bones):
        bone = pb.get(name)
        if bone is None:
            raise MotionctlError(f"armature {ob.name!r} has no bone {name!r} any more: read the rig again")
        path, values = rotation_channels(res.rotation[:, k], bone.rotation_mode)
        esc = bpy.utils.escape_identifier(name)
        for i in range(values.shape[1]):
            set_keys(new_fcurve(channels, f'pose.bones["{esc}"].{path}', i, name), times, values[:, i])
    for name, loc in res.locations.items():
        esc = bpy.utils.escape_identifier(name)
        for i in range(3):
            set_keys(new_fcurve(channels, f'pose.bones["{esc}"].location', i, name), times, loc[:, i])
    if res.object_loc is not None:
        if ob.parent is not None:
            raise MotionctlError(f"armature {ob.name!r} has a parent: Root Motion on the Armature Object needs one "
                                 "without (or choose Root Bone)")
        r0 = quat.from_matrix(np.array(ob.matrix_world.to_3x3().normalized()))
        world_loc = res.object_loc
        path, values = rotation_channels(quat.mul(res.object_rot, r0[None]), ob.rotation_mode)
        for i in range(3):
            set_keys(new_fcurve(channels, "location", i, "Object Transforms"), times, world_loc[:, i])
        for i in range(values.shape[1]):
            set_keys(new_fcurve(channels, path, i, "Object Transforms"), times, values[:, i])
    act["motionctl_fps"] = float(res.fps)
    act["motionctl_clip"] = res.name
    act["motionctl_take"] = action_name  # the take's name: the action's gets ".001" when the name is taken
    if assign:
        assign_action(ob, act, slot)
    return act


def take_name(act) -> str:
    """The name ``act`` was baked under (prefix and clip), whatever Blender named the action (it adds
    ".001" when another character's take or the clip's own action has the name)."""
    return act.get("motionctl_take", act.name)


def push_to_nla(ob, actions: list, track_name: str) -> None:
    """The actions as strips one after another on a new NLA track (what game exporters read as
    takes); the armature keeps no active action."""
    ad = ob.animation_data or ob.animation_data_create()
    ad.action = None
    track = ad.nla_tracks.new()
    track.name = track_name
    start = None
    for act in actions:
        first, last = (float(x) for x in act.frame_range)
        at = first if start is None else max(first, start)
        strip = track.strips.new(take_name(act), int(round(at)), act)
        set_strip_slot(strip, act)
        start = strip.frame_end + 1


def retarget_job(target: Rig, mapping: dict, options: RetargetSettings, fps: float, clips=None, database="",
                 clip_tags=None, model="", traces=(), play=None, progress=None, should_stop=None) -> dict:
    """Worker: the clips (given, or ``clip_tags``' clips loaded from the group's ``database``), or, with
    a ``model`` file, every trace in ``traces`` [(name, path)] played through it; each retargeted at
    the scene's ``fps``.  An empty ``mapping`` is made automatically.
    {"results": [(Retargeted, quality figures)], "mapping": the bone map used}."""
    clips = clips or [(c.name, c) for c in load_clips(database, clip_tags)]
    items, player = clips, None
    if model:
        model = load_model(model)
        player = (model, model.frame_table([c for _, c in clips]))
        items = [(name, read_trace(path)) for name, path in traces]
    source = Rig.from_clips([c for _, c in clips], name="motionctl clips")  # its rest, or its mean pose
    mapping = mapping or auto_map(source, target)
    rs, rt = find_roles(source), find_roles(target)
    out = []
    for i, (name, item) in enumerate(items):
        check_stop(should_stop)
        if progress is not None:
            progress(i / max(len(items), 1), f"{name} ({i + 1} of {len(items)})")
        if player is not None:
            item = Session(*player, play=play or PlaySettings()).play_trace(item, should_stop, name)
        clip = replace(resample(item, fps), name=name)
        res = retarget(clip, source, target, mapping, options, rs, rt)
        out.append((res, quality(res, clip, source, target)))
        check_stop(should_stop)
    return {"results": out, "mapping": mapping}


def what_to_retarget(context, what: str) -> dict:
    """The job's inputs for the panel's "Retarget" choice: plain paths and names (the job loads the
    clips, the model and the traces, off Blender's main thread)."""
    st = settings(context)
    if what == "RUN":
        return {"clips": [(st.preview.action_name or "run", last_run(context))]}
    if what == "CLIP":
        if not 0 <= st.clip_index < len(st.clips):
            raise MotionctlError("select a clip in the Library list")
        item = st.clips[st.clip_index]
        group = st.groups[item.group]
        return {"database": database_path(group), "clip_tags": {item.name: clip_tags(st, group)[item.name]}}
    group = chosen_group(context)
    if what == "GROUP":
        return {"database": database_path(group), "clip_tags": ticked_clip_tags(st, group)}
    if what == "TRACES":
        if not st.traces:
            raise MotionctlError("no traces: record some in the Preview panel (Record Trace) or add trace files")
        if model_entry(group, st.engine) is None:
            raise MotionctlError(f"train a {ENGINES[st.engine].label} model on {group.name!r} first (Controller panel)")
        paths = [bpy.path.abspath(t.path) for t in st.traces]
        return {"database": database_path(group), "clip_tags": clip_tags(st, group),
                "model": model_file(group, st.engine), "play": settings_from(PlaySettings, st.preview),
                "traces": [(bpy.path.display_name_from_filepath(p), p) for p in paths]}
    raise MotionctlError(f"unknown retarget source {what!r}")


class RetargetJob(BackgroundJobOperator):
    """The Retarget panel's job, for the operators that bake it (Retarget) or export it (Batch
    Export): ``prepare`` reads the target, its bone map and the chosen clips or traces."""

    def prepare(self, context):
        rt = settings(context).retarget
        self._target = rt.target
        require_animatable(rt.target, "Retarget")
        target = rig_from_object(rt.target)
        inputs = what_to_retarget(context, rt.source)
        self._new_root = None
        roles = find_roles(target)
        if rt.root_motion == "BONE" and "root" not in roles:
            require_editable_bones(rt.target, f"Root Motion 'Bone' adds a {ROOT_BONE!r} bone")
            target, tail = with_root_bone(target, roles, ROOT_BONE)
            kids = [target.names[b] for b in np.flatnonzero(target.parents == len(target.names) - 1)]
            self._new_root = (target.names[-1], tail, kids)
        options = RetargetSettings(root_motion=rt.root_motion, floor=rt.floor, foot_plant=rt.foot_plant)
        scene = context.scene
        self._frame_start, self._prefix, self._nla = rt.frame_start, rt.action_prefix, rt.nla
        mapping = {p.target: p.source for p in rt.bones if p.target and p.source}  # empty: automatic
        return retarget_job, {**inputs, "target": target, "mapping": mapping, "options": options,
                              "fps": scene.render.fps / scene.render.fps_base}


class MOTIONCTL_OT_retarget(RetargetJob, bpy.types.Operator):
    """Retarget onto the chosen armature and bake one action per clip or run (Esc cancels; nothing
    is written until every one is done)"""

    bl_idname = "motionctl.retarget"
    bl_label = "Retarget"
    bl_options = {"REGISTER", "UNDO"}
    job_label = "Retarget"

    def finish(self, context, result) -> None:
        ob = self._target
        rt = settings(context).retarget
        if not rt.bones and rt.target == ob:  # the automatic map, shown to edit (not if another target is chosen)
            show_map(context, result["mapping"], rig_from_object(ob))
        result = result["results"]
        if self._new_root is not None:
            add_root_bone(ob, *self._new_root)
        actions = [bake_retargeted(ob, res, f"{self._prefix}{res.name}", self._frame_start, assign=i == 0)
                   for i, (res, _) in enumerate(result)]
        if self._nla:
            push_to_nla(ob, actions, f"{self._prefix or 'motionctl'} retargeted")
        figures = [{"action": a.name, **q} for a, (_, q) in zip(actions, result)]
        settings(context).retarget.report = json.dumps(figures, default=float)
        first, last = (int(x) for x in actions[0].frame_range)
        context.scene.frame_start, context.scene.frame_end = first, last
        self.report({"INFO"}, f"retargeted {len(actions)} onto {ob.name}: " + ", ".join(a.name for a in actions[:5]) +
                    (" ..." if len(actions) > 5 else ""))


class MOTIONCTL_OT_retarget_auto_map(bpy.types.Operator):
    """Map the target's bones to the clips' joints by their names, and by shape where names fail"""

    bl_idname = "motionctl.retarget_auto_map"
    bl_label = "Auto Map"
    bl_options = {"REGISTER", "UNDO"}

    def execute(self, context):
        try:
            target = rig_from_object(settings(context).retarget.target)
            group = chosen_group(context)
            if group.armature is None:
                raise MotionctlError(f"the clip group {group.name!r} has no armature: import its clips again")
            mapping = auto_map(rig_from_object(group.armature), target)  # names and shape: its armature will do
        except Exception as exc:  # noqa: BLE001
            return report_error(self, context, exc, "Auto Map")
        show_map(context, mapping, target)
        self.report({"INFO"}, f"mapped {len(mapping)} bones of {target.name}")
        return {"FINISHED"}


class MOTIONCTL_OT_retarget_save_map(bpy.types.Operator, ExportHelper):
    """Save the bone map as a preset (JSON) to reuse with other characters of the same rig"""

    bl_idname = "motionctl.retarget_save_map"
    bl_label = "Save Bone Map"
    filename_ext = ".json"
    filter_glob: bpy.props.StringProperty(default="*.json", options={"HIDDEN"})

    def execute(self, context):
        rt = settings(context).retarget
        mapping = {p.target: p.source for p in rt.bones if p.target and p.source}
        if not mapping:
            return report_error(self, context, MotionctlError("the bone map is empty: press Auto Map first"), "Save")
        save_preset(self.filepath, mapping)
        self.report({"INFO"}, f"saved {len(mapping)} bones to {self.filepath}")
        return {"FINISHED"}


class MOTIONCTL_OT_retarget_load_map(bpy.types.Operator, ImportHelper):
    """Load a bone-map preset; bones the target does not have are reported and left out"""

    bl_idname = "motionctl.retarget_load_map"
    bl_label = "Load Bone Map"
    filename_ext = ".json"
    filter_glob: bpy.props.StringProperty(default="*.json", options={"HIDDEN"})

    def execute(self, context):
        try:
            mapping = load_preset(self.filepath)
            target = rig_from_object(settings(context).retarget.target)
        except Exception as exc:  # noqa: BLE001
            return report_error(self, context, exc, "Load Bone Map")
        missing = [t for t in mapping if t not in target.names]
        show_map(context, {t: s for t, s in mapping.items() if t in target.names}, target)
        if missing:
            self.report({"WARNING"}, f"{target.name} has no bone {', '.join(missing[:4])}"
                        f"{' ...' if len(missing) > 4 else ''}: left out")
        else:
            self.report({"INFO"}, f"loaded {len(mapping)} bones")
        return {"FINISHED"}


classes = (MOTIONCTL_OT_retarget, MOTIONCTL_OT_retarget_auto_map, MOTIONCTL_OT_retarget_save_map,
           MOTIONCTL_OT_retarget_load_map)
