"""Controller and Preview panels: train a fragment controller, drive it, record, play, bake."""

from __future__ import annotations

import math

import bpy
from bpy.types import Panel, UIList

from .library import MotionPanel


def draw_job(layout, st, label: str) -> bool:
    """Progress bar and Cancel button while a job runs; True if one is running."""
    if st.job_running:
        row = layout.row(align=True)
        row.progress(factor=st.job_progress, type="BAR", text=st.job_message or label)
        row.operator("motionctl.cancel_job", text="", icon="CANCEL")
        return True
    if st.job_message:
        layout.label(text=st.job_message, icon="INFO")
    return False


class MOTIONCTL_UL_traces(UIList):
    def draw_item(self, context, layout, data, item, icon, active_data, active_propname, index):
        layout.label(text=bpy.path.basename(item.path) or "(no file)", icon="FILE")


class MOTIONCTL_PT_controller(MotionPanel, Panel):
    bl_label = "Controller"
    bl_idname = "MOTIONCTL_PT_controller"

    def draw(self, context):
        st = context.scene.motionctl
        pg = st.controller
        layout = self.layout
        if self.no_clips(layout, st):
            return
        layout.prop(pg, "engine", expand=True)
        layout.prop_search(pg, "group", st, "groups", text="Clips")
        n_use = sum(1 for c in st.clips if c.use and c.group == (pg.group or st.groups[0].name))
        layout.label(text=f"{n_use} clip(s) ticked in the Library")
        if pg.engine == "PLANNING":
            self.draw_planning(layout, st, pg)
            return
        col = layout.column(align=True)
        col.prop(pg, "fragment_length")
        col.prop(pg, "fragment_stride")
        col.prop(pg, "mirror")
        row = layout.row(align=True)
        row.prop(pg, "bins")
        if pg.bins == "KMEANS":
            row.prop(pg, "kmeans_bins")
        box = layout.box()
        box.prop(pg, "trace_source")
        if pg.trace_source == "GENERATED":
            col = box.column(align=True)
            col.prop(pg, "trace_seconds")
            col.prop(pg, "player_speed")
            col.prop(pg, "player_hold")
            col.prop(pg, "player_reversal")
            col.prop(pg, "player_turns")
            col.prop(pg, "player_jumps")
        else:
            row = box.row()
            row.template_list("MOTIONCTL_UL_traces", "", pg, "traces", pg, "trace_index", rows=3)
            sub = row.column(align=True)
            sub.operator("motionctl.trace_add", text="", icon="ADD")
            sub.operator("motionctl.trace_remove", text="", icon="REMOVE")
        box.prop(pg, "smoothing")
        layout.prop(pg, "kind")
        row = layout.row(align=True)
        row.prop(pg, "use_threshold")
        sub = row.row()
        sub.enabled = pg.use_threshold
        sub.prop(pg, "threshold")
        box = layout.box()
        box.label(text="Quality weights")
        box.prop(pg, "omega")
        box.prop(pg, "delta")
        col = box.column(align=True)
        col.prop(pg, "w_v")
        col.prop(pg, "w_t")
        col.prop(pg, "w_a")
        col.prop(pg, "discount")
        col.prop(pg, "stutter")
        layout.prop(pg, "held_out")
        if not draw_job(layout, st, "Training"):
            layout.operator("motionctl.train_controller", icon="PLAY")
        if pg.policy_path and pg.trained_engine == "FRAGMENTS":
            box = layout.box()
            box.label(text=f"{pg.result_fragments} fragments, {pg.result_improvements} improvements"
                      + (" (warm start)" if pg.result_warm else ""))
            box.label(text=f"{'converged' if pg.result_converged else 'NOT converged'} in {pg.result_seconds:.1f} s")
            if not math.isnan(pg.result_percent):
                box.label(text=f"{pg.result_percent:.1f}% of optimal on held-out traces (std {pg.result_std:.1f})")
            box.label(text=bpy.path.basename(pg.policy_path), icon="FILE")


    def draw_planning(self, layout, st, pg):
        layout.prop(pg, "task")
        col = layout.column(align=True)
        if pg.task == "NAVIGATION":
            col.prop(pg, "nav_gamma")
        elif pg.task == "REACH":
            col.prop(pg, "reach_reward")
            col.prop(pg, "reach_radius")
        else:
            col.prop(pg, "gate_half_width")
        col = layout.column(align=True)
        col.prop(pg, "mirror")
        row = col.row(align=True)
        row.prop(pg, "parametric")
        sub = row.row()
        sub.enabled = pg.parametric
        sub.prop(pg, "group_size")
        col.prop(pg, "n_trees")
        col.prop(pg, "plan_discount")
        col.prop(pg, "plan_iterations")
        col.prop(pg, "trajectories")
        if not draw_job(layout, st, "Training"):
            layout.operator("motionctl.train_controller", icon="PLAY")
        if pg.policy_path and pg.trained_engine == "PLANNING":
            box = layout.box()
            box.label(text=f"{pg.result_groups} groups, {pg.result_samples} samples, {pg.result_seconds:.1f} s")
            box.label(text=f"Bellman residual {pg.result_residual:.3g}")
            box.label(text=f"from random starts: {100 * pg.result_success:.0f}% done in 20 steps, "
                      f"reward {pg.result_reward:.2f}")
            box.label(text=bpy.path.basename(pg.policy_path), icon="FILE")


class MOTIONCTL_PT_preview(MotionPanel, Panel):
    bl_label = "Preview"
    bl_idname = "MOTIONCTL_PT_preview"

    def draw(self, context):
        st = context.scene.motionctl
        p = st.preview
        layout = self.layout
        if not st.controller.policy_path:
            layout.label(text="Train a controller first")
        col = layout.column(align=True)
        col.prop(p, "walk_speed")
        col.prop(p, "run_speed")
        col.prop(p, "turn_rate")
        col.prop(p, "jump_time")
        layout.prop(p, "warp")
        box = layout.box()
        box.label(text="Keys (arrows always move)")
        grid = box.grid_flow(columns=2, align=True)
        for k in ("key_forward", "key_back", "key_left", "key_right", "key_turn_left", "key_turn_right", "key_jump",
                  "key_run"):
            grid.prop(p, k)
        row = layout.row(align=True)
        row.operator("motionctl.drive", icon="PLAY")
        row.prop(p, "record", toggle=True, icon="REC")
        layout.prop(p, "trace_path")
        if not draw_job(layout, st, "Play Trace"):
            layout.operator("motionctl.play_trace", icon="FILE_MOVIE")
        box = layout.box()
        box.label(text=f"Bake ({p.session_frames} frames driven)")
        box.prop(p, "action_name")
        box.prop(p, "frame_start")
        box.prop(p, "root_motion")
        box.operator("motionctl.bake_run", icon="ACTION")
        layout.operator("motionctl.add_mannequin", icon="OUTLINER_OB_ARMATURE")


classes = (MOTIONCTL_UL_traces, MOTIONCTL_PT_controller, MOTIONCTL_PT_preview)
