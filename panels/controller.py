"""Controller and Preview panels: choose an engine, set it up (its settings are drawn from its own
``Settings``), train it, then drive, play, record and bake any trained controller."""

from __future__ import annotations

import json

import bpy
from bpy.types import Panel, UIList

from ..motionctl.engines import ENGINES
from ..motionctl.engines.base import summary_lines
from ..motionctl.evaluate.looks import worst_line
from ..motionctl.settings import options
from ..operators.common import model_entry, model_summary
from ..operators.controller import picture_name
from ..operators.preview import COMPARE_IMAGE
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
        for shown in paths_shown_after(engine, pg, o.name):  # files the option asks for: the scene's traces
            box.label(text=shown.label)
            draw_trace_list(box, bpy.context.scene.motionctl)


def paths_shown_after(engine, pg, name: str) -> list:
    """The engine's file-list options ("paths", filled from the scene's trace list) to show after
    option ``name`` now: those whose ``shown_when`` names it with its current value."""
    return [o for o in options(engine.Settings) if o.kind == "paths" and o.shown_when is not None
            and o.shown_when[0] == name and getattr(pg, name) == o.shown_when[1]]


def draw_trace_list(layout, st) -> None:
    row = layout.row()
    row.template_list("MOTIONCTL_UL_traces", "", st, "traces", st, "trace_index", rows=3)
    sub = row.column(align=True)
    sub.operator("motionctl.trace_add", text="", icon="ADD")
    sub.operator("motionctl.trace_remove", text="", icon="REMOVE")


def draw_summary(layout, engine, summary: dict, path: str = "") -> None:
    """A trained model's summary: the figures its engine reports, labelled, then its warnings."""
    box = layout.box()
    for text, warning in summary_lines(engine, summary):
        box.label(text=text, icon="ERROR" if warning else "NONE")
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
            draw_summary(layout, engine, model_summary(entry), entry.path)
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
        layout.prop(p, "plant_feet")
        box = layout.box()
        box.label(text="Keys (arrows always move)")
        grid = box.grid_flow(columns=2, align=True)
        for k in ("key_forward", "key_back", "key_left", "key_right", "key_turn_left", "key_turn_right", "key_jump",
                  "key_run", "key_stop", "key_push"):
            grid.prop(p, k)
        row = layout.row(align=True)
        row.operator("motionctl.drive", icon="PLAY")
        row.prop(p, "record", toggle=True, icon="REC")
        layout.prop(p, "trace_path")
        if not draw_job(layout, st, "Play Trace"):
            layout.operator("motionctl.play_trace", icon="FILE_MOVIE")
        box = layout.box()
        fps = context.scene.render.fps / context.scene.render.fps_base
        box.label(text=f"Bake ({round(p.session_seconds * fps)} frames at {fps:g} fps, {p.run_source or 'driven'})")
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


def _response(s: dict) -> str:
    """"reached x% (median / p90 s)" of a response (``response_spread``), or a dash with no trial."""
    if not s or not s.get("n"):
        return "—"
    if not s.get("reached"):
        return f"reached 0% of {s['n']}"
    return f"reached {100 * s['reached']:.0f}% of {s['n']} ({s['median']:.1f} / {s['p90']:.1f} s)"


def _pose(p, what: str = "p95") -> str:
    """", poses N cm from capture (what)" of a pose distance, or nothing."""
    return f", poses {100 * p['p95']:.0f} cm from capture ({what})" if p and p.get("p95") is not None else ""


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
            box.label(text=f"source capture: skating {100 * source['skating']:.0f}%, sliding {source['sliding_cm']:.1f} cm"
                           + _pose(source.get("pose_distance"), "held-out"))
            for text in source.get("reach", {}).get("cannot", []):  # what no engine can play from it
                box.label(text=f"  {text}", icon="INFO")
        for r in result["rows"]:
            col = box.column(align=True)
            length = f"{r['seconds']:.1f} s" + (f" of a {r['trace_seconds']:.1f} s trace" if r.get("trace_seconds") else "")
            col.label(text=f"{r['label']} ({length}, {r['switches']} switches)")
            col.label(text=f"  skating {100 * r['skating']:.0f}%, sliding {r['sliding_cm']:.1f} cm per step"
                           + _pose(r.get("pose_distance")))
            if r.get("worst"):  # the worst second, and where to scrub to
                fps = bpy.context.scene.render.fps / bpy.context.scene.render.fps_base
                col.label(text="  " + worst_line(r["worst"], (source or {}).get("worst"), fps))
            for miss in r.get("missed", []):
                col.label(text=f"  {miss}", icon="ERROR")
            col.label(text=f"  new direction: {_response(r['direction_s'])}")
            col.label(text=f"  new speed: {_response(r['speed_s'])}; stop: {_response(r.get('stop_s'))}")
            col.label(text=f"  jump at a switch {_cell(r['jump_deg_s'], 0)} °/s, {_cell(r['jump_m_s'], 2)} m/s")
        if all(r["direction_s"]["n"] == 0 for r in result["rows"]):
            box.label(text="No direction changes to time: steer with World keys or the mouse", icon="INFO")
        img = bpy.data.images.get(COMPARE_IMAGE)
        if img is not None and img.preview is not None:
            box.label(text=img.get("motionctl_caption", img.name))
            box.template_icon(icon_value=img.preview.icon_id, scale=8.0)
    if not draw_job(layout, st, "Compare"):
        box.operator("motionctl.compare", icon="SORTSIZE")


def engine_panel(engine) -> type:
    """A sidebar panel of an engine's own (``Engine.panel``): the clip group, its settings, its train
    button (named by its first ``train`` alias: Build) and its summary."""
    verb = (engine.aliases_of("train") or ["train"])[0].title()

    def draw(self, context):
        st = context.scene.motionctl
        layout = self.layout
        if self.no_clips(layout, st):
            return
        layout.prop_search(st, "group", st, "groups", text="Clips")
        draw_settings(layout, engine, getattr(st.engines, engine.name))
        if not draw_job(layout, st, f"{verb}ing"):
            layout.operator("motionctl.train", text=f"{verb} {engine.label}", icon="PLAY").engine = engine.name
        group = st.groups.get(st.group) or st.groups[0]
        entry = model_entry(group, engine.name)
        if entry is not None:
            draw_summary(layout, engine, model_summary(entry), entry.path)

    name = f"MOTIONCTL_PT_engine_{engine.name}"
    return type(name, (MotionPanel, Panel), {"bl_label": engine.label, "bl_idname": name, "draw": draw})


def engine_panels() -> list:
    """A panel of its own for each registered engine that asks for one."""
    return [engine_panel(e) for e in ENGINES.values() if e.panel]


classes = (MOTIONCTL_UL_traces, MOTIONCTL_PT_controller, MOTIONCTL_PT_preview)
