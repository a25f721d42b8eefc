"""Retarget panel: the target armature, the bone map (automatic, editable, savable), root motion,
feet, NLA, one button that bakes the last run, a clip, every ticked clip or every trace, and the
game-engine export (the armature's takes, or a batch of every clip or trace, one file each)."""

from __future__ import annotations

import json

from bpy.types import Panel, UIList

from .controller import draw_job
from .library import MotionPanel


class MOTIONCTL_UL_bone_map(UIList):
    """Target bone <- the clips' joint, both searchable."""

    def draw_item(self, context, layout, data, item, icon, active_data, active_propname, index):
        st = context.scene.motionctl
        row = layout.row(align=True)
        target = st.retarget.target
        if target is not None:
            row.prop_search(item, "target", target.data, "bones", text="")
        else:
            row.prop(item, "target", text="")
        group = st.groups.get(st.group) or (st.groups[0] if st.groups else None)
        if group is not None and group.armature is not None:
            row.prop_search(item, "source", group.armature.data, "bones", text="", icon="BACK")
        else:
            row.prop(item, "source", text="", icon="BACK")


class MOTIONCTL_PT_retarget(MotionPanel, Panel):
    bl_label = "Retarget"
    bl_idname = "MOTIONCTL_PT_retarget"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context):
        st = context.scene.motionctl
        rt = st.retarget
        layout = self.layout
        if self.no_clips(layout, st):
            return
        layout.prop(rt, "target")
        if rt.target is None:
            layout.label(text="Choose your character's armature")
            return
        row = layout.row(align=True)
        row.operator("motionctl.retarget_auto_map", icon="AUTO")
        row.operator("motionctl.retarget_load_map", text="", icon="FILEBROWSER")
        row.operator("motionctl.retarget_save_map", text="", icon="FILE_TICK")
        if rt.bones:
            layout.template_list("MOTIONCTL_UL_bone_map", "", rt, "bones", rt, "bone_index", rows=5)
        else:
            layout.label(text="Bones are mapped automatically (Auto Map to see and edit)")
        col = layout.column(align=True)
        col.prop(rt, "root_motion")
        col.prop(rt, "floor")
        col.prop(rt, "foot_plant")
        col.prop(rt, "nla")
        row = layout.row(align=True)
        row.prop(rt, "action_prefix")
        row.prop(rt, "frame_start")
        layout.prop(rt, "source")
        if draw_job(layout, st, "Retarget"):
            return
        layout.operator("motionctl.retarget", icon="ARMATURE_DATA")
        draw_report(layout, rt.report)
        draw_export(layout, rt)


def draw_export(layout, rt) -> None:
    """Get it into your game engine: the preset, the folder, the armature's takes or a batch."""
    box = layout.box()
    box.label(text="Game Engine Export", icon="EXPORT")
    box.prop(rt, "export_preset")
    box.prop(rt, "export_folder")
    row = box.row(align=True)
    row.operator("motionctl.export_game", icon="EXPORT")
    row.operator("motionctl.export_batch", icon="FILE_FOLDER")


def draw_report(layout, report: str) -> None:
    """The last retarget's figures: scale, feet in stance, sliding against the capture's."""
    try:
        rows = json.loads(report) if report else []
    except json.JSONDecodeError:
        rows = []
    if not rows:
        return
    box = layout.box()
    box.label(text=f"{len(rows)} action{'s' if len(rows) > 1 else ''}, scale {rows[0]['scale']:.2f}", icon="INFO")
    for r in rows[:6]:
        box.label(text=f"{r['action']}: feet {100 * r['stance_offset_p95']:.1f} cm off in stance (p95), "
                  f"skating {100 * r['skating_scaled']:.0f}% (capture {100 * r['source_skating']:.0f}%)")


classes = (MOTIONCTL_UL_bone_map, MOTIONCTL_PT_retarget)
