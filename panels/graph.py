"""Motion Graph and Evaluate panels."""

from __future__ import annotations

import bpy
from bpy.types import Panel

from ..motionctl.engines import ENGINES
from ..operators.common import model_entry, model_summary
from .controller import draw_job, draw_settings, draw_summary
from .library import MotionPanel


class MOTIONCTL_PT_motion_graph(MotionPanel, Panel):
    bl_label = "Motion Graph"
    bl_idname = "MOTIONCTL_PT_motion_graph"

    def draw(self, context):
        st = context.scene.motionctl
        layout = self.layout
        if self.no_clips(layout, st):
            return
        layout.prop_search(st, "group", st, "groups", text="Clips")
        draw_settings(layout, ENGINES["graph"], st.engines.graph)
        if not draw_job(layout, st, "Building"):
            layout.operator("motionctl.train", text="Build Motion Graph", icon="NODETREE").engine = "graph"
        group = st.groups.get(st.group) or st.groups[0]
        entry = model_entry(group, "graph")
        if entry is not None:
            draw_summary(layout, model_summary(entry), entry.path)


class MOTIONCTL_PT_evaluate(MotionPanel, Panel):
    bl_label = "Evaluate"
    bl_idname = "MOTIONCTL_PT_evaluate"

    def draw(self, context):
        st = context.scene.motionctl
        ev = st.evaluate
        layout = self.layout
        if self.no_clips(layout, st):
            return
        layout.prop(ev, "engine")
        layout.prop(ev, "collection")
        col = layout.column(align=True)
        for name in ("cell", "headings", "radius", "edit_scale", "pairs", "lm_sample"):
            col.prop(ev, name)
        if not draw_job(layout, st, "Evaluating"):
            layout.operator("motionctl.evaluate", icon="VIEWZOOM")
        if ev.nodes:
            box = layout.box()
            label = ENGINES[ev.evaluated].label if ev.evaluated in ENGINES else ev.evaluated
            box.label(text=f"{label}: {ev.nodes} embedded nodes, {ev.seconds:.1f} s")
            box.label(text=f"coverage {100 * ev.coverage_xy:.1f}% XY, {100 * ev.coverage_xya:.1f}% XYθ")
            box.label(text=f"path efficiency {ev.path_mean:.2f} mean, {ev.path_median:.2f} median")
            for line in ev.details.split("\n"):
                if line:
                    box.label(text=line)
            row = layout.row(align=True)
            row.operator("motionctl.show_coverage", icon="HIDE_OFF")
            row.operator("motionctl.bake_best_path", icon="ACTION")
            if ev.map_path:
                layout.label(text=f"map: {bpy.path.basename(ev.map_path)}", icon="IMAGE_DATA")


classes = (MOTIONCTL_PT_motion_graph, MOTIONCTL_PT_evaluate)
