"""Controller and Preview panels: choose an engine, set it up (its settings are drawn from its own
``Settings``), train it, then drive, play, record and bake any trained controller."""

from __future__ import annotations

import json
import math

import bpy
from bpy.types import Panel, UIList

from ..motionctl.engines import ENGINES
from ..motionctl.settings import options
from ..operators.common import model_entry, model_summary
from ..operators.controller import picture_name
from ..operators.preview import COMPARE_IMAGE
from .library import MotionPanel

# How a model's summary reads in the panel: key -> (label, format).
SUMMARY = {
    "clips": ("clips", "{:d}"), "fragments": ("fragments", "{:d}"), "segments": ("steps", "{:d}"),
    "groups": ("groups", "{:d}"), "transitions": ("transitions", "{:d}"), "samples": ("training samples", "{:d}"),
    "improvements": ("policy improvements", "{:d}"), "converged": ("converged", "{}"), "warm": ("warm start", "{}"),
    "seconds": ("seconds to train", "{:.1f}"), "percent_of_optimal": ("% of optimal on held-out traces", "{:.1f}"),
    "residual": ("Bellman residual", "{:.3g}"), "heading_error_deg": ("° off the direction after 20 steps", "{:.1f}"),
    "success": ("done within 20 steps", "{:.0%}"), "reward_per_step": ("reward per step", "{:.2f}"),
    "seconds_kept": ("s of capture kept", "{:.1f}"), "seconds_total": ("s of capture in all", "{:.1f}"),
    "states": ("motion states", "{:d}"), "anchors": ("states storing values", "{:d}"),
    "sweeps": ("value iteration sweeps", "{:d}"), "value_bytes": ("bytes of values", "{:,d}"),
}


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


def draw_settings(layout, engine, pg, skip=()) -> None:
    """An engine's shown options, a box per group, in declaration order."""
    boxes = {}
    for o in options(engine.Settings):
        if not o.ui or o.name in skip:
            continue
        box = boxes.get(o.group)
        if box is None:
            box = boxes[o.group] = layout.box()
            if o.group:
                box.label(text=o.group)
        if o.optional:
            row = box.row(align=True)
            row.prop(pg, "use_" + o.name, text="")
            sub = row.row()
            sub.enabled = getattr(pg, "use_" + o.name)
            sub.prop(pg, o.name)
        else:
            box.prop(pg, o.name)
        if engine.name == "fragments" and o.name == "traces" and pg.traces == "files":
            draw_trace_list(box, bpy.context.scene.motionctl)


def draw_trace_list(layout, st) -> None:
    row = layout.row()
    row.template_list("MOTIONCTL_UL_traces", "", st, "traces", st, "trace_index", rows=3)
    sub = row.column(align=True)
    sub.operator("motionctl.trace_add", text="", icon="ADD")
    sub.operator("motionctl.trace_remove", text="", icon="REMOVE")


def draw_summary(layout, summary: dict, path: str = "") -> None:
    """A trained model's summary: the figures the engine reports, labelled."""
    box = layout.box()
    for key, (label, fmt) in SUMMARY.items():
        v = summary.get(key)
        if v is None or (isinstance(v, float) and math.isnan(v)):
            continue
        try:
            box.label(text=f"{label}: {fmt.format(v)}")
        except (ValueError, TypeError):
            box.label(text=f"{label}: {v}")
    if summary.get("dropped"):
        box.label(text="dropped entirely: " + ", ".join(summary["dropped"]), icon="ERROR")
    if summary.get("dead_ends"):
        box.label(text=f"{summary['dead_ends']} states cannot keep moving (the capture ends standing): "
                  + ", ".join(summary.get("dead_end_clips", ())), icon="ERROR")
    if path:
        box.label(text=bpy.path.basename(path), icon="FILE")


class MOTIONCTL_UL_traces(UIList):
    def draw_item(self, context, layout, data, item, icon, active_data, active_propname, index):
        layout.label(text=bpy.path.basename(item.path) or "(no file)", icon="FILE")


class MOTIONCTL_PT_controller(MotionPanel, Panel):
    bl_label = "Controller"
    bl_idname = "MOTIONCTL_PT_controller"

    def draw(self, context):
        st = context.scene.motionctl
        layout = self.layout
        if self.no_clips(layout, st):
            return
        layout.prop(st, "engine")
        engine = ENGINES[st.engine]
        layout.prop_search(st, "group", st, "groups", text="Clips")
        group = st.groups.get(st.group) or st.groups[0]
        layout.label(text=f"{sum(1 for c in st.clips if c.use and c.group == group.name)} clip(s) ticked in the Library")
        draw_settings(layout, engine, getattr(st.engines, engine.name))
        if not draw_job(layout, st, "Training"):
            layout.operator("motionctl.train", icon="PLAY").engine = engine.name
        entry = model_entry(group, engine.name)
        if entry is not None:
            draw_summary(layout, model_summary(entry), entry.path)
            img = bpy.data.images.get(picture_name(engine.name, group.name))
            if img is not None and img.preview is not None:
                box = layout.box()
                box.label(text=img.get("motionctl_caption", img.name))
                box.template_icon(icon_value=img.preview.icon_id, scale=8.0)


class MOTIONCTL_PT_preview(MotionPanel, Panel):
    bl_label = "Preview"
    bl_idname = "MOTIONCTL_PT_preview"

    def draw(self, context):
        st = context.scene.motionctl
        p = st.preview
        layout = self.layout
        if self.no_clips(layout, st):
            return
        group = st.groups.get(st.group) or st.groups[0]
        engine = ENGINES[st.engine]
        if model_entry(group, engine.name) is None:
            layout.label(text=f"Train a {engine.label} model first")
        else:
            layout.label(text=f"Plays the {engine.label} model", icon="ARMATURE_DATA")
        layout.prop(p, "steer")
        col = layout.column(align=True)
        col.prop(p, "walk_speed")
        col.prop(p, "run_speed")
        col.prop(p, "turn_rate")
        col.prop(p, "jump_time")
        col.prop(p, "push_speed")
        layout.prop(p, "mouse_steer")
        layout.prop(p, "warp")
        box = layout.box()
        box.label(text="Keys (arrows always move)")
        grid = box.grid_flow(columns=2, align=True)
        for k in ("key_forward", "key_back", "key_left", "key_right", "key_turn_left", "key_turn_right", "key_jump",
                  "key_run", "key_push"):
            grid.prop(p, k)
        row = layout.row(align=True)
        row.operator("motionctl.drive", icon="PLAY")
        row.prop(p, "record", toggle=True, icon="REC")
        layout.prop(p, "trace_path")
        if not draw_job(layout, st, "Play Trace"):
            layout.operator("motionctl.play_trace", icon="FILE_MOVIE")
        box = layout.box()
        box.label(text=f"Bake ({p.session_frames} frames {p.run_source or 'driven'})")
        box.prop(p, "action_name")
        box.prop(p, "frame_start")
        box.prop(p, "root_motion")
        box.operator("motionctl.bake_run", icon="ACTION")
        draw_compare(layout, st)
        layout.operator("motionctl.add_mannequin", icon="OUTLINER_OB_ARMATURE")


def _cell(s: dict, digits: int = 1) -> str:
    """median / p90 of a figure, or a dash when none was measured."""
    if not s or not s.get("n"):
        return "—"
    return " / ".join("never" if v is None or v == float("inf") else f"{v:.{digits}f}" for v in (s["median"], s["p90"]))


def draw_compare(layout, st) -> None:
    """The Compare box: the last run's figures (and every engine's after Compare Engines), the
    plot, the button."""
    box = layout.box()
    box.label(text="Compare", icon="SORTSIZE")
    try:
        result = json.loads(st.preview.compare) if st.preview.compare else None
    except json.JSONDecodeError:
        result = None
    if not result:
        box.label(text="Drive or play a trace to measure the run")
    else:
        source = result.get("source")
        if source:
            box.label(text=f"source capture: skating {100 * source['skating']:.0f}%, sliding {source['sliding']:.2f} m/s")
        for r in result["rows"]:
            col = box.column(align=True)
            col.label(text=f"{r['label']} ({r['seconds']:.0f} s, {r['switches']} switches)")
            col.label(text=f"  skating {100 * r['skating']:.0f}%, sliding {r['sliding']:.2f} m/s")
            col.label(text=f"  new direction {_cell(r['direction_s'])} s, new speed {_cell(r['speed_s'])} s "
                           f"(median / p90, {r['direction_s']['n']} + {r['speed_s']['n']} changes)")
            col.label(text=f"  jump at a switch {_cell(r['jump_deg_s'], 0)} °/s, {_cell(r['jump_m_s'], 2)} m/s")
        if all(r["direction_s"]["n"] == 0 for r in result["rows"]):
            box.label(text="No direction changes to time: steer with World keys or the mouse", icon="INFO")
        img = bpy.data.images.get(COMPARE_IMAGE)
        if img is not None and img.preview is not None:
            box.label(text=img.get("motionctl_caption", img.name))
            box.template_icon(icon_value=img.preview.icon_id, scale=8.0)
    if not draw_job(layout, st, "Compare"):
        box.operator("motionctl.compare", icon="SORTSIZE")


classes = (MOTIONCTL_UL_traces, MOTIONCTL_PT_controller, MOTIONCTL_PT_preview)
