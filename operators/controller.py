"""Training any engine in the background: the Controller panel's Train (and the Motion Graph
panel's Build, which trains the graph engine).

The operator only reads the panel into plain inputs (the engine's settings from its generated
property group, the ticked clips' database and tags) and, when the job is done, records the model
file and its summary on the group: each engine keeps its own model, so training one never throws
another away.  The job itself is ``fit_to_file``: plain Python, testable without Blender.
"""

from __future__ import annotations

import json

import bpy

from ..motionctl.engines import ENGINES, train_to_file
from ..motionctl.evaluate.looks import model_looks
from ..motionctl.play.commands import read_trace
from ..motionctl.errors import MotionctlError
from ..motionctl.engines.base import summary_lines
from ..motionctl.settings import from_flat, options
from .background import BackgroundJobOperator
from .cache import cache_path, resolve, stored
from .common import (chosen_group, database_path, load_clips, model_entry, report_error, settings, settings_values,
                     ticked_clip_tags)
from .state import STATE


def fit_to_file(engine: str, database: str, clip_tags: dict, settings_obj, out_path: str, cache: dict,
                progress=None, should_stop=None) -> dict:
    """Worker job: load the ticked clips, fit the engine, save the model (only once training has
    finished: a cancelled job writes nothing).  Returns {"path", "summary"}."""
    clips = load_clips(database, clip_tags)
    model, path = train_to_file(engine, clips, settings_obj, out_path, progress=progress, should_stop=should_stop,
                                cache=cache, check=model_looks)
    return {"path": path, "summary": model.summary(), "picture": model.picture()}


def show_picture(name: str, picture) -> None:
    """Keep a model's picture as a packed image named ``name`` (replaced on every training)."""
    old = bpy.data.images.get(name)
    if old is not None:
        bpy.data.images.remove(old)
    if picture is None:
        return
    rgba, caption = picture
    img = bpy.data.images.new(name, rgba.shape[1], rgba.shape[0], alpha=True)
    img.pixels.foreach_set(rgba.astype("float32").ravel())
    img.pack()
    img["motionctl_caption"] = caption
    img.preview_ensure()


def keep_model(group, engine: str, result: dict) -> None:
    """Record a trained model ({"path", "summary", "picture"}) as the group's ``engine`` model."""
    entry = model_entry(group, engine) or group.models.add()
    entry.engine = engine
    entry.path = stored(result["path"])
    entry.summary = json.dumps(result["summary"], default=str)
    show_picture(picture_name(engine, group.name), result.get("picture"))


def engine_settings(context, engine: str):
    """The engine's Settings from its panel; an option that takes files ("paths") takes the scene's
    list of trace files (the Controller panel shows it under that option)."""
    st = settings(context)
    values = settings_values(ENGINES[engine], getattr(st.engines, engine))
    for o in options(ENGINES[engine].Settings):
        if o.kind == "paths" and not o.ui:
            values[o.name] = tuple(resolve(t.path) for t in st.traces if t.path)
    return from_flat(ENGINES[engine].Settings, values)


class MOTIONCTL_OT_train(BackgroundJobOperator, bpy.types.Operator):
    """Train the chosen engine on the ticked clips, in the background (Esc cancels; the previous model stays)"""

    bl_idname = "motionctl.train"
    bl_label = "Train"
    job_label = "Train"
    engine: bpy.props.StringProperty(name="Engine", default="", options={"SKIP_SAVE"},
                                     description="Engine to train (default: the Controller panel's)")

    def prepare(self, context):
        st = settings(context)
        name = self.engine or st.engine
        if name not in ENGINES:
            raise MotionctlError(f"no engine named {name!r}; engines: {', '.join(ENGINES)}")
        group = chosen_group(context)
        s = engine_settings(context, name)
        self._engine, self._group = name, group.name
        out = cache_path(context, name, group.name)
        cache = STATE.fit_cache.setdefault(name, {})
        return fit_to_file, {"engine": name, "database": database_path(group), "clip_tags": ticked_clip_tags(st, group),
                             "settings_obj": s, "out_path": out, "cache": cache}

    def finish(self, context, result) -> None:
        st = settings(context)
        group = st.groups.get(self._group)
        if group is None:
            raise MotionctlError(f"the clip group {self._group!r} is gone; the model was not kept")
        keep_model(group, self._engine, result)
        STATE.live.pop((self._engine, group.name), None)  # an engine panel's session on the model just replaced
        self.report({"INFO"}, f"{ENGINES[self._engine].label}: " + describe(self._engine, result["summary"]))


def picture_name(engine: str, group: str) -> str:
    """The image holding an engine's picture for a clip group."""
    return f"motionctl {engine} {group}"


def describe(engine: str, summary: dict) -> str:
    """One line about a model's summary for a report (its engine's figures, then its warnings)."""
    return ", ".join(text for text, _ in summary_lines(ENGINES[engine], summary))


class MOTIONCTL_OT_trace_add(bpy.types.Operator):
    """Add a training trace file (CSV or JSON)"""

    bl_idname = "motionctl.trace_add"
    bl_label = "Add Trace"
    filepath: bpy.props.StringProperty(subtype="FILE_PATH")
    filter_glob: bpy.props.StringProperty(default="*.csv;*.json", options={"HIDDEN"})

    def invoke(self, context, event):
        context.window_manager.fileselect_add(self)
        return {"RUNNING_MODAL"}

    def execute(self, context):
        try:
            read_trace(bpy.path.abspath(self.filepath))
        except MotionctlError as exc:
            return report_error(self, context, exc)
        t = settings(context).traces.add()
        t.path = self.filepath
        return {"FINISHED"}


class MOTIONCTL_OT_trace_remove(bpy.types.Operator):
    """Remove the selected training trace from the list"""

    bl_idname = "motionctl.trace_remove"
    bl_label = "Remove Trace"

    def execute(self, context):
        st = settings(context)
        if 0 <= st.trace_index < len(st.traces):
            st.traces.remove(st.trace_index)
            st.trace_index = max(0, st.trace_index - 1)
        return {"FINISHED"}


classes = (MOTIONCTL_OT_train, MOTIONCTL_OT_trace_add, MOTIONCTL_OT_trace_remove)
