"""Active Learning panel: teach a blended controller one requested example at a time (paper 003).

The engine's own Blender part (loaded by ``panels/__init__`` because an engine of this name is
registered): its panel, lists and the property groups it keeps on the scene."""

import bpy
from bpy.props import BoolProperty, CollectionProperty, FloatProperty, IntProperty, PointerProperty, StringProperty
from bpy.types import Panel, PropertyGroup, UIList

from ...motionctl.engines.active import ENGINE, TASKS
from ...operators.common import model_entry
from ...operators.controller import picture_name
from ...operators.engines.active import on_candidate_index, teaching_session
from ..controller import draw_job
from ..library import MotionPanel


class MOTIONCTL_PG_active_candidate(PropertyGroup):
    """A request of the Active Learning panel: the metric that found it, u, score, the coverage its
    answer is expected to add, its pseudoexample."""

    metric: StringProperty(name="Metric")
    text: StringProperty(name="Task Input")
    score: FloatProperty(name="Score")
    gain: FloatProperty(name="Expected Gain", subtype="PERCENTAGE")
    has_pseudo: BoolProperty()
    pseudo: StringProperty(name="Pseudoexample")


class MOTIONCTL_PG_active_example(PropertyGroup):
    """An example (or a cluster's pseudoexamples) of the controller being taught."""

    cluster: IntProperty(name="Cluster")
    text: StringProperty(name="Does")
    pseudo: BoolProperty()


class MOTIONCTL_PG_active(PropertyGroup):
    """The Active Learning panel: the requests, the answer, the controller's examples and coverage."""

    candidates: CollectionProperty(type=MOTIONCTL_PG_active_candidate)
    candidate_index: IntProperty(name="Request", update=on_candidate_index,
                                 description="The request shown by the ghost armature at the 3D cursor")
    examples_list: CollectionProperty(type=MOTIONCTL_PG_active_example)
    example_index: IntProperty()
    answer_clip: StringProperty(name="Answer With", description="The clip of the group that does what the request "
                                "asks (its example nearest the requested start is used)")
    mirrored: BoolProperty(name="Mirrored", default=False, description="Answer with the clip's mirror image")
    auto_steps: IntProperty(name="Steps", default=1, min=1, max=100, description="Oracle steps per Auto")
    task: StringProperty()
    examples: IntProperty()
    pseudoexamples: IntProperty()
    clusters: IntProperty()
    steps: IntProperty()
    coverage: FloatProperty(subtype="FACTOR")
    coverage_normalised: FloatProperty(subtype="FACTOR")
    pool_coverage: FloatProperty(subtype="FACTOR")
    last_step: StringProperty()


def scene_properties() -> dict:
    """What the Active Learning panel keeps on the scene (``scene.motionctl.active``)."""
    return {"active": PointerProperty(type=MOTIONCTL_PG_active)}


property_groups = (MOTIONCTL_PG_active_candidate, MOTIONCTL_PG_active_example, MOTIONCTL_PG_active)


class MOTIONCTL_UL_active_candidates(UIList):
    """A request: the metric that found it, its task input, the coverage its answer is expected to
    add and its score, and a mark when a pseudoexample is offered."""

    def draw_item(self, context, layout, data, item, icon, active_data, active_propname, index):
        row = layout.row(align=True)
        row.label(text=f"{index + 1}. {item.metric}", icon="BLENDER" if item.has_pseudo else "QUESTION")
        row.label(text=item.text)
        sub = row.row()
        sub.alignment = "RIGHT"
        # a take from the clips, asked once nothing is expected of the rest: no gain or score to show
        sub.label(text="a take" if item.metric == "distance:library" else f"+{item.gain:.2f}%  {item.score:.2f}")


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
        s = getattr(st.engines, ENGINE.name)
        layout.prop_search(st, "group", st, "groups", text="Clips")
        group = st.groups.get(st.group) or st.groups[0]
        col = layout.column(align=True)
        col.prop(s, "task")
        col.prop_search(s, "seed_clip", st, "clips")
        col.prop(s, "mirror")
        col.prop(s, "pseudoexamples")
        running = draw_job(layout, st, "Active Learning")
        teaching = teaching_session(group.name) is not None
        row = layout.row(align=True)
        row.enabled = not running
        row.operator("motionctl.active_start", text="Start Over" if teaching else "Start", icon="PLAY")
        if model_entry(group, ENGINE.name) is not None:
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
            task = TASKS.get(a.task)
            units = ", ".join(f"{n} {u}" for n, u in zip(task.names, task.units)) if task else ""
            layout.label(text=f"Requests ({a.task}: {units}; worst first)")
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
        img = bpy.data.images.get(picture_name(ENGINE.name, group.name))
        if img is not None and img.preview is not None:
            box = layout.box()
            box.label(text=img.get("motionctl_caption", img.name))
            box.template_icon(icon_value=img.preview.icon_id, scale=8.0)


classes = (MOTIONCTL_UL_active_candidates, MOTIONCTL_UL_active_examples, MOTIONCTL_PT_active)
