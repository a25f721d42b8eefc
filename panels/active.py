"""Active Learning panel: teach a blended controller one requested example at a time (paper 003)."""

from __future__ import annotations

import bpy
from bpy.types import Panel, UIList

from ..operators.common import model_entry
from ..operators.controller import picture_name
from ..operators.state import STATE
from .controller import draw_job
from .library import MotionPanel


class MOTIONCTL_UL_active_candidates(UIList):
    """A request: the metric that found it, its task input, its score, and a mark when a
    pseudoexample is offered."""

    def draw_item(self, context, layout, data, item, icon, active_data, active_propname, index):
        row = layout.row(align=True)
        row.label(text=f"{index + 1}. {item.metric}", icon="BLENDER" if item.has_pseudo else "QUESTION")
        row.label(text=item.text)
        sub = row.row()
        sub.alignment = "RIGHT"
        sub.label(text=f"{item.score:.2f}")


class MOTIONCTL_UL_active_examples(UIList):
    def draw_item(self, context, layout, data, item, icon, active_data, active_propname, index):
        row = layout.row(align=True)
        row.label(text=item.name, icon="BLENDER" if item.pseudo else "ACTION")
        row.label(text=f"cluster {item.cluster}")
        row.label(text=item.text)


class MOTIONCTL_PT_active(MotionPanel, Panel):
    bl_label = "Active Learning"
    bl_idname = "MOTIONCTL_PT_active"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context):
        st = context.scene.motionctl
        a = st.active
        layout = self.layout
        if self.no_clips(layout, st):
            return
        s = st.engines.active
        layout.prop_search(st, "group", st, "groups", text="Clips")
        group = st.groups.get(st.group) or st.groups[0]
        col = layout.column(align=True)
        col.prop(s, "task")
        col.prop_search(s, "seed_clip", st, "clips")
        col.prop(s, "mirror")
        col.prop(s, "pseudoexamples")
        running = draw_job(layout, st, "Active Learning")
        teaching = STATE.active is not None and STATE.active_group == group.name
        row = layout.row(align=True)
        row.enabled = not running
        row.operator("motionctl.active_start", text="Start Over" if teaching else "Start", icon="PLAY")
        if model_entry(group, "active") is not None:
            row.operator("motionctl.active_start", text="Continue Saved", icon="FILE_REFRESH").resume = True
        if not teaching:
            layout.label(text="Start from the seed clip; the controller then asks for what it does worst")
            return
        box = layout.box()
        box.label(text=f"{a.examples} examples, {a.pseudoexamples} pseudoexamples, {a.clusters} cluster(s), "
                  f"{a.steps} steps")
        box.label(text=f"Coverage {100 * a.coverage:.1f}% ({100 * a.coverage_normalised:.0f}% of what the library's "
                  f"examples do: {100 * a.pool_coverage:.1f}%)")
        if a.last_step:
            box.label(text=a.last_step, icon="INFO")
        row = layout.row(align=True)
        row.enabled = not running
        row.operator("motionctl.active_suggest", icon="VIEWZOOM")
        row.operator("motionctl.active_auto", icon="AUTO")
        row.prop(a, "auto_steps")
        if a.candidates:
            layout.label(text=f"Requests ({a.task}: " + ("stride m, speed m/s, turn rad" if a.task == "walk"
                                                          else "forward m, left m") + "; worst first)")
            layout.template_list("MOTIONCTL_UL_active_candidates", "", a, "candidates", a, "candidate_index", rows=5)
            if 0 <= a.candidate_index < len(a.candidates):
                item = a.candidates[a.candidate_index]
                box = layout.box()
                box.enabled = not running
                box.label(text="The ghost at the 3D cursor starts it; the arrow marks where it should end")
                row = box.row(align=True)
                row.prop_search(a, "answer_clip", st, "clips")
                row.prop(a, "mirrored", text="", icon="MOD_MIRROR")
                row.operator("motionctl.import_bvh", text="", icon="IMPORT")
                row = box.row(align=True)
                row.operator("motionctl.active_answer", icon="CHECKMARK")
                row.operator("motionctl.active_reject", icon="X")
                if item.has_pseudo:
                    box.label(text="Pseudoexample: " + item.pseudo, icon="BLENDER")
                    row = box.row(align=True)
                    row.operator("motionctl.active_preview_pseudo", text="Preview", icon="PLAY")
                    row.operator("motionctl.active_accept_pseudo", text="Accept", icon="CHECKMARK")
        layout.label(text="Examples")
        layout.template_list("MOTIONCTL_UL_active_examples", "", a, "examples_list", a, "example_index", rows=4)
        img = bpy.data.images.get(picture_name("active", group.name))
        if img is not None and img.preview is not None:
            box = layout.box()
            box.label(text=img.get("motionctl_caption", img.name))
            box.template_icon(icon_value=img.preview.icon_id, scale=8.0)


classes = (MOTIONCTL_UL_active_candidates, MOTIONCTL_UL_active_examples, MOTIONCTL_PT_active)
