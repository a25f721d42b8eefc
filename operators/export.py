"""Export panel operators (in the Retarget panel): the target armature's takes to a game engine with a
preset (``motionctl.retarget.export``; the files are written by ``gamefile``), and the batch: every
clip or trace the Retarget panel would bake, each retargeted and written as its own file, with
progress and Esc.

A batch retargets everything in a worker thread first (Esc there writes nothing at all), then bakes
and writes one take per UI tick; Esc then stops before the next take: every file written is whole
(each is written beside its name and moved into place), the cancelled take leaves none.
"""

from __future__ import annotations

import os

import bpy

from ..motionctl.errors import MotionctlError
from ..motionctl.retarget.export import extra_bones, preset
from .common import report_error, settings
from .gamefile import export_armature, takes_of
from .retarget import RetargetJob, add_root_bone, bake_retargeted


def export_folder(context) -> str:
    """The panel's export folder (absolute), made if missing; refused in one line naming it when it
    cannot be written."""
    folder = bpy.path.abspath(settings(context).retarget.export_folder or "//")
    if not folder or (folder.startswith("//") and not bpy.data.filepath):
        raise MotionctlError("save the .blend first or choose an absolute export folder")
    return writable_folder(folder)


def writable_folder(folder: str, what: str = "export folder") -> str:
    """``folder`` (absolute), made if missing; MotionctlError naming it when it cannot be written."""
    folder = os.path.abspath(folder)
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as exc:
        raise MotionctlError(f"{folder}: cannot make the {what} ({exc.strerror or exc})") from None
    if not os.access(folder, os.W_OK):
        raise MotionctlError(f"{folder}: the {what} is not writable")
    return folder


def file_name(name: str) -> str:
    """A take's name as a file name (path separators and other unsafe characters replaced)."""
    return "".join(c if c.isalnum() or c in "-_. " else "_" for c in name).strip(". ") or "take"


class MOTIONCTL_OT_export_game(bpy.types.Operator):
    """Write the target armature's takes (its NLA strips, else its action) for the chosen game engine,
    each take its own animation named after it"""

    bl_idname = "motionctl.export_game"
    bl_label = "Export"
    bl_options = {"REGISTER"}

    def execute(self, context):
        rt = settings(context).retarget
        try:
            ob = rt.target
            if ob is None or ob.type != "ARMATURE":
                raise MotionctlError("choose a target armature in the Retarget panel")
            p = preset(rt.export_preset)
            path = os.path.join(export_folder(context), file_name(ob.name) + p.ext)
            out = export_armature(ob, p, path)
        except Exception as exc:  # noqa: BLE001
            return report_error(self, context, exc, "Export")
        settings(context).job_message = f"exported {len(out['takes'])} take(s) to {path}"
        self.report({"INFO"}, f"{p.label}: {len(out['takes'])} take(s) of {ob.name} to {path}")
        extra = extra_bones(out["bones"]) if p.name == "UNREAL" else []
        if extra:  # fine for Unreal's IK Retargeter; not a drop-in animation for the UE5 mannequin
            self.report({"WARNING"}, f"{len(extra)} bone(s) the UE5 mannequin does not have ({', '.join(extra[:4])}"
                        f"{' ...' if len(extra) > 4 else ''}): retarget in Unreal, or bake onto a mannequin-named rig")
        return {"FINISHED"}


class MOTIONCTL_OT_export_batch(RetargetJob, bpy.types.Operator):
    """Retarget every clip or trace of the Retarget choice onto the target and write each as its own
    file for the chosen game engine (Esc cancels; a cancelled take writes nothing)"""

    bl_idname = "motionctl.export_batch"
    bl_label = "Batch Export"
    bl_options = {"REGISTER", "UNDO"}
    job_label = "Export"
    cancel_note = "the files written so far are whole, the take being made left none"

    def prepare(self, context):
        rt = settings(context).retarget
        self._preset = preset(rt.export_preset)
        if rt.root_motion == "OBJECT":
            raise MotionctlError("game engines read root motion from a bone: set Root Motion to 'Root Bone' "
                                 "(or 'In Place') for Batch Export")
        if rt.source == "TRACES":
            missing = [t.path for t in settings(context).traces if not os.path.isfile(bpy.path.abspath(t.path))]
            if missing:
                raise MotionctlError(f"{bpy.path.abspath(missing[0])}: no such trace file")
        self._folder = export_folder(context)
        self.written, self._made = [], []
        return super().prepare(context)

    def finish(self, context, result):
        ob, results = self._target, result["results"]
        if self._new_root is not None:
            add_root_bone(ob, *self._new_root)
        for i, (res, _) in enumerate(results):
            name = f"{self._prefix}{res.name}"
            path = os.path.join(self._folder, file_name(name) + self._preset.ext)
            yield i / len(results), f"exporting {os.path.basename(path)} ({i + 1} of {len(results)})"
            act = bake_retargeted(ob, res, name, self._frame_start, assign=False)
            self._made.append(act)
            first, last = (int(round(x)) for x in act.frame_range)
            export_armature(ob, self._preset, path, takes=[(name, act, (first, last))])  # not act.name: ".001" when a clip's action has the name
            self.written.append(path)
            if bpy.app.background:
                print(f"motionctl: exported {path} ({i + 1} of {len(results)})", flush=True)
        self.report({"INFO"}, f"{self._preset.label}: {len(self.written)} file(s) in {self._folder}")

    def abort(self, context) -> None:
        """Esc between takes: the files written stay (each whole); the take being made leaves none."""
        self.report({"WARNING"}, f"Export stopped after {len(self.written)} file(s)")


classes = (MOTIONCTL_OT_export_game, MOTIONCTL_OT_export_batch)

__all__ = ["MOTIONCTL_OT_export_batch", "MOTIONCTL_OT_export_game", "classes", "export_folder", "file_name",
           "takes_of", "writable_folder"]
