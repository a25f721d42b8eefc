"""Library operators: import BVH/ASF-AMC files and folders, show a clip on its armature."""

from __future__ import annotations

import os

from bpy.props import BoolProperty, CollectionProperty, EnumProperty, FloatProperty, StringProperty
from bpy.types import Operator, OperatorFileListElement
from bpy_extras.io_utils import ImportHelper

from ..motionctl.errors import MotionFileError
from ..motionctl.library import ImportSettings, LibraryImport, import_library
from ..motionctl.motion import MotionDatabase
from .armature import assign_action, bake_clip, build_armature
from .common import cache_dir, safe_name, settings

_AXES = [(a, a, f"{a} axis") for a in ("X", "Y", "Z", "-X", "-Y", "-Z")]


def add_library(context, result: LibraryImport, timing: str = "SCENE") -> list:
    """Put imported groups into the scene: one armature and database per group, one action per
    clip, and the clip list the Library panel shows.  Returns the new armature objects."""
    st = settings(context)
    scene_fps = context.scene.render.fps / context.scene.render.fps_base
    armatures = []
    for group in result.groups:
        db = group.database
        base = safe_name(os.path.splitext(os.path.basename(group.files[0]))[0] if len(group.files) == 1
                         else f"{group.skeleton.names[0]}_{group.skeleton.n_joints}j")
        ob = build_armature(context, group.skeleton, base)
        path = os.path.join(cache_dir(context), f"{ob.name}_database.npz")
        db.save(path)
        g = st.groups.add()
        g.name = ob.name
        g.armature = ob
        g.database = path
        g.summary = group.describe()
        g.fps = db.fps
        first = None
        for clip in db.clips:
            act = bake_clip(ob, clip, clip.name, scene_fps=scene_fps if timing == "SCENE" else None, assign=False)
            item = st.clips.add()
            item.name = clip.name
            item.frames = clip.n_frames
            item.fps = clip.fps
            item.duration = clip.duration
            item.tags = ", ".join(sorted(clip.tags))
            item.group = g.name
            item.action = act
            item.source = clip.source
            first = first or (act, item)
        if first is not None:
            assign_action(ob, first[0])
        armatures.append(ob)
    return armatures


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


def group_database(context, group_name: str) -> MotionDatabase:
    """The cached database of a group, with the tags edited in the Library panel applied."""
    st = settings(context)
    group = st.groups.get(group_name)
    if group is None:
        raise ValueError(f"no clip group named {group_name!r}; import clips first")
    db = MotionDatabase.load(group.database)
    tags = {c.name: c.tags for c in st.clips if c.group == group_name}
    for clip in db.clips:
        if clip.name in tags:
            clip.tags = {t.strip() for t in tags[clip.name].split(",") if t.strip()}
    return db


class MOTIONCTL_OT_import_bvh(Operator, ImportHelper):
    """Import BVH or ASF/AMC motion files or whole folders; one armature per skeleton"""

    bl_idname = "motionctl.import_bvh"
    bl_label = "Import Motion (BVH, ASF/AMC)"
    bl_options = {"REGISTER", "UNDO"}

    filename_ext = ".bvh"
    filter_glob: StringProperty(default="*.bvh;*.amc", options={"HIDDEN"})
    files: CollectionProperty(type=OperatorFileListElement, options={"HIDDEN", "SKIP_SAVE"})
    directory: StringProperty(subtype="DIR_PATH", options={"HIDDEN", "SKIP_SAVE"})

    unit_mode: EnumProperty(
        name="Units",
        items=[("AUTO", "Automatic", "Guess metres per unit from the skeleton height (ASF: its own units)"),
               ("MANUAL", "Manual", "Use the scale below")],
        default="AUTO",
    )
    unit_scale: FloatProperty(name="Metres per Unit", default=1.0, min=1e-6, soft_max=10.0, precision=6,
                              description="Metres per file unit when Units is Manual (centimetres: 0.01)")
    axis_forward: EnumProperty(name="Forward", items=_AXES, default="-Z", description="The file's forward axis")
    axis_up: EnumProperty(name="Up", items=_AXES, default="Y", description="The file's up axis")
    keep_calibration: BoolProperty(name="Keep Calibration Frames", default=False,
                                   description="Keep leading T-pose calibration frames instead of trimming them")
    snap_to_floor: BoolProperty(name="Snap to Floor", default=False,
                                description="Move each clip vertically so its lowest joint touches the floor")
    timing: EnumProperty(
        name="Timing",
        items=[("SCENE", "Scene Rate", "Resample each clip to the scene frame rate, a key on every frame"),
               ("NATIVE", "Captured Frames", "One key per captured frame (plays faster or slower than captured)")],
        default="SCENE",
    )
    amc_fps: FloatProperty(name="AMC Frame Rate", default=120.0, min=1.0, description="AMC files do not store it; CMU's is 120")

    def execute(self, context):
        paths = [os.path.join(self.directory, f.name) for f in self.files if f.name]
        if not paths:
            paths = [self.directory or self.filepath]
        opts = ImportSettings(
            unit_scale=self.unit_scale if self.unit_mode == "MANUAL" else None,
            keep_calibration=self.keep_calibration,
            snap_to_floor=self.snap_to_floor,
            amc_fps=self.amc_fps,
            axis_forward=self.axis_forward,
            axis_up=self.axis_up,
        )
        try:
            result = import_library(paths, opts)
        except (MotionFileError, FileNotFoundError, ValueError) as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        if not result.groups:
            msg = result.failed[0][1] if result.failed else "no BVH or AMC files found"
            self.report({"ERROR"}, f"Nothing imported: {msg}")
            return {"CANCELLED"}
        add_library(context, result, self.timing)
        settings(context).last_import = result.summary()
        for path, msg in result.failed:
            self.report({"WARNING"}, msg)
        self.report({"INFO"}, result.summary().splitlines()[0])
        return {"FINISHED"}


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
