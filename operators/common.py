"""Small helpers shared by the operators: settings access, the one error report, the chosen group
and its ticked clips, and the models trained on a group."""

from __future__ import annotations

import json
import os
import traceback

from ..motionctl.clip import MotionDatabase
from ..motionctl.engines import ENGINES
from ..motionctl.errors import Cancelled, MotionctlError
from .cache import resolve
from . import props
from .compat import require_animatable


def settings(context):
    return context.scene.motionctl


def report_error(op, context, exc: BaseException, what: str = "") -> set:
    """The one way an operator reports a failure: a user error (``MotionctlError``) as its own
    message; anything else is a bug: its traceback goes to the console and a short line to the
    panel.  Returns {"CANCELLED"}."""
    prefix = f"{what} failed: " if what else ""
    if isinstance(exc, MotionctlError):
        message = str(exc)
    elif isinstance(exc, Cancelled):
        message = f"{what or 'job'} cancelled"
    else:
        trace = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        print(f"motionctl: {what or 'operator'} failed with a bug:\n{trace}")
        message = f"{prefix}{type(exc).__name__}: {exc} (a bug: the traceback is in the system console)"
        prefix = ""
    if context is not None and hasattr(context.scene, "motionctl"):
        settings(context).job_message = f"{prefix}{message}"[:500]
    op.report({"WARNING" if isinstance(exc, Cancelled) else "ERROR"}, f"{prefix}{message}")
    return {"CANCELLED"}


def chosen_group(context):
    """The clip group the panels work on (the Controller panel's choice, else the first)."""
    st = settings(context)
    if not st.groups:
        raise MotionctlError("import clips first (Library panel)")
    name = st.group or st.groups[0].name
    group = st.groups.get(name)
    if group is None:
        raise MotionctlError(f"no clip group named {name!r}: choose one in the Controller panel")
    return group


def target_armature(context, group=None, what: str = "Preview"):
    """The active armature if motionctl made it for the skeleton of ``group`` (else of the chosen
    group), else that group's own armature; refused in one line when it could not keep an action
    (linked from a library without an override).  An active armature of another skeleton group is
    passed over: baking the model's joints onto it failed with a ValueError."""
    ob = context.active_object
    mine = ob is not None and ob.type == "ARMATURE" and "motionctl_joints" in ob
    if mine and (group is not None or len(settings(context).groups) > 1):
        own = (group or chosen_group(context)).armature
        mine = own is None or ob == own or list(ob["motionctl_joints"]) == list(own.get("motionctl_joints", []))
    if not mine:
        group = group or chosen_group(context)
        if group.armature is None:
            raise MotionctlError("select an armature imported by motionctl")
        ob = group.armature
    require_animatable(ob, what)
    return ob


def ticked_clip_tags(st, group) -> dict:
    """{clip name: [tags]} of the clips of ``group`` ticked in the Library list (read on the main
    thread; a job gets this plain dict, never the bpy data)."""
    clip_tags = {c.name: [t.strip() for t in c.tags.split(",") if t.strip()]
                 for c in st.clips if c.group == group.name and c.use}
    if not clip_tags:
        raise MotionctlError("no clips selected: tick some in the Library list")
    return clip_tags


def group_clips(context, group=None, ticked: bool = False) -> list:
    """A group's clips from its database cache, carrying the tags as edited in the Library (all
    of them, or only the ticked ones)."""
    st = settings(context)
    group = group or chosen_group(context)
    return load_clips(database_path(group), ticked_clip_tags(st, group) if ticked else clip_tags(st, group))


def clip_tags(st, group) -> dict:
    """{clip name: [tags]} of every clip of ``group``, as edited in the Library list."""
    return {c.name: [t.strip() for t in c.tags.split(",") if t.strip()] for c in st.clips if c.group == group.name}


def database_path(group) -> str:
    path = resolve(group.database)
    if not os.path.isfile(path):
        raise MotionctlError(f"the clip cache of {group.name!r} is missing ({path}): import the clips again")
    return path


def load_clips(database: str, clip_tags: dict) -> list:
    """Worker side of ``ticked_clip_tags``: the named clips from a database cache, with their tags."""
    clips = [c for c in MotionDatabase.load(database).clips if c.name in clip_tags]
    if not clips:
        raise MotionctlError("no clips selected: tick some in the Library list")
    for c in clips:
        c.tags = set(clip_tags[c.name])
    return clips


def settings_values(engine, pg) -> dict:
    """{option name: value} of an engine's generated property group (``panels.properties``): what
    ``motionctl.settings.from_flat`` takes; an optional option switched off is None."""
    return props.settings_values(engine.Settings, pg)


def model_entry(group, engine: str):
    """The group's trained-model entry for ``engine`` (None when it has none)."""
    return next((m for m in group.models if m.engine == engine), None)


def model_summary(entry) -> dict:
    try:
        return json.loads(entry.summary) if entry is not None and entry.summary else {}
    except json.JSONDecodeError:
        return {}


def model_file(group, engine: str) -> str:
    """The absolute path of a group's trained ``engine`` model; MotionctlError if none or missing."""
    entry = model_entry(group, engine)
    label = ENGINES[engine].label if engine in ENGINES else engine
    if entry is None or not entry.path:
        raise MotionctlError(f"train a {label} model first (Controller panel)")
    path = resolve(entry.path)
    if not os.path.isfile(path):
        raise MotionctlError(f"the {label} model file is missing ({path}): train it again")
    return path


def trained_model(context, engine: str):
    """(the chosen group's trained ``engine`` model, loaded, and the group); MotionctlError if none."""
    group = chosen_group(context)
    return ENGINES[engine].Model.load(model_file(group, engine)), group
