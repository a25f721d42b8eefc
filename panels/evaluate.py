"""The Evaluate panel: what a trained model (a motion graph as it is, any other engine through its
macro-steps) can do in a room of obstacles (paper 004)."""

from __future__ import annotations

import bpy
from bpy.types import Panel

from ..motionctl.engines import ENGINES
from .controller import draw_job
from .library import MotionPanel


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


classes = (MOTIONCTL_PT_evaluate,)
