"""Library panel: import motion, list clips with their tags."""

from __future__ import annotations

import bpy
from bpy.types import Panel, UIList


class MotionPanel:
    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = "Motion"

    @staticmethod
    def no_clips(layout, st) -> bool:
        """For panels that work on imported clips: say so and return True when there are none."""
        if not st.groups:
            layout.label(text="Import clips in the Library panel first")
        return not st.groups


class MOTIONCTL_UL_clips(UIList):
    """Clip name, frames, fps, duration and editable tags."""

    def draw_item(self, context, layout, data, item, icon, active_data, active_propname, index):
        row = layout.row(align=True)
        row.label(text=item.name, icon="ACTION")
        sub = row.row(align=True)
        sub.alignment = "RIGHT"
        sub.label(text=f"{item.frames} f  {item.fps:g} fps  {item.duration:.1f} s")
        row.prop(item, "tags", text="", emboss=True)

    def filter_items(self, context, data, propname):
        items = getattr(data, propname)
        flt = [self.bitflag_filter_item] * len(items)
        if self.filter_name:
            key = self.filter_name.lower()
            flt = [self.bitflag_filter_item if key in (it.name + " " + it.tags).lower() else 0 for it in items]
        return flt, []


class MOTIONCTL_PT_library(MotionPanel, Panel):
    bl_label = "Library"
    bl_idname = "MOTIONCTL_PT_library"

    def draw(self, context):
        st = context.scene.motionctl
        layout = self.layout
        layout.operator("motionctl.import_bvh", icon="IMPORT")
        if not st.clips:
            layout.label(text="Import BVH or ASF/AMC files or a folder")
            return
        for g in st.groups:
            box = layout.box()
            box.label(text=g.name, icon="ARMATURE_DATA")
            box.label(text=g.summary)
        if st.last_import:
            box = layout.box()
            box.label(text="Last import", icon="INFO")
            for line in st.last_import.splitlines()[:12]:
                box.label(text=line.strip())
        layout.template_list("MOTIONCTL_UL_clips", "", st, "clips", st, "clip_index", rows=6)
        if 0 <= st.clip_index < len(st.clips):
            item = st.clips[st.clip_index]
            col = layout.column(align=True)
            col.prop(item, "tags")
            col.label(text=f"Group: {item.group}")
            col.label(text=f"Source: {bpy.path.basename(item.source)}")


classes = (MOTIONCTL_UL_clips, MOTIONCTL_PT_library)
