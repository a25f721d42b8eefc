"""Library operators: import BVH/ASF-AMC files and folders in the background, show a clip.

Reading, detecting units and axes, trimming and grouping run in a worker thread (the core's
``import_library``).  Building the armatures and baking one action per clip happens on the main
thread a few clips per tick, with progress; cancelling at any point removes everything the import
had built, so a cancelled or failed import leaves nothing half-built.
"""

from __future__ import annotations

import os

import bpy
from bpy.props import CollectionProperty, EnumProperty, StringProperty
from bpy.types import Operator, OperatorFileListElement
from bpy_extras.io_utils import ImportHelper

from ..motionctl.errors import MotionctlError
from ..motionctl.io.library import ImportSettings, LibraryImport, import_library
from ..motionctl.settings import options
from .armature import bake_clip, build_armature
from .compat import assign_action
from .background import BackgroundJobOperator
from .cache import cache_path, safe_name, stored
from .common import settings
from .props import setting_properties, settings_from

def add_library(context, result: LibraryImport, timing: str = "SCENE", built: dict | None = None):
    """Put imported groups into the scene, a clip at a time (a generator yielding (fraction,
    message)): one armature and database cache per group, one action per clip, and the clip list
    the Library panel shows.  ``built`` records what was made, for ``remove_built``."""
    st = settings(context)
    built = {} if built is None else built
    built.setdefault("objects", [])
    built.setdefault("actions", [])
    built.setdefault("groups", [])
    built.setdefault("clips", [])
    scene_fps = context.scene.render.fps / context.scene.render.fps_base
    total = sum(len(g.database.clips) for g in result.groups) or 1
    done = 0
    for group in result.groups:
        db = group.database
        base = safe_name(os.path.splitext(os.path.basename(group.files[0]))[0] if len(group.files) == 1
                         else f"{group.skeleton.names[0]}_{group.skeleton.n_joints}j")
        ob = build_armature(context, group.skeleton, base)
        built["objects"].append(ob.name)
        path = db.save(cache_path(context, "database", ob.name))
        built.setdefault("files", []).append(path)
        g = st.groups.add()
        g.name = ob.name
        g.armature = ob
        g.database = stored(path)
        g.summary = group.describe()
        g.fps = db.fps
        built["groups"].append(g.name)
        first = None
        for clip in db.clips:
            act = bake_clip(ob, clip, clip.name, scene_fps=scene_fps if timing == "SCENE" else None, assign=False)
            built["actions"].append(act.name)
            item = st.clips.add()
            item.name = clip.name
            item.frames = clip.n_frames
            item.fps = clip.fps
            item.duration = clip.duration
            item.tags = ", ".join(sorted(clip.tags))
            item.group = g.name
            item.action = act
            item.source = clip.source
            built["clips"].append(len(st.clips) - 1)
            first = first or act
            done += 1
            yield done / total, f"baked {clip.name} ({done}/{total})"
        if first is not None:
            assign_action(ob, first)


def remove_built(context, built: dict) -> None:
    """Undo a half-finished ``add_library``: its clips, groups, actions, armatures and caches."""
    st = settings(context)
    for i in sorted(built.get("clips", []), reverse=True):
        if i < len(st.clips):
            st.clips.remove(i)
    for name in built.get("groups", []):
        i = st.groups.find(name)
        if i >= 0:
            st.groups.remove(i)
    for name in built.get("actions", []):
        act = bpy.data.actions.get(name)
        if act is not None:
            bpy.data.actions.remove(act)
    for name in built.get("objects", []):
        ob = bpy.data.objects.get(name)
        if ob is not None:
            arm = ob.data
            bpy.data.objects.remove(ob)
            if arm is not None and arm.users == 0:
                bpy.data.armatures.remove(arm)
    for path in built.get("files", []):
        if os.path.exists(path):
            os.remove(path)
    built.clear()


def show_clip(context, item) -> None:
    """Play a library clip: assign its action to its group's armature and fit the frame range."""
    st = settings(context)
    group = st.groups.get(item.group)
    if group is None or group.armature is None or item.action is None:
        return
    assign_action(group.armature, item.action)
    start, end = item.action.frame_range
    context.scene.frame_start = int(start)
    context.scene.frame_end = int(end)


class MOTIONCTL_OT_import_bvh(BackgroundJobOperator, Operator, ImportHelper):
    """Import BVH or ASF/AMC motion files or whole folders (in the background); one armature per skeleton"""

    bl_idname = "motionctl.import_bvh"
    bl_label = "Import Motion (BVH, ASF/AMC)"
    bl_options = {"REGISTER", "UNDO"}
    job_label = "Import"

    filename_ext = ".bvh"
    filter_glob: StringProperty(default="*.bvh;*.amc", options={"HIDDEN"})
    files: CollectionProperty(type=OperatorFileListElement, options={"HIDDEN", "SKIP_SAVE"})
    directory: StringProperty(subtype="DIR_PATH", options={"HIDDEN", "SKIP_SAVE"})

    timing: EnumProperty(
        name="Timing",
        items=[("SCENE", "Scene Rate", "Resample each clip to the scene frame rate, a key on every frame"),
               ("NATIVE", "Captured Frames", "One key per captured frame (plays faster or slower than captured)")],
        default="SCENE",
    )

    def invoke(self, context, event):
        return ImportHelper.invoke(self, context, event)  # the file browser, then execute()

    def draw(self, context):
        """The file browser's side panel: the import options (as declared), then the timing."""
        layout = self.layout
        for o in options(ImportSettings):
            if o.optional:
                row = layout.row(align=True)
                row.prop(self, "use_" + o.name, text=f"Manual {o.label}")
                sub = row.row()
                sub.active = getattr(self, "use_" + o.name)
                sub.prop(self, o.name, text="")
            else:
                layout.prop(self, o.name)
        layout.prop(self, "timing")

    def import_settings(self) -> ImportSettings:
        """The options as ``ImportSettings`` (their properties are generated from it, as the CLI's)."""
        return settings_from(ImportSettings, self)

    def prepare(self, context):
        paths = [os.path.join(self.directory, f.name) for f in self.files if f.name]
        if not paths:
            paths = [self.directory or self.filepath]
        if not any(paths):
            raise MotionctlError("choose files or a folder to import")
        opts = self.import_settings()
        self._built = {}
        return import_library, {"paths": paths, "settings": opts}

    def finish(self, context, result: LibraryImport):
        if not result.groups:
            msg = result.failed[0][1] if result.failed else "no BVH or AMC files found"
            raise MotionctlError(f"nothing imported: {msg}")
        yield from add_library(context, result, self.timing, self._built)
        settings(context).last_import = result.summary()
        for _, msg in result.failed:
            self.report({"WARNING"}, msg)
        self.report({"INFO"}, result.summary().splitlines()[0])

    def abort(self, context) -> None:
        remove_built(context, getattr(self, "_built", {}))


MOTIONCTL_OT_import_bvh.__annotations__.update(setting_properties(ImportSettings))  # the CLI's options too


class MOTIONCTL_OT_show_clip(Operator):
    """Assign the selected library clip's action to its armature"""

    bl_idname = "motionctl.show_clip"
    bl_label = "Show Clip"
    bl_options = {"REGISTER", "UNDO"}

    def execute(self, context):
        st = settings(context)
        if not (0 <= st.clip_index < len(st.clips)):
            self.report({"ERROR"}, "Select a clip in the Library list")
            return {"CANCELLED"}
        show_clip(context, st.clips[st.clip_index])
        return {"FINISHED"}


def menu_import(self, context):
    self.layout.operator(MOTIONCTL_OT_import_bvh.bl_idname, text="Motion Capture for motionctl (.bvh, .amc)")


classes = (MOTIONCTL_OT_import_bvh, MOTIONCTL_OT_show_clip)
