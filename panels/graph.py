"""Motion Graph and Evaluate panels."""

from __future__ import annotations

import bpy
from bpy.types import Panel

from .controller import draw_job
from .library import MotionPanel


class MOTIONCTL_PT_motion_graph(MotionPanel, Panel):
    bl_label = "Motion Graph"
    bl_idname = "MOTIONCTL_PT_motion_graph"

    def draw(self, context):
        st = context.scene.motionctl
        pg = st.graph
        layout = self.layout
        if self.no_clips(layout, st):
            return
        layout.prop_search(st.controller, "group", st, "groups", text="Clips")
        col = layout.column(align=True)
        col.prop(pg, "threshold")
        col.prop(pg, "branching")
        col.prop(pg, "min_clip")
        col.prop(pg, "max_clip")
        if not draw_job(layout, st, "Building"):
            layout.operator("motionctl.build_graph", icon="NODETREE")
        if pg.graph_path:
            box = layout.box()
            box.label(text=f"{pg.clips} clips, {pg.transitions} transitions ({pg.candidates} candidates)")
            box.label(text=f"{pg.seconds_kept:.1f} s of {pg.seconds_total:.1f} s kept, "
                      f"{pg.seconds_total - pg.seconds_kept:.1f} s dropped")
            if pg.dropped:
                box.label(text=f"dropped entirely: {pg.dropped}", icon="ERROR")


class MOTIONCTL_PT_evaluate(MotionPanel, Panel):
    bl_label = "Evaluate"
    bl_idname = "MOTIONCTL_PT_evaluate"

    def draw(self, context):
        st = context.scene.motionctl
        ev = st.evaluate
        layout = self.layout
        layout.prop(ev, "source")
        layout.prop(ev, "collection")
        col = layout.column(align=True)
        col.prop(ev, "cell")
        col.prop(ev, "headings")
        col.prop(ev, "radius")
        col.prop(ev, "edit_scale")
        col.prop(ev, "pairs")
        col.prop(ev, "lm_sample")
        if not draw_job(layout, st, "Evaluating"):
            layout.operator("motionctl.evaluate", icon="VIEWZOOM")
        if ev.nodes:
            box = layout.box()
            box.label(text=f"{ev.nodes} embedded nodes, {ev.seconds:.1f} s")
            box.label(text=f"coverage {100 * ev.coverage_xy:.1f}% XY, {100 * ev.coverage_xya:.1f}% XYθ")
            box.label(text=f"path efficiency {ev.path_mean:.2f} mean, {ev.path_median:.2f} median")
            for line in ev.details.split("\n"):
                if line:
                    box.label(text=line)
            row = layout.row(align=True)
            row.operator("motionctl.show_coverage", icon="HIDE_OFF")
            row.operator("motionctl.show_best_path", icon="ACTION")
            if ev.map_path:
                layout.label(text=f"map: {bpy.path.basename(ev.map_path)}", icon="IMAGE_DATA")


classes = (MOTIONCTL_PT_motion_graph, MOTIONCTL_PT_evaluate)
